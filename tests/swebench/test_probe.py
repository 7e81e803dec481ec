"""The harness's pytest probe, run here in a plain pytest (no Docker): what it records for
annotated tests and for pytest runs nested inside the one it watches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from vibes_eval.benchmarks.swebench.integrity import PROBE_DIR

NESTED_FAILING = "def test_meant_to_fail():\n    assert False\n"


def probe_run(tmp_path: Path, test_file: Path) -> tuple[int, list[dict[str, Any]]]:
    """Run pytest on ``test_file`` with the probe as the harness loads it."""
    out = tmp_path / "probe.jsonl"
    env = {
        **os.environ,
        "VIBES_PROBE_OUT": str(out),
        "VIBES_PROBE_FILES": str(test_file),
        "PYTHONPATH": str(PROBE_DIR),
        "PYTEST_ADDOPTS": "-p vibes_swe_probe",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
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
    assert [r["event"] for r in records if r["event"] != "phase"] == ["start", "finish"]
    assert {n.split("::")[-1] for n in calls(records)} == {
        "test_subprocess_run",
        "test_in_process_run",
    }
    assert all(r["raw"] == "passed" for r in records if r["event"] == "phase"), records
