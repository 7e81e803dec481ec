"""The README's screenshots of the results pages (docs/img/runs.png, run.png, compare.png),
from real runs: HumanEval-X Rust (../shared; the sanity set when it is absent), two
"models" made of each task's canonical solution and broken variants of it in different
proportions, evaluated through `vibes eval run`, then served and photographed in headless
chromium.

    python bench/web_screenshots.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HUMANEVAL_X = Path("datasets") / "humaneval-x" / "humaneval_rust.jsonl.gz"
SHARED = [ROOT.parent / "shared", ROOT.parent.parent / "shared"]  # a clone, or a worktree
BROKEN = [
    '    panic!("not implemented");\n}\n',
    '    let x: i32 = "not a number";\n}\n',
    "    Default::default()\n}\n",
    "    std::process::exit(0);\n}\n",
]


def samples(path: Path, problems: list[dict], quality: float, seed: int) -> Path:
    rng = random.Random(seed)
    rows = []
    for i, p in enumerate(problems):
        hard = random.Random(i).random()  # the same tasks are hard for both models
        for _ in range(5):
            ok = rng.random() < quality * (1.2 - hard)
            rows.append(
                {"task_id": p["task_id"],
                 "completion": p["canonical_solution"] if ok else rng.choice(BROKEN)}
            )  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(store: Path, problems: Path, sample_file: Path, model: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "vibes_eval.cli.app", "eval", "run", "humaneval-rust",
         "--problems", str(problems), "--samples", str(sample_file), "--store", str(store),
         "--label", f"model={model}", "--label", "temperature=0.8", "--k", "1,2,5",
         "--timeout", "5", "--no-progress", "-o", str(sample_file) + ".out"],
        check=True,
    )  # fmt: skip


def shoot(base: str, out: Path, pages: dict[str, tuple[str, int]]) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tempfile.mkdtemp()}"):  # fmt: skip
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    try:
        for name, (path, height) in pages.items():
            driver.set_window_size(1440, height)
            driver.get(base + path)
            time.sleep(0.5)
            driver.save_screenshot(str(out / f"{name}.png"))
            print(f"{out / name}.png")
    finally:
        driver.quit()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="vibes-shots-"))
    found = [d / HUMANEVAL_X for d in SHARED if (d / HUMANEVAL_X).exists()]
    if found:
        problems_path = found[0]
        with gzip.open(problems_path, "rt") as fh:
            problems = [json.loads(line) for line in fh]
    else:  # the sanity set: its first correct sample of each task as the solution
        problems_path = ROOT / "examples" / "sanity" / "problems.jsonl"
        sanity = [json.loads(line) for line in (problems_path.parent / "samples.jsonl").open()]
        good = {r["task_id"]: r["completion"] for r in reversed(sanity) if r["kind"] == "ok"}
        problems = [
            {"task_id": t["task_id"], "canonical_solution": good.get(t["task_id"], BROKEN[2])}
            for t in map(json.loads, problems_path.open())
        ]
    store = tmp / "results.sqlite"
    run(store, problems_path, samples(tmp / "a.jsonl", problems, 0.55, 1), "model-a")
    run(store, problems_path, samples(tmp / "b.jsonl", problems, 0.70, 2), "model-b")

    from vibes_eval.store.sql import open_store
    from vibes_eval.store.urls import resolve
    from vibes_eval.web.app import create_app
    from vibes_eval.web.data import WebData
    from vibes_eval.web.server import bind, decide, guarded

    with open_store(resolve(str(store)), create=False) as st:
        a, b = sorted((r for r in st.runs()), key=lambda r: r.started_at)
    import threading

    import uvicorn

    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    app = guarded(create_app(WebData(str(store))), decide("127.0.0.1", port, None), port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    args.out.mkdir(parents=True, exist_ok=True)
    shoot(
        f"http://127.0.0.1:{port}",
        args.out,
        {
            "runs": ("/", 520),
            "run": (f"/runs/{b.run_id}", 1150),
            "compare": (f"/compare?runs={a.run_id},{b.run_id}", 1250),
        },
    )
    server.should_exit = True
    thread.join(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
