"""Issue 16, the differential test: generated mixes of attackers, correct and wrong samples,
evaluated batched and alone (policy filter on and off), must give identical verdicts;
every correct sample passes, every wrong one fails, no forger passes, and no sample gets
``infra_error`` (a neighbour's doing).

The mixes are drawn with fixed seeds (reproducible) from a pool of the attack classes'
samples (``integrity_cases``), the forgery suite (``tests/security/forgery/``) and
correct and wrong solutions of every kind that takes another path through a batch: risky
but right (threads, env, a macro, a local trait impl), compile and syntax errors, panics.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.conftest import SANDBOX
from tests.humaneval import integrity_cases as cases
from tests.humaneval.integrity_run import evaluate, wrong_verdicts
from tests.security.forgery import FORGERIES, expected

MIX_SIZE = 36
SEEDS = [16, 1601]

RIGHT = [
    ("I/add", "    std::thread::spawn(move || a + b).join().unwrap()\n}\n"),
    ("I/add", '    let _ = std::env::var("HOME");\n    a + b\n}\n'),
    ("I/add", "    macro_rules! sum { ($x:expr, $y:expr) => { $x + $y } }\n    sum!(a, b)\n}\n"),
    ("I/add", "    a + b\n}\n/// a doc comment for whatever comes next\n"),
    ("I/add", "    a + b\n}\n#[cfg(any())]\n"),  # the attribute removes the guard only
    ("I/first", "    v.first().map(|x| P(*x).0)\n}\n#[derive(Debug, PartialEq)]\nstruct P(i32);\n"
     "impl std::fmt::Display for P {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {\n"
     '        write!(f, "{}", self.0)\n    }\n}\n'),
    ("I/greet", '    format!("hello {}", name)\n}\n'),
    ("I/doubled", "    let mut out = vec![];\n    for x in v { out.push(2 * x); }\n    out\n}\n"),
    ("I/greet", '    let s = cr#"hello "#;\n    s.to_str().unwrap().to_string() + name\n}\n'),
]  # fmt: skip
WRONG = [
    ("I/add", '    panic!("no")\n}\n'),
    ("I/add", "    a + undefined\n}\n"),
    ("I/add", "    let x = (1, 2;\n    a\n}\n"),
    ("I/add", '    "unterminated\n}\n'),
    ("I/greet", '    let x: i32 = "s";\n    name.to_string()\n}\n'),
    ("I/first", "    v.iter().copied().max()\n}\n"),
    ("I/doubled", "    v.iter().map(|x| x + 2).collect()\n}\n"),
    ("I/add", "    std::process::exit(0)\n}\n"),
]


def pool(policy: bool) -> list[cases.Row]:
    rows = [cases.Row(t, c, f"right_{t}_{n}", True) for n, (t, c) in enumerate(RIGHT)]
    rows += [cases.Row(t, c, f"wrong_{t}_{n}", False) for n, (t, c) in enumerate(WRONG)]
    for tid in cases.PROBLEMS:
        rows.append(cases.Row(tid, cases.CORRECT[tid], f"correct_{tid}", True))
        rows.append(cases.Row(tid, cases.WRONG[tid], f"wrong_{tid}", False))
    for name, (tid, code, _) in FORGERIES.items():
        rows.append(cases.Row(tid, code, f"forgery_{name}", expected(name, policy)))
    for name, (tid, code) in cases.ATTACKS.items():
        rows.append(cases.Row(tid, code, f"attack_{name}", cases.attacker_expected(name, policy)))
    return rows


def mix(seed: int, policy: bool) -> list[cases.Row]:
    """A mix: every right and wrong kind at least once, attackers drawn at random, in a
    random order; cases made unique per position."""
    rng = random.Random(seed)
    rows = pool(policy)
    honest = [r for r in rows if not r.case.startswith(("forgery_", "attack_"))]
    hostile = [r for r in rows if r.case.startswith(("forgery_", "attack_"))]
    chosen = honest + rng.sample(hostile, MIX_SIZE - len(honest))
    chosen += rng.sample(honest, 6)  # the same samples again, elsewhere in the batch
    rng.shuffle(chosen)
    return [
        cases.Row(r.task_id, r.completion, f"{r.case}#{n}", r.expected)
        for n, r in enumerate(chosen)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("policy", [True, False], ids=["policy", "no-policy"])
@pytest.mark.parametrize("seed", SEEDS)
def test_batched_and_alone_agree_on_adversarial_mixes(
    tmp_path: Path, seed: int, policy: bool
) -> None:
    rows = mix(seed, policy)
    verdicts = {}
    for batch in (True, False):
        results = evaluate(tmp_path, rows, batch=batch, policy=policy, sandbox=SANDBOX, workers=2)
        mode = "batch" if batch else "alone"
        assert not wrong_verdicts(rows, results), f"{mode}: {wrong_verdicts(rows, results)}"
        verdicts[mode] = {c: (r.passed, r.reason, r.detail) for c, r in results.items()}
    diff = {
        c: (v, verdicts["alone"][c])
        for c, v in verdicts["batch"].items()
        if v != verdicts["alone"][c]
    }
    assert not diff
