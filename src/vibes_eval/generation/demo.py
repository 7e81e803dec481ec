"""`make demo-model`: a real code model end to end, offline. Serves Qwen2.5-Coder-0.5B-
Instruct on the CPU (``localmodel``), then runs an A/B experiment on the first few
HumanEval-X Rust tasks: one-shot against self-refine:3, at temperature 0. Running it
again resumes (the store is kept in the model cache dir).

Environment: DEMO_TASKS (default 5), DEMO_THREADS (llama.cpp threads, default 2),
DEMO_STORE (default <model cache>/demo.sqlite), DEMO_SANDBOX (default auto),
DEMO_PROBLEMS (default ../shared's HumanEval-X Rust, else the named dataset)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vibes_eval.generation.localmodel import ALIAS, cache_dir, serving

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "datasets" / "humaneval-x"


def problems() -> str:
    """DEMO_PROBLEMS, else ../shared's HumanEval-X Rust, else the named dataset (found in
    VIBES_DATASET_PATH or the cache, or downloaded)."""
    local = SHARED / "humaneval_rust.jsonl.gz"
    return os.environ.get("DEMO_PROBLEMS") or (str(local) if local.exists() else "humaneval-x-rust")


def experiment(url: str, tasks: int, sandbox: str) -> str:
    return f"""\
name: qwen05-demo-{tasks}
benchmark: humaneval-rust
config: {{problems: "{problems()}"}}
sandbox: {sandbox}
k: [1]
generation:
  model: openai/{ALIAS}
  base_url: "{url}"
  limit: {tasks}
  sampling: {{n: 1, temperature: 0, seed: 0, max_tokens: 512}}
  concurrency: 1
variants:
  one-shot: {{setting: one-shot}}
  self-refine: {{setting: "self-refine:3", feedback_chars: 2000}}
"""


def main() -> None:
    tasks = int(os.environ.get("DEMO_TASKS", "5"))
    threads = int(os.environ.get("DEMO_THREADS", "2"))
    store = os.environ.get("DEMO_STORE", str(cache_dir() / "demo.sqlite"))
    sandbox = os.environ.get("DEMO_SANDBOX", "auto")
    start = time.monotonic()
    print(f"serving {ALIAS} ({threads} threads); the first run downloads ~480 MB", flush=True)
    with serving(threads=threads) as url, tempfile.TemporaryDirectory() as tmp:
        print(f"ready at {url} after {time.monotonic() - start:.0f} s", flush=True)
        exp = Path(tmp) / "experiment.yaml"
        exp.write_text(experiment(url, tasks, sandbox))
        cmd = [sys.executable, "-m", "vibes_eval.cli.app", "eval", "ab", str(exp), "--store", store]
        code = subprocess.run(cmd).returncode
    print(f"store: {store} (vibes eval results --store {store}); {time.monotonic() - start:.0f} s")
    sys.exit(code)


if __name__ == "__main__":
    main()
