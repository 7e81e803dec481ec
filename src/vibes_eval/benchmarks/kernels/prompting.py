"""What a model is told about a kernel task (``KernelPrompting``), and the work dir
a tool-augmented agent gets.

The prompt holds the task's description, the hardware, the solution's interface (the
solution file's name, the headers declaring its entry point, the naive solution it
replaces), and the build and scoring rules: tolerances, how speed is scored, what the
anti-cheat checks refuse. Never the expert reference: its files are recognised by name
(``is_expert``) and left out of the prompt and of the agent's work dir, where a stand-in
(the naive solution) takes the expert header's place so that the task still builds and
times there. The real expert is only used by the evaluation (`run_tests`, the verdict).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from vibes_eval.benchmarks.kernels.config import KernelsConfig
from vibes_eval.benchmarks.kernels.tasks import KernelTask
from vibes_eval.core.prompting import PromptContext, Prompting, Workspace
from vibes_eval.core.runner import DeviceNeed

# The expert's own files: reference.h, reference.cu, ref.cuh, expert_gemm.cu... A thin
# translation unit that only includes it (reference_tu.cpp) is not the expert.
_EXPERT = re.compile(r"^(reference|expert|ref)([_.-]|$)", re.I)
_WRAPPER = re.compile(r"_tu$", re.I)
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".cuh")
ROOT_DIR = "kh_root"  # where the task set's shared files (common/) sit in an agent's work dir
MAX_FILE_CHARS = 20_000  # a header longer than this is not inlined into the prompt

STAND_IN = """\
// Stand-in for the expert reference, which this work dir does not have: the naive
// solution under the reference's name, so that the task builds and runs here. Timings
// against it are not the score; run_tests measures against the real expert.
"""


def is_expert(name: str) -> bool:
    stem = PurePosixPath(name).stem
    return bool(_EXPERT.match(PurePosixPath(name).name)) and not _WRAPPER.search(stem)


def interface_files(task: KernelTask) -> dict[str, str]:
    """Headers a solution builds against (api.h: the entry point it defines), never the
    expert's, nor the solution file itself."""
    folder = Path(task.folder)
    out = {}
    for rel in task.file_names:
        if rel.endswith(HEADER_SUFFIXES) and not is_expert(rel) and rel != task.solution_file:
            text = (folder / rel).read_text(encoding="utf-8", errors="replace")
            if len(text) <= MAX_FILE_CHARS:
                out[rel] = text
    return out


def _description(task: KernelTask) -> str:
    path = Path(task.folder) / "description.txt"
    if path.is_file():
        return path.read_text(encoding="utf-8", errors="replace").strip()
    return task.spec.name or task.task_id


def _hardware(task: KernelTask, facts: dict[str, str]) -> str:
    hw = task.spec.hardware
    if task.needs_gpu:
        lines = [f"GPU: {facts.get('gpus', 'none')}; CUDA: {facts.get('nvcc', 'missing')}",
                 f"The task needs compute capability >= {hw.min_sm}"
                 + (f" (tested on sm_{', sm_'.join(map(str, hw.tested_sms))})"
                    if hw.tested_sms else "") + "."]  # fmt: skip
    else:
        lines = [f"CPU: {facts.get('cpu', 'unknown')}; compiler: {facts.get('cxx', 'g++')}"]
    if hw.required_features:
        lines.append(f"Required features: {', '.join(hw.required_features)}.")
    return "\n".join(lines)


def _rules(task: KernelTask, config: KernelsConfig) -> str:
    tol = task.spec.correctness.tolerances
    ac = task.spec.anti_cheat
    cpu = not task.needs_gpu
    rules = [
        f"Build: `{task.spec.build.cmd}` in the task folder, with your {task.solution_file} "
        "in place of the naive one. Your code is also compiled on its own, as one "
        "translation unit.",
        f"Correctness: every timed call is checked against the expert reference on fresh "
        f"inputs, at every size; outputs must match within atol {tol.atol:g} and rtol "
        f"{tol.rtol:g}.",
        "Speed: your kernel and the expert reference are timed in the same run (warm-up "
        "calls, then interleaved trials with caches flushed); speed = the mean over sizes "
        f"of reference_min_time / your_min_time, the median over {config.repeats} runs. "
        "fast_p = valid and speed > p, at p = 0.5, 0.8 and 1.05 (the headline). A wrong, "
        f"non-compiling or refused solution has speed 0; above {config.audit_speedup:g}x "
        "it is flagged for audit.",
        "Refused (anti_cheat): math libraries (BLAS, MKL, Eigen, FFTW, cuBLAS, cuDNN, "
        "CUTLASS), I/O and printing, exit/abort, threads, clocks and timers, environment "
        "variables, dlopen/dlsym, raw system calls, code that runs before or after main "
        "(static constructors, globals with dynamic initializers), try/catch, defining "
        "functions of the C/C++/OpenMP/CUDA runtimes or anything the harness or the "
        "reference defines, calling the reference's or the harness's functions, naming "
        "the task's files, fewer than "
        f"{config.min_code_lines} lines of code"
        + ("; inline assembly; any global symbol but the entry point (make helpers "
           "`static` or put them in an anonymous namespace)" if cpu
           else "; streams, graphs and events other than the default stream")
        + ". Outputs left unwritten, zeros, or a result cached from an earlier call are "
        "caught too.",
    ]  # fmt: skip
    if not cpu:
        rules.append("The solution needs a `__global__` kernel and a launch.")
    if ac.blocked_patterns:
        rules.append("This task also refuses: " + ", ".join(f"`{p}`" for p in ac.blocked_patterns))
    if ac.required_patterns:
        rules.append("It requires: " + ", ".join(f"`{p}`" for p in ac.required_patterns))
    return "\n".join(f"- {r}" for r in rules)


def _interface(task: KernelTask) -> str:
    parts = [f"Your answer is the whole file `{task.solution_file}`."]
    for rel, text in interface_files(task).items():
        parts.append(f"`{rel}` (the entry point you define):\n```{language(task)}\n"
                     f"{text.rstrip()}\n```")  # fmt: skip
    naive = task.original_solution()
    if naive:
        parts.append(f"The naive `{task.solution_file}` you replace:\n```{language(task)}\n"
                     f"{naive.rstrip()}\n```")  # fmt: skip
    return "\n\n".join(parts)


def language(task: KernelTask) -> str:
    return "cuda" if task.needs_gpu else "cpp"


def prompt_context(task: KernelTask, config: KernelsConfig, facts: dict[str, str]) -> PromptContext:
    description = _description(task)
    hardware, interface, rules = _hardware(task, facts), _interface(task), _rules(task, config)
    full = (f"{description}\n\n## Hardware\n{hardware}\n\n## Interface\n{interface}\n\n"
            f"## Build and scoring\n{rules}\n\nWrite the fastest correct "
            f"{task.solution_file} you can.")  # fmt: skip
    return PromptContext(
        task_id=task.task_id,
        family="solution",
        language=language(task),
        variables={
            "description": full,  # what the built-in `solution` templates render
            "task_description": description,
            "hardware": hardware,
            "interface": interface,
            "rules": rules,
            "solution_file": task.solution_file,
            "tolerances": task.spec.correctness.tolerances.model_dump(),
        },
    )


def workspace(task: KernelTask, config: KernelsConfig, tools: Any) -> Workspace:
    """The task folder minus the expert reference (a stand-in in its place), the task
    set's `common/` files, the solution file; a GPU held for CUDA tasks. Raises nothing:
    unreadable files are left out."""
    folder, root = Path(task.folder), Path(task.root)
    files: dict[str, str] = {}
    naive = task.original_solution()
    for rel in task.file_names:
        if is_expert(rel):
            if rel.endswith(HEADER_SUFFIXES):
                files[rel] = STAND_IN + naive
            continue
        try:
            files[rel] = (folder / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    common = root / "common"
    if common.is_dir():
        for path in sorted(common.rglob("*")):
            if path.is_file() and not is_expert(path.name):
                rel = f"{ROOT_DIR}/common/{path.relative_to(common).as_posix()}"
                try:
                    files[rel] = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
    build, run = task.spec.build.cmd, task.spec.execute.cmd
    return Workspace(
        files=files,
        solution=task.solution_file,
        readonly_paths=tuple(Path(p) for p in tools.readonly),
        env={
            "PATH": tools.path,
            "KH_ROOT": ROOT_DIR,
            "OMP_NUM_THREADS": str(config.cpu_threads),
            **task.spec.runner.env,
        },
        device=DeviceNeed() if task.needs_gpu else None,
        notes=(
            f"Build with `{build}` and run `{run}` (it prints Passed and the timings). The "
            "expert reference is not here: a stand-in with the naive code has its place, so "
            "times printed here are against the naive solution. run_tests gives the real "
            "verdict and speed against the expert."
        ),
    )


class KernelPrompting(Prompting[KernelTask]):
    """Description, hardware, interface, build and scoring rules; never the expert
    reference. An agent's work dir comes with the context."""

    def context(self, task: KernelTask) -> PromptContext:
        from vibes_eval.benchmarks.kernels.benchmark import toolchain_facts

        bench: Any = self.benchmark
        ctx = prompt_context(task, bench.config, toolchain_facts())
        return ctx.model_copy(
            update={"workspace": workspace(task, bench.config, bench.pipeline.tools)}
        )
