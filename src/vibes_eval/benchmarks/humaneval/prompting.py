"""HumanEval-Rust in the loop: the prompt is the code before the function body
(HumanEval-X: declaration + prompt). Completion style continues it up to ``\\n}`` and
closes the function; chat style answers are read with ``extract`` (a fenced block, a
repeated signature); an agent works on solution.rs with rustc at hand."""

from __future__ import annotations

from typing import Any

from vibes_eval.benchmarks.humaneval.rust.extract import extract
from vibes_eval.core.prompting import PromptContext, Prompting, Workspace, cut_at_stop


class RustPrompting(Prompting[Any]):
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
        return extract(text, task.header(), task.entry_point)

    def from_workspace(self, task: Any, ctx: PromptContext, solution: str) -> str:
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
