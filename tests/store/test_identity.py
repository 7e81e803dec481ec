"""What a run is, and when a verdict can be reused: a resume is refused, naming what
differs, and no cached verdict is reused when the toolchain, the runner, its isolation
level, the problem or the sample changed. A run whose process is alive is not taken over
twice; a recorded pid that now belongs to another process is not mistaken for it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, run_cli
from tests.store.conftest import started
from vibes_eval import evaluation
from vibes_eval.api import make_config
from vibes_eval.core.errors import UserError
from vibes_eval.core.types import SampleResult
from vibes_eval.runners.local import ProcessRunner
from vibes_eval.runs import code, lifecycle, process
from vibes_eval.runs.summary import status_of
from vibes_eval.store.base import StoreMissing, UnknownRun
from vibes_eval.store.events import RunStarted
from vibes_eval.store.recorder import StoreRecorder
from vibes_eval.store.sql import SqlStore, open_store
from vibes_eval.store.urls import resolve
from vibes_eval.store.writer import GroupWriter

PROBLEMS = EXAMPLES / "sanity" / "problems.jsonl"
GOOD = {"Sanity/0": "    a + b\n}\n", "Sanity/1": "    n % 2 == 0\n}\n"}

pytestmark = pytest.mark.slow


def write_samples(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"task_id": t, "completion": c}) + "\n" for t, c in rows))
    return path


def changed_problems(path: Path) -> Path:
    """The sanity problems with Sanity/1's tests extended: the same ids, other content."""
    rows = [json.loads(line) for line in PROBLEMS.read_text().splitlines()]
    for row in rows:
        if row["task_id"] == "Sanity/1":
            row["test"] = row["test"].replace(
                "assert!(is_even(4));", "assert!(is_even(4));\n        assert!(is_even(0));"
            )
            assert "is_even(0)" in row["test"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    rows = [("Sanity/0", GOOD["Sanity/0"]), ("Sanity/1", GOOD["Sanity/1"])]
    problems = tmp_path / "problems.jsonl"
    problems.write_bytes(PROBLEMS.read_bytes())
    return {
        "problems": problems,
        "samples": write_samples(tmp_path / "samples.jsonl", rows),
        "other_samples": write_samples(
            tmp_path / "other.jsonl", [rows[0], ("Sanity/1", "    n % 2 == 0 // same\n}\n")]
        ),
        "other_problems": changed_problems(tmp_path / "other_problems.jsonl"),
    }


def evaluate(store: str, samples: Path, problems: Path, run_id: str, *extra: str) -> Any:
    return run_cli(
        "eval", "run", "humaneval-rust", "--problems", str(problems), "--samples", str(samples),
        "--k", "1", "--timeout", "5", "--store", store, "--run-id", run_id, "--no-progress",
        "-o", str(samples.parent / f"{run_id}.jsonl"), *extra,
    )  # fmt: skip


def cached(store: str, run_id: str) -> int:
    """How many of the run's verdicts came from the cache."""
    with open_store(resolve(store), create=False) as st:
        rows = st.samples(run_id)
    assert len(rows) == 2
    return sum(r.cached for r in rows)


def test_resume_refuses_and_the_cache_misses_what_changed(
    tmp_path: Path, inputs: dict[str, Path]
) -> None:
    store_spec = str(tmp_path / "store.sqlite")  # the cache on PostgreSQL: test_cli_store
    samples, problems = inputs["samples"], inputs["problems"]
    first = evaluate(store_spec, samples, problems, "r1", "--sandbox", "process")
    assert first.returncode == 0, first.stderr
    assert cached(store_spec, "r1") == 0

    # Resuming r1 with anything that changes verdicts is refused, naming it.
    refusals = {
        "samples file content": (inputs["other_samples"], problems, "process"),
        "problems file content": (samples, inputs["other_problems"], "process"),
        "runner (stored 'process', now 'landlock')": (samples, problems, "landlock"),
    }
    for needle, (s, p, sandbox) in refusals.items():
        proc = evaluate(store_spec, s, p, "r1", "--sandbox", sandbox)
        assert proc.returncode == 2, (needle, proc.stderr)
        assert needle in proc.stderr and proc.stderr.count("\n") == 1, (needle, proc.stderr)

    # New runs: the same inputs reuse both verdicts; a changed problem, sample or runner
    # reuses none of what it touches.
    runs_ = {
        "same": (samples, problems, "process", 2),
        "problem": (samples, inputs["other_problems"], "process", 1),  # Sanity/0 unchanged
        "sample": (inputs["other_samples"], problems, "process", 1),
        "runner": (samples, problems, "landlock", 0),
    }
    for run_id, (s, p, sandbox, hits) in runs_.items():
        proc = evaluate(store_spec, s, p, run_id, "--sandbox", sandbox)
        assert proc.returncode == 0, proc.stderr
        assert cached(store_spec, run_id) == hits, run_id


# -- toolchain and isolation level: set through the run's identity ----------------------


@pytest.fixture
def recorded(store: SqlStore, inputs: dict[str, Path]) -> Iterator[tuple[RunStarted, Any]]:
    """A real run's RunStarted (this toolchain, the process runner) with both samples
    recorded, and the evaluation it came from."""
    config = make_config("humaneval-rust", {"problems": str(inputs["problems"])})
    prepared = evaluation.prepare("humaneval-rust", config, inputs["samples"])
    runner = ProcessRunner()
    start = lifecycle.run_started(
        "r", benchmark=prepared.benchmark, tasks=prepared.tasks, samples=prepared.samples,
        samples_path=inputs["samples"], runner=runner, ks=[1], labels={},
    )  # fmt: skip
    with GroupWriter(store) as writer:
        lifecycle.begin(store, writer, start, resume=False)
        recorder = StoreRecorder(store, writer, start, prepared.tasks, prepared.samples)
        for s in prepared.samples:
            recorder.record(
                SampleResult(task_id=s.task_id, index=s.index, passed=True, reason="passed",
                             completion_hash=s.completion_hash)
            )  # fmt: skip
    yield start, prepared


@pytest.mark.parametrize(
    "change,named",
    [
        ({"toolchain": {"rustc": "rustc 1.0.0 (an older one) x86_64-unknown-linux-gnu"}},
         "toolchain.rustc"),
        ({"isolation": "container"}, "isolation"),
        ({"runner": "bwrap"}, "runner"),
    ],
)  # fmt: skip
def test_toolchain_runner_and_isolation_are_part_of_the_run(
    store: SqlStore, recorded: tuple[RunStarted, Any], change: dict[str, Any], named: str
) -> None:
    start, prepared = recorded
    if "toolchain" in change:
        change = {"toolchain": {**start.toolchain, **change["toolchain"]}}
    other = start.model_copy(update=change)
    with GroupWriter(store) as writer:
        with pytest.raises(UserError, match=f"was started with other settings: {named} "):
            lifecycle.begin(store, writer, other, resume=True)

        def hits(s: RunStarted) -> int:
            return StoreRecorder(
                store, writer, s.model_copy(update={"run_id": "new"}), prepared.tasks,
                prepared.samples,
            ).cache_hits_pending  # fmt: skip

        assert hits(start) == len(prepared.samples)  # unchanged: every verdict reusable
        assert hits(other) == 0


def test_verdicts_judged_by_other_code_are_not_reused(
    store: SqlStore, recorded: tuple[RunStarted, Any]
) -> None:
    """The code that judged is part of the cache context: after an upgrade that fixes a
    judge, its earlier verdicts are evaluated again, not served (runs/code.py)."""
    start, prepared = recorded
    assert start.judge_code == code.fingerprint() and len(start.judge_code) == 16
    with GroupWriter(store) as writer:

        def hits(s: RunStarted) -> int:
            return StoreRecorder(
                store, writer, s.model_copy(update={"run_id": "new"}), prepared.tasks,
                prepared.samples,
            ).cache_hits_pending  # fmt: skip

        assert hits(start) == len(prepared.samples)
        assert hits(start.model_copy(update={"judge_code": "0" * 16})) == 0


# -- the process that holds a run ------------------------------------------------------


def test_a_live_run_is_not_taken_over_and_a_reused_pid_is_not_it(store: SqlStore) -> None:
    holder = subprocess.Popen(["sleep", "120"])  # stands for the process evaluating
    try:
        host, token = process.host(), process.start_token(holder.pid)
        assert token
        store.append([started("live", host=host, pid=holder.pid, proc_start=token)])
        # The same pid, recorded with another start time: the run's process died and the
        # kernel gave its pid to this one.
        store.append([started("reused", host=host, pid=holder.pid, proc_start=token + "0")])
        assert status_of(store.run("live")) == "running"
        assert status_of(store.run("reused")) == "interrupted"
        with GroupWriter(store) as writer:
            with pytest.raises(UserError, match=rf"being evaluated right now \(pid {holder.pid} "):
                lifecycle.begin(store, writer, started("live"), resume=True)
            opened = lifecycle.begin(store, writer, started("reused"), resume=True)
        assert opened.resumed and not opened.finished
        assert store.run("reused").pid != holder.pid  # taken over by this process
    finally:
        holder.kill()
        holder.wait()
    assert status_of(store.run("live")) == "interrupted"  # its process is gone now


def test_the_same_command_twice_at_once_is_refused(tmp_path: Path) -> None:
    """A second `vibes eval run --run-id X` while the first still evaluates X."""
    loop = "    loop { std::hint::black_box(0u8); }\n}\n"
    samples = write_samples(tmp_path / "s.jsonl", [("Sanity/0", loop)])
    store = str(tmp_path / "s.sqlite")
    args = ["eval", "run", "humaneval-rust", "--problems", str(PROBLEMS), "--samples",
            str(samples), "--k", "1", "--timeout", "120", "--sandbox", "process",
            "--store", store, "--run-id", "twice", "--no-progress", "--no-cache"]  # fmt: skip
    first = subprocess.Popen(
        [sys.executable, "-m", "vibes_eval.cli.app", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:  # until the run is recorded as started by `first`
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            try:
                with open_store(resolve(store), create=False) as st:
                    if st.run("twice").pid == first.pid:
                        break
            except (StoreMissing, UnknownRun):  # not recorded yet
                pass
            time.sleep(0.05)
        second = run_cli(*args)
        assert second.returncode == 2, second.stderr
        assert f"being evaluated right now (pid {first.pid} on " in second.stderr
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    assert first.returncode == 130
