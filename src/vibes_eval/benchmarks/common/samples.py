"""The one sample-file reader: JSON Lines (or records handed over by the Python API), each
line a task id and the sample's text; every other field is kept for the results file.

Benchmarks differ only in which fields they read (``SampleFields``): human-eval's
``task_id``/``completion``, MultiPL-E's ``name``, MBPP's numeric ids, a kernel's
``solution``, a SWE-bench prediction's ``instance_id``/``model_patch``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import SampleSource, read_records, source_path
from vibes_eval.core.types import Sample


@dataclass(frozen=True)
class SampleFields:
    """Which fields of a record name its task and hold its text (first present wins)."""

    ids: tuple[str, ...] = ("task_id", "name")
    texts: tuple[str, ...] = ("completion",)
    numeric_ids: bool = False  # MBPP's ids are numbers; read them as their decimal text
    # A text field may be null (SWE-bench's ``model_patch: null`` is an empty prediction).
    nullable_text: bool = False


HUMANEVAL_FIELDS = SampleFields()


class SampleNumbering:
    """Each task's samples numbered 0, 1, ... in file order."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def make(self, task_id: str, text: str, line: int, record: dict[str, Any]) -> Sample:
        index = self._next.get(task_id, 0)
        self._next[task_id] = index + 1
        return Sample(task_id=task_id, index=index, completion=text, line=line, record=record)


def task_id_of(row: Mapping[str, Any], fields: SampleFields, where: str, line: int) -> str:
    """Raises: UserError (missing or mistyped id field)."""
    id_field = next((f for f in fields.ids if f in row), None)
    if id_field is None:
        raise UserError("missing", path=where, line=line, field=fields.ids[0])
    raw = row[id_field]
    numeric = fields.numeric_ids and isinstance(raw, int) and not isinstance(raw, bool)
    if not (isinstance(raw, str) or numeric):
        raise UserError("must be a string", path=where, line=line, field=id_field)
    return str(raw)


def text_of(row: Mapping[str, Any], fields: SampleFields, where: str, line: int) -> str:
    """Raises: UserError (missing or mistyped text field)."""
    text_field = next((f for f in fields.texts if f in row), None)
    if text_field is None:
        alt = f" (or '{fields.texts[1]}')" if len(fields.texts) > 1 else ""
        raise UserError(f"missing{alt}", path=where, line=line, field=fields.texts[0])
    text = row[text_field]
    if text is None and fields.nullable_text:
        return ""
    if not isinstance(text, str):
        raise UserError("must be a string", path=where, line=line, field=text_field)
    return text


def check_known(task_id: str, tasks: Mapping[str, Any], where: str, line: int, field: str) -> None:
    """Raises: UserError naming the unknown id and what the problems' ids look like."""
    if task_id not in tasks:
        hint = f" (problems have ids like {next(iter(tasks))!r})" if tasks else ""
        raise UserError(f"unknown task id {task_id!r}{hint}", path=where, line=line, field=field)


def read_samples(
    source: SampleSource, tasks: Mapping[str, Any], fields: SampleFields = HUMANEVAL_FIELDS
) -> list[Sample]:
    """Every sample of ``source``, matched to ``tasks``.

    Raises: UserError for a malformed line, a missing field, an unknown task id or an
    empty file (naming the file, line and field).
    """
    where = str(source_path(source) or "samples")
    numbering = SampleNumbering()
    samples = []
    for line, row in read_records(source):
        task_id = task_id_of(row, fields, where, line)
        id_field = next(f for f in fields.ids if f in row)
        check_known(task_id, tasks, where, line, id_field)
        samples.append(numbering.make(task_id, text_of(row, fields, where, line), line, row))
    return non_empty(samples, where)


def non_empty(samples: Iterable[Sample], where: object) -> list[Sample]:
    """Raises: UserError when there is no sample at all."""
    out = list(samples)
    if not out:
        raise UserError("no samples (empty)", path=str(where))
    return out
