"""SWE-bench instances: read from a local JSONL / JSON / parquet file, or by name through
the ``datasets`` library (``lite``, ``verified``, ``full``, ``multimodal`` or any Hugging
Face id), then filtered by id or regex."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import read_jsonl
from vibes_eval.core.types import Task

# Short names of the official datasets on the Hugging Face Hub.
NAMED = {
    "lite": "SWE-bench/SWE-bench_Lite",
    "verified": "SWE-bench/SWE-bench_Verified",
    "full": "SWE-bench/SWE-bench",
    "multimodal": "SWE-bench/SWE-bench_Multimodal",
}
REQUIRED = ("instance_id", "repo", "base_commit", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS")


class SweInstance(Task):
    """One SWE-bench task instance (``task_id`` is its ``instance_id``). Fields that only
    describe the task to a model (problem statement, hints) are kept out of the
    fingerprint: they do not change a verdict."""

    repo: str
    base_commit: str
    patch: str = ""  # the gold patch
    test_patch: str
    version: str = ""
    environment_setup_commit: str = ""
    FAIL_TO_PASS: list[str]
    PASS_TO_PASS: list[str]
    # SWE-bench 5.x rows: a prebuilt image, the eval script, the parser, the grading mode.
    image: str | None = None
    eval_script: str | None = None
    log_parser: str | None = None
    eval_type: str | None = None
    problem_statement: str = Field(default="", exclude=True)
    hints_text: str = Field(default="", exclude=True)

    @property
    def instance_id(self) -> str:
        return self.task_id


def _test_list(value: Any, where: str, line: int | None, field: str) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError:
            raise UserError(
                "not a JSON list of test ids", path=where, line=line, field=field
            ) from None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise UserError("expected a list of test ids", path=where, line=line, field=field)
    return value


def parse_row(row: dict[str, Any], where: str, line: int | None) -> SweInstance:
    """Raises: UserError naming the file, row and field."""
    for name in REQUIRED:
        if row.get(name) in (None, ""):
            field = name
            raise UserError("missing", path=where, line=line, field=field)
    for name in ("instance_id", "repo", "base_commit", "test_patch"):
        if not isinstance(row[name], str):
            raise UserError("expected a string", path=where, line=line, field=name)
    data = {
        "task_id": row["instance_id"],
        "source": f"{where}:{line}" if line else where,
        "FAIL_TO_PASS": _test_list(row["FAIL_TO_PASS"], where, line, "FAIL_TO_PASS"),
        "PASS_TO_PASS": _test_list(row["PASS_TO_PASS"], where, line, "PASS_TO_PASS"),
    }
    for name in (
        "repo",
        "base_commit",
        "patch",
        "test_patch",
        "version",
        "environment_setup_commit",
        "image",
        "eval_script",
        "log_parser",
        "eval_type",
        "problem_statement",
        "hints_text",
    ):
        value = row.get(name)
        if value is not None:
            data[name] = str(value)  # versions are sometimes numbers (0.21 as a float)
    return SweInstance(**data)


def _rows_from_file(path: Path) -> Iterable[tuple[int | None, dict[str, Any]]]:
    """(row number, row) of a .jsonl(.gz), .json (a list, or an object keyed by id) or
    .parquet file."""
    if not path.exists():
        raise UserError("no such file", path=path)
    name = path.name.lower()
    if name.endswith(".parquet"):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise UserError(
                "reading parquet needs pyarrow: pip install pyarrow", path=path
            ) from None
        for n, row in enumerate(pq.read_table(path).to_pylist(), start=1):
            yield n, row
        return
    if name.endswith(".json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UserError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read: {exc}", path=path) from None
        if isinstance(data, dict):
            data = [{"instance_id": k, **v} if isinstance(v, dict) else v for k, v in data.items()]
        if not isinstance(data, list):
            raise UserError("expected a list of instances", path=path)
        for n, row in enumerate(data, start=1):
            if not isinstance(row, dict):
                raise UserError(f"instance {n}: expected an object", path=path)
            yield n, row
        return
    yield from read_jsonl(path)


def _rows_from_hub(name: str, split: str) -> Iterable[tuple[int | None, dict[str, Any]]]:
    hub_id = NAMED.get(name.lower(), name)
    try:
        import datasets
    except ImportError:
        raise UserError(
            f"--dataset {name}: loading by name needs the datasets library "
            "(pip install 'vibes-eval[swebench]'), or give a local .jsonl/.json/.parquet file"
        ) from None
    try:
        ds = datasets.load_dataset(hub_id, split=split)
    except Exception as exc:  # offline, unknown id, unknown split
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise UserError(
            f"--dataset {name}: cannot load {hub_id} (split {split}) from the Hugging Face Hub "
            f"({first}); offline, fetch it elsewhere (datasets.load_dataset('{hub_id}', "
            f"split='{split}').to_json('x.jsonl')) and pass the file"
        ) from None
    for n, row in enumerate(ds, start=1):
        yield n, dict(row)


def load(
    dataset: str,
    *,
    split: str = "test",
    instance_ids: Sequence[str] = (),
    instance_filter: str | None = None,
) -> dict[str, SweInstance]:
    """The instances of ``dataset`` (a file, or a name), filtered.

    Raises:
        UserError: missing/malformed file or row (file, row, field), a duplicate id, an
            unknown id in ``instance_ids``, a bad regex, nothing left after filtering.
    """
    path = Path(dataset).expanduser()
    local = path.exists() or path.suffix in (".jsonl", ".json", ".parquet", ".gz")
    where = str(path) if local else f"--dataset {dataset}"
    rows = _rows_from_file(path) if local else _rows_from_hub(dataset, split)
    try:
        pattern = re.compile(instance_filter) if instance_filter else None
    except re.error as exc:
        raise UserError(f"--instance-filter {instance_filter!r}: {exc}") from None
    found: dict[str, SweInstance] = {}
    for line, row in rows:
        inst = parse_row(row, where, line)
        if inst.task_id in found:
            raise UserError(f"instance id {inst.task_id!r} given twice", path=where, line=line)
        found[inst.task_id] = inst
    if not found:
        raise UserError("no instances", path=where)
    if instance_ids:
        unknown = [i for i in instance_ids if i not in found]
        if unknown:
            raise UserError(f"--instance-ids: {unknown[0]!r} is not in {where}")
        found = {i: found[i] for i in instance_ids}
    if pattern is not None:
        found = {i: inst for i, inst in found.items() if pattern.search(i)}
        if not found:
            raise UserError(f"--instance-filter {instance_filter!r} matches no instance of {where}")
    return found
