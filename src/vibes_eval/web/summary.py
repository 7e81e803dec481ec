"""What the run page shows, computed once per state of a run from the samples projection:
the benchmark's declared metrics (``core.registry.scoring_for``, as `vibes eval results`),
per-task values and failures, and the curves the declared metrics call for.

Nothing here knows a benchmark. A pass@k curve is drawn when the benchmark declares
pass@k metrics; a speed curve (the share of tasks faster than p, KernelBench's fast_p as a
function of p) when it declares a geometric-mean metric, which is how speed ratios are
declared; metric names like ``fast_1.5`` are marked on it."""

from __future__ import annotations

import gc
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vibes_eval.core import metrics
from vibes_eval.core.registry import Scoring
from vibes_eval.core.types import Reason
from vibes_eval.runs.summary import group_rows, task_order
from vibes_eval.store.base import ScoredRow

PASS_AT = re.compile(r"pass@(\d+)")
FAST_P = re.compile(r"fast_?p?[@_]?(\d+(?:\.\d+)?)")
CURVE_KS = (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000, 2000, 5000, 10000)


@dataclass
class TaskSummary:
    task_id: str
    samples: int
    passed: int
    values: dict[str, float]  # the declared metrics' per-task values
    solved: bool | None
    failures: dict[str, int]  # reason -> samples, most frequent first
    outcomes: dict[tuple[str, bool], int] = field(default_factory=dict)  # (reason, passed)

    @property
    def rate(self) -> float:
        return self.passed / self.samples if self.samples else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "samples": self.samples,
            "passed": self.passed,
            "pass_rate": self.rate,
            "solved": self.solved,
            "metrics": self.values,
            "failures": self.failures,
        }


@dataclass
class Curve:
    kind: str  # "pass@k" | "speed"
    title: str
    x_label: str
    y_label: str
    points: list[tuple[float, float]]
    marks: list[tuple[float, float, str]]  # declared metrics on the curve
    log_x: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "title": self.title,
            "x": self.x_label,
            "y": self.y_label,
            "points": [list(p) for p in self.points],
            "marks": [{"x": x, "y": y, "metric": m} for x, y, m in self.marks],
        }


@dataclass
class RunSummary:
    run_id: str
    version: int  # the run's last event seq when computed
    samples: int
    headline: str
    values: dict[str, float]  # declared metrics, in declared order
    descriptions: dict[str, str]
    speed_metric: str | None  # the first geometric-mean metric
    tasks: list[TaskSummary]
    failures: dict[str, int]
    notes: list[str]
    curves: list[Curve]
    outcomes: dict[tuple[str, bool], int] = field(default_factory=dict)  # (reason, passed)
    groups: list[dict[str, Any]] = field(default_factory=list)  # as `vibes eval results`
    compute_s: float = 0.0
    computed_at: float = field(default_factory=time.time)
    # metric -> 95% bootstrap interval over tasks (core.metrics.bootstrap_ci)
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def pending(cls, run_id: str, headline: str) -> RunSummary:
        """A stand-in while the real one is computed."""
        return cls(run_id, None, 0, headline, {}, {}, None, [], {}, [], [])

    def task(self, task_id: str) -> TaskSummary | None:
        return next((t for t in self.tasks if t.task_id == task_id), None)

    def count(self, task: str | None, reason: str | None, passed: bool | None) -> int:
        """How many verdicts match these filters (as ``sample_page`` would count them)."""
        if task is not None:
            found = self.task(task)
            outcomes = found.outcomes if found is not None else {}
        else:
            outcomes = self.outcomes
        return sum(
            n
            for (r, p), n in outcomes.items()
            if (reason is None or r == reason) and (passed is None or p == passed)
        )


def summarize(run_id: str, version: Any, rows: Sequence[ScoredRow], scoring: Scoring) -> RunSummary:
    """Everything the run page shows but the slowest samples (queried live)."""
    enabled = gc.isenabled()
    gc.disable()  # many short-lived objects and no cycles: see store.sql._no_gc
    try:
        return _summarize(run_id, version, rows, scoring)
    finally:
        if enabled:
            gc.enable()


def _summarize(
    run_id: str, version: Any, rows: Sequence[ScoredRow], scoring: Scoring
) -> RunSummary:
    start = time.perf_counter()
    scores = metrics.score(scoring.metrics, rows) if rows else metrics.Scores()
    grouped = metrics.by_task(rows)
    tasks = [
        _task(t, rs, scores.per_task.get(t, {}), scoring)
        for t, rs in sorted(grouped.items(), key=lambda kv: task_order(kv[0]))
    ]
    declared = [m for m in scoring.metrics if m.name in scores.values]
    speed = next((m.name for m in declared if m.aggregate == "geomean"), None)
    notes = list(scores.notes)
    infra = sum(r.reason == Reason.INFRA for r in rows)
    if infra:
        notes.append(f"{infra} infra errors: `vibes eval resume {run_id}` evaluates them again")
    curves = [c for c in (_pass_curve(scoring, tasks), _speed_curve(speed, tasks, scores)) if c]
    return RunSummary(
        run_id=run_id,
        version=version,
        samples=len(rows),
        headline=scoring.headline,
        values={m.name: scores.values[m.name] for m in declared},
        intervals=dict(scores.intervals),
        descriptions={m.name: m.description for m in declared},
        speed_metric=speed,
        tasks=tasks,
        failures=metrics.reason_counts(r.reason for r in rows if not r.passed),
        notes=notes,
        curves=curves,
        outcomes=_outcomes(rows),
        groups=group_rows(scoring, list(rows)),
        compute_s=time.perf_counter() - start,
    )


def _task(
    task_id: str, rows: Sequence[ScoredRow], values: dict[str, float], scoring: Scoring
) -> TaskSummary:
    try:
        solved: bool | None = bool(scoring.solved(rows))
    except Exception:  # a benchmark's bug must not take the page down
        solved = None
    return TaskSummary(
        task_id=task_id,
        samples=len(rows),
        passed=sum(r.passed for r in rows),
        values=values,
        solved=solved,
        failures=metrics.reason_counts(r.reason for r in rows if not r.passed),
        outcomes=_outcomes(rows),
    )


def _outcomes(rows: Sequence[ScoredRow]) -> dict[tuple[str, bool], int]:
    counts: dict[tuple[str, bool], int] = {}
    for r in rows:
        counts[(r.reason, r.passed)] = counts.get((r.reason, r.passed), 0) + 1
    return counts


def _pass_curve(scoring: Scoring, tasks: list[TaskSummary]) -> Curve | None:
    """pass@k over k up to the fewest samples any task has, through the declared ks."""
    declared = {
        int(m.group(1)): d.name for d in scoring.metrics if (m := PASS_AT.fullmatch(d.name))
    }
    if not declared or not tasks:
        return None
    n_min = min(t.samples for t in tasks)
    ks = sorted({k for k in (*CURVE_KS, *declared) if k <= n_min})
    if len(ks) < 2:
        return None
    points = [
        (float(k), sum(metrics.pass_at_k(t.samples, t.passed, k) for t in tasks) / len(tasks))
        for k in ks
    ]
    at = dict(points)
    marks = [(float(k), at[float(k)], name) for k, name in sorted(declared.items()) if k <= n_min]
    return Curve("pass@k", "pass@k", "k (samples drawn)", "pass@k", points, marks, log_x=True)


def _speed_curve(
    speed: str | None, tasks: list[TaskSummary], scores: metrics.Scores
) -> Curve | None:
    """Share of tasks whose ``speed`` value exceeds p, for p over the observed range."""
    if speed is None:
        return None
    values = sorted(t.values[speed] for t in tasks if speed in t.values)
    if not values:
        return None
    top = max(2.0, max(values) * 1.1)
    steps = 60
    grid = [top * i / steps for i in range(steps + 1)]
    points = [(p, sum(v > p for v in values) / len(values)) for p in grid]
    marks = []
    for name, value in scores.values.items():
        m = FAST_P.fullmatch(name)
        if m and math.isfinite(value):
            marks.append((float(m.group(1)), value, name))
    return Curve(
        "speed",
        f"share of tasks with {speed} > p",
        "p",
        "share of tasks",
        points,
        marks,
        log_x=False,
    )
