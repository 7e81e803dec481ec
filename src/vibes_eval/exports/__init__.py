"""Recorded runs in other tools' formats (`vibes eval export RUN_ID --format F`):
human-eval's `_results.jsonl`, EvalPlus's `eval_results.json`, SWE-bench's run summary and
an Inspect AI eval log. Each format is a module with ``default_path(data)`` and
``write(data, path)`` (``path`` None: standard output); runs are read through the public
store API only."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from vibes_eval.core.errors import UserError
from vibes_eval.exports.source import RunData, read_run

if TYPE_CHECKING:
    from vibes_eval.api import Results

# format -> module; humaneval first: the default.
FORMATS: dict[str, str] = {
    "humaneval": "vibes_eval.exports.humaneval",
    "evalplus": "vibes_eval.exports.evalplus",
    "swebench": "vibes_eval.exports.swebench",
    "inspect": "vibes_eval.exports.inspect_log",
}
DEFAULT_FORMAT = "humaneval"


def check_format(fmt: str) -> str:
    """Raises: UserError naming the formats there are."""
    if fmt not in FORMATS:
        raise UserError(f"unknown export format '{fmt}': choose one of {', '.join(FORMATS)}")
    return fmt


def export_run(results: Results, run_id: str, fmt: str, output: Path | None) -> str:
    """Write run ``run_id`` in format ``fmt`` to ``output`` (None: the format's default
    file; ``-``: standard output). Returns a line saying what was written ("" for stdout).

    Raises: UserError (an unknown format or run, a file that cannot be written...).
    """
    module = importlib.import_module(FORMATS[check_format(fmt)])
    data: RunData = read_run(results, run_id)
    path = None if output is not None and str(output) == "-" else output
    if output is None:
        path = module.default_path(data)
    try:
        return str(module.write(data, path))
    except OSError as exc:
        raise UserError(f"cannot write the export: {exc.strerror}", path=path) from None


__all__ = ["DEFAULT_FORMAT", "FORMATS", "check_format", "export_run"]
