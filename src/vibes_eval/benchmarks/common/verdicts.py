"""Building a ``SampleResult`` the same way everywhere: a pass, a failure with its reason,
the runner's termination turned into a reason, an infrastructure error."""

from __future__ import annotations

from typing import Any

from vibes_eval.core.types import Reason, Sample, SampleResult


def verdict(
    sample: Sample,
    passed: bool,
    reason: str,
    detail: str = "",
    **fields: Any,
) -> SampleResult:
    """The result of ``sample``; ``fields`` are any other ``SampleResult`` fields
    (measurements, details, stdout, stderr)."""
    return SampleResult(
        task_id=sample.task_id,
        index=sample.index,
        passed=passed,
        reason=reason,
        detail=detail,
        completion_hash=sample.completion_hash,
        **fields,
    )


def passed(sample: Sample, **fields: Any) -> SampleResult:
    return verdict(sample, True, Reason.PASSED, **fields)


def failed(sample: Sample, reason: str, detail: str = "", **fields: Any) -> SampleResult:
    return verdict(sample, False, reason, detail, **fields)


def infra(sample: Sample, detail: str) -> SampleResult:
    """The harness or runner failed, not the sample: evaluated again on resume."""
    return verdict(sample, False, Reason.INFRA, detail)
