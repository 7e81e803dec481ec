"""``--extract auto``: take the code a chat model meant out of its answer.

1. A markdown fence: the first ```rust / ```rs / ``` block wins.
2. A repeated signature: when the code defines the task's entry point again, keep what
   follows its opening brace (the body the prompt left open), move other items after it,
   and drop a `fn main` and `use` lines the problem already has.
"""

from __future__ import annotations

import re

from vibes_eval.benchmarks.humaneval.rust.rustsrc import matching_brace, strip_comments_and_strings

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_RUST_TAGS = {"rust", "rs", ""}


def from_fence(text: str) -> str:
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    for lang, body in blocks:
        if lang in _RUST_TAGS:
            return body
    return blocks[0][1] if blocks else text


def _remove_fn(code: str, name: str) -> str:
    """Remove every ``fn name(...) { ... }`` item."""
    while True:
        stripped = strip_comments_and_strings(code)
        m = re.search(rf"(\bpub\s+)?\bfn\s+{name}\s*\(", stripped)
        if not m:
            return code
        open_at = stripped.find("{", m.end())
        close = matching_brace(stripped, open_at) if open_at >= 0 else None
        if close is None:
            return code
        code = code[: m.start()] + code[close + 1 :]


def extract(completion: str, header: str, entry_point: str) -> str:
    """The completion as a continuation of ``header`` (which ends inside the signature's
    opening brace)."""
    code = from_fence(completion) if "```" in completion else completion
    if not entry_point:
        return code
    stripped = strip_comments_and_strings(code)
    m = re.search(rf"(\bpub\s+)?\bfn\s+{re.escape(entry_point)}\b[^{{;]*\{{", stripped)
    if not m:
        return code
    before, body = code[: m.start()], code[m.end() :]
    existing = {line.strip() for line in header.splitlines() if line.strip().startswith("use ")}
    before = "\n".join(
        line
        for line in before.splitlines()
        if not (line.strip().startswith("use ") and line.strip() in existing)
    )
    body = _remove_fn(body, "main")
    before = _remove_fn(before, "main")
    return body + ("\n" + before if before.strip() else "")
