"""Metrics: pass@k, and the mean share of a task's samples that pass."""

from __future__ import annotations

from collections.abc import Sequence

from vibes_eval.core import metrics as m


def stdio_metrics(ks: Sequence[int]) -> list[m.Metric]:
    share = m.Metric("pass_rate", m.pass_rate, description="share of samples that pass")
    return [*(m.pass_at_k_metric(k) for k in ks), share]
