"""A real `vibes` process killed with SIGKILL, then resumed: the final verdicts and pass@k
equal an uninterrupted run's, and every sample has exactly one event. Ctrl-C (SIGINT) ends
a run as interrupted, and it resumes the same way; on SQLite and on PostgreSQL.

Kills land at moments defined by progress, not by the clock (so a slow or busy machine
sees the same sequence): as soon as the run or its resumption is recorded, and after a
number of new verdicts. VIBES_CRASH_SEED=N (fixed in `.ci/run`) picks those numbers;
a failure prints the seed that replays it."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, run_cli
from vibes_eval.store.base import StoreMissing, UnknownRun
from vibes_eval.store.events import RunResumed, RunStarted, SampleEvaluated
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

PROBLEMS = EXAMPLES / "sanity" / "problems.jsonl"
SAMPLES = EXAMPLES / "sanity" / "samples.jsonl"
N_SAMPLES = 50
MAX_KILLS = 5

pytestmark = pytest.mark.slow


def run_args(store: str, run_id: str, out: Path) -> list[str]:
    # --no-cache: every sample is really evaluated, so kills land mid-evaluation.
    return [
        "eval", "run", "humaneval-rust", "--problems", str(PROBLEMS), "--samples", str(SAMPLES),
        "--k", "1,5", "--sandbox", "process", "--timeout", "2", "-j", "2", "-o", str(out),
        "--store", store, "--run-id", run_id, "--no-cache", "--no-progress",
    ]  # fmt: skip


def start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "vibes_eval.cli.app", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, to clean up what it leaves behind
    )


def reap_group(proc: subprocess.Popen[str]) -> None:
    """Kill compilers and tests the dead evaluator left running."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def verdicts(path: Path) -> list[tuple[str, bool, str]]:
    """Per sample, in file order. Not the failure detail: batched compilation names the
    module a sample sat in, which depends on which samples shared its batch."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["task_id"], r["passed"], r["reason"]) for r in rows]


def sample_events(store: str, run_id: str) -> list[SampleEvaluated]:
    with open_store(resolve(store), create=False) as st:
        found = [e.event for e in st.sample_events(run_id)]
    assert all(isinstance(e, SampleEvaluated) for e in found)
    return found  # type: ignore[return-value]


def metrics(store: str, run_id: str) -> dict[str, Any]:
    proc = run_cli("eval", "results", run_id, "--store", store, "-f", "json", check=True)
    return json.loads(proc.stdout)["metrics"]


def assert_exactly_once(store: str, run_id: str) -> None:
    events = sample_events(store, run_id)
    keys = Counter((e.task_id, e.index) for e in events)
    assert len(events) == N_SAMPLES and max(keys.values()) == 1, keys.most_common(3)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """An uninterrupted run: its results file and metrics."""
    tmp = tmp_path_factory.mktemp("reference")
    store, out = str(tmp / "ref.sqlite"), tmp / "ref.jsonl"
    run_cli(*run_args(store, "ref", out), check=True, timeout=300)
    return out, metrics(store, "ref")


class Recorded:
    """What a run has in the store (verdicts, starts and resumptions), polled while
    another process writes."""

    def __init__(self, store: str, run_id: str) -> None:
        self.spec, self.run_id, self.store = store, run_id, None

    def _open(self) -> bool:
        if self.store is None:
            try:
                self.store = open_store(resolve(self.spec), create=False)
            except StoreMissing:  # nothing recorded yet
                return False
        return True

    def __call__(self) -> int:
        """Verdicts recorded."""
        if not self._open():
            return 0
        try:
            return self.store.run(self.run_id).n_done  # type: ignore[union-attr]
        except UnknownRun:
            return 0

    def starts(self) -> int:
        """RunStarted and RunResumed events: one per process that took the run."""
        if not self._open():
            return 0
        kinds = (RunStarted, RunResumed)
        return sum(isinstance(e.event, kinds) for e in self.store.events(self.run_id))  # type: ignore[union-attr]

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def wait_until(done: Callable[[], bool], proc: subprocess.Popen[str], what: str) -> bool:
    """Poll ``done`` until it holds (True) or ``proc`` exits (False: it finished first).

    Raises: AssertionError after 120 s, naming ``what``."""
    deadline = time.monotonic() + 120
    while not done():
        if proc.poll() is not None:
            return False
        assert time.monotonic() < deadline, f"waited 120 s for {what}"
        time.sleep(0.01)
    return True


# Where each attempt is killed, and how it evaluates (batching is not part of a run's
# identity: both paths are crashed, one verdict at a time and a whole batch at once).
PLAN = [
    ("start-up", "--no-batch"),  # as soon as the run is recorded
    ("verdicts", "--no-batch"),  # after a few new verdicts
    ("start-up", "--batch"),  # as soon as the resumption is recorded
    ("verdicts", "--batch"),  # once a batch's verdicts arrive
    ("verdicts", "--no-batch"),
]


def test_kill_9_at_chosen_moments_then_resume(
    store_spec: str, tmp_path: Path, reference: tuple[Path, dict[str, Any]]
) -> None:
    seed = int(os.environ.get("VIBES_CRASH_SEED") or random.randrange(1 << 30))
    rng = random.Random(seed)
    out = tmp_path / "crash.jsonl"
    args = run_args(store_spec, "crash", out)
    recorded = Recorded(store_spec, "crash")
    kills, progress = 0, []
    try:
        for moment, mode in PLAN:
            starts, before = recorded.starts(), recorded()
            wanted = rng.randint(1, 4)
            proc = start([*args, mode])
            if moment == "start-up":
                target = starts + 1
                alive = wait_until(lambda t=target: recorded.starts() >= t, proc, "the start")
            else:
                target = before + wanted
                alive = wait_until(lambda t=target: recorded() >= t, proc, "new verdicts")
            if not alive:
                proc.communicate()
                break  # finished before its kill: fine, the run is complete
            proc.kill()  # SIGKILL: no handler runs, no end event is written
            proc.communicate()
            reap_group(proc)
            kills += 1
            progress.append(recorded())
            if kills == 1:
                listed = run_cli("eval", "results", "--store", store_spec, "-f", "json", check=True)
                (row,) = json.loads(listed.stdout)
                assert row["status"] == "interrupted", "a dead run must not show as running"
    finally:
        recorded.close()
    note = f"VIBES_CRASH_SEED={seed}: {kills} kills, samples recorded after each: {progress}"
    print(note)
    assert kills >= 2, note  # the first two land long before 50 lone samples are done
    assert progress == sorted(progress), note  # nothing recorded is ever lost
    assert progress[-1] < N_SAMPLES, note
    final = run_cli("eval", "resume", "crash", "--store", store_spec, "--no-cache",
                    "--no-progress", "-j", "2", timeout=300)  # fmt: skip
    assert final.returncode == 0, note + "\n" + final.stderr
    ref_out, ref_metrics = reference
    assert_exactly_once(store_spec, "crash")
    assert verdicts(out) == verdicts(ref_out), note
    assert metrics(store_spec, "crash") == ref_metrics, note
    with open_store(resolve(store_spec), create=False) as st:
        assert st.run("crash").status == "completed"


def test_ctrl_c_records_an_interruption_and_resume_finishes(
    store_spec: str, tmp_path: Path, reference: tuple[Path, dict[str, Any]]
) -> None:
    out = tmp_path / "int.jsonl"
    # One verdict at a time: five of fifty leave most of the run to interrupt.
    proc = start([*run_args(store_spec, "int", out), "--no-batch"])
    recorded = Recorded(store_spec, "int")
    try:
        assert wait_until(lambda: recorded() >= 5, proc, "five verdicts"), "finished early"
    finally:
        recorded.close()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    reap_group(proc)
    assert proc.returncode == 130, stderr
    assert "vibes eval resume int" in stderr
    with open_store(resolve(store_spec), create=False) as st:
        types = [e.event.type for e in st.events("int")]
        assert types[-1] == "run_interrupted" and st.run("int").status == "interrupted"
    done = len(sample_events(store_spec, "int"))
    assert 5 <= done < N_SAMPLES
    again = run_cli(*run_args(store_spec, "int", out), timeout=300)  # the same command resumes
    assert again.returncode == 0, again.stderr
    assert f"{done} of {N_SAMPLES} samples already evaluated" in again.stderr
    assert_exactly_once(store_spec, "int")
    assert verdicts(out) == verdicts(reference[0])
    assert metrics(store_spec, "int") == reference[1]
