"""Batched evaluation: many candidates compiled as modules of one crate, each then run in
a process and a session of its own against its task's trusted test program (the split:
``split.py``, docs/integrity.md).

Each candidate's module (its program up to the task's tests, then the server) is written
as `t_<i>.rs`; a crate root of ours lists them and serves the one its first argument
names. A unit of work:

1. its tasks' test programs, built (or found built) from the tasks alone;
2. per sample, a static look (policy, reading, risk) decides where it goes: refused,
   screened for syntax errors, evaluated alone, or into the batch;
3. build: the members compiled into one binary, `BUILD_SIZE` at a time (a small first
   build, so that verdicts start early); a member rustc reports an error in, placed in its
   own file, fails with that error (no member can reach another's module), and the rest are
   built again; an error placed nowhere, or a compile that did not finish, halves the
   batch until its cause is found;
4. run: every member in a fresh session holding a copy of the binary, started as
   `./batch t_<i>`, paired with its task's test program (``split_run.serve``).

A verdict depends only on the sample, its task and the settings, never on the other samples
of its unit (docs/batching.md has the argument): only samples whose code provably cannot
reach the other modules of the crate enter a batch (``risk.py``: no macro definitions, no
file or environment macros, no `#[path]` or file modules, no unsafe, assembly, extern or
link attributes, nothing process-wide), and a candidate's verdict comes from its own
process's answers to a test program built without any sample.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vibes_eval.benchmarks.humaneval import judge
from vibes_eval.benchmarks.humaneval.judge import IN_PROCESS, SHARED, SPLIT, measured
from vibes_eval.benchmarks.humaneval.rust import harness, split, split_run
from vibes_eval.benchmarks.humaneval.rust.risk import risk
from vibes_eval.benchmarks.humaneval.rust.scan import Scan
from vibes_eval.benchmarks.humaneval.rust.split_run import (
    Built,
    SplitRun,
    TestProgram,
    TestSession,
)
from vibes_eval.core.errors import RunnerError
from vibes_eval.core.runner import Session, TaskRunner
from vibes_eval.core.system import usable_cpus
from vibes_eval.core.types import ExecutionResult, Reason, Sample, SampleResult, Termination

if TYPE_CHECKING:
    from vibes_eval.benchmarks.humaneval.run import RustEvaluator
    from vibes_eval.benchmarks.humaneval.tasks import RustProblem

__all__ = ["BatchRunner", "plan"]

TARGET_SIZE = 250  # samples per unit
BUILD_SIZE = 180  # modules per build: larger builds are cheaper per module, but one that
# fails costs a rebuild of them all
FIRST_BUILD = 16  # a unit's first build: small, so that verdicts (and the progress bar's
# ETA) arrive after one short compile instead of the unit's largest; costs one more build
MIN_SPLIT = 4  # below this, a batch that fails mysteriously is evaluated sample by sample

_MODULE_FILE = re.compile(r"(?:^|/)t_(\d+)\.rs$")

OnResult = Callable[[SampleResult], None]


def plan(samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
    """Even units of at most ~TARGET_SIZE, as many as a multiple of the workers (so none
    idles at the end while another works through a last unit)."""
    if not samples:
        return []
    workers = max(1, min(workers, len(samples)))
    n_units = workers * math.ceil(len(samples) / (workers * TARGET_SIZE))
    size = math.ceil(len(samples) / n_units)
    return [list(samples[i : i + size]) for i in range(0, len(samples), size)]


def build_chunks(n: int) -> list[tuple[int, int]]:
    """(start, end) of each build of ``n`` members: ``FIRST_BUILD`` first (when there
    are at least twice as many), then ``BUILD_SIZE`` at a time, a short tail joined to
    the build before it (a build of one is no build: its member would run alone)."""
    if n < 2 * FIRST_BUILD:
        return [(0, n)]
    cuts = [0, *range(FIRST_BUILD, n, BUILD_SIZE), n]
    if cuts[-1] - cuts[-2] < FIRST_BUILD:
        del cuts[-2]
    return list(itertools.pairwise(cuts))


def in_parallel(jobs: list[Callable[[], None]]) -> None:
    """Run jobs (each in sessions of its own) on every core: a sample stuck until its
    timeout then holds up one thread, not the whole unit."""
    if len(jobs) < 2:
        for job in jobs:
            job()
        return
    with ThreadPoolExecutor(min(len(jobs), usable_cpus())) as pool:
        for future in [pool.submit(job) for job in jobs]:
            future.result()


@dataclass
class Member:
    """One sample inside a batch; ``i`` names its module `t_<i>`."""

    i: int
    sample: Sample
    task: RustProblem
    scan: Scan  # the completion (after --extract) read in its program
    program: TestProgram  # its task's trusted test program

    @property
    def module(self) -> str:
        return f"t_{self.i}"

    @property
    def source(self) -> str:
        return self.program.plan.candidate(self.task, self.scan.code)


@dataclass
class Failed:
    """A compile that failed: the errors of each module, and whether any is unexplained."""

    per_module: dict[int, list[harness.Diagnostic]]
    orphan: bool

    @property
    def parse_stop(self) -> bool:
        return any(d.parse for ds in self.per_module.values() for d in ds)


def compile_errors(stderr: str) -> Failed:
    errors, _ = harness.compiler_errors(stderr, lambda name: bool(_MODULE_FILE.search(name)))
    per_module: dict[int, list[harness.Diagnostic]] = {}
    orphan = False
    for diag in errors:
        m = _MODULE_FILE.search(diag.file or "")
        if m is None:
            orphan = True
        else:
            per_module.setdefault(int(m.group(1)), []).append(diag)
    return Failed(per_module, orphan)


def shared_result(sample: Sample, reason: Reason, detail: str) -> SampleResult:
    """A failure found in a batch's shared steps (a syntax error rustfmt reads in the
    sample's own file)."""
    return judge.result(
        sample, False, reason, detail, trust=SPLIT, evaluated=SHARED, measurements=measured()
    )


def charged(
    sample: Sample, diags: list[harness.Diagnostic], comp: ExecutionResult, share: float
) -> SampleResult:
    """A compile error found in a batch, in the sample's own module: its first error in
    the file, as a lone compile words it (``harness.compile_error_detail``)."""
    timing = measured(compile_s=share, cpu_s=comp.cpu_s * share / max(comp.wall_s, 1e-9))
    shown = "".join(d.rendered for d in diags)[: judge.KEEP_OUTPUT]
    return judge.result(
        sample, False, Reason.COMPILE_ERROR, harness.first_error(diags).text, trust=SPLIT,
        evaluated=SHARED, measurements=timing, stderr=shown,
    )  # fmt: skip


class BatchRunner:
    """Evaluates one unit of samples in as few compiles as it can."""

    def __init__(self, ev: RustEvaluator, runner: TaskRunner, on_result: OnResult) -> None:
        self.ev = ev
        self.runner = runner
        self.on_result = on_result
        self.build = ev.build
        self.reported: set[tuple[str, int]] = set()

    # -- entry ------------------------------------------------------------------------

    def run(self, tasks: dict[str, RustProblem], unit: Sequence[Sample]) -> None:
        try:
            programs = self.ev.tests.get(tasks, (s.task_id for s in unit), self.runner)
        except RunnerError as exc:
            for sample in unit:
                self.report(judge.infra(sample, f"{type(exc).__name__}: {exc}", SPLIT))
            return
        members: list[Member] = []
        alone: list[tuple[Sample, Scan | None]] = []
        unclear: list[tuple[Sample, Scan, TestProgram]] = []
        for n, sample in enumerate(unit):
            task, program = tasks[sample.task_id], programs[sample.task_id]
            if isinstance(program, str):  # in-process: always alone
                alone.append((sample, None))
                continue
            scan = self.ev.scan(task, sample)
            # A policy violation is reported without compiling; a risky sample evaluated
            # exactly as --no-batch would; one the parser could not read (mostly syntax
            # errors) too, unless rustfmt finds its syntax error first.
            violation = self.ev.policy_violation(scan)
            if violation:
                self.report(judge.result(sample, False, Reason.POLICY, str(violation), trust=SPLIT))
            elif not scan.clean:
                unclear.append((sample, scan, program))
            elif risk(scan):
                alone.append((sample, scan))
            else:
                members.append(Member(n, sample, task, scan, program))
        alone += self.screen_syntax(tasks, unclear)
        if len(members) < 2:
            alone.extend((m.sample, m.scan) for m in members)
        else:
            try:
                left = self.run_batch(members)
            except RunnerError:
                # What the batch could not judge is judged alone; what it did stays.
                left = [m for m in members if m.sample.key not in self.reported]
            alone.extend((m.sample, m.scan) for m in left)
        jobs = [functools.partial(self.solo, tasks[s.task_id], s, scan, programs[s.task_id])
                for s, scan in alone]  # fmt: skip
        in_parallel(jobs)

    def solo(self, task: RustProblem, sample: Sample, scan: Scan | None, program: Built) -> None:
        """Evaluate one sample exactly as --no-batch does. A runner failure is this
        sample's alone (an infra error, retried on resume), not its unit's."""
        trust = IN_PROCESS if isinstance(program, str) else SPLIT
        try:
            output = self.ev.run_alone(task, sample, self.runner, scan)
        except RunnerError as exc:
            self.report(judge.infra(sample, f"{type(exc).__name__}: {exc}", trust))
            return
        self.report(judge.judge(sample, output, self.ev.declared(task)))

    def screen_syntax(
        self, tasks: dict[str, RustProblem], samples: list[tuple[Sample, Scan, TestProgram]]
    ) -> list[tuple[Sample, Scan | None]]:
        """Report the syntax errors rustfmt finds in ``samples``' candidate modules, each
        parsed on its own (one rustfmt process, no crate shared: no sample can cause or
        hide another's); returns the rest, to be evaluated alone."""
        if len(samples) < 2:
            return [(s, scan) for s, scan, _ in samples]
        files = {f"u_{n}.rs": p.plan.candidate(tasks[s.task_id], scan.code)
                 for n, (s, scan, p) in enumerate(samples)}  # fmt: skip
        try:
            with self.runner.session(self.ev.session_spec("syntax", dict(files))) as session:
                found = harness.syntax_check(
                    self.runner, session, self.build, list(files), self.ev.compile_limits()
                )
        except RunnerError:
            return [(s, scan) for s, scan, _ in samples]
        left: list[tuple[Sample, Scan | None]] = []
        for n, (sample, scan, _) in enumerate(samples):
            error = found.get(f"u_{n}.rs")
            if error is None:
                left.append((sample, scan))
            else:
                self.report(shared_result(sample, Reason.COMPILE_ERROR, error))
        return left

    def report(self, result: SampleResult) -> None:
        self.reported.add(result.key)
        self.on_result(result)

    def run_batch(self, members: list[Member]) -> list[Member]:
        """Evaluate ``members`` in one work dir; returns those that must be evaluated alone."""
        files = self.ev.wire.files(self.runner)
        files.update({f"{m.module}.rs": m.source for m in members})
        spec = self.ev.session_spec(f"batch-{members[0].sample.task_id}", files)
        with self.runner.session(spec) as session:
            alone: list[Member] = []
            for k, end in build_chunks(len(members)):
                alone += self._build(session, members[k:end])
            return alone

    # -- compiling ----------------------------------------------------------------------

    def _compile(self, session: Session, members: dict[int, Member]) -> ExecutionResult:
        """One rustc run over a crate root listing ``members``' modules."""
        modules = {m.module: f"{m.module}.rs" for _, m in sorted(members.items())}
        root = split.candidate_root(modules)
        self.runner.write_files(session, {"root.rs": root})
        return self.runner.execute(
            session,
            split_run.program_argv(self.ev, "root.rs", "batch", "-C", "codegen-units=1",
                                   "--error-format=json"),
            self.ev.compile_limits(),
            env=self.build.env(),
        )  # fmt: skip

    def _build(self, session: Session, members: list[Member]) -> list[Member]:
        """Compile ``members`` into one binary and serve each from it; returns those that
        must be evaluated alone."""
        active = {m.i: m for m in members}
        alone: list[Member] = []
        compile_s = 0.0
        syntax_checked = [False]
        for _ in range(len(members) + 2):  # every round ends the loop or removes a member
            if len(active) < 2:
                break
            comp = self._compile(session, active)
            compile_s += comp.wall_s
            if comp.ok:
                self._serve(session, list(active.values()), comp, compile_s)
                return alone
            if comp.termination is not Termination.EXITED:
                return alone + self._split(session, list(active.values()))
            failed = compile_errors(comp.stderr)
            if self._triage(session, active, failed, syntax_checked, alone):
                continue
            errors = {i: ds for i, ds in failed.per_module.items() if i in active}
            if failed.orphan or not errors:
                return alone + self._split(session, list(active.values()))
            # An error placed in a member's own file is its own: no batch member can reach
            # another's module (risk.py), so it fails alone too (docs/batching.md).
            share = comp.wall_s / len(active)
            for i, diags in errors.items():
                self.report(charged(active.pop(i).sample, diags, comp, share))
        return alone + list(active.values())

    def _serve(
        self, session: Session, members: list[Member], comp: ExecutionResult, compile_s: float
    ) -> None:
        """Each member against its task's test program, in sessions of their own."""
        binary = self.runner.read_file(session, "batch")
        share = comp.model_copy(
            update={"wall_s": compile_s / len(members), "cpu_s": comp.cpu_s / len(members)}
        )
        with TestSession(self.ev, self.runner) as tests:
            in_parallel([functools.partial(self._serve_one, tests, m, binary, share)
                         for m in members])  # fmt: skip

    def _serve_one(
        self, tests: TestSession, m: Member, binary: bytes, share: ExecutionResult
    ) -> None:
        try:
            pair = split_run.serve(self.ev, self.runner, tests, m.program, binary, m.module)
        except RunnerError as exc:
            self.report(judge.infra(m.sample, f"{type(exc).__name__}: {exc}", SPLIT))
            return
        out = SplitRun(m.program.plan.tests, compile=share, pair=pair)
        self.report(judge.judge_split(m.sample, out, evaluated=SHARED))

    def _split(self, session: Session, members: list[Member]) -> list[Member]:
        """A failure no sample can be blamed for: halve the batch until it is found."""
        if len(members) < MIN_SPLIT:
            return members
        half = len(members) // 2
        return self._build(session, members[:half]) + self._build(session, members[half:])

    def _triage(
        self,
        session: Session,
        active: dict[int, Member],
        failed: Failed,
        syntax_checked: list[bool],
        alone: list[Member],
    ) -> bool:
        """Deal with the syntax errors of a failed compile; True when it must run again
        before any error can be reported. rustc stops at a file it cannot parse, so after
        one, no module's errors are known to be complete."""
        if not failed.parse_stop:
            return False
        if not syntax_checked[0]:
            syntax_checked[0] = True
            if self._drop_syntax_errors(session, active):
                return True
        # Errors without a code that rustfmt does not call syntax errors (a macro that does
        # not exist): rustc may have stopped at one, so those samples go alone and the rest
        # compile again.
        for i, diags in failed.per_module.items():
            if i in active and any(d.parse for d in diags):
                alone.append(active.pop(i))
        return True

    def _drop_syntax_errors(self, session: Session, active: dict[int, Member]) -> bool:
        """Fail every module that has a syntax error (rustfmt reads each file apart: no
        other sample can cause or hide it); whether there was any."""
        files = [f"{active[i].module}.rs" for i in sorted(active)]
        found = harness.syntax_check(
            self.runner, session, self.build, files, self.ev.compile_limits()
        )
        dropped = [i for i, m in active.items() if f"{m.module}.rs" in found]
        for i in dropped:
            m = active.pop(i)
            self.report(shared_result(m.sample, Reason.COMPILE_ERROR, found[f"{m.module}.rs"]))
        return bool(dropped)
