"""A benchmark small enough to test the spine with: no compiler, verdicts decided by the
completion's text, commands only where a test needs the runner.

Completions: "pass", "fail", "infra" (the runner fails: an infrastructure error),
"flaky" (an infra error the first time a process sees it, a pass after), "sleep:S" (runs
`sleep S` in the sandbox, then passes), "speed:X" (passes, measured speed X),
"oops" (the benchmark itself raises: a bug must cost only that unit).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.core import metrics
from vibes_eval.core.benchmark import Benchmark, BenchmarkConfig
from vibes_eval.core.errors import RunnerError, UserError
from vibes_eval.core.jsonl import SampleSource, read_records, source_path
from vibes_eval.core.runner import SessionSpec, TaskRunner
from vibes_eval.core.types import Limits, Reason, Sample, SampleResult, Task

FLAKY_SEEN: set[tuple[str, str]] = set()  # (run marker, task) that failed once
_lock = threading.Lock()


class FakeConfig(BenchmarkConfig):
    tasks: int = 3
    unit_size: int = 1
    marker: str = ""  # tells runs apart for "flaky"


class FakeBenchmark(Benchmark[Task, FakeConfig]):
    name: ClassVar[str] = "fake"
    suite: ClassVar[str] = "test"
    config_model = FakeConfig
    reasons: ClassVar[dict[str, str]] = {"too_slow": "a benchmark-specific reason"}
    headline: ClassVar[str] = "mean_speed"

    def __init__(self, config: FakeConfig) -> None:
        super().__init__(config)
        self.units: list[list[tuple[str, int]]] = []  # what plan handed out

    def load_tasks(self) -> dict[str, Task]:
        return {f"F/{i}": Task(task_id=f"F/{i}") for i in range(self.config.tasks)}

    def load_samples(self, source: SampleSource, tasks: dict[str, Task]) -> list[Sample]:
        where = source_path(source) or "samples"
        samples, per_task = [], {}
        for line, row in read_records(source):
            if row.get("task_id") not in tasks:
                raise UserError("unknown task id", path=where, line=line, field="task_id")
            index = per_task.get(row["task_id"], 0)
            per_task[row["task_id"]] = index + 1
            samples.append(
                Sample(task_id=row["task_id"], index=index, completion=row["completion"],
                       line=line, record=row)
            )  # fmt: skip
        return samples

    def plan(self, samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
        size = self.config.unit_size
        units = [list(samples[i : i + size]) for i in range(0, len(samples), size)]
        self.units = [[s.key for s in u] for u in units]
        return units

    def run_task(self, task: Task, sample: Sample, runner: TaskRunner) -> Any:
        text = sample.completion
        if text == "oops":
            raise ZeroDivisionError("a bug in the benchmark")
        if text == "infra":
            raise RunnerError("the runner broke")
        if text == "flaky":
            with _lock:
                first = (self.config.marker, task.task_id) not in FLAKY_SEEN
                FLAKY_SEEN.add((self.config.marker, task.task_id))
            if first:
                raise RunnerError("flaky infrastructure")
        if text.startswith("sleep:"):
            session = runner.prepare(SessionSpec(label=task.task_id))
            try:
                res = runner.execute(session, ["sleep", text[6:]], Limits(timeout_s=30))
            finally:
                runner.cleanup(session)
            return "pass" if res.ok else "fail"
        return text

    def evaluate(self, task: Task, sample: Sample, output: Any) -> SampleResult:
        speed = float(output[6:]) if output.startswith("speed:") else None
        passed = output in ("pass", "flaky") or speed is not None
        return SampleResult(
            task_id=sample.task_id,
            index=sample.index,
            passed=passed,
            reason=Reason.PASSED if passed else Reason.FAILED,
            completion_hash=sample.completion_hash,
            measurements={"wall_s": 0.01, **({"speed": speed} if speed is not None else {})},
        )

    def metrics(self, ks: Sequence[int]) -> list[metrics.Metric]:
        def speed(rs: Sequence[metrics.Scored]) -> float:
            return max((r.measurements.get("speed", 0.0) for r in rs), default=0.0)

        return [*super().metrics(ks), metrics.Metric("mean_speed", speed)]

    def problems_path(self) -> Path | None:
        return None
