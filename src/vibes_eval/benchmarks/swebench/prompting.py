"""SWE-bench in the loop: the problem statement; one-shot answers are a ```diff; an agent
works in the instance's image (the repository at its base commit, the environment
installed), and its answer is the repository's `git diff`, graded like any prediction."""

from __future__ import annotations

from typing import Any

from vibes_eval.benchmarks.swebench.env import specs
from vibes_eval.benchmarks.swebench.run import GIT_ENV
from vibes_eval.core.prompting import PromptContext, Prompting, Workspace, first_fence
from vibes_eval.core.runner import NetworkPolicy
from vibes_eval.core.types import Task

# Tracked changes and new files; caches and build output are not part of a fix.
_DIFF = (
    "git add -N -- $(git ls-files --others --exclude-standard -- "
    "':!:*/__pycache__/*' ':!:*.pyc' ':!:*.egg-info/*') >/dev/null 2>&1; "
    "git -c core.fileMode=false diff"
)


class PatchPrompting(Prompting[Any]):
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
                "repo_dir": specs.REPO_DIR,
                "description": task.problem_statement,
            },
        )

    def completion(self, task: Any, ctx: PromptContext, text: str, style: str) -> str:
        patch = first_fence(text, "diff")
        return patch if patch.endswith("\n") or not patch else patch + "\n"

    def workspace(self, task: Any, ctx: PromptContext) -> Workspace | None:
        bench: Any = self.benchmark
        image = bench.builder.image_for(task, specs.spec_for(task, bench.user_specs))
        activate = (
            f"source /opt/miniconda3/bin/activate >/dev/null 2>&1; conda activate {specs.ENV_NAME}"
        )
        return Workspace(
            files={}, solution="", root=specs.REPO_DIR, image=image, env=dict(GIT_ENV),
            solution_command=("/bin/sh", "-c", _DIFF), shell_prelude=activate + " >/dev/null 2>&1",
            notes="`run` has the repository's Python environment active (python, pytest).",
            network=NetworkPolicy.LOCAL,  # loopback only, as the evaluation's test step
        )  # fmt: skip

    def record_fields(self, task: Task, completion: str, model: str) -> dict[str, Any]:
        return {"instance_id": task.task_id, "model_name_or_path": model,
                "model_patch": completion}  # fmt: skip
