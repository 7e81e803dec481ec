"""`--executor` and `--ray-address` as a user meets them: one line for every mistake, before
anything is recorded."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.components import skip_reason
from tests.conftest import EXAMPLES, run_cli

SANITY = EXAMPLES / "sanity"


def run(tmp_path: Path, *extra: str):
    return run_cli("eval", "run", "humaneval-rust", "--problems", str(SANITY / "problems.jsonl"),
                   "--samples", str(SANITY / "samples.jsonl"), "--store", str(tmp_path / "s.db"),
                   "--output", str(tmp_path / "r.jsonl"), "--no-progress", *extra,
                   timeout=120)  # fmt: skip


def test_an_unknown_executor_is_one_line(tmp_path: Path) -> None:
    proc = run(tmp_path, "--executor", "slurm")
    assert proc.returncode == 2
    assert (
        proc.stderr.strip() == "vibes: error: unknown executor 'slurm'; choose one of: local, ray"
    )
    assert not (tmp_path / "s.db").exists()


def test_a_ray_address_without_the_ray_executor_is_refused(tmp_path: Path) -> None:
    proc = run(tmp_path, "--ray-address", "auto")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "vibes: error: --ray-address auto needs --executor ray"


@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason=skip_reason("ray", "the ray extra is not installed"),
)
def test_a_cluster_that_is_not_there_fails_at_once(tmp_path: Path) -> None:
    proc = run(tmp_path, "--executor", "ray", "--ray-address", "127.0.0.9:1")
    assert proc.returncode == 2
    assert "cannot reach the Ray cluster at 127.0.0.9:1" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    proc = run(tmp_path, "--executor", "ray", "--ray-address", "nonsense")
    assert proc.returncode == 2
    assert "expected auto, HOST:PORT or ray://HOST:PORT" in proc.stderr
