"""Just enough of a Rust lexer to blank out comments and literals, keeping every offset,
so patterns and brace matching see only code."""

from __future__ import annotations

import re

# Where something other than plain code may start; everything between matches is copied.
_INTERESTING = re.compile(r"//|/\*|b?r#*\"|b?\"|'")
_BLOCK_EDGE = re.compile(r"/\*|\*/")
_STRING_BODY = re.compile(r'(?:\\.|[^"\\])*', re.S)
_CHAR = re.compile(r"'(?:\\(?:x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f_]{1,8}\}|.)|[^'\\\n])'")


def _blank(text: str) -> str:
    return "\n".join(" " * len(part) for part in text.split("\n"))


def _ident(c: str) -> bool:
    return c.isalnum() or c == "_"


def strip_comments_and_strings(src: str) -> str:
    """Same length as ``src``; comments, string, byte-string and char literals become
    spaces (their quotes stay, so a literal still reads as one token)."""
    out: list[str] = []
    i, n = 0, len(src)
    while i < n:
        m = _INTERESTING.search(src, i)
        if m is None:
            out.append(src[i:])
            break
        start, tok = m.start(), m.group()
        out.append(src[i:start])
        if tok[0] in "br" and start > 0 and _ident(src[start - 1]):
            out.append(src[start])  # `xr"` is the identifier xr, then a string
            i = start + 1
        elif tok == "//":
            end = src.find("\n", start)
            end = n if end < 0 else end
            out.append(_blank(src[start:end]))
            i = end
        elif tok == "/*":
            depth, j = 0, start
            for edge in _BLOCK_EDGE.finditer(src, start):  # Rust block comments nest
                depth += 1 if edge.group() == "/*" else -1
                j = edge.end()
                if depth == 0:
                    break
            else:
                j = n
            out.append(_blank(src[start:j]))
            i = j
        elif tok.endswith('"') and "r" in tok:
            close = '"' + "#" * tok.count("#")
            end = src.find(close, m.end())
            end = n if end < 0 else end
            out.append(tok + _blank(src[m.end() : end]) + src[end : end + len(close)])
            i = min(n, end + len(close))
        elif tok.endswith('"'):
            body = _STRING_BODY.match(src, m.end())
            end = body.end() if body else m.end()
            out.append(tok + _blank(src[m.end() : end]) + src[end : end + 1])
            i = end + 1
        else:
            lit = _CHAR.match(src, start)
            if lit is None:  # a lifetime or label: code
                out.append("'")
                i = start + 1
            else:
                out.append("'" + _blank(src[start + 1 : lit.end() - 1]) + "'")
                i = lit.end()
    return "".join(out)


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
