"""Page latency of `vibes eval serve` for a run of 100,000 samples.

    python bench/web_latency.py                        # SQLite in a temp dir
    python bench/web_latency.py --store postgresql://vibes:vibes@127.0.0.1:5432/vibes_test
    python bench/web_latency.py --store big.sqlite --reuse   # a store filled by an earlier run

Fills a store through the store API with real events (RunStarted, 100,000 SampleEvaluated
with HumanEval-like records, stdout and measurements, RunCompleted): two such runs (A and B,
for the comparison) and a baseline run of 1,000 samples. Starts the real server
(`vibes eval serve --port 0`, a subprocess) and times every page and JSON endpoint over
HTTP with one keep-alive connection: the first view of the big run's page and of the
comparison right after start (when they answer, and when their figures, computed in the
background, are ready), then, once every run is summarized, --repeat requests each (p50,
p95, max). Each big-run
figure is also given as a ratio to the same page of the 1,000-sample run, measured in the
same session. Exits 1 when a page's p95 is over the --budget (300 ms).
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from vibes_eval.core import metrics
from vibes_eval.core.registry import scoring_for
from vibes_eval.core.types import Reason, SampleResult
from vibes_eval.store.events import RunCompleted, RunStarted, SampleEvaluated
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

TASKS = 164
BATCH = 5000
REASONS = [Reason.FAILED, Reason.COMPILE_ERROR, Reason.TIMEOUT, Reason.MEMORY]
COMPLETION = (
    "    let mut total = 0;\n    for x in numbers {\n        total += x;\n    }\n    total\n}\n"
)


def fill(store_spec: str, run_id: str, n: int, seed: int, quality: float) -> None:
    """One completed HumanEval-Rust-like run of ``n`` samples over TASKS tasks."""
    rng = random.Random(seed)
    per = n // TASKS
    with open_store(resolve(store_spec)) as st:
        st.append(
            [
                RunStarted(
                    run_id=run_id, benchmark="humaneval-rust", suite="humaneval",
                    config={"problems": "humaneval_rust.jsonl"}, problems_sha256="p" * 64,
                    tasks_sha256="t" * 64, samples_sha256=f"{seed:064d}", n_samples=per * TASKS,
                    n_tasks=TASKS, ks=[1, 10, 100], runner="process", isolation="process",
                    labels={"model": f"bench-{run_id}"},
                )
            ]
        )  # fmt: skip
        batch: list[SampleEvaluated] = []
        results: list[SampleResult] = []
        line = 0
        for t in range(TASKS):
            difficulty = rng.random()
            for i in range(per):
                line += 1
                passed = rng.random() < quality * (1 - difficulty)
                reason = Reason.PASSED if passed else rng.choice(REASONS)
                compile_s, run_s = rng.uniform(0.05, 0.4), rng.uniform(0.001, 2.0)
                result = SampleResult(
                    task_id=f"HumanEval/{t}", index=i, passed=passed, reason=reason,
                    detail="" if passed else "error[E0308]: mismatched types\n --> src/main.rs:4:5",
                    completion_hash=f"{seed}-{t}-{i}",
                    measurements={"wall_s": compile_s + run_s, "compile_s": compile_s,
                                  "run_s": run_s, "tests_passed": 3.0 * passed,
                                  "tests_expected": 3.0},
                    stdout="running 3 tests\ntest tests::a ... ok\n" * 3, stderr="",
                )  # fmt: skip
                results.append(result)
                batch.append(
                    SampleEvaluated.from_result(
                        run_id, result, problem_hash=f"h{t}", line=line,
                        record={"task_id": f"HumanEval/{t}", "completion": COMPLETION},
                    )
                )  # fmt: skip
                if len(batch) >= BATCH:
                    st.append(batch)
                    batch = []
        if batch:
            st.append(batch)
        scoring = scoring_for("humaneval-rust", {}, [1, 10, 100])
        values = metrics.score(scoring.metrics, results).values
        st.append(
            [
                RunCompleted(
                    run_id=run_id, metrics=values, n_samples=len(results),
                    n_passed=sum(r.passed for r in results),
                )
            ]
        )  # fmt: skip


def endpoints(run: str, other: str, n: int) -> list[tuple[str, str]]:
    """(name, path) of every page and JSON endpoint for ``run`` of ``n`` samples (compared
    with ``other``)."""
    last = max(1, -(-n // 50))  # the samples page shows 50
    return [
        ("runs page", "/"),
        ("GET /api/runs", "/api/runs"),
        ("run page", f"/runs/{run}"),
        ("run page, tasks by pass rate", f"/runs/{run}?tasks=rate"),
        ("GET /api/runs/{id}", f"/api/runs/{run}"),
        ("run live fragment", f"/runs/{run}/live"),
        ("GET /api/runs/{id}/progress", f"/api/runs/{run}/progress"),
        ("samples page 1", f"/runs/{run}/samples"),
        ("samples page, last", f"/runs/{run}/samples?page={last}"),
        ("samples, reason + slowest", f"/runs/{run}/samples?reason=compile_error&order=slowest"),
        ("samples of one task", f"/runs/{run}/samples?task=HumanEval/17"),
        ("GET /api/.../samples offset", f"/api/runs/{run}/samples?offset=500&limit=100"),
        ("sample page", f"/runs/{run}/sample?task=HumanEval/17&index=3"),
        ("GET /api/.../sample", f"/api/runs/{run}/sample?task=HumanEval/17&index=3"),
        ("compare page", f"/compare?runs={other},{run}"),
        ("GET /api/compare", f"/api/compare?runs={other},{run}"),
    ]


class Client:
    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)

    def get(self, path: str) -> tuple[int, bytes]:
        self.conn.request("GET", path)
        resp = self.conn.getresponse()
        return resp.status, resp.read()

    def time(self, path: str) -> float:
        start = time.perf_counter()
        status, body = self.get(path)
        elapsed = time.perf_counter() - start
        if status != 200:
            raise SystemExit(f"{path}: HTTP {status}: {body[:300]!r}")
        return elapsed

    def first_view(self, path: str, ready: str) -> tuple[float, float]:
        """(the page's answer, until its figures are there): a big run's first view answers
        at once and fills in when ``ready`` says 200 (what live.js polls)."""
        start = time.perf_counter()
        answer = self.time(path)
        while self.get(ready)[0] != 200:
            time.sleep(0.05)
        return answer, time.perf_counter() - start


def start_server(store: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "vibes_eval.cli.app", "eval", "serve", "--store", store,
         "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.search(r"at (http://\S+)", line)
        if m:
            return proc, m.group(1).rstrip("/")
    raise SystemExit("the server did not start")


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="SQLite path or postgresql:// URL (default: a temp file)")
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--baseline", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--budget-ms", type=float, default=300.0)
    parser.add_argument("--reuse", action="store_true", help="the store is already filled")
    args = parser.parse_args()
    store = args.store or str(Path(tempfile.mkdtemp(prefix="vibes-web-bench-")) / "web.sqlite")
    if not args.reuse:
        for run_id, n, seed, quality in (
            ("big-a", args.samples, 1, 0.55), ("big-b", args.samples, 2, 0.65),
            ("small-a", args.baseline, 3, 0.55), ("small-b", args.baseline, 4, 0.65),
        ):  # fmt: skip
            start = time.perf_counter()
            fill(store, run_id, n, seed, quality)
            print(f"filled {run_id}: {n} samples in {time.perf_counter() - start:.0f} s",
                  file=sys.stderr)  # fmt: skip
    proc, base = start_server(store)
    try:
        client = Client(base)
        cold = {
            "run page, first view after start": client.first_view(
                "/runs/big-a", "/runs/big-a/live"
            ),
            "compare page, first view": client.first_view(
                "/compare?runs=big-b,big-a", "/compare/ready?runs=big-b,big-a"
            ),
        }
        # Steady state: every run summarized (the server does it in the background at start).
        for run_id in ("big-a", "big-b", "small-a", "small-b"):
            while client.get(f"/runs/{run_id}/live")[0] != 200:
                time.sleep(0.1)
        rows = []
        for (name, path), (_, small_path) in zip(
            endpoints("big-a", "big-b", args.samples),
            endpoints("small-a", "small-b", args.baseline),
            strict=True,
        ):
            client.time(path)  # warm
            big = [client.time(path) for _ in range(args.repeat)]
            small = [client.time(small_path) for _ in range(args.repeat)]
            rows.append((name, big, statistics.median(small)))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    print(
        f"store: {resolve(store).display}; {args.samples} samples per big run, {args.repeat} "
        f"requests each; baseline: the same page of a {args.baseline}-sample run"
    )
    print(f"{'page or endpoint':34} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'x base p50':>10}")
    over = []
    for name, big, small_p50 in rows:
        p50, p95 = pct(big, 0.5), pct(big, 0.95)
        print(f"{name:34} {p50 * 1e3:8.1f} {p95 * 1e3:8.1f} {max(big) * 1e3:8.1f} "
              f"{p50 / small_p50:10.2f}")  # fmt: skip
        if p95 * 1e3 > args.budget_ms:
            over.append(name)
    for name, (answer, ready) in cold.items():
        print(f"{name:34} answered in {answer * 1e3:.0f} ms, figures ready after {ready:.1f} s")
    if over:
        print(f"over {args.budget_ms:.0f} ms at p95: {', '.join(over)}")
        return 1
    print(f"every page and endpoint under {args.budget_ms:.0f} ms at p95")
    return 0


if __name__ == "__main__":
    sys.exit(main())
