"""Big runs are summarized and compared in a child process.

Scoring 100,000 verdicts is a second or more of pure Python; in the server's own process it
would hold the interpreter lock and every page would wait behind it (the first views after
start, and every refresh of a big run that is still running). The child opens the store
read-only itself, keeps the verdict rows of the last runs it read (so comparing runs just
summarized reads nothing again), and hands back only the small results."""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from vibes_eval.core import registry
from vibes_eval.core.registry import Scoring, scoring_for
from vibes_eval.runs.compare import compare
from vibes_eval.store.base import EventStore, RunInfo, ScoredRow
from vibes_eval.web.summary import RunSummary, summarize

T = TypeVar("T")
ROWS_KEPT = 250_000  # verdict rows the child keeps in memory (about 30 MB)


class Rows:
    """The verdict rows of the last runs read, up to ``limit`` rows in all."""

    def __init__(self, limit: int = ROWS_KEPT) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, tuple[Hashable, list[ScoredRow]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, store: EventStore, info: RunInfo) -> list[ScoredRow]:
        version = info.extra.get("last_seq", info.updated_at)
        with self._lock:
            kept = self._kept.get(info.run_id)
            if kept is not None and kept[0] == version:
                self._kept.move_to_end(info.run_id)
                return kept[1]
        rows = store.scored(info.run_id)
        with self._lock:
            self._kept[info.run_id] = (version, rows)
            self._kept.move_to_end(info.run_id)
            total = sum(len(r) for _, r in self._kept.values())
            while total > self.limit and len(self._kept) > 1:
                _, (_, dropped) = self._kept.popitem(last=False)
                total -= len(dropped)
        return rows


def run_summary(store: EventStore, rows: Rows, run_id: str, scoring: Scoring) -> RunSummary:
    info = store.run(run_id)
    return summarize(run_id, info.extra.get("last_seq"), rows.get(store, info), scoring)


def run_compare(
    store: EventStore, rows: Rows, run_a: str, run_b: str, scoring: Scoring
) -> dict[str, Any]:
    """``runs.compare.compare`` of two runs, as a dict; {"error": ...} when they share
    no task."""
    a, b = store.run(run_a), store.run(run_b)
    try:
        result = compare(
            rows.get(store, a), rows.get(store, b), scoring.metrics, solved=scoring.solved
        )
    except ValueError as exc:
        return {"error": str(exc)}
    return result.as_dict()


# -- the child's side ---------------------------------------------------------------------

_child: dict[str, Any] = {}


def _init(store_spec: str | None, benchmarks: dict[str, str]) -> None:
    from vibes_eval.store.sql import open_store
    from vibes_eval.store.urls import resolve

    # Ctrl-C in the terminal reaches the whole process group: the server stops the child.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    registry.BENCHMARKS.update(benchmarks)  # what the server knows, the child knows
    _child["store"] = open_store(resolve(store_spec), create=False, read_only=True)
    _child["rows"] = Rows()


def _scoring(run_id: str, ks: list[int] | None = None) -> Scoring:
    info = _child["store"].run(run_id)
    assert info.started is not None
    return scoring_for(info.benchmark, info.started.config, ks or info.started.ks)


def _summary(run_id: str) -> RunSummary:
    return run_summary(_child["store"], _child["rows"], run_id, _scoring(run_id))


def _compare(run_a: str, run_b: str, ks: list[int]) -> dict[str, Any]:
    return run_compare(_child["store"], _child["rows"], run_a, run_b, _scoring(run_b, ks))


# -- the server's side --------------------------------------------------------------------


class WorkerClosed(RuntimeError):
    """Work asked of a worker that was closed (the server is stopping)."""


class Worker:
    """One child process (spawned, not forked: the server has threads), started on first
    use and again if it dies."""

    def __init__(self, store_spec: str | None) -> None:
        self.store_spec = store_spec
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _get_pool(self) -> ProcessPoolExecutor:
        """Raises: WorkerClosed."""
        with self._lock:
            if self._closed:
                raise WorkerClosed("the server is stopping")
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_init,
                    initargs=(self.store_spec, dict(registry.BENCHMARKS)),
                )
            return self._pool

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """Raises: whatever ``fn`` raises in the child; BrokenProcessPool twice in a row;
        WorkerClosed."""
        for attempt in (1, 2):
            pool = self._get_pool()
            try:
                return pool.submit(fn, *args).result()
            except (BrokenProcessPool, RuntimeError) as exc:
                if self._closed:
                    raise WorkerClosed("the server is stopping") from None
                if not isinstance(exc, BrokenProcessPool):
                    raise
                with self._lock:
                    if self._pool is pool:
                        self._pool = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def summary(self, run_id: str) -> RunSummary:
        return self._call(_summary, run_id)

    def compare(self, run_a: str, run_b: str, ks: list[int]) -> dict[str, Any]:
        return self._call(_compare, run_a, run_b, ks)

    def close(self) -> None:
        """Stop the child now, even in the middle of a computation nobody waits for."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._closed = True
        if pool is None:
            return
        # The executor has no "stop now": its processes are terminated, then it is shut.
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
