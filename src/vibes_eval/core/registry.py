"""Name -> implementation, imported lazily so a missing optional dependency (docker, ray)
only matters when that runner is asked for.

The tables below are the built-in plug-ins. Other installed packages add their own
through entry points, read when a name is not built in (or when every name is listed):

    [project.entry-points."vibes_eval.benchmarks"]
    my-bench = "my_package.benchmark:MyBenchmark"

and likewise ``vibes_eval.runners`` and ``vibes_eval.executors``. A built-in name always
wins over an entry point of the same name (docs/new-benchmark.md)."""

from __future__ import annotations

import importlib
import importlib.metadata
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
    "kernels": "vibes_eval.benchmarks.kernels.benchmark:Kernels",
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

# Where units run (`--executor`): threads here, or the nodes of a Ray cluster.
EXECUTORS: dict[str, str] = {
    "local": "vibes_eval.core.engine:LocalExecutor",
    "ray": "vibes_eval.scaleout.ray_executor:RayExecutor",
}

# `--sandbox auto` tries these in order and takes the first available.
# Strongest first; `process` is not a sandbox (no file or network isolation), so `auto`
# never falls back to it.
AUTO_ORDER: list[str] = ["landlock", "seatbelt", "bwrap", "firejail", "docker"]


GROUPS = {
    "benchmark": "vibes_eval.benchmarks",
    "sandbox": "vibes_eval.runners",
    "executor": "vibes_eval.executors",
}


def _entry_points(kind: str) -> dict[str, str]:
    """Name -> ``module:attr`` of the installed packages' plug-ins of this kind."""
    found = importlib.metadata.entry_points(group=GROUPS[kind])
    return {ep.name: ep.value for ep in found}


def names(table: dict[str, str], kind: str) -> list[str]:
    """Every name of this kind: the built-in ones and the installed plug-ins'."""
    return sorted(set(table) | set(_entry_points(kind)))


def _load(table: dict[str, str], kind: str, name: str) -> Any:
    target = table.get(name) or _entry_points(kind).get(name)
    if target is None:
        raise UserError(f"unknown {kind} '{name}'; choose one of: {', '.join(names(table, kind))}")
    module, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        if table.get(name):
            raise  # a broken built-in is a bug, not the user's mistake
        raise UserError(f"{kind} '{name}' ({target}) cannot be loaded: {exc}") from None
    return obj


def benchmark_class(name: str) -> Any:
    return _load(BENCHMARKS, "benchmark", name)


def benchmark_names() -> list[str]:
    return names(BENCHMARKS, "benchmark")


def runner_class(name: str) -> Any:
    return _load(RUNNERS, "sandbox", name)


def executor_class(name: str) -> Any:
    return _load(EXECUTORS, "executor", name)


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
