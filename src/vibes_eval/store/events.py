"""The events a run is made of. Everything else (run tables, metrics, comparisons) is a
projection of these, so they carry every fact a projection needs.

Events are immutable once written. Adding a field with a default, or a new event type, keeps
``SCHEMA_VERSION``; changing the meaning of a field bumps it, and a store holding events of
a newer version than this code knows is refused rather than misread.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from vibes_eval.core.types import SampleResult

# 2: SampleEvaluated embeds the SampleResult (measurements, details); schema-1 events are
# upgraded as they are read (``SampleEvaluated._upgrade``).
SCHEMA_VERSION = 2
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
    # runs/code.py: the code that judged (part of the cache context; "" in older stores)
    judge_code: str = ""
    workers: int = 0  # not part of the identity: a resume may use other values
    # When a model generated the samples (`vibes eval run --model`): its settings (model,
    # sampling, setting, prompt, endpoint...), and the part of them that defines the samples
    # (part of the run's identity, like config_identity; never of the cache's context).
    generation: dict[str, Any] = Field(default_factory=dict)
    generation_identity: dict[str, Any] = Field(default_factory=dict)


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
    """One sample's verdict: exactly one per (run, task, index), except that a verdict of
    ``infra_error`` (the harness failed, not the sample) is superseded by the next one."""

    type: Literal["sample_evaluated"] = "sample_evaluated"
    line: int = 0  # in the sample file, for file-ordered exports
    problem_hash: str  # Task.fingerprint(): part of the result-cache key
    result: SampleResult
    record: dict[str, Any] = Field(default_factory=dict)  # the sample file's line, verbatim

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """Schema 1 spelled the result's fields out in the event: fold them into
        ``result``, the HumanEval timings and test counts into its measurements."""
        if isinstance(data, dict) and "result" not in data and "task_id" in data:
            data = dict(data)
            measurements = {
                k: float(v) for k in _V1_MEASUREMENTS if (v := data.pop(k, None)) is not None
            }
            if measurements:
                measurements["wall_s"] = measurements.get("compile_s", 0.0) + measurements.get(
                    "run_s", 0.0
                )
            data["result"] = {
                **{k: data.pop(k) for k in _V1_RESULT if k in data},
                "measurements": measurements,
            }
        return data

    @property
    def task_id(self) -> str:
        return self.result.task_id

    @property
    def index(self) -> int:
        return self.result.index

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
        capped = result.model_copy(
            update={"stdout": result.stdout[:OUTPUT_CAP], "stderr": result.stderr[:OUTPUT_CAP]}
        )
        return cls(
            run_id=run_id, line=line, problem_hash=problem_hash, result=capped, record=record or {}
        )


_V1_RESULT = ("task_id", "index", "passed", "reason", "detail", "completion_hash", "stdout",
              "stderr", "cached")  # fmt: skip
_V1_MEASUREMENTS = ("tests_expected", "tests_passed", "compile_s", "run_s", "cpu_s")


class RunCompleted(_Event):
    """Every sample of the run has a verdict."""

    type: Literal["run_completed"] = "run_completed"
    metrics: dict[str, float]  # every metric the benchmark declares, as the run ended
    n_samples: int
    n_passed: int
    elapsed_s: float = 0.0  # of the process that finished it


class RunInterrupted(_Event):
    """Stopped on purpose (Ctrl-C). A kill -9 leaves no event: see projections."""

    type: Literal["run_interrupted"] = "run_interrupted"
    n_done: int
    reason: str = "interrupted"


# -- generation (`vibes eval run --model`): a sample's trajectory ------------------------
# (task_id, index) name the sample; ``step`` orders its model calls (0, 1, ...), so a
# resumed run finds what was already paid for. The sample's final verdict is its
# ``SampleEvaluated``, whose record holds the completion and a summary of the trajectory.


class ModelCalled(_Event):
    """One HTTP request to a model and what came back: a response, or why none did (a
    429 or 5xx about to be retried, a timeout, a refusal). Credentials are never in it."""

    type: Literal["model_called"] = "model_called"
    task_id: str
    index: int
    step: int  # the sample's model calls in order: 0, 1, ...
    attempt: int = 1  # HTTP attempts of this step so far, retries included
    model: str  # provider/name
    request: dict[str, Any] = Field(default_factory=dict)  # the body sent (first attempt)
    request_sha256: str = ""  # of the body, on every attempt
    ok: bool  # a usable response
    status: int | None = None  # the HTTP status, when one came back
    error: str = ""  # why it is not usable
    retry: bool = False  # about to be tried again
    retry_in_s: float = 0.0
    response: dict[str, Any] = Field(default_factory=dict)  # text, tool_calls, finish_reason
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0


class ToolCalled(_Event):
    """One tool call of an agent, run in the sample's sandbox session."""

    type: Literal["tool_called"] = "tool_called"
    task_id: str
    index: int
    step: int  # the model call that asked for it
    call_id: str = ""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    output: str = ""  # what the model is shown (capped)
    ok: bool = True
    wall_s: float = 0.0


class AttemptEvaluated(_Event):
    """The verdict on an attempt that was not the sample's last (a self-refine round that
    failed, a test run an agent asked for). Shares the result cache with verdicts."""

    type: Literal["attempt_evaluated"] = "attempt_evaluated"
    round: int  # 1, 2, ...: the sample's attempts in order
    step: int = 0  # the model call that produced it
    problem_hash: str
    completion: str
    result: SampleResult


Event = Annotated[
    RunStarted
    | RunResumed
    | SampleEvaluated
    | RunCompleted
    | RunInterrupted
    | ModelCalled
    | ToolCalled
    | AttemptEvaluated,
    Field(discriminator="type"),
]
EVENT_TYPES = (
    "run_started",
    "run_resumed",
    "sample_evaluated",
    "run_completed",
    "run_interrupted",
    "model_called",
    "tool_called",
    "attempt_evaluated",
)

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
