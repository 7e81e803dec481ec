"""Sample files: one JSON object per line with a task id (`task_id`, or MultiPL-E's
`name`; MBPP's ids are numbers) and a `completion`; other fields are kept. Read by the one
sample reader (``common.samples``); ``truncate`` cuts a completion at stop tokens."""

from __future__ import annotations

from collections.abc import Mapping

from vibes_eval.benchmarks.common.samples import SampleFields, read_samples
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.types import Sample, Task

FIELDS = SampleFields(ids=("task_id", "name"), texts=("completion",), numeric_ids=True)


def load_samples(source: SampleSource, tasks: Mapping[str, Task]) -> list[Sample]:
    """Raises: UserError for a malformed line, a missing field, an unknown task id or an
    empty file (naming the file, line and field)."""
    return read_samples(source, tasks, FIELDS)


def truncate(completion: str, stop_tokens: list[str]) -> str:
    """The completion up to the first of ``stop_tokens`` it contains, as MultiPL-E cuts
    generations (the earliest occurrence of any token wins)."""
    cut = len(completion)
    for token in stop_tokens:
        at = completion.find(token) if token else -1
        if 0 <= at < cut:
            cut = at
    return completion[:cut]
