"""Compile a Rust test program and judge its test run.

A sample passes only when the test binary exits 0 *and* every test it lists, and every
`#[test]` the task declares (by its full path: a test of the same name elsewhere does not
stand in for it), reported `ok` in libtest's log file. The log file is written by libtest
itself, so a completion that prints fake `test ... ok` lines to stdout, or ends the process
early with `process::exit(0)`, cannot pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vibes_eval.benchmarks.humaneval.rust.crates import CrateSet
from vibes_eval.benchmarks.humaneval.rust.toolchain import RustToolchain
from vibes_eval.core.runner import Session, TaskRunner
from vibes_eval.core.types import ExecutionResult, Limits, Reason, Termination

_LIST_LINE = re.compile(r"^(\S+): test$", re.M)
_LOG_LINE = re.compile(r"^(ok|failed|ignored) (\S+)$", re.M)
_PANIC = re.compile(r"panicked at [^\n]*\n([^\n]*)")
_ERROR = re.compile(r"^error(\[E\d+\])?: .*$", re.M)
# Errors of rustc's lexer and parser that carry a code (most carry none); like those, they
# can stop rustc before it has looked at the files after the one they are in.
_LEXER_CODES = frozenset(
    f"E0{n}" for n in (583, 584, 585, 586, 748, 753, 758, 762, 763, 765, 766, 768)
)
_FMT_LOCATION = re.compile(r"^\s*--> (?:.*/)?([^/\s]+\.rs):(\d+):(\d+)")

RUN_ENV = {"RUST_BACKTRACE": "0"}  # a backtrace costs ~50 ms per failing test
BASE_FLAGS = [
    "--edition",
    "2021",
    "-C",
    "strip=debuginfo",
    "-C",
    "debuginfo=0",
    "--cap-lints",
    "allow",
]
COMPILE_FLAGS = [*BASE_FLAGS, "--test"]  # a libtest binary (the in-process path)


@dataclass(frozen=True)
class RustBuild:
    toolchain: RustToolchain
    crates: CrateSet | None

    def compile_argv(self, source: str, output: str, *extra: str) -> list[str]:
        args = [str(self.toolchain.rustc), *COMPILE_FLAGS, *extra, source, "-o", output]
        return args + (self.crates.rustc_args() if self.crates else [])

    def binary_argv(self, source: str, output: str, *extra: str) -> list[str]:
        """A plain binary with our own main (the split's test and candidate programs)."""
        args = [str(self.toolchain.rustc), *BASE_FLAGS, *extra, source, "-o", output]
        return args + (self.crates.rustc_args() if self.crates else [])

    def library_argv(self, source: str, output: str, name: str) -> list[str]:
        """A library crate of ours (the split's wire)."""
        args = ["--crate-type", "rlib", "--crate-name", name, source, "-o", output]
        return [str(self.toolchain.rustc), *BASE_FLAGS, *args]

    def rustfmt_argv(self, files: list[str]) -> list[str] | None:
        """A rustfmt run that only parses ``files`` (its errors are the syntax errors);
        None when the toolchain has no rustfmt. Reads its config from `rustfmt.toml`
        (``syntax_check`` writes an empty one, so no rustfmt.toml above the work dir adds
        checks)."""
        rustfmt = self.toolchain.bin_dir / "rustfmt"
        if not rustfmt.exists():
            return None
        # The formatted files go to /dev/null: only the errors matter, and a batch's worth
        # of formatted code would overrun the output limit.
        return ["/bin/sh", "-c", 'exec "$0" "$@" >/dev/null', str(rustfmt), "--edition",
                "2021", "--emit", "stdout", "--config-path", "rustfmt.toml", *files]  # fmt: skip

    def readonly_paths(self) -> list[Path]:
        paths = [self.toolchain.sysroot]
        return paths + ([self.crates.root] if self.crates else [])

    def env(self) -> dict[str, str]:
        return {"PATH": f"{self.toolchain.bin_dir}:/usr/local/bin:/usr/bin:/bin"}


def session_relative(result: ExecutionResult, session: Session) -> ExecutionResult:
    """``result`` with the session's own path left out of its stderr: a compile error
    that names a file of the work dir (`#[path = "x.rs"]`) then reads the same in every
    session, batched or alone."""
    prefix = f"{session.path}/"
    if prefix not in result.stderr:
        return result
    return result.model_copy(update={"stderr": result.stderr.replace(prefix, "")})


def listed_tests(listing: ExecutionResult) -> list[str]:
    return _LIST_LINE.findall(listing.stdout)


def read_log(runner: TaskRunner, session: Session, name: str) -> dict[str, str]:
    """A libtest log file in the work dir, parsed; empty when the run never wrote it."""
    try:
        return parse_log(runner.read_file(session, name).decode("utf-8", "replace"))
    except (FileNotFoundError, ValueError):
        return {}


def syntax_check(
    runner: TaskRunner, session: Session, build: RustBuild, files: list[str], limits: Limits
) -> dict[str, str]:
    """{file: its first syntax error} for the ``files`` in the work dir that have any.
    rustfmt parses with rustc's parser and goes on past most files it cannot parse, but
    not all (an unterminated string stops it): it runs again on the files after the last
    one it reported. Empty when the toolchain has no rustfmt."""
    runner.write_files(session, {"rustfmt.toml": ""})
    found: dict[str, str] = {}
    while files:
        argv = build.rustfmt_argv(files)
        if argv is None:
            break
        res = session_relative(runner.execute(session, argv, limits, env=build.env()), session)
        found.update(syntax_errors(res.stderr))
        seen = set(files_reported(res.stderr))  # coded errors (E0765...) too
        reported = [n for n, f in enumerate(files) if f in seen]
        if not reported or res.termination is not Termination.EXITED:
            break
        files = files[reported[-1] + 1 :]
    return found


def parse_log(text: str) -> dict[str, str]:
    """libtest --logfile content -> {test name: ok|failed|ignored}."""
    return {name: status for status, name in _LOG_LINE.findall(text)}


@dataclass(frozen=True)
class Diagnostic:
    """One compiler error from `--error-format=json`, placed in a source file of ours."""

    text: str  # `error[E0308]: mismatched types`, as the human-readable output heads it
    file: str | None  # our file it points into (following macro expansions), if any
    line: int
    column: int
    rendered: str  # the human-readable text rustc would have printed
    parse: bool  # a syntax error (rustc may stop at the first file with one)

    @property
    def position(self) -> tuple[int, int]:
        return (self.line, self.column) if self.file else (1 << 30, 0)


def _locate(diag: dict, ours: Callable[[str], bool]) -> tuple[str, int, int] | None:  # type: ignore[type-arg]
    spans = sorted(diag.get("spans") or [], key=lambda sp: not sp.get("is_primary"))
    for span in spans:
        while span is not None:
            name = str(span.get("file_name", ""))
            if ours(name):
                return name, int(span.get("line_start", 0)), int(span.get("column_start", 0))
            span = (span.get("expansion") or {}).get("span")
    for child in diag.get("children") or []:
        found = _locate(child, ours)
        if found is not None:
            return found
    return None


def compiler_errors(stderr: str, ours: Callable[[str], bool]) -> tuple[list[Diagnostic], list[str]]:
    """The errors in rustc's JSON output, and the lines that were not JSON (an ICE...)."""
    errors: list[Diagnostic] = []
    other: list[str] = []
    for line in stderr.splitlines():
        try:
            diag = json.loads(line)
        except json.JSONDecodeError:
            other.append(line)
            continue
        if not isinstance(diag, dict) or not str(diag.get("level", "")).startswith("error"):
            continue
        message = str(diag.get("message", ""))
        if message.startswith("aborting due to"):
            continue
        code = (diag.get("code") or {}).get("code")
        where = _locate(diag, ours)
        errors.append(
            Diagnostic(
                text=f"error[{code}]: {message}" if code else f"error: {message}",
                file=where[0] if where else None,
                line=where[1] if where else 0,
                column=where[2] if where else 0,
                rendered=str(diag.get("rendered") or ""),
                parse=not code or code in _LEXER_CODES,
            )
        )
    return errors, other


def first_error(errors: list[Diagnostic]) -> Diagnostic:
    """The error that comes first in the source file (not first in rustc's output): the
    same one whether the file was compiled alone or as a module of a batch."""
    return min(errors, key=lambda d: d.position)  # min keeps output order on ties


def rendered_stderr(stderr: str) -> str:
    """rustc's JSON output turned back into the text it prints for people."""
    out = []
    for line in stderr.splitlines():
        try:
            diag = json.loads(line)
        except json.JSONDecodeError:
            out.append(line + "\n")
            continue
        if isinstance(diag, dict) and diag.get("rendered"):
            out.append(str(diag["rendered"]))
    return "".join(out)


def files_reported(rustfmt_stderr: str) -> list[str]:
    """The files a ``rustfmt_argv`` run reported any error in, in its order."""
    return [m.group(1) for m in map(_FMT_LOCATION.match, rustfmt_stderr.splitlines()) if m]


def syntax_errors(rustfmt_stderr: str) -> dict[str, str]:
    """{file name: its first syntax error} from a ``rustfmt_argv`` run. rustfmt parses
    with the same toolchain's parser as rustc, and reports every file's errors in one run
    where rustc stops at the first file it cannot parse."""
    found: dict[str, tuple[tuple[int, int], str]] = {}
    message = ""
    for line in rustfmt_stderr.splitlines():
        if line.startswith("error"):
            message = line if line.startswith("error: ") else ""  # not error[internal]
        elif message and (m := _FMT_LOCATION.match(line)):
            name, where = m.group(1), (int(m.group(2)), int(m.group(3)))
            if name not in found or where < found[name][0]:  # the first in the file
                found[name] = (where, message)
            message = ""
    return {name: text for name, (_, text) in found.items()}


def compile_error_detail(result: ExecutionResult, source: str, syntax: str | None) -> str:
    """What a failed compile of ``source`` (a file name) is reported with, in batches as
    alone: its first syntax error if it has any (``syntax``: from ``syntax_errors``), else
    its first error, from a compile run with `--error-format=json`."""
    if syntax:
        return syntax
    errors, _ = compiler_errors(result.stderr, lambda name: name == source)
    if errors:
        return first_error(errors).text
    m = _ERROR.search(result.stderr)
    return m.group(0) if m else (result.stderr.strip().splitlines() or ["no output"])[0]


def panic_detail(stdout: str) -> str:
    m = _PANIC.search(stdout)
    return m.group(1).strip() if m else ""


@dataclass
class Judgement:
    passed: bool
    reason: Reason
    detail: str = ""
    tests_passed: int = 0
    tests_expected: int = 0
    extra: dict[str, str] = field(default_factory=dict)


def judge_log(
    listed: list[str], declared: list[str], log: dict[str, str], panics: dict[str, str]
) -> Judgement:
    """Verdict from libtest's log alone: every listed test and every declared `#[test]`
    reported ok (or ignored), none failed. ``declared``: full paths, named as ``listed``."""
    ok = {name for name, status in log.items() if status in ("ok", "ignored")}
    expected = len(set(listed) | set(declared))
    n_ok = len([t for t in listed if t in ok])
    failed = [name for name in listed if log.get(name) == "failed"]
    failed += [name for name, status in log.items() if status == "failed" and name not in failed]
    if failed:
        detail = f"{failed[0]}: {panics.get(failed[0], '')}".rstrip(": ")
        return Judgement(False, Reason.FAILED, detail, n_ok, expected)
    missing = [t for t in listed if t not in ok] + [d for d in declared if d not in ok]
    if missing:
        detail = f"test {missing[0]} never reported"
        return Judgement(False, Reason.EARLY_EXIT, detail, n_ok, expected)
    return Judgement(True, Reason.PASSED, "", n_ok, expected)


def judge(
    run: ExecutionResult, listed: list[str], declared: list[str], log: dict[str, str]
) -> Judgement:
    """Verdict on a test binary's run: it must end normally with exit code 0 and the log
    must satisfy ``judge_log``."""
    if run.termination is not Termination.EXITED:
        reason = Reason.from_termination(run.termination)
        detail = signal_detail(run) if reason is Reason.CRASH else run.termination.value
        ok = {name for name, status in log.items() if status == "ok"}
        return Judgement(
            False,
            reason,
            detail,
            len([t for t in listed if t in ok]),
            len(set(listed) | set(declared)),
        )
    verdict = judge_log(listed, declared, log, reported_panics(run.stdout, log))
    if verdict.passed and run.exit_code != 0:
        return Judgement(
            False,
            Reason.EARLY_EXIT,
            f"process exited with code {run.exit_code} after its tests passed",
            verdict.tests_passed,
            verdict.tests_expected,
        )
    if verdict.reason is Reason.EARLY_EXIT:
        verdict.detail = f"process exited with code {run.exit_code}: {verdict.detail}"
    return verdict


SECTION = re.compile(r"^---- (\S+) stdout ----$", re.M)


def _sections(stdout: str) -> list[tuple[str, str]]:
    """libtest's failure report -> [(test name, its captured output and panic)]."""
    marks = list(SECTION.finditer(stdout))
    return [
        (m.group(1), stdout[m.end() : marks[n + 1].start() if n + 1 < len(marks) else len(stdout)])
        for n, m in enumerate(marks)
    ]


def reported_panics(stdout: str, log: dict[str, str]) -> dict[str, str]:
    """{failed test: its panic message} from libtest's failure report, when the report can
    be read: one section per test the log says failed. A test's captured output is printed
    in its section, so it can hold headers of sections of its own making; then no message
    is taken (the same rule in a batch as alone, where the test names differ)."""
    failed = sorted(name for name, status in log.items() if status == "failed")
    if not failed or sorted(m.group(1) for m in SECTION.finditer(stdout)) != failed:
        return {}
    return panic_details(stdout)


def panic_details(stdout: str) -> dict[str, str]:
    """{test name: its panic message} from libtest's failure report."""
    return {name: panic_detail(section) for name, section in _sections(stdout)}


def signal_detail(run: ExecutionResult) -> str:
    if "has overflowed its stack" in run.stderr:
        return "stack overflow"
    return f"killed by signal {run.signal}" if run.signal else "crashed"
