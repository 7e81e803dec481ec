"""The wiring: names, settings, and which module does what."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.core import metrics as m
from vibes_eval.core.benchmark import Benchmark
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Sample, SampleResult
from vibes_stdio import judge, run, samples, scoring, tasks
from vibes_stdio.config import StdioConfig
from vibes_stdio.prompting import StdioPrompting


class StdioPython(Benchmark[tasks.StdioTask, StdioConfig]):
    name: ClassVar[str] = "stdio-python"
    suite: ClassVar[str] = "stdio"
    config_model = StdioConfig
    prompting_class = StdioPrompting

    def load_tasks(self) -> dict[str, tasks.StdioTask]:
        return tasks.load_tasks(self.problems_path())

    def problems_path(self) -> Path | None:
        return Path(self.config.problems) if self.config.problems else tasks.BUILT_IN

    def load_samples(self, source: SampleSource, tasks: dict[str, Any]) -> list[Sample]:
        return samples.load_samples(source, tasks)

    def run_task(self, task: tasks.StdioTask, sample: Sample, runner: TaskRunner) -> Any:
        return run.run_cases(task, sample, runner, self.config)

    def evaluate(self, task: tasks.StdioTask, sample: Sample, output: Any) -> SampleResult:
        return judge.judge(task, sample, output)

    def metrics(self, ks: Sequence[int]) -> list[m.Metric]:
        return scoring.stdio_metrics(ks)
