"""The pages and JSON endpoints, called in-process (no browser) over stores filled by real
HumanEval runs and by kernel/SWE-bench-like runs: the declared metrics and what
`vibes eval results|compare` say, 404s and 400s, escaping, headers, token and Host checks,
and a store that is never written."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from tests.conftest import run_cli
from tests.store.conftest import snapshot
from tests.web import fakebench
from tests.web.conftest import Filled
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve
from vibes_eval.web import data as data_module
from vibes_eval.web.app import create_app
from vibes_eval.web.data import WebData
from vibes_eval.web.server import decide, guarded

PORT = 8765


def make_client(url: str, *, token: str | None = None, host: str = "127.0.0.1") -> TestClient:
    app = guarded(create_app(WebData(url)), decide(host, PORT, token), PORT)
    return TestClient(app, base_url=f"http://127.0.0.1:{PORT}")


@pytest.fixture(scope="module")
def client(filled: Filled) -> Iterator[TestClient]:
    with make_client(filled.url) as c:
        yield c


def get_json(client: TestClient, path: str, **params: Any) -> Any:
    r = client.get(path, params=params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    return r.json()


def cli_json(filled: Filled, *args: str) -> Any:
    proc = run_cli("eval", *args, "--store", filled.url, "--format", "json", check=True)
    return json.loads(proc.stdout)


# -- JSON --------------------------------------------------------------------------------


def test_runs_list_shows_declared_headlines(client: TestClient, filled: Filled) -> None:
    runs = {r["run_id"]: r for r in get_json(client, "/api/runs")["runs"]}
    assert {filled.alpha, filled.beta, "kernels-a", "kernels-b", "swe-1"} <= set(runs)
    alpha = runs[filled.alpha]
    assert alpha["benchmark"] == "humaneval-rust" and alpha["status"] == "completed"
    assert alpha["labels"] == {"model": "alpha"} and alpha["samples"] == alpha["total"] == 50
    assert alpha["headline"]["metric"] == "pass@1" and set(alpha["metrics"]) == {"pass@1", "pass@2"}
    assert alpha["samples_file"].endswith("samples.jsonl")  # which samples, at a glance
    page = client.get("/").text
    assert 'class="mono samplesfile"' in page and 'id="compare-button"' in page
    listed = {r["run_id"]: r for r in cli_json(filled, "results")}
    assert alpha["headline"]["value"] == pytest.approx(listed[filled.alpha]["value"])
    kernels = runs["kernels-a"]
    assert kernels["headline"]["metric"] == "fast_1.0"
    assert set(kernels["metrics"]) == {"compiled", "correct", "speedup", "fast_1.0", "fast_1.5"}
    assert (
        runs["swe-1"]["headline"]["metric"] == "resolved"
        and runs["swe-1"]["status"] == "interrupted"
    )
    # Filters and sorting.
    only = get_json(client, "/api/runs", benchmark="web-kernels")["runs"]
    assert {r["run_id"] for r in only} == {"kernels-a", "kernels-b"}
    assert [r["run_id"] for r in get_json(client, "/api/runs", label="model=alpha")["runs"]] == [
        filled.alpha
    ]
    by = get_json(client, "/api/runs", sort="headline", desc="false", benchmark="humaneval-rust")
    values = [r["headline"]["value"] for r in by["runs"]]
    assert values == sorted(values)


def test_run_detail_matches_vibes_eval_results(client: TestClient, filled: Filled) -> None:
    ours = get_json(client, f"/api/runs/{filled.alpha}")
    theirs = cli_json(filled, "results", filled.alpha)
    assert {m["name"]: m["value"] for m in ours["metrics"]} == pytest.approx(theirs["metrics"])
    # the same 95% interval over tasks beside each metric, on the page and in the CLI
    ours_ci = {m["name"]: list(m["ci"]) for m in ours["metrics"] if m["ci"]}
    assert ours_ci == theirs["intervals"] and ours_ci
    assert ours["failures"] == theirs["failures"]
    assert [(t["task_id"], t["samples"], t["passed"]) for t in ours["tasks"]] == [
        (t["task_id"], t["samples"], t["passed"]) for t in theirs["tasks"]
    ]
    assert [(s["task_id"], s["index"]) for s in ours["slowest"]] == [
        (s["task_id"], s["index"]) for s in theirs["slowest"]
    ]
    (curve,) = ours["curves"]
    assert curve["kind"] == "pass@k"
    marks = {m["metric"]: m["y"] for m in curve["marks"]}
    assert marks == pytest.approx(theirs["metrics"])


def test_kernel_run_gets_its_declared_metrics_and_speed_curve(client: TestClient) -> None:
    run = get_json(client, "/api/runs/kernels-a")
    assert [m["name"] for m in run["metrics"]] == [
        "compiled",
        "correct",
        "speedup",
        "fast_1.0",
        "fast_1.5",
    ]
    assert run["headline"] == "fast_1.0"
    (curve,) = run["curves"]
    assert curve["kind"] == "speed" and curve["title"] == "share of tasks with speedup > p"
    marks = {m["metric"]: (m["x"], m["y"]) for m in curve["marks"]}
    values = {m["name"]: m["value"] for m in run["metrics"]}
    assert marks == {"fast_1.0": (1.0, values["fast_1.0"]), "fast_1.5": (1.5, values["fast_1.5"])}
    # The curve at p agrees with the declared fast_p where it crosses p.
    at = dict((x, y) for x, y in curve["points"])
    assert at[0.0] >= values["fast_1.0"] >= values["fast_1.5"]
    assert set(run["failures"]) <= {"validation_failed", "compile_error"}
    assert run["reasons"]["validation_failed"] == "the output differs from the reference"


def test_samples_endpoint_pages_and_filters(client: TestClient, filled: Filled) -> None:
    path = f"/api/runs/{filled.alpha}/samples"
    everything = get_json(client, path, limit=500)
    assert everything["total"] == 50 and len(everything["rows"]) == 50
    pages = [get_json(client, path, offset=o, limit=20)["rows"] for o in (0, 20, 40)]
    assert [(r["task_id"], r["index"]) for p in pages for r in p] == [
        (r["task_id"], r["index"]) for r in everything["rows"]
    ]
    failed = get_json(client, path, passed="false", order="slowest", limit=500)
    assert failed["total"] == sum(1 for r in everything["rows"] if not r["passed"])
    walls = [r["wall_s"] for r in failed["rows"]]
    assert walls == sorted(walls, reverse=True)
    compile_errors = get_json(client, path, reason="compile_error")
    assert compile_errors["total"] > 0
    assert {r["reason"] for r in compile_errors["rows"]} == {"compile_error"}
    one_task = get_json(client, path, task="Sanity/3")
    assert {r["task_id"] for r in one_task["rows"]} == {"Sanity/3"} and one_task["total"] == 5


def test_sample_endpoint_has_the_full_verdict(client: TestClient, filled: Filled) -> None:
    row = get_json(client, f"/api/runs/{filled.alpha}/samples", reason="compile_error")["rows"][0]
    s = get_json(
        client, f"/api/runs/{filled.alpha}/sample", task=row["task_id"], index=row["index"]
    )
    assert s["result"]["reason"] == "compile_error" and s["result"]["detail"] == row["detail"]
    assert s["record"]["task_id"] == row["task_id"] and "completion" in s["record"]
    assert s["line"] == row["line"]
    k = get_json(client, "/api/runs/kernels-a/sample", task="K/0", index=0)
    assert "speedup" in k["result"]["measurements"] or not k["result"]["passed"]


def test_compare_matches_vibes_eval_compare(client: TestClient, filled: Filled) -> None:
    ours = get_json(client, "/api/compare", runs=f"{filled.alpha},{filled.beta}")
    assert ours["baseline"] == filled.alpha
    (pair,) = ours["comparisons"]
    theirs = cli_json(filled, "compare", filled.alpha, filled.beta)
    assert pair["tasks"] == theirs["tasks"] == 10
    for m, t in zip(pair["metrics"], theirs["metrics"], strict=True):
        assert m["metric"] == t["metric"]
        for key in ("a", "b", "diff", "ci_low", "ci_high"):
            assert m[key] == pytest.approx(t[key])
    assert pair["mcnemar"] == pytest.approx(theirs["mcnemar"])
    assert [f["task_id"] for f in pair["regressed"]] == [f["task_id"] for f in theirs["regressed"]]
    assert len(pair["per_task"]) == 10 and all(0 <= t["a"] <= 1 for t in pair["per_task"])
    # Repeated parameters and three runs: each against the first.
    three = client.get(
        "/api/compare",
        params=[("runs", filled.alpha), ("runs", filled.beta), ("runs", filled.alpha)],
    )
    assert three.status_code == 200 and len(three.json()["comparisons"]) == 1


def test_kernel_compare_pairs_speeds(client: TestClient) -> None:
    (pair,) = get_json(client, "/api/compare", runs="kernels-a,kernels-b")["comparisons"]
    assert pair["speed_metric"] == "speedup"
    assert {m["metric"] for m in pair["metrics"]} == {
        "compiled",
        "correct",
        "speedup",
        "fast_1.0",
        "fast_1.5",
    }
    assert any("speed_a" in t for t in pair["per_task"])
    page = client.get("/compare", params={"runs": "kernels-a,kernels-b"})
    assert page.status_code == 200 and "per-task speedup, A vs B" in page.text


# -- pages -------------------------------------------------------------------------------


def page_text(client: TestClient, path: str, **params: Any) -> str:
    r = client.get(path, params=params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    return r.text


def test_every_page_renders(client: TestClient, filled: Filled) -> None:
    assert filled.alpha in page_text(client, "/")
    run = page_text(client, f"/runs/{filled.alpha}")
    for text in ("pass@1", "pass@2", "failures by reason", "Slowest samples", "Sanity/0"):
        assert text in run
    assert "<svg" in run and "<script>" not in run.replace(
        '<script src="/static/live.js" defer></script>', ""
    )
    assert "Sanity/3" in page_text(client, f"/runs/{filled.alpha}/samples", task="Sanity/3")
    sample = page_text(client, f"/runs/{filled.alpha}/sample", task="Sanity/0", index=0)
    assert 'class="hl"' in sample  # highlighted
    assert "McNemar" in page_text(client, "/compare", runs=f"{filled.alpha},{filled.beta}")
    assert page_text(client, "/runs/kernels-a", tasks="rate").count("<tr>") > 6
    assert client.get("/static/style.css").status_code == 200
    css = client.get("/assets/pygments.css").text
    assert ".hl .k " in css and not css.startswith("pre")


def test_sample_page_shows_details_statuses_and_trajectory(client: TestClient) -> None:
    kernel = page_text(client, "/runs/kernels-a/samples", passed="true")
    task, index = re.search(r"sample\?task=(K%2F\d+)&amp;index=(\d+)", kernel).groups()  # type: ignore[union-attr]
    k = page_text(client, "/runs/kernels-a/sample", task=task.replace("%2F", "/"), index=index)
    assert '<table class="records">' in k and "<th>kernel_ms</th>" in k and "16384" in k
    assert "__global__" in k and 'class="hl"' in k  # the solution, highlighted
    swe = page_text(client, "/runs/swe-1/sample", task="org__repo-1", index=0)
    assert "FAIL_TO_PASS: 1 of 1 pass" in swe and "PASS_TO_PASS: 1 of 2 pass" in swe
    assert "tests/test_b.py::test_x" in swe
    assert 'id="trajectory"' in swe and "open_file" in swe and "You are a software engineer." in swe
    assert '<span class="gi">+x = 2' in swe  # the patch, highlighted as a diff
    assert "partial" in swe
    run = get_json(client, "/api/runs/swe-1")
    assert run["groups"] == [
        {"group": "org/repo", "tasks": 2, "samples": 2, "passed": 0, "resolved": 0.0}
    ]
    assert '<table class="groups"' in page_text(client, "/runs/swe-1")
    applied = page_text(client, "/runs/swe-1/sample", task="org__repo-2", index=0)
    assert "the patch did not apply" in applied and "error: patch failed" in applied


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/runs/no-such-run",
        "/runs/no-such-run/samples",
        "/runs/no-such-run/sample?task=T&index=0",
        "/runs/no-such-run/live",
        "/compare?runs=no-such-run,other",
        "/no/such/page",
        "/api/runs/no-such-run",
        "/api/runs/no-such-run/samples",
        "/api/runs/no-such-run/progress",
        "/api/runs/no-such-run/stream",
        "/api/compare?runs=no-such-run,other",
    ],
)
def test_unknown_ids_are_404(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404
    if path.startswith("/api/"):
        assert "detail" in r.json()
    else:
        assert "404" in r.text and "Traceback" not in r.text
        assert r.headers["content-type"].startswith("text/html")


def test_unknown_sample_is_404(client: TestClient, filled: Filled) -> None:
    for path in (f"/runs/{filled.alpha}/sample", f"/api/runs/{filled.alpha}/sample"):
        r = client.get(path, params={"task": "Sanity/0", "index": 99})
        assert r.status_code == 404 and "no sample Sanity/0 #99" in r.text


@pytest.mark.parametrize(
    "path",
    [
        "/api/runs/{a}/samples?order=random",
        "/api/runs/{a}/samples?passed=maybe",
        "/api/runs/{a}/samples?limit=0",
        "/api/runs/{a}/samples?offset=-1",
        "/api/runs/{a}/sample?task=Sanity/0&index=abc",
        "/api/runs/{a}/sample",
        "/api/compare?runs={a}",
        "/api/runs?sort=nonsense",
        "/runs/{a}?tasks=nonsense",
        "/runs/{a}/samples?page=0",
    ],
)
def test_bad_parameters_are_400(client: TestClient, filled: Filled, path: str) -> None:
    r = client.get(path.format(a=filled.alpha))
    assert r.status_code == 400, r.text
    assert "Traceback" not in r.text


# -- safety ------------------------------------------------------------------------------


def test_strings_from_samples_are_escaped(client: TestClient, filled: Filled) -> None:
    listing = page_text(client, "/")
    assert "&lt;b&gt;beta&lt;/b&gt;&lt;script&gt;x()&lt;/script&gt;" in listing
    assert "<script>x()" not in listing and "<b>beta" not in listing
    rows = get_json(client, f"/api/runs/{filled.beta}/samples", limit=500)["rows"]
    hostile = [r for r in rows if r["line"] % 3 == 1]  # every third line of the file
    assert hostile
    pages = [
        page_text(client, f"/runs/{filled.beta}/sample", task=r["task_id"], index=r["index"])
        for r in hostile[:3]
    ]
    pages.append(page_text(client, f"/runs/{filled.beta}/samples", passed="false"))
    pages.append(page_text(client, "/runs/swe-1/sample", task="org__repo-1", index=0))
    for html in pages:
        assert "<script>window.__pwned" not in html
        assert '<img id="pwned"' not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in pages[-1]
    assert any("window.__pwned" in p for p in pages[:3])


def test_security_headers_everywhere(client: TestClient, filled: Filled) -> None:
    for path in ("/", f"/runs/{filled.alpha}", "/api/runs", "/static/live.js", "/nope"):
        r = client.get(path)
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert "unsafe-inline" not in csp
        assert r.headers["x-content-type-options"] == "nosniff"


def test_loopback_server_checks_the_host_header(client: TestClient) -> None:
    assert client.get("/api/runs", headers={"host": "evil.example:8765"}).status_code == 400
    assert client.get("/api/runs", headers={"host": "localhost:8765"}).status_code == 200
    assert client.get("/api/runs", headers={"host": "[::1]:8765"}).status_code == 200


def test_token_is_required_when_given(filled: Filled) -> None:
    with make_client(filled.url, token="s3cret") as c:
        assert c.get("/").status_code == 401
        assert c.get("/api/runs").status_code == 401
        assert c.get("/api/runs", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert c.get("/api/runs", headers={"authorization": "Bearer s3cret"}).status_code == 200
        r = c.get("/?token=s3cret&sort=samples", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/?sort=samples"
        assert (
            "HttpOnly" in r.headers["set-cookie"] and "SameSite=Strict" in r.headers["set-cookie"]
        )
        assert c.get("/?sort=samples").status_code == 200  # the cookie now
        c.cookies.clear()
        assert c.get("/?token=nope").status_code == 401


def test_beyond_loopback_a_token_is_generated(filled: Filled) -> None:
    b = decide("0.0.0.0", PORT, None)
    assert b.generated and b.token and len(b.token) >= 24
    with make_client(filled.url, host="0.0.0.0") as c:
        # No Host check there (the token protects it), but no token, no page.
        assert c.get("/api/runs", headers={"host": "box.lan:8765"}).status_code == 401


def _state(filled: Filled) -> Any:
    if filled.backend == "sqlite":
        return hashlib.sha256(Path(filled.url).read_bytes()).hexdigest()
    with open_store(resolve(filled.url), create=False) as st:
        return snapshot(st), sum(1 for _ in st.events())


def test_the_store_is_never_written(filled: Filled) -> None:
    before = _state(filled)
    with make_client(filled.url) as c:
        for path in (
            "/",
            "/api/runs",
            f"/runs/{filled.alpha}",
            f"/runs/{filled.alpha}/samples?order=slowest&page=2",
            f"/runs/{filled.alpha}/sample?task=Sanity/0&index=0",
            f"/compare?runs={filled.alpha},{filled.beta}",
            "/runs/kernels-a",
            "/runs/swe-1/sample?task=org__repo-1&index=0",
        ):
            assert c.get(path).status_code == 200
    assert _state(filled) == before


def _writable_copy(filled: Filled, tmp_path: Path) -> str:
    """A SQLite store of its own for a test that writes: the shared one stays as the other
    tests read it, whatever the order. (A module's client opened earlier once read "disk
    I/O error" after this test wrote: the store's file check closed a descriptor of its own,
    dropping the process's SQLite locks; fixed, see tests/store/test_writer.py.)"""
    if filled.backend != "sqlite":
        return filled.url
    dest = tmp_path / "live.sqlite"
    with sqlite3.connect(filled.url) as src, sqlite3.connect(dest) as dst:
        src.backup(dst)
    return str(dest)


def test_running_run_reports_progress(filled: Filled, tmp_path: Path) -> None:
    url = _writable_copy(filled, tmp_path)
    with open_store(resolve(url)) as st:
        fakebench.running_run(st, "live-api", total=20, done=6)
    with make_client(url) as c:
        p = get_json(c, "/api/runs/live-api/progress")
        assert p["status"] == "running" and (p["done"], p["total"]) == (6, 20)
        page = page_text(c, "/runs/live-api")
        assert 'data-stream="/api/runs/live-api/stream"' in page and "<progress" in page
        with open_store(resolve(url)) as st:
            fakebench.add_verdicts(st, "live-api", 6, 10)
        assert get_json(c, "/api/runs/live-api/progress")["done"] == 10
        run = get_json(c, "/api/runs/live-api")
        assert run["run"]["samples"] == 10 and run["run"]["status"] == "running"
        assert run["summary"]["samples"] in (6, 10)  # fresh, or the last one while it refreshes


def wait_ready(c: TestClient, path: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while (status := c.get(path).status_code) == 202:
        assert time.monotonic() < deadline, f"{path} still computing"
        time.sleep(0.2)
    assert status == 200


def test_big_runs_are_scored_in_the_worker_process(
    filled: Filled, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs over SYNC_LIMIT are summarized and compared in the child process, in the
    background: their pages answer at once, then fill in, with the same figures."""
    with make_client(filled.url) as c:
        here_run = get_json(c, f"/api/runs/{filled.alpha}")
        here_pair = get_json(c, "/api/compare", runs=f"{filled.alpha},{filled.beta}")
        here_kernels = get_json(c, "/api/compare", runs="kernels-a,kernels-b")
    monkeypatch.setattr(data_module, "SYNC_LIMIT", 10)
    app = guarded(
        create_app(WebData(filled.url), warm=False), decide("127.0.0.1", PORT, None), PORT
    )
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as c:
        first = page_text(c, f"/runs/{filled.alpha}")
        assert 'id="pending"' in first or "pass@2" in first
        wait_ready(c, f"/runs/{filled.alpha}/live")
        assert "pass@2" in page_text(c, f"/runs/{filled.alpha}")
        worker_run = get_json(c, f"/api/runs/{filled.alpha}")
        assert worker_run["metrics"] == here_run["metrics"]
        assert worker_run["tasks"] == here_run["tasks"]
        compare_page = page_text(c, "/compare", runs=f"{filled.alpha},{filled.beta}")
        assert "McNemar" in compare_page or 'id="pending"' in compare_page
        wait_ready(c, f"/compare/ready?runs={filled.alpha},{filled.beta}")
        pair = get_json(c, "/api/compare", runs=f"{filled.alpha},{filled.beta}")
        assert pair["comparisons"] == here_pair["comparisons"]
        kernels = get_json(c, "/api/compare", runs="kernels-a,kernels-b")
        assert kernels["comparisons"] == here_kernels["comparisons"]


def test_the_pass_at_k_chart_has_a_tick_for_every_k() -> None:
    from vibes_eval.web import charts

    svg = str(charts.line_chart(
        [charts.Series("pass@k", [(k, k / 10) for k in range(1, 6)])],
        title="pass@k", x_label="k", y_label="pass@k", log_x=True,
    ))  # fmt: skip
    x_ticks = re.findall(r'class="tick" x="[\d.]+" y="[\d.]+" text-anchor="middle">([^<]*)<', svg)
    assert x_ticks == ["1", "2", "3", "4", "5"]


def test_json_has_no_nan() -> None:
    """A CI over no paired task is NaN, which JSON cannot carry: it comes out as null."""
    from fastapi import FastAPI

    from vibes_eval.web.app import SafeJSON

    app = FastAPI(default_response_class=SafeJSON)

    @app.get("/x")
    def x() -> dict[str, Any]:
        return {"ci": [float("nan"), float("inf")], "nested": {"v": 1.5}}

    with TestClient(app) as c:
        assert c.get("/x").json() == {"ci": [None, None], "nested": {"v": 1.5}}
