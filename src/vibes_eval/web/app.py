"""The web app: server-rendered pages and the JSON endpoints behind them, read-only over
the store.

Pages: ``/`` (runs), ``/runs/{id}`` (a run), ``/runs/{id}/samples`` (its verdicts, by
page), ``/runs/{id}/sample?task=&index=`` (one sample), ``/compare?runs=a,b`` (runs
against the first). JSON: the same under ``/api``, plus ``/api/runs/{id}/progress`` and
the server-sent events of ``/api/runs/{id}/stream`` that keep a running run's page live.
Each page's routes are in ``web/routes/<page>.py``; this module assembles them and turns
errors into an error page (or JSON under ``/api``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from vibes_eval.core.errors import UserError
from vibes_eval.web.data import BadRequest, NotFound, WebData
from vibes_eval.web.pages import HERE, Pages
from vibes_eval.web.routes import routers

log = logging.getLogger("vibes_eval.web")


class SafeJSON(JSONResponse):
    """JSON without NaN or infinity (not JSON; a CI over no paired task is NaN): null."""

    def render(self, content: Any) -> bytes:
        return super().render(finite(content))


def finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def create_app(
    data: WebData, *, warm: bool = True, on_ready: Callable[[], None] | None = None
) -> FastAPI:
    """The app over ``data`` (which it closes on shutdown). ``warm``: summarize every run
    in the background at startup; ``on_ready`` is called once it can answer."""
    view = Pages(data.where)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        view.compile_all()
        if warm:
            await run_in_threadpool(data.warm)
        if on_ready is not None:
            on_ready()
        yield
        data.close()

    app = FastAPI(
        title="vibes-eval results",
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=lifespan,
        default_response_class=SafeJSON,
    )
    app.state.data = data
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    handle_errors(app, view)
    for router in routers(data, view):
        app.include_router(router)
    return app


def handle_errors(app: FastAPI, view: Pages) -> None:
    """Every error as one message: an error page, or ``{"detail": ...}`` under /api."""

    def error(request: Request, status: int, message: str) -> Response:
        if request.url.path.startswith("/api/"):
            return SafeJSON({"detail": message}, status_code=status)
        return view.page("error.html", request, status, status_code=status, message=message)

    @app.exception_handler(NotFound)
    async def _not_found(request: Request, exc: NotFound) -> Response:
        return error(request, 404, str(exc))

    @app.exception_handler(BadRequest)
    async def _bad(request: Request, exc: BadRequest) -> Response:
        return error(request, 400, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(x) for x in first.get("loc", ()))
        return error(request, 400, f"{where}: {first.get('msg', 'invalid')}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        message = "no such page" if exc.status_code == 404 else str(exc.detail)
        return error(request, exc.status_code, message)

    @app.exception_handler(UserError)
    async def _store(request: Request, exc: UserError) -> Response:
        return error(request, 503, str(exc))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> Response:
        log.exception("error serving %s", request.url.path)
        return error(request, 500, f"internal error ({type(exc).__name__}); see the server log")
