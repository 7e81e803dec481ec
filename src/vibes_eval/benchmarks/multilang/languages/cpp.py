"""C++ programs judged in-process: the sample and the test as two translation units.

Only the tasks whose signature the split's wire cannot carry come here (MultiPL-E's
`union` results); the others are judged by a trusted test program calling the candidate
(``split_cpp.py``). The helpers below (the open function, the test's parts) serve both.

HumanEval-X concatenates prompt, completion and test into one file, so a completion's
macros, overloads (an ``operator==`` that is always true) and declarations would reach the
test. Here the sample's unit is the prompt and completion (what the model saw and wrote);
the test's unit is the test with the prompt's helpers (in an unnamed namespace, so they
never clash with the sample's copies) and a prototype of the entry point. The linker
joins them with a third unit of ours, whose `main` runs the test's `main` (renamed) and,
only after it returned 0, reads the harness's token from stdin and prints it.

MultiPL-E's C++ tests start by closing the function (`}`) before their `int main`: that
part stays with the sample's unit.
"""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vibes_eval.benchmarks.multilang.languages.policy import strip_c_like
from vibes_eval.benchmarks.multilang.tasks import CodeTask
from vibes_eval.core.errors import UserError
from vibes_eval.paths import cache_dir

STD = "c++17"
FLAGS = [f"-std={STD}", "-O0", "-w", "-fno-diagnostics-color"]
# Headers every program gets (the dataset's declarations assume them, as its evaluator
# did), precompiled once: the prompt's own includes then cost nothing.
COMMON_HEADERS = [
    *("stdlib.h", "algorithm", "math.h", "stdio.h", "vector", "string", "climits"),
    *("cstring", "iostream", "map", "set", "sstream", "numeric", "cmath"),
]
MAIN_SOURCE = """\
#include <string.h>
#include <unistd.h>
int vibes_test_main();
/* The test's assert() calls this (see ASSERT_RENAME), not glibc's __assert_fail, which a
   sample's own extern "C" __assert_fail would replace in the whole program. It ends the
   process with a raw system call: abort() and _exit() could be replaced the same way. */
extern "C" [[noreturn]] void vibes_assert_fail(const char *what, const char *file,
                                               unsigned int line, const char *fn) noexcept {
    const char *parts[] = {"Assertion `", what, "' failed.\\n"};
    for (const char *part : parts) {
        if (write(2, part, strlen(part)) < 0) break;
    }
    (void)file; (void)line; (void)fn;
#if defined(__x86_64__)
    asm volatile("syscall" : : "a"(231), "D"(134) : "memory");
#elif defined(__aarch64__)
    register long x8 asm("x8") = 94;
    register long x0 asm("x0") = 134;
    asm volatile("svc 0" : : "r"(x8), "r"(x0) : "memory");
#endif
    _exit(134);
}
int main() {
    int rc = vibes_test_main();
    if (rc != 0) return rc;
    char token[256];
    ssize_t n = read(0, token, sizeof token);
    if (n <= 0) _exit(3);
    const char nl = '\\n';
    if (write(1, &nl, 1) != 1 || write(1, token, (size_t)n) != n) _exit(4);
    _exit(0);
}
"""
ASSERT_RENAME = "#define __assert_fail vibes_assert_fail\n"
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[^\n]*$", re.M)
_MAIN = re.compile(r"\bint\s+main\s*\(\s*(void)?\s*\)")


@dataclass(frozen=True)
class CppToolchain:
    gxx: str
    version: str
    cache: Path  # precompiled header and our main's object, per compiler and flags

    @property
    def pch(self) -> Path:
        return self.cache / "vibes_pch.h"

    @property
    def main_object(self) -> Path:
        return self.cache / "vibes_main.o"


@functools.cache
def find_toolchain() -> CppToolchain:
    """g++, its version, and the precompiled pieces (built on first use).

    Raises:
        UserError: g++ is missing or cannot build the precompiled header.
    """
    gxx = shutil.which("g++")
    if gxx is None:
        raise UserError("g++ not found; install it (Debian: apt-get install g++)")
    version = subprocess.run([gxx, "--version"], capture_output=True, text=True).stdout
    version = version.splitlines()[0] if version else "g++"
    header = "".join(f"#include <{h}>\n" for h in COMMON_HEADERS)
    key = hashlib.sha256(f"{version}\n{FLAGS}\n{header}\n{MAIN_SOURCE}".encode()).hexdigest()
    cache = cache_dir() / "cpp" / key[:16]
    tc = CppToolchain(gxx, version, cache)
    if not (tc.main_object.exists() and Path(f"{tc.pch}.gch").exists()):
        _build(tc, header)
    return tc


def _build(tc: CppToolchain, header: str) -> None:
    """Our own sources only (no sample's, no dataset's): built here, outside a sandbox."""
    tmp = tc.cache.with_name(tc.cache.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / "vibes_pch.h").write_text(header)
    (tmp / "vibes_main.cpp").write_text(MAIN_SOURCE)
    for argv in (
        [tc.gxx, *FLAGS, "-x", "c++-header", "vibes_pch.h", "-o", "vibes_pch.h.gch"],
        [tc.gxx, *FLAGS, "-c", "vibes_main.cpp", "-o", "vibes_main.o"],
    ):
        proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True)
        if proc.returncode != 0:
            raise UserError(f"cannot build C++ support files: {proc.stderr.strip()[:300]}")
    shutil.rmtree(tc.cache, ignore_errors=True)
    tmp.replace(tc.cache)


def open_function(prompt: str) -> tuple[str, str] | None:
    """(the prompt before the function it leaves open, that function's header), or None
    when the prompt does not end inside a function body."""
    code = strip_c_like(prompt)
    depth, boundary, opened = 0, 0, -1
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                opened = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                boundary = i + 1
        elif depth == 0 and (c == ";" or (c == "\n" and _preprocessor_line(code, i))):
            boundary = i + 1
    if depth != 1 or opened < boundary:
        return None
    header = " ".join(code[boundary:opened].split())
    return prompt[:boundary], header


def _preprocessor_line(code: str, newline: int) -> bool:
    start = code.rfind("\n", 0, newline) + 1
    return code[start:newline].lstrip().startswith("#")


def split_test(problem: CodeTask) -> tuple[str, str]:
    """(what of the test belongs to the sample's unit, the test's `main` and the rest)."""
    if problem.format != "multipl-e":
        return "", problem.test
    m = _MAIN.search(strip_c_like(problem.test))
    if m is None:
        return problem.test, ""
    return problem.test[: m.start()], problem.test[m.start() :]


def extra_includes(problem: CodeTask) -> str:
    """The declaration's includes the prompt lacks (HumanEval-X lists what it needs)."""
    have = set(_INCLUDE.findall(problem.prompt))
    extra = [line for line in _INCLUDE.findall(problem.declaration) if line not in have]
    return "".join(line.strip() + "\n" for line in extra)


def sample_source(problem: CodeTask, code: str) -> str:
    before_main, _ = split_test(problem)
    return extra_includes(problem) + problem.prompt + code + "\n" + before_main


def test_source(problem: CodeTask) -> str:
    """The test's unit, or raises UserError when the prompt has no open function."""
    found = open_function(problem.prompt)
    if found is None:
        raise UserError(
            "the prompt does not end inside a function body", path=problem.source or None
        )
    before, header = found
    includes = "".join(line.strip() + "\n" for line in _INCLUDE.findall(before))
    helpers = _INCLUDE.sub("", before)
    _, test = split_test(problem)
    return (
        ASSERT_RENAME + extra_includes(problem) + includes + "namespace {\n" + helpers + "\n}\n"
        + header + ";\n" + rename_main(test)
    )  # fmt: skip


def rename_main(test: str) -> str:
    """The test's `int main()` as `int vibes_test_main()`, returning 0 at its end (falling
    off the end of a function other than `main` is undefined)."""
    code = strip_c_like(test)
    m = _MAIN.search(code)
    if m is None:
        return test + "\nint vibes_test_main() { return 0; }\n"
    open_at = code.find("{", m.end())
    depth, close = 0, -1
    for i in range(open_at, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                close = i
                break
    if open_at < 0 or close < 0:
        return test
    return (
        test[: m.start()] + "int vibes_test_main()" + test[m.end() : close]
        + "\n    return 0;\n" + test[close:]
    )  # fmt: skip


def libraries(text: str) -> list[str]:
    return ["-lcrypto"] if "openssl" in text else []
