"""The ``EventStore`` interface: an append-only event log plus the projections derived from
it, and the errors every backend raises (all ``UserError``: one line for the user)."""

from __future__ import annotations

import abc
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from vibes_eval.core.errors import UserError
from vibes_eval.core.types import SampleResult
from vibes_eval.store.events import Event, RunStarted


class StoreError(UserError):
    """Anything wrong with the store; the CLI prints it on one line."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or opened (server down, bad URL, unreadable file)."""


class StoreMissing(StoreError):
    """No store exists there yet, and opening was asked not to create one."""


class ForeignStore(StoreError):
    """The file or database is not a vibes-eval store, is corrupt, or is from a newer
    version. Nothing in it was changed."""


class UnknownRun(StoreError):
    """No run with that id in this store."""


class StoreConflict(StoreError):
    """An append that would break an invariant: a second verdict for one sample, a run id
    that is already taken, an event for a run that never started."""


@dataclass(frozen=True)
class StoredEvent:
    seq: int  # position in the log; strictly increasing in commit order
    event: Event


@dataclass
class RunInfo:
    """One row of the runs projection."""

    run_id: str
    benchmark: str
    status: str  # running | completed | interrupted, as recorded (see ``effective_status``)
    labels: dict[str, str]
    started_at: str
    updated_at: str
    finished_at: str | None
    n_samples: int
    n_done: int
    n_passed: int
    metrics: dict[str, float] | None
    runner: str
    host: str
    pid: int
    proc_start: str
    started: RunStarted | None = None  # filled by ``EventStore.run``
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class SampleRow:
    """One row of the samples projection (stdout/stderr stay in the event)."""

    task_id: str
    index: int
    line: int
    passed: bool
    reason: str
    detail: str
    wall_s: float
    measurements: dict[str, float]
    cached: bool
    seq: int


class EventStore(abc.ABC):
    """Append-only events and their projections (runs, samples, result cache).

    Safe to use from several threads; ``append`` calls are serialized by the backend, and
    a ``writer.GroupWriter`` in front of it batches appends from worker threads.
    """

    url: str  # for messages, password hidden

    @abc.abstractmethod
    def append(self, events: Sequence[Event]) -> list[int]:
        """Append ``events`` and update the projections in one transaction; when this
        returns the events are durable. Returns their sequence numbers.

        Raises:
            StoreConflict: a sample already has a verdict in its run, a run id is taken, or
                an event names a run that never started; nothing of the batch is written.
            StoreUnavailable: the backend failed (disk full, connection lost).
        """

    @abc.abstractmethod
    def events(self, run_id: str | None = None) -> Iterator[StoredEvent]:
        """Events in commit order, all or one run's.

        Raises:
            ForeignStore: an event this version cannot decode (newer schema, damage).
            StoreUnavailable: the backend failed.
        """

    @abc.abstractmethod
    def runs(self) -> list[RunInfo]:
        """Every run, newest first.

        Raises:
            StoreUnavailable: the backend failed.
        """

    @abc.abstractmethod
    def run(self, run_id: str) -> RunInfo:
        """One run with its ``RunStarted`` event.

        Raises:
            UnknownRun: no such run.
            StoreUnavailable: the backend failed.
        """

    @abc.abstractmethod
    def samples(self, run_id: str) -> list[SampleRow]:
        """The run's verdicts, in sample-file order.

        Raises:
            StoreUnavailable: the backend failed.
        """

    @abc.abstractmethod
    def sample_events(self, run_id: str) -> Iterator[StoredEvent]:
        """The run's ``SampleEvaluated`` events (full results, input records), by seq.

        Raises:
            ForeignStore, StoreUnavailable: as ``events``.
        """

    @abc.abstractmethod
    def task_counts(self, run_ids: Collection[str]) -> dict[str, dict[str, tuple[int, int]]]:
        """{run_id: {task_id: (samples, passed)}} from the samples projection.

        Raises:
            StoreUnavailable: the backend failed.
        """

    @abc.abstractmethod
    def cache_lookup(self, keys: Collection[str]) -> dict[str, SampleResult]:
        """Cached verdicts for the given cache keys (those present).

        Raises:
            StoreUnavailable: the backend failed.
        """

    @abc.abstractmethod
    def rebuild(self) -> dict[str, int]:
        """Drop the projections and derive them again from the events alone, in one
        transaction. Returns row counts per projection.

        Raises:
            ForeignStore: an event cannot be decoded (nothing is changed).
            StoreConflict: the events contradict each other (nothing is changed).
            StoreUnavailable: the backend failed.
        """

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections. Idempotent."""

    def __enter__(self) -> EventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
