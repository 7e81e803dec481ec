"""The benchmarks of this folder: one per language family, the same machinery.

- ``humaneval-python``: OpenAI's HumanEval (the default), HumanEval-X Python, MBPP,
  EvalPlus (HumanEval+ / MBPP+) and MultiPL-E Python rows.
- ``mbpp``: the same, MBPP by default.
- ``humaneval-cpp``, ``humaneval-go``, ``humaneval-js``, ``humaneval-java``: HumanEval-X
  and MultiPL-E rows of that language, compiled (or run) with the test's own `main`.
- ``multipl-e``: MultiPL-E rows of any language whose toolchain is installed.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.benchmarks.multilang.config import CompiledConfig, MultiPLEConfig, PythonConfig
from vibes_eval.benchmarks.multilang.languages.base import wire_digest
from vibes_eval.benchmarks.multilang.languages.detect import refuse_other_language
from vibes_eval.benchmarks.multilang.languages.programs import language
from vibes_eval.benchmarks.multilang.prompting import CodeTaskPrompting
from vibes_eval.benchmarks.multilang.run import (
    COMPILED_UNIT,
    JUDGE,
    PYTHON_UNIT,
    CompiledUnits,
    PythonUnits,
    plan_by_task,
    plan_units,
)
from vibes_eval.benchmarks.multilang.samples import load_samples
from vibes_eval.benchmarks.multilang.tasks import CodeTask, load_tasks, resolve_dataset
from vibes_eval.core import metrics as m
from vibes_eval.core.benchmark import Benchmark, OnResult, default_metrics
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.system import usable_cpus
from vibes_eval.core.types import Sample, SampleResult, humaneval_row


class HumanEvalPython(Benchmark[CodeTask, PythonConfig]):
    prompting_class = CodeTaskPrompting
    name: ClassVar[str] = "humaneval-python"
    suite: ClassVar[str] = "humaneval"
    config_model = PythonConfig
    default_dataset: ClassVar[str] = "humaneval"

    def __init__(self, config: PythonConfig) -> None:
        super().__init__(config)
        self.units = PythonUnits(config)

    def problems_path(self) -> Path:
        return resolve_dataset(self.config.problems, self.default_dataset)

    def load_tasks(self) -> dict[str, CodeTask]:
        path = self.problems_path()
        refuse_other_language(path, "python", self.name)
        self.units.refuse_exposed(path)
        return load_tasks(path, "python")

    def load_samples(self, source: SampleSource, tasks: dict[str, CodeTask]) -> list[Sample]:
        return load_samples(source, tasks)

    def environment(self) -> dict[str, str]:
        return self.units.environment()

    def plan(self, samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
        if not self.config.batch:
            return super().plan(samples, workers)
        return plan_units(samples, min(workers, usable_cpus()), PYTHON_UNIT)

    def run_unit(
        self,
        tasks: dict[str, CodeTask],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        self.units.run(tasks, unit, runner, on_result)

    def run_task(self, task: CodeTask, sample: Sample, runner: TaskRunner) -> SampleResult:
        out: list[SampleResult] = []
        self.units.alone({task.task_id: task}, sample, runner, out.append)
        return out[0]

    def evaluate(self, task: CodeTask, sample: Sample, output: SampleResult) -> SampleResult:
        return output

    def metrics(self, ks: Sequence[int]) -> list[m.Metric]:
        """pass@k, and for EvalPlus rows also EvalPlus's base number (its "base tests")."""
        return [*default_metrics(ks), *(base_pass_at_k(k) for k in ks)]

    def export_row(self, record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
        return humaneval_row(record, result)


def base_pass_at_k(k: int) -> m.Metric:
    """pass@k on EvalPlus's base inputs alone (pass@k itself needs base and plus)."""

    def value(rs: Sequence[m.Scored]) -> Fraction | None:
        if k > len(rs) or not _evalplus(rs):
            return None
        passed = sum(r.measurements.get("base_passed", 0.0) == 1.0 for r in rs)
        return m.pass_at_k_exact(len(rs), passed, k)

    return m.Metric(
        f"base_pass@{k}",
        value,
        all_tasks=True,
        missing=f"some tasks have fewer than {k} samples",
        description=f"EvalPlus: pass@{k} on the base inputs alone (its base-tests number)",
        counts=_evalplus,
    )


def _evalplus(rs: Sequence[m.Scored]) -> bool:
    return any("base_passed" in r.measurements for r in rs)


class Mbpp(HumanEvalPython):
    name: ClassVar[str] = "mbpp"
    default_dataset: ClassVar[str] = "mbpp"


# -- languages with a test `main` ----------------------------------------------------------


class CompiledBenchmark(Benchmark[CodeTask, CompiledConfig]):
    prompting_class = CodeTaskPrompting
    suite: ClassVar[str] = "humaneval"
    config_model = CompiledConfig
    language_name: ClassVar[str]
    default_dataset: ClassVar[str | None] = None

    def __init__(self, config: CompiledConfig) -> None:
        super().__init__(config)
        self._units: CompiledUnits | None = None

    @property
    def units(self) -> CompiledUnits:
        if self._units is None:
            self._units = CompiledUnits(language(self.language_name), self.config)
        return self._units

    def problems_path(self) -> Path:
        if self.config.problems is None and self.default_dataset is None:
            raise UserError(
                f"{self.name} has no default dataset: give a problems file (--problems FILE; "
                "from Python, config={'problems': FILE})"
            )
        return resolve_dataset(self.config.problems, self.default_dataset or "")

    def load_tasks(self) -> dict[str, CodeTask]:
        return load_tasks(self.problems_path(), self.language_name)

    def load_samples(self, source: SampleSource, tasks: dict[str, CodeTask]) -> list[Sample]:
        return load_samples(source, tasks)

    def environment(self) -> dict[str, str]:
        self.units.check_available()
        # the judge is part of what a cached verdict must match: the split's verdicts
        # are not the in-process ones (docs/integrity.md)
        lang = self.units.lang
        return {**lang.environment(), "judge": JUDGE, "wire": wire_digest(lang.name)}

    def plan(self, samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
        if not self.config.batch:
            return super().plan(samples, workers)
        return plan_by_task(samples, workers, COMPILED_UNIT)

    def run_unit(
        self,
        tasks: dict[str, CodeTask],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        self.units.run(tasks, unit, runner, on_result)

    def run_task(self, task: CodeTask, sample: Sample, runner: TaskRunner) -> SampleResult:
        out: list[SampleResult] = []
        self.units.run({task.task_id: task}, [sample], runner, out.append)
        return out[0]

    def evaluate(self, task: CodeTask, sample: Sample, output: SampleResult) -> SampleResult:
        return output

    def export_row(self, record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
        return humaneval_row(record, result)


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
    def units(self) -> CompiledUnits:
        if self._units is None:
            if self.lang_name is None:
                self.load_tasks()
            assert self.lang_name is not None
            self._units = CompiledUnits(language(self.lang_name), self.config)
        return self._units

    def load_tasks(self) -> dict[str, CodeTask]:
        path = self.problems_path()
        tasks = load_tasks(path, self.config.language)  # type: ignore[attr-defined]
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
