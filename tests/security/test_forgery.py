"""Verdict forgery (``forgery/__init__.py``) through the real engine, compiler and sandbox,
batched and alone, with the policy filter on and off.

Per filter setting, every forger sits in one file with correct and wrong solutions of
every task: no forger passes (filter off too: the tests run in a process of their own, out
of the forger's reach; only a right solution whose trick targets others passes), every
correct sample passes and every wrong one fails, no sample gets ``infra_error``, and
batched and lone verdicts are identical. A forger hiding `std::process::exit` after a
literal is refused by the filter: the lexer saw the code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SANDBOX, batch_modes
from tests.humaneval import integrity_cases as cases
from tests.humaneval.integrity_run import evaluate, wrong_verdicts
from tests.security.forgery import FORGERIES, LITERALS, expected
from vibes_eval.benchmarks.humaneval.rust import policy as policy_filter
from vibes_eval.benchmarks.humaneval.rust.risk import risk
from vibes_eval.benchmarks.humaneval.rust.scan import Scan, TaskFacts
from vibes_eval.benchmarks.humaneval.tasks import load_problems


def _rows(policy: bool) -> list[cases.Row]:
    rows = []
    for tid in cases.PROBLEMS:
        rows.append(cases.Row(tid, cases.CORRECT[tid], f"correct_{tid}", True))
        rows.append(cases.Row(tid, cases.WRONG[tid], f"wrong_{tid}", False))
    for name, (tid, code, _) in FORGERIES.items():
        rows.append(cases.Row(tid, code, name, expected(name, policy)))
    rows += [cases.Row(r.task_id, r.completion, r.case + "_again", r.expected) for r in rows[:8]]
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("policy", [True, False], ids=["policy", "no-policy"])
def test_no_forgery_passes(tmp_path: Path, policy: bool) -> None:
    rows = _rows(policy)
    verdicts = {}
    for batch in batch_modes(policy):
        results = evaluate(tmp_path, rows, batch=batch, policy=policy, sandbox=SANDBOX)
        mode = "batch" if batch else "alone"
        assert not wrong_verdicts(rows, results), f"{mode}: {wrong_verdicts(rows, results)}"
        verdicts[mode] = {c: (r.passed, r.reason, r.detail) for c, r in results.items()}
        if policy:
            for name in LITERALS:
                assert results[f"after_{name}"].reason == "blocked_policy", name
    assert verdicts["batch"] == verdicts.get("alone", verdicts["batch"])


@pytest.fixture(scope="module")
def problems(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return load_problems(cases.write_problems(tmp_path_factory.mktemp("p") / "p.jsonl"))


# Harmless in a shared process: a shared run judges them from libtest's log like any other.
BATCHABLE = {"fake_ok_stdout", "ignore_attached", "fake_failure_report"}


@pytest.mark.parametrize("name", sorted(set(FORGERIES) - BATCHABLE))
def test_every_forger_is_evaluated_alone(problems: dict, name: str) -> None:
    tid, code, _ = FORGERIES[name]
    task = problems[tid]
    assert risk(Scan.of(task, TaskFacts.of(task), code)) is not None


@pytest.mark.parametrize("name", list(LITERALS))
def test_code_after_every_literal_form_is_seen(problems: dict, name: str) -> None:
    tid, code, _ = FORGERIES[f"after_{name}"]
    task = problems[tid]
    scan = Scan.of(task, TaskFacts.of(task), code)
    assert scan.clean, scan.problems
    assert "std::process::exit(0)" in scan.bare
    violation = policy_filter.check(scan.code, scan.bare, scan.clean)
    assert violation is not None and violation.category == "process"
    # read alone too (the API without the program around it)
    assert policy_filter.check(code) is not None
