"""`--format inspect`: the run as an Inspect AI eval log (`.eval` or `.json`), built from
``inspect_ai``'s own log classes so that `inspect view` opens it.

The mapping: one Inspect sample per vibes sample, the task id as its id and the sample's
index + 1 as its epoch (Inspect tells repeated samples of one task apart by epoch); the
verdict is a score ``C``/``I`` whose explanation is the reason and detail; measurements go
to the score's and the sample's metadata; the run's metrics (pass@k, the benchmark's own)
are the metrics of that score in the log's results."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from vibes_eval import __version__
from vibes_eval.core.errors import UserError
from vibes_eval.core.types import SampleResult, result_text
from vibes_eval.exports.source import RunData, local_tasks, task_text

SCORER = "verdict"
SUFFIXES = (".eval", ".json")
# Inspect's log status for a vibes run status.
STATUS = {"completed": "success", "running": "started", "interrupted": "cancelled"}
NO_MODEL = "none/none"  # what Inspect itself records when no model was used


def _inspect() -> Any:
    try:
        import inspect_ai.log as log
    except ImportError:
        raise UserError(
            "--format inspect needs inspect_ai: pip install 'vibes-eval[inspect]'"
        ) from None
    return log


def default_path(data: RunData) -> Path:
    return Path(f"{data.run_id}.eval")


def write(data: RunData, path: Path | None) -> str:
    if path is None:
        raise UserError("--format inspect writes a file: give -o PATH.eval or -o PATH.json")
    if path.suffix not in SUFFIXES:
        raise UserError("an Inspect log is a .eval or .json file", path=path)
    log = _inspect()
    log.write_eval_log(build(data), str(path))
    return f"{len(data.results)} samples: {path} (inspect view --log-dir {path.parent})"


def build(data: RunData) -> Any:
    """The ``EvalLog`` of a run."""
    log = _inspect()
    model = data.model or NO_MODEL
    tasks = local_tasks(data)
    samples = [_sample(row, res, model, tasks.get(res.task_id)) for row, res in data.pairs()]
    return log.EvalLog(
        status=STATUS.get(data.run.get("status", ""), "started"),
        eval=_spec(data, model),
        results=log.EvalResults(
            total_samples=len(data.results),
            completed_samples=len(data.results),
            scores=[
                log.EvalScore(
                    name=SCORER,
                    scorer=SCORER,
                    scored_samples=len(data.results),
                    metrics={
                        name: log.EvalMetric(name=name, value=value)
                        for name, value in data.metrics.items()
                        if value is not None
                    },
                )
            ],
        ),
        stats=log.EvalStats(
            started_at=data.run.get("started") or "",
            completed_at=data.run.get("finished") or "",
        ),
        samples=samples,
    )


def _spec(data: RunData, model: str) -> Any:
    log = _inspect()
    run = data.run
    task_ids = list(dict.fromkeys(r.task_id for r in data.results))
    per_task = Counter(r.task_id for r in data.results)
    problems = run.get("problems_file")
    return log.EvalSpec(
        run_id=data.run_id,
        created=run.get("started") or "",
        task=data.benchmark,
        task_id=data.run_id,
        dataset=log.EvalDataset(
            name=Path(problems).name if problems else data.benchmark,
            location=problems,
            samples=len(task_ids),
            sample_ids=task_ids,
        ),
        model=model,
        config=log.EvalConfig(epochs=max(per_task.values(), default=1)),
        packages={"vibes-eval": run.get("vibes_version") or __version__},
        metadata={
            "vibes": {
                k: run.get(k)
                for k in ("labels", "runner", "host", "samples_file", "config", "toolchain")
            }
        },
    )


def _sample(row: dict[str, Any], res: SampleResult, model: str, task: Any) -> Any:
    """``task``: the problem, when its file is here (its prompt and reference solution)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score

    prompt = str(row.get("prompt") or task_text(task, "prompt", "problem_statement") or res.task_id)
    completion = _completion(row)
    explanation = res.reason + (f": {res.detail}" if res.detail else "")
    facts: dict[str, Any] = {"reason": res.reason, "measurements": res.measurements}
    if res.cached:
        facts["cached"] = True
    return _inspect().EvalSample(
        id=res.task_id,
        epoch=res.index + 1,
        input=prompt,
        target=task_text(task, "canonical_solution", "patch"),
        messages=[ChatMessageUser(content=prompt), ChatMessageAssistant(content=completion)],
        output=ModelOutput.from_content(model, completion),
        scores={
            SCORER: Score(
                value="C" if res.passed else "I",
                answer=result_text(res),
                explanation=explanation,
                metadata={**facts, **({"details": res.details} if res.details else {})},
            )
        },
        metadata={**facts, "completion_hash": res.completion_hash},
        total_time=res.wall_s or None,
    )


def _completion(row: dict[str, Any]) -> str:
    """The sample's code as its file recorded it (a benchmark whose results rows leave it
    out, such as SWE-bench's patches, gives an empty output)."""
    for key in ("completion", "solution", "model_patch"):
        if isinstance(row.get(key), str):
            return str(row[key])
    return ""
