"""What stands between the pages and the network: a token when the server listens beyond
loopback, a Host check when it does not (a web page elsewhere cannot reach a loopback
server through DNS rebinding), and headers that forbid any script but ours."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from markupsafe import escape

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _host_name(value: str) -> str:
    """'127.0.0.1:8765' -> '127.0.0.1'; '[::1]:8765' -> '[::1]'."""
    if value.startswith("["):
        return value.split("]", 1)[0] + "]"
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Guard:
    """ASGI middleware: Host check (``allowed_hosts``), token check (``token``), headers."""

    def __init__(
        self, app: ASGIApp, *, token: str | None, allowed_hosts: set[str] | None, port: int
    ) -> None:
        self.app = app
        self.token = token
        self.allowed_hosts = allowed_hosts
        self.cookie = f"vibes_token_{port}"  # cookies ignore ports: one name per server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if self.allowed_hosts is not None:
            host = _host_name(headers.get("host", "")).lower()
            if host not in self.allowed_hosts:
                await _plain(send, 400, "this server answers only on loopback addresses")
                return
        if self.token is not None:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            given = query.get("token")
            if given is not None and secrets.compare_digest(given, self.token):
                # Keep the token out of the address bar and history: a cookie, then a
                # redirect to the same address without it.
                rest = urlencode([(k, v) for k, v in query.items() if k != "token"])
                raw = scope.get("raw_path") or scope["path"].encode()
                location = raw.decode("latin-1") + (f"?{rest}" if rest else "")
                cookie = f"{self.cookie}={self.token}; HttpOnly; SameSite=Strict; Path=/"
                await _redirect(send, location, cookie)
                return
            if not self._authorized(headers):
                await _plain(send, 401, "a token is needed: open the address the server printed")
                return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + HEADERS
            await send(message)

        await self.app(scope, receive, with_headers)

    def _authorized(self, headers: dict[str, str]) -> bool:
        assert self.token is not None
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and secrets.compare_digest(
            auth[7:].strip(), self.token
        ):
            return True
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is no token
            return False
        morsel = jar.get(self.cookie)
        return morsel is not None and secrets.compare_digest(morsel.value, self.token)


async def _plain(send: Send, status: int, text: str) -> None:
    body = f"<!doctype html><title>{status}</title><p>{escape(text)}</p>".encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/html; charset=utf-8"), *HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, location: str, cookie: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", location.encode("latin-1", "replace")),
                (b"set-cookie", cookie.encode("latin-1")),
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})
