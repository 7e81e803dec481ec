"""Tasks: JSON Lines of ``{"task_id", "prompt", "cases": [{"input", "output"}]}``."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ValidationError

from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import read_jsonl
from vibes_eval.core.types import Task

BUILT_IN = Path(__file__).with_name("tasks.jsonl")


class Case(BaseModel):
    input: str
    output: str


class StdioTask(Task):
    prompt: str
    cases: list[Case]


def load_tasks(path: Path | None) -> dict[str, StdioTask]:
    """Raises: UserError naming the file, line and field of a malformed task."""
    path = path or BUILT_IN
    tasks: dict[str, StdioTask] = {}
    for line, row in read_jsonl(path):
        try:
            task = StdioTask.model_validate({**row, "source": f"{path}:{line}"})
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise UserError(err["msg"], path=path, line=line, field=field) from None
        tasks[task.task_id] = task
    if not tasks:
        raise UserError("no tasks (empty)", path=path)
    return tasks
