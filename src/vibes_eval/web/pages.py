"""Rendering a page: the Jinja2 environment (templates, filters), the URLs the pages link
with, and ``Pages``, which every route module renders its templates through."""

from __future__ import annotations

import json
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from vibes_eval.web import charts, render

HERE = Path(__file__).parent


def templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        num=fmt_num,
        pct=fmt_pct,
        dur=fmt_duration,
        ts=fmt_ts,
        q=quote_path,
        basename=lambda p: PurePath(p).name if p else "",
    )
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


class Pages:
    """The templates of one app; ``store`` is where its data comes from, shown on every
    page."""

    def __init__(self, store: str) -> None:
        self.env = templates()
        self.env.globals.update(url=url, run_url=run_url, sample_url=sample_url, store=store)

    def compile_all(self) -> None:
        for name in self.env.list_templates():  # compiled now, not on someone's first visit
            self.env.get_template(name)

    def page(self, name: str, request: Request, status: int = 200, **ctx: Any) -> HTMLResponse:
        ctx.setdefault("api", None)
        html = self.env.get_template(name).render(request=request, **ctx)
        return HTMLResponse(html, status_code=status)
