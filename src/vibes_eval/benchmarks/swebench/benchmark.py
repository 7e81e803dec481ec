"""SWE-bench: grade model patches as the official harness does, in the project's Docker
runner, and refuse the forgeries it accepts.

    vibes eval run swe-bench --predictions preds.jsonl --dataset lite --repos /mirror

See docs/swebench.md."""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from vibes_eval.benchmarks.swebench import grading, images, instances, judge, logs, specs
from vibes_eval.benchmarks.swebench.executor import Executor, SweRun
from vibes_eval.benchmarks.swebench.predictions import load_predictions, model_name, patch_is_none
from vibes_eval.benchmarks.swebench.prompting import PatchPrompting
from vibes_eval.benchmarks.swebench.tampering import Findings, check
from vibes_eval.core import metrics as m
from vibes_eval.core.benchmark import Benchmark, BenchmarkConfig
from vibes_eval.core.errors import RunnerError, UserError
from vibes_eval.core.jsonl import SampleSource
from vibes_eval.core.placement import NodeNeeds
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Limits, Reason, Sample, SampleResult, Termination

SWE_LIMITS = Limits(
    timeout_s=1800,
    memory_mb=8192,
    pids=4096,
    output_bytes=16 << 20,
    file_size_mb=4096,
    open_files=4096,
    disk_mb=8192,
)
REASONS = {
    "empty_patch": "the prediction's patch is empty or null: not run",
    "patch_apply_failed": "no fallback (git apply, --3way, --reject, patch --fuzz=5) applied it",
    "partial": "some FAIL_TO_PASS tests pass and every PASS_TO_PASS one (RESOLVED_PARTIAL)",
    "test_tampering": "the patch touches test infrastructure or the test log does not describe "
    "the run (forged): never resolved",
    "test_error": "the tests left nothing to grade (the test patch did not apply, the runner "
    "crashed, the log disagrees with the exit status)",
}
_OUTPUT_TAIL = 20_000


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

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset({"repos", "log_dir", "report_dir"})


@dataclass
class Outcome:
    """What ``run_task`` hands to ``evaluate``."""

    empty: bool = False
    findings: Findings | None = None
    run: SweRun | None = None
    infra: str = ""
    script: str = ""


def repo_of(task_id: str) -> str:
    """``django__django-16255`` -> ``django/django``."""
    return task_id.rsplit("-", 1)[0].replace("__", "/", 1)


class SweBench(Benchmark[instances.SweInstance, SweBenchConfig]):
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
        self.builder = images.ImageBuilder(config.repos, config.image_namespace, _log)
        self.executor = Executor(config.limits, probe=config.probe)
        self.run_id = "vibes"
        self._tasks: dict[str, instances.SweInstance] = {}
        self._lock = threading.Lock()

    # -- inputs -----------------------------------------------------------------------

    def problems_path(self) -> Path | None:
        p = Path(self.config.problems).expanduser() if self.config.problems else None
        return p if p is not None and p.exists() else None

    def load_tasks(self) -> dict[str, instances.SweInstance]:
        if not self.config.problems:
            raise UserError("swe-bench needs a dataset: --dataset lite|verified|full|FILE")
        self._all = instances.load(self.config.problems, split=self.config.split)
        self._tasks = (
            instances.load(
                self.config.problems,
                split=self.config.split,
                instance_ids=self.config.instance_ids,
                instance_filter=self.config.instance_filter,
            )
            if (self.config.instance_ids or self.config.instance_filter)
            else self._all
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
            env["images"] = f"built here (recipe {images.RECIPE}, Debian's python3)"
        return env

    def start_run(self, run_id: str) -> None:
        self.run_id = run_id

    def run_task(self, task: instances.SweInstance, sample: Sample, runner: TaskRunner) -> Outcome:
        if not sample.completion.strip():
            return Outcome(empty=True)
        spec = specs.spec_for(task, self.user_specs)
        test_cmd = (spec or {}).get("test_cmd", "")
        findings = check(
            sample.completion,
            task.test_patch,
            task.repo,
            test_cmd,
            scan_code=self.config.scan_patch_code,
        )
        out = Outcome(findings=findings)
        try:
            out.script = specs.eval_script(task, spec)
            image = self.builder.image_for(task, spec)
            out.run = self.executor.run(task, sample.completion, image, out.script, runner)
        except RunnerError as exc:
            out.infra = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return out

    def evaluate(
        self, task: instances.SweInstance, sample: Sample, output: Outcome
    ) -> SampleResult:
        result = self._verdict(task, sample, output)
        if not output.empty:
            self._write_folder(task, sample, output, result)
        return result

    # -- the verdict --------------------------------------------------------------------

    def _verdict(self, task: instances.SweInstance, sample: Sample, out: Outcome) -> SampleResult:
        base = {
            "task_id": sample.task_id,
            "index": sample.index,
            "passed": False,
            "completion_hash": sample.completion_hash,
        }
        iid, none = task.task_id, patch_is_none(sample)

        def result(reason: str, status: str, detail: str = "", **kw: Any) -> SampleResult:
            report = kw.pop("report", None) or grading.instance_report(
                iid, patch_is_none=none, applied=False, tests_status=None, resolved=False
            )
            details = {
                "status": status,
                "model": model_name(sample),
                "report": report,
                **kw.pop("details", {}),
            }
            return SampleResult(**{**base, **kw}, reason=reason, detail=detail, details=details)

        if out.empty:
            return result("empty_patch", "empty_patch")
        findings = out.findings or Findings()
        static = {"tampering_paths": findings.paths, "tampering_code": findings.code}
        if out.infra or out.run is None:
            return result(Reason.INFRA, "infra_error", out.infra, details=static)
        run = out.run
        wall = {"wall_s": round(run.wall_s, 3)}
        if not run.applied:
            return result(
                "patch_apply_failed",
                "error",
                "no fallback applied the patch",
                measurements=wall,
                details=static,
                stderr=run.apply_log[-_OUTPUT_TAIL:],
            )
        assert run.test is not None
        wall["test_s"] = round(run.test.wall_s, 3)
        output = run.section()[-_OUTPUT_TAIL:]
        if run.test.termination is not Termination.EXITED:
            reason = Reason.from_termination(run.test.termination)
            status = "infra_error" if reason == Reason.INFRA else "error"
            return result(
                reason,
                status,
                f"the test command ended: {run.test.termination}",
                measurements=wall,
                details=static,
                stdout=output,
            )
        parse = specs.parser(specs.parser_name(task, specs.spec_for(task, self.user_specs)))
        official = judge.official_grade(
            task, run.test_output(), run.section(), parse, run.test_exit
        )
        problems = judge.cross_check(task, run, official)
        measurements = {**wall, **judge.summary_counts(official)}
        details = {
            **static,
            "resolution": official.resolution if official.valid else None,
            "official_resolved": official.resolved,
            "runtime_problems": problems,
            "applied_with": run.applied_with,
            "test_exit": run.test_exit,
        }
        if findings or problems:
            reason, passed = "test_tampering", False
            detail = judge.tampering_detail(findings, problems)
        elif not official.valid:
            reason, passed, detail = "test_error", False, "the test log could not be graded"
        else:
            passed = official.resolution == grading.FULL
            reason = {grading.FULL: Reason.PASSED, grading.PARTIAL: "partial"}.get(
                official.resolution, Reason.FAILED
            )
            detail = "" if passed else _f2p_detail(official)
        report = grading.instance_report(
            iid,
            patch_is_none=none,
            applied=official.valid,
            tests_status=official.tests_status,
            resolved=passed,
            extra={
                "reason": reason,
                "official_resolved": official.resolved,
                **({"tampering": detail} if reason == "test_tampering" else {}),
            },
        )
        return result(
            reason,
            "resolved" if passed else "unresolved",
            detail,
            passed=passed,
            measurements=measurements,
            details=details,
            report=report,
            stdout=output,
        )

    # -- logs ---------------------------------------------------------------------------

    def _write_folder(
        self, task: instances.SweInstance, sample: Sample, out: Outcome, result: SampleResult
    ) -> None:
        folder = logs.instance_dir(
            self.config.log_dir, self.run_id, model_name(sample), task.task_id
        )
        run = out.run
        lines = [
            *(run.log if run else []),
            f"verdict: {result.reason}" + (f" ({result.detail})" if result.detail else ""),
        ]
        if out.infra:
            lines.append(f"infra error: {out.infra}")
        files = {
            "run_instance.log": "\n".join(lines) + "\n" + (run.apply_log if run else ""),
            "patch.diff": sample.completion,
            "eval.sh": out.script,
        }
        if run is not None and run.test is not None:
            files["test_output.txt"] = run.test_output()
        if result.details.get("status") in ("resolved", "unresolved"):
            files["report.json"] = _json(result.details["report"])
        with self._lock:
            logs.write_folder(folder, files)

    def finish_run(
        self,
        run_id: str,
        results: Mapping[tuple[str, int], SampleResult],
        samples: Sequence[Sample],
    ) -> None:
        """Write the run summary of each model; fill in report.json of verdicts that were
        reused (cache, duplicates) and so never ran here."""
        by_model: dict[str, list[tuple[Sample, SampleResult]]] = {}
        for sample in samples:
            res = results.get(sample.key)
            if res is not None:
                by_model.setdefault(model_name(sample), []).append((sample, res))
        for model, pairs in by_model.items():
            by_id: dict[str, dict[str, Any]] = {}
            for sample, res in pairs:
                folder = logs.instance_dir(self.config.log_dir, run_id, model, sample.task_id)
                report = res.details.get("report")
                if (
                    res.details.get("status") in ("resolved", "unresolved")
                    and report
                    and not (folder / "report.json").exists()
                ):
                    logs.write_json(folder / "report.json", report)
                by_id.setdefault(
                    sample.task_id,
                    {
                        "status": res.details.get("status", "error"),
                        "reason": res.reason,
                        "detail": res.detail,
                    },
                )
            submitted = sorted({s.task_id for s, _ in pairs})
            summary = grading.run_summary(list(self._tasks), submitted, by_id)
            logs.write_json(Path(self.config.report_dir) / f"{model}.{run_id}.json", summary)

    # -- reporting ------------------------------------------------------------------------

    def metrics(self, ks: Sequence[int]) -> list[m.Metric]:
        def rate(pred: Any) -> Any:
            return lambda rs: sum(1 for r in rs if pred(r)) / len(rs)

        return [
            m.Metric(
                "resolved",
                rate(lambda r: r.passed),
                description="share of predictions graded RESOLVED_FULL (and not forged)",
            ),
            m.Metric(
                "patch_applied",
                rate(lambda r: r.reason not in ("empty_patch", "patch_apply_failed", Reason.INFRA)),
                description="share of predictions whose patch applied",
            ),
            m.Metric(
                "test_tampering",
                rate(lambda r: r.reason == "test_tampering"),
                description="share of predictions caught touching tests or forging results",
            ),
        ]

    def group_of(self, task_id: str) -> str | None:
        return repo_of(task_id)

    def node_needs(self, task: instances.SweInstance) -> NodeNeeds:
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


def _f2p_detail(official: judge.Official) -> str:
    ts = official.tests_status or {}
    f2p, p2p = ts.get(grading.F2P, {}), ts.get(grading.P2P, {})
    return (
        f"{official.resolution}: FAIL_TO_PASS {len(f2p.get('success', []))}/"
        f"{len(f2p.get('success', [])) + len(f2p.get('failure', []))}, PASS_TO_PASS "
        f"{len(p2p.get('success', []))}/{len(p2p.get('success', [])) + len(p2p.get('failure', []))}"
    )


def _json(data: Any) -> str:
    import json

    return json.dumps(data, indent=4) + "\n"


def _log(msg: str) -> None:
    print(f"vibes: {msg}", file=sys.stderr, flush=True)
