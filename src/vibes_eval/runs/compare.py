"""Compare two runs task by task, over whatever metrics their benchmark declares.

* Each metric is an aggregate of per-task values, so its difference B - A gets a 95% paired
  bootstrap CI: resample the common tasks with replacement, the same draw for both runs.
* McNemar's exact test asks whether B solves tasks A misses more often than the reverse.
  What "solved" means is the benchmark's (``Benchmark.solved``; by default at least half
  its samples pass). Under H0 the discordant tasks split 50/50, so the two-sided p-value is
  an exact binomial tail, summed with integer arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from vibes_eval.core.benchmark import default_solved
from vibes_eval.core.metrics import (
    Metric,
    Scored,
    Scores,
    by_task,
    pass_rate,
    resample_aggregate,
    score,
)
from vibes_eval.runs.summary import task_order

RESAMPLES = 10_000
SEED = 0  # fixed: the same two runs always give the same interval


@dataclass
class MetricDiff:
    metric: str
    a: float
    b: float
    diff: float  # b - a
    ci_low: float
    ci_high: float


@dataclass
class McNemar:
    regressed: int  # solved by A, not by B
    improved: int  # solved by B, not by A
    p_value: float


@dataclass
class Flip:
    task_id: str
    a: float  # pass rate in A
    b: float


@dataclass
class Comparison:
    tasks: int  # compared: those with samples in both runs
    only_a: list[str]
    only_b: list[str]
    metrics: list[MetricDiff]
    mcnemar: McNemar
    improved: list[Flip]  # A did not solve, B did
    regressed: list[Flip]  # A solved, B did not
    # Every task whose pass rate moved, solved or not (a task from 0.25 to 0.00 is worse
    # though it was never "solved"): what a pass@k difference is made of.
    better: list[Flip] = field(default_factory=list)
    worse: list[Flip] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b and c discordant pairs:
    min(1, 2 * P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)  # int / int is correctly rounded even for huge n


def paired_bootstrap_ci(
    a: np.ndarray,
    b: np.ndarray,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    aggregate: str = "mean",
) -> tuple[float, float]:
    """95% percentile interval of agg(b) - agg(a) over tasks resampled with replacement
    (the same draw for both runs); ``aggregate`` is "mean" or "geomean" (over the positive
    values, as ``metrics.aggregate``)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    # Chunks keep memory flat for large task sets.
    step = max(1, 2_000_000 // a.size)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        idx = rng.integers(0, a.size, size=(stop - start, a.size))
        out[start:stop] = resample_aggregate(b[idx], aggregate) - resample_aggregate(
            a[idx], aggregate
        )
    low, high = np.percentile(out, [2.5, 97.5])
    return float(low), float(high)


def compare(
    a: Sequence[Scored],
    b: Sequence[Scored],
    metrics: Sequence[Metric],
    *,
    solved: Callable[[Sequence[Scored]], bool] = default_solved,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Comparison:
    """Compare two runs' verdicts over the tasks both have, metric by metric.

    Raises: ValueError when the runs have no task in common.
    """
    rows_a, rows_b = by_task(a), by_task(b)
    common = sorted(rows_a.keys() & rows_b.keys(), key=task_order)
    if not common:
        raise ValueError("the runs have no task in common")
    score_a = score(metrics, [r for t in common for r in rows_a[t]])
    score_b = score(metrics, [r for t in common for r in rows_b[t]])
    notes = list(dict.fromkeys(score_a.notes + score_b.notes))
    diffs = [
        _metric_diff(m, common, score_a, score_b, resamples, seed)
        for m in metrics
        if m.name in score_a.values and m.name in score_b.values
    ]
    rate_a = {t: pass_rate(rows_a[t]) for t in common}
    rate_b = {t: pass_rate(rows_b[t]) for t in common}
    solved_a = {t: solved(rows_a[t]) for t in common}
    solved_b = {t: solved(rows_b[t]) for t in common}
    improved = [Flip(t, rate_a[t], rate_b[t]) for t in common if solved_b[t] and not solved_a[t]]
    regressed = [Flip(t, rate_a[t], rate_b[t]) for t in common if solved_a[t] and not solved_b[t]]
    only_a = sorted(rows_a.keys() - rows_b.keys(), key=task_order)
    only_b = sorted(rows_b.keys() - rows_a.keys(), key=task_order)
    if only_a or only_b:
        notes.append(
            f"compared over the {len(common)} tasks both runs have "
            f"({len(only_a)} only in A, {len(only_b)} only in B)"
        )
    return Comparison(
        tasks=len(common),
        only_a=only_a,
        only_b=only_b,
        metrics=diffs,
        mcnemar=McNemar(
            len(regressed), len(improved), mcnemar_exact(len(regressed), len(improved))
        ),
        improved=improved,
        regressed=regressed,
        better=[Flip(t, rate_a[t], rate_b[t]) for t in common if rate_b[t] > rate_a[t]],
        worse=[Flip(t, rate_a[t], rate_b[t]) for t in common if rate_b[t] < rate_a[t]],
        notes=notes,
    )


def _metric_diff(
    metric: Metric, common: list[str], a: Scores, b: Scores, resamples: int, seed: int
) -> MetricDiff:
    """B - A of one metric with its CI, both over the tasks that have a value in both runs
    (a kernel task skipped for want of hardware in one run is left out of both sides)."""
    paired = [t for t in common if metric.name in a.per_task[t] and metric.name in b.per_task[t]]
    va = np.array([a.per_task[t][metric.name] for t in paired])
    vb = np.array([b.per_task[t][metric.name] for t in paired])
    low, high = paired_bootstrap_ci(
        va, vb, resamples=resamples, seed=seed, aggregate=metric.aggregate
    )
    value_a, value_b = metric.combine(list(va)), metric.combine(list(vb))
    return MetricDiff(metric.name, value_a, value_b, value_b - value_a, low, high)
