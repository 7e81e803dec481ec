"""The task.yaml schema, with CUDAHercules's field names and nesting (schema_version 1).

A field in the wrong place is refused with a hint (the seed paper's appendix lists
``solution_file`` and ``success`` at the top level; the real files nest them under
``runner`` and ``execute``). Errors are one line naming the file, line and field.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vibes_eval.core.errors import UserError

BACKENDS = ("class1_make", "cpu_make", "class2_defpy", "class3_app", "class4_challenge")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Hardware(_Strict):
    min_sm: int = 80
    tested_sms: list[int] = Field(default_factory=list)
    required_features: list[str] = Field(default_factory=list)


class RunnerSection(_Strict):
    backend: str
    workdir: str = ""
    timeout_sec: int = Field(180, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    solution_file: str = ""  # classes 1, 2 and 4
    solution_files: list[str] = Field(default_factory=list)  # class 3

    @field_validator("env", mode="before")
    @classmethod
    def _env_text(cls, value: Any) -> Any:
        # YAML reads `KH_BENCHMARK: 20` as an int; the environment only holds text.
        if isinstance(value, dict):
            return {str(k): str(v) if isinstance(v, int | float) else v for k, v in value.items()}
        return value


class Success(_Strict):
    exit_code: int = 0
    stdout_regex: str = ""


class Build(_Strict):
    cmd: str = "make test"
    clean_cmd: str = "make clean"


class Execute(_Strict):
    cmd: str = "./test"
    success: Success = Field(default_factory=Success)


class Tolerances(_Strict):
    atol: float = 1e-2
    rtol: float = 1e-2


class Correctness(_Strict):
    mode: str = "stdout_or_exit"  # or tensor_compare (class 2)
    tolerances: Tolerances = Field(default_factory=Tolerances)


class Parser(_Strict):
    kernel_time_ms_regex: str = r"Kernel time:\s*([0-9.]+)\s*ms"
    ref_time_ms_regex: str = r"Ref time:\s*([0-9.]+)\s*ms"


class Performance(_Strict):
    enabled: bool = True
    parser: Parser = Field(default_factory=Parser)
    metric: str = "speedup_ref_over_sol"


class Source(_Strict):
    repo: str = ""
    files: list[str] = Field(default_factory=list)
    commit: str = ""
    license: str = ""


class AntiCheat(_Strict):
    blocked_patterns: list[str] = Field(default_factory=list)
    required_patterns: list[str] = Field(default_factory=list)

    @field_validator("blocked_patterns", "required_patterns", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value  # `blocked_patterns:` with nothing after it


class TaskSpec(_Strict):
    """One task.yaml."""

    schema_version: int = 1
    task_id: str
    name: str = ""
    task_class: int = 0
    domain: str = ""
    tags: list[str] = Field(default_factory=list)
    hardware: Hardware = Field(default_factory=Hardware)
    runner: RunnerSection
    build: Build = Field(default_factory=Build)
    execute: Execute = Field(default_factory=Execute)
    correctness: Correctness = Field(default_factory=Correctness)
    performance: Performance = Field(default_factory=Performance)
    source: Source = Field(default_factory=Source)
    anti_cheat: AntiCheat = Field(default_factory=AntiCheat)

    @field_validator("task_id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not value.strip() or value.startswith("/") or ".." in value.split("/"):
            raise ValueError("must be a relative id like class1/general/00_vector_add")
        return value

    @property
    def solution_file(self) -> str:
        return self.runner.solution_file or (self.runner.solution_files or ["solution.h"])[0]


# Fields people put at the wrong level, and where they belong.
MISPLACED = {
    ("solution_file",): "runner.solution_file",
    ("solution_files",): "runner.solution_files",
    ("success",): "execute.success",
    ("tolerances",): "correctness.tolerances",
    ("parser",): "performance.parser",
    ("blocked_patterns",): "anti_cheat.blocked_patterns",
    ("required_patterns",): "anti_cheat.required_patterns",
    ("min_sm",): "hardware.min_sm",
    ("backend",): "runner.backend",
}


def load_task_yaml(path: Path) -> TaskSpec:
    """Parse and validate one task.yaml.

    Raises:
        UserError: unreadable file, YAML syntax error, or a missing, unknown, misplaced or
            mistyped field (one line: file, line, field).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read: {exc}", path=path) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or "syntax error"
        raise UserError(f"invalid YAML: {problem}", path=path, line=line) from None
    if not isinstance(data, dict):
        raise UserError("expected a mapping of task fields", path=path)
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise _error(exc, path, text) from None
    if spec.runner.backend not in BACKENDS:
        raise UserError(
            f"unknown backend {spec.runner.backend!r} (known: {', '.join(BACKENDS)})",
            path=path, line=_line_of(text, ["runner", "backend"]), field="runner.backend",
        )  # fmt: skip
    for where, pattern in _patterns(spec):
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UserError(f"invalid regex {pattern!r}: {exc}", path=path, field=where) from None
    return spec


def _patterns(spec: TaskSpec) -> list[tuple[str, str]]:
    out = [("execute.success.stdout_regex", spec.execute.success.stdout_regex)]
    out += [
        ("performance.parser.kernel_time_ms_regex", spec.performance.parser.kernel_time_ms_regex)
    ]
    out += [("performance.parser.ref_time_ms_regex", spec.performance.parser.ref_time_ms_regex)]
    out += [("anti_cheat.blocked_patterns", p) for p in spec.anti_cheat.blocked_patterns]
    out += [("anti_cheat.required_patterns", p) for p in spec.anti_cheat.required_patterns]
    return out


def _error(exc: ValidationError, path: Path, text: str) -> UserError:
    errors = exc.errors()
    # A misspelt key shows up twice (unknown, and the real one missing): name the typo.
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = [str(p) for p in first["loc"]]
    field = ".".join(loc)
    if first["type"] == "extra_forbidden":
        home = MISPLACED.get(tuple(loc[-1:]))
        close = difflib.get_close_matches(loc[-1], _fields_at(loc[:-1]), n=1)
        if home and home != field:
            message = f"unknown field; it belongs under {home}"
        else:
            message = "unknown field" + (f" (did you mean '{close[0]}'?)" if close else "")
    elif first["type"] == "missing":
        message = "missing"
    else:
        message = first["msg"]
    return UserError(message, path=path, line=_line_of(text, loc), field=field)


def _fields_at(parents: list[str]) -> list[str]:
    model: Any = TaskSpec
    for part in parents:
        field = getattr(model, "model_fields", {}).get(part)
        model = field.annotation if field is not None else None
    return list(getattr(model, "model_fields", {}) or [])


def _line_of(text: str, loc: list[str]) -> int | None:
    """The line of the innermost key of ``loc`` found in order (a nested key is searched
    below its parent's line, at a deeper indent)."""
    lines = text.splitlines()
    start, found, indent = 0, None, -1
    for key in loc:
        if key.isdigit():
            continue
        pattern = re.compile(rf"^(\s*)(- )?[\"']?{re.escape(key)}[\"']?\s*:")
        for n in range(start, len(lines)):
            m = pattern.match(lines[n])
            if m and len(m.group(1)) > indent:
                found, start, indent = n + 1, n + 1, len(m.group(1))
                break
        else:
            break
    return found
