"""`vibes eval serve` as a user starts it: the address it prints answers, loopback by
default, a token generated (with a warning) beyond loopback, one-line errors."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from tests.store.conftest import fill_store
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

ADDRESS = re.compile(r"at (http://\S+)")


@contextmanager
def serving(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, str]]:
    """Start `vibes eval serve ARGS --port 0`; yields (printed address, output so far)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "vibes_eval.cli.app", "eval", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise AssertionError("serve exited:\n" + "".join(lines))
            lines.append(line)
            m = ADDRESS.search(line)
            if m:
                yield m.group(1), "".join(lines)
                return
        raise AssertionError("no address printed:\n" + "".join(lines))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> str:
    path = str(tmp_path / "s.sqlite")
    with open_store(resolve(path)) as st:
        fill_store(st)
    return path


def test_serves_on_loopback_by_default(sqlite_store: str) -> None:
    with serving("--store", sqlite_store) as (address, out):
        assert address.startswith("http://127.0.0.1:") and "token" not in address
        assert "(read-only)" in out and "WARNING" not in out
        status, body = fetch(address + "api/runs")
        assert status == 200 and '"run_id":"a"' in body.replace(" ", "")
        status, body = fetch(address + "runs/a")
        assert status == 200 and "pass@1" in body
        assert fetch(address + "runs/zzz")[0] == 404


def test_beyond_loopback_generates_a_token_and_warns(sqlite_store: str) -> None:
    with serving("--store", sqlite_store, "--host", "0.0.0.0") as (address, out):
        assert "WARNING" in out and "Generated token" in out
        token = address.split("?token=", 1)[1]
        assert token and token in out
        base = address.split("?", 1)[0]
        assert fetch(base + "api/runs")[0] == 401
        assert fetch(base + "api/runs", {"Authorization": f"Bearer {token}"})[0] == 200


def test_given_token_is_required(sqlite_store: str) -> None:
    with serving("--store", sqlite_store, "--token", "tok-123") as (address, out):
        assert address.endswith("?token=tok-123") and "WARNING" not in out
        base = address.split("?", 1)[0]
        assert fetch(base)[0] == 401
        assert fetch(base, {"Authorization": "Bearer tok-123"})[0] == 200


def test_a_store_not_there_yet_lists_no_runs(tmp_path: Path) -> None:
    """The default store before anything was recorded; a --store file that does not exist
    is a typo instead (test_bad_input_is_one_line)."""
    path = tmp_path / "data" / "results.sqlite"
    path.parent.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "VIBES_STORE"}
    with serving(env={**env, "VIBES_DATA_DIR": str(path.parent)}) as (address, _):
        status, body = fetch(address)
        assert status == 200 and "No runs" in body
        assert not path.exists()  # serving creates nothing
        with open_store(resolve(str(path))) as st:
            fill_store(st)
        time.sleep(1.1)  # the server tries to open it again at most once a second
        assert '"run_id":"a"' in fetch(address + "api/runs")[1].replace(" ", "")


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    for args, message in (
        (["--store", str(junk)], "not a vibes-eval store"),
        (["--store", str(tmp_path / "nosuch.sqlite")], f"no store file {tmp_path}/nosuch.sqlite"),
        (["--port", "70000"], "--port 70000"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "vibes_eval.cli.app", "eval", "serve", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
