"""The web app: server-rendered pages and the JSON endpoints behind them, read-only over
the store.

Pages: ``/`` (runs), ``/runs/{id}`` (a run), ``/runs/{id}/samples`` (its verdicts, by
page), ``/runs/{id}/sample?task=&index=`` (one sample), ``/compare?runs=a,b`` (runs
against the first). JSON: the same under ``/api``, plus ``/api/runs/{id}/progress`` and
the server-sent events of ``/api/runs/{id}/stream`` that keep a running run's page live.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from vibes_eval.core.errors import UserError
from vibes_eval.web import charts, render
from vibes_eval.web.data import BadRequest, NotFound, WebData
from vibes_eval.web.summary import RunSummary

HERE = Path(__file__).parent
TASKS_PER_PAGE = 200
SAMPLES_PER_PAGE = 50
STREAM_S = 600.0  # an event stream ends after this; the browser reconnects by itself
TICK_S = 1.0
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


def templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(num=fmt_num, pct=fmt_pct, dur=fmt_duration, ts=fmt_ts, q=quote_path)
    env.globals.update(render=render, charts=charts, json=json, enumerate=enumerate)
    return env


def quote_path(value: Any) -> str:
    return quote(str(value), safe="")


def fmt_num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {sec:02d}s"


def fmt_ts(value: str | None) -> str:
    return "-" if not value else value.replace("T", " ")[:19]


def url(path: str, **params: Any) -> str:
    """``path`` with the query parameters that are not None."""
    kept = [(k, v) for k, v in params.items() if v is not None and v != ""]
    return path + ("?" + urlencode(kept, doseq=True) if kept else "")


def run_url(run_id: str, tail: str = "") -> str:
    return f"/runs/{quote_path(run_id)}{tail}"


def sample_url(run_id: str, task_id: str, index: int) -> str:
    return url(run_url(run_id, "/sample"), task=task_id, index=index)


def create_app(
    data: WebData, *, warm: bool = True, on_ready: Callable[[], None] | None = None
) -> FastAPI:
    """The app over ``data`` (which it closes on shutdown). ``warm``: summarize every run
    in the background at startup; ``on_ready`` is called once it can answer."""
    env = templates()
    env.globals.update(url=url, run_url=run_url, sample_url=sample_url, store=data.where)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        for name in env.list_templates():  # compiled now, not on someone's first visit
            env.get_template(name)
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

    def page(name: str, request: Request, status: int = 200, **ctx: Any) -> HTMLResponse:
        ctx.setdefault("api", None)
        html = env.get_template(name).render(request=request, **ctx)
        return HTMLResponse(html, status_code=status)

    def wants_json(request: Request) -> bool:
        return request.url.path.startswith("/api/")

    def error(request: Request, status: int, message: str) -> Response:
        if wants_json(request):
            return SafeJSON({"detail": message}, status_code=status)
        return page("error.html", request, status, status_code=status, message=message)

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

    # -- runs ---------------------------------------------------------------------------

    @app.get("/api/runs")
    def api_runs(
        benchmark: str | None = None,
        label: str | None = None,
        status: str | None = None,
        sort: str = "started",
        desc: bool = True,
    ) -> dict[str, Any]:
        return data.runs(benchmark=benchmark, label=label, status=status, sort=sort, desc=desc)

    @app.get("/", response_class=HTMLResponse)
    def runs_page(
        request: Request,
        benchmark: str | None = None,
        label: str | None = None,
        status: str | None = None,
        sort: str = "started",
        desc: bool = True,
    ) -> HTMLResponse:
        listing = data.runs(benchmark=benchmark, label=label, status=status, sort=sort, desc=desc)
        filters = {"benchmark": benchmark, "label": label, "status": status}
        return page(
            "runs.html",
            request,
            listing=listing,
            filters=filters,
            sort=sort,
            desc=desc,
            api=url("/api/runs", **filters),
        )

    # -- one run ------------------------------------------------------------------------

    @app.get("/api/runs/{run_id}")
    def api_run(run_id: str) -> dict[str, Any]:
        return data.run(run_id)[0]

    @app.get("/api/runs/{run_id}/progress")
    def api_progress(run_id: str) -> dict[str, Any]:
        return data.progress(run_id)

    @app.get("/api/runs/{run_id}/stream")
    async def api_stream(run_id: str, request: Request) -> StreamingResponse:
        first = await run_in_threadpool(data.progress, run_id)  # a 404 before streaming

        async def events() -> AsyncIterator[str]:
            last: dict[str, Any] | None = None
            quiet = 0.0
            end = time.monotonic() + STREAM_S
            current = first
            while time.monotonic() < end and not await request.is_disconnected():
                if current != last or quiet >= 15:
                    yield f"event: progress\ndata: {json.dumps(current)}\n\n"
                    last, quiet = current, 0.0
                if current["status"] != "running":
                    break
                await asyncio.sleep(TICK_S)
                quiet += TICK_S
                current = await run_in_threadpool(data.progress, run_id)

        return StreamingResponse(
            events(), media_type="text/event-stream", headers={"x-accel-buffering": "no"}
        )

    def run_context(run_id: str, task_sort: str, task_page: int) -> dict[str, Any]:
        # A big run seen for the first time: the page now, its metrics when computed.
        info, summary = data.run(run_id, wait=False)
        tasks = sorted_tasks(summary, task_sort)
        pages = max(1, -(-len(tasks) // TASKS_PER_PAGE))
        task_page = min(max(1, task_page), pages)
        shown = tasks[(task_page - 1) * TASKS_PER_PAGE : task_page * TASKS_PER_PAGE]
        return {
            "d": info,
            "summary": summary,
            "shown_tasks": shown,
            "task_pages": pages,
            "task_page": task_page,
            "task_sort": task_sort,
            "per_task_metrics": [m["name"] for m in info["metrics"]][:4],
            "curves": [curve_svg(c) for c in summary.curves],
            "failures_svg": failures_svg(run_id, summary.failures),
        }

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(
        request: Request, run_id: str, tasks: str = "task", task_page: int = 1
    ) -> HTMLResponse:
        ctx = run_context(run_id, tasks, task_page)
        return page("run.html", request, api=f"/api/runs/{quote_path(run_id)}", **ctx)

    @app.get("/runs/{run_id}/live", response_class=HTMLResponse)
    def run_live(request: Request, run_id: str) -> HTMLResponse:
        """The parts of the run page that change while it runs, for live.js to swap in;
        202 and nothing while the run's first summary is being computed."""
        ctx = run_context(run_id, "task", 1)
        if ctx["d"]["pending"]:
            return HTMLResponse("", status_code=202)
        return page("run_live.html", request, **ctx)

    # -- samples ------------------------------------------------------------------------

    def sample_filters(
        task: str | None, reason: str | None, passed: str | None
    ) -> tuple[str | None, str | None, bool | None]:
        flag = {"true": True, "1": True, "false": False, "0": False, "": None, None: None}
        if passed not in flag:
            raise BadRequest("passed must be true or false")
        return task or None, reason or None, flag[passed]

    @app.get("/api/runs/{run_id}/samples")
    def api_samples(
        run_id: str,
        task: str | None = None,
        reason: str | None = None,
        passed: str | None = None,
        order: str = "task",
        offset: int = Query(0, ge=0),
        limit: int = Query(SAMPLES_PER_PAGE, ge=1, le=500),
    ) -> dict[str, Any]:
        t, r, p = sample_filters(task, reason, passed)
        return data.samples(
            run_id, task=t, reason=r, passed=p, order=order, offset=offset, limit=limit
        )

    @app.get("/runs/{run_id}/samples", response_class=HTMLResponse)
    def samples_page(
        request: Request,
        run_id: str,
        task: str | None = None,
        reason: str | None = None,
        passed: str | None = None,
        order: str = "task",
        page_no: int = Query(1, alias="page", ge=1),
    ) -> HTMLResponse:
        t, r, p = sample_filters(task, reason, passed)
        info = data.info(run_id)
        listing = data.samples(
            run_id,
            task=t,
            reason=r,
            passed=p,
            order=order,
            offset=(page_no - 1) * SAMPLES_PER_PAGE,
            limit=SAMPLES_PER_PAGE,
        )
        pages = max(1, -(-listing["total"] // SAMPLES_PER_PAGE))
        filters = {"task": task, "reason": reason, "passed": passed, "order": order}
        reasons = data.reasons(info)
        return page(
            "samples.html",
            request,
            run=data.run_head(info),
            listing=listing,
            filters=filters,
            page_no=page_no,
            pages=pages,
            reasons=reasons,
            api=url(
                f"/api/runs/{quote_path(run_id)}/samples",
                **{**filters, "offset": listing["offset"]},
            ),
        )

    @app.get("/api/runs/{run_id}/sample")
    def api_sample(run_id: str, task: str, index: int) -> dict[str, Any]:
        return data.sample(run_id, task, index)

    @app.get("/runs/{run_id}/sample", response_class=HTMLResponse)
    def sample_page(request: Request, run_id: str, task: str, index: int) -> HTMLResponse:
        s = data.sample(run_id, task, index)
        record = s["record"]
        code = render.code_of(record)
        code_html = None
        if code is not None:
            lang = render.language(s["benchmark"], code[0], code[1], record)
            code_html = render.highlighted(code[1], lang)
        result = s["result"]
        traj = render.find_trajectory(record, result["details"])
        rest = {
            k: v
            for k, v in record.items()
            if (code is None or k != code[0]) and (traj is None or k != traj[0])
        }
        return page(
            "sample.html",
            request,
            s=s,
            r=result,
            code=code,
            code_html=code_html,
            trajectory=traj,
            record_rest=rest,
            api=url(f"/api/runs/{quote_path(run_id)}/sample", task=task, index=index),
        )

    # -- compare ------------------------------------------------------------------------

    def run_ids(runs: list[str]) -> list[str]:
        return [r.strip() for item in runs for r in item.split(",") if r.strip()]

    @app.get("/api/compare")
    def api_compare(runs: list[str] = Query(default_factory=list)) -> dict[str, Any]:
        return data.compare(run_ids(runs))

    @app.get("/compare/ready")
    def compare_ready(runs: list[str] = Query(default_factory=list)) -> Response:
        """200 once every pair is compared (the compare page reloads then), else 202."""
        pending = data.compare(run_ids(runs), wait=False)["pending"]
        return Response(status_code=202 if pending else 200)

    @app.get("/compare", response_class=HTMLResponse)
    def compare_page(
        request: Request, runs: list[str] = Query(default_factory=list)
    ) -> HTMLResponse:
        ids = run_ids(runs)
        result = data.compare(ids, wait=False)
        for pair in result["comparisons"]:
            pair["scatter"] = compare_svgs(pair)
        return page(
            "compare.html",
            request,
            c=result,
            ready=url("/compare/ready", runs=",".join(ids)),
            api=url("/api/compare", runs=",".join(ids)),
        )

    @app.get("/assets/pygments.css")
    def pygments_css() -> Response:
        return Response(render.pygments_css(), media_type="text/css")

    return app


def sorted_tasks(summary: RunSummary, how: str) -> list[Any]:
    if how == "rate":
        return sorted(summary.tasks, key=lambda t: (t.rate, t.task_id))
    if how == "failures":
        return sorted(summary.tasks, key=lambda t: (-(t.samples - t.passed), t.task_id))
    if how != "task":
        raise BadRequest("tasks must be task, rate or failures")
    return summary.tasks


def curve_svg(curve: Any) -> Any:
    return charts.line_chart(
        [charts.Series(curve.title, curve.points)],
        title=curve.title,
        x_label=curve.x_label,
        y_label=curve.y_label,
        log_x=curve.log_x,
        marks=[charts.Mark(x, y, name) for x, y, name in curve.marks],
    )


def failures_svg(run_id: str, failures: dict[str, int]) -> Any:
    items = [
        (reason, float(n), url(run_url(run_id, "/samples"), reason=reason))
        for reason, n in list(failures.items())[:20]
    ]
    return charts.bar_chart(items, title="failures by reason")


def compare_svgs(pair: dict[str, Any]) -> list[Any]:
    a, b = pair["a"], pair["b"]
    rates = [
        charts.Point(t["a"], t["b"], f"{t['task_id']}: {t['a']:.2f} → {t['b']:.2f}")
        for t in pair.get("per_task", [])
    ]
    out = [
        charts.scatter(
            rates,
            title=f"per-task pass rate, {a} vs {b}",
            x_label=f"A: {a}",
            y_label=f"B: {b}",
            span=(0.0, 1.0),
        )
    ]
    speeds = [
        charts.Point(
            t["speed_a"], t["speed_b"], f"{t['task_id']}: {t['speed_a']:.3g} → {t['speed_b']:.3g}"
        )
        for t in pair.get("per_task", [])
        if "speed_a" in t
    ]
    if speeds:
        out.append(
            charts.scatter(
                speeds,
                title=f"per-task {pair['speed_metric']}, A vs B",
                x_label=f"A: {pair['speed_metric']}",
                y_label=f"B: {pair['speed_metric']}",
                log=True,
            )
        )
    return out
