"""Store fixtures: every test gets a fresh SQLite file and, when a PostgreSQL server answers
at VIBES_TEST_POSTGRES_URL, a fresh schema there (`.ci/run` installs and starts one)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.exc import SQLAlchemyError

from tests.components import need
from vibes_eval.core.types import Reason
from vibes_eval.store import schema
from vibes_eval.store.events import (
    RunCompleted,
    RunInterrupted,
    RunResumed,
    RunStarted,
    SampleEvaluated,
)
from vibes_eval.store.sql import SqlStore, open_store
from vibes_eval.store.urls import resolve

POSTGRES_URL = os.environ.get(
    "VIBES_TEST_POSTGRES_URL", "postgresql://vibes:vibes@127.0.0.1:5432/vibes_test"
)
_pg_problem: list[str | None] = []  # probed once per session


def _driver_url(url: str) -> str:
    return "postgresql+psycopg://" + url.split("://", 1)[1]


def postgres_unavailable() -> str | None:
    if not _pg_problem:
        try:
            engine = create_engine(_driver_url(POSTGRES_URL), connect_args={"connect_timeout": 3})
            with engine.connect() as conn:
                conn.execute(text("select 1"))
            engine.dispose()
            _pg_problem.append(None)
        except SQLAlchemyError as exc:
            reason = str(getattr(exc, "orig", exc)).strip().splitlines()[0]
            _pg_problem.append(
                f"no PostgreSQL server at VIBES_TEST_POSTGRES_URL ({reason}); "
                "scripts/setup-system.sh starts one"
            )
    return _pg_problem[0]


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a schema of its own, dropped afterwards."""
    need("postgres", postgres_unavailable())
    schema = "t_" + secrets.token_hex(6)
    admin = create_engine(_driver_url(POSTGRES_URL))
    with admin.begin() as conn:
        conn.execute(text(f"create schema {schema}"))
    sep = "&" if "?" in POSTGRES_URL else "?"
    yield f"{POSTGRES_URL}{sep}options={quote(f'-csearch_path={schema}')}"
    with admin.begin() as conn:
        conn.execute(text(f"drop schema {schema} cascade"))
    admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """What a user passes as --store, for each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "store.sqlite")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(store_spec: str) -> Iterator[SqlStore]:
    st = open_store(resolve(store_spec))
    yield st
    st.close()


def started(run_id: str = "r1", **kw: object) -> RunStarted:
    values: dict[str, object] = {
        "benchmark": "humaneval-rust",
        "config": {"problems": "p.jsonl", "limits": {"timeout_s": 2.0}, "extract": "none"},
        "problems_sha256": "p" * 64,
        "tasks_sha256": "t" * 64,
        "samples_sha256": "s" * 64,
        "n_samples": 4,
        "n_tasks": 2,
        "ks": [1, 2],
        "toolchain": {"rustc": "rustc 1.0"},
        "runner": "process",
        "isolation": "process",
        "labels": {"model": "m"},
    }
    values.update(kw)
    return RunStarted(run_id=run_id, **values)  # type: ignore[arg-type]


def verdict(run_id: str, task: str, index: int, passed: bool, **kw: object) -> SampleEvaluated:
    values: dict[str, object] = {
        "problem_hash": "h-" + task,
        "completion_hash": f"c-{task}-{index}",
        "reason": "passed" if passed else "failed",
        "line": index + 1,
        "compile_s": 0.1 * (index + 1),
        "run_s": 0.01,
        "record": {"task_id": task, "completion": f"code {index}"},
    }
    values.update(kw)
    return SampleEvaluated(run_id=run_id, task_id=task, index=index, passed=passed, **values)  # type: ignore[arg-type]


def fill_store(store: SqlStore) -> None:
    """Two runs: one completed, one interrupted then resumed, with a cache hit and an
    infrastructure error among the verdicts."""
    store.append([started("a"), verdict("a", "T/0", 0, True), verdict("a", "T/0", 1, False)])
    store.append(
        [
            verdict("a", "T/1", 0, False, reason=Reason.COMPILE_ERROR, detail="E0308"),
            verdict("a", "T/1", 1, True),
            RunCompleted(run_id="a", metrics={"pass@1": 0.5}, n_samples=4, n_passed=2),
        ]
    )
    store.append([started("b", labels={"model": "n"}), verdict("b", "T/0", 0, True, cached=True)])
    store.append([RunInterrupted(run_id="b", n_done=1), RunResumed(run_id="b", pid=1)])
    store.append([verdict("b", "T/1", 0, False, reason=Reason.INFRA)])


def snapshot(store: SqlStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every projection row, in key order."""
    out = {}
    with store.engine.connect() as conn:
        for table in schema.PROJECTIONS:
            keys = list(table.primary_key.columns)
            out[table.name] = [tuple(r) for r in conn.execute(select(table).order_by(*keys))]
    return out
