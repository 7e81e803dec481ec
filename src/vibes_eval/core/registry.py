"""Name -> implementation, imported lazily so a missing optional dependency (docker, ray)
only matters when that runner is asked for. Adding a benchmark or runner is one line here."""

from __future__ import annotations

import importlib
from typing import Any

from vibes_eval.core.errors import UserError

BENCHMARKS: dict[str, str] = {
    "humaneval-rust": "vibes_eval.benchmarks.humaneval.benchmark:HumanEvalRust",
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
