"""The spine's small test benchmark (verdicts from the completion's text: "pass",
"fail", "speed:X"...) with the one hook generation needs, a ``Prompting`` whose
``context`` describes the task: the way a new benchmark plugs in. Its tasks' prompts carry
a marker for the scripted server ("task F/1"), and agents get a work dir holding
answer.txt."""

from __future__ import annotations

from typing import Any

from tests.core.fake import FakeBenchmark
from vibes_eval.core.prompting import PromptContext, Prompting, Workspace
from vibes_eval.core.types import Task


class FakePrompting(Prompting[Any]):
    def context(self, task: Task) -> PromptContext:
        return PromptContext(
            task_id=task.task_id,
            variables={"description": f"Solve task {task.task_id}: answer pass."},
            workspace=Workspace(
                files={"answer.txt": "todo\n"},
                solution="answer.txt",
                notes="Write your answer into answer.txt.",
            ),
        )

    def completion(self, task: Task, ctx: PromptContext, text: str, style: str) -> str:
        return text.strip().strip("`").strip()


class PromptedFake(FakeBenchmark):
    name = "fake-gen"
    prompting_class = FakePrompting
