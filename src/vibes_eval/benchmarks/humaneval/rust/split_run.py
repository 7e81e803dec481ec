"""Running the trusted-test split (``split.py`` writes the programs, docs/integrity.md
argues it):

- ``WireLibrary``: ``wire.rs`` compiled once per run into the library both programs link.
- ``TestPrograms``: the run's trusted test binaries, built from tasks alone in sessions of
  their own (no sample's code is ever in them), several tasks per build, each once per run.
- ``build_candidate``: one candidate compiled in a session that holds only its own files.
- ``TestSession`` and ``serve``: one sample's pair run, the test binary in a session no
  sample runs in and the candidate binary in a fresh session of its own.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vibes_eval.benchmarks.common.rules import Violation
from vibes_eval.benchmarks.humaneval.rust import harness, split
from vibes_eval.benchmarks.humaneval.rust.split import Plan
from vibes_eval.core.errors import RunnerError
from vibes_eval.core.pair import PairResult, Side, run_pair
from vibes_eval.core.runner import Session, TaskRunner
from vibes_eval.core.types import ExecutionResult, Termination

if TYPE_CHECKING:
    from vibes_eval.benchmarks.humaneval.run import RustEvaluator
    from vibes_eval.benchmarks.humaneval.tasks import RustProblem

# wire.rs's words (tests/humaneval/test_split.py checks they agree)
DONE = "\x02T done"  # the last line of a test program whose tests all returned
ENDED = "the candidate ended without answering"  # a stub's panic at EOF
_TEST_MODULE = re.compile(r"(?:^|/)(k_\d+)\.rs$")
TEST_MEMORY_MB = 1024  # at least: the test side decodes answers of up to 64 MiB


class WireLibrary:
    """``wire.rs`` as an rlib, built once per run in a session of its own: a candidate's
    compile then costs what its own code does (~0.1 s), not the wire's parser and impls
    (~0.4 s more, per candidate compiled alone)."""

    def __init__(self, ev: RustEvaluator) -> None:
        self.ev = ev
        self._rlib: bytes | None = None
        self._lock = threading.Lock()

    def files(self, runner: TaskRunner) -> dict[str, str | bytes]:
        """What a program's build session needs of the wire."""
        with self._lock:
            if self._rlib is None:
                self._rlib = self._build(runner)
            return {split.WIRE_RLIB: self._rlib}

    def _build(self, runner: TaskRunner) -> bytes:
        """Raises: RunnerError (the library does not compile: a harness bug)."""
        build = self.ev.build
        with runner.session(self.ev.session_spec("wire", {"wire.rs": split.wire_source()})) as s:
            argv = build.library_argv("wire.rs", split.WIRE_RLIB, split.WIRE_CRATE)
            comp = runner.execute(s, argv, self.ev.compile_limits(), env=build.env())
            if not comp.ok:
                raise RunnerError(f"building the wire library: {comp.stderr.strip()[:300]}")
            return runner.read_file(s, split.WIRE_RLIB)


def program_argv(ev: RustEvaluator, source: str, output: str, *extra: str) -> list[str]:
    """A split program's compile: a plain binary (our main), linked with the wire. With
    `cfg(test)` set, as a libtest build sets it: the task's `#[cfg(test)] mod tests` is
    compiled, and a completion's code sees the same configuration as in-process."""
    wire = f"{split.WIRE_CRATE}={split.WIRE_RLIB}"
    return ev.build.binary_argv(source, output, "--cfg", "test", "--extern", wire, *extra)


@dataclass(frozen=True)
class TestProgram:
    """A task's trusted test binary (shared with other tasks: ``module`` picks its tests)."""

    binary: bytes
    module: str
    plan: Plan


Built = TestProgram | str  # a program, or why the task's samples are judged in-process


class TestPrograms:
    """The run's test binaries, per task. A build covers the tasks a unit asks for and
    the others expected with them (``expect``); a task asked for while another unit
    builds it waits for that build."""

    def __init__(self, ev: RustEvaluator) -> None:
        self.ev = ev
        self._built: dict[str, Future[Built]] = {}
        self._groups: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count()

    def expect(self, groups: Iterable[Iterable[str]]) -> None:
        """Task ids that are best built together (a unit's, or a worker's share)."""
        with self._lock:
            for group in groups:
                ids = tuple(dict.fromkeys(group))
                for tid in ids:
                    self._groups[tid] = ids

    def get(
        self, tasks: Mapping[str, RustProblem], ids: Iterable[str], runner: TaskRunner
    ) -> dict[str, Built]:
        """The program of each of ``ids`` (building what no one has yet).

        Raises:
            RunnerError: a build failed for a reason no task can be blamed for.
        """
        ids = list(dict.fromkeys(ids))
        mine: dict[str, Future[Built]] = {}
        with self._lock:
            for tid in ids:
                for other in self._groups.get(tid, (tid,)):
                    if other in tasks and other not in self._built:
                        self._built[other] = mine[other] = Future()
            waiting = {tid: self._built[tid] for tid in ids}
        if mine:
            self._build_all({tid: tasks[tid] for tid in mine}, mine, runner)
        return {tid: f.result() for tid, f in waiting.items()}

    def _build_all(
        self, tasks: dict[str, RustProblem], futures: dict[str, Future[Built]], runner: TaskRunner
    ) -> None:
        plans: dict[str, Plan] = {}
        for tid, task in tasks.items():
            p = self.ev.plan(task)
            if isinstance(p, str):
                futures[tid].set_result(p)
            else:
                plans[tid] = p
        try:
            built = self._build(plans, runner) if plans else {}
        except BaseException as exc:
            with self._lock:  # a later unit tries again
                for tid in plans:
                    self._built.pop(tid, None)
            for tid in plans:
                futures[tid].set_exception(exc)
            raise
        for tid, result in built.items():
            futures[tid].set_result(result)

    def _build(self, plans: dict[str, Plan], runner: TaskRunner) -> dict[str, Built]:
        """``_build_once``, in halves when a build cannot finish (its compile timed out on
        a loaded machine): a failure of one task is no reason to fail many."""
        try:
            return self._build_once(plans, runner)
        except _Unfinished as exc:
            if len(plans) < 2:
                raise RunnerError(str(exc)) from None
        items = list(plans.items())
        half = len(items) // 2
        return self._build(dict(items[:half]), runner) | self._build(dict(items[half:]), runner)

    def _build_once(self, plans: dict[str, Plan], runner: TaskRunner) -> dict[str, Built]:
        """Compile ``plans``' test modules into one binary; a module rustc reports an
        error in is left out (its task is judged in-process) and the rest compiled again."""
        modules = {f"k_{next(self._ids)}": (tid, p) for tid, p in plans.items()}
        files = self.ev.wire.files(runner)
        files.update({f"{m}.rs": p.test_module for m, (_, p) in modules.items()})
        out: dict[str, Built] = {}
        env = self.ev.build.env()
        with runner.session(self.ev.session_spec("tests", files)) as session:
            while modules:
                root = split.test_root({m: p for m, (_, p) in modules.items()})
                runner.write_files(session, {"tests.rs": root})
                argv = program_argv(self.ev, "tests.rs", "tests", "--error-format=json")
                comp = runner.execute(session, argv, self.ev.compile_limits(), env=env)
                if comp.ok:
                    binary = runner.read_file(session, "tests")
                    return out | {tid: TestProgram(binary, m, p) for m, (tid, p) in modules.items()}
                for m, error in _blame(comp).items():
                    tid, _ = modules.pop(m)
                    out[tid] = f"its test program does not compile ({error})"
        return out


class _Unfinished(Exception):
    """A test build that ended without a verdict of the compiler's (timeout, memory)."""


def _blame(comp: ExecutionResult) -> dict[str, str]:
    """{test module: its first error} of a failed build.

    Raises:
        _Unfinished: the compiler did not finish.
        RunnerError: its errors are in no module.
    """
    if comp.termination is not Termination.EXITED:
        raise _Unfinished(f"building the tests' programs: compiler {comp.termination.value}")
    errors, _ = harness.compiler_errors(comp.stderr, lambda n: bool(_TEST_MODULE.search(n)))
    blamed: dict[str, list[harness.Diagnostic]] = {}
    for e in errors:
        if m := _TEST_MODULE.search(e.file or ""):
            blamed.setdefault(m.group(1), []).append(e)
    if not blamed:
        first = errors[0].text if errors else harness.rendered_stderr(comp.stderr)[:200]
        raise RunnerError(f"building the tests' programs failed: {first}")
    return {m: harness.first_error(ds).text for m, ds in blamed.items()}


# -- the candidate --------------------------------------------------------------------------


@dataclass
class SplitRun:
    """Everything one sample's split evaluation observed."""

    tests: tuple[str, ...]  # the tests its test program runs
    violation: Violation | None = None
    compile: ExecutionResult | None = None
    syntax_error: str | None = None
    pair: PairResult | None = None


@dataclass
class CandidateBuild:
    compile: ExecutionResult
    binary: bytes | None = None
    syntax_error: str | None = None


CANDIDATE_FILE = "main.rs"  # a lone candidate's crate root, named as its errors show it


def build_candidate(
    ev: RustEvaluator, task: RustProblem, p: Plan, code: str, runner: TaskRunner
) -> CandidateBuild:
    """Compile one candidate alone, in a session holding nothing but its own files."""
    files = ev.wire.files(runner)
    files[CANDIDATE_FILE] = split.lone_candidate(p.candidate(task, code))
    with runner.session(ev.session_spec(task.task_id, files)) as session:
        argv = program_argv(ev, CANDIDATE_FILE, "cand", "--error-format=json")
        comp = runner.execute(session, argv, ev.compile_limits(), env=ev.build.env())
        comp = harness.session_relative(comp, session)
        if not comp.ok:
            return CandidateBuild(comp, syntax_error=ev.syntax_error(comp, session, runner))
        return CandidateBuild(comp, runner.read_file(session, "cand"))


# -- the pair run ----------------------------------------------------------------------------


class TestSession:
    """A session holding test binaries and nothing else; pair runs may share it (the
    trusted test programs write nothing)."""

    def __init__(self, ev: RustEvaluator, runner: TaskRunner) -> None:
        self.ev = ev
        self.runner = runner
        self._names: dict[int, str] = {}
        self._stack = contextlib.ExitStack()
        self._session: Session | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> TestSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def argv(self, program: TestProgram) -> list[str]:
        """The command that runs ``program``'s tests (installing its binary once)."""
        with self._lock:
            if self._session is None:
                spec = self.ev.session_spec("tests", {})
                self._session = self._stack.enter_context(self.runner.session(spec))
            name = self._names.get(id(program.binary))
            if name is None:
                name = f"tests_{len(self._names)}"
                self.runner.write_programs(self._session, {name: program.binary})
                self._names[id(program.binary)] = name
        return [f"./{name}", program.module]

    @property
    def session(self) -> Session:
        assert self._session is not None
        return self._session


def serve(
    ev: RustEvaluator,
    runner: TaskRunner,
    tests: TestSession,
    program: TestProgram,
    binary: bytes,
    module: str,
) -> PairResult:
    """One pair run: ``program``'s tests against the candidate ``module`` of ``binary``,
    which runs in a fresh session of its own."""
    test_argv = tests.argv(program)
    limits = ev.config.limits
    test_limits = limits.model_copy(update={"memory_mb": max(limits.memory_mb, TEST_MEMORY_MB)})
    with runner.session(ev.session_spec(f"cand-{program.plan.task_id}", {})) as cand:
        runner.write_programs(cand, {"cand": binary})
        return run_pair(
            runner,
            Side(tests.session, test_argv, test_limits, env=harness.RUN_ENV),
            Side(cand, ["./cand", module], limits, env=harness.RUN_ENV),
        )


# -- what the test program reported ------------------------------------------------------------


@dataclass
class TestReport:
    """The test program's stderr, read: each test's end, and the done marker."""

    ok: list[str]
    failed: list[tuple[str, str]]  # (test, its panic message)
    running: str | None  # the test that had started and not ended
    done: bool


_LINE = re.compile(r"^\x02T (start|ok|failed) (\S+)(?: (.*))?$")


def read_report(stderr: str) -> TestReport:
    report = TestReport([], [], None, False)
    lines = stderr.rstrip("\n").split("\n")
    for line in lines:
        m = _LINE.match(line)
        if m is None:
            continue
        kind, name, rest = m.groups()
        if kind == "start":
            report.running = name
            continue
        report.running = None
        if kind == "ok":
            report.ok.append(name)
        else:
            try:
                message = json.loads(rest or '""')
            except ValueError:
                message = rest or ""
            report.failed.append((name, str(message)))
    report.done = bool(lines) and lines[-1] == DONE
    return report


def passed(test: ExecutionResult, report: TestReport, expected: tuple[str, ...]) -> bool:
    """The test program ended by itself with 0, its last line the done marker, every
    test it was built with reported ok."""
    return (
        test.termination is Termination.EXITED
        and test.exit_code == 0
        and report.done
        and not report.failed
        and report.ok == list(expected)
    )


def shown(report: TestReport) -> str:
    """The test run as a person reads it (the result's stdout)."""
    lines = [f"test {n} ... ok" for n in report.ok]
    lines += [f"test {n} ... FAILED" for n, _ in report.failed]
    for name, message in report.failed:
        lines += ["", f"---- {name} ----", message]
    if report.running:
        lines.append(f"test {report.running} ... (did not end)")
    return "\n".join(lines) + ("\n" if lines else "")
