"""SWE-bench: grade model patches as the official harness does, in the project's Docker
runner, and refuse the forgeries it accepts.

    vibes eval run swe-bench --predictions preds.jsonl --dataset lite --repos /mirror

The wiring only: ``tasks`` loads the instances, ``samples`` the predictions, ``run``
observes one prediction in its image (``env``), ``judge`` turns that into the verdict,
``scoring`` holds the official rules and the metrics. See docs/swebench.md."""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.benchmarks.swebench import scoring
from vibes_eval.benchmarks.swebench.config import SWE_LIMITS, SweBenchConfig
from vibes_eval.benchmarks.swebench.env import images, logs, specs
from vibes_eval.benchmarks.swebench.integrity.tampering import check
from vibes_eval.benchmarks.swebench.judge import judge
from vibes_eval.benchmarks.swebench.prompting import PatchPrompting
from vibes_eval.benchmarks.swebench.run import Observation, PatchEvaluator
from vibes_eval.benchmarks.swebench.samples import load_predictions
from vibes_eval.benchmarks.swebench.tasks import SweInstance
from vibes_eval.benchmarks.swebench.tasks import load as load_instances
from vibes_eval.core import metrics as m
from vibes_eval.core.benchmark import Benchmark
from vibes_eval.core.errors import RunnerError, UserError
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.placement import NodeNeeds
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Sample, SampleResult

__all__ = ["SWE_LIMITS", "SweBench", "SweBenchConfig", "repo_of"]

REASONS = {
    "empty_patch": "the prediction's patch is empty or null: not run",
    "patch_apply_failed": "no fallback (git apply, --3way, --reject, patch --fuzz=5) applied it",
    "partial": "some FAIL_TO_PASS tests pass and every PASS_TO_PASS one (RESOLVED_PARTIAL)",
    "test_tampering": "the patch touches test infrastructure or the test log does not describe "
    "the run (forged): never resolved",
    "test_error": "the tests left nothing to grade (the test patch did not apply, the runner "
    "crashed, the log disagrees with the exit status)",
}


def repo_of(task_id: str) -> str:
    """``django__django-16255`` -> ``django/django``."""
    return task_id.rsplit("-", 1)[0].replace("__", "/", 1)


class SweBench(Benchmark[SweInstance, SweBenchConfig]):
    name: ClassVar[str] = "swe-bench"
    suite: ClassVar[str] = "swebench"
    prompting_class = PatchPrompting
    config_model = SweBenchConfig
    reasons: ClassVar[Mapping[str, str]] = REASONS
    headline: ClassVar[str] = "resolved"
    runner_needs: ClassVar[frozenset[str]] = frozenset({"session_images"})

    def __init__(self, config: SweBenchConfig) -> None:
        super().__init__(config)
        self.user_specs = specs.read_specs(config.specs)
        self.builder = images.ImageBuilder(
            config.repos, config.image_namespace, _log, budget_gb=config.image_budget_gb
        )
        self.evaluator = PatchEvaluator(config.limits, probe=config.probe)
        self.run_id = "vibes"
        self._tasks: dict[str, SweInstance] = {}
        self._lock = threading.Lock()

    # -- inputs -----------------------------------------------------------------------

    def problems_path(self) -> Path | None:
        p = Path(self.config.problems).expanduser() if self.config.problems else None
        return p if p is not None and p.exists() else None

    def load_tasks(self) -> dict[str, SweInstance]:
        cfg = self.config
        if not cfg.problems:
            raise UserError("swe-bench needs a dataset: --dataset lite|verified|full|FILE")
        self._all = load_instances(cfg.problems, split=cfg.split)
        self._tasks = self._all
        if cfg.instance_ids or cfg.instance_filter:
            self._tasks = load_instances(
                cfg.problems,
                split=cfg.split,
                instance_ids=cfg.instance_ids,
                instance_filter=cfg.instance_filter,
            )
        return self._tasks

    def load_samples(self, source: SampleSource, tasks: dict[str, Any]) -> list[Sample]:
        samples = load_predictions(source, getattr(self, "_all", tasks), tasks)
        for sample in samples:  # a run must not stop halfway for want of a spec
            task = tasks[sample.task_id]
            if (
                sample.completion
                and not task.eval_script
                and specs.spec_for(task, self.user_specs) is None
            ):
                raise UserError(specs.missing_spec(task))
        return samples

    # -- running ----------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        env = {"swebench": specs.swebench_version()}
        if self.config.image_namespace:
            env["images"] = f"official ({self.config.image_namespace})"
        else:
            env["images"] = (
                f"built here (recipe {images.RECIPE}, Debian's python3 of the suite nearest "
                "the spec's version)"
            )
        return env

    def start_run(self, run_id: str) -> None:
        self.run_id = run_id

    def run_task(self, task: SweInstance, sample: Sample, runner: TaskRunner) -> Observation:
        if not sample.completion.strip():
            return Observation(empty=True)
        spec = specs.spec_for(task, self.user_specs)
        test_cmd = (spec or {}).get("test_cmd", "")
        findings = check(
            sample.completion,
            task.test_patch,
            task.repo,
            test_cmd,
            scan_code=self.config.scan_patch_code,
        )
        out = Observation(findings=findings)
        try:
            out.script = specs.eval_script(task, spec)
            out.environment = self.builder.notes(task, spec)
            image = self.builder.image_for(task, spec)
            out.run = self.evaluator.run(task, sample.completion, image, out.script, runner, spec)
            out.run.log[1:1] = [f"environment: {n}" for n in out.environment.get("notes", [])]
        except RunnerError as exc:
            out.infra = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return out

    def evaluate(self, task: SweInstance, sample: Sample, output: Observation) -> SampleResult:
        result = judge(task, sample, output, specs.spec_for(task, self.user_specs))
        if not output.empty:
            with self._lock:
                logs.write_instance(self.config.log_dir, self.run_id, sample, output, result)
        return result

    def finish_run(
        self,
        run_id: str,
        results: Mapping[tuple[str, int], SampleResult],
        samples: Sequence[Sample],
    ) -> None:
        cfg = self.config
        logs.write_summaries(cfg.log_dir, cfg.report_dir, run_id, list(self._tasks), results,
                             samples)  # fmt: skip

    # -- reporting ------------------------------------------------------------------------

    def metrics(self, ks: Sequence[int]) -> list[m.Metric]:
        return scoring.metrics()

    def group_of(self, task_id: str) -> str | None:
        return repo_of(task_id)

    def node_needs(self, task: SweInstance) -> NodeNeeds:
        """Scale-out: nodes that already hold the instance's image take it first."""
        if task.image:
            return NodeNeeds(images=(task.image,))
        if self.config.image_namespace:
            return NodeNeeds(
                images=(images.official_name(self.config.image_namespace, task.task_id),)
            )
        return NodeNeeds(images=(f"label=vibes-eval.swe.instance={task.task_id}",))

    def export_row(self, record: dict[str, Any], result: SampleResult) -> dict[str, Any]:
        row = {k: v for k, v in record.items() if k != "model_patch"}
        row.update(
            resolved=result.passed,
            reason=result.reason,
            detail=result.detail,
            report=result.details.get("report"),
        )
        return row


def _log(msg: str) -> None:
    print(f"vibes: {msg}", file=sys.stderr, flush=True)
