"""The Python API: ``evaluate`` runs an evaluation, ``open_store`` reads recorded ones.
The CLI is a thin layer over ``Evaluation``.

    import vibes_eval
    out = vibes_eval.evaluate("humaneval-rust", [{"task_id": "Rust/0", "completion": "..."}],
                              config={"problems": "humaneval-x-rust"}, store="default")
    print(out.metrics, out.run_id)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vibes_eval import evaluation
from vibes_eval.core import settings
from vibes_eval.core.benchmark import BenchmarkConfig
from vibes_eval.core.errors import UserError
from vibes_eval.core.executor import Executor
from vibes_eval.core.jsonl import SampleSource, source_path
from vibes_eval.core.registry import benchmark_class, executor_class, scoring_for
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.system import usable_cpus
from vibes_eval.core.types import SampleResult
from vibes_eval.evaluation import Outcome
from vibes_eval.runners.select import resolve_runner
from vibes_eval.runs import recording
from vibes_eval.runs.compare import Comparison, compare
from vibes_eval.runs.lifecycle import check_run_id, new_run_id
from vibes_eval.runs.summary import export_rows, latest_verdicts, run_detail, run_rows
from vibes_eval.store.base import EventStore, StoreError, StoreMissing
from vibes_eval.store.sql import open_store as _open_sql
from vibes_eval.store.urls import is_off, resolve

DEFAULT_STORE = "default"  # the SQLite store in the user's data dir

ConfigLike = BenchmarkConfig | Mapping[str, Any] | None


def make_config(benchmark: str, config: ConfigLike = None, *layers: settings.Layer) -> Any:
    """The benchmark's config model from a model, a dict and/or setting layers.

    Raises:
        UserError: an unknown benchmark, or an unknown or invalid setting (named).
    """
    model = benchmark_class(benchmark).config_model
    if isinstance(config, BenchmarkConfig):
        if not layers:
            return config
        config = config.model_dump(mode="json")
    base = [settings.Layer("config", dict(config))] if config else []
    return settings.build(model, [*base, *layers], benchmark)


@dataclass
class Request:
    """One evaluation, fully specified."""

    benchmark: str
    samples: SampleSource
    config: BenchmarkConfig
    sandbox: str = "auto"
    store: str | None = None  # None: record nothing; DEFAULT_STORE; a path or URL
    workers: int | None = None  # None: one per usable CPU
    run_id: str | None = None  # resume this run when it exists
    labels: dict[str, str] = field(default_factory=dict)
    ks: Sequence[int] = (1, 10, 100)
    use_cache: bool = True
    output: Path | None = None  # where the results file is written (recorded with the run)
    executor: str = "local"  # where units run: local threads, or "ray" (docs/scale-out.md)
    ray_address: str | None = None  # auto, HOST:PORT or ray://HOST:10001; None: Ray's default
    # Samples a model generated (`--model`): its settings, recorded with the run; the part
    # in ``generation_identity`` must match for a resume (vibes_eval.generation).
    generation: dict[str, Any] | None = None
    generation_identity: dict[str, Any] | None = None


class Evaluation:
    """An evaluation from loading to its outcome. As a context manager it holds the runner
    and the store; between ``__enter__`` and ``run`` a caller can show where it stands
    (``run_id``, ``resumed``, ``already_done``).

    Raises (constructor, ``__enter__``): UserError for bad input, an unavailable runner,
    a store that cannot be opened, or a run id recorded with other settings.
    """

    def __init__(self, request: Request, prepared: evaluation.Prepared | None = None) -> None:
        """``prepared``: tasks and samples already loaded (generation makes its own)."""
        if request.run_id is not None:
            check_run_id(request.run_id)
            if request.store is None:
                raise UserError("a run id needs a store to resume from; this run records nothing")
        if request.output is not None:
            evaluation.check_writable(request.output)
        self.request = request
        self.prepared = prepared or evaluation.prepare(
            request.benchmark, request.config, request.samples
        )
        self.runner: TaskRunner | None = None
        self.executor: Executor | None = None
        self.recording: recording.Recording | None = None
        self.notes: list[str] = []

    @property
    def workers(self) -> int:
        return self.request.workers or usable_cpus()

    def __enter__(self) -> Evaluation:
        self.runner = resolve_runner(self.request.sandbox, self.prepared.benchmark.runner_needs)
        try:
            self.prepared.benchmark.environment()  # build toolchain pieces before the clock
            weaker = self.runner.capabilities.weaknesses()
            if weaker:
                self.notes.append(f"sandbox {self.runner.name}: {'; '.join(weaker)}")
            req = self.request
            self.executor = executor_class(req.executor)(req.ray_address, req.workers)
            self.executor.open()  # a cluster that cannot be reached fails before the run starts
            store = open_store_for_run(self.request.store)
            if store is not None:
                self.recording = self._start(store)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _start(self, store: EventStore) -> recording.Recording:
        assert self.runner is not None
        req = self.request
        return recording.start(
            store,
            self.prepared,
            self.runner,
            run_id=req.run_id,
            samples_path=source_path(req.samples),
            output_path=req.output,
            ks=list(req.ks),
            labels=req.labels,
            workers=self.workers,
            use_cache=req.use_cache,
            generation=req.generation,
            generation_identity=req.generation_identity,
        )

    @property
    def run_id(self) -> str | None:
        return self.recording.run_id if self.recording else None

    @property
    def resumed(self) -> bool:
        return bool(self.recording and self.recording.resumed)

    @property
    def already_done(self) -> int:
        return len(self.recording.recorder.done()) if self.recording else 0

    def run(self, on_result: Callable[[SampleResult], None] | None = None) -> Outcome:
        """Evaluate what is pending. Ctrl-C: the outcome says ``interrupted``; recorded
        verdicts stay recorded."""
        assert self.runner is not None, "use Evaluation as a context manager"
        bench = self.prepared.benchmark
        run_id = self.run_id or new_run_id()
        bench.start_run(run_id)
        if self.executor is not None:
            self.executor.start_run(run_id)
        outcome = evaluation.run(
            self.prepared,
            self.runner,
            ks=self.request.ks,
            workers=self.workers,
            recorder=self.recording.recorder if self.recording else None,
            on_result=on_result,
            executor=self.executor,
        )
        outcome.notes += self.notes + (self.executor.notes if self.executor else [])
        bench.finish_run(run_id, outcome.results, self.prepared.samples)
        if self.recording:
            self.recording.finish(outcome)
            outcome.run_id = self.recording.run_id
        if self.request.output is not None:
            evaluation.write_results(outcome, self.request.output)
        return outcome

    def __exit__(self, *exc: object) -> None:
        try:
            if self.recording is not None:
                self.recording.close()
        finally:
            try:
                if self.executor is not None:
                    self.executor.close()
            finally:
                if self.runner is not None:
                    self.runner.close()


def open_store_for_run(spec: str | None) -> EventStore | None:
    """The store to record into: None records nothing.

    Raises: StoreError (one line) when it cannot be opened or is not a vibes-eval store.
    """
    if spec is None or is_off(spec):
        return None
    return recording.open_store_for_run(None if spec == DEFAULT_STORE else spec)


def evaluate(
    benchmark: str,
    samples: SampleSource,
    *,
    config: ConfigLike = None,
    sandbox: str = "auto",
    store: str | None = None,
    workers: int | None = None,
    run_id: str | None = None,
    labels: Mapping[str, str] | None = None,
    ks: Sequence[int] = (1, 10, 100),
    use_cache: bool = True,
    output: str | Path | None = None,
    on_result: Callable[[SampleResult], None] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> Outcome:
    """Evaluate ``samples`` (a JSONL path, or an iterable of dicts such as
    ``{"task_id": ..., "completion": ...}``) on ``benchmark``.

    ``config``: the benchmark's settings (its config model or a dict; see
    ``vibes eval run BENCHMARK --help``). ``store``: None records nothing, ``"default"``
    records into the user's store, or a SQLite path / ``postgresql://`` URL. With a store,
    ``run_id`` names the run, and an existing run of that id is resumed. ``executor``:
    "local" (threads here) or "ray" (the nodes of the Ray cluster at ``ray_address``;
    docs/scale-out.md).

    Raises:
        UserError: bad input, unknown settings, an unavailable sandbox, a store problem.
    """
    request = Request(
        benchmark=benchmark,
        samples=samples,
        config=make_config(benchmark, config),
        sandbox=sandbox,
        store=store,
        workers=workers,
        run_id=run_id,
        labels=dict(labels or {}),
        ks=list(ks),
        use_cache=use_cache,
        output=Path(output) if output is not None else None,
        executor=executor,
        ray_address=ray_address,
    )
    with Evaluation(request) as ev:
        return ev.run(on_result)


class Results:
    """Read access to a result store: runs, their metrics and verdicts, comparisons."""

    def __init__(self, store: EventStore | None, where: str) -> None:
        self._store = store
        self.where = where

    def _st(self) -> EventStore:
        if self._store is None:
            raise StoreMissing(f"no store at {self.where} yet")
        return self._store

    def runs(self) -> list[dict[str, Any]]:
        """Every run, newest first: id, benchmark, labels, counts, headline metric, status."""
        return run_rows(self._store) if self._store is not None else []

    def run(self, run_id: str) -> dict[str, Any]:
        """One run: settings, metrics, per-task values, failures, slowest samples."""
        return run_detail(self._st(), run_id)

    def metrics(self, run_id: str) -> dict[str, float]:
        return dict(self.run(run_id)["metrics"])

    def results(self, run_id: str) -> list[SampleResult]:
        """Every verdict of the run, in sample-file order."""
        self._st().run(run_id)
        return [ev.result for ev in latest_verdicts(self._st(), run_id)]

    def export(self, run_id: str) -> list[dict[str, Any]]:
        """The results file's rows, as `vibes eval run` wrote them."""
        return export_rows(self._st(), run_id)

    def compare(self, run_a: str, run_b: str) -> Comparison:
        """B - A per metric with paired bootstrap CIs, McNemar's test, flipped tasks.

        Raises: UnknownRun; UserError when the runs share no task.
        """
        st = self._st()
        info_a, info_b = st.run(run_a), st.run(run_b)
        assert info_a.started is not None and info_b.started is not None
        ks = sorted(set(info_a.started.ks) | set(info_b.started.ks))
        scoring = scoring_for(info_b.benchmark, info_b.started.config, ks)
        try:
            return compare(
                st.samples(run_a), st.samples(run_b), scoring.metrics, solved=scoring.solved
            )
        except ValueError as exc:
            raise UserError(f"cannot compare {run_a} and {run_b}: {exc}") from None

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> Results:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.runs())


def open_store(url: str | None = None) -> Results:
    """The result store at ``url`` (a SQLite path or ``postgresql://`` URL; None: the
    default store) for reading. Nothing is created: a store that does not exist yet lists
    no runs.

    Raises: StoreError when it cannot be opened or is not a vibes-eval store.
    """
    spec = None if url in (None, DEFAULT_STORE) else url
    target = resolve(spec)
    try:
        store: EventStore | None = _open_sql(target, create=False)
    except StoreMissing:
        store = None
    return Results(store, target.display)


__all__ = ["Evaluation", "Outcome", "Request", "Results", "StoreError", "evaluate", "open_store"]
