"""HumanEval-Rust's verdicts: what a lone evaluation observed (``run.RustRun``) turned into
a ``SampleResult``; the batched path (``rust/batch.py``, ``rust/batch_run.py``) builds its
results with the same ``result`` and ``measured``, so both judge alike.

A verdict depends only on the sample, its task and the settings (docs/batching.md). Each
records how it was obtained in ``details["evaluated"]``: ``alone`` (its own compile and
process, exactly ``--no-batch``) or ``shared`` (a batch's crate, binary or process); the
result cache never serves a shared verdict to a ``--no-batch`` run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vibes_eval.benchmarks.common.verdicts import verdict
from vibes_eval.benchmarks.humaneval.rust import harness
from vibes_eval.core.types import ExecutionResult, Reason, Sample, SampleResult, Termination

if TYPE_CHECKING:
    from vibes_eval.benchmarks.humaneval.run import RustRun

KEEP_OUTPUT = 4096  # characters of stdout/stderr kept per sample in results
TAMPERED = "tampered"  # a benchmark reason (HumanEvalRust.reasons)
ALONE, SHARED = "alone", "shared"  # details["evaluated"]


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
    evaluated: str = ALONE,
    **kw: Any,
) -> SampleResult:
    return verdict(sample, passed, reason, detail, details={"evaluated": evaluated}, **kw)


def infra(sample: Sample, detail: str) -> SampleResult:
    """The runner failed evaluating ``sample``: retried on resume."""
    return result(sample, False, Reason.INFRA, detail)


def judge_alone(sample: Sample, output: RustRun, declared: list[str]) -> SampleResult:
    """The verdict on a lone evaluation; ``declared``: the task's tests by their full
    paths (``RustEvaluator.declared``)."""
    if output.violation is not None:
        return result(sample, False, Reason.POLICY, str(output.violation))
    assert output.compile is not None
    comp = output.compile
    if not comp.ok:
        return compile_failure(sample, comp, output.syntax_error)
    timing = measured(compile_s=comp.wall_s, cpu_s=comp.cpu_s)
    if output.tampering is not None:
        return result(sample, False, TAMPERED, output.tampering, measurements=timing)
    if output.listing_failure is not None:
        lf = output.listing_failure
        reason = (
            Reason.from_termination(lf.termination)
            if lf.termination is not Termination.EXITED
            else Reason.CRASH
        )
        return result(
            sample, False, reason, "the test binary failed to list its tests",
            measurements=timing, stderr=lf.stderr[:KEEP_OUTPUT],
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
    )  # fmt: skip


def compile_failure(
    sample: Sample, comp: ExecutionResult, syntax_error: str | None
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
        stderr=harness.rendered_stderr(comp.stderr)[:KEEP_OUTPUT],
    )  # fmt: skip
