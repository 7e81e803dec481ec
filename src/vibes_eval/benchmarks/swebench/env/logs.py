"""The official log folder of each instance and the run summary.

``<log_dir>/<run_id>/<model>/<instance_id>/{run_instance.log, patch.diff, eval.sh,
test_output.txt, report.json}`` and ``<report_dir>/<model>.<run_id>.json``, so tools that
read the official harness's output read ours. A folder is written whole each time its
instance is evaluated (never reused from an earlier evaluation of the same run id).
``write_instance`` writes one evaluated prediction's folder, ``write_summaries`` the run
summary of each model (after the run, so verdicts reused from the cache count)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vibes_eval.benchmarks.swebench import scoring
from vibes_eval.benchmarks.swebench.samples import model_name
from vibes_eval.core.types import Sample, SampleResult

if TYPE_CHECKING:
    from vibes_eval.benchmarks.swebench.run import Observation


def instance_dir(log_dir: str, run_id: str, model: str, iid: str) -> Path:
    return Path(log_dir) / run_id / model / iid


def write_folder(folder: Path, files: Mapping[str, str]) -> None:
    """Replace ``folder`` with ``files``: written beside it, then swapped in, so a crash
    leaves the old folder or the new one, never a mix."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
    old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=4) + "\n", encoding="utf-8")
    tmp.replace(path)


def write_instance(
    log_dir: str, run_id: str, sample: Sample, out: Observation, result: SampleResult
) -> None:
    """The instance's folder for one evaluated (non-empty) prediction."""
    folder = instance_dir(log_dir, run_id, model_name(sample), sample.task_id)
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
        files["report.json"] = json.dumps(result.details["report"], indent=4) + "\n"
    write_folder(folder, files)


def write_summaries(
    log_dir: str,
    report_dir: str,
    run_id: str,
    instance_ids: Sequence[str],
    results: Mapping[tuple[str, int], SampleResult],
    samples: Sequence[Sample],
) -> None:
    """The run summary of each model; ``report.json`` of verdicts that were reused (cache,
    duplicates) and so never ran here."""
    by_model: dict[str, list[tuple[Sample, SampleResult]]] = {}
    for sample in samples:
        res = results.get(sample.key)
        if res is not None:
            by_model.setdefault(model_name(sample), []).append((sample, res))
    for model, pairs in by_model.items():
        by_id: dict[str, dict[str, Any]] = {}
        for sample, res in pairs:
            folder = instance_dir(log_dir, run_id, model, sample.task_id)
            report = res.details.get("report")
            if (
                res.details.get("status") in ("resolved", "unresolved")
                and report
                and not (folder / "report.json").exists()
            ):
                write_json(folder / "report.json", report)
            by_id.setdefault(
                sample.task_id,
                {
                    "status": res.details.get("status", "error"),
                    "reason": res.reason,
                    "detail": res.detail,
                },
            )
        submitted = sorted({s.task_id for s, _ in pairs})
        summary = scoring.run_summary(list(instance_ids), submitted, by_id)
        write_json(Path(report_dir) / f"{model}.{run_id}.json", summary)
