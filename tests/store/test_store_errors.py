"""A foreign or corrupt file, a server that does not answer, an unknown run id: one error
line, exit 2, and not a byte of the file changed."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.conftest import EXAMPLES, run_cli
from tests.store.conftest import fill_store
from vibes_eval.store import schema
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

PROBLEMS = EXAMPLES / "sanity" / "problems.jsonl"
SAMPLES = EXAMPLES / "sanity" / "samples.jsonl"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error_line(proc: object, *needles: str) -> str:
    stderr = proc.stderr.strip()  # type: ignore[attr-defined]
    assert proc.returncode == 2, stderr  # type: ignore[attr-defined]
    assert "\n" not in stderr and "Traceback" not in stderr, stderr
    for needle in needles:
        assert needle in stderr, stderr
    return stderr


def every_command(store: str) -> list[tuple[str, ...]]:
    return [
        ("eval", "results", "--store", store),
        ("eval", "results", "r1", "--store", store),
        ("eval", "export", "r1", "-o", "-", "--store", store),
        ("eval", "rebuild", "--store", store),
        ("eval", "run", "humaneval-rust", "--problems", str(PROBLEMS), "--samples",
         str(SAMPLES), "--sandbox", "process", "--store", store),
    ]  # fmt: skip


def test_a_file_that_is_not_sqlite_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("my notes, not a database\n" * 100)
    before = digest(path)
    for args in every_command(str(path)):
        one_error_line(run_cli(*args), "not a vibes-eval store")
    assert digest(path) == before


def test_another_applications_sqlite_database_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "app.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("create table users (id integer primary key, name text)")
        conn.execute("insert into users (name) values ('ada')")
    before = digest(path)
    for args in every_command(str(path)):
        one_error_line(run_cli(*args), "not a vibes-eval store", "users")
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.sqlite"]  # no -wal, no -shm


def test_a_corrupt_store_is_reported_not_repaired(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with open_store(resolve(str(path))) as st:
        fill_store(st)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 2 * page
    data[page:] = b"\xa5" * (len(data) - page)  # every page but the schema page
    path.write_bytes(bytes(data))
    before = digest(path)
    for args in every_command(str(path))[1:]:
        one_error_line(run_cli(*args), "corrupt")
    assert digest(path) == before


def test_a_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    open_store(resolve(str(path))).close()
    with sqlite3.connect(path) as conn:
        conn.execute("update vibes_meta set value = '99' where key = 'tables_version'")
    conn.close()
    before = digest(path)
    one_error_line(run_cli("eval", "results", "--store", str(path)), "newer vibes-eval")
    assert digest(path) == before


def test_an_unreachable_server_or_a_bad_url(tmp_path: Path) -> None:
    one_error_line(
        run_cli("eval", "results", "--store", "postgresql://vibes:secret@127.0.0.1:1/none"),
        "cannot open store postgresql://vibes:***@127.0.0.1:1/none",
    )
    proc = run_cli("eval", "results", "--store", "postgresql://vibes:secret@127.0.0.1:1/none")
    assert "secret" not in proc.stderr
    one_error_line(run_cli("eval", "results", "--store", "mysql://x/y"), "unsupported database")
    # Writing a store needs its folder.
    missing = tmp_path / "nowhere" / "store.sqlite"
    one_error_line(run_cli(*every_command(str(missing))[-1]), "directory does not exist")
    assert not missing.parent.exists()


def test_a_mistyped_store_file_is_refused_by_every_reading_command(tmp_path: Path) -> None:
    """A --store file that does not exist is a typo, not an empty store (issue 27)."""
    missing = tmp_path / "typo.sqlite"
    for args in [*every_command(str(missing))[:-1], ("eval", "compare", "a", "b", "--store",
                 str(missing)), ("eval", "resume", "r1", "--store", str(missing))]:  # fmt: skip
        one_error_line(run_cli(*args), f"no store file {missing}")
    assert not missing.exists()


def test_the_default_store_not_there_yet_lists_no_runs(tmp_path: Path) -> None:
    """Nothing recorded yet is not a mistake: the default store lists no runs."""
    env = {**os.environ, "VIBES_DATA_DIR": str(tmp_path / "data")}
    env.pop("VIBES_STORE", None)
    proc = run_cli("eval", "results", env=env, check=True)
    assert proc.stdout.strip() == "no runs yet"
    assert not (tmp_path / "data").exists()


def test_sqlite_urls_take_a_relative_or_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sqlite:////abs/path is /abs/path; sqlite:///rel is read from the working directory,
    and when nothing is there the error says which file it looked for."""
    path = tmp_path / "real.sqlite"
    with open_store(resolve(str(path))) as st:
        fill_store(st)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert resolve(f"sqlite:///{path}").sqlite_path == path
    listed = run_cli("eval", "results", "--store", f"sqlite:///{path}", check=True).stdout
    assert "humaneval-rust" in listed
    relative = f"sqlite://{path}"  # three slashes: the same path, relative
    error = one_error_line(run_cli("eval", "results", "--store", relative), "no store file")
    assert str(elsewhere / str(path).lstrip("/")) in error and "four slashes" in error


def test_unknown_run_ids(store_spec: str, tmp_path: Path) -> None:
    with open_store(resolve(store_spec)) as st:
        fill_store(st)
    for args in (
        ("eval", "results", "nope"),
        ("eval", "export", "nope"),
        ("eval", "resume", "nope"),
        ("eval", "compare", "a", "nope"),
    ):
        one_error_line(run_cli(*args, "--store", store_spec), "unknown run id 'nope'")
    missing = tmp_path / "missing.sqlite"
    one_error_line(run_cli("eval", "results", "nope", "--store", str(missing)), "no store file")
    assert not missing.exists()


def test_postgres_tables_that_are_not_ours(pg_url: str) -> None:
    engine = create_engine("postgresql+psycopg://" + pg_url.split("://", 1)[1])
    with engine.begin() as conn:
        conn.execute(text(f"create table {schema.events.name} (id int)"))
    engine.dispose()
    one_error_line(run_cli("eval", "results", "--store", pg_url), "not a vibes-eval store")
