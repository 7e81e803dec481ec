"""compare's statistics against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vibes_eval.core.benchmark import default_metrics
from vibes_eval.core.metrics import Metric
from vibes_eval.core.types import SampleResult
from vibes_eval.runs.compare import compare, mcnemar_exact, paired_bootstrap_ci


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


def rows(counts: dict[str, tuple[int, int]]) -> list[SampleResult]:
    """n samples per task, the first c of them passing."""
    return [
        SampleResult(task_id=t, index=i, passed=i < c, reason="passed" if i < c else "failed")
        for t, (n, c) in counts.items()
        for i in range(n)
    ]


def test_compare_reports_flips_metrics_and_notes() -> None:
    a = rows({"T/0": (2, 2), "T/1": (2, 0), "T/2": (2, 1), "T/3": (2, 2), "T/9": (2, 2)})
    b = rows({"T/0": (2, 0), "T/1": (2, 2), "T/2": (2, 2), "T/3": (2, 2), "T/7": (2, 0)})
    result = compare(a, b, default_metrics([1, 2, 5]))
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
        compare(rows({"A": (1, 1)}), rows({"B": (1, 1)}), default_metrics([1]))


def test_compare_pairs_any_declared_metric_with_its_own_aggregate() -> None:
    """A benchmark's own metric (a speed, geometric mean over valid tasks) is paired per
    task like pass@k, and a task without a value on one side is left out of its CI."""
    speed = Metric("speed", lambda rs: rs[0].measurements.get("speed"), aggregate="geomean")

    def run(speeds: dict[str, float | None]) -> list[SampleResult]:
        return [
            SampleResult(task_id=t, index=0, passed=s is not None, reason="passed",
                         measurements={} if s is None else {"speed": s})
            for t, s in speeds.items()
        ]  # fmt: skip

    a = run({"K/0": 1.0, "K/1": 2.0, "K/2": 4.0, "K/3": None})
    b = run({"K/0": 2.0, "K/1": 4.0, "K/2": 8.0, "K/3": 1.0})
    result = compare(a, b, [speed], solved=lambda rs: rs[0].passed)
    (diff,) = result.metrics
    assert (diff.a, diff.b) == pytest.approx((2.0, 4.0))  # K/3 has no speed in A
    assert diff.ci_low <= diff.diff <= diff.ci_high
    assert [f.task_id for f in result.improved] == ["K/3"] and not result.regressed


def test_tasks_that_got_worse_without_ever_being_solved_are_listed() -> None:
    # Ten tasks from 1 of 4 passing to none: pass@4 falls a lot, yet no task was "solved"
    # (at least half passing) in either run, so McNemar sees no flip. They must be listed.
    a = rows({f"T/{i}": (4, 1) for i in range(10)} | {"T/10": (4, 4)})
    b = rows({f"T/{i}": (4, 0) for i in range(10)} | {"T/10": (4, 4)})
    result = compare(a, b, default_metrics([4]))
    assert result.metrics[0].diff < 0 and not result.regressed
    assert [f.task_id for f in result.worse] == [f"T/{i}" for i in range(10)]
    assert all((f.a, f.b) == (0.25, 0.0) for f in result.worse) and not result.better
