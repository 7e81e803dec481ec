"""The benchmark's use of a runner, at runner level: rustc compiles inside the sandbox with
the toolchain mounted read-only, the test binary runs, and the compiler cannot read what
the job cannot read."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.components import need
from vibes_eval.core.runner import SessionSpec, TaskRunner
from vibes_eval.core.types import Limits, Termination

PROGRAM = """
fn add(a: i32, b: i32) -> i32 { a + b }
#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn adds() { assert_eq!(add(2, 3), 5); }
}
"""
LEAK = 'const S: &str = include_str!("/etc/shadow");\nfn main() { println!("{S}"); }\n'


def _sysroot() -> Path:
    rustc = shutil.which("rustc")
    need("toolchains", None if rustc else "rustc is not installed")
    assert rustc is not None
    out = subprocess.run([rustc, "--print", "sysroot"], capture_output=True, text=True)
    return Path(out.stdout.strip())


def _compile(runner: TaskRunner, files: dict[str, str | bytes], sysroot: Path):  # type: ignore[no-untyped-def]
    session = runner.prepare(SessionSpec(label="rust", readonly_paths=[sysroot], files=files))
    res = runner.execute(
        session,
        [str(sysroot / "bin" / "rustc"), "--edition", "2021", "--test", "main.rs",
         "-o", "main", "-C", "strip=debuginfo"],
        Limits(timeout_s=60),
        env={"PATH": f"{sysroot / 'bin'}:/usr/bin:/bin"},
    )  # fmt: skip
    return session, res


def test_compile_and_run_tests(sandbox: TaskRunner) -> None:
    session, res = _compile(sandbox, {"main.rs": PROGRAM}, _sysroot())
    try:
        assert res.ok, res.stderr
        listing = sandbox.execute(session, ["./main", "--list", "--format", "terse"], Limits())
        assert listing.stdout.strip() == "tests::adds: test"
        run = sandbox.execute(session, ["./main", "--test-threads=1"], Limits())
        assert run.ok and "1 passed" in run.stdout
    finally:
        sandbox.cleanup(session)


def test_compiler_cannot_read_secrets(sandbox: TaskRunner) -> None:
    session, res = _compile(sandbox, {"main.rs": LEAK}, _sysroot())
    try:
        assert res.termination is Termination.EXITED and res.exit_code != 0
        assert "couldn't read" in res.stderr and "/etc/shadow" in res.stderr
    finally:
        sandbox.cleanup(session)
