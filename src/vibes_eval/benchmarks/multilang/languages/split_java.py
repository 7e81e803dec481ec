"""Java on the split (docs/integrity.md): a trusted test program and a candidate server.

The **test program** is the prompt's class with its own helpers (HumanEval-X's
``encodeCyclic`` of Java/38, ...) and, in place of the entry method's body, a stub: the
same signature (the prompt's text, never the sample's), whose body hands itself and its
arguments to ``vibes.Stub.call``. The stub finds its own ``Method`` by reflection
(``getEnclosingMethod`` of an anonymous class in it), so the arguments are encoded by its
declared parameter types and the answer decoded by its declared generic return type.
Then the task's tests (HumanEval-X's ``Main``; MultiPL-E's ``main`` sits in the prompt's
class ``Problem``) and ``VibesTestMain``, which runs the tests' ``main`` and, only after
it returned and if the channel never broke, prints the done marker last on stderr. It is
compiled once per task with none of the sample's code: a sample's classes (a ``List`` of
its own, a ``vibes.Stub`` look-alike) cannot change what the tests' names mean.

The **candidate** is the prompt, the completion (MultiPL-E: and the tests' text without
their ``main``) and ``VibesServer``, which serves calls with ``vibes.Server``. Both sides
use the same runtime (``wire/java/``: the JSON codec, the frames, and javatuples'
``Pair``/``Triplet`` that MultiPL-E's prompts import and Debian does not package),
compiled once per host from our sources only (``runtime_classes``) and given to every
session read-only: a sample cannot change the copy the test program loads.

A task whose entry signature the wire cannot carry (a type outside ``CARRIED``, a generic
method) has no test program (``test_program`` returns None) and runs in-process.
"""

from __future__ import annotations

import functools
import hashlib
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vibes_eval.benchmarks.multilang.languages.base import (
    DONE_MARKER,
    Build,
    TestProgram,
    version_of,
)
from vibes_eval.benchmarks.multilang.languages.policy import strip_c_like
from vibes_eval.benchmarks.multilang.tasks import CodeTask
from vibes_eval.core.errors import UserError
from vibes_eval.core.filelock import locked
from vibes_eval.paths import cache_dir

RUNTIME = Path(__file__).parent / "wire" / "java"
JVM_FLAGS = ["-ea", "-Xss64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"]
# javac's own JVM with the run's flags too: C1 only costs ~40% less CPU on these small units
JAVAC = ["javac", "-J-Xss8m", "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Xshare:auto",
         "-encoding", "UTF-8", "-nowarn", "-d", "out"]  # fmt: skip

PRIMITIVES = {"int", "long", "short", "byte", "double", "float", "boolean", "char"}
SCALARS = {"Integer", "Long", "Short", "Byte", "Double", "Float", "Boolean", "Character",
           "String", "Object"}  # fmt: skip
# generic types the codec carries -> how many type arguments
CONTAINERS = {"List": 1, "ArrayList": 1, "LinkedList": 1, "Collection": 1, "Set": 1,
              "HashSet": 1, "LinkedHashSet": 1, "TreeSet": 1, "Map": 2, "HashMap": 2,
              "LinkedHashMap": 2, "TreeMap": 2, "Optional": 1, "Pair": 2, "Triplet": 3}  # fmt: skip
_PACKAGES = ("java.lang.", "java.util.", "org.javatuples.")
_MODIFIERS = r"(?:(?:public|protected|private|static|final|synchronized|strictfp)\s+)*"
_HEADER = re.compile(
    rf"^\s*(?P<mods>{_MODIFIERS})(?P<generic><[^>]*>\s*)?(?P<ret>[\w.$<>\[\],?\s]+?)\s+"
    r"(?P<name>[A-Za-z_$][\w$]*)\s*\((?P<params>[^()]*)\)\s*(?:throws\s+[\w.$,\s]+)?$",
    re.S,
)
_ANNOTATION = re.compile(r"@[\w.$]+(\s*\([^()]*\))?")


@dataclass(frozen=True)
class Header:
    """The entry method's header, read from the trusted prompt."""

    cls: str  # the class it is declared in
    name: str
    ret: str  # its return type as written
    params: list[tuple[str, str]]  # (type as written, name)
    static: bool


# -- the entry method's header ---------------------------------------------------------


def header(prompt: str) -> Header | None:
    """The method the prompt leaves open (its text ends with the header's ``{``); None
    when there is none, or it is one this module does not read."""
    code = strip_c_like(prompt)
    brace = code.rstrip().rfind("{")
    if brace < 0 or code[brace + 1 :].strip():
        return None
    start = max(code.rfind(c, 0, brace) for c in ";{}") + 1
    m = _HEADER.match(_ANNOTATION.sub(" ", code[start:brace]))
    classes = _enclosing(code[:start])
    if m is None or m.group("generic") or len(classes) != 1:
        return None  # not a method, a generic one, or one in a nested class
    params = []
    for part in _split(m.group("params")):
        words = re.sub(r"\bfinal\s+", "", part).strip()
        found = re.match(r"^(.*?)\s*([A-Za-z_$][\w$]*)$", words, re.S)
        if found is None:
            return None
        params.append((found.group(1).strip(), found.group(2)))
    return Header(classes[-1], m.group("name"), " ".join(m.group("ret").split()), params,
                  "static" in m.group("mods").split())  # fmt: skip


def _enclosing(code: str) -> list[str]:
    """The classes still open at the end of ``code`` (comments and literals blanked)."""
    stack: list[str | None] = []
    pending = None
    for m in re.finditer(r"\b(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)|[{}]", code):
        if m.group(1):
            pending = m.group(1)
        elif m.group(0) == "{":
            stack.append(pending)
            pending = None
        elif stack:
            stack.pop()
    return [name for name in stack if name is not None]


def _split(params: str) -> list[str]:
    """Parameters at the top level's commas (not those inside ``<...>``)."""
    parts, depth, cur = [], 0, ""
    for c in params:
        depth += (c == "<") - (c == ">")
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    return [p for p in [*parts, cur] if p.strip()]


# -- types ------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(\.\.\.|[A-Za-z_$][\w$.]*|[<>,?\[\]])")


@dataclass(frozen=True)
class JType:
    name: str  # simple name; "?" a wildcard
    args: tuple[JType, ...]
    dims: int  # array dimensions (varargs count as one)


def parse_type(text: str) -> JType:
    """``text`` (a Java type as written) as a tree. Raises ValueError when it is not one."""
    tokens = []
    pos = 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"not a type: {text!r}")
        tokens.append(m.group(1))
        pos = m.end()
    t, n = _type(tokens, 0)
    if n != len(tokens):
        raise ValueError(f"not a type: {text!r}")
    return t


def _type(tokens: list[str], n: int) -> tuple[JType, int]:
    if n >= len(tokens):
        raise ValueError("a type ends early")
    name = tokens[n]
    n += 1
    if name == "?":
        if n < len(tokens) and tokens[n] == "extends":  # carried as its bound
            bound, n = _type(tokens, n + 1)
            return JType("?", (bound,), 0), n
        if n < len(tokens) and tokens[n] == "super":
            raise ValueError("a lower-bounded wildcard")
        return JType("?", (), 0), n
    if not re.fullmatch(r"[A-Za-z_$][\w$.]*", name):
        raise ValueError(f"not a type name: {name!r}")
    for prefix in _PACKAGES:
        name = name.removeprefix(prefix)
    args: list[JType] = []
    if n < len(tokens) and tokens[n] == "<":
        while True:
            arg, n = _type(tokens, n + 1)
            args.append(arg)
            if n < len(tokens) and tokens[n] == ",":
                continue
            if n < len(tokens) and tokens[n] == ">":
                n += 1
                break
            raise ValueError("unclosed type arguments")
    dims = 0
    while n < len(tokens) and tokens[n] in ("[", "..."):
        if tokens[n] == "[":
            if n + 1 >= len(tokens) or tokens[n + 1] != "]":
                raise ValueError("bad array type")
            n += 1
        dims += 1
        n += 1
    return JType(name, tuple(args), dims), n


def carried(t: JType, top: bool = True) -> bool:
    """Whether the codec (``Codec.java``) carries values of type ``t`` both ways."""
    if t.name == "?":
        return not top and all(carried(a, False) for a in t.args)
    if t.name in PRIMITIVES:
        return not t.args and (t.dims > 0 or top)
    if t.name in SCALARS:
        return not t.args
    if t.name in CONTAINERS:
        return len(t.args) in (0, CONTAINERS[t.name]) and all(carried(a, False) for a in t.args)
    return False


def erasure(t: JType) -> str:
    """The class literal's text of ``t`` (for ``getDeclaredMethod``)."""
    return t.name + "[]" * t.dims


# -- the programs -----------------------------------------------------------------------


def entry(problem: CodeTask) -> tuple[Header, list[JType]] | None:
    """The entry method and its parameter types, when the wire carries them all."""
    h = header(problem.prompt)
    if h is None:
        return None
    try:
        types = [parse_type(t) for t, _ in h.params]
        ret = None if h.ret == "void" else parse_type(h.ret)
    except ValueError:
        return None
    if not all(carried(t) for t in types) or (ret is not None and not carried(ret)):
        return None
    return h, types


def stub(h: Header) -> str:
    """The entry method's body in the test program: call the candidate."""
    args = ", ".join(name for _, name in h.params)
    call = (
        "vibes.Stub.call(new Object() {}.getClass().getEnclosingMethod(), "
        f"new Object[] {{{args}}})"
    )
    if h.ret == "void":
        return f"        {call};\n"
    return f"        return ({h.ret}) {call};\n"


def _sources() -> dict[str, str]:
    """The wire's Java sources, by their paths under the source root."""
    return {str(p.relative_to(RUNTIME)): p.read_text() for p in sorted(RUNTIME.rglob("*.java"))}


@functools.cache
def wire_version() -> str:
    """The wire's sources and this module, hashed: part of what a cached verdict must
    match (a change to either may change a verdict)."""
    text = Path(__file__).read_text() + "".join(k + v for k, v in _sources().items())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@functools.cache
def runtime_classes() -> Path:
    """The wire's runtime compiled (our sources only, here, outside any sandbox), once per
    host and version: a folder of classes every Java session gets read-only.

    Raises:
        UserError: javac cannot compile it.
    """
    sources = _sources()
    text = version_of(("javac", "-version")) + "".join(k + v for k, v in sources.items())
    out = cache_dir() / "java-wire" / hashlib.sha256(text.encode()).hexdigest()[:16]
    with locked(out.with_name(out.name + ".lock")):
        if (out / "ready").exists():
            return out
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        for name, text in sources.items():
            (tmp / "src" / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / "src" / name).write_text(text)
        proc = subprocess.run(
            [*JAVAC[:-2], "-d", str(tmp / "classes"), *sorted(sources)], cwd=tmp / "src",
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if proc.returncode != 0:
            raise UserError(f"cannot build the Java wire runtime: {proc.stderr.strip()[:300]}")
        (tmp / "ready").write_text("")
        shutil.rmtree(out, ignore_errors=True)
        tmp.replace(out)
    return out


def _program(files: dict[str, str], main: str) -> tuple[list[str], list[str]]:
    """(build argv, run argv) of a program whose `main` is in class ``main``."""
    lib = str(runtime_classes() / "classes")
    javac = [*JAVAC, "-cp", lib, *sorted(files)]
    build = " && ".join([shlex.join(javac), "tar -C out -cf classes.tar ."])
    run = "tar -xf classes.tar && exec " + shlex.join(["java", *JVM_FLAGS, "-cp", f".:{lib}", main])
    return ["/bin/sh", "-c", build], ["/bin/sh", "-c", run]


TEST_MAIN = """\
public final class VibesTestMain {
    public static void main(String[] args) throws Throwable {
        vibes.Stub.init();
        %s.main(args);
        vibes.Stub.finish(%s);
    }
}
"""


def test_program(problem: CodeTask, tests_main: str) -> TestProgram | None:
    """The task's trusted test program (module docstring); None: in-process."""
    found = entry(problem)
    if found is None:
        return None
    h, _ = found
    body = problem.prompt + stub(h)
    if problem.format == "multipl-e":
        source = body + problem.test  # the tests close the method, then `main`, then the class
    else:
        source = body + "    }\n}\n\n" + problem.test
    quoted = '"' + DONE_MARKER.replace("\\", "\\\\").replace('"', '\\"') + '"'
    files = {"Main.java": source, "VibesTestMain.java": TEST_MAIN % (tests_main, quoted)}
    build, run = _program(files, "VibesTestMain")
    return TestProgram(files=files, argv=build, run_files=["classes.tar"], run_argv=run)


SERVER = """

final class VibesServer {
    public static void main(String[] args) throws Throwable {
        vibes.Server.serve(%s);
    }
}
"""


def without_main(tests: str) -> str:
    """MultiPL-E's tests without their ``main`` (what closes the entry method and the
    class stays): the candidate's part of them."""
    code = strip_c_like(tests)
    m = re.search(r"\bpublic\s+static\s+void\s+main\s*\(", code)
    if m is None:
        return tests
    depth, i = 0, code.find("{", m.end())
    for j in range(i, len(code)):
        depth += (code[j] == "{") - (code[j] == "}")
        if depth == 0:
            return tests[: m.start()] + tests[j + 1 :]
    return tests[: m.start()]


def candidate(problem: CodeTask, code: str) -> Build:
    """The sample's program: prompt, completion and the server (module docstring)."""
    found = entry(problem)
    assert found is not None, "candidate() of a task without a test program"
    h, types = found
    literals = [f"{h.cls}.class", '"' + h.name + '"', *(erasure(t) + ".class" for t in types)]
    tail = without_main(problem.test) if problem.format == "multipl-e" else ""
    source = problem.prompt + code + "\n" + tail + SERVER % ", ".join(literals)
    files = {"Main.java": source}
    build, run = _program(files, "VibesServer")
    return Build(files=files, argv=build, run_files=["classes.tar"], run_argv=run)


_WHERE = re.compile(r"^\s+at (?!vibes\.|java\.|jdk\.|VibesTestMain\.)\S+\((Main\.java:\d+)\)")


def failure_detail(stderr: str) -> str | None:
    """The last uncaught exception's line in ``stderr`` and where the tests' code was
    when it came (``Main.java:12``); None when there is none."""
    lines = stderr.splitlines()
    starts = [n for n, x in enumerate(lines) if x.startswith("Exception in thread ")]
    if not starts:
        return None
    n = starts[-1]
    what = lines[n].strip()
    for line in lines[n + 1 : n + 40]:
        m = _WHERE.match(line)
        if m:
            return f"{what} ({m.group(1)})"[:300]
    return what[:300]
