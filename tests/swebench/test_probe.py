"""The harness's pytest probe, run here in a plain pytest (no Docker): what it records for
annotated tests and for pytest runs nested inside the one it watches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vibes_eval.benchmarks.swebench.integrity import PROBE_DIR

NESTED_FAILING = "def test_meant_to_fail():\n    assert False\n"


def probe_run(tmp_path: Path, test_file: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    """Run pytest on ``test_file`` with the probe as the harness loads it."""
    out = tmp_path / "probe.jsonl"
    env = {
        **os.environ,
        "VIBES_PROBE_OUT": str(out),
        "VIBES_PROBE_FILES": str(test_file),
        "PYTHONPATH": f"{PROBE_DIR}:{tmp_path}",
        "PYTEST_ADDOPTS": "-p vibes_swe_probe",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, str(test_file)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    lines = out.read_text().splitlines() if out.exists() else []
    return proc.returncode, [json.loads(line) for line in lines]


def calls(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["nodeid"]: r for r in records if r.get("event") == "phase" and r["when"] == "call"}


def test_probe_ignores_parameter_annotations(tmp_path: Path) -> None:
    """An annotation names a type the test's body never uses (``pytester: Pytester``):
    the function that ran is still the one its file defines."""
    test = tmp_path / "test_annotated.py"
    test.write_text(
        "from pathlib import Path\nimport typing\n\nDEFAULT = 3\n\n\n"
        "def test_annotated(tmp_path: Path, n: int = DEFAULT) -> None:\n"
        "    local: typing.Any = tmp_path\n"
        "    assert local.exists() and n == 3\n"
    )
    code, records = probe_run(tmp_path, test)
    assert code == 0
    (rec,) = calls(records).values()
    assert rec["raw"] == "passed" and rec["function"] == "same", rec


def test_probe_records_only_the_outermost_session(tmp_path: Path) -> None:
    """pytest's own tests start pytest runs, in a subprocess or in-process, whose failures
    are intended: the probe records the run the harness started, nothing else."""
    inner = tmp_path / "inner" / "test_inner.py"
    inner.parent.mkdir()
    inner.write_text(NESTED_FAILING)
    test = tmp_path / "test_outer.py"
    test.write_text(
        "import subprocess, sys\n\nimport pytest\n\n\n"
        "def test_subprocess_run():\n"
        f"    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', {str(inner)!r}])\n"
        "    assert proc.returncode == 1\n\n\n"
        "def test_in_process_run():\n"
        f"    assert pytest.main(['-q', '-p', 'vibes_swe_probe', {str(inner)!r}]) == 1\n"
    )
    code, records = probe_run(tmp_path, test)
    assert code == 0
    events = [r["event"] for r in records if r["event"] in ("start", "finish")]
    assert events == ["start", "finish"]
    assert {r["nodeid"].split("::")[-1] for r in records if r["event"] == "func"} == {
        "test_subprocess_run",
        "test_in_process_run",
    }
    assert {n.split("::")[-1] for n in calls(records)} == {
        "test_subprocess_run",
        "test_in_process_run",
    }
    assert all(r["raw"] == "passed" for r in records if r["event"] == "phase"), records


# pytest's own runner rewritten (what a patch to pytest-dev/pytest's src/_pytest/runner.py
# or python.py can do): the exception is cleared before any hook sees it, or swallowed
# where the function is called, or the function is never called.
RUNNER_FORGERIES = {
    "clear_exception_in_callinfo": (
        "import _pytest.runner as r\n"
        "orig = r.CallInfo.from_call.__func__\n"
        "def from_call(cls, func, when, reraise=None):\n"
        "    info = orig(cls, func, when, reraise)\n"
        "    info.excinfo = None\n"
        "    return info\n"
        "r.CallInfo.from_call = classmethod(from_call)\n"
    ),
    "swallow_in_pyfunc_call": (
        "import pytest\n"
        "@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_pyfunc_call(pyfuncitem):\n"
        "    try:\n"
        "        pyfuncitem.obj(**{a: pyfuncitem.funcargs[a]\n"
        "                          for a in pyfuncitem._fixtureinfo.argnames})\n"
        "    except Exception:\n"
        "        pass\n"
        "    return True\n"
    ),
    "never_call_the_function": (
        "import pytest\n"
        "@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_pyfunc_call(pyfuncitem):\n"
        "    return True\n"
    ),
}


@pytest.mark.parametrize("attack", sorted(RUNNER_FORGERIES))
def test_probe_sees_the_function_under_a_rewritten_runner(tmp_path: Path, attack: str) -> None:
    """The runner's own code reports a failing test as passed: the phase record (read
    from the runner's call information) is fooled, the function's own record is not."""
    (tmp_path / "forged_runner.py").write_text(RUNNER_FORGERIES[attack])
    test = tmp_path / "test_fails.py"
    test.write_text("def test_fails():\n    assert 1 == 2\n")
    code, records = probe_run(tmp_path, test, "-p", "forged_runner")
    assert code == 0  # the forged runner reports a pass
    (call,) = calls(records).values()
    assert call["raw"] == "passed"
    assert any(r["event"] == "wrapped" for r in records)
    own = [r["raw"] for r in records if r["event"] == "func"]
    assert own == ([] if attack == "never_call_the_function" else ["failed"])
