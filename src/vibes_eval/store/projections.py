"""Derive the projection tables from events. The live path (every append) and ``rebuild``
both go through ``apply``, which is why a rebuild reproduces the projections exactly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, select, update
from sqlalchemy.dialects import postgresql, sqlite

from vibes_eval.core.types import Reason
from vibes_eval.store import schema
from vibes_eval.store.base import StoreConflict, StoredEvent
from vibes_eval.store.cache import Contexts, cache_key, cacheable
from vibes_eval.store.events import (
    AttemptEvaluated,
    RunCompleted,
    RunInterrupted,
    RunResumed,
    RunStarted,
    SampleEvaluated,
)


def apply(conn: Connection, batch: Sequence[StoredEvent], contexts: dict[str, Contexts]) -> None:
    """Update the projections for ``batch`` (in seq order) inside the caller's transaction.

    ``contexts`` memoizes each run's cache context (immutable once the run started).

    Raises:
        StoreConflict: an event for a run that never started.
    """
    i = 0
    while i < len(batch):
        # Consecutive verdicts go in one executemany: the common case by far.
        j = i
        while j < len(batch) and isinstance(batch[j].event, SampleEvaluated):
            j += 1
        if j > i:
            _samples(conn, batch[i:j], contexts)
            i = j
            continue
        _run_event(conn, batch[i], contexts)
        i += 1


def _run_event(conn: Connection, stored: StoredEvent, contexts: dict[str, Contexts]) -> None:
    ev, seq = stored.event, stored.seq
    runs = schema.runs
    if isinstance(ev, RunStarted):
        context = Contexts.of(ev)
        conn.execute(
            runs.insert().values(
                run_id=ev.run_id,
                benchmark=ev.benchmark,
                status="running",
                labels=ev.labels,
                started_at=ev.at,
                updated_at=ev.at,
                finished_at=None,
                n_samples=ev.n_samples,
                n_done=0,
                n_passed=0,
                metrics=None,
                runner=ev.runner,
                host=ev.host,
                pid=ev.pid,
                proc_start=ev.proc_start,
                cache_context=context.identity,
                settings_context=context.settings,
                started_seq=seq,
                last_seq=seq,
            )
        )
        contexts[ev.run_id] = context
        return
    values: dict[str, Any] = {"updated_at": ev.at, "last_seq": seq}
    if isinstance(ev, RunResumed):
        values.update(
            status="running", finished_at=None, host=ev.host, pid=ev.pid, proc_start=ev.proc_start
        )
    elif isinstance(ev, RunCompleted):
        values.update(status="completed", finished_at=ev.at, metrics=ev.metrics)
    elif isinstance(ev, RunInterrupted):
        values.update(status="interrupted", finished_at=ev.at)
    result = conn.execute(update(runs).where(runs.c.run_id == ev.run_id).values(**values))
    if result.rowcount != 1:
        raise StoreConflict(f"event {ev.type} for run '{ev.run_id}', which never started")
    if isinstance(ev, AttemptEvaluated) and cacheable(ev):
        # An intermediate attempt's verdict is as good a cache entry as a final one.
        ckey = cache_key(_context(conn, ev.run_id, contexts), ev.problem_hash,
                         ev.result.completion_hash)  # fmt: skip
        _upsert_cache(conn, [{"key": ckey, "seq": seq, "run_id": ev.run_id,
                              "result": ev.result.model_dump_json()}])  # fmt: skip


def _context(conn: Connection, run_id: str, contexts: dict[str, Contexts]) -> Contexts:
    if run_id not in contexts:
        runs = schema.runs
        found = conn.execute(
            select(runs.c.cache_context, runs.c.settings_context).where(runs.c.run_id == run_id)
        ).one_or_none()
        if found is None:
            raise StoreConflict(f"a verdict for run '{run_id}', which never started")
        contexts[run_id] = Contexts(*found)
    return contexts[run_id]


def _samples(conn: Connection, batch: Sequence[StoredEvent], contexts: dict[str, Contexts]) -> None:
    rows: dict[tuple[str, str, int], dict[str, Any]] = {}
    cached: dict[str, dict[str, Any]] = {}
    per_run: dict[str, list[Any]] = {}  # run_id -> [done, passed, last at, last seq]
    for stored in batch:
        ev = stored.event
        assert isinstance(ev, SampleEvaluated)
        res = ev.result
        context = _context(conn, ev.run_id, contexts)
        key = (ev.run_id, res.task_id, res.index)
        if key in rows and rows[key]["reason"] != Reason.INFRA:
            raise StoreConflict(f"a sample of run '{ev.run_id}' already has a verdict")
        agg = per_run.setdefault(ev.run_id, [0, 0, ev.at, stored.seq])
        if key in rows:  # an infra error superseded within the batch
            agg[0] -= 1
            agg[1] -= int(rows[key]["passed"])
        rows[key] = _sample_row(ev, stored.seq)
        if cacheable(ev):
            ckey = cache_key(context.for_result(res), ev.problem_hash, res.completion_hash)
            # The last verdict in the batch wins, as it would one event at a time.
            cached[ckey] = {
                "key": ckey,
                "seq": stored.seq,
                "run_id": ev.run_id,
                "result": res.model_dump_json(),
            }
        agg[0] += 1
        agg[1] += int(res.passed)
        agg[2], agg[3] = ev.at, stored.seq
    _supersede_infra(conn, rows, per_run)
    conn.execute(schema.samples.insert(), list(rows.values()))
    if cached:
        _upsert_cache(conn, list(cached.values()))
    runs = schema.runs
    for run_id, (done, passed, at, seq) in per_run.items():
        conn.execute(
            update(runs)
            .where(runs.c.run_id == run_id)
            .values(
                n_done=runs.c.n_done + done,
                n_passed=runs.c.n_passed + passed,
                updated_at=at,
                last_seq=seq,
            )
        )


def _sample_row(ev: SampleEvaluated, seq: int) -> dict[str, Any]:
    res = ev.result
    return {
        "run_id": ev.run_id,
        "task_id": res.task_id,
        "idx": res.index,
        "line": ev.line,
        "problem_hash": ev.problem_hash,
        "completion_hash": res.completion_hash,
        "passed": res.passed,
        "reason": res.reason,
        "detail": res.detail,
        "wall_s": res.wall_s,
        "measurements": res.measurements,
        "cached": res.cached,
        "seq": seq,
    }


def _supersede_infra(
    conn: Connection,
    rows: dict[tuple[str, str, int], dict[str, Any]],
    per_run: dict[str, list[Any]],
) -> None:
    """Delete the stored infra-error rows that verdicts in this batch replace (a resumed
    run evaluates them again); any other stored verdict for one of these samples is a
    conflict, which the insert then reports."""
    t = schema.samples
    for run_id in per_run:
        tasks = {task for (r, task, _) in rows if r == run_id}
        found = conn.execute(
            select(t.c.task_id, t.c.idx, t.c.passed)
            .where(t.c.run_id == run_id, t.c.reason == Reason.INFRA.value)
            .where(t.c.task_id.in_(sorted(tasks)))
        ).all()
        stale = [(task, idx, passed) for task, idx, passed in found if (run_id, task, idx) in rows]
        for task, idx, passed in stale:
            conn.execute(
                t.delete().where(t.c.run_id == run_id, t.c.task_id == task, t.c.idx == idx)
            )
            per_run[run_id][0] -= 1
            per_run[run_id][1] -= int(passed)


def _upsert_cache(conn: Connection, rows: list[dict[str, Any]]) -> None:
    table = schema.cache
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    stmt = dialect.insert(table)
    stmt = stmt.on_conflict_do_update(
        index_elements=[table.c.key],
        set_={
            "seq": stmt.excluded.seq,
            "run_id": stmt.excluded.run_id,
            "result": stmt.excluded.result,
        },
        # The newest event wins whatever order concurrent runs commit in, as in a rebuild.
        where=table.c.seq < stmt.excluded.seq,
    )
    conn.execute(stmt, rows)
