"""The store against each backend: appends, projections, invariants, rebuild."""

from __future__ import annotations

import pytest

from tests.store.conftest import fill_store, snapshot, started, verdict
from vibes_eval.core.types import Reason
from vibes_eval.store import schema
from vibes_eval.store.base import StoreConflict, UnknownRun
from vibes_eval.store.cache import cache_key, context_hash
from vibes_eval.store.events import RunCompleted
from vibes_eval.store.sql import SqlStore, open_store
from vibes_eval.store.urls import resolve


def test_appends_are_read_back_in_order_with_projections(store: SqlStore) -> None:
    fill_store(store)
    seqs = [e.seq for e in store.events()]
    assert seqs == sorted(seqs) and len(seqs) == 11
    assert [e.event.type for e in store.events("b")] == [
        "run_started", "sample_evaluated", "run_interrupted", "run_resumed", "sample_evaluated",
    ]  # fmt: skip
    runs = {r.run_id: r for r in store.runs()}
    assert runs["a"].status == "completed" and runs["a"].metrics == {"pass@1": 0.5}
    assert (runs["a"].n_done, runs["a"].n_passed, runs["a"].labels) == (4, 2, {"model": "m"})
    assert runs["b"].status == "running" and runs["b"].finished_at is None
    rows = store.samples("a")
    assert [(r.task_id, r.index, r.passed, r.reason) for r in rows] == [
        ("T/0", 0, True, "passed"),
        ("T/1", 0, False, "compile_error"),
        ("T/0", 1, False, "failed"),
        ("T/1", 1, True, "passed"),
    ]  # fmt: skip  (sample-file order: line, then task)
    assert store.task_counts(["a", "b"]) == {
        "a": {"T/0": (2, 1), "T/1": (2, 1)},
        "b": {"T/0": (1, 1), "T/1": (1, 0)},
    }
    info = store.run("a")
    assert info.started is not None and info.started.ks == [1, 2]


def test_the_cache_holds_fresh_verdicts_only(store: SqlStore) -> None:
    fill_store(store)
    ctx = context_hash(started("a"))
    assert ctx == context_hash(started("b", labels={"model": "n"}))  # labels do not judge
    keys = {(t, i): cache_key(ctx, "h-" + t, f"c-{t}-{i}") for t in ("T/0", "T/1") for i in (0, 1)}
    found = store.cache_lookup(keys.values())
    assert set(found) == set(keys.values())  # b's cached hit and infra error added nothing
    assert found[keys[("T/1", 0)]].reason == Reason.COMPILE_ERROR
    assert found[keys[("T/1", 0)]].detail == "E0308"
    # Other limits are another context: no hit.
    other = context_hash(started("c", config={"limits": {"timeout_s": 9.0}}))
    assert not store.cache_lookup([cache_key(other, "h-T/0", "c-T/0-0")])


def test_a_second_verdict_for_a_sample_is_refused_whole(store: SqlStore) -> None:
    store.append([started("a"), verdict("a", "T/0", 0, True)])
    before = snapshot(store)
    with pytest.raises(StoreConflict, match="already has a verdict"):
        store.append([verdict("a", "T/1", 0, True), verdict("a", "T/0", 0, False)])
    assert snapshot(store) == before
    assert len(list(store.events())) == 2


def test_run_ids_are_unique_and_events_need_a_started_run(store: SqlStore) -> None:
    store.append([started("a")])
    with pytest.raises(StoreConflict, match="already taken"):
        store.append([started("a")])
    with pytest.raises(StoreConflict, match="never started"):
        store.append([verdict("zz", "T/0", 0, True)])
    with pytest.raises(StoreConflict, match="never started"):
        store.append([RunCompleted(run_id="zz", metrics={}, n_samples=0, n_passed=0)])
    assert len(list(store.events())) == 1


def test_rebuild_reproduces_the_projections_exactly(store: SqlStore) -> None:
    fill_store(store)
    before = snapshot(store)
    assert before["vibes_samples"] and before["vibes_cache"]
    counts = store.rebuild()
    assert counts == {"vibes_runs": 2, "vibes_samples": 6, "vibes_cache": 4, "vibes_events": 11}
    assert snapshot(store) == before
    # And from nothing: wipe the projections by hand, rebuild again.
    with store.engine.begin() as conn:
        for table in schema.PROJECTIONS:
            conn.execute(table.delete())
    store.rebuild()
    assert snapshot(store) == before


def test_unknown_run_and_reopening(store_spec: str, store: SqlStore) -> None:
    fill_store(store)
    with pytest.raises(UnknownRun, match="unknown run id 'nope'"):
        store.run("nope")
    store.close()
    with open_store(resolve(store_spec), create=False) as again:
        assert {r.run_id for r in again.runs()} == {"a", "b"}
