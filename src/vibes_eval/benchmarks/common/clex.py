"""One lexer for the C family: C, C++ (and CUDA), Java, JavaScript/TypeScript and Go.

Policy rules are regexes; they must run on what the compiler will read as *code*, so a
sample cannot hide a call in something the rule takes for a comment or a literal, nor make
the rule skip code by opening a "literal" the compiler never sees. :func:`strip` gives that
text: comments and the contents of string, character, regex and template-text literals
become spaces (quotes kept, every newline kept, so a hit's line number maps back), code
inside template substitutions stays code. :func:`header_names` lists ``#include`` targets.

How each language is read, in the compiler's own order:

* C, C++, CUDA: line splices (backslash, optional blanks, newline) are joined first, the
  removed newlines coming back at the end of the joined line; then a strict hand lexer:
  pp-numbers with digit separators (``1'000``), raw strings (``R"d(...)d"``, prefixes
  too), header names after ``#include``/``#include_next``/``#import`` (also ``%:`` and
  comments before the word), which stay visible. Preprocessor lines stay code; ``#if 0``
  blocks are blanked (dead code), found where literals cannot fake a directive.
* Java: unicode escapes (``\\u0053ystem``, ``\\u000a``) are decoded before anything
  else, as javac does (a decoded line break comes out as a space: line count kept); then
  text blocks, strings, chars and comments by the strict hand lexer.
* Go: raw strings in backticks, runes, strings and comments by the strict hand lexer.
  Import paths and toolchain directives (``//go:linkname``, ``//export``, ``//line``)
  stay visible, as C's header names do: the toolchain acts on them.
* JavaScript/TypeScript: tree-sitter, since regex-versus-division and nested template
  substitutions need the parse. A fragment (a body without its header or its closing
  braces) is parsed inside a wrapper (a prefix on its first line, closing braces after);
  no clean parse at all is a :class:`LexError`: tree-sitter's error recovery is never
  read.

For C, C++, Java and Go, tree-sitter cross-checks the hand lexer whenever it parses the
source (or a wrapped fragment) without errors: a place where the two disagree about what
is code is a :class:`LexError` (macro bodies, opaque to tree-sitter, are left out).

Unicode escapes in identifiers outside literals (C++ ``\\u0073ystem``, ``\\N{...}``, JS
``\\u0065val``) are decoded in the output, and C/C++ digraphs spelled out (``%:include``
is ``#include``, ``<:<:`` is ``[[``), so rules see what the compiler sees.

Refused, because the reading depends on something this module cannot see: an unterminated
literal or comment; a bare carriage return (a line break to C, Java and JS); U+2028/U+2029
in JS; a trigraph ``??/``; in C (not C++) digit separators and raw strings (-std decides);
in JS, HTML-like comments (scripts and modules differ), JSX, a regex right after
``yield``/``await`` (the enclosing function decides), a ``/`` right after an arrow
function's ``{}`` body (JS inserts a semicolon there, tree-sitter divides) and, in
TypeScript, a ``/`` right after ``>``; a splice inside a C++ raw string (the compiler undoes
it); ``#include MACRO`` in :func:`header_names`. Callers fail closed: a :class:`LexError`
refuses the sample.

Completions are often fragments: lexing the prompt and the completion together gives the
surest reading; a completion alone is read as a fragment as above.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import tree_sitter as ts
import tree_sitter_c
import tree_sitter_cpp
import tree_sitter_go
import tree_sitter_java
import tree_sitter_javascript
import tree_sitter_typescript

LANGUAGES = frozenset({"c", "cpp", "cuda", "java", "js", "ts", "go"})
_C_LIKE = frozenset({"c", "cpp", "cuda"})


class LexError(Exception):
    """The source cannot be read with certainty (callers refuse the sample)."""


# --- the text the compiler lexes, and the way back to the input's lines ---------------------


@dataclass
class _Logical:
    """The text after the compiler's first phases (splices joined, Java escapes decoded).

    ``splices``: logical offsets where a backslash-newline was removed (its newline is given
    back at the end of the joined line); ``synthetic``: offsets of line breaks that an escape
    made (they come out as spaces)."""

    text: str
    splices: list[int] = field(default_factory=list)
    synthetic: set[int] = field(default_factory=set)


# Go's toolchain directives are comments that act (//go:linkname, //export, //line): code.
_GO_DIRECTIVE = re.compile(r"//go:|//line |/\*line |//export |//extern ")
_SPLICE = re.compile(r"\\[ \t\f\v]*(?:\r\n|\n)")
_JAVA_ESCAPE = re.compile(r"\\+u+([0-9A-Fa-f]{0,4})")


def _join_splices(code: str) -> _Logical:
    if "??/" in code:
        # A trigraph backslash splices lines or escapes quotes only under some -std flags.
        raise LexError("trigraph ??/ (its meaning depends on the compiler's flags)")
    parts, splices, pos, size = [], [], 0, 0
    for m in _SPLICE.finditer(code):
        parts.append(code[pos : m.start()])
        size += m.start() - pos
        splices.append(size)
        pos = m.end()
    parts.append(code[pos:])
    return _Logical("".join(parts), splices)


def _decode_java(code: str) -> _Logical:
    """JLS 3.3: a backslash preceded by an even number of backslashes, then u+ and four hex
    digits, is the character; a decoded backslash does not start another escape."""
    out: list[str] = []
    synthetic: set[int] = set()
    pos = size = 0
    for m in _JAVA_ESCAPE.finditer(code):
        run = m.group(0).index("u")  # backslashes in this run
        if run % 2 == 0:
            continue  # the last backslash is escaped: not a unicode escape
        if len(m.group(1)) != 4:
            raise LexError("malformed unicode escape (javac refuses it, even in a comment)")
        head = code[pos : m.start()] + "\\" * (run - 1)
        char = chr(int(m.group(1), 16))
        size += len(head)
        if char in "\r\n":
            synthetic.add(size)
        out += [head, char]
        size += 1
        pos = m.end()
    out.append(code[pos:])
    return _Logical("".join(out), [], synthetic)


def _logical(code: str, language: str) -> _Logical:
    if language in _C_LIKE:
        logical = _join_splices(code)
    elif language == "java":
        logical = _decode_java(code)
    else:
        logical = _Logical(code)
    text = logical.text
    if language != "go" and re.search(r"\r(?!\n)", text):
        raise LexError("a bare carriage return (a line break to the compiler)")
    if language in ("js", "ts") and re.search("[\u2028\u2029]", text):
        raise LexError("a unicode line separator (a line break to JavaScript)")
    return logical


# --- the reading: comment spans and literal-content spans -----------------------------------


@dataclass
class _Reading:
    comments: list[tuple[int, int]] = field(default_factory=list)  # blanked whole
    contents: list[tuple[int, int]] = field(default_factory=list)  # literal insides
    headers: list[str] = field(default_factory=list)
    raw: list[tuple[int, int]] = field(default_factory=list)  # C++ raw strings, quotes in

    def mask(self, n: int) -> bytearray:
        """Per character: 0 code, 1 literal content, 2 comment."""
        m = bytearray(n)
        for a, b in self.contents:
            m[a:b] = b"\x01" * (b - a)
        for a, b in self.comments:
            m[a:b] = b"\x02" * (b - a)
        return m


class _Scanner:
    """The strict hand lexer shared by C/C++, Java and Go: one pass, every literal and
    comment must end where the language says it does."""

    def __init__(self, text: str, language: str) -> None:
        self.text, self.lang, self.i = text, language, 0
        self.read = _Reading()
        self.line_start = True  # only blanks and comments since the last newline
        self.go_import: str | None = None  # "start" after Go's `import`, "group" inside (...)

    def fail(self, what: str) -> LexError:
        line = self.text.count("\n", 0, self.i) + 1
        return LexError(f"{what} (logical line {line})")

    def run(self) -> _Reading:
        t, n = self.text, len(self.text)
        while self.i < n:
            c = t[self.i]
            if t.startswith("//", self.i):
                end = t.find("\n", self.i)
                end = n if end < 0 else end
                if not (self.lang == "go" and _GO_DIRECTIVE.match(t, self.i)):
                    self.read.comments.append((self.i, end))
                self.i = end
            elif t.startswith("/*", self.i):
                end = t.find("*/", self.i + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment")
                if not (self.lang == "go" and _GO_DIRECTIVE.match(t, self.i)):
                    self.read.comments.append((self.i, end + 2))
                self.i = end + 2
            elif c == "\n":
                self.line_start = True
                self.i += 1
            elif c in " \t\f\v\r":
                self.i += 1
            else:
                at_line_start, self.line_start = self.line_start, False
                self.token(c, at_line_start)
        return self.read

    def token(self, c: str, at_line_start: bool) -> None:
        if self.go_import and c in '()"`':
            self.import_path(c)
        elif c in "#%" and at_line_start and self.lang in _C_LIKE and self.hash():
            self.directive()
        elif c == '"' and self.lang == "java" and self.text.startswith('"""', self.i):
            self.text_block()
        elif c in "\"'":
            self.quoted(self.i, c)
        elif c == "`" and self.lang == "go":
            self.delimited(self.i + 1, "`", "unterminated raw string")
        elif c.isdigit() or (c == "." and self.text[self.i + 1 : self.i + 2].isdigit()):
            self.number()
        elif c.isalpha() or c in "_$" or ord(c) > 127:
            self.identifier()
        else:
            self.i += 1

    def import_path(self, c: str) -> None:
        """Go import paths stay visible, like C's header names (rules look at them)."""
        if c in "()":
            self.go_import = "group" if c == "(" and self.go_import == "start" else None
            self.i += 1
            return
        if c == '"':
            self.quoted(self.i, c)
        else:
            self.delimited(self.i + 1, "`", "unterminated raw string")
        self.read.contents.pop()
        if self.go_import == "start":
            self.go_import = None

    def hash(self) -> bool:
        return self.text[self.i] == "#" or self.text.startswith("%:", self.i)

    def quoted(self, start: int, quote: str) -> None:
        """A string or char literal from its opening quote at ``start``; no line breaks."""
        t, j = self.text, start + 1
        while j < len(t) and t[j] not in (quote, "\n"):
            if t[j] == "\\" and t[j + 1 : j + 2] == "\n":
                break  # a backslash-newline inside a literal is an error (C's are joined)
            j += 2 if t[j] == "\\" else 1
        if j >= len(t) or t[j] != quote:
            self.i = start
            raise self.fail("unterminated string or character literal")
        self.read.contents.append((start + 1, j))
        self.i = j + 1

    def delimited(self, body: int, close: str, what: str) -> None:
        end = self.text.find(close, body)
        if end < 0:
            raise self.fail(what)
        self.read.contents.append((body, end))
        self.i = end + len(close)

    def text_block(self) -> None:
        """Java 15 text block: \"\"\", blanks, a line break, then up to an unescaped \"\"\"."""
        t, j = self.text, self.i + 3
        m = re.compile(r"[ \t\f]*\n").match(t, j)
        if m is None:
            raise self.fail("text block opening not followed by a line break")
        while j < len(t) and not t.startswith('"""', j):
            j += 2 if t[j] == "\\" else 1
        if j >= len(t):
            raise self.fail("unterminated text block")
        self.read.contents.append((self.i + 3, j))
        self.i = j + 3

    def number(self) -> None:
        # C's pp-number: digits, letters, dots, e+/p- signs and, in C/C++, ' before a digit or
        # letter (C++14/C23 digit separators, so 1'000 is one token, not a char literal).
        t, j = self.text, self.i + 1
        while j < len(t):
            ch = t[j]
            if (ch in "+-" and t[j - 1] in "eEpP") or ch.isalnum() or ch in "._":
                j += 1
            elif ch == "'" and self.lang in _C_LIKE and re.match(r"\w", t[j + 1 : j + 2]):
                if self.lang == "c":
                    # C23 reads 1'000 as one number, C17 as 1 and a char literal: -std decides.
                    raise self.fail("a digit separator in C (its reading depends on -std)")
                j += 2
            else:
                break
        self.i = j

    def identifier(self) -> None:
        t, j = self.text, self.i
        while j < len(t) and (t[j].isalnum() or t[j] in "_$" or ord(t[j]) > 127):
            j += 1
        word, self.i = t[self.i : j], j
        if self.lang in _C_LIKE and word in ("__has_include", "__has_include_next", "__has_embed"):
            # Its argument is a header name too: `__has_include(<a/*b>)` opens no comment.
            h = re.compile(r'[ \t\f\v]*\([ \t\f\v]*(<[^>\n]*>|"[^"\n]*")').match(t, j)
            if h is not None:
                self.read.headers.append(h.group(1)[1:-1])
                self.i = h.end()
            return
        if self.lang == "go" and word == "import":
            self.go_import = "start"
        if self.lang not in _C_LIKE or j >= len(t):
            return
        if t[j] == '"' and word in ("R", "LR", "uR", "UR", "u8R"):
            if self.lang == "c":
                raise self.fail("a raw string in C (a GNU extension only in gnu modes)")
            self.raw_string(j)
        elif t[j] in "\"'" and word in ("L", "u", "U", "u8"):
            self.quoted(j, t[j])

    def raw_string(self, quote: int) -> None:
        m = re.compile(r'"([^ ()\\\t\v\f\n"]{0,16})\(').match(self.text, quote)
        if m is None:
            self.i = quote
            raise self.fail("malformed raw string delimiter")
        self.i = quote
        self.delimited(quote + 1, ")" + m.group(1) + '"', "unterminated raw string")
        a, b = self.read.contents[-1]
        self.read.contents[-1] = (a, b + len(m.group(1)) + 1)  # the closing )delim is inside
        self.read.raw.append((quote, self.i))

    def directive(self) -> None:
        """``#`` (or ``%:``) at a line's start: a header name after include is one token
        (``//`` or quotes inside it are not comments or strings); the rest is code."""
        self.i = self.blanks(self.i + (2 if self.text.startswith("%:", self.i) else 1))
        m = re.compile(r"(?:include_next|include|import|embed)\b").match(self.text, self.i)
        if m is None:
            return
        self.i = self.blanks(m.end())
        h = re.compile(r'<[^>\n]*>|"[^"\n]*"').match(self.text, self.i)
        if h is None:
            self.read.headers.append("")  # computed include: header_names refuses it
            return
        self.read.headers.append(h.group(0)[1:-1])
        self.i = h.end()

    def blanks(self, j: int) -> int:
        """Past spaces and block comments on this line (a comment is a space to cpp)."""
        t = self.text
        while j < len(t):
            if t[j] in " \t\f\v":
                j += 1
            elif t.startswith("/*", j):
                end = t.find("*/", j + 2)
                if end < 0:
                    self.i = j
                    raise self.fail("unterminated /* comment")
                self.read.comments.append((j, end + 2))
                j = end + 2
            else:
                break
        return j


def _hand_reading(text: str, language: str) -> _Reading:
    return _Scanner(text, language).run()


# --- tree-sitter ----------------------------------------------------------------------------


_GRAMMARS: dict[str, Callable[[], object]] = {
    "c": tree_sitter_c.language,
    "cpp": tree_sitter_cpp.language,
    "cuda": tree_sitter_cpp.language,
    "java": tree_sitter_java.language,
    "go": tree_sitter_go.language,
    "js": tree_sitter_javascript.language,
    "ts": tree_sitter_typescript.language_typescript,  # not tsx: `<T>x` is a type assertion
}


@cache
def _parser(language: str) -> ts.Parser:
    return ts.Parser(ts.Language(_GRAMMARS[language]()))


# Fragments (a body without its header, or without its closing braces) are parsed inside
# a wrapper: a prefix on the first line (no newline, so lines stay put) and closing braces
# after the code. The first combination that parses without errors is the reading.
_PREFIXES: dict[str, tuple[str, ...]] = {
    "c": ("", "void __f(){", "struct __S{"),
    "java": ("", "class __C{", "class __C{void __f(){"),
    "go": ("", "func __f(){"),
    "js": ("", "function __f(){", "class __C{", "class __C{__f(){"),
}
_PREFIXES["ts"] = _PREFIXES["js"]
_SUFFIXES = ("", "\n}", "\n}}", "\n}}}")

_COMMENTS = {"comment", "line_comment", "block_comment"}
_LITERALS = {"string_literal", "char_literal", "raw_string_literal", "character_literal",
             "string", "interpreted_string_literal", "rune_literal",
             "regex", "template_string"}  # fmt: skip
_REFUSED = ("html_comment", "jsx_")


def _tree(text: str, language: str) -> tuple[ts.Node, int] | None:
    """The first clean parse of ``text`` as is or wrapped, and the prefix's byte length."""
    parser = _parser(language)
    prefixes = _PREFIXES["c" if language in _C_LIKE else language]
    for prefix, suffix in ((p, s) for p in prefixes for s in _SUFFIXES):
        tree = parser.parse((prefix + text + suffix).encode())
        if not tree.root_node.has_error:
            return tree.root_node, len(prefix.encode())
    return None


def _ts_reading(text: str, language: str) -> _Reading | None:
    found = _tree(text, language)
    if found is None:
        return None
    root, shift = found
    data = text.encode()
    char_at = _byte_to_char(text, data)
    read = _Reading()

    def span(a: int, b: int) -> tuple[int, int]:
        return char_at(max(a - shift, 0)), char_at(min(b - shift, len(data)))

    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind.startswith(_REFUSED):
            raise LexError(f"{kind} (read differently by scripts, modules or compilers)")
        if node.end_byte <= shift or node.start_byte - shift >= len(data):
            stack.extend(node.children)
            continue
        if (
            kind in _COMMENTS
            and language == "go"
            and _GO_DIRECTIVE.match((node.text or b"").decode())
        ):
            continue
        if language == "ts" and kind in ("regex", "/", "/=") and _prev_token(node) == b">":
            # `a < b > /x/`: type arguments (then a division) or comparisons (then a regex);
            # tsc's choice depends on its version and what follows.
            raise LexError("a slash right after `>` in TypeScript")
        if kind in ("/", "/=") and not node.is_named and _after_arrow_body(node):
            # `() => {}` then a newline and `/`: an arrow function cannot be divided, so JS
            # inserts a semicolon and reads a regex where tree-sitter reads a division.
            raise LexError("a division right after an arrow function's body")
        if kind in _COMMENTS:
            read.comments.append(span(node.start_byte, node.end_byte))
        elif kind in _LITERALS and node.is_named and not _is_header(node):
            if kind == "regex" and _prev_token(node) in (b"yield", b"await"):
                # `yield`/`await` are plain names outside generators/async functions, where
                # the `/` after them divides: the enclosing function decides, unseen here.
                raise LexError("a regex after yield or await")
            read.contents.extend(_literal_insides(node, span))
            if kind == "template_string":
                stack.extend(c for c in node.children if c.type == "template_substitution")
        else:
            stack.extend(node.children)
    return read


def _after_arrow_body(node: ts.Node) -> bool:
    brace = _prev_leaf(node)
    block = brace.parent if brace is not None and brace.type == "}" else None
    return block is not None and block.parent is not None and block.parent.type == "arrow_function"


def _prev_token(node: ts.Node) -> bytes:
    leaf = _prev_leaf(node)
    return (leaf.text or b"") if leaf is not None else b""


def _prev_leaf(node: ts.Node) -> ts.Node | None:
    """The token before ``node``, comments skipped (None at the start)."""
    n: ts.Node | None = node
    while n is not None:
        p = n.prev_sibling
        while p is not None and p.type in _COMMENTS:
            p = p.prev_sibling
        if p is not None:
            while kids := [c for c in p.children if c.type not in _COMMENTS]:
                p = kids[-1]
            return p
        n = n.parent
    return None


def _is_header(node: ts.Node) -> bool:
    parent = node.parent
    return parent is not None and parent.type in ("preproc_include", "import_spec")


def _literal_insides(
    node: ts.Node, span: Callable[[int, int], tuple[int, int]]
) -> list[tuple[int, int]]:
    """The literal's contents: between its first and last quote (prefixes and delimiters of
    raw strings are inside the quotes), a regex's pattern, a template's text parts."""
    raw = node.text or b""
    if node.type == "template_string":
        holes = [(c.start_byte, c.end_byte) for c in node.children
                 if c.type == "template_substitution"]  # fmt: skip
        edges = [node.start_byte + 1, *[x for h in holes for x in h], node.end_byte - 1]
        return [span(edges[k], edges[k + 1]) for k in range(0, len(edges), 2)]
    if node.type == "regex":
        return [span(node.start_byte + 1, node.start_byte + raw.rindex(b"/"))]
    if node.type == "string_literal" and raw.startswith(b'"""'):
        return [span(node.start_byte + 3, node.end_byte - 3)]
    quotes = [k for k, b in enumerate(raw) if b in b"\"'`"]
    if len(quotes) < 2:
        raise LexError(f"a {node.type} without its quotes")
    return [span(node.start_byte + quotes[0] + 1, node.start_byte + quotes[-1])]


def _byte_to_char(text: str, data: bytes) -> Callable[[int], int]:
    if len(data) == len(text):
        return lambda b: b
    starts = [0]
    for ch in text:
        starts.append(starts[-1] + len(ch.encode()))
    index = {b: k for k, b in enumerate(starts)}
    return lambda b: index[b]


def _check_agree(text: str, hand: _Reading, tree: _Reading) -> None:
    """Both readings must see code in the same places; in C, tree-sitter leaves macro
    bodies unread, so only what it blanks is compared there."""
    a, b = hand.mask(len(text)), tree.mask(len(text))
    for k in range(len(text)):
        if a[k] != b[k] and not text[k].isspace() and (a[k] == 0) != (b[k] == 0):
            line = text.count("\n", 0, k) + 1
            raise LexError(f"readings disagree about what is code (logical line {line})")


# --- output ---------------------------------------------------------------------------------


def _read(code: str, language: str) -> tuple[_Logical, _Reading]:
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}")
    logical = _logical(code, language)
    if language in ("js", "ts"):
        reading = _ts_reading(logical.text, language)
        if reading is None:
            raise LexError("tree-sitter cannot parse the source, even as a fragment")
        _refuse_html_comments(logical.text, reading)
        return logical, reading
    reading = _hand_reading(logical.text, language)
    for a, b in reading.raw:
        if any(a < p < b for p in logical.splices):
            # Splices are undone inside raw strings ([lex.pptoken]): the joined reading
            # could end the string where the compiler does not.
            raise LexError("a line splice inside a raw string")
    tree = _ts_reading(logical.text, language)
    if tree is not None:
        _check_agree_outside_macros(logical.text, reading, tree, language)
    return logical, reading


def _refuse_html_comments(text: str, reading: _Reading) -> None:
    """``<!--`` (and ``-->`` first on a line) open a line comment in a CommonJS script and
    are operators in a module: the rest of the line cannot be read for both at once."""
    mask = reading.mask(len(text))
    code = "".join(" " if m else ch for m, ch in zip(mask, text, strict=True))
    if "<!--" in code or re.search(r"^[ \t]*-->", code, re.M):
        raise LexError("an HTML-like comment (a comment to scripts, operators to modules)")


def _check_agree_outside_macros(text: str, hand: _Reading, tree: _Reading, lang: str) -> None:
    if lang in _C_LIKE:
        # Macro bodies are opaque to tree-sitter (one preproc_arg token): drop those lines.
        hand = _Reading(
            [s for s in hand.comments if not _in_directive(text, s[0])],
            [s for s in hand.contents if not _in_directive(text, s[0])],
        )
        tree = _Reading(
            [s for s in tree.comments if not _in_directive(text, s[0])],
            [s for s in tree.contents if not _in_directive(text, s[0])],
        )
    _check_agree(text, hand, tree)


def _in_directive(text: str, pos: int) -> bool:
    line = text[text.rfind("\n", 0, pos) + 1 : pos]
    return line.lstrip().startswith("#") and not line.lstrip().startswith(("#include", "# include"))


# \u{73} (JS, C++23), \u0073, \U00000073, and C++23's named \N{LATIN SMALL LETTER S}.
_UCN = re.compile(
    r"\\u\{([0-9A-Fa-f]{1,6})\}|\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})|\\N\{([^}\n]*)\}"
)


def _ucn(m: re.Match[str]) -> str:
    if m.group(4) is not None:
        try:
            return unicodedata.lookup(m.group(4))
        except KeyError:
            raise LexError(f"unknown character name {m.group(4)!r}") from None
    value = int(next(g for g in m.groups() if g), 16)
    return chr(value) if value < 0x110000 else "?"


# C/C++ digraphs, spelled as rules expect them (`%:include`, `<:<:gnu::x:>:>`); `<::` not
# followed by `:` or `>` is `<` then `::` in C++ ([lex.pptoken]).
_DIGRAPH = re.compile(r"%:%:|%:|<%|<:(?!:(?![:>]))|:>|%>")
_DIGRAPHS = {"%:%:": "##", "%:": "#", "<%": "{", "<:": "[", ":>": "]", "%>": "}"}


def _pieces(text: str, mask: bytearray, keep_strings: bool, language: str) -> list[str]:
    """Per logical character, what the output shows for it (maybe nothing, after an
    escape or a digraph was spelled out)."""
    out = list(text)
    for k, ch in enumerate(text):
        if (mask[k] == 2 or (mask[k] == 1 and not keep_strings)) and ch not in "\r\n":
            out[k] = " "
    for m in _UCN.finditer(text):
        # Outside literals a backslash can only be an escape in an identifier: decode it.
        if mask[m.start()] == 0:
            out[m.start()] = _ucn(m)
            for k in range(m.start() + 1, m.end()):
                out[k] = ""
    if language in _C_LIKE:
        for m in _DIGRAPH.finditer(text):
            if not any(mask[m.start() : m.end()]):
                out[m.start()] = _DIGRAPHS[m.group(0)]
                for k in range(m.start() + 1, m.end()):
                    out[k] = ""
    return out


def _if0_dead(stripped: str) -> list[tuple[int, int]]:
    """``#if 0`` blocks (up to their ``#else``/``#elif``/``#endif``) in blanked text."""
    dead = []
    # `%:` is `#` (a digraph); cpp takes form feeds and vertical tabs for blanks here too.
    cond = re.compile(
        r"^[ \t\f\v]*(?:#|%:)[ \t\f\v]*(if|ifdef|ifndef|endif|else|elif|elifdef|elifndef)\b",
        re.M,
    )
    start = r"^[ \t\f\v]*(?:#|%:)[ \t\f\v]*if[ \t\f\v]+0[ \t\f\v\r]*$"
    for m in re.finditer(start, stripped, re.M):
        if any(a <= m.start() < b for a, b in dead):
            continue
        depth, end = 1, len(stripped)
        for c in cond.finditer(stripped, m.end()):
            word = c.group(1)
            depth += 1 if word.startswith("if") else -1 if word == "endif" else 0
            if (depth == 1 and word.startswith("el") and word != "endif") or depth == 0:
                end = c.start() if word != "endif" else c.end()
                break
        dead.append((m.start(), end))
    return dead


def _render(logical: _Logical, pieces: list[str]) -> str:
    out: list[str] = []
    splices, pending, s = logical.splices, 0, 0
    for k, piece in enumerate(pieces):
        while s < len(splices) and splices[s] <= k:
            pending, s = pending + 1, s + 1
        if k in logical.synthetic:
            out.append(" ")
        elif piece == "\n":
            out.append("\n" * (pending + 1))
            pending = 0
        else:
            out.append(piece)
    pending += len(splices) - s
    return "".join(out) + "\n" * pending


def strip(code: str, language: str, *, keep_strings: bool = False) -> str:
    """``code`` with comments and the contents of literals blanked (see the module doc);
    ``keep_strings``: literal contents kept. Raises :class:`LexError` where unsure."""
    logical, reading = _read(code, language)
    mask = reading.mask(len(logical.text))
    pieces = _pieces(logical.text, mask, keep_strings, language)
    if language in _C_LIKE:
        # Found on the text with literals blanked, so a string cannot fake a directive.
        bare = "".join(
            " " if m and ch != "\n" else ch for m, ch in zip(mask, logical.text, strict=True)
        )
        for a, b in _if0_dead(bare):
            for k in range(a, b):
                pieces[k] = "\n" if logical.text[k] == "\n" else " "
    return _render(logical, pieces)


def header_names(code: str) -> list[str]:
    """Every ``#include``/``#include_next``/``#import`` target (``<...>`` or ``"..."``,
    without its delimiters), read after splices and with comments and literals understood.
    A computed include (``#include MACRO``) raises :class:`LexError`: what it names is
    unknown."""
    logical = _logical(code, "cpp")
    reading = _hand_reading(logical.text, "cpp")
    if "" in reading.headers:
        raise LexError("#include of a macro: its target is unknown")
    return reading.headers
