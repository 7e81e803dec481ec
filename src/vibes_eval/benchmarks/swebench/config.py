"""Settings of the `swe-bench` benchmark (``--config`` / ``--set`` / its own options)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from vibes_eval.core.benchmark import BenchmarkConfig
from vibes_eval.core.types import Limits

SWE_LIMITS = Limits(
    timeout_s=1800,
    memory_mb=8192,
    pids=4096,
    output_bytes=16 << 20,
    file_size_mb=4096,
    open_files=4096,
    disk_mb=8192,
)


class SweBenchConfig(BenchmarkConfig):
    """``problems``: the dataset, a .jsonl/.json/.parquet file or a name (lite, verified,
    full, multimodal, a Hugging Face id)."""

    limits: Limits = SWE_LIMITS  # per test command (and per pre/post step)
    split: str = "test"
    instance_ids: list[str] = Field(default_factory=list)
    instance_filter: str | None = None
    specs: str | None = None  # YAML/JSON {repo: {version: spec}}, before the official specs
    repos: str | None = None  # mirror: owner__name git directories or .bundle files
    image_namespace: str | None = None  # e.g. "swebench": official prebuilt images
    scan_patch_code: bool = True  # flag added code that names the test runner's machinery
    probe: bool = True  # the harness's pytest probe (the runtime cross-checks)
    log_dir: str = "logs/run_evaluation"
    report_dir: str = "."
    # Before each image build, the least recently used SWE-bench images go until the cache
    # takes at most this many GB on disk (None: never), so a long run stays within the disk.
    image_budget_gb: float | None = None

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset(
        {"repos", "log_dir", "report_dir", "image_budget_gb"}
    )
