"""JavaScript on the split (docs/integrity.md): the task's trusted test program and the
sample's candidate, as node programs talking over ``wire/js/vibes_wire.js``.

- **test.js** (trusted, built once per task): ``vibes_test.js`` first (the channel, the
  tests' prints moved to stderr, a ``console.assert`` that throws), the prompt's own
  helpers (e.g. ``encodeCyclic`` of JavaScript/38), in place of the entry point a stub of
  the same name and parameters whose body is ``__vibes.call(arguments)``, the task's
  tests, then ``__vibes.done()``, which prints the done marker.
- **main.js** (the sample's): ``prepare()``, the prompt, the completion, then
  ``serve(entry point)``, which answers calls until the tests end; beside it a copy of
  the wire, the server, and a ``js-md5`` module (HumanEval-X's own environment has that
  package; JavaScript/162's canonical solution requires it).

The entry point is read from the trusted prompt: its last line opens the function the
completion finishes (``const f = (a, b) => {`` in HumanEval-X, ``function f(a, b){`` in
MultiPL-E). A prompt that does not end so, or opens an async function or a generator
(the wire is synchronous), has no split: its task runs in-process.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from vibes_eval.benchmarks.multilang.languages.base import DONE_MARKER, Build, TestProgram
from vibes_eval.benchmarks.multilang.tasks import CodeTask

WIRE_DIR = Path(__file__).parent / "wire" / "js"
WIRE_VERSION = "1"  # bump with any change to a verdict the runtime gives: cached ones go
NODE_ENV = {"OPENSSL_CONF": "/dev/null"}  # its config is outside the sandbox: none needed
RUNTIME = ("vibes_wire.js",)  # both sides, each its own copy
TEST_RUNTIME = (*RUNTIME, "vibes_test.js")
CANDIDATE_RUNTIME = (*RUNTIME, "vibes_server.js")
MD5 = "node_modules/js-md5/index.js"
FAILED = "vibes-test: failed: "  # the test program's one line saying why (vibes_test.js)

# the last line of a prompt: the open function the completion finishes
_ARROW = re.compile(
    r"^[ \t]*(?P<decl>const|let|var)\s+(?P<name>[A-Za-z_$][\w$]*)\s*=\s*(?P<async>async\s*)?"
    r"\((?P<params>[^()]*)\)\s*=>\s*\{\s*\Z",
    re.M,
)
_FUNCTION = re.compile(
    r"^[ \t]*(?P<async>async\s+)?function\s*(?P<star>\*)?\s*(?P<name>[A-Za-z_$][\w$]*)\s*"
    r"\((?P<params>[^()]*)\)\s*\{\s*\Z",
    re.M,
)


@dataclass(frozen=True)
class Entry:
    """The entry point as the prompt opens it."""

    name: str
    params: str
    start: int  # where its declaration begins in the prompt
    const: bool  # `const f = (...) => {` (else a function declaration)


def entry_of(prompt: str) -> Entry | None:
    """The function the prompt leaves open, or None (not one the wire can carry)."""
    for pattern in (_ARROW, _FUNCTION):
        m = pattern.search(prompt)
        if m is None:
            continue
        if m.group("async") or (pattern is _FUNCTION and m.group("star")):
            return None
        return Entry(m.group("name"), m.group("params").strip(), m.start(), pattern is _ARROW)
    return None


@functools.cache
def runtime(name: str) -> str:
    return (WIRE_DIR / name).read_text()


def stub(entry: Entry) -> str:
    """The entry point in the test program: same name and parameters (so the same
    ``length``), its arguments sent to the candidate, its answer returned."""
    body = f"function {entry.name}({entry.params}) {{ return __vibes.call(arguments); }}"
    return f"const {entry.name} = {body};\n" if entry.const else body + "\n"


def test_source(problem: CodeTask, entry: Entry) -> str:
    return (
        f"const __vibes = require('./vibes_test.js')({DONE_MARKER!r});\n"
        + problem.prompt[: entry.start]
        + stub(entry)
        + "\n"
        + problem.test
        + "\n;__vibes.done();\n"
    )


def test_program(problem: CodeTask) -> TestProgram | None:
    """The trusted test program of ``problem``, or None (it runs in-process)."""
    entry = entry_of(problem.prompt)
    if entry is None:
        return None
    files = {"test.js": test_source(problem, entry), **{n: runtime(n) for n in TEST_RUNTIME}}
    return TestProgram(
        files=files,
        argv=["node", "--check", "test.js"],
        run_files=list(files),
        # warnings printed after the tests would come after the done marker
        run_argv=["node", "--no-warnings", "test.js"],
        run_env=NODE_ENV,
    )


def candidate_source(problem: CodeTask, code: str) -> str:
    # `prepare` shares the prompt's first line, so line numbers are the prompt's
    name = entry_of(problem.prompt)
    entry = name.name if name is not None else ""
    return (
        "require('./vibes_server.js').prepare();"
        + problem.prompt
        + code
        + f"\n;require('./vibes_server.js').serve(typeof {entry} === 'function' ? {entry} "
        f": undefined, {entry!r});\n"
    )


def candidate(problem: CodeTask, code: str) -> Build:
    """The sample's program: prompt, completion and the server, with its own files."""
    files = {
        "main.js": candidate_source(problem, code),
        **{n: runtime(n) for n in CANDIDATE_RUNTIME},
        MD5: runtime("js-md5/index.js"),
    }
    return Build(
        files=files,
        argv=["node", "--check", "main.js"],
        run_files=list(files),
        run_argv=["node", "--stack-size=8192", "main.js"],
        run_env=NODE_ENV,
    )
