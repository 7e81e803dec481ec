"""`vibes eval serve`: the results pages in a browser, read-only over the store."""

from __future__ import annotations

import contextlib
from typing import Annotated

import typer

from vibes_eval.cli import options as opt
from vibes_eval.core.errors import UserError

WEB_MODULES = ("fastapi", "uvicorn", "jinja2", "pygments")


def serve_command(
    store: opt.Store = None,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on. Loopback (the default) is this machine only; any "
            "other address needs --token (one is generated, with a warning, when missing).",
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free one).")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="VIBES_WEB_TOKEN",
            help="Secret every request must carry (?token= once, then a cookie; or "
            "Authorization: Bearer). Required beyond loopback.",
        ),
    ] = None,
) -> None:
    """Browse runs, samples and comparisons in a web browser; a running run's page updates
    live. Nothing is written to the store."""
    missing = [m for m in WEB_MODULES if not _importable(m)]
    if missing:
        raise UserError(
            f"vibes eval serve needs {', '.join(missing)}: pip install 'vibes-eval[web]'"
        )
    from vibes_eval.web.server import serve

    with contextlib.suppress(KeyboardInterrupt):
        serve(store, host=host, port=port, token=token)


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
