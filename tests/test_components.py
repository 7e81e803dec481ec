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
# A module-scoped fixture runs its body, and need(), for the first test only; every test
# that gets it counts. Parametrized: each parameter's own component.
SHARED_FIXTURES = """
import pytest
from tests.components import need

@pytest.fixture(scope="module")
def pg():
    need("postgres", None)

@pytest.fixture(scope="module", params=["bwrap", "firejail"])
def box(request):
    need(request.param, None)
    return request.param

@pytest.fixture
def pg_too(pg):
    return pg

def test_a(pg): pass
def test_b(pg): pass
def test_c(pg_too): pass

@pytest.mark.parametrize("n", [1, 2])
def test_box(box, n): pass

def test_expected_failure(pg):
    pytest.xfail("not yet on this kernel")

@pytest.fixture
def breaks_twice():
    need("ray", None)
    yield
    raise RuntimeError("teardown too")

def test_fails_once(breaks_twice):
    raise RuntimeError("call")
"""
MODULE_SKIPS = {
    "test_untagged_module.py": "import pytest\npytest.importorskip('no_such_module_here')\n",
    "test_tagged_module.py": "import pytest\npytest.skip('[docker] no daemon', "
    "allow_module_level=True)\n",
}


def run_suite(
    tmp_path: Path, require: str, *args: str, files: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    for name, text in (files or {"test_suite.py": SUITE}).items():
        (tmp_path / name).write_text(text)
    summary = tmp_path / "summary.txt"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "VIBES_TEST_REQUIRE": require,
        "VIBES_TEST_SUMMARY": str(summary),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.components", "-p",
         "no:cacheprovider", "-p", "no:randomly", "--rootdir", str(tmp_path), str(tmp_path), *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip


def test_nothing_required_skips_and_says_so(tmp_path: Path) -> None:
    proc = run_suite(tmp_path, "")
    assert proc.returncode == 0, proc.stdout
    lines = (tmp_path / "summary.txt").read_text().splitlines()
    assert lines[:2] == [
        "skipped [docker] no Docker daemon reachable at unix:///dead.sock x1",
        "skipped [shared] the datasets are absent x1",
    ]
    assert lines[2] == "skipped [untagged] offers no local-only network here x1"
    line = lines[3]
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
    assert lines[4:] == [
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


def summary(tmp_path: Path) -> str:
    return next(ln for ln in (tmp_path / "summary.txt").read_text().splitlines()
                if ln.startswith("components: "))  # fmt: skip


def test_a_wider_fixture_counts_every_test_that_gets_it(tmp_path: Path) -> None:
    proc = run_suite(tmp_path, "", files={"test_fixtures.py": SHARED_FIXTURES})
    assert proc.returncode == 1, proc.stdout  # test_fails_once
    line = summary(tmp_path)
    # test_a, test_b, test_c (through pg_too); the xfail is not a pass
    assert "postgres 3 passed, 1 xfailed (not yet on this kernel);" in line, line
    assert "bwrap 2 passed;" in line and "firejail 2 passed;" in line, line
    # a call and a teardown that both fail: one test, once
    assert "ray 1 FAILED (RuntimeError: call);" in line, line


def test_a_required_component_with_only_xfails_fails(tmp_path: Path) -> None:
    suite = "import pytest\nfrom tests.components import need\n\ndef test_x():\n" \
            "    need('landlock', None)\n    pytest.xfail('no user namespaces')\n"  # fmt: skip
    proc = run_suite(tmp_path, "landlock", files={"test_x.py": suite})
    assert proc.returncode == 1, proc.stdout
    assert "FAILED required component landlock: 1 xfailed (no user namespaces)" in proc.stdout


def test_whole_module_skips_are_listed(tmp_path: Path) -> None:
    proc = run_suite(tmp_path, "", files={**MODULE_SKIPS, "test_suite.py": SUITE})
    assert proc.returncode == 0, proc.stdout
    text = (tmp_path / "summary.txt").read_text()
    assert "skipped [docker] test_tagged_module.py: no daemon x1" in text, text
    assert (
        "skipped [untagged] test_untagged_module.py: could not import 'no_such_module_here'" in text
    ), text
    assert "docker 2 SKIPPED" in summary(tmp_path)


def test_a_required_component_skipped_by_a_whole_module_fails(tmp_path: Path) -> None:
    proc = run_suite(tmp_path, "docker", files=MODULE_SKIPS)
    assert proc.returncode != 0, proc.stdout
    assert "FAILED required component docker: 1 SKIPPED (test_tagged_module.py: no daemon)" in (
        proc.stdout
    )
