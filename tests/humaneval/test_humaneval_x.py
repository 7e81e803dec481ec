"""HumanEval-X Rust end to end (needs ../shared): every canonical solution passes on the
trusted-test split, broken samples never do, and pass@k equals the unbiased estimator
exactly."""

import gzip
import json
import os
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest

from tests.conftest import HUMANEVAL_X_RUST, SANDBOX, needs_shared, run_cli

pytestmark = [needs_shared, pytest.mark.slow]

# Rust/50's test calls the rand 0.4 API `gen_range(0, 2)`, which rand 0.8 lacks: its test
# program gets a shim (in-process, the tests did not compile and nothing passed).
NO_TESTS = {"Rust/32"}

BROKEN = {
    "panic": '    panic!("not today");\n}\n',
    "compile": "    this_is_not_defined()\n}\n",
    "exit0": "    std::process::exit(0);\n}\n",
    "loop": "    loop { std::hint::black_box(0u8); }\n}\n",
}


def problems() -> list[dict]:
    with gzip.open(HUMANEVAL_X_RUST, "rt") as fh:
        return [json.loads(line) for line in fh]


def results_of(samples: Path) -> list[dict]:
    return [json.loads(line) for line in Path(str(samples) + "_results.jsonl").open()]


def test_canonical_solutions_pass(tmp_path: Path) -> None:
    samples = tmp_path / "canonical.jsonl"
    with samples.open("w") as fh:
        for p in problems():
            fh.write(
                json.dumps({"task_id": p["task_id"], "completion": p["canonical_solution"]}) + "\n"
            )
    proc = run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        "humaneval-x-rust",
        "--samples",
        str(samples),
        "--k",
        "1",
        "--sandbox",
        SANDBOX,
        "--no-progress",
        check=True,
        env={**os.environ, "VIBES_DATASET_PATH": str(HUMANEVAL_X_RUST.parent)},
    )
    rows = results_of(samples)
    assert len(rows) == 164
    failed = {r["task_id"]: r["result"] for r in rows if not r["passed"]}
    assert failed == {}
    assert "flagged Rust/32" in proc.stdout  # its tests are commented out
    assert f"{1:.4f}" in proc.stdout


def test_broken_samples_never_pass_and_pass_at_k_is_exact(tmp_path: Path) -> None:
    probs = [p for p in problems() if p["task_id"] not in NO_TESTS][:24]
    samples = tmp_path / "five.jsonl"
    counts: dict[str, tuple[int, int]] = {}
    kinds = list(BROKEN)
    with samples.open("w") as fh:
        for i, p in enumerate(probs):
            correct = i % 6  # 0..5 correct of 5: every pass@k regime
            rows = [p["canonical_solution"]] * correct
            # a looping sample costs a full timeout: only a few tasks get one
            pool = kinds if i % 8 == 0 else kinds[:3]
            rows += [BROKEN[pool[j % len(pool)]] for j in range(5 - correct)]
            counts[p["task_id"]] = (5, correct)
            for j, completion in enumerate(rows):
                fh.write(
                    json.dumps(
                        {"task_id": p["task_id"], "completion": completion, "ok": j < correct}
                    )
                    + "\n"
                )
    proc = run_cli(
        str(samples),
        f"--problem_file={HUMANEVAL_X_RUST}",
        "--k=1,5",
        "--timeout=3",
        "--no-enforce-policy",
        f"--sandbox-mode={SANDBOX}",
        "--no-progress",
        entry="evaluate_functional_correctness",
        check=True,
    )
    rows = results_of(samples)
    assert [r["passed"] for r in rows] == [r["ok"] for r in rows]
    assert {r["reason"] for r in rows if not r["ok"]} >= {
        "failed",
        "compile_error",
        "early_exit",
        "timeout",
    }
    expected = {
        f"pass@{k}": float(
            sum((1 - Fraction(comb(n - c, k), comb(n, k)) for n, c in counts.values()), Fraction(0))
            / len(counts)
        )
        for k in (1, 5)
    }
    assert proc.stdout.strip().splitlines()[-1] == repr(expected)
