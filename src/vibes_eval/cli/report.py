"""The human-readable summary printed after a run."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from vibes_eval.evaluation import Outcome


def print_report(outcome: Outcome, console: Console, *, results_path: Path | None) -> None:
    prepared = outcome.prepared
    scores = outcome.scores()
    n = len(outcome.results)
    # The rate counts verdicts computed in this run, not cached or resumed ones.
    fresh = outcome.evaluated
    rate = f", {fresh / outcome.elapsed_s:.1f} samples/s" if fresh > 0 and outcome.elapsed_s else ""
    head = (
        f"[bold]{prepared.benchmark.name}[/]: {n} of {len(prepared.samples)} samples, "
        f"{len({s.task_id for s in prepared.samples})} tasks, {outcome.elapsed_s:.1f}s{rate}"
    )
    console.print(head)

    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI over tasks", justify="right")
    for name, value in scores.values.items():
        low_high = scores.intervals.get(name)
        ci = f"[{low_high[0]:.3f}, {low_high[1]:.3f}]" if low_high else ""
        table.add_row(name, f"{value:.4f}", ci)
    console.print(table)

    reasons = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    reasons.add_column("outcome")
    reasons.add_column("samples", justify="right")
    for reason, count in outcome.reasons.items():
        reasons.add_row(reason, str(count))
    console.print(reasons)

    attempted = {s.task_id for s in prepared.samples}
    flagged = {
        t: note
        for t, note in prepared.benchmark.task_notes(prepared.tasks).items()
        if t in attempted
    }
    for task_id, note in flagged.items():
        console.print(f"[yellow]flagged[/] {task_id}: {note}")
    for note in scores.notes + outcome.notes:
        console.print(f"[yellow]note[/]: {note}")
    if outcome.interrupted:
        console.print(f"[red]interrupted[/]: {n} of {len(prepared.samples)} samples evaluated")
    if results_path is not None:
        console.print(f"results: {results_path}")
