"""A benchmark for the Ray tests that must control where and how long units run, which a
compiler benchmark cannot: verdicts come from the completion's text, and each result says
which node evaluated it (``VIBES_TEST_NODE``, set per node by the test cluster).

Completions: "pass", "fail"; "sleep:S" runs `sleep S` in the sandbox, then passes; "die"
kills the worker process that runs it (a unit that takes down every worker it touches).
Config ``gpu``: task id -> the compute capability its samples need (``node_needs``).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import Field

from vibes_eval.core.benchmark import Benchmark, BenchmarkConfig
from vibes_eval.core.jsonl import SampleSource, read_records
from vibes_eval.core.placement import NodeNeeds
from vibes_eval.core.runner import SessionSpec, TaskRunner
from vibes_eval.core.types import Limits, Reason, Sample, SampleResult, Task

NAME = "ray-toy"
TARGET = "tests.scaleout.toy:ToyBenchmark"


class ToyConfig(BenchmarkConfig):
    tasks: int = 6
    gpu: dict[str, float] = Field(default_factory=dict)
    unit_size: int = 1


class ToyBenchmark(Benchmark[Task, ToyConfig]):
    name: ClassVar[str] = NAME
    suite: ClassVar[str] = "test"
    config_model = ToyConfig

    def load_tasks(self) -> dict[str, Task]:
        return {f"T/{i}": Task(task_id=f"T/{i}") for i in range(self.config.tasks)}

    def load_samples(self, source: SampleSource, tasks: dict[str, Task]) -> list[Sample]:
        samples, per_task = [], {}
        for line, row in read_records(source):
            index = per_task.get(row["task_id"], 0)
            per_task[row["task_id"]] = index + 1
            samples.append(
                Sample(task_id=row["task_id"], index=index, completion=row["completion"],
                       line=line, record=row)
            )  # fmt: skip
        return samples

    def plan(self, samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
        size = self.config.unit_size
        return [list(samples[i : i + size]) for i in range(0, len(samples), size)]

    def node_needs(self, task: Task) -> NodeNeeds:
        cc = self.config.gpu.get(task.task_id)
        return NodeNeeds(min_compute_capability=cc) if cc is not None else NodeNeeds()

    def run_task(self, task: Task, sample: Sample, runner: TaskRunner) -> Any:
        text = sample.completion
        if text == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        if text.startswith("sleep:"):
            session = runner.prepare(SessionSpec(label=task.task_id))
            try:
                res = runner.execute(session, ["sleep", text[6:]], Limits(timeout_s=60))
            finally:
                runner.cleanup(session)
            return "pass" if res.ok else "fail"
        return text

    def evaluate(self, task: Task, sample: Sample, output: Any) -> SampleResult:
        passed = output == "pass"
        return SampleResult(
            task_id=sample.task_id,
            index=sample.index,
            passed=passed,
            reason=Reason.PASSED if passed else Reason.FAILED,
            completion_hash=sample.completion_hash,
            details={"node": node()},
        )


def node() -> str:
    return os.environ.get("VIBES_TEST_NODE", "driver")
