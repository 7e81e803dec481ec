"""Grading as the official harness grades: per-test statuses -> FAIL_TO_PASS and
PASS_TO_PASS success/failure -> FULL (resolved), PARTIAL or NO; and the per-instance
``report.json`` and run summary ``<model>.<run_id>.json`` in the official shapes.

Rules (swebench 5.x ``grading.py``): a test passes when PASSED or XFAIL; a FAIL_TO_PASS
test fails when missing, FAILED, ERROR or SKIPPED; a PASS_TO_PASS test is kept when it
passes or is SKIPPED; an id cut short inside its brackets (more ``[`` than ``]``) matches
the ids it begins when those agree on passing. ``fail_only`` instances count a test as
failed only when it is reported FAILED. ``metrics``: the resolved rate (the headline), the
share of patches that applied, the share caught tampering.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from vibes_eval.core import metrics as m
from vibes_eval.core.types import Reason

PASSING = ("PASSED", "XFAIL")
FULL, PARTIAL, NO = "RESOLVED_FULL", "RESOLVED_PARTIAL", "RESOLVED_NO"
F2P, P2P, F2F, P2F = "FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL"


def resolve_id(test: str, statuses: Mapping[str, str]) -> str | None:
    """The status map's key for ``test``; a truncated parametrized id matches by prefix
    when every candidate agrees on passing."""
    if test in statuses:
        return test
    if test.count("[") > test.count("]"):
        matches = [k for k in statuses if k.startswith(test)]
        if matches and len({statuses[k] in PASSING for k in matches}) == 1:
            return matches[0]
    return None


def passed(test: str, statuses: Mapping[str, str]) -> bool:
    key = resolve_id(test, statuses)
    return key is not None and statuses[key] in PASSING


def kept(test: str, statuses: Mapping[str, str]) -> bool:
    key = resolve_id(test, statuses)
    return passed(test, statuses) or (key is not None and statuses[key] == "SKIPPED")


def failed(test: str, statuses: Mapping[str, str]) -> bool:
    key = resolve_id(test, statuses)
    return key is None or statuses[key] in ("FAILED", "ERROR", "SKIPPED")


def _split(tests: Iterable[str], ok: Any, bad: Any, statuses: Mapping[str, str]):
    success, failure = [], []
    for t in tests:
        if ok(t, statuses):
            success.append(t)
        elif bad(t, statuses):
            failure.append(t)
    return {"success": success, "failure": failure}


def tests_report(
    statuses: Mapping[str, str], f2p: Sequence[str], p2p: Sequence[str], eval_type: str | None
) -> dict[str, dict[str, list[str]]]:
    """``tests_status`` of the official report."""
    if eval_type == "fail_only":

        def ok(t: str, sm: Mapping[str, str]) -> bool:
            return not (t in sm and sm[t] == "FAILED")

        def bad(t: str, sm: Mapping[str, str]) -> bool:
            return not ok(t, sm)

        report = {F2P: _split(f2p, ok, bad, statuses), P2P: _split(p2p, ok, bad, statuses)}
    else:
        report = {
            F2P: _split(f2p, passed, failed, statuses),
            P2P: _split(p2p, kept, failed, statuses),
        }
    empty = {"success": [], "failure": []}
    return {**report, F2F: dict(empty), P2F: dict(empty)}


def _rate(part: Mapping[str, list[str]]) -> float:
    total = len(part["success"]) + len(part["failure"])
    return 1.0 if total == 0 else len(part["success"]) / total


def resolution(report: Mapping[str, Mapping[str, list[str]]]) -> str:
    f2p, p2p = _rate(report[F2P]), _rate(report[P2P])
    if f2p == 1 and p2p == 1:
        return FULL
    if 0 < f2p < 1 and p2p == 1:
        return PARTIAL
    return NO


def instance_report(
    iid: str,
    *,
    patch_is_none: bool,
    applied: bool,
    tests_status: Mapping[str, Any] | None,
    resolved: bool,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The per-instance ``report.json``: ``{iid: {patch_is_None, patch_exists,
    patch_successfully_applied, resolved[, tests_status]}}`` plus our own keys (``vibes``)."""
    body: dict[str, Any] = {
        "patch_is_None": patch_is_none,
        "patch_exists": not patch_is_none,
        "patch_successfully_applied": applied,
        "resolved": resolved,
    }
    if tests_status is not None:
        body["tests_status"] = tests_status
    if extra:
        body["vibes"] = dict(extra)
    return {iid: body}


def run_summary(
    instance_ids: Sequence[str],
    submitted: Sequence[str],
    by_id: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    """The run summary ``<model>.<run_id>.json`` (official keys), from each evaluated
    instance's outcome: ``{"status": resolved|unresolved|empty_patch|error|infra_error,
    "reason": ...}``. Instances without a prediction are incomplete."""
    ids: dict[str, set[str]] = {
        k: set()
        for k in (
            "completed",
            "resolved",
            "unresolved",
            "empty_patch",
            "error",
            "incomplete",
            "infra_failure",
            "test_tampering",
        )
    }
    reasons: dict[str, str] = {}
    for iid in instance_ids:
        out = by_id.get(iid)
        if iid not in submitted or out is None:
            ids["incomplete"].add(iid)
            continue
        status = out["status"]
        if status == "empty_patch":
            ids["empty_patch"].add(iid)
            continue
        if status in ("resolved", "unresolved"):
            ids["completed"].add(iid)
            ids[status].add(iid)
        else:
            ids["error"].add(iid)
        if status == "infra_error":
            ids["infra_failure"].add(iid)
            reasons[iid] = out.get("detail", "")
        if out.get("reason") == "test_tampering":
            ids["test_tampering"].add(iid)
    counts = {f"{k}_instances": len(v) for k, v in ids.items() if k != "incomplete"}
    lists = {f"{k}_ids": sorted(v) for k, v in ids.items()}
    return {
        "total_instances": len(instance_ids),
        "submitted_instances": len(submitted),
        **counts,
        "ambiguous_failure_instances": 0,
        "completed_ids": lists["completed_ids"],
        "incomplete_ids": lists["incomplete_ids"],
        "empty_patch_ids": lists["empty_patch_ids"],
        "submitted_ids": sorted(submitted),
        "resolved_ids": lists["resolved_ids"],
        "unresolved_ids": lists["unresolved_ids"],
        "infra_failure_ids": lists["infra_failure_ids"],
        "ambiguous_failure_ids": [],
        "failure_reasons": dict(sorted(reasons.items())),
        "error_ids": lists["error_ids"],
        "test_tampering_ids": lists["test_tampering_ids"],
        "schema_version": 2,
    }


def metrics() -> list[m.Metric]:
    def rate(pred: Any) -> Any:
        return lambda rs: sum(1 for r in rs if pred(r)) / len(rs)

    return [
        m.Metric(
            "resolved",
            rate(lambda r: r.passed),
            description="share of predictions graded RESOLVED_FULL (and not forged)",
        ),
        m.Metric(
            "patch_applied",
            rate(lambda r: r.reason not in ("empty_patch", "patch_apply_failed", Reason.INFRA)),
            description="share of predictions whose patch applied",
        ),
        m.Metric(
            "test_tampering",
            rate(lambda r: r.reason == "test_tampering"),
            description="share of predictions caught touching tests or forging results",
        ),
    ]
