"""HumanEval-Rust's named datasets (resolution in ``core/datasets.py``)."""

from __future__ import annotations

from pathlib import Path

from vibes_eval.core import datasets
from vibes_eval.core.datasets import HF, NamedDataset

DATASETS: dict[str, NamedDataset] = {
    "humaneval-x-rust": NamedDataset(
        "humaneval_rust.jsonl.gz",
        f"{HF}/THUDM/humaneval-x/resolve/main/data/rust/data/humaneval.jsonl.gz",
    ),
}
DEFAULT_DATASET = "humaneval-x-rust"


def resolve(problems: str | None) -> Path:
    """A path for ``--problems``. Raises: UserError (see ``core.datasets.resolve``)."""
    return datasets.resolve(problems, DATASETS, DEFAULT_DATASET)
