"""The compare page (``/compare?runs=a,b``: runs against the first), the readiness check it
polls while pairs are being compared, and ``/api/compare``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from vibes_eval.web import charts
from vibes_eval.web.data import WebData
from vibes_eval.web.pages import Pages, url


def run_ids(runs: list[str]) -> list[str]:
    return [r.strip() for item in runs for r in item.split(",") if r.strip()]


def router(data: WebData, view: Pages) -> APIRouter:
    routes = APIRouter()

    @routes.get("/api/compare")
    def api_compare(runs: list[str] = Query(default_factory=list)) -> dict[str, Any]:
        return data.compare(run_ids(runs))

    @routes.get("/compare/ready")
    def compare_ready(runs: list[str] = Query(default_factory=list)) -> Response:
        """200 once every pair is compared (the compare page reloads then), else 202."""
        pending = data.compare(run_ids(runs), wait=False)["pending"]
        return Response(status_code=202 if pending else 200)

    @routes.get("/compare", response_class=HTMLResponse)
    def compare_page(
        request: Request, runs: list[str] = Query(default_factory=list)
    ) -> HTMLResponse:
        ids = run_ids(runs)
        result = data.compare(ids, wait=False)
        for pair in result["comparisons"]:
            pair["scatter"] = compare_svgs(pair)
        return view.page(
            "compare.html",
            request,
            c=result,
            ready=url("/compare/ready", runs=",".join(ids)),
            api=url("/api/compare", runs=",".join(ids)),
        )

    return routes


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
