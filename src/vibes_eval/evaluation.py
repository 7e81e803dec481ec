"""One evaluation's pieces, independent of the CLI and of the store: load the benchmark's
tasks and samples, run what is pending, score the results with the benchmark's metrics.
``api.py`` puts them together with a runner and a store."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vibes_eval.core import metrics
from vibes_eval.core.benchmark import Benchmark, BenchmarkConfig
from vibes_eval.core.engine import MemoryRecorder, Recorder, run_samples
from vibes_eval.core.errors import UserError
from vibes_eval.core.executor import Executor
from vibes_eval.core.jsonl import SampleSource, write_jsonl
from vibes_eval.core.registry import benchmark_class
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Sample, SampleResult, Task


@dataclass
class Prepared:
    """Everything loaded and validated before the first sample runs."""

    benchmark: Benchmark[Any, Any]
    tasks: dict[str, Task]
    samples: list[Sample]


@dataclass
class Outcome:
    """What an evaluation produced: every verdict, and the benchmark's metrics over them."""

    prepared: Prepared
    results: dict[tuple[str, int], SampleResult]
    ks: list[int]
    elapsed_s: float = 0.0
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)
    run_id: str | None = None  # when recorded in a store
    evaluated: int = 0  # verdicts computed by this run (not cached, not resumed)
    _scores: metrics.Scores | None = None

    @property
    def ordered(self) -> list[SampleResult]:
        """Results in sample-file order."""
        return [self.results[s.key] for s in self.prepared.samples if s.key in self.results]

    def scores(self) -> metrics.Scores:
        """The benchmark's metrics for the run's ``ks``, per task and aggregated."""
        if self._scores is None:
            declared = self.prepared.benchmark.metrics(self.ks)
            self._scores = metrics.score(declared, self.ordered)
        return self._scores

    @property
    def metrics(self) -> dict[str, float]:
        return self.scores().values

    @property
    def intervals(self) -> dict[str, tuple[float, float]]:
        """Each metric's 95% bootstrap interval over tasks (where there are two or more)."""
        return self.scores().intervals

    @property
    def reasons(self) -> dict[str, int]:
        """How many samples ended for each reason."""
        return metrics.reason_counts(r.reason for r in self.ordered)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v:.4f}" for k, v in self.metrics.items())
        state = ", interrupted" if self.interrupted else ""
        done, total = len(self.results), len(self.prepared.samples)
        name, run = self.prepared.benchmark.name, self.run_id
        return f"Outcome({name}, {done} of {total} samples, {shown}{state}, run_id={run!r})"

    def rows(self) -> list[dict[str, Any]]:
        """The results file's rows: each input record plus its verdict."""
        bench = self.prepared.benchmark
        return [
            bench.export_row(sample.record, res)
            for sample in self.prepared.samples
            if (res := self.results.get(sample.key)) is not None
        ]


def prepare(benchmark: str, config: BenchmarkConfig, samples: SampleSource) -> Prepared:
    """Raises: UserError for anything wrong with the inputs."""
    bench = benchmark_class(benchmark)(config)
    tasks = bench.load_tasks()
    loaded = bench.load_samples(samples, tasks)
    return Prepared(bench, tasks, loaded)


def run(
    prepared: Prepared,
    runner: TaskRunner,
    *,
    ks: Sequence[int],
    workers: int,
    recorder: Recorder | None = None,
    on_result: Callable[[SampleResult], None] | None = None,
    executor: Executor | None = None,
) -> Outcome:
    """Evaluate; on Ctrl-C returns what is done with ``interrupted=True``."""
    recorder = recorder or MemoryRecorder()
    start = time.monotonic()
    outcome = Outcome(prepared, {}, list(ks))

    def counted(result: SampleResult) -> None:
        outcome.evaluated += 0 if result.cached else 1
        if on_result is not None:
            on_result(result)

    try:
        outcome.results = run_samples(
            prepared.benchmark,
            prepared.tasks,
            prepared.samples,
            runner,
            recorder,
            workers=workers,
            on_result=counted,
            executor=executor,
        )
    except KeyboardInterrupt:
        outcome.interrupted = True
        done = recorder.done()  # one copy, not one per sample
        outcome.results = {s.key: r for s in prepared.samples if (r := done.get(s.key)) is not None}
    outcome.elapsed_s = time.monotonic() - start
    attempted = {s.task_id for s in prepared.samples}
    if len(attempted) < len(prepared.tasks):
        outcome.notes.append(
            f"{len(prepared.tasks) - len(attempted)} of {len(prepared.tasks)} problems have no "
            f"samples; metrics are over the {len(attempted)} attempted"
        )
    return outcome


def default_results_path(samples_file: Path) -> Path:
    return samples_file.with_name(samples_file.name + "_results.jsonl")


def check_writable(path: Path) -> None:
    """Refuse a results path that cannot be written before anything is evaluated, so a
    typo never costs a run's verdicts.

    Raises: UserError naming the path.
    """
    if path.is_dir():
        raise UserError("is a directory; the results file must be a file path", path=path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"cannot write results: no folder {parent}", path=path)
    try:  # os.access lies for root and for read-only mounts; a real file tells
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".vibes-check-"):
            pass
    except OSError as exc:
        raise UserError(f"cannot write results: {exc.strerror or exc}", path=path) from None


def write_results(outcome: Outcome, path: Path) -> None:
    """Raises: UserError when the file cannot be written."""
    try:
        write_jsonl(path, outcome.rows())
    except OSError as exc:
        raise UserError(f"cannot write results: {exc.strerror}", path=path) from None
