"""Values computed from a run's verdicts, kept for as long as the run does not change.

A run's state is its last event's seq: a finished run's summary is computed once. While a
run is evaluated its seq moves on every verdict, so a page is served the last value at
once and a fresh one is computed in the background (at most one at a time per key, and not
more often than every few times its own cost), which keeps a 100,000-sample run that is
still running from costing a full recomputation per request."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

MIN_AGE_S = 2.0  # a stale value is recomputed at most this often...
COST_FACTOR = 5.0  # ...and at most every COST_FACTOR times what computing it took


@dataclass
class Entry(Generic[T]):
    version: Hashable
    value: T
    at: float  # monotonic, when computed
    cost: float  # seconds it took


class Memo(Generic[T]):
    """``get(key, version, compute)``: the value for ``version``, computing it at most
    once however many requests ask at the same time."""

    def __init__(self, executor: ThreadPoolExecutor, size: int = 256) -> None:
        self._executor = executor
        self._size = size
        self._entries: OrderedDict[Hashable, Entry[T]] = OrderedDict()
        self._locks: dict[Hashable, threading.Lock] = {}
        self._pending: dict[Hashable, Future[Any]] = {}
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
        stale one that will not do), ``wait`` computes it here, else it is scheduled and
        (None, False) comes back.

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
            self.schedule(key, version, compute)
            return None, False
        return self._compute(key, version, compute), True

    def schedule(self, key: Hashable, version: Hashable, compute: Callable[[], T]) -> None:
        with self._guard:
            if key in self._pending:
                return
            future = self._executor.submit(self._compute, key, version, compute)
            self._pending[key] = future

        def done(_f: Future[Any]) -> None:
            with self._guard:
                self._pending.pop(key, None)

        future.add_done_callback(done)

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
