"""The evaluation stage and the event sink of a generation run.

``EvalStage``: generated attempts queue up here and are evaluated in batches by the
engine (``core.engine.run_samples``) on the caller's thread, whatever has arrived since
the last batch: a slow model gets each sample judged as it arrives, a fast one gets the
benchmark's batching. The engine's guarantees carry over: one copy of identical
completions is evaluated, cached verdicts are reused (one store query per batch),
Ctrl-C stops the workers and kills what runs.

``Sink``: events go to the run's store writer (durable when ``append`` returns) or, with
no store, nowhere but the in-memory history."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from vibes_eval.core.benchmark import Benchmark
from vibes_eval.core.engine import run_samples
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Sample, SampleResult, Task
from vibes_eval.generation.history import RunHistory
from vibes_eval.generation.retry import Stopped
from vibes_eval.store.base import EventStore
from vibes_eval.store.cache import cache_key, context_hash
from vibes_eval.store.events import Event, RunStarted
from vibes_eval.store.writer import GroupWriter

Key = tuple[str, int]
CacheLookup = Callable[[Sequence[Sample]], dict[Key, SampleResult]]


class _BatchRecorder:
    """The engine's ``Recorder`` for one batch: verdicts resolve the attempts' futures
    (recording them is the sample's job: an attempt is not a final verdict)."""

    def __init__(self, futures: dict[Key, Future[SampleResult]], hits: dict[Key, SampleResult]):
        self._futures = futures
        self._hits = hits

    def done(self) -> dict[Key, SampleResult]:
        return {}

    def record(self, result: SampleResult) -> None:
        fut = self._futures.get(result.key)
        if fut is not None and not fut.done():
            fut.set_result(result)

    def record_then(self, result: SampleResult, then: Callable[[], None]) -> None:
        self.record(result)
        then()

    def flush(self) -> None:
        pass

    def lookup(self, sample: Sample) -> SampleResult | None:
        return self._hits.get(sample.key)


class EvalStage:
    def __init__(
        self,
        benchmark: Benchmark[Any, Any],
        tasks: dict[str, Task],
        runner: TaskRunner,
        *,
        workers: int,
        cache: CacheLookup | None,
    ) -> None:
        self.benchmark = benchmark
        self.tasks = tasks
        self.runner = runner
        self.workers = workers
        self.cache = cache
        self.batches = 0
        self.evaluated = 0
        self._queue: list[tuple[Sample, Future[SampleResult]]] = []
        self._cond = threading.Condition()

    def submit(self, sample: Sample) -> Future[SampleResult]:
        """Queue an attempt (at most one per sample key at a time)."""
        fut: Future[SampleResult] = Future()
        with self._cond:
            self._queue.append((sample, fut))
            self._cond.notify_all()
        return fut

    def pending(self) -> int:
        with self._cond:
            return len(self._queue)

    def serve(self, wait_s: float) -> bool:
        """Evaluate everything queued (waiting up to ``wait_s`` for something); whether
        anything was. Raises: KeyboardInterrupt from the engine, after it stopped."""
        with self._cond:
            if not self._queue:
                self._cond.wait(wait_s)
            batch, self._queue = self._queue, []
        if not batch:
            return False
        futures = {s.key: f for s, f in batch}
        samples = [s for s, _ in batch]
        try:
            hits = self.cache(samples) if self.cache else {}
            run_samples(
                self.benchmark,
                self.tasks,
                samples,
                self.runner,
                _BatchRecorder(futures, hits),
                workers=self.workers,
            )
        finally:
            for fut in futures.values():
                if not fut.done():
                    fut.set_exception(Stopped())
        self.batches += 1
        self.evaluated += len(samples)
        return True

    def fail_pending(self) -> None:
        with self._cond:
            batch, self._queue = self._queue, []
        for _, fut in batch:
            if not fut.done():
                fut.set_exception(Stopped())


def store_cache(store: EventStore, started: RunStarted, tasks: dict[str, Task]) -> CacheLookup:
    """Cached verdicts for a batch of attempts, in one query: the spine's result cache,
    keyed on the judging context, the problem and the completion, so runs and A/B variants
    that produce identical code share their evaluations."""
    context = context_hash(started)
    fingerprints: dict[str, str] = {}

    def lookup(samples: Sequence[Sample]) -> dict[Key, SampleResult]:
        keys = {}
        for s in samples:
            fp = fingerprints.get(s.task_id) or fingerprints.setdefault(
                s.task_id, tasks[s.task_id].fingerprint()
            )
            keys[s.key] = cache_key(context, fp, s.completion_hash)
        found = store.cache_lookup(set(keys.values()))
        return {k: found[ck] for k, ck in keys.items() if ck in found}

    return lookup


class Sink:
    """Appends the run's events; mirrors each into ``history``."""

    def __init__(self, writer: GroupWriter | None, history: RunHistory) -> None:
        self.writer = writer
        self.history = history
        self._lock = threading.Condition()
        self._pending = 0
        self._error: BaseException | None = None

    def append(self, events: Sequence[Event]) -> None:
        """Durable when this returns. Raises: StoreError."""
        if self.writer is not None:
            self.writer.append(events)
        for ev in events:
            self.history.add(ev)

    def submit(self, events: Sequence[Event], then: Callable[[], None]) -> None:
        """Append without waiting; ``then`` runs once the events are durable.
        Raises: an earlier submission's error."""
        with self._lock:
            if self._error is not None:
                raise self._error
            self._pending += 1
        if self.writer is None:
            self._committed(events, then, None)
            return
        try:
            fut = self.writer.submit(events)
        except BaseException:
            self._settle(None)
            raise
        fut.add_done_callback(lambda f: self._committed(events, then, f.exception()))

    def _committed(
        self, events: Sequence[Event], then: Callable[[], None], error: BaseException | None
    ) -> None:
        if error is None:
            for ev in events:
                self.history.add(ev)
            try:
                then()
            except BaseException as exc:  # a progress callback must not hang flush()
                error = exc
        self._settle(error)

    def _settle(self, error: BaseException | None) -> None:
        with self._lock:
            self._pending -= 1
            if error is not None and self._error is None:
                self._error = error
            self._lock.notify_all()

    def flush(self) -> None:
        """Wait for every submission. Raises: the first error one met."""
        with self._lock:
            while self._pending:
                self._lock.wait()
            if self._error is not None:
                raise self._error
