"""The engine with a small in-process benchmark (no compiler): de-duplication, resume,
the result cache, infra errors and their retry, bugs that cost one unit only,
max_parallelism, and Ctrl-C. Commands that run go through the real process runner."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.core.fake import FakeBenchmark, FakeConfig
from vibes_eval import evaluation
from vibes_eval.core.engine import MemoryRecorder, run_samples
from vibes_eval.core.runner import Capabilities, IsolationLevel, Session, SessionSpec
from vibes_eval.core.types import Reason, SampleResult
from vibes_eval.runners.local import ProcessRunner
from vibes_eval.runs import recording
from vibes_eval.runs.summary import latest_verdicts
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve


class CountingRunner(ProcessRunner):
    """The process runner, counting sessions alive at once."""

    capabilities: ClassVar[Capabilities] = Capabilities(isolation_level=IsolationLevel.PROCESS)

    def __init__(self, limit: int | None = None) -> None:
        super().__init__()
        self.capabilities = self.capabilities.model_copy(update={"max_parallelism": limit})  # type: ignore[misc]
        self.alive = self.peak = 0
        self._count = threading.Lock()

    def prepare(self, spec: SessionSpec) -> Session:
        with self._count:
            self.alive += 1
            self.peak = max(self.peak, self.alive)
        return super().prepare(spec)

    def cleanup(self, session: Session) -> None:
        super().cleanup(session)
        with self._count:
            self.alive -= 1


@pytest.fixture
def runner() -> Iterator[CountingRunner]:
    r = CountingRunner()
    yield r
    r.close()


def prepared(completions: dict[str, list[str]], **config: Any) -> evaluation.Prepared:
    bench = FakeBenchmark(FakeConfig(tasks=len(completions), **config))
    rows = [{"task_id": t, "completion": c} for t, cs in completions.items() for c in cs]
    tasks = bench.load_tasks()
    return evaluation.Prepared(bench, tasks, bench.load_samples(rows, tasks))  # type: ignore[arg-type]


def run(
    p: evaluation.Prepared, runner: CountingRunner, recorder: Any = None, workers: int = 2
) -> dict[tuple[str, int], SampleResult]:
    return run_samples(
        p.benchmark, p.tasks, p.samples, runner, recorder or MemoryRecorder(), workers=workers
    )


def test_identical_completions_are_evaluated_once(runner: CountingRunner) -> None:
    p = prepared({"F/0": ["pass", "pass", "fail"], "F/1": ["pass"]})
    results = run(p, runner)
    evaluated = [key for unit in p.benchmark.units for key in unit]  # type: ignore[attr-defined]
    assert ("F/0", 1) not in evaluated and len(evaluated) == 3
    assert results[("F/0", 1)].passed and results[("F/0", 1)].cached
    assert [results[("F/0", i)].passed for i in range(3)] == [True, True, False]


def test_a_bug_costs_its_unit_and_a_runner_failure_only_its_sample(runner: CountingRunner) -> None:
    p = prepared({"F/0": ["pass", "oops", "fail"], "F/1": ["infra", "fail"]}, unit_size=2)
    results = run(p, runner)
    reasons = {k: r.reason for k, r in results.items()}
    # Units: [F/0/0, F/0/1], [F/0/2, F/1/0], [F/1/1]. The bug ends its unit after the
    # verdict it already gave; the runner failure is that sample's alone.
    assert reasons[("F/0", 0)] == Reason.PASSED
    assert reasons[("F/0", 1)] == Reason.INFRA and "ZeroDivisionError" in results[("F/0", 1)].detail
    assert reasons[("F/0", 2)] == Reason.FAILED
    assert reasons[("F/1", 0)] == Reason.INFRA and "the runner broke" in results[("F/1", 0)].detail
    assert reasons[("F/1", 1)] == Reason.FAILED
    assert len(results) == 5


def test_max_parallelism_bounds_the_sessions_at_once() -> None:
    p = prepared({"F/0": ["sleep:0.3"] * 2, "F/1": ["sleep:0.3"] * 2}, marker="par")
    p.samples = [s.model_copy(update={"completion": f"sleep:0.{3 + s.index}"}) for s in p.samples]
    free = CountingRunner()
    one = CountingRunner(limit=1)
    try:
        assert all(r.passed for r in run(p, free, workers=4).values())
        assert all(r.passed for r in run(p, one, workers=4).values())
    finally:
        free.close()
        one.close()
    assert free.peak >= 2 and one.peak == 1


def store_run(tmp: Path, p: evaluation.Prepared, runner: CountingRunner, run_id: str | None,
              *, use_cache: bool = True) -> tuple[str, dict[tuple[str, int], SampleResult], int]:  # fmt: skip
    store = open_store(resolve(str(tmp / "s.sqlite")))
    with recording.start(
        store, p, runner, run_id=run_id, samples_path=None, output_path=None, ks=[1],
        labels={}, workers=2, use_cache=use_cache,
    ) as rec:  # fmt: skip
        done_before = len(rec.recorder.done())
        results = run(p, runner, rec.recorder)
        rec.finish(evaluation.Outcome(p, results, [1]))
        return rec.run_id, results, done_before


def test_resume_retries_infra_errors_and_keeps_one_verdict(
    tmp_path: Path, runner: CountingRunner
) -> None:
    p = prepared({"F/0": ["pass", "flaky"], "F/1": ["fail"]}, marker=str(tmp_path))
    run_id, first, _ = store_run(tmp_path, p, runner, "r1")
    assert first[("F/0", 1)].reason == Reason.INFRA
    _, second, done_before = store_run(tmp_path, p, runner, "r1")
    assert done_before == 2  # the infra error is not "done"
    assert second[("F/0", 1)].passed  # evaluated again: the infrastructure recovered
    with open_store(resolve(str(tmp_path / "s.sqlite"))) as st:
        rows = {(r.task_id, r.index): r for r in st.samples(run_id)}
        assert len(rows) == 3 and rows[("F/0", 1)].passed
        assert st.run(run_id).n_passed == 2
        latest = latest_verdicts(st, run_id)
        assert [ev.result.passed for ev in latest] == [True, True, False]
        events = [e for e in st.sample_events(run_id)]
        assert len(events) == 4  # the log keeps the superseded infra error
        assert st.rebuild()["vibes_samples"] == 3


def test_the_cache_answers_a_new_run_and_never_with_an_infra_error(
    tmp_path: Path, runner: CountingRunner
) -> None:
    p = prepared({"F/0": ["pass", "infra"], "F/1": ["speed:2.5"]}, marker=str(tmp_path))
    store_run(tmp_path, p, runner, "a")
    _, results, _ = store_run(tmp_path, p, runner, "b")
    assert results[("F/0", 0)].cached and results[("F/1", 0)].cached
    assert results[("F/1", 0)].measurements["speed"] == 2.5
    assert not results[("F/0", 1)].cached  # infra errors are never served from the cache
    _, fresh, _ = store_run(tmp_path, p, runner, "c", use_cache=False)
    assert not any(r.cached for r in fresh.values())


def test_ctrl_c_stops_workers_and_keeps_what_is_recorded(runner: CountingRunner) -> None:
    """SIGINT after two verdicts: the engine kills what runs, starts nothing new and raises
    KeyboardInterrupt; the verdicts recorded before stay."""
    completions = {"F/0": ["pass", "pass2"], "F/1": ["sleep:30"], "F/2": ["sleep:30"]}
    p = prepared(completions)
    p.samples[1] = p.samples[1].model_copy(update={"completion": "pass"})  # not a duplicate
    p.samples[1] = p.samples[1].model_copy(update={"completion": "speed:1"})
    recorder = MemoryRecorder()
    recorded = threading.Event()

    def interrupt_when_two(result: SampleResult) -> None:
        if len(recorder.results) >= 2:
            recorded.set()

    def send() -> None:
        if recorded.wait(20):
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=send, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        run_samples(p.benchmark, p.tasks, p.samples, runner, recorder, workers=4,
                    on_result=interrupt_when_two)  # fmt: skip
    assert set(recorder.results) == {("F/0", 0), ("F/0", 1)}
    assert runner.alive == 0  # the sleeping sessions were killed and cleaned up
