"""A run's samples page (``/runs/{id}/samples``) and its JSON: verdicts a page at a time,
filtered by task, reason and outcome."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from vibes_eval.web.data import BadRequest, WebData
from vibes_eval.web.pages import Pages, quote_path, url

SAMPLES_PER_PAGE = 50


def sample_filters(
    task: str | None, reason: str | None, passed: str | None
) -> tuple[str | None, str | None, bool | None]:
    flag = {"true": True, "1": True, "false": False, "0": False, "": None, None: None}
    if passed not in flag:
        raise BadRequest("passed must be true or false")
    return task or None, reason or None, flag[passed]


def router(data: WebData, view: Pages) -> APIRouter:
    routes = APIRouter()

    @routes.get("/api/runs/{run_id}/samples")
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

    @routes.get("/runs/{run_id}/samples", response_class=HTMLResponse)
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
        return view.page(
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

    return routes
