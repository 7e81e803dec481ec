"""Small problem sets written for the tests, in each supported format."""

from __future__ import annotations

import json
from pathlib import Path

ADD_PROMPT = 'def add(a, b):\n    """Return a + b."""\n'
ADD_TEST = (
    "\n\ndef check(candidate):\n"
    "    assert candidate(1, 2) == 3\n"
    "    assert candidate(-1, 1) == 0\n"
    "    assert candidate(2.5, 0.5) == 3.0\n"
)
EVENS_PROMPT = 'def evens(xs):\n    """The even numbers of xs, in order."""\n'
EVENS_TEST = (
    "\n\ndef check(candidate):\n"
    "    assert list(candidate([1, 2, 3, 4])) == [2, 4]\n"
    "    assert list(candidate([])) == []\n"
)
OPENAI = [
    {"task_id": "Test/0", "prompt": ADD_PROMPT, "canonical_solution": "    return a + b\n",
     "test": ADD_TEST, "entry_point": "add"},
    {"task_id": "Test/1", "prompt": EVENS_PROMPT,
     "canonical_solution": "    return [x for x in xs if x % 2 == 0]\n",
     "test": EVENS_TEST, "entry_point": "evens"},
]  # fmt: skip

MBPP = [
    {"task_id": 11, "text": "Write a function to remove the first and last occurrence of a "
     "given character from the string.", "code": "def remove_Occ(s, ch):\n    s = s.replace"
     "(ch, '', 1)\n    return s[::-1].replace(ch, '', 1)[::-1]\n",
     "test_list": ['assert remove_Occ("hello","l") == "heo"',
                   'assert remove_Occ("abcda","a") == "bcd"'],
     "test_setup_code": "", "challenge_test_list": []},
    {"task_id": 12, "text": "Pairs.", "code": "class Pair:\n    def __init__(self, a, b):\n"
     "        self.a, self.b = a, b\n\ndef longest(pairs):\n    return max(p.b - p.a for p"
     " in pairs)\n",
     "test_list": ["assert longest([Pair(1, 5), Pair(2, 3)]) == 4"],
     "test_setup_code": "import math", "challenge_test_list": []},
]  # fmt: skip

EVALPLUS = [
    {"task_id": "HumanEval/0", "prompt": ADD_PROMPT, "entry_point": "add",
     "canonical_solution": "    return a + b\n", "base_input": [[1, 2], [3, 4]],
     "plus_input": [[10**30, 1], [0.1, 0.2], [-5, 5]], "atol": 0, "test": ADD_TEST},
]  # fmt: skip

MULTIPLE_PY = [
    {"name": "HumanEval_0_add", "language": "py", "prompt": ADD_PROMPT,
     "tests": "def check(candidate):\n    assert candidate(1, 2) == 3\n\n"
              "def test_check():\n    check(add)\n\ntest_check()\n",
     "stop_tokens": ["\ndef", "\n#", "\nif", "\nclass"]},
]  # fmt: skip


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
