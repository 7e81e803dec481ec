"""One run's page (``/runs/{id}``), the parts of it that change while the run runs
(``/runs/{id}/live``), and its JSON: ``/api/runs/{id}``, ``/progress``, and the server-sent
events of ``/stream`` that keep a running run's page live."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from vibes_eval.web import charts
from vibes_eval.web.data import BadRequest, WebData
from vibes_eval.web.pages import Pages, quote_path, run_url, url
from vibes_eval.web.summary import RunSummary

TASKS_PER_PAGE = 200
STREAM_S = 600.0  # an event stream ends after this; the browser reconnects by itself
TICK_S = 1.0


def router(data: WebData, view: Pages) -> APIRouter:
    routes = APIRouter()

    @routes.get("/api/runs/{run_id}")
    def api_run(run_id: str) -> dict[str, Any]:
        return data.run(run_id)[0]

    @routes.get("/api/runs/{run_id}/progress")
    def api_progress(run_id: str) -> dict[str, Any]:
        return data.progress(run_id)

    @routes.get("/api/runs/{run_id}/stream")
    async def api_stream(run_id: str, request: Request) -> StreamingResponse:
        first = await run_in_threadpool(data.progress, run_id)  # a 404 before streaming
        return StreamingResponse(
            progress_events(data, run_id, request, first),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    @routes.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(
        request: Request, run_id: str, tasks: str = "task", task_page: int = 1
    ) -> HTMLResponse:
        ctx = run_context(data, run_id, tasks, task_page)
        return view.page("run.html", request, api=f"/api/runs/{quote_path(run_id)}", **ctx)

    @routes.get("/runs/{run_id}/live", response_class=HTMLResponse)
    def run_live(request: Request, run_id: str) -> HTMLResponse:
        """The parts of the run page that change while it runs, for live.js to swap in;
        202 and nothing while the run's first summary is being computed."""
        ctx = run_context(data, run_id, "task", 1)
        if ctx["d"]["pending"]:
            return HTMLResponse("", status_code=202)
        return view.page("run_live.html", request, **ctx)

    return routes


async def progress_events(
    data: WebData, run_id: str, request: Request, first: dict[str, Any]
) -> AsyncIterator[str]:
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


def run_context(data: WebData, run_id: str, task_sort: str, task_page: int) -> dict[str, Any]:
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
