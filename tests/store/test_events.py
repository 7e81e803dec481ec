"""Events: one discriminated union, versioned, and exact JSON round trips."""

from __future__ import annotations

import json

import pytest

from tests.store.conftest import started, verdict
from vibes_eval.core.types import Reason, SampleResult
from vibes_eval.store.events import (
    OUTPUT_CAP,
    SCHEMA_VERSION,
    EventDecodeError,
    RunCompleted,
    RunInterrupted,
    RunResumed,
    SampleEvaluated,
    decode,
    encode,
)


@pytest.mark.parametrize(
    "event",
    [
        started(),
        RunResumed(run_id="r1", host="h", pid=3),
        verdict("r1", "T/0", 0, True),
        RunCompleted(run_id="r1", metrics={"pass@1": 0.5}, n_samples=4, n_passed=2),
        RunInterrupted(run_id="r1", n_done=1),
    ],
)
def test_every_event_round_trips_through_json(event: object) -> None:
    body = encode(event)  # type: ignore[arg-type]
    back = decode(body)
    assert type(back) is type(event)
    assert back == event
    assert encode(back) == body  # byte-identical: what rebuild relies on
    assert json.loads(body)["schema_version"] == SCHEMA_VERSION


def test_a_sample_result_survives_the_event() -> None:
    result = SampleResult(
        task_id="T/1", index=2, passed=False, reason="anti_cheat", detail="slow",
        completion_hash="abc", measurements={"tests_expected": 3, "speedup": 1.5, "wall_s": 2.0},
        details={"sizes": [{"n": 1024, "ms": 0.5}]}, stdout="out", stderr="err", cached=True,
    )  # fmt: skip
    event = SampleEvaluated.from_result("r", result, problem_hash="p", line=7, record={"x": 1})
    assert decode(encode(event)).result == result  # type: ignore[union-attr]
    assert (event.line, event.record, event.problem_hash) == (7, {"x": 1}, "p")


def test_schema_1_verdicts_are_read_into_the_embedded_result() -> None:
    """A store written before measurements existed spelled the result out in the event."""
    v1 = {
        "schema_version": 1, "run_id": "r", "at": "2026-01-01T00:00:00.000000Z",
        "type": "sample_evaluated", "task_id": "T/1", "index": 2, "line": 7,
        "problem_hash": "p", "completion_hash": "abc", "passed": False, "reason": "timeout",
        "detail": "slow", "tests_expected": 3, "tests_passed": 1, "compile_s": 1.5,
        "run_s": 2.0, "cpu_s": 3.25, "stdout": "out", "stderr": "err", "cached": True,
        "record": {"x": 1},
    }  # fmt: skip
    event = decode(json.dumps(v1))
    assert isinstance(event, SampleEvaluated) and event.schema_version == 1
    assert event.result == SampleResult(
        task_id="T/1", index=2, passed=False, reason=Reason.TIMEOUT, detail="slow",
        completion_hash="abc", stdout="out", stderr="err", cached=True,
        measurements={"tests_expected": 3, "tests_passed": 1, "compile_s": 1.5, "run_s": 2.0,
                      "cpu_s": 3.25, "wall_s": 3.5},
    )  # fmt: skip
    assert (event.line, event.record, event.problem_hash) == (7, {"x": 1}, "p")


def test_output_is_capped() -> None:
    result = SampleResult(
        task_id="T", index=0, passed=True, reason=Reason.PASSED, stdout="x" * (OUTPUT_CAP * 3)
    )
    event = SampleEvaluated.from_result("r", result, problem_hash="p")
    assert len(event.result.stdout) == OUTPUT_CAP


def test_a_newer_schema_version_is_refused_with_advice() -> None:
    body = json.loads(encode(started()))
    body.update(schema_version=SCHEMA_VERSION + 1, type="model_generated")
    with pytest.raises(EventDecodeError, match="upgrade vibes-eval"):
        decode(json.dumps(body))


def test_an_unknown_or_damaged_event_is_an_error() -> None:
    with pytest.raises(EventDecodeError):
        decode('{"type": "nope", "run_id": "r"}')
    with pytest.raises(EventDecodeError):
        decode("{not json")
