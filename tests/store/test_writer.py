"""The single writer: many threads, group commits, nothing lost, failures isolated."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.store.conftest import snapshot, started, verdict
from vibes_eval.store.base import StoreConflict
from vibes_eval.store.sql import SqlStore, open_store
from vibes_eval.store.urls import resolve
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


def test_a_failing_submission_does_not_fail_its_neighbours(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three submissions committed as one group; one of them conflicts: the group fails
    and is retried submission by submission, so only the conflicting one fails."""
    store.append([started("r"), verdict("r", "T/0", 0, True)])
    calls: list[int] = []
    entered = threading.Event()
    real_append = store.append

    def append(events):  # type: ignore[no-untyped-def]
        calls.append(len(events))
        entered.set()
        return real_append(events)

    monkeypatch.setattr(store, "append", append)
    writer = GroupWriter(store)
    # The writer takes a first submission and waits for the store, which the test holds;
    # the next three queue up meanwhile and go out together.
    with store._append_lock:
        first = writer.submit([verdict("r", "T/9", 0, True)])
        assert entered.wait(10)
        good1 = writer.submit([verdict("r", "T/1", 0, True)])
        dup = writer.submit([verdict("r", "T/0", 0, False)])
        good2 = writer.submit([verdict("r", "T/2", 0, True)])
    assert len(first.result()) == len(good1.result()) == len(good2.result()) == 1
    with pytest.raises(StoreConflict):
        dup.result()
    writer.close()
    assert calls == [1, 3, 1, 1, 1]  # the group of three, then each of them alone
    assert writer.commits == 3  # the first, then good1 and good2 alone
    assert store.run("r").n_done == 4
    assert {(s.task_id, s.passed) for s in store.samples("r")} == {
        ("T/0", True),
        ("T/1", True),
        ("T/2", True),
        ("T/9", True),
    }  # the conflicting verdict did not replace the first one
    with pytest.raises(WriterClosed):
        writer.submit([verdict("r", "T/3", 0, True)])


def test_several_writers_at_once_lose_nothing(store_spec: str) -> None:
    """Several stores (each its own connections, as several `vibes` processes have) on one
    database append at once: every event is kept once with its own seq, a sample two of
    them record is kept once (the other gets StoreConflict), and the projections equal a
    rebuild from the events."""
    writers, per_writer = 4, 40
    stores = [open_store(resolve(store_spec)) for _ in range(writers)]
    try:
        stores[0].append([started(f"w{i}", n_samples=per_writer + 1) for i in range(writers)])
        barrier = threading.Barrier(writers)
        seqs: list[list[int]] = [[] for _ in range(writers)]
        contested: list[str] = []

        def work(i: int) -> None:
            with GroupWriter(stores[i]) as writer:
                barrier.wait()
                futures = [
                    writer.submit([verdict(f"w{i}", f"T/{j}", 0, j % 2 == 0)])
                    for j in range(per_writer)
                ]
                # Every writer records the same sample of run w0: one of them wins.
                try:
                    writer.append([verdict("w0", "X/0", 0, i % 2 == 0)])
                    contested.append("won")
                except StoreConflict:
                    contested.append("conflict")
                for fut in futures:
                    seqs[i].extend(fut.result())

        pool = [threading.Thread(target=work, args=(i,)) for i in range(writers)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
        assert sorted(contested) == ["conflict"] * (writers - 1) + ["won"]
        every = [s for part in seqs for s in part]
        assert len(every) == len(set(every)) == writers * per_writer
        st = stores[0]
        for i in range(writers):
            extra = 1 if i == 0 else 0
            assert st.run(f"w{i}").n_done == per_writer + extra
            events = [e.seq for e in st.events(f"w{i}")]
            assert events == sorted(events)
        before = snapshot(st)
        st.rebuild()
        assert snapshot(st) == before
    finally:
        for st in stores:
            st.close()


_WRITER = """
import sys
from tests.web import fakebench
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve
with open_store(resolve(sys.argv[1])) as st:
    fakebench.running_run(st, sys.argv[2], total=20, done=6)
    fakebench.add_verdicts(st, sys.argv[2], 6, 10)
"""


def test_a_read_only_reader_keeps_reading_while_others_write(tmp_path: Path) -> None:
    """What `vibes serve` meets: its read-only connections stay open while `vibes eval run`
    in other processes (and a writer in its own) append and close, rounds after rounds."""
    import subprocess
    import sys

    from sqlalchemy import text

    from tests.web import fakebench

    path = str(tmp_path / "s.sqlite")
    with open_store(resolve(path)) as st:
        fakebench.kernel_run(st, "k1", seed=1)
    reader = open_store(resolve(path), read_only=True)

    def count() -> int:
        with reader.engine.connect() as conn:
            return int(conn.execute(text("select count(*) from vibes_events")).scalar_one())

    try:
        seen = [count()]
        for i in range(3):
            subprocess.run([sys.executable, "-c", _WRITER, path, f"other{i}"], check=True,
                           cwd=ROOT, timeout=120)  # fmt: skip
            seen.append(count())
            with open_store(resolve(path)) as st:
                fakebench.running_run(st, f"here{i}", total=20, done=6)
            seen.append(count())
    finally:
        reader.close()
    assert seen == sorted(seen) and len(set(seen)) == len(seen), seen
