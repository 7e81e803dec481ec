"""HumanEval-Rust's settings."""

from __future__ import annotations

from typing import ClassVar, Literal

from vibes_eval.core.benchmark import BenchmarkConfig
from vibes_eval.core.types import Limits


class HumanEvalConfig(BenchmarkConfig):
    limits: Limits = Limits(timeout_s=10.0)
    compile_timeout_s: float = 60.0
    enforce_policy: bool = True
    extract: Literal["none", "auto"] = "none"
    batch: bool = True  # many samples per compile; verdicts are the same either way

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset({"batch"})
