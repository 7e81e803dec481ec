"""How samples are run: the plan (units of samples), then each unit's sessions.

**The split** (docs/integrity.md; ``CompiledUnits`` for a task whose language gives a
``TestProgram``): the task's trusted test program is built once per run in a session of
its own; each sample's candidate is built in a session holding only its own files, then
runs beside a fresh copy of the test program (``core.pair``), which alone decides.

**In-process** (MultiPL-E's scripting languages, and tasks the wire cannot carry;
results say ``trust: in-process``): build, then run with the harness's token. A unit of
samples shares one build session: each task's trusted test parts are built once
(``task_dir``), each sample in a folder of its own (``s<i>``), with the same command and
the same folder names as alone, so compile errors read the same batched or not. A sample's
program then runs in a fresh session of its own (nothing another sample wrote can reach
it), gets the token on stdin, and passes only when it exits 0 having printed the token
last, which the language's harness code does only after the test's `main` returned
normally (the token is not in the program: reading it needs stdin, which the policy filter
refuses to completions).

**Python** (``PythonUnits``): a unit runs as one sandboxed command, the trusted harness
with a fork server (``python/``). The harness reports one line per sample, led by a token
only this process and the harness know. Samples it could not report (its process died or
ran out of time) are evaluated again: the one that was running alone, the rest in a new
round, so no sample's verdict depends on the others in its unit (docs/multilang.md).
"""

from __future__ import annotations

import json
import math
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vibes_eval.benchmarks.multilang import judge
from vibes_eval.benchmarks.multilang.config import CompiledConfig, PythonConfig
from vibes_eval.benchmarks.multilang.languages import policy
from vibes_eval.benchmarks.multilang.languages.base import (
    Build,
    Language,
    TestProgram,
    fenced,
    task_dir,
)
from vibes_eval.benchmarks.multilang.python import unit as py
from vibes_eval.benchmarks.multilang.samples import truncate
from vibes_eval.benchmarks.multilang.tasks import CodeTask
from vibes_eval.core.benchmark import OnResult
from vibes_eval.core.errors import UserError
from vibes_eval.core.pair import PairResult, Side, run_pair
from vibes_eval.core.runner import NetworkPolicy, SandboxPolicy, Session, SessionSpec, TaskRunner
from vibes_eval.core.types import ExecutionResult, Limits, Sample, SampleResult

JUDGE = "split/1"  # how compiled languages are judged; a change invalidates cached verdicts
PYTHON_UNIT = 200  # Python samples per sandboxed process
COMPILED_UNIT = 32  # samples per build session
MAX_ROUNDS = 8  # Python rounds of one command each; then whatever is left runs alone


# -- the plan ---------------------------------------------------------------------------------


def plan_units(samples: Sequence[Sample], workers: int, size: int) -> list[list[Sample]]:
    """Even units of at most ~``size``, as many as a multiple of the workers."""
    if not samples:
        return []
    workers = max(1, min(workers, len(samples)))
    n_units = workers * math.ceil(len(samples) / (workers * size))
    step = math.ceil(len(samples) / n_units)
    return [list(samples[i : i + step]) for i in range(0, len(samples), step)]


def plan_by_task(samples: Sequence[Sample], workers: int, size: int) -> list[list[Sample]]:
    """Units of samples of as few tasks as possible (each task's test is built once per
    unit), in task order, at most ``size`` each and at least one per worker."""
    order = {tid: n for n, tid in enumerate(dict.fromkeys(s.task_id for s in samples))}
    ordered = sorted(samples, key=lambda s: order[s.task_id])
    return plan_units(ordered, workers, size)


# -- languages with a test `main` -------------------------------------------------------------


class CompiledUnits:
    """Runs units of samples of one language with a test `main`."""

    def __init__(self, language: Language, config: CompiledConfig) -> None:
        self.lang = language
        self.config = config
        self.tests = TestPrograms(self)

    def check_available(self) -> None:
        """Raises: UserError naming the missing toolchain."""
        why = self.lang.missing()
        if why is not None:
            raise UserError(f"{self.lang.name} samples cannot be evaluated here: {why}")

    def code(self, problem: CodeTask, sample: Sample) -> str:
        code = sample.completion
        if self.config.extract == "auto" and "```" in code:
            code = fenced(code, self.lang.fence_tags)
        if self.config.stop_tokens and problem.stop_tokens:
            code = truncate(code, problem.stop_tokens)
        return code

    def compile_limits(self) -> Limits:
        lim = self.config.limits
        return lim.model_copy(
            update={
                "timeout_s": self.config.compile_timeout_s,
                "memory_mb": max(lim.memory_mb, 2048),
                "pids": max(lim.pids, 64),
                "cpu_s": None,
            }
        )

    def spec(
        self, label: str, files: dict[str, str | bytes], network: NetworkPolicy | None = None
    ) -> SessionSpec:
        sandbox = SandboxPolicy(
            readonly_paths=tuple(self.lang.readonly_paths()),
            network=network or NetworkPolicy.DISABLED,
        )
        return SessionSpec(label=label, files=files, policy=sandbox)

    def run(
        self,
        tasks: dict[str, CodeTask],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        todo: list[tuple[int, Sample, CodeTask, str]] = []
        for n, sample in enumerate(unit):
            problem = tasks[sample.task_id]
            code = self.code(problem, sample)
            found = policy.check(self.lang.name, code) if self.config.enforce_policy else None
            if found is not None:
                on_result(judge.policy_refusal(sample, found))
            else:
                todo.append((n, sample, problem, code))
        todo = [t for t in todo if not self.split(runner, *t, on_result)]
        if not todo:
            return
        build_spec = self.spec(f"{self.lang.name}-build", {}, self.lang.build_network)
        with runner.session(build_spec) as session:
            broken = self.build_tasks(session, runner, {p.task_id: p for _, _, p, _ in todo})
            for n, sample, problem, code in todo:
                if problem.task_id in broken:
                    on_result(judge.untestable(sample, broken[problem.task_id]))
                    continue
                on_result(self.one(session, runner, n, sample, problem, code))

    # -- the split ------------------------------------------------------------------------

    def split(
        self, runner: TaskRunner, _n: int, sample: Sample, problem: CodeTask, code: str,
        on_result: OnResult,
    ) -> bool:  # fmt: skip
        """Judge ``sample`` on the split when its task has a test program; False when it
        has none (the sample goes the in-process way)."""
        test = self.tests.get(runner, problem)
        if test is None:
            return False
        if isinstance(test, str):
            on_result(judge.untestable(sample, test))
        else:
            on_result(self.one_split(runner, sample, problem, code, test))
        return True

    def one_split(
        self, runner: TaskRunner, sample: Sample, problem: CodeTask, code: str, test: BuiltTest
    ) -> SampleResult:
        """Build the candidate alone, then run it beside a fresh copy of the test program."""
        build = self.lang.candidate(problem, code)
        compile_s = 0.0
        spec = self.spec(f"{self.lang.name}-candidate-build", dict(build.files),
                         self.lang.build_network)  # fmt: skip
        with runner.session(spec) as session:
            if build.argv is not None:
                res = runner.execute(
                    session, build.argv, self.compile_limits(), env=self.lang.build_env()
                )
                compile_s = res.wall_s
                if not res.ok:
                    return judge.compile_failure(self.lang, sample, res)
            files = {name: runner.read_file(session, name) for name in build.run_files}
        pair = self.run_pair(runner, build, files, test)
        return judge.split_run(self.lang, sample, pair, compile_s)

    def run_pair(
        self, runner: TaskRunner, build: Build, files: dict[str, bytes], test: BuiltTest
    ) -> PairResult:
        """The candidate and the test program, each in a fresh session of its own."""
        name = self.lang.name
        cand_spec, test_spec = self.spec(f"{name}-candidate", {}), self.spec(f"{name}-test", {})
        limits = self.config.limits
        # the test waits on the candidate: its limit a little later, so a candidate that
        # runs out of time is the one reported
        test_limits = limits.model_copy(update={"timeout_s": limits.timeout_s + 2.0})
        with runner.session(cand_spec) as cs, runner.session(test_spec) as ts:
            runner.write_programs(cs, files)
            runner.write_programs(ts, test.files)
            pair = run_pair(
                runner,
                Side(ts, test.program.run_argv, test_limits, env=test.program.run_env),
                Side(cs, build.run_argv, limits, env=build.run_env),
            )
        return PairResult(test=unplaced(pair.test, ts), candidate=unplaced(pair.candidate, cs))

    # -- in-process -------------------------------------------------------------------------

    def build_tasks(
        self, session: Session, runner: TaskRunner, problems: dict[str, CodeTask]
    ) -> dict[str, str]:
        """Build each task's test parts; {task id: why it could not be built}."""
        broken: dict[str, str] = {}
        for tid, problem in problems.items():
            folder = task_dir(tid)
            try:
                files = self.lang.task_files(problem)
            except UserError as exc:
                broken[tid] = f"the task's test cannot be built: {exc}"
                continue
            runner.write_files(session, {f"{folder}/{k}": v for k, v in files.items()})
            argv = self.lang.task_argv(problem)
            if argv is None:
                continue
            res = runner.execute(
                session, argv, self.compile_limits(), env=self.lang.build_env(), cwd=folder
            )
            if not res.ok:
                broken[tid] = f"the task's test does not build: {self.lang.compile_detail(res)}"
        return broken

    def one(
        self,
        session: Session,
        runner: TaskRunner,
        n: int,
        sample: Sample,
        problem: CodeTask,
        code: str,
    ) -> SampleResult:
        build = self.lang.build(problem, code)
        folder = f"s{n}"
        runner.write_files(session, {f"{folder}/{k}": v for k, v in build.files.items()})
        compile_s = 0.0
        if build.argv is not None:
            res = runner.execute(
                session, build.argv, self.compile_limits(), env=self.lang.build_env(), cwd=folder
            )
            compile_s = res.wall_s
            if not res.ok:
                return judge.compile_failure(self.lang, sample, res)
        archive = {name: runner.read_file(session, f"{folder}/{name}") for name in build.run_files}
        return self.execute_run(runner, sample, build, archive, compile_s)

    def execute_run(
        self, runner: TaskRunner, sample: Sample, build: Build, files: dict[str, bytes],
        compile_s: float,
    ) -> SampleResult:  # fmt: skip
        """The sample's program in a fresh session, with the token on stdin."""
        token = secrets.token_hex(16)
        with runner.session(self.spec(f"{self.lang.name}-run", {})) as session:
            runner.write_programs(session, files)
            run = runner.execute(
                session, build.run_argv, self.config.limits, env=build.run_env,
                stdin=(token + "\n").encode(),
            )  # fmt: skip
        return judge.program_run(self.lang, sample, unplaced(run, session), token, compile_s)


def unplaced(res: ExecutionResult, session: Session) -> ExecutionResult:
    """``res`` naming no session's folder: its details read the same batched or alone."""
    where = str(session.path).rstrip("/") + "/"
    return res.model_copy(
        update={"stdout": res.stdout.replace(where, ""), "stderr": res.stderr.replace(where, "")}
    )


@dataclass
class BuiltTest:
    """A task's test program, built: what a run of it needs."""

    program: TestProgram
    files: dict[str, bytes]


class TestPrograms:
    """Each task's trusted test program, built once per run in a session of its own
    (nothing a sample wrote is in it) and kept in memory; or why it could not be built."""

    def __init__(self, units: CompiledUnits) -> None:
        self.units = units
        self._built: dict[str, BuiltTest | str | None] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, runner: TaskRunner, problem: CodeTask) -> BuiltTest | str | None:
        """The built test program of ``problem``; a reason it does not build; None when
        its language has none for it."""
        with self._lock:
            lock = self._locks.setdefault(problem.task_id, threading.Lock())
        with lock:
            if problem.task_id not in self._built:
                self._built[problem.task_id] = self.build(runner, problem)
            return self._built[problem.task_id]

    def build(self, runner: TaskRunner, problem: CodeTask) -> BuiltTest | str | None:
        lang = self.units.lang
        try:
            program = lang.test_program(problem)
        except UserError as exc:
            return f"the task's test cannot be built: {exc}"
        if program is None:
            return None
        spec = self.units.spec(f"{lang.name}-test-build", dict(program.files),
                               lang.build_network)  # fmt: skip
        with runner.session(spec) as session:
            if program.argv is not None:
                res = runner.execute(
                    session, program.argv, self.units.compile_limits(), env=lang.build_env()
                )
                if not res.ok:
                    return f"the task's test does not build: {lang.compile_detail(res)}"
            files = {name: runner.read_file(session, name) for name in program.run_files}
        return BuiltTest(program, files)


# -- Python ------------------------------------------------------------------------------------


class PythonUnits:
    """Runs units of Python samples, many per sandboxed harness command."""

    def __init__(self, config: PythonConfig) -> None:
        self.config = config
        self._sources: dict[str, str | bytes] | None = None

    @property
    def interpreter(self) -> py.Interpreter:
        return py.find_interpreter(self.config.python)

    def environment(self) -> dict[str, str]:
        interp = self.interpreter
        return {"python": f"Python {interp.version} ({interp.path})"}

    def refuse_exposed(self, problems: Path) -> None:
        """Raises: UserError where samples could read the tests and canonical solutions
        (a copy in the system or the interpreter's environment, both readable to them)."""
        found = py.exposed(self.interpreter, problems)
        if found:
            raise UserError(
                f"the samples' Python ({self.interpreter.path}) can read {found[0]}, which "
                "holds tests and canonical solutions: evaluate with an interpreter whose "
                "environment does not hold it (--set python=...), and keep the problems "
                "file out of the system's and the interpreter's folders"
            )

    def run_command(
        self,
        tasks: dict[str, CodeTask],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_verdict: OnVerdict,
    ) -> tuple[set[int], ExecutionResult, bool]:
        """Run ``unit`` in one sandboxed harness, handing each verdict to ``on_verdict``
        as soon as the harness reports it: (positions reported, the command's result,
        whether batching is impossible here)."""
        if self._sources is None:
            self._sources = py.sandbox_sources()
        unit_json = json.dumps(py.unit_file(self.config, self.interpreter.path, tasks, unit))
        spec = SessionSpec(
            label=f"py-{unit[0].task_id}",
            files={**self._sources, "unit.json": unit_json},
            readonly_paths=list(self.interpreter.prefixes),
        )
        token = secrets.token_hex(16)
        lines = VerdictLines(token, on_verdict)
        with runner.session(spec) as session:
            res = runner.execute_streaming(
                session,
                [self.interpreter.path, "-s", "-B", "-c", py.NO_SCRIPT_DIR, py.HARNESS],
                py.command_limits(self.config, tasks, unit),
                lines.feed,
                env={"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"},
                stdin=(token + "\n").encode(),
            )
        lines.end()
        return set(lines.found), res, lines.no_batch

    def run(
        self,
        tasks: dict[str, CodeTask],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        """Evaluate ``unit``: in rounds of one command each while its harness reports
        verdicts (each recorded as it arrives, so progress and Ctrl-C are per sample); a
        sample that was running when a round's command died runs alone."""
        pending = list(unit)
        for _ in range(MAX_ROUNDS):
            if len(pending) < 2 or not self.config.batch or not self.config.enforce_policy:
                break
            round_ = pending
            found, _, no_batch = self.run_command(
                tasks, round_, runner, reporter(round_, on_result)
            )
            if no_batch:
                break
            left = [s for n, s in enumerate(round_) if n not in found]
            if not left:
                return
            first = next(n for n, s in enumerate(round_) if n not in found)
            self.alone(tasks, round_[first], runner, on_result)
            pending = [s for s in left if s is not round_[first]]
        for sample in pending:
            self.alone(tasks, sample, runner, on_result)

    def alone(
        self, tasks: dict[str, CodeTask], sample: Sample, runner: TaskRunner, on_result: OnResult
    ) -> None:
        found, res, _ = self.run_command(tasks, [sample], runner, reporter([sample], on_result))
        if 0 not in found:
            plus = tasks[sample.task_id].format == "evalplus"
            on_result(judge.python_lost(sample, res, evalplus=plus))


OnVerdict = Callable[[int, dict[str, Any]], None]


def reporter(samples: Sequence[Sample], on_result: OnResult) -> OnVerdict:
    """Records the harness's verdict of position ``n`` as ``samples[n]``'s result."""

    def report(n: int, verdict: dict[str, Any]) -> None:
        on_result(judge.python_verdict(samples[n], verdict))

    return report


class VerdictLines:
    """The harness's stdout read as it comes: each line led by ``token`` is a verdict
    (handed to ``on_verdict`` once per position) or says batching is impossible here.
    Lines without the token are a sample's doing and are ignored."""

    def __init__(self, token: str, on_verdict: OnVerdict) -> None:
        self.token = token
        self.on_verdict = on_verdict
        self.found: dict[int, dict[str, Any]] = {}
        self.no_batch = False
        self._rest: list[bytes] = []  # the line being read, in the chunks it came in

    def feed(self, chunk: bytes) -> None:
        if b"\n" not in chunk:  # kept as a list: a long line costs no quadratic copying
            self._rest.append(chunk)
            return
        *lines, rest = b"".join([*self._rest, chunk]).split(b"\n")
        self._rest = [rest]
        for line in lines:
            self._line(line.decode("utf-8", "replace"))

    def end(self) -> None:
        """The output ended: its last line may lack a newline."""
        rest, self._rest = b"".join(self._rest), []
        if rest:
            self._line(rest.decode("utf-8", "replace"))

    def _line(self, line: str) -> None:
        head, _, body = line.partition(" ")
        if not secrets.compare_digest(head, self.token):
            return
        try:
            verdict = json.loads(body)
        except json.JSONDecodeError:
            return
        if not isinstance(verdict, dict):
            return
        if "fatal" in verdict:
            self.no_batch = True
        elif isinstance(verdict.get("id"), int) and verdict["id"] not in self.found:
            self.found[verdict["id"]] = verdict
            self.on_verdict(verdict["id"], verdict)


def verdict_lines(res: ExecutionResult, token: str) -> tuple[dict[int, dict[str, Any]], bool]:
    """The harness's lines led by ``token`` in a finished command's stdout: (verdicts by
    position, whether the harness said batching is impossible here)."""
    lines = VerdictLines(token, lambda _n, _v: None)
    lines.feed(res.stdout.encode())
    lines.end()
    return lines.found, lines.no_batch
