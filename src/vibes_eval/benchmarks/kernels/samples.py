"""Kernel samples: a JSONL file of ``{"task_id", "solution"}`` (``completion`` accepted too:
the contents of the task's ``solution_file``), or a directory holding
``<task_id>/<solution_file>`` (one sample per task) or ``<task_id>/<n>/<solution_file>``
(several, numbered)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vibes_eval.benchmarks.kernels.tasks import KernelTask
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import SampleSource, read_records, source_path
from vibes_eval.core.types import Sample, sha256

TEXT_FIELDS = ("solution", "completion")
MAX_SOLUTION_BYTES = 1 << 20


def load_samples(source: SampleSource, tasks: dict[str, KernelTask]) -> list[Sample]:
    """Raises: UserError for a malformed line, a missing or mistyped field, an unknown task
    id, an empty source (naming the file, line and field)."""
    path = source_path(source)
    if path is not None and path.is_dir():
        samples = _from_directory(path, tasks)
    else:
        samples = _from_records(source, tasks)
    if not samples:
        raise UserError("no samples (empty)", path=path or "samples")
    return samples


def _from_records(source: SampleSource, tasks: dict[str, KernelTask]) -> list[Sample]:
    where = source_path(source) or "samples"
    samples: list[Sample] = []
    per_task: dict[str, int] = {}
    for lineno, row in read_records(source):
        task_id = row.get("task_id")
        if task_id is None:
            raise UserError("missing", path=where, line=lineno, field="task_id")
        if not isinstance(task_id, str):
            raise UserError("must be a string", path=where, line=lineno, field="task_id")
        if task_id not in tasks:
            raise UserError(
                f"unknown task id {task_id!r}{_hint(tasks)}", path=where, line=lineno,
                field="task_id",
            )  # fmt: skip
        text_field = next((f for f in TEXT_FIELDS if f in row), None)
        if text_field is None:
            raise UserError("missing (or 'completion')", path=where, line=lineno, field="solution")
        text = row[text_field]
        if not isinstance(text, str):
            raise UserError("must be a string", path=where, line=lineno, field=text_field)
        samples.append(_sample(task_id, text, lineno, row, per_task))
    return samples


def _from_directory(root: Path, tasks: dict[str, KernelTask]) -> list[Sample]:
    samples: list[Sample] = []
    per_task: dict[str, int] = {}
    for task_id, task in tasks.items():
        base = root / task_id
        if not base.is_dir():
            continue
        files = [base / task.solution_file]
        numbered = sorted((d for d in base.iterdir() if d.is_dir() and d.name.isdigit()),
                          key=lambda d: int(d.name))  # fmt: skip
        files += [d / task.solution_file for d in numbered]
        for file in files:
            if not file.is_file():
                continue
            if file.stat().st_size > MAX_SOLUTION_BYTES:
                raise UserError(f"larger than {MAX_SOLUTION_BYTES >> 10} KiB", path=file)
            text = file.read_text(encoding="utf-8", errors="replace")
            record = {"task_id": task_id, "path": str(file), "sha256": sha256(text)}
            samples.append(_sample(task_id, text, 0, record, per_task))
    if not samples:
        names = sorted({t.solution_file for t in tasks.values()})
        raise UserError(
            f"no <task_id>/{'|'.join(names)} below this directory{_hint(tasks)}", path=root
        )
    return samples


def _sample(
    task_id: str, text: str, line: int, record: dict[str, Any], per_task: dict[str, int]
) -> Sample:
    index = per_task.get(task_id, 0)
    per_task[task_id] = index + 1
    return Sample(task_id=task_id, index=index, completion=text, line=line, record=record)


def _hint(tasks: dict[str, KernelTask]) -> str:
    return f" (tasks have ids like {next(iter(tasks))!r})" if tasks else ""
