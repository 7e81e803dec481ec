"""`vibes eval run swe-bench` as a user runs it: options, results with the per-repository
breakdown, compare, and kill -9 then resume (every instance graded once, same reports)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.swebench.conftest import docker_or_skip, run_vibes

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def run_args(toy: dict[str, Path], work: Path, kind: str, run_id: str) -> list[str]:
    return [
        "eval", "run", "swe-bench", "--predictions", str(toy[kind]),
        "--dataset", str(toy["instances"]), "--specs", str(toy["specs"]),
        "--repos", str(toy["repos"]), "--log-dir", str(work / "logs"),
        "--report-dir", str(work), "--sandbox", "docker", "--store", str(work / "s.sqlite"),
        "--run-id", run_id, "--workers", "1", "--no-progress", "-o", str(work / f"{kind}.out.jsonl"),
    ]  # fmt: skip


def test_run_results_compare(toy: dict[str, Path], tmp_path: Path) -> None:
    docker_or_skip()
    for kind, run_id in (("gold", "g1"), ("partial", "p1")):
        proc = run_vibes(*run_args(toy, tmp_path, kind, run_id), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run_vibes("eval", "results", "g1", "--store", str(tmp_path / "s.sqlite"),
                     "--format", "json", cwd=tmp_path)  # fmt: skip
    detail = json.loads(proc.stdout)
    assert detail["metrics"]["resolved"] == 1.0
    assert detail["groups"] == [{"group": "vibes-toy/calc", "tasks": 2, "samples": 2,
                                 "passed": 2, "resolved": 1.0}]  # fmt: skip
    table = run_vibes("eval", "results", "g1", "--store", str(tmp_path / "s.sqlite"), cwd=tmp_path)
    assert "vibes-toy/calc" in table.stdout and "resolved" in table.stdout
    proc = run_vibes("eval", "compare", "g1", "p1", "--store", str(tmp_path / "s.sqlite"),
                     "--format", "json", cwd=tmp_path)  # fmt: skip
    cmp = json.loads(proc.stdout)
    assert cmp["tasks"] == 1  # paired per instance: p1 has a prediction for one of them
    row = next(m for m in cmp["metrics"] if m["metric"] == "resolved")
    assert row["a"] == 1.0 and row["b"] == 0.0
    assert (tmp_path / "toy__gold.g1.json").exists()


def test_unknown_setting_is_one_line(toy: dict[str, Path], tmp_path: Path) -> None:
    proc = run_vibes(*run_args(toy, tmp_path, "gold", "x1"), "--no-such-thing", "1", cwd=tmp_path)
    assert proc.returncode == 2 and "no_such_thing" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def _events(store: Path, run_id: str) -> dict[tuple[str, int], int]:
    import vibes_eval

    with vibes_eval.open_store(str(store)) as results:
        st = results._st()
        counts: dict[tuple[str, int], int] = {}
        for stored in st.sample_events(run_id):
            key = stored.event.result.key
            counts[key] = counts.get(key, 0) + 1
        return counts


def _reports(work: Path, run_id: str) -> dict[str, Any]:
    return {p.parent.name: json.loads(p.read_text())
            for p in (work / "logs" / run_id).glob("toy__gold/*/report.json")}  # fmt: skip


def test_kill_9_then_resume(
    toy: dict[str, Path], tmp_path: Path, evaluated: dict[str, Any]
) -> None:
    docker_or_skip()
    args = run_args(toy, tmp_path, "gold", "k1")
    proc = subprocess.Popen([sys.executable, "-m", "vibes_eval.cli.app", *args], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 600
    while not list((tmp_path / "logs").glob("k1/*/*/report.json")):
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _events(tmp_path / "s.sqlite", "k1")
    assert len(before) < 2, "killed too late: nothing left to resume"
    resumed = run_vibes("eval", "resume", "k1", "--store", str(tmp_path / "s.sqlite"),
                        "--no-progress", cwd=tmp_path)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = _events(tmp_path / "s.sqlite", "k1")
    assert after == {("vibes-toy__calc-1", 0): 1, ("vibes-toy__calc-2", 0): 1}
    # the same reports as an uninterrupted run of the same predictions
    _, work = evaluated["gold"]
    (uninterrupted,) = [p for p in (work / "logs").iterdir()]
    assert _reports(tmp_path, "k1") == _reports(work, uninterrupted.name)
    assert len(_reports(tmp_path, "k1")) == 2
    summary = json.loads((tmp_path / "toy__gold.k1.json").read_text())
    assert summary["resolved_ids"] == ["vibes-toy__calc-1", "vibes-toy__calc-2"]
