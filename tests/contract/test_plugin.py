"""A benchmark from another installed package: `tests/contract/plugin` (stdio-python) is
pip-installed into a folder of its own, registers itself under the `vibes_eval.benchmarks`
entry-point group, and is listed and run end to end by `vibes eval run`, sandboxed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).with_name("plugin")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    # Built from a copy: setuptools writes build/ and egg-info beside the sources.
    source = shutil.copytree(PLUGIN, build / "plugin")
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
           "--target", str(target), str(source)]  # fmt: skip
    env = {**os.environ, "PIP_NO_INDEX": "1", "TMPDIR": str(build)}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return target


def _vibes(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site), "COLUMNS": "200"}
    cmd = [sys.executable, "-m", "vibes_eval.cli.app", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_an_installed_benchmark_is_listed(site: Path, tmp_path: Path) -> None:
    out = _vibes(site, "eval", "run", "--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "stdio-python" in out.stdout


def test_an_installed_benchmark_runs_end_to_end(site: Path, tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    out = _vibes(site, "eval", "run", "stdio-python", "--samples", str(PLUGIN / "samples.jsonl"),
                 "--k", "1", "--timeout", "2", "--store", "none", "-o", str(results),
                 cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    by_line = [(r["task_id"], r["reason"]) for r in rows]
    assert by_line == [
        ("stdio/sum", "passed"),
        ("stdio/sum", "failed"),  # prints 6 for every input: the second case says no
        ("stdio/reverse", "passed"),
        ("stdio/reverse", "timeout"),
    ]
    assert "pass@1" in out.stdout


def test_an_unknown_name_lists_the_installed_ones(site: Path, tmp_path: Path) -> None:
    out = _vibes(site, "eval", "run", "nosuch", "--samples", "x.jsonl", cwd=tmp_path)
    assert out.returncode == 2
    assert "stdio-python" in out.stderr + out.stdout
