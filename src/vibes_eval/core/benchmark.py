"""The ``Benchmark`` interface: load tasks and samples, run one sample, score it.

The engine never looks inside a task. It asks the benchmark to ``plan`` pending samples
into work units (one sample each by default; batched benchmarks group them), runs each unit
on a runner thread with ``run_unit``, and stores every ``SampleResult`` as it arrives.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from vibes_eval.core import metrics as m
from vibes_eval.core.errors import RunnerError, UserError
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.placement import NodeNeeds
from vibes_eval.core.prompting import Prompting
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import (
    CORE_REASONS,
    Limits,
    Reason,
    Sample,
    SampleResult,
    Task,
    humaneval_row,
)


class BenchmarkConfig(BaseModel):
    """Settings that change verdicts. Stored with each run; resuming with other values is
    refused, so anything that does not change verdicts (workers, progress) lives elsewhere."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    problems: str | None = None  # a path or a named dataset; None: the benchmark's default
    limits: Limits = Limits()

    # Fields that change how fast, not what: left out of a run's identity, so resuming
    # with another value is allowed.
    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset()

    def identity(self) -> dict[str, Any]:
        """The settings a resumed run must share with the stored one."""
        return self.model_dump(mode="json", exclude=set(self.NOT_IDENTITY))


TaskT = TypeVar("TaskT", bound=Task)
ConfigT = TypeVar("ConfigT", bound=BenchmarkConfig)
OnResult = Callable[[SampleResult], None]


class Benchmark(abc.ABC, Generic[TaskT, ConfigT]):
    """One benchmark: a name, its tasks, and how a sample of a task is run and scored."""

    name: ClassVar[str]
    suite: ClassVar[str]  # family, e.g. "humaneval", "swebench", "kernels"
    config_model: ClassVar[type[BenchmarkConfig]] = BenchmarkConfig
    # Reasons of this benchmark's own, beyond ``types.Reason``: name -> what it means.
    reasons: ClassVar[Mapping[str, str]] = {}
    headline: ClassVar[str] = "pass@1"  # the metric a list of runs shows
    # Runner capabilities it cannot do without (``Capabilities`` flags, e.g.
    # "session_images"): `--sandbox auto` passes over runners that lack one.
    runner_needs: ClassVar[frozenset[str]] = frozenset()
    # The prompt hooks (``core.prompting``); None: this benchmark cannot prompt a model.
    prompting_class: ClassVar[type[Prompting[Any]] | None] = None

    def __init__(self, config: ConfigT) -> None:
        self.config = config

    # -- inputs -----------------------------------------------------------------------

    @abc.abstractmethod
    def load_tasks(self) -> dict[str, TaskT]:
        """All tasks of ``config.problems`` by id.

        Raises:
            UserError: the file is missing, empty or malformed (names file, line, field).
        """

    @abc.abstractmethod
    def load_samples(self, source: SampleSource, tasks: dict[str, TaskT]) -> list[Sample]:
        """The samples of a user's file (or records handed over by the Python API), each
        matched to a task.

        Raises:
            UserError: malformed line, missing field, unknown task id, empty file.
        """

    def problems_path(self) -> Path | None:
        """The file the tasks were read from, when there is one: its hash identifies a run."""
        return None

    # -- running ----------------------------------------------------------------------

    @abc.abstractmethod
    def run_task(self, task: TaskT, sample: Sample, runner: TaskRunner) -> Any:
        """Run one sample of one task on ``runner``; returns what ``evaluate`` needs.

        Raises:
            RunnerError: the runner failed (the engine records an infra error).
        """

    @abc.abstractmethod
    def evaluate(self, task: TaskT, sample: Sample, output: Any) -> SampleResult:
        """Turn what ``run_task`` observed into a verdict."""

    def plan(self, samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
        """Group pending samples into units of work; one sample per unit by default."""
        return [[s] for s in samples]

    def run_unit(
        self,
        tasks: dict[str, TaskT],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        """Run one unit, calling ``on_result`` once per sample as soon as it is known.

        The default runs samples one at a time; a ``RunnerError`` makes that sample an
        infra error and the unit goes on. Batched benchmarks override this. Raises nothing
        for a sample's misbehaviour; the engine makes whatever escapes an infra error of
        the samples not yet reported.
        """
        for sample in unit:
            task = tasks[sample.task_id]
            try:
                output = self.run_task(task, sample, runner)
            except RunnerError as exc:  # this sample's infrastructure, not its neighbours'
                on_result(self.infra_result(sample, f"{type(exc).__name__}: {exc}"))
                continue
            on_result(self.evaluate(task, sample, output))

    # -- models in the loop ------------------------------------------------------------

    def prompting(self) -> Prompting[Any]:
        """This benchmark's prompt hooks.

        Raises:
            UserError: the benchmark cannot prompt a model.
        """
        if self.prompting_class is None:
            raise UserError(
                f"benchmark {self.name} cannot prompt a model yet: it needs a Prompting "
                "(prompting_class; see docs/new-benchmark.md)"
            )
        return self.prompting_class(self)

    # -- metrics and reporting ------------------------------------------------------------

    def metrics(self, ks: Sequence[int]) -> list[m.Metric]:
        """The metrics this benchmark reports, each a value per task aggregated over tasks
        (``compare`` pairs them per task). ``ks``: the run's ``--k``. Default: pass@k."""
        return default_metrics(ks)

    def solved(self, results: Sequence[m.Scored]) -> bool:
        """Whether one task counts as solved, for McNemar's test in ``compare``."""
        return default_solved(results)

    def known_reasons(self) -> dict[str, str]:
        return {**CORE_REASONS, **self.reasons}

    def export_row(self, record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
        """One line of the results file: the input record plus the verdict."""
        return default_export_row(record, result)

    def environment(self) -> dict[str, str]:
        """Toolchain versions and other facts that make verdicts reproducible."""
        return {}

    def task_notes(self, tasks: dict[str, TaskT]) -> dict[str, str]:
        """Per-task warnings to show in reports (e.g. a test block that runs no test)."""
        return {}

    def node_needs(self, task: TaskT) -> NodeNeeds:
        """What a machine must have to run this task's samples (a GPU of some compute
        capability, a custom resource) and what makes one preferable (the task's image
        already there). Executors that spread units over machines place them by it; the
        local executor ignores it."""
        return NodeNeeds()

    def group_of(self, task_id: str) -> str | None:
        """The group a task belongs to for per-group breakdowns in reports (SWE-bench: its
        repository); None: no breakdown."""
        return None

    # -- run hooks (artifacts a benchmark writes besides the store) ---------------------

    def start_run(self, run_id: str) -> None:
        """Called once before evaluating, with the run's id (the store's, or a generated
        one when nothing is recorded)."""

    def finish_run(
        self,
        run_id: str,
        results: Mapping[tuple[str, int], SampleResult],
        samples: Sequence[Sample],
    ) -> None:
        """Called after evaluating (also after an interruption), with every verdict of the
        run so far, cached and resumed ones included."""

    @staticmethod
    def infra_result(sample: Sample, detail: str) -> SampleResult:
        return SampleResult(
            task_id=sample.task_id,
            index=sample.index,
            passed=False,
            reason=Reason.INFRA,
            detail=detail,
            completion_hash=sample.completion_hash,
        )


def task_ids(samples: Iterable[Sample]) -> list[str]:
    """Task ids in first-seen order."""
    return list(dict.fromkeys(s.task_id for s in samples))


# The defaults, also used for runs of a benchmark this installation does not have.


def default_metrics(ks: Sequence[int]) -> list[m.Metric]:
    return [m.pass_at_k_metric(k) for k in ks]


def default_solved(results: Sequence[m.Scored]) -> bool:
    return m.pass_rate(results) >= 0.5


def default_export_row(record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
    row = humaneval_row(record, result)
    if result.measurements:
        row["measurements"] = result.measurements
    if result.details:
        row["details"] = result.details
    return row
