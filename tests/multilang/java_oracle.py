"""Oracle completions for MultiPL-E's Java rows, which ship no canonical solutions: a
body that answers each input its tests' asserts pass with the value they expect (the
asserts' own Java expressions), so every argument and every expected value of the tests
crosses the wire. A task whose asserts are not all `assert(f(...).equals(x))` or
`assert(f(...) == (x))` gets None."""

from __future__ import annotations

import re

from vibes_eval.benchmarks.multilang.languages import split_java
from vibes_eval.benchmarks.multilang.languages.policy import strip_c_like


def _close(code: str, open_at: int) -> int:
    """The offset of the bracket closing the one at ``open_at`` (in blanked code)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for j in range(open_at, len(code)):
        if code[j] in pairs:
            stack.append(pairs[code[j]])
        elif stack and code[j] == stack[-1]:
            stack.pop()
            if not stack:
                return j
    raise ValueError("unbalanced")


def cases(tests: str, name: str) -> list[tuple[str, str]] | None:
    """(argument list text, expected value text) of each assert, or None."""
    code = strip_c_like(tests)
    out = []
    for m in re.finditer(r"\bassert\s*\(", code):
        inner_end = _close(code, m.end() - 1)
        call = re.compile(rf"\s*{re.escape(name)}\s*\(").match(code, m.end())
        if call is None:
            return None
        args_end = _close(code, call.end() - 1)
        args = tests[call.end() : args_end]
        rest = code[args_end + 1 : inner_end]
        eq = re.match(r"\s*\.equals\(", rest)
        if eq:
            exp_end = _close(code, args_end + 1 + eq.end() - 1)
            expected = tests[args_end + 1 + eq.end() : exp_end]
        elif re.match(r"\s*==\s*\(", rest):
            expected = tests[args_end + 1 + rest.index("==") + 2 : inner_end]
        else:
            return None
        out.append((args, expected))
    return out


def oracle(prompt: str, tests: str) -> str | None:
    """The oracle completion of a MultiPL-E Java row (module docstring), or None."""
    h = split_java.header(prompt)
    found = cases(tests, h.name) if h else None
    if not found or h is None:
        return None
    mine = ", ".join(name for _, name in h.params)
    lines = [f"        java.util.List<Object> vibesIn = java.util.Arrays.<Object>asList({mine});\n"]
    for args, expected in found:
        lines.append(
            f"        if (vibesIn.equals(java.util.Arrays.<Object>asList({args}))) "
            f"return {expected};\n"
        )
    lines.append('        throw new IllegalStateException("an input the tests do not have");\n')
    return "".join(lines)
