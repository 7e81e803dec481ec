"""The engine's ``Recorder`` on top of the store: verdicts become ``SampleEvaluated``
events (``record`` returns once the event is committed), earlier verdicts of the run are
``done``, and the result cache answers ``lookup``."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from vibes_eval.core.types import Sample, SampleResult, Task
from vibes_eval.store.base import EventStore
from vibes_eval.store.cache import cache_key, context_hash
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
        # The run's earlier verdicts, read once; the engine skips these samples.
        self._done: dict[tuple[str, int], SampleResult] = {}
        for stored in store.sample_events(self.run_id):
            ev = stored.event
            assert isinstance(ev, SampleEvaluated)
            self._done[(ev.task_id, ev.index)] = ev.result()
        # One query for every pending sample's cache entry instead of one per sample.
        self._cached: dict[tuple[str, int], SampleResult] = {}
        self.cache_hits = 0
        if use_cache:
            context = context_hash(started)
            keys = {
                s.key: cache_key(context, fingerprints[s.task_id], s.completion_hash)
                for s in samples
                if s.key not in self._done
            }
            found = store.cache_lookup(set(keys.values()))
            self._cached = {k: found[key] for k, key in keys.items() if key in found}

    @property
    def cache_hits_pending(self) -> int:
        """Samples without a verdict in this run that the cache can answer."""
        return len(self._cached)

    def done(self) -> dict[tuple[str, int], SampleResult]:
        with self._lock:
            return dict(self._done)

    def record(self, result: SampleResult) -> None:
        sample = self._samples.get(result.key)
        event = SampleEvaluated.from_result(
            self.run_id,
            result,
            problem_hash=self._problem_hash.get(result.task_id, ""),
            line=sample.line if sample else 0,
            record=sample.record if sample else None,
        )
        self._writer.append([event])  # durable before the engine counts the sample done
        with self._lock:
            self._done[result.key] = result

    def lookup(self, sample: Sample) -> SampleResult | None:
        hit = self._cached.get(sample.key)
        if hit is not None:
            self.cache_hits += 1
        return hit
