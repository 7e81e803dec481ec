"""Go on the trusted-test split (docs/integrity.md): the sources of a task's test program
and of a sample's candidate.

- The **test program** (trusted, built once per task from the task alone): the test's own
  package clause and imports, the prompt's helper code (e.g. EncodeCyclic of Go/38), a
  stub with the entry point's signature taken from the dataset's declaration, the task's
  tests, the wire (``wire/go/vibes_wire_test.go``), the stub's side of it
  (``vibes_stub_test.go``) and a ``TestMain`` that prints the done marker on stderr only
  after every test passed.
- The **candidate** (the sample's): the prompt and the completion as package ``main``, the
  wire, and a ``TestMain`` serving calls of the entry point (``0vibes_server_test.go``:
  its name sorts first, so it takes the channel before any of the completion's code runs).
  Every name of ours starts with ``vibes`` and every import is aliased (``vibesJSON``),
  so a completion's own declarations never collide with them.

Both are ``go test -c`` binaries (a completion's own ``func main`` stays legal, as with
``go test``). Imports: each file gets those of its pool (what the in-process program of
the same task could use) that its code uses, each with a blank use (``var _ = math.Abs``)
so a name mentioned only in a comment never fails a build with "imported and not used".

A signature the wire cannot carry (a type other than the basic ones, slices, arrays,
maps and ``interface{}``, several results, a variadic parameter) gives no test program:
the task runs in-process (``trust: in-process``; docs/multilang.md lists such tasks).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from vibes_eval.benchmarks.multilang.languages.base import DONE_MARKER
from vibes_eval.benchmarks.multilang.languages.policy import strip_c_like
from vibes_eval.benchmarks.multilang.tasks import CodeTask

WIRE = Path(__file__).parent / "wire" / "go"
TESTIFY = "github.com/stretchr/testify/assert"
# What a blank use of each package names (a package used only in a comment or string,
# or through a local variable of the same name, must still compile).
GUARDS = {
    "math": "Abs", "strings": "Contains", "fmt": "Sprint", "strconv": "Itoa",
    "time": "Now", "bytes": "Equal", "regexp": "MustCompile", "sort": "Ints",
    "math/rand": "Intn", "crypto/md5": "Sum", "unicode": "IsUpper", "math/big": "NewInt",
    "testing": "Short", TESTIFY: "New",
}  # fmt: skip

_BASIC = {"bool", "string", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16",
          "uint32", "uint64", "uintptr", "byte", "rune", "float32", "float64"}  # fmt: skip
_KEYWORDS = {"interface", "map", "chan", "func", "struct"}
_FUNC = re.compile(r"^func[ \t]+([A-Za-z_]\w*)[ \t]*\(", re.M)
_IMPORT_SPEC = re.compile(r'(?:([A-Za-z_]\w*|\.)\s+)?"([^"]+)"')


@dataclass(frozen=True)
class Signature:
    """The entry point as the wire carries it: its name, parameter and result types."""

    name: str
    params: tuple[str, ...]
    result: str


@dataclass(frozen=True)
class Import:
    path: str
    alias: str | None = None

    @property
    def name(self) -> str:
        return self.alias or self.path.rsplit("/", 1)[-1]

    def spec(self) -> str:
        return f'{self.alias} "{self.path}"' if self.alias else f'"{self.path}"'


# -- types and the signature ------------------------------------------------------------


def carried(t: str) -> str | None:
    """``t`` as the wire carries it (normalized Go), or None: a type it cannot carry."""
    t = t.strip()
    if t in _BASIC:
        return t
    if re.fullmatch(r"interface\s*\{\s*\}|any", t):
        return "interface{}"
    if t.startswith("[]"):
        inner = carried(t[2:])
        return None if inner is None else "[]" + inner
    if m := re.match(r"\[\s*(\d+)\s*\]", t):
        inner = carried(t[m.end() :])
        return None if inner is None else f"[{int(m.group(1))}]{inner}"
    if t.startswith("map["):
        end = _closing(t, 3, "[", "]")
        if end is None:
            return None
        key, value = carried(t[4:end]), carried(t[end + 1 :])
        if key is None or value is None or key.startswith(("[]", "map[")):
            return None  # a key must be comparable
        return f"map[{key}]{value}"
    return None


def _closing(text: str, start: int, open_: str, close: str) -> int | None:
    """The offset of the bracket closing the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i
    return None


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    parts, depth, last = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "([{"
        depth -= c in ")]}"
        if c == "," and depth == 0:
            parts.append(text[last:i])
            last = i + 1
    parts.append(text[last:])
    return [p.strip() for p in parts if p.strip()]


def _param_types(params: str) -> list[str] | None:
    """The types of a parameter list, names dropped (``x, y int`` -> int, int)."""
    parts = _split_top(params)
    named = [re.fullmatch(r"([A-Za-z_]\w*)\s+(.+)", p, re.S) for p in parts]
    if any(m and m.group(1) not in _KEYWORDS for m in named):
        types: list[str] = []
        pending = 0
        for part, m in zip(parts, named, strict=True):
            if m is None or m.group(1) in _KEYWORDS:
                if not re.fullmatch(r"[A-Za-z_]\w*", part):
                    return None
                pending += 1  # a name sharing the next type
                continue
            types += [m.group(2)] * (pending + 1)
            pending = 0
        return None if pending else types
    return parts


def signature(text: str) -> tuple[Signature | None, int]:
    """The signature of the last top-level function ``text`` opens (a prompt or a
    declaration ending in ``func F(...) R {``) and where its line starts; (None, start)
    when the wire cannot carry it, (None, -1) when there is none."""
    bare = strip_c_like(text, backtick=True)
    found = list(_FUNC.finditer(bare))
    if not found:
        return None, -1
    head = found[-1]
    close = _closing(bare, head.end() - 1, "(", ")")
    body = bare.rstrip()
    if close is None or not body.endswith("{"):
        return None, head.start()
    types = _param_types(bare[head.end() : close])
    result = bare[close + 1 : len(body) - 1].strip()
    if result.startswith("(") and result.endswith(")") and not _split_top(result[1:-1])[1:]:
        result = result[1:-1].strip()
    if types is None or any(t.lstrip().startswith("...") for t in types):
        return None, head.start()
    params = [carried(t) for t in types]
    ret = carried(result)
    if ret is None or any(p is None for p in params):
        return None, head.start()
    return Signature(head.group(1), tuple(p for p in params if p), ret), head.start()


# -- imports --------------------------------------------------------------------------


def split_header(text: str) -> tuple[list[Import], str]:
    """``text`` without its package clause and import declarations: (its imports, the
    rest, with blank lines where they were)."""
    bare = strip_c_like(text, backtick=False)
    imports: list[Import] = []
    cuts: list[tuple[int, int]] = []
    if m := re.search(r"^\s*package\s+\w+[ \t]*$", bare, re.M):
        cuts.append((m.start(), m.end()))
    for m in re.finditer(r"^import\s*(\([^)]*\)|[^\n]*)", bare, re.M):
        cuts.append((m.start(), m.end()))
        for spec in _IMPORT_SPEC.finditer(text[m.start() : m.end()]):
            imports.append(Import(spec.group(2), spec.group(1)))
    rest = text
    for a, b in sorted(cuts, reverse=True):
        rest = rest[:a] + "\n" * text[a:b].count("\n") + rest[b:]
    return imports, rest


def used(pool: list[Import], code: str) -> list[Import]:
    """The imports of ``pool`` that ``code`` uses (``name.`` outside comments and
    literals), each once."""
    bare = strip_c_like(code, backtick=True)
    out: dict[str, Import] = {}
    for imp in pool:
        if imp.name not in out and re.search(rf"(?<![\w.]){re.escape(imp.name)}\s*\.", bare):
            out[imp.name] = imp
    return list(out.values())


def header(imports: list[Import]) -> str:
    """``package main``, the imports and a blank use of each known package."""
    lines = ["package main", ""]
    if imports:
        lines += ["import (", *(f"\t{imp.spec()}" for imp in imports), ")", ""]
    lines += [f"var _ = {imp.name}.{GUARDS[imp.path]}" for imp in imports if imp.path in GUARDS]
    return "\n".join(lines) + "\n\n"


# -- the two programs -----------------------------------------------------------------


@dataclass(frozen=True)
class Parts:
    """A task's pieces: the prompt's imports and code (up to the entry point's line, and
    from it), the test's imports and code, and the entry point's signature."""

    prompt_imports: list[Import]
    helpers: str
    entry: str
    test_imports: list[Import]
    test: str
    sig: Signature | None


def parts(problem: CodeTask) -> Parts:
    prompt_imports, prompt = split_header(problem.prompt)
    sig, start = signature(prompt)
    if problem.format != "multipl-e" and problem.declaration.strip():
        sig, _ = signature(problem.declaration)  # the dataset's own declaration
    if start < 0:
        start = len(prompt)
    setup_imports, _ = split_header(problem.test_setup)
    return Parts(prompt_imports, prompt[:start], prompt[start:], setup_imports,
                 problem.test, sig)  # fmt: skip


def _wire(name: str) -> str:
    return (WIRE / name).read_text()


def stub(sig: Signature) -> str:
    """The entry point of the test program: its call goes to the candidate."""
    params = ", ".join(f"vibesA{i} {t}" for i, t in enumerate(sig.params))
    refs = "".join(f", &vibesA{i}" for i in range(len(sig.params)))
    return (
        f"func {sig.name}({params}) {sig.result} {{\n\tvar vibesR {sig.result}\n"
        f"\tvibesCall(&vibesR{refs})\n\treturn vibesR\n}}\n"
    )


TEST_MAIN = """package main

import (
\tvibesFmt "fmt"
\tvibesOS "os"
\tvibesTesting "testing"
)

// The done marker, last on stderr, only once every test passed (docs/integrity.md).
func TestMain(m *vibesTesting.M) {
\tvibesSetup()
\tcode := m.Run()
\tif code == 0 {
\t\tvibesFmt.Fprintln(vibesOS.Stderr, "\\n" + %s)
\t}
\tvibesOS.Exit(code)
}
"""
SERVER_MAIN = """package main

import vibesTesting "testing"

func TestMain(m *vibesTesting.M) {
\tvibesServe(%s)
}
"""


def test_sources(problem: CodeTask, helpers_pool: tuple[str, ...]) -> dict[str, str] | None:
    """The test program's files, or None: the wire cannot carry the entry point."""
    p = parts(problem)
    if p.sig is None:
        return None
    code = p.helpers + "\n" + stub(p.sig) + "\n" + p.test
    pool = [*p.test_imports, *p.prompt_imports, *(Import(h) for h in helpers_pool)]
    return {
        "main_test.go": header(used(pool, code)) + code,
        "vibes_wire_test.go": _wire("vibes_wire_test.go"),
        "vibes_stub_test.go": _wire("vibes_stub_test.go"),
        "vibes_main_test.go": TEST_MAIN % json.dumps(DONE_MARKER),
    }


def candidate_sources(
    problem: CodeTask, code: str, helpers_pool: tuple[str, ...]
) -> dict[str, str]:
    """The candidate's files: the prompt and the completion, and the server."""
    p = parts(problem)
    assert p.sig is not None
    body = p.helpers + p.entry + code
    pool = [*p.prompt_imports, *p.test_imports]
    if problem.format != "multipl-e":  # HumanEval-X's evaluator adds these by usage
        pool += [Import(h) for h in helpers_pool]
    return {
        "main_test.go": header(used(pool, body)) + body + "\n",
        "vibes_wire_test.go": _wire("vibes_wire_test.go"),
        "0vibes_server_test.go": _wire("0vibes_server_test.go"),
        "vibes_main_test.go": SERVER_MAIN % p.sig.name,
    }
