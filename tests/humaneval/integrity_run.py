"""Evaluate a list of integrity samples in one mode through the real engine, sandbox and
compiler, and check verdicts: ``python -m tests.humaneval.integrity_run`` runs every class
in every mode and prints what differs from the expectations (used to show that the tests
fail on the code before the fixes: run it with that code first on PYTHONPATH)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.humaneval import integrity_cases as cases
from vibes_eval import evaluation
from vibes_eval.api import make_config
from vibes_eval.runners.select import resolve_runner

MODES = [(batch, policy) for batch in (True, False) for policy in (True, False)]
TIMEOUT_S = 3.0


def evaluate(
    tmp: Path,
    rows: list[cases.Row],
    *,
    batch: bool,
    policy: bool,
    sandbox: str = "auto",
    workers: int = 1,
    timeout: float = TIMEOUT_S,
) -> dict[str, Any]:
    """{case: SampleResult} for ``rows`` (with one worker, one unit: the samples sit in the
    batch in file order)."""
    problems = cases.write_problems(tmp / "problems.jsonl")
    samples = cases.write_samples(tmp / f"samples-{batch}-{policy}.jsonl", rows)
    config = make_config(
        "humaneval-rust",
        {"problems": str(problems), "batch": batch, "enforce_policy": policy,
         "limits": {"timeout_s": timeout}},
    )  # fmt: skip
    prepared = evaluation.prepare("humaneval-rust", config, samples)
    with resolve_runner(sandbox) as runner:
        outcome = evaluation.run(prepared, runner, ks=[1], workers=workers)
    return {r.case: res for r, res in zip(rows, outcome.ordered, strict=True)}


def wrong_verdicts(rows: list[cases.Row], results: dict[str, Any]) -> dict[str, str]:
    """{case: what is wrong} for the samples whose verdict breaks an expectation."""
    bad = {}
    for r in rows:
        res = results[r.case]
        if res.reason == "infra_error":
            bad[r.case] = f"infra_error: {res.detail[:120]}"
        elif r.expected is not None and res.passed is not r.expected:
            bad[r.case] = f"passed={res.passed} ({res.reason}: {res.detail[:80]})"
    return bad


def main() -> int:
    failures = 0
    for cls in cases.CLASSES:
        verdicts = {}
        for batch, policy in MODES:
            rows = cases.rows(cls, policy)
            with tempfile.TemporaryDirectory() as tmp:
                results = evaluate(Path(tmp), rows, batch=batch, policy=policy)
            bad = wrong_verdicts(rows, results)
            verdicts[(batch, policy)] = {c: (r.passed, r.reason) for c, r in results.items()}
            mode = f"{'batch' if batch else 'alone'}/{'policy' if policy else 'no-policy'}"
            print(f"{cls:20} {mode:18} {'FAIL ' + str(bad) if bad else 'ok'}", flush=True)
            failures += bool(bad)
        for policy in (True, False):
            if verdicts[(True, policy)] != verdicts[(False, policy)]:
                diff = {
                    c: (v, verdicts[(False, policy)][c])
                    for c, v in verdicts[(True, policy)].items()
                    if v != verdicts[(False, policy)][c]
                }
                print(f"{cls:20} batch != alone (policy={policy}): {diff}", flush=True)
                failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
