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
        "forge_exit": ([], ["calc/__init__.py:17: os._exit"]),
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
