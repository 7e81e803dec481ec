"""Read and write JSON Lines, plain or gzipped, with errors that name the file and line."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from vibes_eval.core.errors import UserError

# Where samples come from: a file, or records a caller hands over (the Python API).
SampleSource = str | Path | Iterable[Mapping[str, Any]]


def _open_text(path: Path):  # type: ignore[no-untyped-def]
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="utf-8") if gz else open(path, encoding="utf-8")


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line.

    Raises:
        UserError: missing file, invalid UTF-8/gzip, a line that is not a JSON object.
    """
    path = Path(path)
    if not path.exists():
        raise UserError("no such file", path=path)
    if path.is_dir():
        raise UserError("is a directory, expected a .jsonl or .jsonl.gz file", path=path)
    try:
        with _open_text(path) as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UserError(
                        f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=lineno
                    ) from None
                if not isinstance(obj, dict):
                    raise UserError(
                        f"expected a JSON object, got {type(obj).__name__}", path=path, line=lineno
                    )
                yield lineno, obj
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise UserError(f"cannot read: {exc}", path=path) from None


def source_path(source: SampleSource) -> Path | None:
    """The file behind a sample source, if it is one."""
    return Path(source) if isinstance(source, str | Path) else None


def read_records(source: SampleSource) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record) from a JSONL file, or (position, record) from an iterable of
    mappings, numbered from 1 either way so errors can name them.

    Raises:
        UserError: as ``read_jsonl``; an item of the iterable that is not a mapping.
    """
    path = source_path(source)
    if path is not None:
        yield from read_jsonl(path)
        return
    for n, obj in enumerate(source, start=1):  # type: ignore[arg-type]
        if not isinstance(obj, Mapping):
            raise UserError(f"sample {n}: expected a dict, got {type(obj).__name__}")
        yield n, dict(obj)


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write rows atomically: a crash mid-write never leaves a half file behind."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(tmp, "wt", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(path)
