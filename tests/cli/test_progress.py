"""Progress and Ctrl-C per sample, not per unit: a Python run interrupted mid-unit keeps the
verdicts its harness already reported, and a resume evaluates only the rest (issue 27)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import SANDBOX
from vibes_eval.store.base import StoreMissing, UnknownRun
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

N_SAMPLES = 350
N_TASKS = 5


def write_problems(path: Path) -> None:
    """OpenAI HumanEval's format: ``def add_k(x)`` returning x + k, tested by ``check``."""
    rows = [
        {
            "task_id": f"HumanEval/{k}",
            "prompt": f'def add_{k}(x):\n    """x plus {k}"""\n',
            "canonical_solution": f"    return x + {k}\n",
            "test": f"def check(candidate):\n    assert candidate(1) == {1 + k}\n",
            "entry_point": f"add_{k}",
        }
        for k in range(N_TASKS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_samples(path: Path) -> None:
    """Correct solutions that take a little time each (distinct text: none is deduplicated)."""
    rows = [
        {
            "task_id": f"HumanEval/{i % N_TASKS}",
            "completion": f"    import time  # {i}\n    time.sleep(0.05)\n"
            f"    return x + {i % N_TASKS}\n",
        }
        for i in range(N_SAMPLES)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def verdicts_in(store: str, run_id: str) -> int:
    try:
        with open_store(resolve(store), create=False) as st:
            return st.run(run_id).n_done
    except (StoreMissing, UnknownRun):
        return 0


def vibes(*args: str) -> list[str]:
    return [sys.executable, "-m", "vibes_eval.cli.app", *args]


def test_sigint_mid_unit_keeps_the_python_verdicts_already_reported(tmp_path: Path) -> None:
    """One worker, so the 350 samples run as two harness commands of 175: verdicts must
    reach the store while a command runs (before: all 175 at its end), survive SIGINT,
    and be skipped by the resume."""
    problems, samples = tmp_path / "problems.jsonl", tmp_path / "samples.jsonl"
    write_problems(problems)
    write_samples(samples)
    store, work = str(tmp_path / "store.sqlite"), tmp_path / "work"
    env = {**os.environ, "VIBES_WORK_DIR": str(work)}
    proc = subprocess.Popen(
        vibes("eval", "run", "humaneval-python", "--problems", str(problems),
              "--samples", str(samples), "--k", "1", "--workers", "1", "--sandbox", SANDBOX,
              "--no-progress", "--no-cache", "--store", store, "--run-id", "py-ctrl-c"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while (seen := verdicts_in(store, "py-ctrl-c")) < 20:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, seen
            time.sleep(0.02)
    except BaseException:
        proc.kill()
        raise
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    kept = verdicts_in(store, "py-ctrl-c")
    # A unit is half the samples here: fewer than that kept means verdicts came mid-unit.
    assert seen <= kept < N_SAMPLES // 2, (seen, kept)

    resumed = subprocess.run(
        vibes("eval", "resume", "py-ctrl-c", "--store", store, "--no-cache", "--workers", "2"),
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    said = re.search(r"resumed, (\d+) of (\d+) samples", resumed.stdout + resumed.stderr)
    assert said is not None, resumed.stdout + resumed.stderr
    assert (int(said[1]), int(said[2])) == (kept, N_SAMPLES)
    assert verdicts_in(store, "py-ctrl-c") == N_SAMPLES
    results = [
        json.loads(line) for line in Path(f"{samples}_results.jsonl").read_text().splitlines()
    ]
    assert len(results) == N_SAMPLES and all(r["passed"] for r in results)
