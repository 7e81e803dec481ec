"""HumanEval-Rust's verdicts, from what an evaluation observed:

- ``judge_split`` (``split_run.SplitRun``): the trusted-test split (docs/integrity.md). Only the
  test program decides: passed when it exited 0 with the done marker last on its stderr;
  otherwise the table of docs/integrity.md picks the reason (timeouts, the candidate's own
  crash or limit, the first failed test's panic message).
- ``judge_alone`` (``run.RustRun``): the in-process path, for tasks whose signature the wire
  cannot carry: libtest's log and exit code, as before the split.

A verdict depends only on the sample, its task and the settings (docs/batching.md). Each
records how it was obtained in ``details["evaluated"]``: ``alone`` (its own compile,
exactly ``--no-batch``) or ``shared`` (compiled in a batch's crate); the result cache never
serves a shared verdict to a ``--no-batch`` run. ``details["trust"]`` says which path
judged it: ``split`` or ``in-process`` (forgeable by a hostile sample)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vibes_eval.benchmarks.common.verdicts import verdict
from vibes_eval.benchmarks.humaneval.rust import harness
from vibes_eval.benchmarks.humaneval.rust.split_run import (
    ENDED,
    SplitRun,
    passed,
    read_report,
    shown,
)
from vibes_eval.core.pair import OVERRUNS
from vibes_eval.core.types import ExecutionResult, Reason, Sample, SampleResult, Termination

if TYPE_CHECKING:
    from vibes_eval.benchmarks.humaneval.run import RustRun
    from vibes_eval.benchmarks.humaneval.rust.split_run import TestReport

KEEP_OUTPUT = 4096  # characters of stdout/stderr kept per sample in results
TAMPERED = "tampered"  # a benchmark reason (HumanEvalRust.reasons)
ALONE, SHARED = "alone", "shared"  # details["evaluated"]
SPLIT, IN_PROCESS = "split", "in-process"  # details["trust"]


def measured(
    *, compile_s: float = 0.0, run_s: float = 0.0, cpu_s: float = 0.0,
    tests: tuple[int, int] | None = None,
) -> dict[str, float]:  # fmt: skip
    """A Rust sample's measurements: timings, and test counts when the tests ran."""
    out = {"compile_s": compile_s, "run_s": run_s, "cpu_s": cpu_s, "wall_s": compile_s + run_s}
    if tests is not None:
        out["tests_passed"], out["tests_expected"] = float(tests[0]), float(tests[1])
    return out


def result(
    sample: Sample,
    passed: bool,
    reason: str,
    detail: str = "",
    *,
    trust: str,
    evaluated: str = ALONE,
    **kw: Any,
) -> SampleResult:
    details = {"evaluated": evaluated, "trust": trust}
    return verdict(sample, passed, reason, detail, details=details, **kw)


def infra(sample: Sample, detail: str, trust: str) -> SampleResult:
    """The runner failed evaluating ``sample``: retried on resume."""
    return result(sample, False, Reason.INFRA, detail, trust=trust)


def judge(sample: Sample, output: RustRun | SplitRun, declared: list[str]) -> SampleResult:
    """The verdict on a lone evaluation, by the path that made it."""
    if isinstance(output, SplitRun):
        return judge_split(sample, output)
    return judge_alone(sample, output, declared)


def judge_split(
    sample: Sample, out: SplitRun, *, evaluated: str = ALONE, compile_s: float | None = None
) -> SampleResult:
    """The verdict of the test program (docs/integrity.md); ``compile_s``: the sample's
    share of a batch's compile, where it had one."""
    if out.violation is not None:
        return result(sample, False, Reason.POLICY, str(out.violation), trust=SPLIT)
    assert out.compile is not None
    comp = out.compile
    if not comp.ok:
        return compile_failure(sample, comp, out.syntax_error, trust=SPLIT)
    assert out.pair is not None
    test, cand = out.pair.test, out.pair.candidate
    report = read_report(test.stderr)
    reason, detail = split_verdict(test, cand, report, out.tests)
    timing = measured(
        compile_s=comp.wall_s if compile_s is None else compile_s, run_s=test.wall_s,
        cpu_s=comp.cpu_s + test.cpu_s + cand.cpu_s, tests=(len(report.ok), len(out.tests)),
    )  # fmt: skip
    return result(
        sample, reason is Reason.PASSED, reason, detail, trust=SPLIT, evaluated=evaluated,
        measurements=timing, stdout=shown(report)[:KEEP_OUTPUT],
        stderr=cand.stderr[:KEEP_OUTPUT],
    )  # fmt: skip


def split_verdict(
    test: ExecutionResult, cand: ExecutionResult, report: TestReport, expected: tuple[str, ...]
) -> tuple[Reason, str]:
    """docs/integrity.md's table: the test program's end decides. When it failed, a limit
    the candidate ran into (time, memory, disk...) is the reason; a candidate's signal or
    exit only when the test failed waiting for its answer: once the test has ended, we kill
    the candidate, and that is no end of its own making."""
    if cand.termination in OVERRUNS:  # not a pass even when the test passed
        return Reason.from_termination(cand.termination), cand.termination.value
    if passed(test, report, expected):
        return Reason.PASSED, ""
    if Termination.TIMED_OUT in (cand.termination, test.termination):
        # the candidate's timeout is the cause even of the test's (its other limits:
        # OVERRUNS, above)
        return Reason.TIMEOUT, Termination.TIMED_OUT.value
    if test.termination is not Termination.EXITED:
        ended = test.termination
        return Reason.from_termination(ended), f"the test program: {ended.value}"
    if not report.failed:
        return Reason.EARLY_EXIT, (
            f"the test program exited with code {test.exit_code} before its tests ended"
        )
    name, message = report.failed[0]
    if message == ENDED:
        return _candidate_end(cand, name)
    return Reason.FAILED, f"{name}: {message.splitlines()[0] if message else ''}".rstrip(": ")


def _candidate_end(cand: ExecutionResult, test_name: str) -> tuple[Reason, str]:
    """Why the candidate stopped answering while ``test_name`` waited for it."""
    if cand.termination is Termination.SIGNALED:
        return Reason.CRASH, harness.signal_detail(cand)
    how = (
        f"exited with code {cand.exit_code}"
        if cand.termination is Termination.EXITED
        else f"ended ({cand.termination.value})"
    )
    return Reason.EARLY_EXIT, f"the candidate {how} before answering {test_name}"


def judge_alone(sample: Sample, output: RustRun, declared: list[str]) -> SampleResult:
    """The verdict on a lone in-process evaluation; ``declared``: the task's tests by their
    full paths (``RustEvaluator.declared``)."""
    trust = IN_PROCESS
    if output.violation is not None:
        return result(sample, False, Reason.POLICY, str(output.violation), trust=trust)
    assert output.compile is not None
    comp = output.compile
    if not comp.ok:
        return compile_failure(sample, comp, output.syntax_error, trust=trust)
    timing = measured(compile_s=comp.wall_s, cpu_s=comp.cpu_s)
    if output.tampering is not None:
        return result(sample, False, TAMPERED, output.tampering, measurements=timing, trust=trust)
    if output.listing_failure is not None:
        lf = output.listing_failure
        reason = (
            Reason.from_termination(lf.termination)
            if lf.termination is not Termination.EXITED
            else Reason.CRASH
        )
        return result(
            sample, False, reason, "the test binary failed to list its tests",
            measurements=timing, stderr=lf.stderr[:KEEP_OUTPUT], trust=trust,
        )  # fmt: skip
    assert output.run is not None and output.listed is not None
    ran = harness.judge(output.run, output.listed, declared, output.log or {})
    return result(
        sample, ran.passed, ran.reason, ran.detail,
        measurements=measured(
            compile_s=comp.wall_s, run_s=output.run.wall_s,
            cpu_s=comp.cpu_s + output.run.cpu_s,
            tests=(ran.tests_passed, ran.tests_expected),
        ),
        stdout=output.run.stdout[:KEEP_OUTPUT], stderr=output.run.stderr[:KEEP_OUTPUT],
        trust=trust,
    )  # fmt: skip


def compile_failure(
    sample: Sample, comp: ExecutionResult, syntax_error: str | None, *, trust: str
) -> SampleResult:
    if comp.termination is Termination.EXITED:
        reason: str = Reason.COMPILE_ERROR
        detail = harness.compile_error_detail(comp, "main.rs", syntax_error)
    else:
        reason = Reason.from_termination(comp.termination)
        detail = f"compiler {comp.termination.value}"
    return result(
        sample, False, reason, detail,
        measurements=measured(compile_s=comp.wall_s, cpu_s=comp.cpu_s),
        stderr=harness.rendered_stderr(comp.stderr)[:KEEP_OUTPUT], trust=trust,
    )  # fmt: skip
