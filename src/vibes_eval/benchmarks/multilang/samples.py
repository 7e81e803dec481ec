"""Sample files: one JSON object per line with a task id (`task_id`, or MultiPL-E's
`name`; MBPP's ids are numbers) and a `completion`; other fields are kept."""

from __future__ import annotations

from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import SampleSource, read_records, source_path
from vibes_eval.core.types import Sample, Task

ID_FIELDS = ("task_id", "name")


def load_samples(source: SampleSource, tasks: dict[str, Task]) -> list[Sample]:
    """Raises: UserError for a malformed line, a missing field, an unknown task id or an
    empty file (naming the file, line and field)."""
    path = source_path(source) or "samples"
    samples: list[Sample] = []
    per_task: dict[str, int] = {}
    for lineno, row in read_records(source):
        id_field = next((f for f in ID_FIELDS if f in row), None)
        if id_field is None:
            raise UserError("missing", path=path, line=lineno, field="task_id")
        raw = row[id_field]
        if not isinstance(raw, str | int) or isinstance(raw, bool):
            raise UserError("must be a string", path=path, line=lineno, field=id_field)
        task_id = str(raw)
        if task_id not in tasks:
            hint = f" (problems have ids like {next(iter(tasks))!r})" if tasks else ""
            raise UserError(
                f"unknown task id {task_id!r}{hint}", path=path, line=lineno, field=id_field
            )
        completion = row.get("completion")
        if completion is None:
            raise UserError("missing", path=path, line=lineno, field="completion")
        if not isinstance(completion, str):
            raise UserError("must be a string", path=path, line=lineno, field="completion")
        index = per_task.get(task_id, 0)
        per_task[task_id] = index + 1
        samples.append(
            Sample(task_id=task_id, index=index, completion=completion, line=lineno, record=row)
        )
    if not samples:
        raise UserError("no samples (empty)", path=path)
    return samples


def truncate(completion: str, stop_tokens: list[str]) -> str:
    """The completion up to the first of ``stop_tokens`` it contains, as MultiPL-E cuts
    generations (the earliest occurrence of any token wins)."""
    cut = len(completion)
    for token in stop_tokens:
        at = completion.find(token) if token else -1
        if 0 <= at < cut:
            cut = at
    return completion[:cut]
