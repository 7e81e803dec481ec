"""Which Python an environment built here gets, and what its dependencies are.

Offline, the only interpreters at hand are Debian's ``python3`` of each suite the mirror
serves (``SUITE_PYTHON``). A spec's ``python`` picks the suite with that version; when no
suite has it, the nearest one (the older on a tie: old repositories break on new
interpreters far more often than the reverse), and the choice carries a note that the
report shows per instance, never silently. With network, the official images
(``--image-namespace swebench``) have the exact conda interpreter instead.

``packages: requirements.txt`` means, officially, the repository's requirements file at
``environment_setup_commit`` (``MAP_REPO_TO_REQS_PATHS``) with its ``-r`` includes read
and ``-e .`` / comments / ``.[test`` lines left out: read here from the mirror, the same way.
``packages: environment.yml`` is a conda environment: not installable without conda, so
only ``pip_packages`` go in, and the note says so.
"""

from __future__ import annotations

import posixpath
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Debian suite -> the minor version of its python3 (bullseye 3.9.2, bookworm 3.11.2,
# trixie 3.13.x).
SUITE_PYTHON = {"bullseye": "3.9", "bookworm": "3.11", "trixie": "3.13"}
DEFAULT_SUITE = "bookworm"
# swebench 4.1's MAP_REPO_TO_REQS_PATHS, for the repositories that use requirements.txt
# (kept here so a core install without the extra reads them too).
REQS_PATHS = {
    "pallets/flask": ["requirements/dev.txt"],
    "pylint-dev/pylint": ["requirements_test.txt"],
    "sympy/sympy": ["requirements-dev.txt", "requirements-test.txt"],
    "django/django": ["tests/requirements/py3.txt"],
    "matplotlib/matplotlib": [
        "requirements/dev/dev-requirements.txt",
        "requirements/testing/travis_all.txt",
    ],
}
_EXCLUDED = ("-e .", "#", ".[test")


@dataclass(frozen=True)
class PythonChoice:
    requested: str  # the spec's version ("" when it names none)
    used: str  # the minor version the environment gets
    suite: str  # the Debian suite that has it

    @property
    def exact(self) -> bool:
        return not self.requested or self.requested == self.used

    def note(self) -> str:
        if self.exact:
            return ""
        return (
            f"the spec asks for Python {self.requested}; built offline from Debian, whose "
            f"suites have {', '.join(SUITE_PYTHON.values())}: Python {self.used} "
            f"({self.suite}), the nearest (the official images have the exact version)"
        )


def _minor(version: str) -> tuple[int, int] | None:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None


def choose(requested: object) -> PythonChoice:
    """The suite whose python3 is ``requested`` (a spec's ``python``), else the nearest."""
    want = str(requested or "").strip()
    wanted = _minor(want)
    if wanted is None:
        return PythonChoice(want, SUITE_PYTHON[DEFAULT_SUITE], DEFAULT_SUITE)

    def distance(item: tuple[str, str]) -> tuple[int, int]:
        have = _minor(item[1]) or (0, 0)
        gap = abs((have[0] - wanted[0]) * 100 + have[1] - wanted[1])
        return gap, have[1]  # on a tie, the older

    suite, used = min(SUITE_PYTHON.items(), key=distance)
    return PythonChoice(".".join(want.split(".")[:2]), used, suite)


def _show(mirror: Path, commit: str, path: str) -> str | None:
    proc = subprocess.run(
        ["git", "-C", str(mirror), "show", f"{commit}:{path}"], capture_output=True, text=True
    )
    return proc.stdout if proc.returncode == 0 else None


def requirements(mirror: Path | None, repo: str, commit: str) -> str | None:
    """The official requirements text of ``repo`` at ``commit``, read from the mirror
    (None: no mirror directory, no such file, or a repository without a known path)."""
    if mirror is None or not mirror.is_dir() or not commit:
        return None
    for path in REQS_PATHS.get(repo, ["requirements.txt"]):
        text = _show(mirror, commit, path)
        if text is not None:
            break
    else:
        return None
    included: list[str] = []
    own: list[str] = []
    folder = posixpath.dirname(path)
    for line in text.split("\n"):
        if line.strip().startswith("-r"):
            name = line.strip()[len("-r") :].strip()
            extra = _show(mirror, commit, posixpath.join(folder, name)) or ""
            included += [x for x in extra.split("\n") if not x.strip().startswith(_EXCLUDED)]
        elif not line.strip().startswith(_EXCLUDED):
            own.append(line)
    return "\n".join([*included, "\n".join(own)])
