"""One way for settings to reach a benchmark: a config file (`--config run.yaml|toml|json`),
flags the CLI offers as shorthand, and `--set key=value`, merged in that order and validated
by the benchmark's own pydantic model. A mistake is one line naming where it came from."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from vibes_eval.core.errors import UserError

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class Layer:
    """Settings from one place: ``source`` names it in errors (a file, `--set`, a flag)."""

    source: str
    values: dict[str, Any]
    path: Path | None = None  # a config file, to find the line of a bad key


def nest(dotted: str, value: Any) -> dict[str, Any]:
    """'limits.timeout_s', 5 -> {'limits': {'timeout_s': 5}}."""
    out: dict[str, Any] = {}
    node = out
    *parents, leaf = dotted.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value
    return out


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: nested tables merge, anything else is replaced."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_assignments(items: Sequence[str], source: str = "--set") -> Layer:
    """`--set key=value` items; dotted keys reach nested settings, values are read as YAML
    scalars or lists (`5`, `true`, `[1, 2]`, `text`).

    Raises:
        UserError: an item that is not key=value.
    """
    values: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not _KEY.fullmatch(key):
            raise UserError(f"{source} {item!r}: expected key=value, e.g. limits.timeout_s=5")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError:
            value = text  # not YAML: the text itself
        values = merge(values, nest(key, value))
    return Layer(source, values)


def read_config_file(path: Path) -> Layer:
    """A config file: TOML (.toml), JSON (.json) or YAML (anything else), holding a table
    of settings.

    Raises:
        UserError: missing or unreadable file, a syntax error (with its line), not a table.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", path=path) from None
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            data = yaml.safe_load(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"invalid TOML: {exc}", path=path) from None
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or "syntax error"
        line = mark.line + 1 if mark is not None else None
        raise UserError(f"invalid YAML: {problem}", path=path, line=line) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(f"expected a table of settings, got {type(data).__name__}", path=path)
    return Layer(str(path), data, path)


def build(model: type[BaseModel], layers: Sequence[Layer], what: str) -> BaseModel:
    """Validate the merged layers with ``model``.

    Raises:
        UserError: one line naming the offending setting and the layer it came from (for
            a file, its line), for an unknown, mistyped or invalid setting.
    """
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = merge(merged, layer.values)
    try:
        return model.model_validate(merged)
    except ValidationError as exc:
        raise _error(exc, model, layers, what) from None


def _error(
    exc: ValidationError, model: type[BaseModel], layers: Sequence[Layer], what: str
) -> UserError:
    first = exc.errors()[0]
    loc = [str(part) for part in first["loc"]]
    key = ".".join(loc)
    layer = _origin(layers, loc)
    if first["type"] == "extra_forbidden":
        known = ", ".join(sorted(_fields(model, loc[:-1])))
        message = f"unknown setting for {what} (known: {known})"
    else:
        message = first["msg"]
    path = layer.path if layer and layer.path else None
    line = _line_of(layer.path, loc[-1]) if path else None
    prefix = f"{layer.source}: " if layer and not path else ""
    return UserError(f"{prefix}{message}", path=path, line=line, field=key)


def _origin(layers: Sequence[Layer], loc: list[str]) -> Layer | None:
    """The last layer that sets ``loc`` (or its nearest parent)."""
    for depth in range(len(loc), 0, -1):
        for layer in reversed(layers):
            node: Any = layer.values
            for part in loc[:depth]:
                node = node.get(part) if isinstance(node, Mapping) else None
            if node is not None:
                return layer
    return None


def _fields(model: type[BaseModel], parents: list[str]) -> list[str]:
    """The settings a (nested) model accepts at ``parents``."""
    current: Any = model
    for part in parents:
        field = getattr(current, "model_fields", {}).get(part)
        current = field.annotation if field is not None else None
    return list(getattr(current, "model_fields", {}) or [])


def _line_of(path: Path | None, leaf: str) -> int | None:
    """The first line of a config file that sets ``leaf`` (TOML `key =`, YAML `key:`,
    JSON `"key":`)."""
    if path is None:
        return None
    pattern = re.compile(rf"(?:^|[\s{{,])[\"']?{re.escape(leaf)}[\"']?\s*[=:]")
    try:
        for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if pattern.search(text):
                return n
    except OSError:
        return None
    return None
