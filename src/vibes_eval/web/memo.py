"""Values computed from a run's verdicts, kept for as long as the run does not change.

A run's state is its last event's seq: a finished run's summary is computed once. While a
run is evaluated its seq moves on every verdict, so a page is served the last value at
once and a fresh one is computed in the background (at most one at a time per key, and not
more often than every few times its own cost), which keeps a 100,000-sample run that is
still running from costing a full recomputation per request.

Background work runs on one thread, in order, except that what a page is waiting for goes
before the warm-up of runs nobody asked for yet."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

MIN_AGE_S = 2.0  # a stale value is recomputed at most this often...
COST_FACTOR = 5.0  # ...and at most every COST_FACTOR times what computing it took
log = logging.getLogger("vibes_eval.web")


@dataclass
class Entry(Generic[T]):
    version: Hashable
    value: T
    at: float  # monotonic, when computed
    cost: float  # seconds it took


class Background:
    """One thread working through a queue of jobs; ``urgent`` ones go first."""

    def __init__(self) -> None:
        self._jobs: deque[Callable[[], Any]] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None

    def submit(self, job: Callable[[], Any], *, urgent: bool = False) -> None:
        with self._cond:
            if self._closed:
                return
            if urgent:
                self._jobs.appendleft(job)
            else:
                self._jobs.append(job)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="vibes-web-background", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._jobs and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                job = self._jobs.popleft()
            try:
                job()
            except Exception:  # logged; the page asking again retries
                if not self._closed:  # a stopping server's unfinished work is no error
                    log.exception("background computation failed")

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._jobs.clear()
            self._cond.notify_all()


class Memo(Generic[T]):
    """``get(key, version, compute)``: the value for ``version``, computing it at most
    once however many requests ask at the same time."""

    def __init__(self, background: Background, size: int = 256) -> None:
        self._background = background
        self._size = size
        self._entries: OrderedDict[Hashable, Entry[T]] = OrderedDict()
        self._locks: dict[Hashable, threading.Lock] = {}
        # key -> the latest (version, compute) asked for while queued
        self._queued: dict[Hashable, tuple[Hashable, Callable[[], T]]] = {}
        self._guard = threading.Lock()

    def peek(self, key: Hashable) -> Entry[T] | None:
        with self._guard:
            return self._entries.get(key)

    def get(
        self,
        key: Hashable,
        version: Hashable,
        compute: Callable[[], T],
        *,
        wait: bool = True,
        stale_ok: bool = True,
    ) -> tuple[T | None, bool]:
        """(value, fresh). With ``stale_ok``, a stale value comes back at once (``fresh``
        False) while a fresh one is computed in the background; with no value yet (or a
        stale one that will not do), ``wait`` computes it here, else it is queued first
        in line and (None, False) comes back.

        Raises: whatever ``compute`` raises, when computed here.
        """
        entry = self.peek(key)
        if entry is not None and entry.version == version:
            return entry.value, True
        if entry is not None and stale_ok:
            if time.monotonic() - entry.at >= max(MIN_AGE_S, COST_FACTOR * entry.cost):
                self.schedule(key, version, compute)
            return entry.value, False
        if not wait:
            self.schedule(key, version, compute, urgent=True)
            return None, False
        return self._compute(key, version, compute), True

    def schedule(
        self,
        key: Hashable,
        version: Hashable,
        compute: Callable[[], T],
        *,
        urgent: bool = False,
    ) -> None:
        """Compute in the background, unless it is queued already (an urgent request moves
        it to the front of the line)."""
        with self._guard:
            queued = key in self._queued
            self._queued[key] = (version, compute)
        if queued and not urgent:
            return

        def job() -> None:
            with self._guard:
                latest = self._queued.pop(key, None)
            if latest is not None:  # not done already by an earlier copy of this job
                self._compute(key, *latest)

        self._background.submit(job, urgent=urgent)

    def _compute(self, key: Hashable, version: Hashable, compute: Callable[[], T]) -> T:
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            entry = self.peek(key)
            if entry is not None and entry.version == version:
                return entry.value  # computed by whoever held the lock before us
            start = time.monotonic()
            value = compute()
            now = time.monotonic()
            with self._guard:
                self._entries[key] = Entry(version, value, now, now - start)
                self._entries.move_to_end(key)
                while len(self._entries) > self._size:
                    old, _ = self._entries.popitem(last=False)
                    self._locks.pop(old, None)
            return value
