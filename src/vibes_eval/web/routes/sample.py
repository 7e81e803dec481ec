"""One sample's page (``/runs/{id}/sample?task=&index=``): its code highlighted, its
verdict, trajectory and the rest of its record; its JSON; and the highlighting's CSS."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from vibes_eval.web import render
from vibes_eval.web.data import WebData
from vibes_eval.web.pages import Pages, quote_path, url


def router(data: WebData, view: Pages) -> APIRouter:
    routes = APIRouter()

    @routes.get("/api/runs/{run_id}/sample")
    def api_sample(run_id: str, task: str, index: int) -> dict[str, Any]:
        return data.sample(run_id, task, index)

    @routes.get("/runs/{run_id}/sample", response_class=HTMLResponse)
    def sample_page(request: Request, run_id: str, task: str, index: int) -> HTMLResponse:
        s = data.sample(run_id, task, index)
        return view.page(
            "sample.html",
            request,
            **sample_context(s),
            api=url(f"/api/runs/{quote_path(run_id)}/sample", task=task, index=index),
        )

    @routes.get("/assets/pygments.css")
    def pygments_css() -> Response:
        return Response(render.pygments_css(), media_type="text/css")

    return routes


def sample_context(s: dict[str, Any]) -> dict[str, Any]:
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
    return {
        "s": s,
        "r": result,
        "code": code,
        "code_html": code_html,
        "trajectory": traj,
        "record_rest": rest,
    }
