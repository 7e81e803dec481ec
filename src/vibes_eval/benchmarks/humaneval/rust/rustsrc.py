"""Rust source read by a real lexer and parser (tree-sitter-rust), so that static rules
match code tokens and never code hidden after a literal form a hand-written stripper did
not know (C strings, raw strings with hashes, nested comments...).

tree-sitter recovers from errors, so its reading of a broken file may not be rustc's.
Every literal and comment it reports is therefore checked against the lexical rule of its
form, and a source with a parse error, a missing token or a literal that fails that check
is not *clean*: callers fail closed on it (evaluate alone, match rules on the raw text
too).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter_rust
from tree_sitter import Language, Node, Parser

LITERALS = frozenset({"string_literal", "raw_string_literal", "char_literal"})
COMMENTS = frozenset({"line_comment", "block_comment"})
_ATOMS = LITERALS | COMMENTS  # one token each: their insides are not code

# The lexical rule of each form (rustc_lexer): where it ends is what matters.
_STRING = re.compile(r'[bc]?"(?:[^"\\]|\\.)*"', re.S)
_RAW = re.compile(r'[bc]?r(#*)"(.*)"\1', re.S)
_CHAR = re.compile(r"b?'(?:[^'\\\n\r\t]|\\(?:x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f_]{1,8}\}|[nrt\\0'\"]))'")
_LINE_COMMENT = re.compile(r"//[^\n]*\n?")
_COMMENT_EDGE = re.compile(r"/\*|\*/")


def words(text: str) -> frozenset[str]:
    """A set of names written as one string."""
    return frozenset(text.split())


@functools.cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_rust.language()))


def _well_formed(kind: str, text: str) -> bool:
    """Whether ``text``, read by tree-sitter as one ``kind`` token, is exactly one token of
    that form for rustc too (ends where rustc's lexer would end it)."""
    if kind == "string_literal":
        return _STRING.fullmatch(text) is not None
    if kind == "raw_string_literal":
        m = _RAW.fullmatch(text)
        return m is not None and ('"' + m.group(1)) not in m.group(2)
    if kind == "char_literal":
        return _CHAR.fullmatch(text) is not None
    if kind == "line_comment":
        return _LINE_COMMENT.fullmatch(text) is not None
    if not text.startswith("/*"):  # block comment: nested, ends where depth returns to 0
        return False
    depth = 0
    for edge in _COMMENT_EDGE.finditer(text):
        depth += 1 if edge.group() == "/*" else -1
        if depth == 0:
            return edge.end() == len(text)
    return False


@dataclass(frozen=True, slots=True)
class Token:
    """A leaf of the syntax tree: ``kind`` is tree-sitter's node type (``identifier``,
    ``string_literal``, ``fn``, ``{``...); offsets are in characters of the source."""

    kind: str
    start: int
    end: int
    text: str

    @property
    def code(self) -> bool:
        """Not a comment (literals are code, their insides are not)."""
        return self.kind not in COMMENTS


class Lexed:
    """One source file as tree-sitter reads it: its tokens, its tree, and whether that
    reading can be trusted (``problems`` empty)."""

    def __init__(self, source: str) -> None:
        self.source = source
        data = source.encode("utf-8", "surrogatepass")
        self._chars = None if len(data) == len(source) else _char_offsets(source)
        self.tree = _parser().parse(data)
        self.root: Node = self.tree.root_node
        self.tokens: list[Token] = []
        self.problems: list[str] = []
        self._walk(data)

    @property
    def clean(self) -> bool:
        return not self.problems

    def char(self, byte: int) -> int:
        return byte if self._chars is None else self._chars[byte]

    def _walk(self, data: bytes) -> None:
        for node in _leaves(self.root):
            start, end = self.char(node.start_byte), self.char(node.end_byte)
            text = self.source[start:end]
            if node.is_error or node.is_missing:
                what = "missing" if node.is_missing else "cannot parse"
                self.problems.append(f"{what} {text[:20]!r} at line {node.start_point[0] + 1}")
            if node.is_missing:
                continue
            if node.type in _ATOMS and not _well_formed(node.type, text):
                self.problems.append(f"malformed {node.type} at line {node.start_point[0] + 1}")
            self.tokens.append(Token(node.type, start, end, text))
        if self.root.has_error and not self.problems:
            self.problems.append("cannot parse")

    def code_tokens(self, start: int = 0, end: int | None = None) -> Iterator[Token]:
        """Tokens that are not comments, within [start, end) (characters)."""
        stop = len(self.source) if end is None else end
        for tok in self.tokens:
            if tok.start >= start and tok.end <= stop and tok.code:
                yield tok

    def bare(self, start: int = 0, end: int | None = None) -> str:
        """``source[start:end]`` with comments and the insides of literals blanked (same
        length, same lines; a literal keeps its quotes). Text tree-sitter skipped stays."""
        stop = len(self.source) if end is None else end
        out: list[str] = []
        pos = start
        for tok in self.tokens:
            if tok.end <= start or tok.kind not in _ATOMS:
                continue
            if tok.start >= stop:
                break
            s, e = max(tok.start, start), min(tok.end, stop)
            out.append(self.source[pos:s])
            out.append(_blank_atom(tok, self.source[s:e], s - tok.start))
            pos = e
        out.append(self.source[pos:stop])
        return "".join(out)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _blank_atom(tok: Token, part: str, offset: int) -> str:
    """A literal or comment (or the part of it in range) blanked, its quotes kept."""
    if tok.kind in COMMENTS:
        return _blank(part)
    quote = "'" if tok.kind == "char_literal" else '"'
    first, close = tok.text.index(quote), tok.text.rindex(quote)
    return "".join(
        c if not first < offset + i < close or c == "\n" else " " for i, c in enumerate(part)
    )


def _char_offsets(source: str) -> list[int]:
    """byte offset -> character offset, for sources that are not ASCII."""
    table: list[int] = []
    for i, c in enumerate(source):
        table.extend([i] * len(c.encode("utf-8", "surrogatepass")))
    table.append(len(source))
    return table


def _leaves(root: Node) -> Iterator[Node]:
    """The tree's tokens in order: leaves, with literals and comments as one leaf."""
    cursor = root.walk()
    while True:
        node = cursor.node
        assert node is not None
        if node.child_count and node.type not in _ATOMS and cursor.goto_first_child():
            continue
        leaf = node.child_count == 0 or node.type in _ATOMS
        if leaf and (node.end_byte > node.start_byte or node.is_missing):
            yield node
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


# A completion continues a function body; read alone, it is lexed in that context.
_CONTEXT = "fn __vibes_context() {\n"


def lex_completion(code: str) -> tuple[Lexed, int]:
    """A completion lexed as the body of a function (where HumanEval prompts end), and
    the offset at which it starts in the lexed source."""
    return Lexed(_CONTEXT + code), len(_CONTEXT)


def strip_comments_and_strings(src: str) -> str:
    """``src`` with comments and the insides of literals blanked (same length, same
    lines). For trusted task code; completions go through ``Lexed`` so that callers can
    see whether the reading is clean."""
    return Lexed(src).bare()


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
