"""A rich progress bar fed by per-sample results (thread-safe: rich locks internally)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from vibes_eval.core.types import SampleResult


@contextmanager
def sample_progress(
    total: int, already: int, *, enabled: bool, console: Console
) -> Iterator[Callable[[SampleResult], None]]:
    if not enabled:
        yield lambda _result: None
        return
    columns = (
        TextColumn("[bold]evaluating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("passed {task.fields[passed]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("samples", total=total, completed=already, passed=0)
        passed = 0

        def advance(result: SampleResult) -> None:
            nonlocal passed
            passed += int(result.passed)
            bar.update(task, advance=1, passed=passed)

        yield advance
