"""The `kernels` benchmark: CUDAHercules-style task.yaml tasks, built, validated against
an expert reference, timed against it in the same run, and scored by speed and fast_p.

    vibes eval run kernels --tasks examples/kernels/cpu --samples solutions.jsonl
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.benchmarks.kernels import run as pipeline
from vibes_eval.benchmarks.kernels import scoring as km
from vibes_eval.benchmarks.kernels.config import KernelsConfig
from vibes_eval.benchmarks.kernels.judge import judge
from vibes_eval.benchmarks.kernels.measure.hardware import cpu_name
from vibes_eval.benchmarks.kernels.measure.timing import RefCache
from vibes_eval.benchmarks.kernels.prompting import KernelPrompting
from vibes_eval.benchmarks.kernels.run import KernelRun, Pipeline, Toolchain
from vibes_eval.benchmarks.kernels.samples import load_samples
from vibes_eval.benchmarks.kernels.tasks import KernelTask, load_tasks
from vibes_eval.core import devices
from vibes_eval.core import metrics as m
from vibes_eval.core.benchmark import Benchmark
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Sample, SampleResult
from vibes_eval.paths import cache_dir

REASONS = {
    pipeline.ANTI_CHEAT: "caught cheating (the rule that fired is in the detail)",
    pipeline.ARCH_UNSUPPORTED: "the hardware here cannot run the task: not counted",
    pipeline.NO_DEVICE: "no GPU here: built and checked, not run; not counted",
    pipeline.UNSUPPORTED: "the task's backend is not supported yet: not counted",
}


class Kernels(Benchmark[KernelTask, KernelsConfig]):
    name: ClassVar[str] = "kernels"
    suite: ClassVar[str] = "kernels"
    prompting_class = KernelPrompting
    config_model = KernelsConfig
    reasons: ClassVar[dict[str, str]] = REASONS
    headline: ClassVar[str] = km.HEADLINE

    def __init__(self, config: KernelsConfig) -> None:
        super().__init__(config)
        self._pipeline: Pipeline | None = None
        self.ref_cache = RefCache(cache_dir() / "kernels" / "reference_times.json")

    @property
    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            self._pipeline = Pipeline(self.config, Toolchain.detect())
        return self._pipeline

    # -- inputs -------------------------------------------------------------------------

    def problems_path(self) -> Path | None:
        """None: a task tree is identified by its tasks' fingerprints (files included)."""
        path = Path(self.config.problems) if self.config.problems else None
        return path if path is not None and path.is_file() else None

    def load_tasks(self) -> dict[str, KernelTask]:
        if not self.config.problems:
            raise UserError("kernels needs its tasks: --tasks DIR (a folder of task.yaml "
                            "files, e.g. examples/kernels/cpu)", field="problems")  # fmt: skip
        return load_tasks(self.config.problems)

    def load_samples(self, source: SampleSource, tasks: dict[str, KernelTask]) -> list[Sample]:
        return load_samples(source, tasks)

    # -- running ------------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        return toolchain_facts()

    def run_task(self, task: KernelTask, sample: Sample, runner: TaskRunner) -> KernelRun:
        return self.pipeline.run(task, sample, runner)

    def evaluate(self, task: KernelTask, sample: Sample, output: KernelRun) -> SampleResult:
        facts = toolchain_facts()
        label = f"{facts.get('cxx', '')} | {facts.get('nvcc', '')}"
        return judge(task, sample, output, self.config, self.ref_cache, label)

    # -- reporting ----------------------------------------------------------------------

    def metrics(self, ks: Sequence[int]) -> list[m.Metric]:
        return km.kernel_metrics(ks)

    def solved(self, results: Sequence[m.Scored]) -> bool:
        return km.solved(results)

    def task_notes(self, tasks: dict[str, KernelTask]) -> dict[str, str]:
        notes = {}
        for tid, task in tasks.items():
            if task.backend not in pipeline.IMPLEMENTED:
                notes[tid] = f"backend {task.backend} is not supported yet: not counted"
            elif not task.channel:
                notes[tid] = ("its harness reports on stdout, in the solution's process: "
                              "verdicts rest on the static and symbol checks")  # fmt: skip
        return notes

    def export_row(self, record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
        row = {k: v for k, v in record.items() if k not in ("solution", "completion")}
        row.update(passed=result.passed, reason=result.reason, detail=result.detail,
                   measurements=result.measurements)  # fmt: skip
        if result.details:
            row["details"] = result.details
        return row


@functools.cache
def toolchain_facts() -> dict[str, str]:
    """Compiler versions and devices: part of a run's identity and cache key."""
    facts = {"cxx": _version(["g++", "--version"], first=True), "cpu": cpu_name()}
    if shutil.which("nvcc"):
        facts["nvcc"] = _version(["nvcc", "--version"], first=False)
    found = devices.gpus()
    facts["gpus"] = ", ".join(f"{g.name} (sm_{g.sm})" for g in found) if found else "none"
    return facts


def _version(cmd: list[str], *, first: bool) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "missing"
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    if not lines:
        return "unknown"
    return lines[0] if first else next((ln for ln in lines if "release" in ln), lines[-1])
