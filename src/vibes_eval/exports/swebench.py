"""`--format swebench`: the official run summary ``<model>.<run_id>.json`` (resolved,
unresolved, empty-patch, error ids...), one per model in the run. The SWE-bench benchmark
writes it itself when a run finishes; this calls that same hook (``finish_run``) on the
recorded verdicts, into a scratch folder, so the file is made by one piece of code."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from vibes_eval.core.errors import UserError
from vibes_eval.core.types import Sample
from vibes_eval.exports.source import RunData, load_benchmark

BENCHMARK = "swe-bench"


def default_path(data: RunData) -> Path:
    return Path(".")  # the summaries keep their official names


def write(data: RunData, path: Path | None) -> str:
    if data.benchmark != BENCHMARK:
        raise UserError(
            f"--format swebench is for {BENCHMARK} runs; run '{data.run_id}' is {data.benchmark}"
        )
    with tempfile.TemporaryDirectory(prefix="vibes-swe-export-") as scratch:
        made = _summaries(data, Path(scratch))
        if path is None:
            for file in made:
                sys.stdout.write(file.read_text(encoding="utf-8"))
            return ""
        targets = _targets(made, path)
        for file, target in zip(made, targets, strict=True):
            shutil.copyfile(file, target)
    return ", ".join(str(t) for t in targets)


def _summaries(data: RunData, scratch: Path) -> list[Path]:
    """The benchmark's own finish_run, with its logs and reports in ``scratch``."""
    bench, _ = load_benchmark(
        data, report_dir=str(scratch / "reports"), log_dir=str(scratch / "logs")
    )
    (scratch / "reports").mkdir()
    samples = [
        Sample(task_id=res.task_id, index=res.index, completion="", line=n, record=row)
        for n, (row, res) in enumerate(data.pairs(), 1)
    ]
    bench.finish_run(data.run_id, {r.key: r for r in data.results}, samples)
    return sorted((scratch / "reports").glob(f"*.{data.run_id}.json"))


def _targets(made: list[Path], path: Path) -> list[Path]:
    """A folder keeps the official names; a file name fits a run of one model only."""
    if path.is_dir():
        return [path / f.name for f in made]
    if len(made) > 1:
        raise UserError(
            f"the run has {len(made)} models, one summary each: -o must be a folder", path=path
        )
    return [path]
