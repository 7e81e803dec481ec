"""C++ on the trusted-test split (docs/integrity.md): the test program and the candidate.

The **test program** is the prompt's own code up to the function it leaves open (its
includes and helpers, e.g. CPP/38's `encode_cyclic`), then a stub with the entry point's
declared signature whose body is ``vibes::call<F>(args...)``, then the task's test with
its `main` renamed; our `main` (``wire/cpp/vibes_test_main.cpp``) runs it and prints the
done marker after it returned 0. Nothing a sample wrote is in it.

The **candidate** is the prompt, the completion (and MultiPL-E's closing `}`), then a
server `main`: ``vibes::serve<F>(&entry)`` decodes each call's arguments by the declared
parameter types, calls the entry point and sends back its result or what it raised.

``F`` is the declared function type, ``typedef <ret> vibes_entry_t(<params>);`` from the
trusted prompt: the templates of ``wire/cpp/vibes_wire.h`` do the rest, so a task needs
nothing but its entry point's header. A task whose types the wire cannot carry (MultiPL-E's
`union`s, pointers, references it could write through) gets no test program and runs
in-process, labelled so (``entry_of`` returns None).
"""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from vibes_eval.benchmarks.multilang.languages import cpp
from vibes_eval.benchmarks.multilang.languages.base import DONE_MARKER
from vibes_eval.benchmarks.multilang.languages.policy import strip_c_like
from vibes_eval.benchmarks.multilang.tasks import CodeTask
from vibes_eval.core.errors import UserError
from vibes_eval.core.filelock import locked
from vibes_eval.paths import cache_dir

WIRE_SOURCES = Path(__file__).parent / "wire" / "cpp"
WIRE_FILES = ("vibes_wire.h", "vibes_wire_io.cpp", "vibes_test_main.cpp")


# -- the entry point's declaration --------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """The function the prompt leaves open, as the prompt declares it."""

    header: str  # `<ret> <name>(<params>)`
    ret: str
    name: str
    params: str  # the text between the parentheses
    names: tuple[str, ...]  # the parameters' names, in order

    @property
    def typedef(self) -> str:
        return f"typedef {self.ret} vibes_entry_t({self.params});\n"


_IDENT = re.compile(r"[A-Za-z_]\w*")
_STORAGE = re.compile(r"^(?:(?:static|inline|constexpr|extern)\s+)+")


def entry_of(problem: CodeTask) -> Entry | None:
    """The open function's declaration, or None: no open function, or a signature the
    wire cannot carry (``carried``)."""
    found = cpp.open_function(problem.prompt)
    if found is None:
        return None
    before, header = found
    entry = parse_header(_STORAGE.sub("", header))
    if entry is None:
        return None
    types = typedefs(strip_c_like(before))
    params = [p for p, _ in params_of(entry.params) or []]
    if not all(carried(t, types, param=True) for t in params):
        return None
    return entry if carried(entry.ret, types, param=False, result=True) else None


def parse_header(header: str) -> Entry | None:
    """`<ret> <name>(<params>)` split up, or None (no parameter list at the end, a
    parameter without a name, defaults, arrays, function pointers, varargs)."""
    if not header.endswith(")"):
        return None
    depth, open_at = 0, -1
    for i in range(len(header) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(header[i], 0)
        if depth == 0:
            open_at = i
            break
    m = re.search(r"([A-Za-z_]\w*)\s*$", header[:open_at]) if open_at > 0 else None
    if m is None or not header[: m.start()].strip():
        return None
    params = header[open_at + 1 : -1].strip()
    parsed = params_of(params)
    if parsed is None:
        return None
    return Entry(
        header=header, ret=header[: m.start()].strip(), name=m.group(1), params=params,
        names=tuple(name for _, name in parsed),
    )  # fmt: skip


def params_of(text: str) -> list[tuple[str, str]] | None:
    """[(type, name)] of a parameter list; None where one is not `<type> <name>`."""
    if text in ("", "void"):
        return []
    out = []
    for part in _top_level_split(text):
        m = re.fullmatch(r"(.*?)\b([A-Za-z_]\w*)", part.strip(), re.S)
        if m is None or re.search(r"[=\[\](.]", part):
            return None
        kind = m.group(1).strip()
        if not kind or kind.endswith("::") or m.group(2) in _WORDS:
            return None
        out.append((kind, m.group(2)))
    return out


def _top_level_split(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"<": 1, "(": 1, "[": 1, ">": -1, ")": -1, "]": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


# -- which types the wire carries -----------------------------------------------------------

_WORDS = {"unsigned", "signed", "short", "long", "int", "char", "bool", "float", "double",
          "const", "void"}  # fmt: skip
_INTEGER_NAMES = {"size_t", "ptrdiff_t"} | {
    f"{u}int{n}_t" for u in ("", "u") for n in (8, 16, 32, 64)
}
_SEQUENCES = {"vector", "list", "deque", "set", "multiset", "unordered_set", "optional"}
_MAPS = {"map", "multimap", "unordered_map"}
_TYPEDEF = re.compile(r"\btypedef\s+([^;{}]+?)\s+([A-Za-z_]\w*)\s*;")
_USING = re.compile(r"\busing\s+([A-Za-z_]\w*)\s*=\s*([^;{}]+);")
_TOKEN = re.compile(r"[A-Za-z_]\w*|::|[<>,*&]|\S")


def typedefs(code: str) -> dict[str, str]:
    """`typedef T name;` and `using name = T;` at the prompt's top: {name: T}."""
    found = {name: kind for kind, name in _TYPEDEF.findall(code)}
    found.update(dict(_USING.findall(code)))
    return found


def carried(text: str, types: dict[str, str], *, param: bool = False, result: bool = False) -> bool:
    """Whether the wire carries a value of the C++ type ``text``: numbers, bool, char,
    std::string, vector/list/deque/set/map (and unordered, multi), pair, tuple, optional,
    std::any and boost::any; a parameter may also be a `const T&`; a result may be void.
    ``types``: the prompt's typedefs."""
    tokens = _TOKEN.findall(text)
    if param and tokens[-1:] == ["&"]:
        if "const" not in tokens or tokens[-2:-1] == ["&"]:
            return False  # a reference the candidate could write through, or `&&`
        tokens = tokens[:-1]
    tokens = [t for t in tokens if t != "const"]
    if result and tokens == ["void"]:
        return True
    parser = _TypeParser(tokens, types)
    return parser.type() and parser.at_end()


class _TypeParser:
    """A recursive reading of a type's tokens against the types the wire knows."""

    def __init__(self, tokens: list[str], types: dict[str, str], depth: int = 0) -> None:
        self.tokens, self.types, self.depth, self.i = tokens, types, depth, 0

    def at_end(self) -> bool:
        return self.i == len(self.tokens)

    def peek(self) -> str:
        return self.tokens[self.i] if self.i < len(self.tokens) else ""

    def type(self) -> bool:
        words = []
        while self.peek() in _WORDS - {"const", "void"}:
            words.append(self.tokens[self.i])
            self.i += 1
        if words:
            return _scalar(words)
        name = self.name()
        if name is None:
            return False
        if self.peek() == "<":
            return self.template(name)
        if name in ("string", "any", "boost::any") or name in _INTEGER_NAMES:
            return True
        return self.typedef(name)

    def name(self) -> str | None:
        parts = []
        while True:
            if not _IDENT.fullmatch(self.peek()):
                return None
            parts.append(self.tokens[self.i])
            self.i += 1
            if self.peek() != "::":
                break
            self.i += 1
        if parts[0] == "std":
            parts = parts[1:]
        return "::".join(parts) or None

    def template(self, name: str) -> bool:
        self.i += 1
        args = 0
        while True:
            if not self.type():
                return False
            args += 1
            if self.peek() == ",":
                self.i += 1
                continue
            if self.peek() != ">":
                return False
            self.i += 1
            break
        if name in _SEQUENCES:
            return args == 1
        if name in _MAPS or name == "pair":
            return args == 2
        return name == "tuple"

    def typedef(self, name: str) -> bool:
        if name not in self.types or self.depth > 8:
            return False
        inner = _TypeParser(_TOKEN.findall(self.types[name]), self.types, self.depth + 1)
        inner.tokens = [t for t in inner.tokens if t != "const"]
        return inner.type() and inner.at_end()


def _scalar(words: list[str]) -> bool:
    text = " ".join(w for w in words if w != "signed") or "int"
    return text in {
        "bool", "char", "short", "short int", "int", "long", "long int", "long long",
        "long long int", "float", "double", "long double", "unsigned", "unsigned int",
        "unsigned char", "unsigned short", "unsigned short int", "unsigned long",
        "unsigned long int", "unsigned long long", "unsigned long long int",
    }  # fmt: skip


# -- the two programs ---------------------------------------------------------------------


def test_source(problem: CodeTask, entry: Entry) -> str:
    """The test program's unit: the prompt's code, the stub, the test (its `main`
    renamed). Raises UserError where the test cannot be split off the candidate."""
    found = cpp.open_function(problem.prompt)
    if found is None:
        raise UserError("the prompt does not end inside a function body", path=problem.source)
    before, _ = found
    rest, test = cpp.split_test(problem)
    args = ", ".join(entry.names)
    stub = f"{entry.header} {{\n    return ::vibes::call<vibes_entry_t>({args});\n}}\n"
    return (
        cpp.extra_includes(problem) + before + "\n" + entry.typedef + stub
        + after_close(rest, problem) + cpp.rename_main(test)
    )  # fmt: skip


def after_close(rest: str, problem: CodeTask) -> str:
    """MultiPL-E's test starts by closing the function: what follows that `}`."""
    if not rest.strip():
        return ""
    code = strip_c_like(rest)
    close = code.find("}")
    if close < 0 or code[:close].strip():
        raise UserError("the test does not start by closing the function", path=problem.source)
    return rest[close + 1 :] + "\n"


def candidate_source(problem: CodeTask, code: str, entry: Entry) -> str:
    """The candidate's unit: prompt, completion (MultiPL-E: the test's closing `}`), then
    the server `main` for the declared entry point."""
    rest, _ = cpp.split_test(problem)
    server = f"int main() {{ return ::vibes::serve<vibes_entry_t>(&{entry.name}); }}\n"
    return (
        cpp.extra_includes(problem) + problem.prompt + code + "\n" + rest + "\n"
        + entry.typedef + server
    )  # fmt: skip


# -- the wire's compiled parts ------------------------------------------------------------------


@dataclass(frozen=True)
class WireParts:
    """The precompiled header (the common headers and the wire) and the objects both
    programs link: built once per compiler, outside any sandbox, from our sources only."""

    cache: Path

    @property
    def pch(self) -> Path:
        return self.cache / "vibes_wire_pch.h"

    @property
    def io_object(self) -> Path:
        return self.cache / "vibes_wire_io.o"

    @property
    def test_main_object(self) -> Path:
        return self.cache / "vibes_test_main.o"


@functools.cache
def wire_parts() -> WireParts:
    """Raises: UserError where g++ cannot build them."""
    tc = cpp.find_toolchain()
    sources = {name: (WIRE_SOURCES / name).read_text() for name in WIRE_FILES}
    assert f"\\n{DONE_MARKER}\\n" in sources["vibes_test_main.cpp"]
    header = "".join(f"#include <{h}>\n" for h in cpp.COMMON_HEADERS) + '#include "vibes_wire.h"\n'
    key = hashlib.sha256(
        "\n".join([tc.version, *cpp.FLAGS, header, *sources.values()]).encode()
    ).hexdigest()
    parts = WireParts(cache_dir() / "cpp-wire" / key[:16])
    parts.cache.parent.mkdir(parents=True, exist_ok=True)
    # one build at a time, across threads and processes (two runs at once share it)
    with _BUILDING, locked(parts.cache.with_name(parts.cache.name + ".lock")):
        if not (parts.io_object.exists() and parts.test_main_object.exists()
                and Path(f"{parts.pch}.gch").exists()):  # fmt: skip
            _build(tc.gxx, parts.cache, header, sources)
    return parts


_BUILDING = threading.Lock()


def _build(gxx: str, cache: Path, header: str, sources: dict[str, str]) -> None:
    tmp = cache.with_name(cache.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, text in sources.items():
        (tmp / name).write_text(text)
    (tmp / "vibes_wire_pch.h").write_text(header)
    for argv in (
        [gxx, *cpp.FLAGS, "-x", "c++-header", "vibes_wire_pch.h", "-o", "vibes_wire_pch.h.gch"],
        [gxx, *cpp.FLAGS, "-c", "vibes_wire_io.cpp", "-o", "vibes_wire_io.o"],
        [gxx, *cpp.FLAGS, "-c", "vibes_test_main.cpp", "-o", "vibes_test_main.o"],
    ):
        proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True)
        if proc.returncode != 0:
            raise UserError(f"cannot build the C++ wire: {proc.stderr.strip()[:300]}")
    shutil.rmtree(cache, ignore_errors=True)
    tmp.replace(cache)


def compile_argv(gxx: str, parts: WireParts, source: str, objects: list[Path], output: str,
                 libs: list[str]) -> list[str]:  # fmt: skip
    return [gxx, *cpp.FLAGS, "-include", str(parts.pch), source, *map(str, objects), "-o",
            output, *libs]  # fmt: skip
