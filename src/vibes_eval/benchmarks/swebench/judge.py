"""From what ``run`` observed to a verdict (``judge``: the one place a ``SampleResult`` is
built, through ``common.verdicts``).

``official`` is what swebench 5.x's ``get_eval_report`` makes of ``test_output.txt``
(same reading of the log, same validity checks, same grading), so the two can be compared
on every instance. The verdict then adds what the official harness cannot see:

- the static findings (``tampering``): a patch that touches test infrastructure or
  reaches into the test runner is never resolved;
- the runtime cross-checks: every test the log reports passing must have run and passed
  in the probe's own record (written outside the report objects the repository's code can
  rewrite), run the function its test file defines, and a log without failures must come
  with a zero exit status read from the runner (not a line the tests print), and failures
  the probe saw must come with a non-zero one. Any disagreement means the log does not
  describe the run: ``test_tampering``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vibes_eval.benchmarks.common.verdicts import verdict
from vibes_eval.benchmarks.swebench import scoring
from vibes_eval.benchmarks.swebench.env.specs import (
    APPLY_FAILED,
    END,
    START,
    Spec,
    parser,
    parser_name,
)
from vibes_eval.benchmarks.swebench.integrity.tampering import Findings
from vibes_eval.benchmarks.swebench.run import Observation, SweRun
from vibes_eval.benchmarks.swebench.samples import model_name, patch_is_none
from vibes_eval.benchmarks.swebench.tasks import SweInstance
from vibes_eval.core.types import Reason, Sample, SampleResult, Termination

_BAD_CODES = (APPLY_FAILED, ">>>>> Reset Failed", ">>>>> Tests Errored", ">>>>> Tests Timed Out")
# Signs that a runner ran at all when nothing was parsed (swebench 5.x, abridged to the
# runners of Python repositories plus the generic counts).
_SUITE_RAN = re.compile(r"[1-9]\d* passing|Tests:\s+[1-9]\d*|^# tests [1-9]\d*", re.M)
_OUTPUT_TAIL = 20_000


@dataclass
class Official:
    """What the official grading makes of the log."""

    valid: bool  # patch_successfully_applied in the report: the log could be graded
    statuses: dict[str, str] = field(default_factory=dict)
    tests_status: dict[str, Any] | None = None
    resolution: str = scoring.NO

    @property
    def resolved(self) -> bool:
        return self.valid and self.resolution == scoring.FULL


def official_grade(
    inst: SweInstance, log: str, section: str, parse: Any, exit_code: int | None
) -> Official:
    """swebench 5.x's reading of ``test_output.txt`` (``get_logs_eval``, then the grading).
    ``section``: the test command's output, which is what lies between the markers."""
    if any(code in log for code in _BAD_CODES) or not (START in log and END in log):
        return Official(valid=False)
    statuses = parse(section, None)
    if not statuses:
        statuses = parse(log, None)
    if not statuses and not _SUITE_RAN.search(log):
        return Official(valid=False)
    if (
        exit_code not in (None, 0)
        and statuses
        and not any(s in ("FAILED", "ERROR") for s in statuses.values())
    ):
        return Official(valid=False, statuses=statuses)
    report = scoring.tests_report(statuses, inst.FAIL_TO_PASS, inst.PASS_TO_PASS, inst.eval_type)
    return Official(True, statuses, report, scoring.resolution(report))


def _probe_calls(
    probe: Sequence[Mapping[str, Any]], events: tuple[str, ...] = ("phase",)
) -> dict[str, list[Mapping[str, Any]]]:
    """The probe's records of the given kinds, by node id."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for rec in probe:
        if rec.get("event") in events and isinstance(rec.get("nodeid"), str):
            out.setdefault(rec["nodeid"], []).append(rec)
    return out


def _raised(rec: Mapping[str, Any]) -> bool:
    """A phase (or the test function itself) failed for real (an xfail-marked test
    failing is its expected outcome)."""
    raw = rec.get("raw")
    if raw != "failed":
        return False
    return not (rec.get("when", "call") == "call" and rec.get("xfail_marked"))


def cross_check(inst: SweInstance, run: SweRun, official: Official) -> list[str]:
    """Disagreements between the log, the probe and the exit status (empty: none)."""
    problems: list[str] = []
    statuses = official.statuses
    exit_code = run.test_exit
    # A forged log claims passes; one with none (a run that died before any test, whose
    # log the parsers read junk from: sphinx-7686 with today's docutils) is ungradable.
    if (
        exit_code not in (None, 0)
        and any(s in scoring.PASSING for s in statuses.values())
        and not any(s in ("FAILED", "ERROR") for s in statuses.values())
    ):
        problems.append(f"the test command exited {exit_code} but its log reports no failure")
    if run.uses_unittest:
        return problems + unittest_problems(inst, run, statuses)
    if not run.uses_pytest:
        return problems
    if not any(r.get("event") == "start" for r in run.probe):
        return problems  # the probe could not load (e.g. a very old pytest): nothing to compare
    calls = _probe_calls(run.probe)
    funcs = _probe_calls(run.probe, ("wrapped", "func"))
    seen = _probe_calls(run.probe, ("phase", "func"))
    failed_seen = [n for n, recs in seen.items() if any(_raised(r) for r in recs)]
    if exit_code == 0 and failed_seen:
        problems.append(f"the test command exited 0 but {failed_seen[0]} failed")
    for test in [*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS]:
        if "::" not in test:
            # Not a test: what the official parser read from a progress line ("[100%]",
            # "[" in pytest-5227's lists). Graded as officially; no test runs by that name.
            continue
        key = scoring.resolve_id(test, statuses)
        if key is None or statuses[key] not in scoring.PASSING:
            continue
        # The parser keeps an id up to its first blank: the probe's ids, read the same way.
        runs = [r for n, recs in calls.items() if (n.split() or [""])[0] == key for r in recs]
        own = [r for n, recs in funcs.items() if (n.split() or [""])[0] == key for r in recs]
        problems += _function_problems(test, statuses[key], own)
        if not any(r.get("when") == "call" for r in runs):
            problems.append(f"{test}: reported {statuses[key]} but never ran")
        elif any(_raised(r) for r in runs):
            problems.append(f"{test}: reported {statuses[key]} but raised")
        elif any(r.get("function") == "changed" for r in runs):
            problems.append(f"{test}: the function that ran is not the one its test file defines")
    return problems


_UNITTEST_ID = re.compile(r"^\w+ \([\w.]+\)$")


def unittest_problems(inst: SweInstance, run: SweRun, statuses: Mapping[str, str]) -> list[str]:
    """What each test method did (the start-up witness, from inside its call) against
    the statuses a unittest-based runner's log reports."""
    if not any(r.get("event") == "start" for r in run.probe):
        return []  # the witness could not load (Python < 3.8): nothing to compare
    seen: dict[str, list[Mapping[str, Any]]] = {}
    for rec in run.probe:
        for test_id in rec.get("ids", []) if rec.get("event") == "func" else []:
            seen.setdefault(test_id, []).append(rec)
    problems = []
    if run.test_exit == 0 and any(_raised(r) for recs in seen.values() for r in recs):
        problems.append("the test command exited 0 but a test method raised")
    for test in [*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS]:
        status = statuses.get(test)
        if status not in scoring.PASSING or not _UNITTEST_ID.match(test):
            continue
        own = seen.get(test, [])
        if not own:
            problems.append(f"{test}: reported {status} but its method was never called")
        elif any(_raised(r) for r in own):
            problems.append(f"{test}: reported {status} but its method raised")
    return problems


def _function_problems(test: str, status: str, own: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the test function's own record (written from inside its call, past whatever
    the runner's code does with the outcome) says against a passing status."""
    if not any(r.get("event") == "wrapped" for r in own):
        return []  # not a plain function (unittest, coroutine) or an old pytest
    called = [r for r in own if r.get("event") == "func"]
    if not called:
        return [f"{test}: reported {status} but its function was never called"]
    if any(_raised(r) for r in called):
        return [f"{test}: reported {status} but its function raised"]
    return []


def summary_counts(official: Official) -> dict[str, float]:
    if official.tests_status is None:
        return {}
    ts = official.tests_status
    return {
        "f2p_passed": len(ts[scoring.F2P]["success"]),
        "f2p_total": len(ts[scoring.F2P]["success"]) + len(ts[scoring.F2P]["failure"]),
        "p2p_passed": len(ts[scoring.P2P]["success"]),
        "p2p_total": len(ts[scoring.P2P]["success"]) + len(ts[scoring.P2P]["failure"]),
    }


def tampering_detail(findings: Findings, problems: Sequence[str]) -> str:
    parts = [findings.detail()] if findings else []
    if problems:
        parts.append("the test log disagrees with the run: " + "; ".join(problems[:3]))
    return "; ".join(parts)


# -- the verdict ------------------------------------------------------------------------------


def judge(task: SweInstance, sample: Sample, out: Observation, spec: Spec | None) -> SampleResult:
    """The verdict of one prediction (``spec``: the instance's, for its log parser)."""
    if out.empty:
        return _result(task, sample, "empty_patch", "empty_patch")
    findings = out.findings or Findings()
    static = {
        "tampering_paths": findings.paths,
        "tampering_code": findings.code,
        "environment": out.environment,
    }
    if out.infra or out.run is None:
        return _result(task, sample, Reason.INFRA, "infra_error", out.infra, details=static)
    run = out.run
    wall = {"wall_s": round(run.wall_s, 3)}
    if not run.applied:
        return _result(
            task,
            sample,
            "patch_apply_failed",
            "error",
            "no fallback applied the patch",
            measurements=wall,
            details=static,
            stderr=run.apply_log[-_OUTPUT_TAIL:],
        )
    assert run.test is not None
    wall["test_s"] = round(run.test.wall_s, 3)
    if run.test.termination is not Termination.EXITED:
        reason = Reason.from_termination(run.test.termination)
        return _result(
            task,
            sample,
            reason,
            "infra_error" if reason == Reason.INFRA else "error",
            f"the test command ended: {run.test.termination}",
            measurements=wall,
            details=static,
            stdout=run.section()[-_OUTPUT_TAIL:],
        )
    parse = parser(parser_name(task, spec))
    return _graded(task, sample, run, findings, static, wall, parse)


def _graded(
    task: SweInstance,
    sample: Sample,
    run: SweRun,
    findings: Findings,
    static: dict[str, Any],
    wall: dict[str, float],
    parse: Any,
) -> SampleResult:
    """The verdict of a run whose test command exited: the official grade, overruled by
    the static findings and the runtime cross-checks."""
    official = official_grade(task, run.test_output(), run.section(), parse, run.test_exit)
    problems = cross_check(task, run, official)
    details = {
        **static,
        "resolution": official.resolution if official.valid else None,
        "official_resolved": official.resolved,
        "runtime_problems": problems,
        "applied_with": run.applied_with,
        "test_exit": run.test_exit,
    }
    if findings or problems:
        reason, passed = "test_tampering", False
        detail = tampering_detail(findings, problems)
    elif not official.valid:
        reason, passed, detail = "test_error", False, "the test log could not be graded"
    else:
        passed = official.resolution == scoring.FULL
        reason = {scoring.FULL: Reason.PASSED, scoring.PARTIAL: "partial"}.get(
            official.resolution, Reason.FAILED
        )
        detail = "" if passed else f2p_detail(official)
    report = scoring.instance_report(
        task.task_id,
        patch_is_none=patch_is_none(sample),
        applied=official.valid,
        tests_status=official.tests_status,
        resolved=passed,
        extra={
            "reason": reason,
            "official_resolved": official.resolved,
            "environment": static.get("environment", {}),
            **({"tampering": detail} if reason == "test_tampering" else {}),
        },
    )
    return _result(
        task,
        sample,
        reason,
        "resolved" if passed else "unresolved",
        detail,
        passed=passed,
        measurements={**wall, **summary_counts(official)},
        details=details,
        report=report,
        stdout=run.section()[-_OUTPUT_TAIL:],
    )


def _result(
    task: SweInstance,
    sample: Sample,
    reason: str,
    status: str,
    detail: str = "",
    *,
    passed: bool = False,
    report: dict[str, Any] | None = None,
    details: Mapping[str, Any] | None = None,
    **fields: Any,
) -> SampleResult:
    """A ``SampleResult`` whose details carry the status, the model and ``report.json``."""
    report = report or scoring.instance_report(
        task.task_id,
        patch_is_none=patch_is_none(sample),
        applied=False,
        tests_status=None,
        resolved=False,
    )
    full = {"status": status, "model": model_name(sample), "report": report, **(details or {})}
    return verdict(sample, passed, reason, detail, details=full, **fields)


def f2p_detail(official: Official) -> str:
    ts = official.tests_status or {}
    f2p, p2p = ts.get(scoring.F2P, {}), ts.get(scoring.P2P, {})
    return (
        f"{official.resolution}: FAIL_TO_PASS {len(f2p.get('success', []))}/"
        f"{len(f2p.get('success', [])) + len(f2p.get('failure', []))}, PASS_TO_PASS "
        f"{len(p2p.get('success', []))}/{len(p2p.get('success', [])) + len(p2p.get('failure', []))}"
    )
