"""Model predictions in the official shapes: JSONL, a JSON list, or a JSON object keyed by
instance id; each ``{"instance_id", "model_name_or_path", "model_patch"}``."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from vibes_eval.benchmarks.common.samples import SampleFields, SampleNumbering, task_id_of
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import SampleSource, read_records, source_path
from vibes_eval.core.types import Sample

FIELDS = SampleFields(ids=("instance_id",), texts=("model_patch",), nullable_text=True)


def _records(source: SampleSource) -> Iterable[tuple[int, dict[str, Any]]]:
    path = source_path(source)
    if path is None or not path.name.lower().endswith(".json"):
        yield from read_records(source)
        return
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError("no such file", path=path) from None
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read: {exc}", path=path) from None
    if isinstance(data, Mapping):
        items = []
        for key, value in data.items():
            if not isinstance(value, Mapping):
                raise UserError(f"prediction {key!r}: expected an object", path=path)
            items.append({"instance_id": key, **value})
        data = items
    if not isinstance(data, list):
        raise UserError(
            "expected a list of predictions or an object keyed by instance id", path=path
        )
    for n, row in enumerate(data, start=1):
        if not isinstance(row, Mapping):
            raise UserError(f"prediction {n}: expected an object", path=path)
        yield n, dict(row)


def load_predictions(
    source: SampleSource, known: Mapping[str, Any], selected: Mapping[str, Any]
) -> list[Sample]:
    """The predictions of ``source`` as samples: ``completion`` is the patch ("" for an
    empty or null one). Predictions of instances of the dataset that the filters left out
    are skipped; ids the dataset lacks are an error.

    Raises:
        UserError: malformed row, missing or mistyped field, unknown instance id, no
            prediction for any selected instance.
    """
    path = source_path(source)
    where = str(path) if path else "predictions"
    samples: list[Sample] = []
    numbering = SampleNumbering()
    for line, row in _records(source):
        iid = _instance_id(row, where, line)
        if iid not in known:
            raise UserError(
                f"unknown instance id {iid!r}", path=where, line=line, field="instance_id"
            )
        patch = _patch(row, where, line)
        if iid in selected:
            samples.append(numbering.make(iid, patch or "", line, dict(row)))
    if not samples:
        raise UserError("no prediction for any selected instance", path=where)
    return samples


def _instance_id(row: Mapping[str, Any], where: str, line: int) -> str:
    iid = task_id_of(row, FIELDS, where, line)
    if not iid:
        raise UserError("missing or not a string", path=where, line=line, field="instance_id")
    return iid


def _patch(row: Mapping[str, Any], where: str, line: int) -> str | None:
    """The patch (None: null), after checking the fields every prediction has."""
    if "model_patch" not in row:
        raise UserError("missing", path=where, line=line, field="model_patch")
    patch = row["model_patch"]
    if patch is not None and not isinstance(patch, str):
        raise UserError("expected a string or null", path=where, line=line, field="model_patch")
    model = row.get("model_name_or_path")
    if model is not None and not isinstance(model, str):
        raise UserError("expected a string", path=where, line=line, field="model_name_or_path")
    return patch


def model_name(sample: Sample) -> str:
    """The model's name as a directory name (the official harness's ``/`` -> ``__``)."""
    name = sample.record.get("model_name_or_path") or "model"
    return str(name).replace("/", "__")


def patch_is_none(sample: Sample) -> bool:
    return sample.record.get("model_patch", "") is None
