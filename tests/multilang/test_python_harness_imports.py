"""A sample that plants modules where the trusted harness might import them (its own
folder, the folders above the sample's) cannot change any verdict: the harness and its
fork server start without their folder on sys.path (red team A1). The planted module
would replace the harness's judging with one that passes everything, so only the attack
could make these wrong samples pass; a wrong neighbour in the same unit stays failed too."""

from __future__ import annotations

from pathlib import Path

import pytest

import vibes_eval
from tests.conftest import SANDBOX
from tests.multilang import problems as P

# Rewrites the harness's verdict function when imported in place of a stdlib module.
PAYLOAD = "import __main__\\n__main__.classify = lambda *a, **k: ('passed', '')\\n"
PLANT = f"""    return a - b  # wrong on purpose

import os as _os
for _d in (".", "..", "../..", "../../.."):
    for _sub in ("", "vibes_py"):
        _p = _os.path.join(_d, _sub)
        if _os.path.isdir(_p):
            for _name in ("random", "typing", "math", "collections"):
                try:
                    with open(_os.path.join(_p, _name + ".py"), "w") as _f:
                        _f.write("{PAYLOAD}")
                except OSError:
                    pass
"""
RANDOM_TEST = (
    "\n\nimport random\nimport math\n\ndef check(candidate):\n"
    "    for _ in range(3):\n"
    "        x = random.randint(0, 9)\n"
    "        assert candidate(x, 1) == x + 1\n"
)
PROBLEMS = [
    {**P.OPENAI[0], "task_id": "Plant/0", "test": RANDOM_TEST},
    {**P.OPENAI[1], "task_id": "Plant/1"},
]


@pytest.mark.parametrize("batch", [True, False])
def test_a_module_planted_for_the_harness_is_never_imported(tmp_path: Path, batch: bool) -> None:
    path = P.write(tmp_path / "problems.jsonl", PROBLEMS)
    samples = [
        {"task_id": "Plant/0", "completion": PLANT},
        {"task_id": "Plant/1", "completion": "    return [1]\n"},  # wrong neighbour
        {"task_id": "Plant/0", "completion": "    return a + b\n"},  # honest control
    ]
    out = vibes_eval.evaluate(
        "humaneval-python", samples, sandbox=SANDBOX, ks=[1], workers=1, use_cache=False,
        config={"problems": str(path), "batch": batch, "enforce_policy": False},
    )  # fmt: skip
    attack, neighbour, honest = (out.results[s.key] for s in out.prepared.samples)
    assert honest.passed, honest
    assert not attack.passed, attack
    assert not neighbour.passed, neighbour
