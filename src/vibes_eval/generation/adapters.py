"""What generation needs from a benchmark: its ``Prompting`` (``core.prompting``), asked
for through the contract, never found by name or by ``getattr``."""

from __future__ import annotations

from typing import Any

from vibes_eval.core.benchmark import Benchmark
from vibes_eval.core.prompting import Prompting, cut_at_stop, first_fence

__all__ = ["Prompting", "cut_at_stop", "first_fence", "prompting_of"]


def prompting_of(benchmark: Benchmark[Any, Any]) -> Prompting[Any]:
    """Raises: UserError when the benchmark cannot prompt a model."""
    return benchmark.prompting()
