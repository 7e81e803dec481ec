"""The ``EventStore`` interface: an append-only event log plus the projections derived from
it, and the errors every backend raises (all ``UserError``: one line for the user)."""

from __future__ import annotations

import abc
import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from vibes_eval.core.errors import UserError
from vibes_eval.core.types import SampleResult
from vibes_eval.store.events import Event, RunStarted, SampleEvaluated


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


class ReadOnlyStore(StoreError):
    """A write to a store opened read-only."""


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


class ScoredRow:
    """What metrics read of one verdict (``core.metrics.Scored``), lighter than a
    ``SampleRow``: the measurements are kept as the stored JSON text and decoded the first
    time they are read, so metrics that never look at them (pass@k) never pay for it."""

    __slots__ = ("_measurements", "index", "passed", "reason", "task_id", "wall_s")

    def __init__(
        self,
        task_id: str,
        index: int,
        passed: bool,
        reason: str,
        wall_s: float,
        measurements: str | Mapping[str, float] | None,
    ) -> None:
        self.task_id = task_id
        self.index = index
        self.passed = passed
        self.reason = reason
        self.wall_s = wall_s
        self._measurements = measurements

    @property
    def measurements(self) -> dict[str, float]:
        m = self._measurements
        if not isinstance(m, dict):
            m = dict(json.loads(m) if isinstance(m, str) else (m or {}))
            self._measurements = m
        return m

    def __repr__(self) -> str:
        return f"ScoredRow({self.task_id!r}, {self.index}, {self.passed}, {self.reason!r})"


SampleOrder = Literal["task", "slowest", "fastest"]
SAMPLE_ORDERS: tuple[str, ...] = ("task", "slowest", "fastest")


@dataclass
class SamplePage:
    """One page of a run's verdicts and how many match the filter in all."""

    rows: list[SampleRow]
    total: int  # -1: not counted


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

    # Read queries for browsing a run without loading it whole. The defaults go through
    # ``samples``/``sample_events``; the SQL store answers each with one indexed query.

    def scored(self, run_id: str) -> list[ScoredRow]:
        """Every current verdict of the run, in no particular order, as ``ScoredRow``s.

        Raises:
            StoreUnavailable: the backend failed.
        """
        return [
            ScoredRow(r.task_id, r.index, r.passed, r.reason, r.wall_s, r.measurements)
            for r in self.samples(run_id)
        ]

    def sample_page(
        self,
        run_id: str,
        *,
        task_id: str | None = None,
        reason: str | None = None,
        passed: bool | None = None,
        order: SampleOrder = "task",
        offset: int = 0,
        limit: int = 50,
        count: bool = True,
    ) -> SamplePage:
        """The run's verdicts matching every filter given, ``limit`` of them from
        ``offset``, ordered by task id and index ("task"), or by ``wall_s`` ("slowest",
        "fastest"; ties by task id and index). ``total`` counts every match; without
        ``count`` it is -1 (counting a big run costs a scan of its rows).

        Raises:
            ValueError: an unknown order or a negative offset or limit.
            StoreUnavailable: the backend failed.
        """
        check_page(order, offset, limit)
        rows = [
            r
            for r in self.samples(run_id)
            if (task_id is None or r.task_id == task_id)
            and (reason is None or r.reason == reason)
            and (passed is None or r.passed == passed)
        ]
        rows.sort(key=lambda r: (r.task_id, r.index))
        if order != "task":
            rows.sort(key=lambda r: r.wall_s, reverse=order == "slowest")
        return SamplePage(rows[offset : offset + limit], len(rows) if count else -1)

    def outcome_counts(self, run_id: str) -> dict[tuple[str, bool], int]:
        """{(reason, passed): verdicts} over the run's current verdicts.

        Raises:
            StoreUnavailable: the backend failed.
        """
        counts: dict[tuple[str, bool], int] = {}
        for r in self.samples(run_id):
            counts[(r.reason, r.passed)] = counts.get((r.reason, r.passed), 0) + 1
        return counts

    def sample_event(self, run_id: str, task_id: str, index: int) -> SampleEvaluated | None:
        """The event of one sample's current verdict (with its full result and input
        record); None when the run has no verdict for it.

        Raises:
            ForeignStore, StoreUnavailable: as ``events``.
        """
        found = None
        for stored in self.sample_events(run_id):
            ev = stored.event
            if isinstance(ev, SampleEvaluated) and ev.result.key == (task_id, index):
                found = ev  # the last one: a retried infra error gives way to its successor
        return found

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


def check_page(order: str, offset: int, limit: int) -> None:
    """Raises: ValueError."""
    if order not in SAMPLE_ORDERS:
        raise ValueError(f"unknown order {order!r}; one of {', '.join(SAMPLE_ORDERS)}")
    if offset < 0 or limit < 0:
        raise ValueError("offset and limit must not be negative")
