"""Settings of the `kernels` benchmark (``--config`` / ``--set``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from vibes_eval.core.benchmark import BenchmarkConfig
from vibes_eval.core.types import Limits

# Builds of CUTLASS-heavy tasks take minutes and gigabytes; CUDA reserves far more virtual
# memory than it uses (the runners leave the address space unlimited for GPU sessions).
KERNEL_LIMITS = Limits(
    timeout_s=180, memory_mb=8192, pids=256, output_bytes=4 << 20, file_size_mb=1024,
    open_files=1024, disk_mb=4096,
)  # fmt: skip


class KernelsConfig(BenchmarkConfig):
    """``problems``: the task tree (`--tasks DIR`): a CUDAHercules checkout, one of
    examples/kernels/*, or a single task.yaml."""

    limits: Limits = KERNEL_LIMITS  # timeout_s is each task's runner.timeout_sec instead
    repeats: int = Field(3, ge=1, le=50)  # timing runs per sample: median and spread
    trials: int | None = Field(None, ge=1)  # KH_TRIALS for the harness (task env otherwise)
    warmup: int | None = Field(None, ge=0)  # KH_WARMUP
    cpu_threads: int = Field(1, ge=1)  # CPUs a CPU task's timing run is pinned to (OMP too)
    reference_times: Literal["live", "cached"] = "live"  # cached: stored by the expert's run
    min_code_lines: int = Field(5, ge=0)
    # The static source rules (patterns: libraries, constructors, raw syscalls, inline
    # assembly, the task's blocked/required patterns, naming task files, a minimum of code).
    # A fast courtesy: credit must be right without them (issue 26), so they can be off.
    enforce_policy: bool = True
    symbol_check: bool = True  # compile the solution alone and check its symbols
    extra_allowed_symbols: list[str] = Field(default_factory=list)
    audit_speedup: float = Field(10.0, gt=1)  # speedups above this are flagged for audit
    timeout_scale: float = Field(1.0, gt=0)

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset()
