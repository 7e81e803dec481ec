"""compare's statistics against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vibes_eval.store.compare import compare, mcnemar_exact, paired_bootstrap_ci


@pytest.mark.parametrize(
    "b,c,p",
    [
        (0, 0, 1.0),
        (0, 5, 2 / 32),  # one-sided tail 1/32, doubled
        (1, 5, 2 * (1 + 6) / 64),
        (3, 3, 1.0),  # capped at 1
        (2, 8, 2 * (1 + 10 + 45) / 1024),
    ],
)
def test_mcnemar_exact_binomial_tail(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)
    assert mcnemar_exact(c, b) == mcnemar_exact(b, c)


def test_mcnemar_stays_exact_for_many_discordant_tasks() -> None:
    # 2**2000 overflows a float; the integer tail does not.
    p = mcnemar_exact(900, 1100)
    assert 0 < p < 1e-5 and math.isfinite(p)


def test_paired_bootstrap_is_deterministic_and_brackets_the_difference() -> None:
    rng = np.random.default_rng(1)
    a = rng.random(164)
    b = a + 0.05 + rng.normal(0, 0.02, 164)
    low, high = paired_bootstrap_ci(a, b)
    assert (low, high) == paired_bootstrap_ci(a, b)
    assert low < (b - a).mean() < high
    assert low > 0.04 and high < 0.06  # paired: the shared task difficulty cancels out
    assert paired_bootstrap_ci(a, a) == (0.0, 0.0)


def test_compare_reports_flips_metrics_and_notes() -> None:
    a = {"T/0": (2, 2), "T/1": (2, 0), "T/2": (2, 1), "T/3": (2, 2), "T/9": (2, 2)}
    b = {"T/0": (2, 0), "T/1": (2, 2), "T/2": (2, 2), "T/3": (2, 2), "T/7": (2, 0)}
    result = compare(a, b, [1, 2, 5])
    assert result.tasks == 4 and result.only_a == ["T/9"] and result.only_b == ["T/7"]
    assert [m.metric for m in result.metrics] == ["pass@1", "pass@2"]
    p1 = result.metrics[0]
    assert (p1.a, p1.b) == pytest.approx((5 / 8, 6 / 8))
    assert p1.diff == pytest.approx(1 / 8)
    assert p1.ci_low <= p1.diff <= p1.ci_high
    # T/2 goes from 0.5 to 1.0: solved in both (>= 0.5), so not a flip.
    assert [f.task_id for f in result.improved] == ["T/1"]
    assert [f.task_id for f in result.regressed] == ["T/0"]
    assert result.mcnemar.p_value == 1.0
    assert any("pass@5 omitted" in n for n in result.notes)
    with pytest.raises(ValueError, match="no task in common"):
        compare({"A": (1, 1)}, {"B": (1, 1)}, [1])
