"""Trust levels (docs/integrity.md): a verdict whose tests ran in the sample's own process
says so in the results row, the run's notes and the sample page's facts."""

from __future__ import annotations

from vibes_eval.core import metrics
from vibes_eval.core.types import SampleResult, humaneval_row


def _result(trust: str, passed: bool = True) -> SampleResult:
    measure = {metrics.IN_PROCESS_MEASURE: 1.0} if trust == "in-process" else {}
    return SampleResult(task_id="T/0", index=0, passed=passed, reason="passed" if passed
                        else "failed", measurements=measure, details={"trust": trust})  # fmt: skip


def test_in_process_verdicts_are_counted_in_the_notes() -> None:
    rows = [_result("in-process"), _result("split"), _result("in-process", passed=False)]
    scores = metrics.score([], rows)
    assert any("2 verdict(s)" in n and "forge" in n for n in scores.notes)


def test_split_verdicts_add_no_note() -> None:
    assert metrics.trust_note([_result("split")]) is None


def test_the_results_row_carries_the_trust_level() -> None:
    row = humaneval_row({"task_id": "T/0", "completion": "x"}, _result("in-process"))
    assert row["trust"] == "in-process"
    assert "trust" not in humaneval_row({"task_id": "T/0"}, SampleResult(
        task_id="T/0", index=0, passed=True, reason="passed"))  # fmt: skip
