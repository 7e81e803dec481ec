"""Run the web app with uvicorn on a socket bound here, so that the address printed is the
one listening (``--port 0`` picks a free port) and the binding rules hold before anything
is served: loopback by default; any other address only with a token."""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass
from typing import Any, TextIO

from vibes_eval.core.errors import UserError
from vibes_eval.store.urls import for_reading
from vibes_eval.web.security import LOOPBACK, Guard, is_loopback, new_token


@dataclass
class Binding:
    host: str
    port: int
    token: str | None
    generated: bool  # the token was made up here (no --token)


def decide(host: str, port: int, token: str | None) -> Binding:
    """The token rule: a non-loopback address always gets one (generated when not given).

    Raises: UserError for a port out of range or an empty token.
    """
    if not 0 <= port <= 65535:
        raise UserError(f"--port {port}: give 0..65535 (0: any free port)")
    if token is not None and not token.strip():
        raise UserError("--token is empty")
    if token is None and not is_loopback(host):
        return Binding(host, port, new_token(), True)
    return Binding(host, port, token, False)


def guarded(app: Any, b: Binding, port: int) -> Guard:
    """The app behind the token and Host checks that ``b`` calls for."""
    hosts = {*LOOPBACK, b.host.lower()} if is_loopback(b.host) else None
    return Guard(app, token=b.token, allowed_hosts=hosts, port=port)


def bind(host: str, port: int) -> socket.socket:
    """Raises: UserError when the address cannot be bound (taken, not ours)."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def address(host: str, port: int, token: str | None) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(
    store_spec: str | None,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    out: TextIO = sys.stderr,
) -> None:
    """Serve until interrupted.

    Raises: UserError (bad port, cannot bind, store unusable).
    """
    import uvicorn

    from vibes_eval.web.app import create_app
    from vibes_eval.web.data import WebData

    b = decide(host, port, token)
    for_reading(store_spec)  # a --store file that does not exist is a typo: one line now
    data = WebData(store_spec)
    data.store()  # a store that is not one (or unreachable) is one line now, not per page
    sock = bind(b.host, b.port)
    actual = sock.getsockname()[1]

    def ready() -> None:
        print(f"vibes eval serve: {data.where} (read-only) at {address(b.host, actual, b.token)}",
              file=out, flush=True)  # fmt: skip

    app = guarded(create_app(data, on_ready=ready), b, actual)
    if b.generated:
        bar = "!" * 72
        print(
            f"{bar}\nWARNING: listening on {b.host}, beyond this machine, and no --token was "
            f"given.\nAnyone who can reach this port and has the token below can read every "
            f"run,\nsample and log in {data.where}.\nGenerated token: {b.token}\n{bar}",
            file=out,
        )
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        lifespan="on",
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
