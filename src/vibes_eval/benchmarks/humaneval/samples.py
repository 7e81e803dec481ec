"""Read a human-eval style sample file: one JSON object per line with a task id (MultiPL-E
names its problems `name`) and a completion; every other field is kept for the results
file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vibes_eval.benchmarks.common.samples import SampleFields, read_samples
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.types import Sample

FIELDS = SampleFields(ids=("task_id", "name"), texts=("completion",))


def load_samples(source: SampleSource, tasks: Mapping[str, Any]) -> list[Sample]:
    """Raises: UserError for a malformed line, a missing field, an unknown task id or an
    empty file (naming the file, line and field)."""
    return read_samples(source, tasks, FIELDS)
