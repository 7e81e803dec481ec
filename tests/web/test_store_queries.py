"""The store's read queries for the web pages, on both backends: pages of verdicts with
filters and orders, counts by outcome, one sample's event, light rows for metrics, and a
read-only opening that cannot write."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.store.conftest import fill_store, snapshot, started, verdict
from vibes_eval.core.types import Reason
from vibes_eval.store.base import EventStore, ReadOnlyStore, StoreMissing
from vibes_eval.store.events import RunCompleted
from vibes_eval.store.sql import SqlStore, open_store
from vibes_eval.store.urls import resolve


def test_sample_page_filters_orders_and_counts(store: SqlStore) -> None:
    fill_store(store)
    page = store.sample_page("a")
    assert page.total == 4
    assert [(r.task_id, r.index) for r in page.rows] == [
        ("T/0", 0),
        ("T/0", 1),
        ("T/1", 0),
        ("T/1", 1),
    ]
    assert store.sample_page("a", passed=False).total == 2
    failed = store.sample_page("a", reason=Reason.COMPILE_ERROR)
    assert [(r.task_id, r.detail) for r in failed.rows] == [("T/1", "E0308")]
    assert store.sample_page("a", task_id="T/1", passed=True).total == 1
    # wall_s is compile_s + run_s: index 1 is the slower of each task.
    slow = store.sample_page("a", order="slowest", limit=2)
    assert slow.total == 4 and [r.index for r in slow.rows] == [1, 1]
    assert slow.rows[0].wall_s >= slow.rows[1].wall_s
    fast = store.sample_page("a", order="fastest", offset=1, limit=1)
    assert len(fast.rows) == 1 and fast.rows[0].index == 0
    assert store.sample_page("nope").total == 0
    with pytest.raises(ValueError):
        store.sample_page("a", order="random")  # type: ignore[arg-type]


def test_outcome_counts_and_scored_rows(store: SqlStore) -> None:
    fill_store(store)
    assert store.outcome_counts("a") == {
        ("passed", True): 2,
        ("failed", False): 1,
        (Reason.COMPILE_ERROR.value, False): 1,
    }
    rows = store.scored("a")
    assert sorted((r.task_id, r.index, r.passed, r.reason) for r in rows) == [
        ("T/0", 0, True, "passed"),
        ("T/0", 1, False, "failed"),
        ("T/1", 0, False, "compile_error"),
        ("T/1", 1, True, "passed"),
    ]
    assert all(r.measurements["wall_s"] == pytest.approx(r.wall_s) for r in rows)


def test_sample_event_follows_the_current_verdict(store: SqlStore) -> None:
    fill_store(store)  # run b's T/1 #0 is an infra error...
    ev = store.sample_event("b", "T/1", 0)
    assert ev is not None and ev.result.reason == Reason.INFRA
    store.append([verdict("b", "T/1", 0, True)])  # ...that a resume supersedes
    ev = store.sample_event("b", "T/1", 0)
    assert ev is not None and ev.result.passed and ev.record["completion"] == "code 0"
    assert store.sample_event("b", "T/9", 0) is None
    assert store.sample_event("nope", "T/1", 0) is None


def test_the_generic_defaults_agree_with_the_sql_queries(store: SqlStore) -> None:
    """A backend that only implements the abstract methods gets the same answers."""
    fill_store(store)
    generic = EventStore
    for kw in ({}, {"passed": False}, {"order": "slowest", "limit": 3}, {"task_id": "T/0"}):
        ours, theirs = store.sample_page("a", **kw), generic.sample_page(store, "a", **kw)
        assert [(r.task_id, r.index) for r in ours.rows] == [
            (r.task_id, r.index) for r in theirs.rows
        ]
        assert ours.total == theirs.total
    assert generic.outcome_counts(store, "a") == store.outcome_counts("a")
    ev = generic.sample_event(store, "a", "T/1", 0)
    assert ev is not None and ev == store.sample_event("a", "T/1", 0)
    key = lambda r: (r.task_id, r.index)  # noqa: E731
    assert [vars_of(r) for r in sorted(generic.scored(store, "a"), key=key)] == [
        vars_of(r) for r in sorted(store.scored("a"), key=key)
    ]


def vars_of(row: object) -> tuple[object, ...]:
    return tuple(getattr(row, k) for k in ("task_id", "index", "passed", "reason", "measurements"))


def test_last_seq_moves_with_each_event(store: SqlStore) -> None:
    store.append([started("r")])
    first = store.run("r").extra["last_seq"]
    store.append([verdict("r", "T/0", 0, True)])
    second = store.run("r").extra["last_seq"]
    assert second > first
    assert {i.run_id: i.extra["last_seq"] for i in store.runs()} == {"r": second}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_read_only_store_cannot_write(store_spec: str) -> None:
    with open_store(resolve(store_spec)) as st:
        fill_store(st)
        before = snapshot(st)
    path = Path(store_spec) if "://" not in store_spec else None
    digest = _digest(path) if path else None
    ro = open_store(resolve(store_spec), read_only=True)
    try:
        assert ro.read_only and ro.sample_page("a").total == 4
        with pytest.raises(ReadOnlyStore):
            ro.append([RunCompleted(run_id="b", metrics={}, n_samples=2, n_passed=1)])
        with pytest.raises(ReadOnlyStore):
            ro.rebuild()
        # Even past the API, the connection refuses to write.
        from sqlalchemy import text
        from sqlalchemy.exc import DBAPIError

        with pytest.raises(DBAPIError), ro.engine.begin() as conn:
            conn.execute(text("delete from vibes_samples"))
        assert snapshot(ro) == before
    finally:
        ro.close()
    if path is not None:
        assert _digest(path) == digest


def test_read_only_opening_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    with pytest.raises(StoreMissing):
        open_store(resolve(str(missing)), read_only=True)
    assert not missing.exists()
    odd = tmp_path / "a dir#1" / "s?x.sqlite"  # characters a URL parser would cut at
    odd.parent.mkdir()
    with open_store(resolve(str(odd))) as st:
        fill_store(st)
    with open_store(resolve(str(odd)), read_only=True) as ro:
        assert ro.sample_page("a").total == 4
    assert sorted(
        p.name for p in odd.parent.iterdir() if not p.name.endswith(("-wal", "-shm"))
    ) == ["s?x.sqlite"]


def test_scored_rows_of_interleaved_runs(store: SqlStore) -> None:
    """Runs recorded at once: their rows alternate in the table. A SQLite run's rows are
    read as one stretch of the table when they are mostly its own, by index otherwise;
    every run reads back whole either way."""
    store.append([started("x"), started("y"), started("z")])
    store.append([verdict("x", f"A/{i}", 0, True) for i in range(5)])
    for i in range(20):  # y and z alternate: each is half of its stretch
        store.append([verdict("y", f"T/{i}", 0, i % 2 == 0), verdict("z", f"T/{i}", 0, True)])
    store.append([verdict("x", f"B/{i}", 0, False) for i in range(5)])  # x: 10 rows of 50
    for run_id, n, passed in (("x", 10, 5), ("y", 20, 10), ("z", 20, 20)):
        rows = store.scored(run_id)
        assert len(rows) == n and sum(r.passed for r in rows) == passed
        assert len({(r.task_id, r.index) for r in rows}) == n
    if store.target.sqlite_path is not None:
        assert store._sqlite_span("x") is None  # by index
        assert store._sqlite_span("y") is not None  # as a stretch


def test_uncounted_pages(store: SqlStore) -> None:
    fill_store(store)
    page = store.sample_page("a", passed=False, count=False)
    assert page.total == -1 and len(page.rows) == 2
    assert EventStore.sample_page(store, "a", count=False).total == -1
