"""Name -> implementation, imported lazily so a missing optional dependency (docker, ray)
only matters when that runner is asked for. Adding a benchmark or runner is one line here."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from vibes_eval.core.errors import UserError

BENCHMARKS: dict[str, str] = {
    "humaneval-rust": "vibes_eval.benchmarks.humaneval.benchmark:HumanEvalRust",
    "swe-bench": "vibes_eval.benchmarks.swebench.benchmark:SweBench",
    "humaneval-python": "vibes_eval.benchmarks.multilang.benchmark:HumanEvalPython",
    "mbpp": "vibes_eval.benchmarks.multilang.benchmark:Mbpp",
    "humaneval-cpp": "vibes_eval.benchmarks.multilang.benchmark:HumanEvalCpp",
    "humaneval-go": "vibes_eval.benchmarks.multilang.benchmark:HumanEvalGo",
    "humaneval-js": "vibes_eval.benchmarks.multilang.benchmark:HumanEvalJs",
    "humaneval-java": "vibes_eval.benchmarks.multilang.benchmark:HumanEvalJava",
    "multipl-e": "vibes_eval.benchmarks.multilang.benchmark:MultiPLE",
}

RUNNERS: dict[str, str] = {
    "none": "vibes_eval.runners.local:UnsandboxedRunner",
    "process": "vibes_eval.runners.local:ProcessRunner",
    "landlock": "vibes_eval.runners.sandbox:LandlockRunner",
    "bwrap": "vibes_eval.runners.bwrap:BwrapRunner",
    "firejail": "vibes_eval.runners.firejail:FirejailRunner",
    "docker": "vibes_eval.runners.docker.runner:DockerRunner",
    "seatbelt": "vibes_eval.runners.seatbelt:SeatbeltRunner",
}

# `--sandbox auto` tries these in order and takes the first available.
# Strongest first; `process` is not a sandbox (no file or network isolation), so `auto`
# never falls back to it.
AUTO_ORDER: list[str] = ["landlock", "seatbelt", "bwrap", "firejail", "docker"]


def _load(table: dict[str, str], kind: str, name: str) -> Any:
    try:
        target = table[name]
    except KeyError:
        raise UserError(
            f"unknown {kind} '{name}'; choose one of: {', '.join(sorted(table))}"
        ) from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def benchmark_class(name: str) -> Any:
    return _load(BENCHMARKS, "benchmark", name)


def runner_class(name: str) -> Any:
    return _load(RUNNERS, "sandbox", name)


@dataclass
class Scoring:
    """How a stored run is scored and exported: its benchmark's declarations, read without
    running anything (the stored config builds the benchmark; nothing is loaded)."""

    metrics: list[Any]  # core.metrics.Metric
    headline: str
    solved: Callable[[Sequence[Any]], bool]
    export_row: Callable[[dict[str, Any], Any], dict[str, Any]]
    reasons: dict[str, str]
    group_of: Callable[[str], str | None] = lambda _task_id: None


def scoring_for(name: str, config: Mapping[str, Any], ks: Sequence[int]) -> Scoring:
    """The scoring of a run of benchmark ``name``; generic pass@k when this installation
    does not know the benchmark or its stored settings any more."""
    from vibes_eval.core import benchmark as b
    from vibes_eval.core.types import CORE_REASONS

    ks = sorted(set(ks) | {1})
    try:
        cls = benchmark_class(name)
        bench = cls(cls.config_model.model_validate(dict(config)))
    except (UserError, ValidationError, ImportError):
        return Scoring(
            b.default_metrics(ks), "pass@1", b.default_solved, b.default_export_row,
            dict(CORE_REASONS),
        )  # fmt: skip
    return Scoring(
        bench.metrics(ks),
        bench.headline,
        bench.solved,
        bench.export_row,
        bench.known_reasons(),
        bench.group_of,
    )
