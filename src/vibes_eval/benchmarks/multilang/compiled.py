"""Languages whose test is a program with its own `main` (C++, Go, JavaScript, Java and
MultiPL-E's scripting languages): build, then run with the harness's token.

A unit of samples shares one build session: each task's trusted test parts are built
once (``task_dir``), each sample in a folder of its own (``s<i>``), with the same command
and the same folder names as alone, so compile errors read the same batched or not. A
sample's program then runs in a fresh session of its own (nothing another sample wrote
can reach it), gets the token on stdin, and passes only when it exits 0 having printed the
token last, which the language's harness code does only after the test's `main` returned
normally (the token is not in the program: reading it needs stdin, which the policy filter
refuses to completions).
"""

from __future__ import annotations

import abc
import functools
import hashlib
import re
import secrets
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from vibes_eval.benchmarks.multilang import policy
from vibes_eval.benchmarks.multilang.problems import Problem
from vibes_eval.benchmarks.multilang.samples import truncate
from vibes_eval.core.benchmark import BenchmarkConfig
from vibes_eval.core.errors import RunnerError, UserError
from vibes_eval.core.runner import (
    NetworkPolicy,
    SandboxPolicy,
    Session,
    SessionSpec,
    TaskRunner,
)
from vibes_eval.core.types import ExecutionResult, Limits, Reason, Sample, SampleResult, Termination

KEEP = 4096
OnResult = Callable[[SampleResult], None]


class CompiledConfig(BenchmarkConfig):
    limits: Limits = Limits(timeout_s=10.0)
    compile_timeout_s: float = 60.0
    enforce_policy: bool = True
    extract: Literal["none", "auto"] = "none"
    stop_tokens: bool = False
    batch: bool = True  # one build session per unit of samples; verdicts are the same

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset({"batch"})


def task_dir(task_id: str) -> str:
    """A task's folder: named by its id's hash, the same in every unit."""
    return "t_" + hashlib.sha256(task_id.encode()).hexdigest()[:12]


@dataclass
class Build:
    """What a sample needs built, and what its run takes."""

    files: dict[str, str]  # the sample's folder
    argv: list[str] | None  # its build command, run in its folder (None: nothing to build)
    run_files: list[str]  # what the run session gets, relative to the sample's folder
    run_argv: list[str]
    run_env: dict[str, str] = field(default_factory=dict)


class Language(abc.ABC):
    """One language's programs, toolchain and failure messages."""

    name: ClassVar[str]
    fence_tags: ClassVar[tuple[str, ...]] = ()
    # The build session's network: javac's JVM opens an IP socket at start (it gets only
    # an empty loopback); programs always run with none.
    build_network: ClassVar[NetworkPolicy] = NetworkPolicy.DISABLED

    @abc.abstractmethod
    def missing(self) -> str | None:
        """Why this language cannot be evaluated here (its toolchain is absent), or None."""

    def environment(self) -> dict[str, str]:
        return {}

    def readonly_paths(self) -> list[Path]:
        return []

    def build_env(self) -> dict[str, str]:
        return {}

    def task_files(self, problem: Problem) -> dict[str, str]:
        """The task's trusted parts, in its ``task_dir``."""
        return {}

    def task_argv(self, problem: Problem) -> list[str] | None:
        return None

    @abc.abstractmethod
    def build(self, problem: Problem, code: str) -> Build: ...

    def failure_detail(self, run: ExecutionResult) -> str:
        """What the failed test said, for the report."""
        lines = [x for x in (run.stderr + "\n" + run.stdout).splitlines() if x.strip()]
        return lines[0][:300] if lines else f"exit code {run.exit_code}"

    def compile_detail(self, res: ExecutionResult) -> str:
        for line in res.stderr.splitlines():
            if "error" in line.lower():
                return line.strip()[:300]
        lines = res.stderr.strip().splitlines() or res.stdout.strip().splitlines()
        return lines[0][:300] if lines else f"build exited with code {res.exit_code}"


def fenced(text: str, tags: tuple[str, ...]) -> str:
    blocks = re.findall(r"```[ \t]*([A-Za-z0-9_+#-]*)[^\n]*\n(.*?)(?:```|\Z)", text, re.S)
    for lang, body in blocks:
        if lang.lower() in (*tags, ""):
            return body
    return blocks[0][1] if blocks else text


class CompiledEvaluator:
    def __init__(self, language: Language, config: CompiledConfig) -> None:
        self.lang = language
        self.config = config

    def check_available(self) -> None:
        """Raises: UserError naming the missing toolchain."""
        why = self.lang.missing()
        if why is not None:
            raise UserError(f"{self.lang.name} samples cannot be evaluated here: {why}")

    def code(self, problem: Problem, sample: Sample) -> str:
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
        policy = SandboxPolicy(
            readonly_paths=tuple(self.lang.readonly_paths()),
            network=network or NetworkPolicy.DISABLED,
        )
        return SessionSpec(label=label, files=files, policy=policy)

    # -- a unit ---------------------------------------------------------------------------

    def run(
        self,
        tasks: dict[str, Problem],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        todo: list[tuple[int, Sample, Problem, str]] = []
        for n, sample in enumerate(unit):
            problem = tasks[sample.task_id]
            code = self.code(problem, sample)
            found = policy.check(self.lang.name, code) if self.config.enforce_policy else None
            if found is not None:
                on_result(self.result(sample, False, Reason.POLICY, str(found)))
            else:
                todo.append((n, sample, problem, code))
        if not todo:
            return
        session = runner.prepare(self.spec(f"{self.lang.name}-build", {}, self.lang.build_network))
        try:
            broken = self.build_tasks(session, runner, {p.task_id: p for _, _, p, _ in todo})
            for n, sample, problem, code in todo:
                if problem.task_id in broken:
                    on_result(self.result(sample, False, Reason.INFRA, broken[problem.task_id]))
                    continue
                on_result(self.one(session, runner, n, sample, problem, code))
        finally:
            runner.cleanup(session)

    def build_tasks(
        self, session: Session, runner: TaskRunner, problems: dict[str, Problem]
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
        problem: Problem,
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
                return self.compile_failure(sample, res)
        archive = {name: runner.read_file(session, f"{folder}/{name}") for name in build.run_files}
        return self.execute_run(runner, sample, build, archive, compile_s)

    # -- running ----------------------------------------------------------------------------

    def execute_run(
        self, runner: TaskRunner, sample: Sample, build: Build, files: dict[str, bytes],
        compile_s: float,
    ) -> SampleResult:  # fmt: skip
        """The sample's program in a fresh session, with the token on stdin."""
        staged = {f"in/{name}": data for name, data in files.items()}
        session = runner.prepare(self.spec(f"{self.lang.name}-run", staged))
        token = secrets.token_hex(16)
        try:
            # Copied by a child process: a thread forking while this one wrote an
            # executable would make its exec fail (ETXTBSY).
            names = " ".join(shlex.quote(name) for name in files)
            copy = runner.execute(
                session, ["/bin/sh", "-c", f"cp -r in/. . && chmod 755 {names}"],
                self.config.limits,
            )  # fmt: skip
            if not copy.ok:
                raise RunnerError(f"cannot stage the program: {copy.stderr.strip()[:200]}")
            run = runner.execute(
                session, build.run_argv, self.config.limits, env=build.run_env,
                stdin=(token + "\n").encode(),
            )  # fmt: skip
        finally:
            runner.cleanup(session)
        # a detail names no session's folder: the same batched or alone
        where = str(session.path).rstrip("/") + "/"
        run = run.model_copy(
            update={
                "stdout": run.stdout.replace(where, ""),
                "stderr": run.stderr.replace(where, ""),
            }
        )
        return self.judge(sample, run, token, compile_s)

    def judge(
        self, sample: Sample, run: ExecutionResult, token: str, compile_s: float
    ) -> SampleResult:
        timing = {"compile_s": compile_s, "run_s": run.wall_s, "wall_s": compile_s + run.wall_s}
        out = {"stdout": run.stdout[:KEEP], "stderr": run.stderr[:KEEP], "measurements": timing}
        if run.termination is not Termination.EXITED:
            reason = Reason.from_termination(run.termination)
            if reason is Reason.CRASH and "Assertion" in run.stderr:
                return self.result(
                    sample, False, Reason.FAILED, self.lang.failure_detail(run), **out
                )
            detail = f"killed by signal {run.signal}" if reason is Reason.CRASH else ""
            return self.result(sample, False, reason, detail or run.termination.value, **out)
        lines = [x for x in run.stdout.splitlines() if x.strip()]
        told = bool(lines) and secrets.compare_digest(lines[-1].strip(), token)
        if run.exit_code == 0 and told:
            return self.result(sample, True, Reason.PASSED, "", **out)
        if run.exit_code == 0:
            detail = "the program exited with code 0 before its test finished"
            return self.result(sample, False, Reason.EARLY_EXIT, detail, **out)
        return self.result(sample, False, Reason.FAILED, self.lang.failure_detail(run), **out)

    def compile_failure(self, sample: Sample, res: ExecutionResult) -> SampleResult:
        timing = {"compile_s": res.wall_s, "wall_s": res.wall_s}
        if res.termination is Termination.EXITED:
            reason: str = Reason.COMPILE_ERROR
            detail = self.lang.compile_detail(res)
        else:
            reason = Reason.from_termination(res.termination)
            detail = f"compiler {res.termination.value}"
        return self.result(
            sample, False, reason, detail, measurements=timing, stderr=res.stderr[:KEEP]
        )

    @staticmethod
    def result(sample: Sample, passed: bool, reason: str, detail: str = "", **kw) -> SampleResult:  # type: ignore[no-untyped-def]
        return SampleResult(
            task_id=sample.task_id, index=sample.index, passed=passed, reason=reason,
            detail=detail, completion_hash=sample.completion_hash, **kw,
        )  # fmt: skip


def which(name: str) -> str | None:
    return shutil.which(name)


@functools.cache
def version_of(argv: tuple[str, ...]) -> str:
    import subprocess

    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    text = (proc.stdout + proc.stderr).strip().splitlines()
    return text[0] if text else "unknown"
