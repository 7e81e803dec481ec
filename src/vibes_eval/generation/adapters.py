"""What generation needs from a benchmark, and where it finds it.

A benchmark that can be given to a model implements one method,
``prompt_context(task) -> PromptContext`` (kernels: description, hardware, solution
interface, build and scoring rules, never the expert reference; SWE-bench: the problem
statement and a workspace holding the repository). It may also implement
``answer_to_completion(task, context, text, style)`` when the answer's code needs more
than the generic fence extraction, and ``feedback(result)`` to choose what a model sees
after a failed attempt. HumanEval lives in ``benchmarks/humaneval/``, which another
module owns, so its adapter is here and is found by the benchmark's name (as is
SWE-bench's)."""

from __future__ import annotations

import re
from typing import Any

from vibes_eval.core.benchmark import Benchmark
from vibes_eval.core.errors import UserError
from vibes_eval.core.types import SampleResult, Task
from vibes_eval.generation.prompts import PromptContext, Workspace, cap, details_text

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)


def first_fence(text: str, language: str) -> str:
    """The first fenced block in ``language`` (or untagged), else the first block, else the
    text itself."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    for lang, body in blocks:
        if lang in (language, ""):
            return body
    return blocks[0][1] if blocks else text


def cut_at_stop(text: str, stop: list[str]) -> tuple[str, bool]:
    """``text`` up to its first stop sequence; whether one was found. Servers that ignore
    ``stop`` (or apply only four of them) are cut here the same way."""
    cuts = [i for s in stop if s and (i := text.find(s)) >= 0]
    return (text[: min(cuts)], True) if cuts else (text, False)


class Adapter:
    """Generic: the benchmark's own hooks, or the fence and stop-sequence rules."""

    def __init__(self, benchmark: Benchmark[Any, Any]) -> None:
        self.benchmark = benchmark

    def context(self, task: Task) -> PromptContext:
        """Raises: UserError when the benchmark cannot prompt a model."""
        hook = getattr(self.benchmark, "prompt_context", None)
        if not callable(hook):
            raise UserError(
                f"benchmark {self.benchmark.name} cannot prompt a model yet: it needs a "
                "prompt_context(task) method (vibes_eval.generation.adapters)"
            )
        return hook(task)

    def completion(self, task: Task, ctx: PromptContext, text: str, style: str) -> str:
        """The sample to evaluate, from a model's answer."""
        hook = getattr(self.benchmark, "answer_to_completion", None)
        if callable(hook):
            return hook(task, ctx, text, style)
        if style == "completion":
            return cut_at_stop(text, ctx.stop)[0]
        return first_fence(text, ctx.language)

    def workspace(self, task: Task, ctx: PromptContext) -> Workspace | None:
        """The work dir of a tool-augmented agent (asked only by that setting: building it
        may need the toolchain)."""
        return ctx.workspace

    def from_workspace(self, task: Task, ctx: PromptContext, solution: str) -> str:
        """The sample, from the solution file an agent left in its work dir."""
        return solution

    def record_fields(self, task: Task, completion: str, model: str) -> dict[str, Any]:
        """The sample as the benchmark's own input format has it (what `vibes eval
        export` writes and the benchmark's run hooks read)."""
        hook = getattr(self.benchmark, "record_fields", None)
        if callable(hook):
            return dict(hook(task, completion, model))
        return {"task_id": task.task_id, "completion": completion}

    def feedback(self, result: SampleResult, limit: int) -> dict[str, Any]:
        """Template variables describing a failed attempt: the reason and its meaning, the
        detail line, the output (compiler errors, failing tests, validation), details."""
        hook = getattr(self.benchmark, "feedback", None)
        if callable(hook):
            return dict(hook(result))
        output = "\n".join(part for part in (result.stderr.strip(), result.stdout.strip()) if part)
        return {
            "reason": result.reason,
            "reason_text": self.benchmark.known_reasons().get(result.reason, ""),
            "detail": result.detail.strip(),
            "output": cap(output, limit),
            "details": details_text(result.details, limit // 2),
            "passed": result.passed,
        }


class HumanEvalAdapter(Adapter):
    """HumanEval-Rust: the prompt is the code before the function body (HumanEval-X:
    declaration + prompt). Completion style continues it up to ``\\n}`` and closes the
    function; chat style answers are read with the benchmark's own ``extract`` (a fenced
    block, a repeated signature)."""

    def context(self, task: Any) -> PromptContext:
        header = task.header()
        multiple = task.format == "multipl-e"
        stop = list(task.stop_tokens) if multiple and task.stop_tokens else ["\n}"]
        return PromptContext(
            task_id=task.task_id,
            family="function",
            language="rust",
            variables={"prompt": header, "entry_point": task.entry_point, "format": task.format},
            stop=stop,
        )

    def completion(self, task: Any, ctx: PromptContext, text: str, style: str) -> str:
        if style == "completion":
            body, _ = cut_at_stop(text, ctx.stop)
            # MultiPL-E's tests close the function themselves; the other formats need it.
            return body if task.format == "multipl-e" else body + "\n}\n"
        from vibes_eval.benchmarks.humaneval.extract import extract

        return extract(text, task.header(), task.entry_point)

    def from_workspace(self, task: Any, ctx: PromptContext, solution: str) -> str:
        from vibes_eval.benchmarks.humaneval.extract import extract

        return extract(solution, task.header(), task.entry_point)

    def workspace(self, task: Any, ctx: PromptContext) -> Workspace | None:
        """solution.rs starts as the header and an unfinished body; rustc (and the crates the
        declarations use) can be run in the sandbox."""
        header = task.header()
        build = getattr(getattr(self.benchmark, "evaluator", None), "build", None)
        if build is None:
            return None
        argv = build.compile_argv("solution.rs", "solution", "--test")
        return Workspace(
            files={"solution.rs": header + "    todo!()\n}\n"},
            solution="solution.rs",
            readonly_paths=tuple(build.readonly_paths()),
            env=build.env(),
            notes=(
                "Add #[test] functions to check it, then build and run them with the `run` "
                f"tool: `{' '.join(argv)} && ./solution`."
            ),
        )


class SweBenchAdapter(Adapter):
    """SWE-bench: the problem statement; one-shot answers are a ```diff; an agent works in
    the instance's image (the repository at its base commit, the environment installed),
    and its answer is the repository's `git diff`, graded like any prediction."""

    def context(self, task: Any) -> PromptContext:
        return PromptContext(
            task_id=task.task_id,
            family="patch",
            language="diff",
            variables={
                "problem_statement": task.problem_statement,
                "hints": task.hints_text,
                "repo": task.repo,
                "base_commit": task.base_commit,
                "repo_dir": self._repo_dir(),
                "description": task.problem_statement,
            },
        )

    def completion(self, task: Any, ctx: PromptContext, text: str, style: str) -> str:
        patch = first_fence(text, "diff")
        return patch if patch.endswith("\n") or not patch else patch + "\n"

    def workspace(self, task: Any, ctx: PromptContext) -> Workspace | None:
        from vibes_eval.benchmarks.swebench import specs

        bench: Any = self.benchmark
        image = bench.builder.image_for(task, specs.spec_for(task, bench.user_specs))
        repo = self._repo_dir()
        # Tracked changes and new files; caches and build output are not part of a fix.
        diff = ("git add -N -- $(git ls-files --others --exclude-standard -- "
                "':!:*/__pycache__/*' ':!:*.pyc' ':!:*.egg-info/*') >/dev/null 2>&1; "
                "git -c core.fileMode=false diff")  # fmt: skip
        from vibes_eval.benchmarks.swebench.executor import GIT_ENV
        from vibes_eval.benchmarks.swebench.specs import ENV_NAME

        activate = f"source /opt/miniconda3/bin/activate >/dev/null 2>&1; conda activate {ENV_NAME}"
        return Workspace(
            files={}, solution="", root=repo, image=image, env=dict(GIT_ENV),
            solution_command=("/bin/sh", "-c", diff), shell_prelude=activate + " >/dev/null 2>&1",
            notes="`run` has the repository's Python environment active (python, pytest).",
        )  # fmt: skip

    def record_fields(self, task: Task, completion: str, model: str) -> dict[str, Any]:
        return {"instance_id": task.task_id, "model_name_or_path": model,
                "model_patch": completion}  # fmt: skip

    @staticmethod
    def _repo_dir() -> str:
        from vibes_eval.benchmarks.swebench.specs import REPO_DIR

        return REPO_DIR


# By benchmark name (the multi-language benchmarks share HumanEval's suite, not its tasks).
ADAPTERS: dict[str, type[Adapter]] = {
    "humaneval-rust": HumanEvalAdapter,
    "swe-bench": SweBenchAdapter,
}


def adapter_for(benchmark: Benchmark[Any, Any]) -> Adapter:
    """The benchmark's own hooks win over an adapter kept here for its suite."""
    if callable(getattr(benchmark, "prompt_context", None)):
        return Adapter(benchmark)
    return ADAPTERS.get(benchmark.name, Adapter)(benchmark)
