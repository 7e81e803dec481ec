"""The engine's ``Recorder`` on top of the store: verdicts become ``SampleEvaluated``
events, earlier verdicts of the run are ``done``, and the result cache answers ``lookup``.

A verdict counts as done (``done()``, the engine's ``then`` callback) only once its event
is committed. ``record_then`` does not make the worker wait for that: a batch's verdicts
arrive in a burst from one thread, and waiting for each commit in turn would cost one
fsync per sample; queued together, the writer commits them in one transaction."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future

from vibes_eval.core.types import Sample, SampleResult, Task
from vibes_eval.store.base import EventStore
from vibes_eval.store.cache import Contexts, cache_key
from vibes_eval.store.events import RunStarted, SampleEvaluated
from vibes_eval.store.writer import GroupWriter


class StoreRecorder:
    def __init__(
        self,
        store: EventStore,
        writer: GroupWriter,
        started: RunStarted,
        tasks: Mapping[str, Task],
        samples: Sequence[Sample],
        *,
        use_cache: bool = True,
    ) -> None:
        self.run_id = started.run_id
        self._writer = writer
        self._samples = {s.key: s for s in samples}
        fingerprints = {t: tasks[t].fingerprint() for t in {s.task_id for s in samples}}
        self._problem_hash = fingerprints
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._error: BaseException | None = None
        # The run's earlier verdicts, read once; the engine skips these samples. Infra
        # errors say nothing about a sample: those samples are evaluated again.
        self._done: dict[tuple[str, int], SampleResult] = {}
        for stored in store.sample_events(self.run_id):
            ev = stored.event
            assert isinstance(ev, SampleEvaluated)
            self._done[ev.result.key] = ev.result
        self.retried = [k for k, r in self._done.items() if r.infra]
        for key in self.retried:
            del self._done[key]
        # One query for every pending sample's cache entry instead of one per sample.
        self._cached: dict[tuple[str, int], SampleResult] = {}
        self.cache_hits = 0
        if use_cache:
            # A verdict obtained alone serves any run of this identity; any other only a
            # run of exactly these settings (``cache.Contexts``). The first is preferred.
            contexts = dict.fromkeys(Contexts.of(started))
            pending = [s for s in samples if s.key not in self._done]
            keys = {
                (ctx, s.key): cache_key(ctx, fingerprints[s.task_id], s.completion_hash)
                for ctx in contexts
                for s in pending
            }
            found = store.cache_lookup(set(keys.values()))
            for (_, key), ckey in keys.items():
                if ckey in found and key not in self._cached:
                    self._cached[key] = found[ckey]

    @property
    def cache_hits_pending(self) -> int:
        """Samples without a verdict in this run that the cache can answer."""
        return len(self._cached)

    def done(self) -> dict[tuple[str, int], SampleResult]:
        with self._lock:
            return dict(self._done)

    def record(self, result: SampleResult) -> None:
        """Block until ``result`` is committed. Raises: StoreError."""
        self._writer.append([self._event_for(result)])
        with self._lock:
            self._done[result.key] = result

    def record_then(self, result: SampleResult, then: Callable[[], None]) -> None:
        with self._lock:
            if self._error is not None:
                raise self._error
            self._pending += 1
        try:
            future = self._writer.submit([self._event_for(result)])
        except BaseException:
            self._settle(None)
            raise

        def committed(fut: Future[list[int]]) -> None:
            error = fut.exception()
            if error is None:
                with self._lock:
                    self._done[result.key] = result
                try:
                    then()
                except BaseException as exc:  # a progress callback must not hang flush()
                    error = exc
            self._settle(error)

        future.add_done_callback(committed)

    def flush(self) -> None:
        with self._lock:
            while self._pending:
                self._idle.wait()
            if self._error is not None:
                raise self._error

    def _settle(self, error: BaseException | None) -> None:
        with self._lock:
            self._pending -= 1
            if error is not None and self._error is None:
                self._error = error
            self._idle.notify_all()

    def _event_for(self, result: SampleResult) -> SampleEvaluated:
        sample = self._samples.get(result.key)
        return SampleEvaluated.from_result(
            self.run_id,
            result,
            problem_hash=self._problem_hash.get(result.task_id, ""),
            line=sample.line if sample else 0,
            record=sample.record if sample else None,
        )

    def lookup(self, sample: Sample) -> SampleResult | None:
        hit = self._cached.get(sample.key)
        if hit is not None:
            self.cache_hits += 1
        return hit
