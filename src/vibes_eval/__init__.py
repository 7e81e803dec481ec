"""vibes-eval: measure how well language models write code.

``evaluate`` runs an evaluation and ``open_store`` reads recorded ones (``vibes_eval.api``);
both are imported on first use, so ``import vibes_eval`` stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "evaluate", "open_store"]


def __getattr__(name: str) -> Any:
    if name in ("evaluate", "open_store", "Evaluation", "Request", "Results"):
        from vibes_eval import api

        return getattr(api, name)
    raise AttributeError(f"module 'vibes_eval' has no attribute {name!r}")
