"""Web fixtures: stores (SQLite, and PostgreSQL when a server answers) filled by real
HumanEval-Rust runs through the CLI plus kernel- and SWE-bench-like runs written through
the store API; a real uvicorn server over them in a thread of this process (so that the
stand-in benchmarks registered here are the server's too); Debian's chromium, headless."""

from __future__ import annotations

import json
import secrets
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text

from tests.components import need
from tests.conftest import EXAMPLES, run_cli
from tests.store.conftest import (  # noqa: F401  (fixtures)
    POSTGRES_URL,
    _driver_url,
    pg_url,
    postgres_unavailable,
    store,
    store_spec,
)
from tests.web import fakebench
from vibes_eval.core import registry
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
)


@pytest.fixture(scope="module", autouse=True)
def _fake_benchmarks() -> Iterator[None]:
    """The stand-in benchmarks, registered before any app of the module reads a run."""
    with pytest.MonkeyPatch.context() as mp:
        for name, target in fakebench.BENCHMARKS.items():
            mp.setitem(registry.BENCHMARKS, name, target)
        yield


@dataclass
class Filled:
    url: str  # what --store takes
    backend: str
    alpha: str  # HumanEval runs through the CLI
    beta: str  # ...whose completions and label carry HTML and script
    kernels_a: str
    kernels_b: str
    swe: str


def _pg_schema_url(schema: str) -> str:
    sep = "&" if "?" in POSTGRES_URL else "?"
    return f"{POSTGRES_URL}{sep}options={quote(f'-csearch_path={schema}')}"


@pytest.fixture(
    scope="session", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path_factory.mktemp("store") / "web.sqlite")
        return
    need("postgres", postgres_unavailable())
    schema = "w_" + secrets.token_hex(6)
    admin = create_engine(_driver_url(POSTGRES_URL))
    with admin.begin() as conn:
        conn.execute(text(f"create schema {schema}"))
    yield _pg_schema_url(schema)
    with admin.begin() as conn:
        conn.execute(text(f"drop schema {schema} cascade"))
    admin.dispose()


def cli_run(store_at: str, samples: Path, label: str, out: Path) -> str:
    """One HumanEval-Rust sanity run through the CLI; its run id."""
    proc = run_cli(
        "eval", "run", "humaneval-rust",
        "--problems", str(EXAMPLES / "sanity" / "problems.jsonl"),
        "--samples", str(samples), "--sandbox", "process", "--timeout", "2", "--k", "1,2",
        "--store", store_at, "--label", f"model={label}", "--output", str(out), "--no-progress",
        check=True,
    )  # fmt: skip
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("run: "):
            return line.split()[1]
    raise AssertionError(f"no run id in:\n{proc.stdout}\n{proc.stderr}")


def hostile_samples(path: Path) -> Path:
    """The sanity samples with every third completion made of HTML and script (it does not
    compile), and a few that panic with it as the message (which lands in the detail)."""
    rows = [json.loads(line) for line in (EXAMPLES / "sanity" / "samples.jsonl").open()]
    for i, row in enumerate(rows):
        if i % 3 == 0:
            row["completion"] = f"    {fakebench.HOSTILE}\n}}\n"
        elif i % 6 == 1:
            row["completion"] = f'    panic!("{{}}", r#"{fakebench.HOSTILE}"#);\n}}\n'
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="session")
def filled(store_url: str, tmp_path_factory: pytest.TempPathFactory) -> Filled:
    if shutil.which("rustc") is None:
        need("toolchains", "rustc not found: the HumanEval runs need it")
    tmp = tmp_path_factory.mktemp("runs")
    alpha = cli_run(store_url, EXAMPLES / "sanity" / "samples.jsonl", "alpha", tmp / "a.jsonl")
    beta = cli_run(
        store_url, hostile_samples(tmp / "hostile.jsonl"), "<b>beta</b><script>x()</script>",
        tmp / "b.jsonl",
    )  # fmt: skip
    with open_store(resolve(store_url)) as st:
        fakebench.kernel_run(st, "kernels-a", seed=1)
        fakebench.kernel_run(st, "kernels-b", seed=2)
        fakebench.swe_run(st, "swe-1")
    backend = "sqlite" if "://" not in store_url else "postgres"
    return Filled(store_url, backend, alpha, beta, "kernels-a", "kernels-b", "swe-1")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """The app as `vibes eval serve` builds it, on uvicorn in a thread."""

    def __init__(self, store_at: str, token: str | None = None, *, warm: bool = True) -> None:
        import uvicorn

        from vibes_eval.web.app import create_app
        from vibes_eval.web.data import WebData
        from vibes_eval.web.server import bind, decide, guarded

        self.sock = bind("127.0.0.1", 0)
        port = self.sock.getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        app = guarded(
            create_app(WebData(store_at), warm=warm), decide("127.0.0.1", port, token), port
        )
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]})
        self.thread.daemon = True
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the web server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        if self.thread.is_alive():
            self.server.force_exit = True  # an event stream still open
            self.thread.join(timeout=10)
        self.sock.close()


@pytest.fixture(scope="module")
def server(filled: Filled) -> Iterator[Server]:
    srv = Server(filled.url)
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's chromium, headless, with a profile of its own, driven by selenium."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    for binary in (CHROMIUM, CHROMEDRIVER):
        missing = f"{binary} missing: apt-get install chromium chromium-driver"
        need("chromium", None if Path(binary).exists() else missing)
    profile = tempfile.mkdtemp(prefix="vibes-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)
