"""In the loop: the model is given the task's description and answers with a program."""

from __future__ import annotations

from vibes_eval.core.prompting import PromptContext, Prompting
from vibes_stdio.tasks import StdioTask


class StdioPrompting(Prompting[StdioTask]):
    def context(self, task: StdioTask) -> PromptContext:
        example = task.cases[0]
        description = (f"{task.prompt}\n\nRead standard input, write standard output. "
                       f"Example input:\n{example.input}\nExpected output:\n{example.output}")  # fmt: skip
        return PromptContext(task_id=task.task_id, language="python",
                             variables={"description": description})  # fmt: skip
