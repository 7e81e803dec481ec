"""Evaluating one Rust sample: the settings, the policy filter, the program, the toolchain,
the compile limits and the verdict. The lone path (``run_alone``) and the batched one
(``batch.py``, ``batch_run.py``) both go through here, so they judge alike.

A verdict depends only on the sample, its task and the settings (docs/batching.md). Each
records how it was obtained in ``details["evaluated"]``: ``alone`` (its own compile and
process, exactly ``--no-batch``) or ``shared`` (a batch's crate, binary or process); the
result cache never serves a shared verdict to a ``--no-batch`` run."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from vibes_eval.benchmarks.humaneval import harness, policy
from vibes_eval.benchmarks.humaneval.crates import ensure_crates
from vibes_eval.benchmarks.humaneval.extract import extract
from vibes_eval.benchmarks.humaneval.formats import RustProblem
from vibes_eval.benchmarks.humaneval.scan import Scan, TaskFacts
from vibes_eval.benchmarks.humaneval.toolchain import find_toolchain
from vibes_eval.core.benchmark import BenchmarkConfig
from vibes_eval.core.runner import Session, SessionSpec, TaskRunner
from vibes_eval.core.types import ExecutionResult, Limits, Reason, Sample, SampleResult, Termination

KEEP_OUTPUT = 4096  # characters of stdout/stderr kept per sample in results
TAMPERED = "tampered"  # a benchmark reason (HumanEvalRust.reasons)
ALONE, SHARED = "alone", "shared"  # details["evaluated"]


class HumanEvalConfig(BenchmarkConfig):
    limits: Limits = Limits(timeout_s=10.0)
    compile_timeout_s: float = 60.0
    enforce_policy: bool = True
    extract: Literal["none", "auto"] = "none"
    batch: bool = True  # many samples per compile; verdicts are the same either way

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset({"batch"})


@dataclass
class RustRun:
    """Everything one sample's lone evaluation observed."""

    violation: policy.Violation | None = None
    compile: ExecutionResult | None = None
    listed: list[str] | None = None
    run: ExecutionResult | None = None
    log: dict[str, str] | None = None
    listing_failure: ExecutionResult | None = None
    syntax_error: str | None = None  # the first, when the compile failed with any
    tampering: str | None = None  # it compiled, but changes or shadows the task's tests


def measured(
    *, compile_s: float = 0.0, run_s: float = 0.0, cpu_s: float = 0.0,
    tests: tuple[int, int] | None = None,
) -> dict[str, float]:  # fmt: skip
    """A Rust sample's measurements: timings, and test counts when the tests ran."""
    out = {"compile_s": compile_s, "run_s": run_s, "cpu_s": cpu_s, "wall_s": compile_s + run_s}
    if tests is not None:
        out["tests_passed"], out["tests_expected"] = float(tests[0]), float(tests[1])
    return out


class RustEvaluator:
    """Shared by every worker of a run: found toolchain, per-task caches."""

    def __init__(self, config: HumanEvalConfig) -> None:
        self.config = config
        self._build: harness.RustBuild | None = None
        self._facts: dict[str, TaskFacts] = {}
        self._lock = threading.Lock()

    # -- the sample's code --------------------------------------------------------------

    def completion(self, task: RustProblem, sample: Sample) -> str:
        if self.config.extract == "auto":
            return extract(sample.completion, task.header(), task.entry_point)
        return sample.completion

    def facts(self, task: RustProblem) -> TaskFacts:
        """What the task's header and tests define and resolve (cached: asked per sample)."""
        found = self._facts.get(task.task_id)
        if found is None:
            found = TaskFacts.of(task)
            with self._lock:
                self._facts[task.task_id] = found
        return found

    def scan(self, task: RustProblem, sample: Sample) -> Scan:
        """The sample's completion read in its program by the real lexer and parser."""
        return Scan.of(task, self.facts(task), self.completion(task, sample))

    def policy_violation(self, scan: Scan) -> policy.Violation | None:
        if not self.config.enforce_policy:
            return None
        return policy.check(scan.code, scan.bare, scan.clean)

    # -- toolchain and limits -----------------------------------------------------------

    @property
    def build(self) -> harness.RustBuild:
        """rustc and the crates, found/built on first use (not at import or load time)."""
        with self._lock:
            if self._build is None:
                toolchain = find_toolchain()
                self._build = harness.RustBuild(toolchain, ensure_crates(toolchain))
            return self._build

    def compile_limits(self) -> Limits:
        lim = self.config.limits
        return lim.model_copy(
            update={
                "timeout_s": self.config.compile_timeout_s,
                "memory_mb": max(lim.memory_mb, 2048),  # rustc itself needs room
                "pids": max(lim.pids, 64),  # rustc runs ~16 threads
                "cpu_s": None,
            }
        )

    def session_spec(self, label: str, files: dict[str, str | bytes]) -> SessionSpec:
        return SessionSpec(label=label, readonly_paths=self.build.readonly_paths(), files=files)

    def declared(self, task: RustProblem) -> list[str]:
        """Full paths (from the program's root) of the `#[test]` functions the task's test
        block defines: the tests a verdict binds to."""
        return list(self.facts(task).declared)

    # -- one sample alone ---------------------------------------------------------------

    def run_alone(
        self, task: RustProblem, sample: Sample, runner: TaskRunner, scan: Scan | None = None
    ) -> RustRun:
        scan = scan or self.scan(task, sample)
        if violation := self.policy_violation(scan):
            return RustRun(violation=violation)
        build = self.build
        session = runner.prepare(
            self.session_spec(task.task_id, {"main.rs": task.program(scan.code)})
        )
        try:
            out = RustRun()
            out.compile = runner.execute(
                session,
                build.compile_argv("main.rs", "main", "--error-format=json"),
                self.compile_limits(),
                env=build.env(),
            )
            if not out.compile.ok:
                out.syntax_error = self._syntax_error(out.compile, session, runner)
                return out
            if scan.tampering:  # judged without running what it compiled to
                out.tampering = scan.tampering
                return out
            limits = self.config.limits
            listing = runner.execute(
                session, ["./main", "--list", "--format", "terse"], limits, env=harness.RUN_ENV
            )
            if not listing.ok:
                out.listing_failure = listing
                return out
            out.listed = harness.listed_tests(listing)
            logname = f".libtest-{secrets.token_hex(8)}.log"
            out.run = runner.execute(
                session,
                ["./main", "--test-threads=1", "--logfile", logname],
                limits,
                env=harness.RUN_ENV,
            )
            out.log = harness.read_log(runner, session, logname)
            return out
        finally:
            runner.cleanup(session)

    def _syntax_error(
        self, comp: ExecutionResult, session: Session, runner: TaskRunner
    ) -> str | None:
        """main.rs's first syntax error, asked of rustfmt as a batch does (rustc can recover
        from one and report a type error before it), only when rustc saw one."""
        if comp.termination is not Termination.EXITED:
            return None
        errors, _ = harness.compiler_errors(comp.stderr, lambda name: name == "main.rs")
        if not any(e.parse for e in errors):
            return None
        limits = self.compile_limits()
        return harness.syntax_check(runner, session, self.build, ["main.rs"], limits).get("main.rs")

    # -- verdicts -----------------------------------------------------------------------

    @staticmethod
    def result(
        sample: Sample,
        passed: bool,
        reason: str,
        detail: str = "",
        *,
        evaluated: str = ALONE,
        **kw: Any,
    ) -> SampleResult:
        return SampleResult(
            task_id=sample.task_id,
            index=sample.index,
            passed=passed,
            reason=reason,
            detail=detail,
            completion_hash=sample.completion_hash,
            details={"evaluated": evaluated},
            **kw,
        )

    def infra_result(self, sample: Sample, detail: str) -> SampleResult:
        """The runner failed evaluating ``sample``: retried on resume."""
        return self.result(sample, False, Reason.INFRA, detail)

    def judge(self, task: RustProblem, sample: Sample, output: RustRun) -> SampleResult:
        """The verdict on a lone evaluation."""
        if output.violation is not None:
            return self.result(sample, False, Reason.POLICY, str(output.violation))
        assert output.compile is not None
        comp = output.compile
        if not comp.ok:
            return self._compile_failure(sample, comp, output.syntax_error)
        timing = measured(compile_s=comp.wall_s, cpu_s=comp.cpu_s)
        if output.tampering is not None:
            return self.result(sample, False, TAMPERED, output.tampering, measurements=timing)
        if output.listing_failure is not None:
            lf = output.listing_failure
            reason = (
                Reason.from_termination(lf.termination)
                if lf.termination is not Termination.EXITED
                else Reason.CRASH
            )
            return self.result(
                sample, False, reason, "the test binary failed to list its tests",
                measurements=timing, stderr=lf.stderr[:KEEP_OUTPUT],
            )  # fmt: skip
        assert output.run is not None and output.listed is not None
        verdict = harness.judge(output.run, output.listed, self.declared(task), output.log or {})
        return self.result(
            sample, verdict.passed, verdict.reason, verdict.detail,
            measurements=measured(
                compile_s=comp.wall_s, run_s=output.run.wall_s,
                cpu_s=comp.cpu_s + output.run.cpu_s,
                tests=(verdict.tests_passed, verdict.tests_expected),
            ),
            stdout=output.run.stdout[:KEEP_OUTPUT], stderr=output.run.stderr[:KEEP_OUTPUT],
        )  # fmt: skip

    def _compile_failure(
        self, sample: Sample, comp: ExecutionResult, syntax_error: str | None
    ) -> SampleResult:
        if comp.termination is Termination.EXITED:
            reason: str = Reason.COMPILE_ERROR
            detail = harness.compile_error_detail(comp, "main.rs", syntax_error)
        else:
            reason = Reason.from_termination(comp.termination)
            detail = f"compiler {comp.termination.value}"
        return self.result(
            sample, False, reason, detail,
            measurements=measured(compile_s=comp.wall_s, cpu_s=comp.cpu_s),
            stderr=harness.rendered_stderr(comp.stderr)[:KEEP_OUTPUT],
        )  # fmt: skip
