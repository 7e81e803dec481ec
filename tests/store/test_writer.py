"""The single writer: many threads, group commits, nothing lost, failures isolated."""

from __future__ import annotations

import threading

import pytest

from tests.store.conftest import started, verdict
from vibes_eval.store.base import StoreConflict
from vibes_eval.store.sql import SqlStore
from vibes_eval.store.writer import GroupWriter, WriterClosed


def test_parallel_appends_are_grouped_and_all_durable(store: SqlStore) -> None:
    threads, per_thread = 8, 60
    store.append([started("r", n_samples=threads * per_thread)])
    with GroupWriter(store) as writer:

        def work(t: int) -> None:
            for i in range(per_thread):
                writer.append([verdict("r", f"T/{t}", i, i % 3 == 0)])

        pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
        assert writer.appended == threads * per_thread
        assert writer.commits < threads * per_thread  # appends waiting together commit once
    info = store.run("r")
    assert info.n_done == threads * per_thread
    assert info.n_passed == threads * sum(1 for i in range(per_thread) if i % 3 == 0)
    assert len(store.samples("r")) == threads * per_thread


def test_a_failing_submission_does_not_fail_its_neighbours(store: SqlStore) -> None:
    store.append([started("r"), verdict("r", "T/0", 0, True)])
    writer = GroupWriter(store)
    # Hold the store so that the duplicate and its neighbour queue up into one batch.
    with store._append_lock:
        good1 = writer.submit([verdict("r", "T/1", 0, True)])
        dup = writer.submit([verdict("r", "T/0", 0, False)])
        good2 = writer.submit([verdict("r", "T/2", 0, True)])
    assert len(good1.result()) == 1 and len(good2.result()) == 1
    with pytest.raises(StoreConflict):
        dup.result()
    writer.close()
    assert writer.commits == 2  # the failed batch was retried submission by submission
    assert store.run("r").n_done == 3
    with pytest.raises(WriterClosed):
        writer.submit([verdict("r", "T/3", 0, True)])
