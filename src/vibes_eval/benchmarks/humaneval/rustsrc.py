"""Just enough of a Rust lexer to blank out comments and literals, keeping every offset,
so patterns and brace matching see only code."""

from __future__ import annotations

import re

_RAW_START = re.compile(r'b?r(#*)"')


def _blank(text: str) -> str:
    return "".join(c if c == "\n" else " " for c in text)


def strip_comments_and_strings(src: str) -> str:
    """Same length as ``src``; comments, string, byte-string and char literals become
    spaces (their quotes stay, so a literal still reads as one token)."""
    out: list[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            end = src.find("\n", i)
            end = n if end < 0 else end
            out.append(_blank(src[i:end]))
            i = end
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:  # Rust block comments nest
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(_blank(src[i:j]))
            i = j
        elif (m := _RAW_START.match(src, i)) and (i == 0 or not _ident(src[i - 1])):
            close = '"' + m.group(1)
            end = src.find(close, m.end())
            end = n if end < 0 else end + len(close)
            out.append(
                src[i : m.end()]
                + _blank(src[m.end() : max(m.end(), end - len(close))])
                + src[max(m.end(), end - len(close)) : end]
            )
            i = end
        elif c == '"' or (
            c == "b" and src.startswith('b"', i) and (i == 0 or not _ident(src[i - 1]))
        ):
            start = i + (2 if c == "b" else 1)
            j = start
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:start] + _blank(src[start:j]) + ('"' if j < n else ""))
            i = j + 1
        elif c == "'":
            end = _char_literal_end(src, i)
            if end is None:  # a lifetime or label: code
                out.append(c)
                i += 1
            else:
                out.append("'" + _blank(src[i + 1 : end - 1]) + "'")
                i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident(c: str) -> bool:
    return c.isalnum() or c == "_"


def _char_literal_end(src: str, i: int) -> int | None:
    """End offset of a char literal starting at ``i``, or None for a lifetime."""
    n = len(src)
    if i + 1 < n and src[i + 1] == "\\":
        j = i + 2
        while j < n and src[j] != "'" and src[j] != "\n":
            j += 1
        return j + 1 if j < n and src[j] == "'" else None
    if i + 2 < n and src[i + 2] == "'" and src[i + 1] != "'":
        return i + 3
    return None


def matching_brace(code: str, open_at: int) -> int | None:
    """Offset of the ``}`` closing the ``{`` at ``open_at`` in stripped code."""
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return None
