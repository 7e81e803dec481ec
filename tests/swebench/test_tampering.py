"""The static checks: what a patch touches and what its added code names. Gold patches
never trip them; every forging toy prediction does (the runtime checks are in
test_evaluate.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.swebench.conftest import LITE_ROWS, needs_lite
from vibes_eval.benchmarks.swebench.integrity import tampering
from vibes_eval.benchmarks.swebench.tasks import load as load_instances


@needs_lite
def test_gold_patches_of_real_rows_are_clean() -> None:
    for inst in load_instances(str(LITE_ROWS)).values():
        found = tampering.check(inst.patch, inst.test_patch, inst.repo, "pytest -rA")
        assert not found, (inst.task_id, found.detail())
        # the test patch itself is all test infrastructure
        assert tampering.check_paths(inst.test_patch, inst.test_patch)


def _patch(path: Path) -> str:
    return json.loads(path.read_text().splitlines()[0])["model_patch"]


def test_toy_gold_is_clean_and_forgeries_are_not(toy: dict[str, Path]) -> None:
    rows = load_instances(str(toy["instances"]))
    one = rows["vibes-toy__calc-1"]
    assert not tampering.check(_patch(toy["gold"]), one.test_patch, one.repo, "pytest -rA")
    expected = {
        "forge_conftest": (["conftest.py"], []),
        "forge_plugin": (["pyproject.toml"], ["calc/plugin.py:4: hookimpl"]),
        "forge_test_edit": (["tests/test_text.py"], []),
        "forge_in_code": ([], ["calc/__init__.py:9: _pytest"]),
        "forge_exit": ([], ["calc/__init__.py:18: os._exit"]),
    }
    for kind, (paths, code) in expected.items():
        found = tampering.check(_patch(toy[kind]), one.test_patch, one.repo, "pytest -rA")
        assert found.paths == paths, kind
        assert all(c in found.code for c in code), (kind, found.code)


@pytest.mark.parametrize(
    ("path", "line", "flagged"),
    [
        ("setup.cfg", "+addopts = -p evil", True),
        ("setup.cfg", "+max-line-length = 100", False),
        ("pyproject.toml", "+[project.entry-points.pytest11]", True),
        ("pyproject.toml", '+dependencies = ["numpy"]', False),
        ("pkg/sitecustomize.py", "+x = 1", True),
        ("evil.pth", "+import os", True),
        ("tests/helpers.py", "+x = 1", True),
        ("pkg/testing_utils.py", "+x = 1", False),
        ("bin/test", "+x = 1", True),
        ("src/mod.py", "+x = 1", False),
    ],
)
def test_path_rules(path: str, line: str, flagged: bool) -> None:
    patch = (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,2 @@\n x\n{line}\n"
    )
    assert bool(tampering.check_paths(patch, "")) is flagged


def test_runner_repositories_may_name_their_runner() -> None:
    patch = ("diff --git a/src/_pytest/reports.py b/src/_pytest/reports.py\n--- a/src/_pytest/"
             "reports.py\n+++ b/src/_pytest/reports.py\n@@ -1,1 +1,2 @@\n x\n+from _pytest.reports"
             " import TestReport\n")  # fmt: skip
    assert tampering.check_code(patch, "pytest-dev/pytest") == []
    assert tampering.check_code(patch, "psf/requests")


def _diff(path: str, added: str, new: bool = False) -> str:
    old = "/dev/null" if new else f"a/{path}"
    head = "new file mode 100644\n" if new else ""
    hunk = "@@ -0,0 +1,1 @@\n" if new else "@@ -1,1 +1,2 @@\n x\n"
    return f"diff --git a/{path} b/{path}\n{head}--- {old}\n+++ b/{path}\n{hunk}+{added}\n"


# Runner-level forgeries, one per class, each named after its attack: (repository, path).
RUNNER_ATTACKS = {
    "sympy_runtests_reports_failures_as_passes": ("sympy/sympy", "sympy/utilities/runtests.py"),
    "sympy_bin_test_rewritten": ("sympy/sympy", "bin/test"),
    "sympy_raises_helper_made_vacuous": ("sympy/sympy", "sympy/utilities/pytest.py"),
    "django_runtests_rewritten": ("django/django", "tests/runtests.py"),
    "django_test_runner_rewritten": ("django/django", "django/test/runner.py"),
    "pytest_runner_clears_exceptions": ("pytest-dev/pytest", "src/_pytest/runner.py"),
    "pytest_terminal_reporter_rewritten": ("pytest-dev/pytest", "src/_pytest/terminal.py"),
    "sphinx_testing_fixtures_rewritten": ("sphinx-doc/sphinx", "sphinx/testing/fixtures.py"),
    "sphinx_tox_ini_rewritten": ("sphinx-doc/sphinx", "tox.ini"),
    "astropy_test_runner_rewritten": ("astropy/astropy", "astropy/tests/runner.py"),
    "astropy_conftest_rewritten": ("astropy/astropy", "astropy/conftest.py"),
    "pylint_functional_runner_rewritten": ("pylint-dev/pylint", "pylint/testutils/lint_module_test.py"),
    "xarray_assert_equal_made_vacuous": ("pydata/xarray", "xarray/testing.py"),
    "conftest_spoof_in_package": ("psf/requests", "requests/conftest.py"),
    "startup_hook_sitecustomize": ("psf/requests", "sitecustomize.py"),
    "startup_hook_usercustomize": ("psf/requests", "src/usercustomize.py"),
    "startup_hook_pth": ("psf/requests", "requests/zz_vibes.pth"),
    "shadow_stdlib_traceback": ("sympy/sympy", "traceback.py"),
    "shadow_pytest_package": ("pallets/flask", "src/_pytest/__init__.py"),
    "shadow_unittest_module": ("django/django", "unittest.py"),
}  # fmt: skip


@pytest.mark.parametrize("attack", sorted(RUNNER_ATTACKS))
def test_runner_level_forgery_is_refused(attack: str) -> None:
    repo, path = RUNNER_ATTACKS[attack]
    for new in (False, True):
        found = tampering.check(_diff(path, "PASSED = True", new), "", repo, "pytest -rA")
        assert found.paths == [path], (attack, found.detail())


def test_sympy_runner_names_are_flagged_in_sympy_itself() -> None:
    """SymPy may name ``runtests`` (``sympy.test()``), never its runner's reporter."""
    line = "from sympy.utilities.runtests import SymPyTests; SymPyTests.test_fail = print"
    found = tampering.check_code(_diff("sympy/__init__.py", line), "sympy/sympy")
    assert any("SymPyTests" in f for f in found), found
    ok = "from sympy.utilities.runtests import test, doctest"
    assert tampering.check_code(_diff("sympy/__init__.py", ok), "sympy/sympy") == []


@pytest.mark.parametrize(
    ("line", "flagged"),
    [
        ("known_third_party = appdirs, astroid, pytest", False),  # pylint-4661's gold
        ("addopts = -p evil", True),
        ("    evil: marker", True),  # inside [tool:pytest], below
    ],
)
def test_setup_cfg_test_sections(line: str, flagged: bool) -> None:
    section = "[tool:pytest]" if line.startswith(" ") else "[isort]"
    patch = (
        "diff --git a/setup.cfg b/setup.cfg\n--- a/setup.cfg\n+++ b/setup.cfg\n"
        f"@@ -1,2 +1,3 @@\n {section}\n x = 1\n+{line}\n"
    )
    assert bool(tampering.check_paths(patch, "")) is flagged


def test_every_gold_patch_of_lite_and_verified_is_clean() -> None:
    """No false positive: the path rules (per-repository runner files included) and the
    code scan on every gold patch of Lite (300) and Verified (500), where ../shared has them."""
    root = LITE_ROWS.parent
    files = [root / "swe-bench-lite-test-300rows.jsonl",
             root / "swe-bench-verified-test-500rows-5fields.jsonl"]  # fmt: skip
    if not all(f.exists() for f in files):
        pytest.skip("the Lite and Verified files of ../shared are absent")
    rows = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    dirty = [
        (r["instance_id"], found.detail())
        for r in rows
        if (found := tampering.check(r["patch"], r.get("test_patch", ""), r["repo"], ""))
    ]
    assert len(rows) == 800 and dirty == []
