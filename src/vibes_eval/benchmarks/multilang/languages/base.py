"""What every language with a test `main` provides (``Language``): its toolchain, how a
task's trusted test parts and a sample's program are built (``Build``), and what its
failures say."""

from __future__ import annotations

import abc
import functools
import hashlib
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from vibes_eval.benchmarks.multilang.tasks import CodeTask
from vibes_eval.core.runner import NetworkPolicy
from vibes_eval.core.types import ExecutionResult


def task_dir(task_id: str) -> str:
    """A task's folder: named by its id's hash, the same in every unit."""
    return "t_" + hashlib.sha256(task_id.encode()).hexdigest()[:12]


@dataclass
class Build:
    """What a sample needs built, and what its run takes."""

    files: dict[str, str]  # the sample's folder
    argv: list[str] | None  # its build command, run in its folder (None: nothing to build)
    run_files: list[str]  # what the run session gets, relative to the sample's folder
    run_argv: list[str]
    run_env: dict[str, str] = field(default_factory=dict)


DONE_MARKER = "vibes-tests: done"  # a test program's last stderr line once its tests passed


@dataclass
class TestProgram:
    """A task's trusted test program (docs/integrity.md): its tests, the prompt's own
    helpers and a stub in place of the entry point that calls the candidate over its
    stdin/stdout. Built from the task alone, in a session no sample's code is in."""

    files: dict[str, str]
    argv: list[str] | None  # its build command (None: nothing to build)
    run_files: list[str]
    run_argv: list[str]
    run_env: dict[str, str] = field(default_factory=dict)


class Language(abc.ABC):
    """One language's programs, toolchain and failure messages."""

    name: ClassVar[str]
    fence_tags: ClassVar[tuple[str, ...]] = ()
    # The build session's network: javac's JVM opens an IP socket at start (it gets only
    # an empty loopback); programs always run with none.
    build_network: ClassVar[NetworkPolicy] = NetworkPolicy.DISABLED

    @abc.abstractmethod
    def missing(self) -> str | None:
        """Why this language cannot be evaluated here (its toolchain is absent), or None."""

    def environment(self) -> dict[str, str]:
        return {}

    def readonly_paths(self) -> list[Path]:
        return []

    def build_env(self) -> dict[str, str]:
        return {}

    def task_files(self, problem: CodeTask) -> dict[str, str]:
        """The task's trusted parts, in its ``task_dir``."""
        return {}

    def task_argv(self, problem: CodeTask) -> list[str] | None:
        return None

    @abc.abstractmethod
    def build(self, problem: CodeTask, code: str) -> Build:
        """The in-process program: prompt, completion and tests in one program, judged by
        the token (a hostile sample can forge it: ``trust`` "in-process")."""

    def test_program(self, problem: CodeTask) -> TestProgram | None:
        """The task's trusted test program for the split, or None: its tests cannot be
        split from the candidate here (the signature is one the wire cannot carry, or the
        language has no split) and run in the candidate's process."""
        return None

    def candidate(self, problem: CodeTask, code: str) -> Build:
        """The candidate for the split: prompt, completion and the server `main` that
        answers the test program's calls. Only called when ``test_program`` is not None."""
        raise NotImplementedError

    def failure_detail(self, run: ExecutionResult) -> str:
        """What the failed test said, for the report."""
        lines = [x for x in (run.stderr + "\n" + run.stdout).splitlines() if x.strip()]
        return lines[0][:300] if lines else f"exit code {run.exit_code}"

    def compile_detail(self, res: ExecutionResult) -> str:
        for line in res.stderr.splitlines():
            if "error" in line.lower():
                return line.strip()[:300]
        lines = res.stderr.strip().splitlines() or res.stdout.strip().splitlines()
        return lines[0][:300] if lines else f"build exited with code {res.exit_code}"


def fenced(text: str, tags: tuple[str, ...]) -> str:
    blocks = re.findall(r"```[ \t]*([A-Za-z0-9_+#-]*)[^\n]*\n(.*?)(?:```|\Z)", text, re.S)
    for lang, body in blocks:
        if lang.lower() in (*tags, ""):
            return body
    return blocks[0][1] if blocks else text


def which(name: str) -> str | None:
    return shutil.which(name)


@functools.cache
def version_of(argv: tuple[str, ...]) -> str:
    import subprocess

    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    text = (proc.stdout + proc.stderr).strip().splitlines()
    return text[0] if text else "unknown"


@functools.cache
def wire_digest(name: str) -> str:
    """A digest of language ``name``'s split (its wire sources and the module that writes
    its programs), or "" where it has none: part of what a cached verdict must match, so a
    change to either judges again."""
    here = Path(__file__).parent
    parts = sorted(p for p in (here / "wire" / name).rglob("*") if p.is_file())
    module = here / f"split_{name}.py"
    if not parts and not module.exists():
        return ""
    h = hashlib.sha256()
    for path in [*parts, module] if module.exists() else parts:
        h.update(str(path.relative_to(here)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]
