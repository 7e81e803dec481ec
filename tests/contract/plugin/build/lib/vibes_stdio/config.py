"""The settings that change verdicts (stored with each run; resuming with others is
refused)."""

from __future__ import annotations

from vibes_eval.core.benchmark import BenchmarkConfig


class StdioConfig(BenchmarkConfig):
    interpreter: str = "/usr/bin/python3"  # run inside the sandbox: a path it can read
