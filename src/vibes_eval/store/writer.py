"""One writer thread in front of the store: worker threads hand it events and wait; it
commits whatever has queued up in one transaction (group commit), so parallel workers never
contend for the database and a sample counts as done only once its event is durable."""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from concurrent.futures import Future

from vibes_eval.store.base import EventStore, StoreError
from vibes_eval.store.events import Event

MAX_BATCH = 1000  # events per transaction


class WriterClosed(StoreError):
    """An append after ``close``."""


class GroupWriter:
    def __init__(self, store: EventStore, *, max_batch: int = MAX_BATCH) -> None:
        self.store = store
        self.max_batch = max_batch
        self.commits = 0  # transactions so far, for tests and benchmarks
        self.appended = 0
        self._queue: queue.SimpleQueue[tuple[list[Event], Future[list[int]]] | None] = (
            queue.SimpleQueue()
        )
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="vibes-store-writer", daemon=True)
        self._thread.start()

    def submit(self, events: Sequence[Event]) -> Future[list[int]]:
        """Queue ``events`` (committed together); the future gives their seqs."""
        fut: Future[list[int]] = Future()
        with self._lock:
            if self._closed:
                raise WriterClosed("the store writer is closed")
            self._queue.put((list(events), fut))
        return fut

    def append(self, events: Sequence[Event]) -> list[int]:
        """Block until ``events`` are committed.

        Raises:
            StoreError (StoreConflict, StoreUnavailable...): the commit failed.
        """
        return self.submit(events).result()

    def close(self) -> None:
        """Commit what is queued, then stop the thread. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(None)
        self._thread.join()

    def __enter__(self) -> GroupWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            size = len(item[0])
            stop = False
            # Everything that queued while the last commit ran goes into this one.
            while size < self.max_batch:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
                size += len(more[0])
            self._commit(batch)
            if stop:
                return

    def _commit(self, batch: list[tuple[list[Event], Future[list[int]]]]) -> None:
        try:
            seqs = self.store.append([ev for events, _ in batch for ev in events])
        except BaseException as exc:
            if len(batch) == 1:
                batch[0][1].set_exception(exc)
                return
            # One bad submission must not fail its neighbours: retry them one by one.
            for item in batch:
                self._commit([item])
            return
        self.commits += 1
        self.appended += len(seqs)
        pos = 0
        for events, fut in batch:
            fut.set_result(seqs[pos : pos + len(events)])
            pos += len(events)
