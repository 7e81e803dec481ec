"""Batched evaluation: many samples compiled as modules of one crate, one test binary.

Each sample's whole program (the same text a lone compile sees) is written as `t_<i>.rs`
and the program without its test block as `c_<i>.rs`. A unit of work runs in three steps:

1. check: one `--emit=metadata` compile of every sample's `c_<i>.rs` (about a quarter of
   the cost of compiling with the tests) finds the samples whose own code does not
   compile. Skipped when the run has seen so few compile errors that it would not pay.
2. build: the rest are compiled with their tests (`t_<i>.rs`) into one test binary; a
   sample whose test block then fails to compile is dropped and the rest built again.
3. run (``batch_run.py``): the tests, in one shared process or, for samples that could
   disturb it, alone.

A verdict depends only on the sample, its task and the settings, never on the other samples
of its unit (docs/batching.md has the full argument):

- only samples the real lexer reads cleanly and whose code can touch nothing outside its
  own module (``risk.py``: no crate-wide impls, symbols, link sections, allocators, macro
  definitions, process-wide state...) enter a batch; every other sample is evaluated alone,
  its own compile and process, exactly as ``--no-batch`` does.
- compile: errors are attributed to samples by the file names in rustc's JSON spans; a
  sample they point at is then evaluated alone, which is what reports its error (a batch
  never charges a compile error to a sample by itself). A syntax error found by rustfmt,
  which parses each file on its own, fails the sample directly. An error no sample can be
  blamed for splits the batch in two.
- the check sees the code without the tests, so it is used only where the tests cannot
  change whether that code compiles: the test block defines nothing but test functions,
  the code does not name anything the tests define, and it defines every function the
  tests call. Other samples are checked as whole programs.
- run: the members share one process, judged from libtest's log by their tests' full
  paths. If that process dies or times out, the sample that was running is run alone from
  the binary with exactly its own tests, and the rest in a new round.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vibes_eval.benchmarks.humaneval import judge
from vibes_eval.benchmarks.humaneval.judge import SHARED, measured
from vibes_eval.benchmarks.humaneval.rust import harness
from vibes_eval.benchmarks.humaneval.rust.batch_run import (
    BinaryRun,
    Member,
    in_parallel,
    sample_result,
)
from vibes_eval.benchmarks.humaneval.rust.risk import risk
from vibes_eval.benchmarks.humaneval.rust.scan import Scan
from vibes_eval.core.errors import RunnerError
from vibes_eval.core.runner import Session, TaskRunner
from vibes_eval.core.types import ExecutionResult, Reason, Sample, SampleResult, Termination

if TYPE_CHECKING:
    from vibes_eval.benchmarks.humaneval.run import RustEvaluator
    from vibes_eval.benchmarks.humaneval.tasks import RustProblem

__all__ = ["BatchRunner", "BatchStats", "plan"]

TARGET_SIZE = 250  # samples per unit: one check compile, then builds of the survivors
BUILD_SIZE = 180  # modules per build: larger builds are cheaper per module but a test
# block that fails to compile costs a rebuild of them all
FIRST_BUILD = 16  # a unit's first build: small, so that verdicts (and the progress bar's
# ETA) arrive after one short compile instead of the unit's largest; costs one more build
MIN_SPLIT = 4  # below this, a batch that fails mysteriously is evaluated sample by sample
CHECK_WORTH = 0.3  # a check compile costs ~0.3 of a failing build: worth it when a build
# fails with at least this probability

_MODULE_FILE = re.compile(r"(?:^|/)[tc]_(\d+)\.rs$")

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


@dataclass
class BatchStats:
    """What the run has seen so far, shared by its workers."""

    seen: int = 0
    compile_errors: int = 0
    fragile_tasks: set[str] = field(default_factory=set)  # test blocks that failed to build
    lock: threading.Lock = field(default_factory=threading.Lock)

    def want_check(self, n: int) -> bool:
        """Whether a check compile pays for itself: a build of ``n`` samples fails (and
        must be redone) with probability ``q``; the check costs ~CHECK_WORTH of that."""
        with self.lock:
            rate = (self.compile_errors + 1) / (self.seen + 2)
        return 1 - (1 - rate) ** n > CHECK_WORTH

    def count(self, seen: int, compile_errors: int) -> None:
        with self.lock:
            self.seen += seen
            self.compile_errors += compile_errors


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


class BatchRunner:
    """Evaluates one unit of samples in as few compiles as it can."""

    def __init__(
        self, ev: RustEvaluator, stats: BatchStats, runner: TaskRunner, on_result: OnResult
    ) -> None:
        self.ev = ev
        self.runner = runner
        self.on_result = on_result
        self.build = ev.build
        self.stats = stats
        self.errors_found = 0
        self.reported: set[tuple[str, int]] = set()

    # -- entry ------------------------------------------------------------------------

    def run(self, tasks: dict[str, RustProblem], unit: Sequence[Sample]) -> None:
        members: list[Member] = []
        alone: list[tuple[Sample, Scan]] = []
        unclear: list[tuple[Sample, Scan]] = []
        for n, sample in enumerate(unit):
            task = tasks[sample.task_id]
            scan = self.ev.scan(task, sample)
            # A policy violation is reported without compiling; a risky sample evaluated
            # exactly as --no-batch would; one the parser could not read (mostly syntax
            # errors) too, unless rustfmt finds its syntax error first.
            violation = self.ev.policy_violation(scan)
            if violation:  # known without compiling: reported now, not after the batch
                self.report(judge.result(sample, False, Reason.POLICY, str(violation)))
                continue
            if not scan.clean:
                unclear.append((sample, scan))
                continue
            if risk(scan):
                alone.append((sample, scan))
                continue
            head_check = task.task_id not in self.stats.fragile_tasks and (
                self.ev.facts(task).head_checkable(scan.code, scan.bare)
            )
            members.append(Member(n, sample, task, scan, head_check))
        # One rustfmt pass before the builds: its syntax errors are reported at once.
        # (The check heuristic counts the batch's own errors only, as it always did.)
        alone += self.screen_syntax(tasks, unclear)
        self.errors_found = 0
        if len(members) < 2:
            alone.extend((m.sample, m.scan) for m in members)
        else:
            try:
                left = self.run_batch(members)
            except RunnerError:
                # What the batch could not judge is judged alone; what it did stays.
                left = [m for m in members if m.sample.key not in self.reported]
            alone.extend((m.sample, m.scan) for m in left)
            self.stats.count(len(members), self.errors_found)
        in_parallel([functools.partial(self.solo, tasks[s.task_id], s, scan) for s, scan in alone])

    def solo(self, task: RustProblem, sample: Sample, scan: Scan | None = None) -> None:
        """Evaluate one sample exactly as --no-batch does. A runner failure is this
        sample's alone (an infra error, retried on resume), not its unit's."""
        try:
            output = self.ev.run_alone(task, sample, self.runner, scan)
        except RunnerError as exc:
            self.report(judge.infra(sample, f"{type(exc).__name__}: {exc}"))
            return
        self.report(judge.judge_alone(sample, output, self.ev.declared(task)))

    def screen_syntax(
        self, tasks: dict[str, RustProblem], samples: list[tuple[Sample, Scan]]
    ) -> list[tuple[Sample, Scan]]:
        """Report the syntax errors rustfmt finds in ``samples``' programs, each parsed on its
        own (one rustfmt process, no crate shared: no sample can cause or hide another's);
        returns the rest, to be evaluated alone."""
        if len(samples) < 2:
            return samples
        files = {f"u_{n}.rs": tasks[s.task_id].program(scan.code) for n, (s, scan) in
                 enumerate(samples)}  # fmt: skip
        try:
            with self.runner.session(self.ev.session_spec("syntax", dict(files))) as session:
                found = harness.syntax_check(
                    self.runner, session, self.build, list(files), self.ev.compile_limits()
                )
        except RunnerError:
            return samples
        left = []
        for n, (sample, scan) in enumerate(samples):
            error = found.get(f"u_{n}.rs")
            if error is None:
                left.append((sample, scan))
            else:
                self.errors_found += 1
                result = judge.result(
                    sample, False, Reason.COMPILE_ERROR, error,
                    evaluated=SHARED, measurements=measured(),
                )  # fmt: skip
                self.report(result)
        return left

    def report(self, result: SampleResult) -> None:
        self.reported.add(result.key)
        self.on_result(result)

    def run_batch(self, members: list[Member]) -> list[Member]:
        """Evaluate ``members`` in one work dir; returns those that must be evaluated alone."""
        files: dict[str, str | bytes] = {}
        for m in members:
            head = m.task.program_head(m.code)
            files[f"{m.module}.rs"] = head + m.task.test_block  # == task.program(code)
            if m.head_check:
                files[f"c_{m.i}.rs"] = head
        spec = self.ev.session_spec(f"batch-{members[0].sample.task_id}", files)
        with self.runner.session(spec) as session:
            alone: list[Member] = []
            if self.stats.want_check(len(members)):
                members, alone = self._check(session, members)
            for k, end in build_chunks(len(members)):
                alone += self._build(session, members[k:end])
            return alone

    # -- compiling ----------------------------------------------------------------------

    def _compile(
        self, session: Session, modules: dict[int, str], output: str, *extra: str
    ) -> ExecutionResult:
        """One rustc run over a crate root listing ``modules`` ({i: file of `t_<i>`})."""
        root = "".join(f'#[path = "{f}"]\nmod t_{i};\n' for i, f in sorted(modules.items()))
        self.runner.write_files(session, {"root.rs": root})
        return self.runner.execute(
            session,
            self.build.compile_argv("root.rs", output, *extra, "--error-format=json"),
            self.ev.compile_limits(),
            env=self.build.env(),
        )

    def _check(self, session: Session, members: list[Member]) -> tuple[list[Member], list[Member]]:
        """Report the members whose own code does not compile; returns (the rest, those to
        evaluate alone). Metadata only: no code generation, no linking."""
        active = {m.i: m for m in members}
        alone: list[Member] = []
        syntax_checked = [False]
        for _ in range(len(members) + 2):  # every round ends the loop or removes a member
            modules = {i: m.check_file for i, m in active.items()}
            comp = self._compile(session, modules, "check.rmeta", "--emit=metadata")
            if comp.ok or comp.termination is not Termination.EXITED:
                break  # a check that cannot finish leaves the work to the builds
            failed = compile_errors(comp.stderr)
            if self._triage(session, active, failed, syntax_checked, alone):
                continue
            if failed.orphan or not failed.per_module:
                break
            for i in failed.per_module:
                if i in active:
                    alone.append(self._blamed(active.pop(i)))
            # Syntax errors apart, one compile reports every module's errors; and what a
            # check misses, the build (the whole programs) still finds.
            break
        return list(active.values()), alone

    def _build(self, session: Session, members: list[Member]) -> list[Member]:
        """Compile ``members`` with their tests into one binary and run them; returns those
        that must be evaluated alone."""
        active = {m.i: m for m in members}
        alone: list[Member] = []
        compile_s = 0.0
        syntax_checked = [False]
        for _ in range(len(members) + 2):  # every round ends the loop or removes a member
            if len(active) < 2:
                break
            modules = {i: f"{m.module}.rs" for i, m in active.items()}
            comp = self._compile(session, modules, "batch", "-C", "codegen-units=1")
            compile_s += comp.wall_s
            if comp.ok:
                per_sample_s = compile_s / len(active)
                tests = BinaryRun(self.ev, self.runner, self.report)
                return alone + tests.run(session, list(active.values()), per_sample_s)
            if comp.termination is not Termination.EXITED:
                return alone + self._split(session, list(active.values()))
            failed = compile_errors(comp.stderr)
            if self._triage(session, active, failed, syntax_checked, alone):
                continue
            errors = {i: ds for i, ds in failed.per_module.items() if i in active}
            if failed.orphan or not errors:
                return alone + self._split(session, list(active.values()))
            for i in errors:
                m = active.pop(i)
                if m.head_check:  # its code checked clean: the test block failed
                    with self.stats.lock:
                        self.stats.fragile_tasks.add(m.task.task_id)
                alone.append(self._blamed(m))
        return alone + list(active.values())

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
        # not exist, a head that parses only with its test block): rustc may have stopped
        # at one, so those samples go alone and the rest compile again.
        for i, diags in failed.per_module.items():
            if i in active and any(d.parse for d in diags):
                alone.append(active.pop(i))
        return True

    def _drop_syntax_errors(self, session: Session, active: dict[int, Member]) -> bool:
        """Fail every module whose whole program has a syntax error; whether there was any."""
        files = [f"{active[i].module}.rs" for i in sorted(active)]
        found = harness.syntax_check(
            self.runner, session, self.build, files, self.ev.compile_limits()
        )
        dropped = [i for i, m in active.items() if f"{m.module}.rs" in found]
        for i in dropped:
            m = active.pop(i)
            self._fail_syntax(m, found[f"{m.module}.rs"])
        return bool(dropped)

    def _blamed(self, m: Member) -> Member:
        """A member rustc reported an error in: evaluated alone, which confirms the error
        (and reports it as a lone compile words it) or finds that a neighbour caused it."""
        self.errors_found += 1
        return m

    def _fail_syntax(self, m: Member, text: str) -> None:
        """A syntax error rustfmt found in the member's program, parsed on its own (rustfmt
        reads each file apart: no other sample can cause or hide it)."""
        self.errors_found += 1
        self.report(sample_result(m, False, Reason.COMPILE_ERROR, text))
