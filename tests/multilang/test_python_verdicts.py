"""Python verdicts through the real sandbox: formats, hostile samples, and the same
verdict batched as alone."""

from __future__ import annotations

from pathlib import Path

import pytest

import vibes_eval
from tests.conftest import SANDBOX
from tests.multilang import problems as P
from vibes_eval.core.errors import UserError

BODY_OK = "    return a + b\n"
# name -> (completion for `add`, reasons it may get: never passed)
HOSTILE: dict[str, tuple[str, set[str]]] = {
    "sys_exit": ("    import sys\n    sys.exit(0)\n", {"early_exit"}),
    "os_exit": ("    import os\n    os._exit(0)\n", {"early_exit"}),
    "module_os_exit": (BODY_OK + "import os\nos._exit(0)\n", {"early_exit"}),
    "exit_builtin": ("    exit(0)\n", {"blocked_policy"}),
    "raise_system_exit_in_try": (
        "    try:\n        raise SystemExit(0)\n    finally:\n        pass\n",
        {"early_exit"},
    ),
    "atexit_exit": (
        "    import atexit, os\n    atexit.register(os._exit, 0)\n    return 0\n",
        {"failed"},
    ),
    "patch_assertion_error": (
        "    import builtins\n    builtins.AssertionError = type('N', (Exception,), {})\n"
        "    return 0\n",
        {"failed"},
    ),
    "settrace": ("    import sys\n    sys.settrace(lambda *a: None)\n    return 0\n", {"failed"}),
    "own_check": ("    return 0\n\ndef check(candidate):\n    pass\n", {"failed"}),
    "fake_output": (
        "    print('passed')\n    print('{\"passed\": true}')\n    return 0\n",
        {"failed"},
    ),
    "equal_to_all": (
        "    class A:\n        def __eq__(s, o):\n            return True\n    return A()\n",
        {"failed"},
    ),
    "float_subclass": (
        "    class F(float):\n        def __eq__(s, o):\n            return True\n"
        "    return F(-1)\n",
        {"failed"},
    ),
    "fork": ("    import os\n    os.fork()\n    return a + b\n", {"blocked_policy"}),
    "ctypes_fork": (
        "    import ctypes\n    if ctypes.CDLL(None).fork() < 0:\n"
        "        raise OSError('no')\n    return a + b\n",
        {"failed"},
    ),
    "kill_harness": (
        "    import ctypes, os\n    ctypes.CDLL(None).kill(os.getppid(), 9)\n    return 0\n",
        {"failed"},
    ),
    "write_parent_stdout": (
        "    import os\n    try:\n        fd = os.open(f'/proc/{os.getppid()}/fd/1', os.O_WRONLY)\n"
        '        os.write(fd, b\'x {"id": 0, "passed": true, "reason": "passed"}\\n\')\n'
        "    except OSError:\n        pass\n    return 0\n",
        {"failed"},
    ),
    "loop": ("    while True:\n        pass\n", {"timeout"}),
    "memory": ("    x = bytearray(1 << 34)\n    return a + b\n", {"memory"}),
    "recursion": ("    return add(a, b)\n", {"failed"}),
    "syntax": ("    return a +\n", {"compile_error"}),
    "huge_answer": ("    return 'x' * (200 << 20)\n", {"failed", "memory", "timeout"}),
    "cyclic_answer": ("    x = []\n    x.append(x)\n    return x\n", {"failed"}),
}


def evaluate(tmp: Path, problems: list[dict], samples: list[dict], **config):
    path = P.write(tmp / "problems.jsonl", problems)
    out = vibes_eval.evaluate(
        "humaneval-python", samples, sandbox=SANDBOX, ks=[1],
        config={"problems": str(path), "limits": {"timeout_s": 2.0}, **config},
    )  # fmt: skip
    return [out.results[s.key] for s in out.prepared.samples]


def test_hostile_samples_never_pass(tmp_path: Path) -> None:
    samples = [{"task_id": "Test/0", "completion": body} for body, _ in HOSTILE.values()]
    samples.append({"task_id": "Test/0", "completion": BODY_OK})
    results = evaluate(tmp_path, P.OPENAI, samples)
    for (name, (_, reasons)), res in zip(HOSTILE.items(), results, strict=False):
        assert not res.passed, name
        assert res.reason in reasons, (name, res.reason, res.detail)
    assert results[-1].passed


def test_batched_verdicts_equal_alone(tmp_path: Path) -> None:
    """Every sample's verdict (passed, reason, detail) is the same in a unit with all the
    others as evaluated alone; the unit includes a sample that fills the disk, which ends
    its round for the sample after it."""
    filler = "    open('../fill', 'wb').write(b'x' * (64 << 20))\n    return a + b\n"
    bodies = [BODY_OK, filler, BODY_OK, *(b for b, _ in HOSTILE.values() if "memory" not in _)]
    samples = [{"task_id": "Test/0", "completion": b} for b in bodies]
    samples += [{"task_id": "Test/1", "completion": "    return (x for x in xs if x % 2 == 0)\n"}]
    # output that JSON must escape (non-ASCII, a lone surrogate) does not cost the verdict
    noisy = "    print('\\u00e9\\ud800' * {})\n    return a + b\n"
    samples += [{"task_id": "Test/0", "completion": noisy.format(n)} for n in (4000, 5000, 6000)]
    limits = {"timeout_s": 2.0, "disk_mb": 32, "file_size_mb": 128}
    batched = evaluate(tmp_path, P.OPENAI, samples, limits=limits)
    alone = evaluate(tmp_path, P.OPENAI, samples, limits=limits, batch=False)

    def key(r):
        return (r.passed, r.reason, r.detail)

    assert [key(r) for r in batched] == [key(r) for r in alone]
    assert batched[0].passed and batched[2].passed and all(r.passed for r in batched[-4:])


def test_mbpp_rows(tmp_path: Path) -> None:
    rows = P.MBPP
    samples = [{"task_id": r["task_id"], "completion": r["code"]} for r in rows]
    samples.append({"task_id": 11, "completion": "def remove_Occ(s, ch):\n    return s\n"})
    results = evaluate(tmp_path, rows, samples)
    assert [r.passed for r in results] == [True, True, False]
    assert results[2].detail.startswith("assertion failed: assert remove_Occ")


MBPP_SHAPES = [  # the shapes of MBPP 126 (a function named `sum`), 367/927 (the test
    # builds the sample's objects), 533 (a type as an argument)
    {"task_id": 1, "text": "gcd sum", "test_setup_code": "", "challenge_test_list": [],
     "code": "def sum(a, b):\n    return a + b\n", "test_list": ["assert sum(1, 2) == 3"]},
    {"task_id": 2, "text": "height", "challenge_test_list": [],
     "code": "class Node:\n    def __init__(self, d):\n        self.left = None\n"
             "def height(n):\n    return 0 if n is None else 1 + height(n.left)\n",
     "test_setup_code": "root = Node(1)\nroot.left = Node(2)\n",
     "test_list": ["assert height(root) == 2"]},
    {"task_id": 3, "text": "drop a type", "test_setup_code": "", "challenge_test_list": [],
     "code": "def drop(xs, t):\n    return [x for x in xs if not isinstance(x, t)]\n",
     "test_list": ["assert drop((1, 'a', 2.5), int) == ['a', 2.5]"]},
]  # fmt: skip


def test_mbpp_tests_that_shadow_builtins_build_objects_or_pass_types(tmp_path: Path) -> None:
    samples = [{"task_id": r["task_id"], "completion": r["code"]} for r in MBPP_SHAPES]
    samples.append({"task_id": 2, "completion": MBPP_SHAPES[1]["code"].replace("1 +", "2 +")})
    results = evaluate(tmp_path, MBPP_SHAPES, samples)
    assert [r.passed for r in results] == [True, True, True, False], results


def test_evalplus_extra_inputs(tmp_path: Path) -> None:
    samples = [
        {"task_id": "HumanEval/0", "completion": "    return a + b\n"},
        # right on the base test, wrong on an extra input
        {"task_id": "HumanEval/0", "completion": "    return a + b if a < 10**9 else 0\n"},
    ]
    results = evaluate(tmp_path, P.EVALPLUS, samples)
    assert results[0].passed and results[0].details["evalplus"] == {"base": "pass", "plus": "pass"}
    assert not results[1].passed and results[1].detail.startswith("plus input 0")
    # EvalPlus's base number counts it: its base inputs passed
    assert results[1].details["evalplus"] == {"base": "pass", "plus": "fail"}
    assert results[1].measurements["base_passed"] == 1.0


def test_multiple_rows_and_stop_tokens(tmp_path: Path) -> None:
    text = "    return a + b\n\ndef unrelated():\n    return syntax error here\n"
    samples = [{"name": "HumanEval_0_add", "completion": text}]
    assert not evaluate(tmp_path, P.MULTIPLE_PY, samples)[0].passed
    assert evaluate(tmp_path, P.MULTIPLE_PY, samples, stop_tokens=True)[0].passed


def test_policy_off_lets_processes_start(tmp_path: Path) -> None:
    fork = "    import subprocess\n    subprocess.run(['true'])\n    return a + b\n"
    samples = [{"task_id": "Test/0", "completion": fork}]
    assert not evaluate(tmp_path, P.OPENAI, samples)[0].passed
    assert evaluate(tmp_path, P.OPENAI, samples, enforce_policy=False)[0].passed


@pytest.mark.parametrize(
    "problems,task_id,bad",
    [(P.OPENAI, "Nope/1", "unknown task id"), ([{"task_id": "X/0"}], "X/0", "unknown problem")],
)
def test_bad_input_is_one_line(tmp_path: Path, problems, task_id, bad) -> None:
    with pytest.raises(UserError, match=bad):
        evaluate(tmp_path, problems, [{"task_id": task_id, "completion": ""}])
