"""The components plugin itself (tests/components.py), on a small suite of its own run by a
real pytest: a required component that is missing fails, one that is not required skips,
one that no test ran fails the session, and the last line says what ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

SUITE = """
import pytest
from tests.components import need, skip_reason

def test_docker_missing():
    need("docker", "no Docker daemon reachable at unix:///dead.sock")

def test_landlock_here():
    need("landlock", None)

@pytest.mark.skipif(True, reason=skip_reason("shared", "the datasets are absent"))
def test_shared_marked():
    pass

def test_unrelated_skip():
    pytest.skip("offers no local-only network here")
"""


def run_suite(tmp_path: Path, require: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_suite.py").write_text(SUITE)
    summary = tmp_path / "summary.txt"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "VIBES_TEST_REQUIRE": require,
        "VIBES_TEST_SUMMARY": str(summary),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.components", "-p",
         "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path), *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip


def test_nothing_required_skips_and_says_so(tmp_path: Path) -> None:
    proc = run_suite(tmp_path, "")
    assert proc.returncode == 0, proc.stdout
    line = (tmp_path / "summary.txt").read_text().splitlines()[0]
    assert line.startswith("components: landlock 1 passed; ")
    assert "docker 1 SKIPPED (no Docker daemon reachable at unix:///dead.sock)" in line
    assert "shared 1 SKIPPED (the datasets are absent)" in line
    assert "other skips: 1 (offers no local-only network here x1)" in line
    assert line.endswith("| required: none (VIBES_TEST_REQUIRE)")
    assert proc.stdout.strip().splitlines()[-2] == line  # before pytest's own last line


def test_a_required_component_that_is_missing_fails_with_the_reason(tmp_path: Path) -> None:
    proc = run_suite(tmp_path, "landlock,docker,shared")
    assert proc.returncode == 1, proc.stdout
    assert "1 failed, 1 passed, 1 skipped, 1 error" in proc.stdout  # the skipif: at setup
    assert (
        "docker is required (VIBES_TEST_REQUIRE) but did not run here: "
        "[docker] no Docker daemon reachable at unix:///dead.sock" in proc.stdout
    )
    assert "shared is required (VIBES_TEST_REQUIRE)" in proc.stdout
    lines = (tmp_path / "summary.txt").read_text().splitlines()
    assert lines[1:] == [
        "FAILED required component docker: 1 SKIPPED (no Docker daemon reachable at "
        "unix:///dead.sock)",
        "FAILED required component shared: 1 SKIPPED (the datasets are absent)",
    ]


def test_a_required_component_no_test_ran_fails_the_session(tmp_path: Path) -> None:
    proc = run_suite(tmp_path, "landlock,postgres", "-k", "landlock")
    assert proc.returncode == 1, proc.stdout
    assert "1 passed" in proc.stdout
    assert "FAILED required component postgres: no test ran" in proc.stdout


def test_an_unknown_component_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_suite(tmp_path, "landlock,dokcer")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "VIBES_TEST_REQUIRE: unknown component(s) dokcer" in proc.stderr
