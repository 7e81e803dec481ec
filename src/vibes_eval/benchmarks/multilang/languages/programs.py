"""The languages with a test `main`: how each program is put together, built and run.

Each one's harness code (ours, trusted) runs after the test's `main` returned normally,
reads the token from stdin and prints it last; a completion's code runs before and cannot
read stdin (the policy filter, ``policy.py``).
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shlex
from pathlib import Path
from typing import ClassVar

from vibes_eval.benchmarks.multilang.languages import cpp, split_cpp, split_go, split_java, split_js
from vibes_eval.benchmarks.multilang.languages.base import (
    Build,
    Language,
    TestProgram,
    task_dir,
    version_of,
    which,
)
from vibes_eval.benchmarks.multilang.languages.policy import strip_c_like
from vibes_eval.benchmarks.multilang.tasks import CodeTask
from vibes_eval.core.runner import NetworkPolicy
from vibes_eval.core.types import ExecutionResult


def _sh(*commands: list[str]) -> list[str]:
    return ["/bin/sh", "-c", " && ".join(shlex.join(c) for c in commands)]


def _real_dir(exe: str, up: int) -> Path:
    path = Path(os.path.realpath(exe))
    for _ in range(up):
        path = path.parent
    return path


# -- C++ ------------------------------------------------------------------------------------


_CC_TEMP = re.compile(r"\S*/cc\w{6}\.s\b")


class Cpp(Language):
    name: ClassVar[str] = "cpp"
    fence_tags: ClassVar[tuple[str, ...]] = ("cpp", "c++", "cc")

    def missing(self) -> str | None:
        return None if which("g++") else "g++ is not installed (Debian: apt-get install g++)"

    @property
    def tc(self) -> cpp.CppToolchain:
        return cpp.find_toolchain()

    def environment(self) -> dict[str, str]:
        return {"g++": f"{self.tc.version} -std={cpp.STD}"}

    def readonly_paths(self) -> list[Path]:
        return [self.tc.cache, split_cpp.wire_parts().cache]

    def _compile(self, source: str, output: str) -> list[str]:
        return [self.tc.gxx, *cpp.FLAGS, "-include", str(self.tc.pch), "-c", source, "-o", output]

    def task_files(self, problem: CodeTask) -> dict[str, str]:
        return {"test.cpp": cpp.test_source(problem)}

    def task_argv(self, problem: CodeTask) -> list[str] | None:
        return self._compile("test.cpp", "test.o")

    def build(self, problem: CodeTask, code: str) -> Build:
        source = cpp.sample_source(problem, code)
        libs = cpp.libraries(problem.prompt + problem.declaration + code)
        test_obj = f"../{task_dir(problem.task_id)}/test.o"
        link = [self.tc.gxx, test_obj, "main.o", str(self.tc.main_object), "-o", "bin", *libs]
        return Build(
            files={"main.cpp": source},
            argv=_sh(self._compile("main.cpp", "main.o"), link),
            run_files=["bin"],
            run_argv=["./bin"],
        )

    # -- the split (split_cpp.py): a trusted test program calls the candidate -------------

    def test_program(self, problem: CodeTask) -> TestProgram | None:
        entry = split_cpp.entry_of(problem)
        if entry is None:
            return None  # in-process, labelled so (docs/multilang.md lists these tasks)
        parts = split_cpp.wire_parts()
        objects = [parts.io_object, parts.test_main_object]
        libs = cpp.libraries(problem.prompt + problem.declaration)
        return TestProgram(
            files={"test.cpp": split_cpp.test_source(problem, entry)},
            argv=split_cpp.compile_argv(self.tc.gxx, parts, "test.cpp", objects, "test", libs),
            run_files=["test"],
            run_argv=["./test"],
        )

    def candidate(self, problem: CodeTask, code: str) -> Build:
        entry = split_cpp.entry_of(problem)
        assert entry is not None  # only asked where test_program gave one
        parts = split_cpp.wire_parts()
        libs = cpp.libraries(problem.prompt + problem.declaration + code)
        return Build(
            files={"main.cpp": split_cpp.candidate_source(problem, code, entry)},
            argv=split_cpp.compile_argv(
                self.tc.gxx, parts, "main.cpp", [parts.io_object], "bin", libs
            ),
            run_files=["bin"],
            run_argv=["./bin"],
        )

    def compile_detail(self, res: ExecutionResult) -> str:
        # the assembler names g++'s temporary file (a random name in the session's
        # folder): named the same way each time, so the detail reads the same batched
        # or alone
        stderr = _CC_TEMP.sub("<assembler input>", res.stderr)
        lines = stderr.splitlines()
        for pattern in (": error:", "undefined reference", "multiple definition"):
            for line in lines:
                if pattern in line:
                    return line.strip()[:300]
        return super().compile_detail(res.model_copy(update={"stderr": stderr}))

    def failure_detail(self, run: ExecutionResult) -> str:
        for line in run.stderr.splitlines():
            if "Assertion" in line:
                m = re.search(r"Assertion `(.*)' failed", line)
                return f"assertion failed: {m.group(1)}" if m else line.strip()[:300]
        for line in run.stderr.splitlines():  # the split's test program on its channel
            if line.startswith("vibes: "):
                return line.removeprefix("vibes: ").strip()[:300]
        return super().failure_detail(run)


# -- JavaScript -----------------------------------------------------------------------------

JS_PRELUDE = (
    "const __vibes_read = require('fs').readFileSync;"
    " const __vibes_out = process.stdout.write.bind(process.stdout);"
    " const __vibes_assert = (ok, ...m) => { if (!ok) throw new Error("
    "'Assertion failed' + (m.length ? ': ' + m.join(' ') : '')); };\n"
)
JS_EPILOGUE = "\n;__vibes_out('\\n' + __vibes_read(0, 'utf8'));\n"
_CONSOLE_ASSERT = re.compile(r"\bconsole\s*\.\s*assert\s*\(")


NODE_ENV = {"OPENSSL_CONF": "/dev/null"}  # its config is outside the sandbox: none needed


class JavaScript(Language):
    name: ClassVar[str] = "js"
    fence_tags: ClassVar[tuple[str, ...]] = ("javascript", "js", "node")

    def missing(self) -> str | None:
        return None if which("node") else "node is not installed (Debian: apt-get install nodejs)"

    def environment(self) -> dict[str, str]:
        # the split's wire is part of what a cached verdict must match
        return {"node": version_of(("node", "--version")), "js wire": split_js.WIRE_VERSION}

    def readonly_paths(self) -> list[Path]:
        node = which("node")
        return [_real_dir(node, 2)] if node and not node.startswith("/usr/") else []

    def build_env(self) -> dict[str, str]:
        return NODE_ENV

    def program(self, problem: CodeTask, code: str) -> str:
        # console.assert only prints; the test's assertions must stop the program
        test = _CONSOLE_ASSERT.sub("__vibes_assert(", problem.test)
        return JS_PRELUDE + problem.prompt + code + "\n" + test + JS_EPILOGUE

    def test_program(self, problem: CodeTask) -> TestProgram | None:
        return split_js.test_program(problem)

    def candidate(self, problem: CodeTask, code: str) -> Build:
        return split_js.candidate(problem, code)

    def build(self, problem: CodeTask, code: str) -> Build:
        return Build(
            files={"main.js": self.program(problem, code)},
            argv=["node", "--check", "main.js"],
            run_files=["main.js"],
            run_argv=["node", "--stack-size=8192", "main.js"],
            run_env=NODE_ENV,
        )

    def compile_detail(self, res: ExecutionResult) -> str:
        for line in res.stderr.splitlines():
            if "Error" in line:
                return line.strip()[:300]
        return super().compile_detail(res)

    def failure_detail(self, run: ExecutionResult) -> str:
        for line in run.stderr.splitlines():  # the split's test program says it in one line
            if line.startswith(split_js.FAILED):
                return line[len(split_js.FAILED) :].strip()[:300]
        for line in run.stderr.splitlines():
            if re.match(r"^\w*Error\b", line):
                return line.strip()[:300]
        return super().failure_detail(run)


# -- Java -----------------------------------------------------------------------------------

JAVA_RUN = """\
public class VibesRun {
    public static void main(String[] args) throws Throwable {
        %s.main(args);
        byte[] token = System.in.readAllBytes();
        System.out.flush();
        System.out.write('\\n');
        System.out.write(token);
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}
"""
_CLASS = re.compile(r"\bclass\s+([A-Za-z_]\w*)")


class Java(Language):
    """On the split (``split_java``: a trusted test program, a candidate server) wherever
    the wire carries the entry method's signature; otherwise in-process (``build``: prompt,
    completion and test in one program, ``VibesRun`` printing the token)."""

    name: ClassVar[str] = "java"
    fence_tags: ClassVar[tuple[str, ...]] = ("java",)
    build_network: ClassVar[NetworkPolicy] = NetworkPolicy.LOCAL

    def missing(self) -> str | None:
        if which("javac") and which("java"):
            return None
        return "javac/java are not installed (Debian: apt-get install default-jdk-headless)"

    def environment(self) -> dict[str, str]:
        # the split's wire is part of what a cached verdict must match
        return {"java": version_of(("javac", "-version")), "java wire": split_java.wire_version()}

    @functools.cached_property
    def _paths(self) -> list[Path]:
        javac = which("javac") or ""
        home = _real_dir(javac, 2) if javac else None
        paths = [Path(p) for p in glob.glob("/etc/java-*") + glob.glob("/etc/ssl/certs/java")]
        if home is not None and not str(home).startswith("/usr/"):
            paths.append(home)
        return paths

    def readonly_paths(self) -> list[Path]:
        return [*self._paths, split_java.runtime_classes()]

    def main_class(self, problem: CodeTask) -> str:
        test = strip_c_like(problem.test)
        if re.search(r"\bclass\s+Main\b", test):
            return "Main"
        found = _CLASS.findall(strip_c_like(problem.prompt))
        return found[0] if found else "Main"

    def build(self, problem: CodeTask, code: str) -> Build:
        main = self.main_class(problem)
        source = problem.prompt + code + "\n" + problem.test
        return Build(
            files={"Main.java": source, "VibesRun.java": JAVA_RUN % main},
            argv=_sh(
                [
                    "javac",
                    "-J-Xss8m",
                    "-encoding",
                    "UTF-8",
                    "-nowarn",
                    "-d",
                    "out",
                    "Main.java",
                    "VibesRun.java",
                ],
                ["tar", "-C", "out", "-cf", "classes.tar", "."],
            ),
            run_files=["classes.tar"],
            run_argv=_sh(
                ["tar", "-xf", "classes.tar"],
                [
                    "exec",
                    "java",
                    "-ea",
                    "-Xss64m",
                    "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1",
                    "-Xshare:auto",
                    "-cp",
                    ".",
                    "VibesRun",
                ],
            ),
        )

    def test_program(self, problem: CodeTask) -> TestProgram | None:
        return split_java.test_program(problem, self.main_class(problem))

    def candidate(self, problem: CodeTask, code: str) -> Build:
        return split_java.candidate(problem, code)

    def compile_detail(self, res: ExecutionResult) -> str:
        for line in res.stderr.splitlines():
            if ": error:" in line:
                return line.strip()[:300]
        return super().compile_detail(res)

    def failure_detail(self, run: ExecutionResult) -> str:
        """The exception that ended the tests (the split's test program, or the in-process
        program), with the first line of the tests' own code it went through."""
        return split_java.failure_detail(run.stderr) or super().failure_detail(run)


# -- Go -------------------------------------------------------------------------------------

GO_HELPERS = ("math", "strings", "fmt", "strconv", "time", "bytes", "regexp", "sort",
              "math/rand", "crypto/md5", "unicode", "math/big")  # fmt: skip
GO_MAIN = """\
package main

import (
\t"bufio"
\t"fmt"
\t"os"
\t"testing"
)

func TestMain(m *testing.M) {
\tcode := m.Run()
\tif code != 0 {
\t\tos.Exit(code)
\t}
\ttoken, _ := bufio.NewReader(os.Stdin).ReadString('\\n')
\tfmt.Print("\\n" + token)
\tos.Exit(0)
}
"""
_GO_IMPORT_BLOCK = re.compile(r"^import\s*(\([^)]*\)|\"[^\"]*\")\s*$", re.M)


class Go(Language):
    name: ClassVar[str] = "go"
    fence_tags: ClassVar[tuple[str, ...]] = ("go", "golang")

    def missing(self) -> str | None:
        if not which("go"):
            return "go is not installed (Debian: apt-get install golang-go)"
        return None

    def environment(self) -> dict[str, str]:
        return {"go": version_of(("go", "version"))}

    @functools.cached_property
    def _goroot(self) -> Path:
        return _real_dir(which("go") or "/usr/bin/go", 2)

    def readonly_paths(self) -> list[Path]:
        paths = [p for p in (Path("/usr/share/gocode"),) if p.exists()]
        paths.append(self.seed_cache)
        return paths + ([self._goroot] if not str(self._goroot).startswith("/usr/") else [])

    @functools.cached_property
    def seed_cache(self) -> Path:
        """A Go build cache holding the standard library and testify, built once here from
        Debian's sources (no sample's code): a cold `go test` compiles them for minutes.
        Sessions get a tree of links to it and add their own entries."""
        import hashlib
        import subprocess

        from vibes_eval.paths import cache_dir

        key = hashlib.sha256(f"{version_of(('go', 'version'))}{GO_HELPERS}".encode()).hexdigest()
        seed = cache_dir() / "go" / key[:16]
        if (seed / "ready").exists():
            return seed
        work = seed.with_name(seed.name + ".build")
        work.mkdir(parents=True, exist_ok=True)
        imports = "".join(f'\t_ "{p}"\n' for p in GO_HELPERS)
        testify = Path("/usr/share/gocode/src/github.com/stretchr/testify/assert").exists()
        imports += '\t_ "github.com/stretchr/testify/assert"\n' if testify else ""
        (work / "main_test.go").write_text(
            f'package main\n\nimport (\n\t"testing"\n{imports})\n\nfunc TestX(t *testing.T) {{}}\n'
        )
        env = {**os.environ, **self.build_env(), "GOCACHE": str(seed / "cache")}
        subprocess.run(["go", "test", "-c", "-trimpath", "-o", "x.bin", "."], cwd=work, env=env,
                       capture_output=True, timeout=1800)  # fmt: skip
        (seed / "ready").write_text("")
        return seed

    def build_env(self) -> dict[str, str]:
        # No module proxy, no network: GOPATH mode over Debian's packaged sources (testify).
        return {"GO111MODULE": "off", "GOPATH": "/usr/share/gocode", "CGO_ENABLED": "0",
                "GOTOOLCHAIN": "local"}  # fmt: skip

    def program(self, problem: CodeTask, code: str) -> str:
        if problem.format == "multipl-e":
            # its prompt declares a `_test` package with its imports; tests follow
            text = problem.prompt + code + "\n" + problem.test
            return re.sub(r"^package\s+\w+", "package main", text, count=1, flags=re.M)
        prompt = problem.prompt.replace(problem.imports, "") if problem.imports else problem.prompt
        body = prompt + code
        setup = problem.test_setup or "package main\n"
        used = [p for p in GO_HELPERS if f'"{p}"' not in setup and f"{p.split('/')[-1]}." in body]
        imports = "import (\n" + "".join(f'    "{p}"\n' for p in used) + ")\n" if used else ""
        setup = re.sub(r"^package\s+\w+", "package main", setup, count=1, flags=re.M)
        return setup + "\n" + imports + body + "\n" + problem.test

    def _go_test_c(self, output: str) -> list[str]:
        # a build cache per session: links to the seed's entries, and its own
        return [
            "/bin/sh",
            "-c",
            'export GOCACHE="$HOME/.gocache"; [ -d "$GOCACHE" ] || '
            f'cp -as {shlex.quote(str(self.seed_cache))}/cache "$GOCACHE"; '
            f"exec go test -c -trimpath -o {output} .",
        ]

    def build(self, problem: CodeTask, code: str) -> Build:
        return Build(
            files={"main_test.go": self.program(problem, code), "vibes_main_test.go": GO_MAIN},
            argv=self._go_test_c("test.bin"),
            run_files=["test.bin"],
            run_argv=["./test.bin", "-test.v"],
        )

    def test_program(self, problem: CodeTask) -> TestProgram | None:
        """The split (``split_go``): the tests, the prompt's helpers and a stub."""
        files = split_go.test_sources(problem, GO_HELPERS)
        if files is None:
            return None
        return TestProgram(files=files, argv=self._go_test_c("test.bin"),
                           run_files=["test.bin"], run_argv=["./test.bin", "-test.v"])  # fmt: skip

    def candidate(self, problem: CodeTask, code: str) -> Build:
        return Build(
            files=split_go.candidate_sources(problem, code, GO_HELPERS),
            argv=self._go_test_c("candidate.bin"),
            run_files=["candidate.bin"],
            run_argv=["./candidate.bin"],
        )

    def compile_detail(self, res: ExecutionResult) -> str:
        for line in res.stderr.splitlines():
            # the go tool names some files by their absolute path: the build session's,
            # which differs batched and alone
            m = re.match(r"^\s*(?:/\S*/)?(\.?/?\w+\.go:\d+:\d+:.*)", line)
            if m:
                return m.group(1).strip()[:300]
        kept = [x for x in res.stderr.splitlines() if not x.startswith("# ")]  # "# <package>"
        return super().compile_detail(res.model_copy(update={"stderr": "\n".join(kept)}))

    def failure_detail(self, run: ExecutionResult) -> str:
        # in-process: the test's output is on stdout; split: on the test program's stderr
        lines = [x.strip() for x in (run.stdout + "\n" + run.stderr).splitlines()]
        for n, line in enumerate(lines):
            if line.startswith("Error:"):  # testify: the message, then expected and actual
                return " ".join(x for x in lines[n : n + 3] if x)[:300]
        for line in lines:  # the stub's own panics: what the candidate raised, a bad answer
            if line.startswith(("panic: the candidate", "panic: vibes:")):
                return line.removeprefix("panic: ").removesuffix(" [recovered]")[:300]
        for line in lines:
            if line.startswith(("--- FAIL", "panic:")) or "_test.go:" in line:
                return line[:300]
        return super().failure_detail(run)


# -- MultiPL-E's scripting languages ----------------------------------------------------------

# language: (interpreter argv, syntax check argv or None, file name, epilogue printing stdin)
SCRIPTS: dict[str, tuple[list[str], list[str] | None, str, str]] = {
    "perl": (["perl"], ["perl", "-c"], "main.pl",
             '\n;{ local $/; my $t = <STDIN>; print "\\n$t"; }\n'),
    "bash": (["bash"], ["bash", "-n"], "main.sh", '\nprintf "\\n%s\\n" "$(cat)"\n'),
    "lua": (["lua"], None, "main.lua", '\nio.write("\\n" .. io.read("a"))\n'),
    "ruby": (["ruby"], ["ruby", "-c"], "main.rb", '\nprint "\\n" + STDIN.read\n'),
    "php": (["php"], ["php", "-l"], "main.php",
            '\n<?php echo "\\n" . stream_get_contents(STDIN);\n'),
    "r": (["Rscript"], None, "main.r",
          '\ncat("\\n", readLines(file("stdin")), "\\n", sep = "")\n'),
    "julia": (["julia"], None, "main.jl", '\nprint("\\n", read(stdin, String))\n'),
}  # fmt: skip


class Script(Language):
    """A MultiPL-E scripting language: prompt + completion + tests, then our epilogue."""

    def __init__(self, name: str) -> None:
        self.name = name  # type: ignore[misc]
        self.interp, self.check, self.file, self.epilogue = SCRIPTS[name]

    def missing(self) -> str | None:
        if which(self.interp[0]):
            return None
        return f"{self.interp[0]} is not installed"

    def environment(self) -> dict[str, str]:
        flag = "-version" if self.name == "lua" else "--version"
        return {self.name: version_of((self.interp[0], flag))}

    def build(self, problem: CodeTask, code: str) -> Build:
        text = problem.prompt + code + "\n" + problem.test + self.epilogue
        return Build(
            files={self.file: text},
            argv=[*self.check, self.file] if self.check else None,
            run_files=[self.file],
            run_argv=[*self.interp, self.file],
        )


def language(name: str) -> Language:
    """The language called ``name`` (ours: cpp, go, js, java, or a MultiPL-E script)."""
    fixed: dict[str, type[Language]] = {"cpp": Cpp, "js": JavaScript, "java": Java, "go": Go}
    if name in fixed:
        return fixed[name]()
    if name in SCRIPTS:
        return Script(name)
    raise KeyError(name)
