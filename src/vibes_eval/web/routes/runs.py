"""The runs page (``/``) and ``/api/runs``: every run in the store, filtered and sorted."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from vibes_eval.web.data import WebData
from vibes_eval.web.pages import Pages, url


def router(data: WebData, view: Pages) -> APIRouter:
    routes = APIRouter()

    @routes.get("/api/runs")
    def api_runs(
        benchmark: str | None = None,
        label: str | None = None,
        status: str | None = None,
        sort: str = "started",
        desc: bool = True,
    ) -> dict[str, Any]:
        return data.runs(benchmark=benchmark, label=label, status=status, sort=sort, desc=desc)

    @routes.get("/", response_class=HTMLResponse)
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
        return view.page(
            "runs.html",
            request,
            listing=listing,
            filters=filters,
            sort=sort,
            desc=desc,
            api=url("/api/runs", **filters),
        )

    return routes
