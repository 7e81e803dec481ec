"""Compare two runs task by task.

* Each metric (pass@k) is a mean over tasks, so its difference B - A gets a 95% paired
  bootstrap CI: resample the common tasks with replacement, the same draw for both runs.
* McNemar's exact test asks whether B solves tasks A misses more often than the reverse.
  A task counts as solved when at least half its samples pass (with one sample per task,
  simply when it passes). Under H0 the discordant tasks split 50/50, so the two-sided
  p-value is an exact binomial tail, summed with integer arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from vibes_eval.core.metrics import pass_at_k
from vibes_eval.store.summary import task_order

RESAMPLES = 10_000
SEED = 0  # fixed: the same two runs always give the same interval
SOLVED = 0.5  # a task is solved when its pass@1 reaches this

Counts = Mapping[str, tuple[int, int]]  # task_id -> (samples, passed)


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
    a: float  # pass@1 in A
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
    a: np.ndarray, b: np.ndarray, *, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    """95% percentile interval of mean(b - a) over tasks resampled with replacement."""
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if diffs.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    # Chunks keep memory flat for large task sets.
    step = max(1, 2_000_000 // diffs.size)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        idx = rng.integers(0, diffs.size, size=(stop - start, diffs.size))
        means[start:stop] = diffs[idx].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def compare(
    a: Counts,
    b: Counts,
    ks: Sequence[int],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Comparison:
    """Raises: ValueError when the runs have no task in common."""
    common = sorted(a.keys() & b.keys(), key=task_order)
    if not common:
        raise ValueError("the runs have no task in common")
    notes: list[str] = []
    min_n = min(min(a[t][0] for t in common), min(b[t][0] for t in common))
    diffs: list[MetricDiff] = []
    for k in sorted(set(ks) | {1}):
        if k > min_n:
            notes.append(f"pass@{k} omitted: some tasks have only {min_n} sample(s)")
            continue
        pa = np.array([pass_at_k(*a[t], k) for t in common])
        pb = np.array([pass_at_k(*b[t], k) for t in common])
        low, high = paired_bootstrap_ci(pa, pb, resamples=resamples, seed=seed)
        diffs.append(
            MetricDiff(
                f"pass@{k}",
                float(pa.mean()),
                float(pb.mean()),
                float(pb.mean() - pa.mean()),
                low,
                high,
            )
        )
    rate_a = {t: a[t][1] / a[t][0] for t in common}
    rate_b = {t: b[t][1] / b[t][0] for t in common}
    improved = [Flip(t, rate_a[t], rate_b[t]) for t in common if rate_a[t] < SOLVED <= rate_b[t]]
    regressed = [Flip(t, rate_a[t], rate_b[t]) for t in common if rate_b[t] < SOLVED <= rate_a[t]]
    only_a = sorted(a.keys() - b.keys(), key=task_order)
    only_b = sorted(b.keys() - a.keys(), key=task_order)
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
        notes=notes,
    )
