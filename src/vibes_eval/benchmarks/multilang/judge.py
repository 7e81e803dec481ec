"""What was observed, turned into verdicts (``common.verdicts``): a policy refusal, a
build that failed, a program's run judged by the harness's token, the Python harness's
verdict line, a Python command that ended without one."""

from __future__ import annotations

import secrets
from typing import Any

from vibes_eval.benchmarks.common.rules import Violation
from vibes_eval.benchmarks.common.verdicts import failed, infra, passed, verdict
from vibes_eval.benchmarks.multilang.languages.base import DONE_MARKER, Language
from vibes_eval.core.metrics import IN_PROCESS_MEASURE
from vibes_eval.core.pair import OVERRUNS, PairResult
from vibes_eval.core.types import ExecutionResult, Reason, Sample, SampleResult, Termination

KEEP = 4096  # characters of a program's stdout and stderr kept in its result


def policy_refusal(sample: Sample, violation: Violation) -> SampleResult:
    return failed(sample, Reason.POLICY, str(violation))


def untestable(sample: Sample, why: str) -> SampleResult:
    """The task's own test could not be built: not the sample's fault."""
    return infra(sample, why)


def program_run(
    lang: Language, sample: Sample, run: ExecutionResult, token: str, compile_s: float
) -> SampleResult:
    """A pass needs exit code 0 with the token printed last (the harness's code prints it
    only after the test's `main` returned normally)."""
    timing = {"compile_s": compile_s, "run_s": run.wall_s, "wall_s": compile_s + run.wall_s,
              IN_PROCESS_MEASURE: 1.0}  # fmt: skip
    out: dict[str, Any] = {
        "stdout": run.stdout[:KEEP], "stderr": run.stderr[:KEEP], "measurements": timing,
        "details": dict(IN_PROCESS),
    }  # fmt: skip
    if run.termination is not Termination.EXITED:
        reason = Reason.from_termination(run.termination)
        if reason is Reason.CRASH and "Assertion" in run.stderr:
            return failed(sample, Reason.FAILED, lang.failure_detail(run), **out)
        detail = f"killed by signal {run.signal}" if reason is Reason.CRASH else ""
        return failed(sample, reason, detail or run.termination.value, **out)
    lines = [x for x in run.stdout.splitlines() if x.strip()]
    told = bool(lines) and secrets.compare_digest(lines[-1].strip(), token)
    if run.exit_code == 0 and told:
        return passed(sample, **out)
    if run.exit_code == 0:
        detail = "the program exited with code 0 before its test finished"
        return failed(sample, Reason.EARLY_EXIT, detail, **out)
    return failed(sample, Reason.FAILED, lang.failure_detail(run), **out)


IN_PROCESS = {"trust": "in-process"}  # the tests ran in the sample's own process
SPLIT = {"trust": "split"}  # a trusted test program called the sample (docs/integrity.md)


def split_run(lang: Language, sample: Sample, pair: PairResult, compile_s: float) -> SampleResult:
    """The verdict of a candidate run beside the trusted test program: only the test
    program can pass it (exit 0, the done marker last on its stderr); the candidate's own
    end says why it failed when it ended first (docs/integrity.md's table)."""
    test, cand = pair.test, pair.candidate
    run_s = max(test.wall_s, cand.wall_s)
    out: dict[str, Any] = {
        "stdout": "", "stderr": (cand.stderr[:KEEP] + test.stderr[:KEEP]),
        "measurements": {"compile_s": compile_s, "run_s": run_s, "wall_s": compile_s + run_s},
        "details": dict(SPLIT),
    }  # fmt: skip
    lines = [x for x in test.stderr.splitlines() if x.strip()]
    done = bool(lines) and lines[-1].strip() == DONE_MARKER
    if cand.termination in OVERRUNS:  # not a pass even when the test passed
        reason = Reason.from_termination(cand.termination)
        return failed(sample, reason, cand.termination.value, **out)
    if test.termination is Termination.EXITED and test.exit_code == 0 and done:
        return passed(sample, **out)
    if Termination.TIMED_OUT in (test.termination, cand.termination):
        return failed(sample, Reason.TIMEOUT, "timed out", **out)
    if cand.termination not in (Termination.EXITED, Termination.KILLED):
        reason = Reason.from_termination(cand.termination)
        detail = f"killed by signal {cand.signal}" if reason is Reason.CRASH else ""
        return failed(sample, reason, detail or cand.termination.value, **out)
    if test.termination not in (Termination.EXITED, Termination.SIGNALED):
        reason = Reason.from_termination(test.termination)
        return failed(sample, reason, f"the test program: {test.termination.value}", **out)
    if test.exit_code == 0:
        detail = "the test program ended before its tests finished"
        return failed(sample, Reason.FAILED, detail, **out)
    return failed(sample, Reason.FAILED, lang.failure_detail(test), **out)


def compile_failure(lang: Language, sample: Sample, res: ExecutionResult) -> SampleResult:
    timing = {"compile_s": res.wall_s, "wall_s": res.wall_s}
    if res.termination is Termination.EXITED:
        reason: str = Reason.COMPILE_ERROR
        detail = lang.compile_detail(res)
    else:
        reason = Reason.from_termination(res.termination)
        detail = f"compiler {res.termination.value}"
    return failed(sample, reason, detail, measurements=timing, stderr=res.stderr[:KEEP])


# Python's verdicts come from the harness, a process no sample's code runs in (the
# harness/child split, docs/integrity.md).
PYTHON_TRUST = {"trust": "split"}


def python_verdict(sample: Sample, line: dict[str, Any]) -> SampleResult:
    """The Python harness's verdict line for ``sample``; EvalPlus rows also say how the
    base inputs went (``base_passed``, for EvalPlus's base pass@k)."""
    reason = str(line.get("reason", Reason.INFRA))
    wall = float(line.get("wall_s") or 0.0)
    measurements = {"wall_s": wall, "run_s": wall, "calls": float(line.get("calls", 0))}
    details: dict[str, Any] = dict(PYTHON_TRUST)
    phases = line.get("evalplus")
    if isinstance(phases, dict):
        details["evalplus"] = {str(k): str(v) for k, v in phases.items()}
        measurements["base_passed"] = float(phases.get("base") == "pass")
    return verdict(
        sample,
        bool(line.get("passed")) and reason == Reason.PASSED,
        reason,
        str(line.get("detail", "")),
        measurements=measurements,
        details=details,
        stdout=str(line.get("stdout", "")),
        stderr=str(line.get("stderr", "")),
    )


def python_lost(sample: Sample, res: ExecutionResult, evalplus: bool = False) -> SampleResult:
    """A sample whose lone harness ended without a verdict: the command's own end
    says why (its limits), else the harness failed (an infra error). EvalPlus: its base
    inputs count as failed too (as pass@k counts the sample)."""
    if res.termination is not Termination.EXITED:
        reason: str = Reason.from_termination(res.termination)
        detail = f"the sandboxed process ended: {res.termination.value}"
    else:
        reason = Reason.INFRA
        tail = (res.stderr.strip().splitlines() or ["no output"])[-1]
        detail = f"the harness reported no verdict (exit {res.exit_code}): {tail[:300]}"
    measurements = {"wall_s": res.wall_s, **({"base_passed": 0.0} if evalplus else {})}
    return failed(
        sample, reason, detail, measurements=measurements, stderr=res.stderr[-4096:],
        details=dict(PYTHON_TRUST),
    )  # fmt: skip
