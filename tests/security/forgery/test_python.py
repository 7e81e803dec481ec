"""Python verdict forgery (humaneval-python, MBPP, EvalPlus) through the real benchmark
entry point and sandbox: every attack (``python_attacks.py``) is a wrong solution with one
trick, and each attack class has one test here.

Each problem file (real rows of ../shared, plus rows of our own where no real test has
the shape an attack needs) is evaluated four times: policy filter on and off, batched
(one unit, every attack followed by an honest or plainly wrong neighbour) and alone. No
attack may pass in any mode; a reader must find nothing; and every neighbour's verdict
(passed, reason, detail) must be the one it gets alone, and the expected one.

(This folder has no ``__init__``: ``tests/security/forgery.py`` is the Rust suite's module
of that name.)
"""

from __future__ import annotations

import gzip
import json
import re
import secrets
from pathlib import Path
from typing import Any

import pytest

import vibes_eval
from tests.components import need
from tests.conftest import SANDBOX, SHARED, forgery_modes
from tests.multilang import problems as P
from tests.multilang.reference import human_eval_python
from tests.security.forgery import python_attacks as A
from vibes_eval.benchmarks.multilang.python import unit as py
from vibes_eval.core.errors import UserError

pytestmark = pytest.mark.slow  # 16 evaluations, about 5 minutes on a loaded machine
DATA = SHARED / "datasets"
MARK = "VJMARK-" + secrets.token_hex(16)  # only in one honest neighbour's code
MODES = {
    f"{'on' if policy else 'off'}-{'batched' if batch else 'alone'}": (policy, batch)
    for policy, batch in forgery_modes()
}
LIMITS = {"timeout_s": 5.0, "disk_mb": 64, "file_size_mb": 256}

# Neighbours: (name, task, completion, passes). A canonical solution follows every attack.
_TMPFILE = (
    "    import tempfile\n    with tempfile.TemporaryFile() as f:\n"
    "        f.write(b'x' * 100000)\n"
    "    open('scratch.txt', 'w').write('x' * 1000)\n    import random\n"
)
_SPOILERS = [
    ("spoil_disk", A.HE, "    import os\n"
     "    for path in ('../fill', '/tmp/fill', 'fill'):\n        try:\n"
     "            open(path, 'wb').write(b'x' * (80 << 20))\n        except OSError:\n"
     "            pass\n"
     "    for path in ('../random.py', '../vibes_py/random.py', '/tmp/random.py',\n"
     "                 '../scratch.txt', '../tempfile.py'):\n        try:\n"
     "            open(path, 'w').write('raise SystemExit(0)\\n')\n        except OSError:\n"
     "            pass\n    return True\n", False),
    ("spoil_memory", A.HE, "    return [[] for _ in range(4_000_000)]\n", False),
    ("spoil_hash_seed", A.HE, "    return {str(i): i for i in range(200000)}\n", False),
]  # fmt: skip


ATTACK_NAMES = (
    {n for cases in A.ATTACKS.values() for n, _, _ in cases}
    | {n for n, *_ in _SPOILERS}
    | {"neighbour_reader"}
)


def _rows(path: Path, ids: set) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [r for r in rows if r["task_id"] in ids]


def _canonical(row: dict) -> str:
    return row.get("code") or row["canonical_solution"]


def _files(tmp: Path) -> dict[str, tuple[Path, list[tuple[str, Any, str, bool]]]]:
    """Problem file -> its path and samples (name, task, completion, whether it passes)."""
    need("shared", None if DATA.exists() else f"{DATA} is absent")
    hex_rows = _rows(DATA / "humaneval-x" / "humaneval_python.jsonl.gz", {A.HE, A.HE_ADD})
    mbpp_rows = [*_rows(DATA / "mbpp" / "mbpp.jsonl", {A.MB}), A.MBPP_SYNTHETIC]
    plus_rows = [
        *_rows(DATA / "evalplus" / "HumanEvalPlus.jsonl.gz", {A.HEP}),
        *_rows(DATA / "evalplus" / "MbppPlus.jsonl.gz", {A.MBP}),
    ]
    out = {}
    for name, rows in (("hex", hex_rows), ("mbpp", mbpp_rows), ("plus", plus_rows),
                       ("syn", A.SYNTHETIC)):  # fmt: skip
        path = tmp / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        by_id = {r["task_id"]: r for r in rows}
        honest = [(f"canonical_{t}", t, _canonical(r), True) for t, r in by_id.items()]
        attacks = [
            (n, t, code, False)
            for cases in A.ATTACKS.values()
            for n, t, code in cases
            if t in by_id
        ]
        if name == "hex":
            attacks += [*_SPOILERS, ("neighbour_reader", A.HE, _neighbour_reader(), False)]
            canon = _canonical(by_id[A.HE])
            honest += [
                ("tmpfile_user", A.HE, _TMPFILE + canon, True),
                ("marked", A.HE, canon + f"    # {MARK}\n", True),
                ("wrong_he", A.HE, "    return False\n", False),
            ]
        samples = []
        for n, attack in enumerate(attacks):
            samples += [attack, honest[n % len(honest)]]
        out[name] = (path, samples + honest)
    return out


def _neighbour_reader() -> str:
    return A.reader("has_close_elements", A.HE_ARGS, "True", "memory fds files proc")


def _evaluate(path: Path, samples: list, policy: bool, batch: bool) -> list:
    out = vibes_eval.evaluate(
        "humaneval-python", [{"task_id": t, "completion": c} for _, t, c, _ in samples],
        sandbox=SANDBOX, ks=[1], workers=1, use_cache=False,
        config={"problems": str(path), "batch": batch, "enforce_policy": policy,
                "limits": LIMITS},
    )  # fmt: skip
    return [out.results[s.key] for s in out.prepared.samples]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, list]]:
    """mode -> sample name -> [(result, whether it should pass)], every file evaluated."""
    files = _files(tmp_path_factory.mktemp("forgery-py"))
    got: dict[str, dict[str, list]] = {}
    for mode, (policy, batch) in MODES.items():
        got[mode] = {}
        for path, samples in files.values():
            if not batch:  # alone: each neighbour once is enough
                samples = list({name: (name, *rest) for name, *rest in samples}.values())
            if not policy:  # the filter off runs everything alone: no neighbours to hurt
                samples = [x for x in samples if x[0] in ATTACK_NAMES]
            for (name, *_, ok), res in zip(samples, _evaluate(path, samples, policy, batch),
                                           strict=True):  # fmt: skip
                got[mode].setdefault(name, []).append((res, ok))
    return got


def _never_pass(verdicts: dict, attack_class: str) -> None:
    names = [n for n, _, _ in A.ATTACKS[attack_class]]
    for mode, results in verdicts.items():
        for name in names:
            for res, _ in results[name]:
                assert not res.passed, (mode, name, res.reason, res.detail, res.stdout[:500])
                assert res.reason != "infra_error", (mode, name, res.detail)
                found = re.search(r"found (\[.*?\])", res.stdout)
                assert found is None or found.group(1) == "[]", (mode, name, res.stdout[:500])
                assert MARK not in res.stdout + res.stderr + res.detail, (mode, name)
                assert res.details.get("trust") == "split", (mode, name, res.details)


def test_reading_own_tests_from_files(verdicts) -> None:
    _never_pass(verdicts, "reading_own_tests_from_files")
    for mode, results in verdicts.items():
        for res, _ in results["files_he"]:
            assert "searched" in res.stdout, (mode, res.reason, res.detail)  # it ran to its end


def test_reading_own_tests_from_memory(verdicts) -> None:
    _never_pass(verdicts, "reading_own_tests_from_memory")


def test_reading_through_inherited_fds(verdicts) -> None:
    _never_pass(verdicts, "reading_through_inherited_fds")


def test_reading_evalplus_canonical_and_expected(verdicts) -> None:
    _never_pass(verdicts, "reading_evalplus_canonical_and_expected")


def test_forging_the_verdict_line(verdicts) -> None:
    _never_pass(verdicts, "forging_the_verdict_line")


def test_exiting_early_with_success(verdicts) -> None:
    _never_pass(verdicts, "exiting_early_with_success")


def test_patching_builtins_and_operators(verdicts) -> None:
    _never_pass(verdicts, "patching_builtins_and_operators")


def test_objects_that_claim_equality(verdicts) -> None:
    _never_pass(verdicts, "objects_that_claim_equality")


def test_stop_iteration_ending_a_test_loop(verdicts) -> None:
    _never_pass(verdicts, "stop_iteration_ending_a_test_loop")


def test_test_code_catching_the_harness_signals(verdicts) -> None:
    _never_pass(verdicts, "test_catching_the_harness_signals")


def test_module_name_resolved_in_the_sample(verdicts) -> None:
    _never_pass(verdicts, "module_name_resolved_in_the_sample")


def test_signalling_the_harness(verdicts) -> None:
    _never_pass(verdicts, "signalling_the_harness")


def test_reading_neighbours(verdicts) -> None:
    for mode, results in verdicts.items():
        for res, _ in results["neighbour_reader"]:
            assert not res.passed and "searched" in res.stdout, (mode, res.reason)
            assert MARK not in res.stdout, mode


def test_neighbours_keep_their_verdicts(verdicts) -> None:
    """Every honest or plainly wrong neighbour gets its expected verdict, the same
    batched as alone, whatever the attack before it did (spoilers: a full disk, planted
    modules, a huge answer)."""
    alone = verdicts.get("on-alone", {})  # the default tier leaves it out (forgery_modes)
    for mode, results in verdicts.items():
        for name, runs in results.items():
            if name in ATTACK_NAMES:
                continue
            for res, ok in runs:
                assert res.passed == ok, (mode, name, res.reason, res.detail)
                if name in alone:
                    lone = alone[name][0][0]
                    key = (res.passed, res.reason, res.detail)
                    assert key == (lone.passed, lone.reason, lone.detail), (mode, name)


def test_reading_a_dataset_the_samples_can_read(tmp_path: Path) -> None:
    """A copy of the tests where the sandbox lets samples read (the interpreter's
    environment, the system's folders) is refused before anything runs: the problems file
    lying there, or the HumanEval data the human-eval package installs with the samples'
    interpreter (a reader there found its task's asserts and canonical solution)."""
    data = tmp_path / "site" / "human_eval" / "data" / "HumanEval.jsonl.gz"
    interp = py.Interpreter("python", "3.11", (tmp_path / "site",), (data,))
    inside, outside = tmp_path / "site" / "problems.jsonl", tmp_path / "problems.jsonl"
    assert py.exposed(interp, inside) == [inside.resolve(), data]
    assert py.exposed(interp, outside) == [data]
    assert py.exposed(py.Interpreter("python", "3.11", (tmp_path / "site",)), outside) == []
    python = human_eval_python()  # an interpreter with human-eval installed
    with pytest.raises(UserError, match=r"can read .*HumanEval\.jsonl\.gz"):
        vibes_eval.evaluate(
            "humaneval-python", [{"task_id": "HumanEval/0", "completion": "    return True\n"}],
            sandbox=SANDBOX, ks=[1], use_cache=False,
            config={"problems": str(P.write(outside, P.EVALPLUS)), "python": str(python)},
        )  # fmt: skip
