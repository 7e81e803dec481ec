"""One recorded run as the exporters see it, read through the public store API
(``vibes_eval.open_store``): the run's facts, its metrics, every verdict and the results
file's rows, in sample-file order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vibes_eval.core.errors import UserError
from vibes_eval.core.types import SampleResult

if TYPE_CHECKING:
    from vibes_eval.api import Results


@dataclass
class RunData:
    """``run``: the facts of ``Results.run(...)["run"]`` (benchmark, labels, files,
    config, times); ``rows`` pair with ``results`` one to one."""

    run: dict[str, Any]
    metrics: dict[str, float]
    results: list[SampleResult]
    rows: list[dict[str, Any]]

    @property
    def run_id(self) -> str:
        return str(self.run["run_id"])

    @property
    def benchmark(self) -> str:
        return str(self.run["benchmark"])

    @property
    def model(self) -> str | None:
        label = self.run.get("labels", {}).get("model")
        return str(label) if label else None

    def pairs(self) -> list[tuple[dict[str, Any], SampleResult]]:
        return list(zip(self.rows, self.results, strict=True))


def read_run(results: Results, run_id: str) -> RunData:
    """Raises: UnknownRun, StoreMissing (one line each)."""
    detail = results.run(run_id)
    return RunData(
        run=detail["run"],
        metrics=dict(detail["metrics"]),
        results=results.results(run_id),
        rows=results.export(run_id),
    )


def load_benchmark(data: RunData, **overrides: Any) -> tuple[Any, dict[str, Any]]:
    """The run's benchmark, built from its stored settings, with its tasks loaded from the
    problems file the run recorded; ``overrides`` replace stored settings.

    Raises: UserError when the benchmark or its problems file cannot be loaded here.
    """
    from pydantic import ValidationError

    from vibes_eval.core.registry import benchmark_class

    config = dict(data.run.get("config") or {})
    problems = data.run.get("problems_file")
    if problems and Path(problems).exists():
        config["problems"] = problems  # absolute: works from any directory
    config.update(overrides)
    try:
        cls = benchmark_class(data.benchmark)
        bench = cls(cls.config_model.model_validate(config))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UserError(
            f"run '{data.run_id}': its stored settings no longer load here: {first['msg']}",
            field=".".join(str(p) for p in first["loc"]),
        ) from None
    return bench, dict(bench.load_tasks())


def local_tasks(data: RunData) -> dict[str, Any]:
    """The run's tasks when its problems file is still here; else none (loading a dataset
    by name could reach the network, which an export must not)."""
    problems = data.run.get("problems_file")
    if not problems or not Path(problems).is_file():
        return {}
    try:
        return load_benchmark(data)[1]
    except (UserError, OSError, ImportError):
        return {}


def task_text(task: Any, *names: str) -> str:
    """The first of a task's text fields it has (tasks differ by benchmark)."""
    for name in names:
        value = getattr(task, name, None)
        if isinstance(value, str) and value:
            return value
    return ""
