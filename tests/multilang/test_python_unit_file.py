"""A Python sample that searches the filesystem and /proc for its own task's tests (the
expected value, the canonical solution) and for other samples' code finds none of them:
the harness holds them in memory only (issue 24, item 5)."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

import vibes_eval
from tests.conftest import SANDBOX
from tests.multilang import problems as P

SECRET = "SECRET-" + secrets.token_hex(16)  # only in the task's test and canonical solution
OTHER = "OTHER-" + secrets.token_hex(16)  # only in the other sample's code

# Everything a sample can reach: its folder and the folders above it (where the unit's
# files were), every process's cwd, fds, cmdline and environment, /tmp. It returns the
# expected value if it finds it anywhere, and prints what it found and how far it looked.
ATTACK = r"""
    import os, re
    pattern = re.compile(r"(?:SECRET|OTHER)-[0-9a-f]{32}")
    found, budget, listed = set(), [4000], []

    def scan(path):
        if budget[0] <= 0:
            return
        budget[0] -= 1
        try:
            with open(path, "rb") as fh:
                data = fh.read(8 << 20)
        except Exception:
            return
        found.update(pattern.findall(data.decode("latin-1")))

    def walk(top, depth):
        try:
            entries = os.listdir(top)
        except Exception:
            return
        listed.append(top)
        for name in entries:
            path = os.path.join(top, name)
            if os.path.isdir(path) and not os.path.islink(path):
                if depth > 0:
                    walk(path, depth - 1)
            else:
                scan(path)

    def pids():
        try:
            return [p for p in os.listdir("/proc") if p.isdigit()] + ["self"]
        except Exception as exc:
            print("no /proc:", exc)
            return ["self"]

    here = os.getcwd()
    tops = [here]
    while here != os.path.dirname(here):
        here = os.path.dirname(here)
        tops.append(here)
    for top in tops[:4]:
        walk(top, 3)
    walk("/tmp", 3)
    for pid in pids():
        for part in ("cmdline", "environ"):
            scan(f"/proc/{pid}/{part}")
        walk(f"/proc/{pid}/fd", 0)
        walk(f"/proc/{pid}/cwd", 2)
    print("walked", 4000 - budget[0], "found", sorted(found))
    print("listed", len(listed), listed[:8])
    return next((f for f in found if f.startswith("SECRET")), "nothing")
"""

SECRET_TEST = f"\n\ndef check(candidate):\n    assert candidate() == {SECRET!r}\n"
PROBLEMS = [
    {"task_id": "Leak/0", "prompt": 'def secret():\n    """The secret."""\n',
     "entry_point": "secret", "canonical_solution": f"    return {SECRET!r}\n",
     "base_input": [[]], "plus_input": [], "atol": 0, "test": SECRET_TEST},
    {**P.EVALPLUS[0], "task_id": "Leak/1"},
]  # fmt: skip


@pytest.mark.parametrize("batch", [True, False])
def test_sample_searching_files_and_proc_for_its_tests_finds_nothing(
    tmp_path: Path, batch: bool
) -> None:
    path = P.write(tmp_path / "problems.jsonl", PROBLEMS)
    samples = [
        {"task_id": "Leak/0", "completion": ATTACK},
        {"task_id": "Leak/1", "completion": f"    return a + b  # {OTHER}\n"},
        {"task_id": "Leak/0", "completion": ATTACK},
    ]
    out = vibes_eval.evaluate(
        "humaneval-python", samples, sandbox=SANDBOX, ks=[1], workers=1, use_cache=False,
        config={"problems": str(path), "batch": batch, "limits": {"timeout_s": 20.0}},
    )  # fmt: skip
    attack, honest, again = (out.results[s.key] for s in out.prepared.samples)
    assert honest.passed, honest
    for result in (attack, again):
        assert not result.passed, result.stdout
        assert "walked" in result.stdout, result  # the search ran to its end
        assert "listed" in result.stdout  # and saw folders
        assert SECRET not in result.stdout and OTHER not in result.stdout, result.stdout
