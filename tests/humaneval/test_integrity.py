"""Issue 16: one test per attack class, batched and alone, with the policy filter on and off.
Every one of them failed on the code before the fixes (``integrity_run`` prints which mode
of which class; docs/batching.md lists what each did there).

Per class and filter setting, the class's samples are evaluated batched and alone: every
sample gets the verdict it must (correct neighbours pass, wrong ones and forging attackers
fail, none gets ``infra_error``) and both modes give identical verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SANDBOX
from tests.humaneval import integrity_cases as cases
from tests.humaneval.integrity_run import evaluate, wrong_verdicts
from vibes_eval.benchmarks.humaneval.rust.risk import compile_risk, risk
from vibes_eval.benchmarks.humaneval.rust.scan import Scan, TaskFacts
from vibes_eval.benchmarks.humaneval.tasks import load_problems


@pytest.mark.slow
@pytest.mark.parametrize("policy", [True, False], ids=["policy", "no-policy"])
@pytest.mark.parametrize("cls", list(cases.CLASSES))
def test_attack_class(tmp_path: Path, cls: str, policy: bool) -> None:
    rows = cases.rows(cls, policy)
    verdicts = {}
    for batch in (True, False):
        results = evaluate(tmp_path, rows, batch=batch, policy=policy, sandbox=SANDBOX)
        mode = "batch" if batch else "alone"
        assert not wrong_verdicts(rows, results), f"{mode}: {wrong_verdicts(rows, results)}"
        verdicts[mode] = {c: (r.passed, r.reason, r.detail) for c, r in results.items()}
    assert verdicts["batch"] == verdicts["alone"]


@pytest.fixture(scope="module")
def problems(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return load_problems(cases.write_problems(tmp_path_factory.mktemp("p") / "p.jsonl"))


@pytest.mark.parametrize("case", list(cases.ATTACKS))
def test_no_attacker_enters_a_batch(problems: dict, case: str) -> None:
    """Every attacker is evaluated alone (compiled and run apart), whatever else it does."""
    task_id, code = cases.ATTACKS[case]
    task = problems[task_id]
    assert risk(Scan.of(task, TaskFacts.of(task), code)) is not None


@pytest.mark.parametrize(
    "case,reason",
    [
        ("attr_removal", None),  # the guard item takes the attribute: tests intact
        ("shadow_type", "`String`"),
        ("shadow_variant", "`None`"),
        ("shadow_macro", "`vec`"),
        ("impl_reach", None),
    ],
)
def test_tampering_is_named(problems: dict, case: str, reason: str | None) -> None:
    task_id, code = cases.ATTACKS[case]
    task = problems[task_id]
    scan = Scan.of(task, TaskFacts.of(task), code)
    if reason is None:
        assert scan.tampering is None
    else:
        assert scan.tampering is not None and reason in scan.tampering


def test_crate_wide_impl_is_compile_risky(problems: dict) -> None:
    task = problems["I/greet"]
    facts = TaskFacts.of(task)
    reach = Scan.of(task, facts, cases.ATTACKS["impl_reach"][1])
    assert "reaches other modules" in (compile_risk(reach) or "")
    own = "    name.to_string()\n}\n#[derive(Debug, PartialEq)]\nstruct P(i32);\n"
    own += 'impl std::fmt::Display for P {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { write!(f, "") }\n}\n'
    assert compile_risk(Scan.of(task, facts, own)) is None
