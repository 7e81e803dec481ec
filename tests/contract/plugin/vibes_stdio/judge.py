"""Observations -> verdict: every case's output matched (trailing whitespace aside)."""

from __future__ import annotations

from vibes_eval.benchmarks.common.verdicts import failed, passed
from vibes_eval.core.types import ExecutionResult, Reason, Sample, SampleResult
from vibes_stdio.tasks import StdioTask


def judge(task: StdioTask, sample: Sample, seen: list[ExecutionResult]) -> SampleResult:
    wall = {"wall_s": sum(r.wall_s for r in seen)}
    for i, (case, res) in enumerate(zip(task.cases, seen, strict=False)):
        if not res.ok:
            reason = Reason.FAILED if res.exit_code else Reason.from_termination(res.termination)
            return failed(sample, reason, f"case {i}: {res.stderr.strip()[-200:]}",
                          measurements=wall, stderr=res.stderr)  # fmt: skip
        if res.stdout.rstrip() != case.output.rstrip():
            got = res.stdout.strip()[:80]
            return failed(sample, Reason.FAILED, f"case {i}: printed {got!r}",
                          measurements=wall, stdout=res.stdout)  # fmt: skip
    return passed(sample, measurements={**wall, "cases": float(len(task.cases))})
