"""The events a run is made of. Everything else (run tables, metrics, comparisons) is a
projection of these, so they carry every fact a projection needs.

Events are immutable once written. Adding a field with a default, or a new event type, keeps
``SCHEMA_VERSION``; changing the meaning of a field bumps it, and a store holding events of
a newer version than this code knows is refused rather than misread.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from vibes_eval.core.types import Reason, SampleResult

SCHEMA_VERSION = 1
OUTPUT_CAP = 8192  # characters of stdout/stderr kept per sample; benchmarks cap earlier


def now() -> str:
    """UTC timestamps as fixed-width ISO strings: they sort as text in any backend."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Event(BaseModel):
    # Unknown fields are ignored so that a field added later (same schema version) does
    # not make older code refuse the whole store.
    model_config = ConfigDict(frozen=True, extra="ignore")

    schema_version: int = SCHEMA_VERSION
    run_id: str
    at: str = Field(default_factory=now)


class RunStarted(_Event):
    """A new run: everything that identifies what its verdicts mean."""

    type: Literal["run_started"] = "run_started"
    benchmark: str
    suite: str = ""
    config: dict[str, Any]  # the benchmark's full BenchmarkConfig, mode="json"
    # The part of it that changes verdicts (BenchmarkConfig.identity()): what a resume must
    # match and what the result cache is keyed on. Empty: the whole config.
    config_identity: dict[str, Any] = Field(default_factory=dict)
    problems_sha256: str  # the problem file's bytes (or the tasks' hashes when no file)
    tasks_sha256: str  # every task's fingerprint: what the verdicts depend on
    samples_sha256: str
    problems_path: str = ""
    samples_path: str = ""  # absolute, so `vibes eval resume` can find the file again
    output_path: str = ""  # where the results file went
    n_samples: int
    n_tasks: int  # tasks with at least one sample
    ks: list[int] = Field(default_factory=list)
    toolchain: dict[str, str] = Field(default_factory=dict)
    runner: str
    isolation: str = ""
    host: str = ""
    pid: int = 0
    proc_start: str = ""  # the process's start time, to tell a live pid from a reused one
    labels: dict[str, str] = Field(default_factory=dict)
    vibes_version: str = ""
    workers: int = 0  # not part of the identity: a resume may use other values


def verdict_config(started: RunStarted) -> dict[str, Any]:
    """The settings that change verdicts, without the problem file's name (its content is
    hashed separately, so a moved file is still the same run)."""
    config = started.config_identity or started.config
    return {k: v for k, v in config.items() if k != "problems"}


class RunResumed(_Event):
    """Another process took over an unfinished run."""

    type: Literal["run_resumed"] = "run_resumed"
    host: str = ""
    pid: int = 0
    proc_start: str = ""
    vibes_version: str = ""


class SampleEvaluated(_Event):
    """One sample's verdict. Exactly one per (run, task, index)."""

    type: Literal["sample_evaluated"] = "sample_evaluated"
    task_id: str
    index: int
    line: int = 0  # in the sample file, for file-ordered exports
    problem_hash: str  # Task.fingerprint(): part of the result-cache key
    completion_hash: str
    passed: bool
    reason: Reason
    detail: str = ""
    tests_expected: int | None = None
    tests_passed: int | None = None
    compile_s: float = 0.0
    run_s: float = 0.0
    cpu_s: float = 0.0
    stdout: str = ""
    stderr: str = ""
    cached: bool = False  # reused: from the cache or an identical completion of this run
    record: dict[str, Any] = Field(default_factory=dict)  # the sample file's line, verbatim

    @classmethod
    def from_result(
        cls,
        run_id: str,
        result: SampleResult,
        *,
        problem_hash: str,
        line: int = 0,
        record: dict[str, Any] | None = None,
    ) -> SampleEvaluated:
        return cls(
            run_id=run_id,
            task_id=result.task_id,
            index=result.index,
            line=line,
            problem_hash=problem_hash,
            completion_hash=result.completion_hash,
            passed=result.passed,
            reason=result.reason,
            detail=result.detail,
            tests_expected=result.tests_expected,
            tests_passed=result.tests_passed,
            compile_s=result.compile_s,
            run_s=result.run_s,
            cpu_s=result.cpu_s,
            stdout=result.stdout[:OUTPUT_CAP],
            stderr=result.stderr[:OUTPUT_CAP],
            cached=result.cached,
            record=record or {},
        )

    def result(self) -> SampleResult:
        return SampleResult(
            task_id=self.task_id,
            index=self.index,
            passed=self.passed,
            reason=self.reason,
            detail=self.detail,
            completion_hash=self.completion_hash,
            tests_expected=self.tests_expected,
            tests_passed=self.tests_passed,
            compile_s=self.compile_s,
            run_s=self.run_s,
            cpu_s=self.cpu_s,
            stdout=self.stdout,
            stderr=self.stderr,
            cached=self.cached,
        )


class RunCompleted(_Event):
    """Every sample of the run has a verdict."""

    type: Literal["run_completed"] = "run_completed"
    metrics: dict[str, float]  # pass@k for the ks the run reported
    n_samples: int
    n_passed: int
    elapsed_s: float = 0.0  # of the process that finished it


class RunInterrupted(_Event):
    """Stopped on purpose (Ctrl-C). A kill -9 leaves no event: see projections."""

    type: Literal["run_interrupted"] = "run_interrupted"
    n_done: int
    reason: str = "interrupted"


# Later kinds (generation, SWE-bench instances, kernel timings) join this union.
Event = Annotated[
    RunStarted | RunResumed | SampleEvaluated | RunCompleted | RunInterrupted,
    Field(discriminator="type"),
]
EVENT_TYPES = ("run_started", "run_resumed", "sample_evaluated", "run_completed", "run_interrupted")

_adapter: TypeAdapter[Event] = TypeAdapter(Event)


class EventDecodeError(ValueError):
    """An event this code cannot read: newer schema, unknown type, or damaged JSON."""


def decode(body: str | bytes) -> Event:
    """Raises: EventDecodeError."""
    try:
        return _adapter.validate_json(body)
    except ValueError as exc:
        version = _peek_version(body)
        if version is not None and version > SCHEMA_VERSION:
            raise EventDecodeError(
                f"event schema version {version} is newer than this vibes-eval reads "
                f"({SCHEMA_VERSION}); upgrade vibes-eval"
            ) from None
        first = str(exc).splitlines()
        raise EventDecodeError(
            "unreadable event: " + (first[1].strip() if len(first) > 1 else str(exc))
        ) from None


def encode(event: Event) -> str:
    return event.model_dump_json()


def _peek_version(body: str | bytes) -> int | None:
    import json

    try:
        value = json.loads(body).get("schema_version")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) else None
