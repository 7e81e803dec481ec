"""The app's routes, one module per page: each ``router(data, view)`` returns the page's
HTML routes and the JSON endpoints behind it (the same under ``/api``).

``runs`` (``/``), ``run`` (``/runs/{id}``, its live parts and event stream), ``samples``
(``/runs/{id}/samples``), ``sample`` (``/runs/{id}/sample``), ``compare`` (``/compare``).
"""

from __future__ import annotations

from fastapi import APIRouter

from vibes_eval.web.data import WebData
from vibes_eval.web.pages import Pages
from vibes_eval.web.routes import compare, run, runs, sample, samples

PAGES = (runs, run, samples, sample, compare)


def routers(data: WebData, view: Pages) -> list[APIRouter]:
    return [module.router(data, view) for module in PAGES]
