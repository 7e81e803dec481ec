"""Kernel samples: a JSONL file of ``{"task_id", "solution"}`` (``completion`` accepted too:
the contents of the task's ``solution_file``), or a directory holding
``<task_id>/<solution_file>`` (one sample per task) or ``<task_id>/<n>/<solution_file>``
(several, numbered)."""

from __future__ import annotations

from pathlib import Path

from vibes_eval.benchmarks.common.samples import (
    SampleFields,
    SampleNumbering,
    non_empty,
    read_samples,
)
from vibes_eval.benchmarks.kernels.tasks import KernelTask
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import SampleSource, source_path
from vibes_eval.core.types import Sample, sha256

FIELDS = SampleFields(ids=("task_id",), texts=("solution", "completion"))
MAX_SOLUTION_BYTES = 1 << 20


def load_samples(source: SampleSource, tasks: dict[str, KernelTask]) -> list[Sample]:
    """Raises: UserError for a malformed line, a missing or mistyped field, an unknown task
    id, an empty source (naming the file, line and field)."""
    path = source_path(source)
    if path is not None and path.is_dir():
        return non_empty(_from_directory(path, tasks), path)
    return read_samples(source, tasks, FIELDS)


def _from_directory(root: Path, tasks: dict[str, KernelTask]) -> list[Sample]:
    samples: list[Sample] = []
    numbering = SampleNumbering()
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
            samples.append(numbering.make(task_id, text, 0, record))
    if not samples:
        names = sorted({t.solution_file for t in tasks.values()})
        raise UserError(
            f"no <task_id>/{'|'.join(names)} below this directory{_hint(tasks)}", path=root
        )
    return samples


def _hint(tasks: dict[str, KernelTask]) -> str:
    return f" (tasks have ids like {next(iter(tasks))!r})" if tasks else ""
