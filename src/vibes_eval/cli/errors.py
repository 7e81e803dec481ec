"""Turn user mistakes into one line on stderr and exit code 2, wherever they surface."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from vibes_eval.core.errors import UserError


def run_cli(entry: Callable[..., Any], prog: str) -> None:
    """Run a typer app; usage errors are typer's (exit 2), ``UserError`` is ours (exit 2)."""
    try:
        entry(prog_name=prog)
    except UserError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(1)
