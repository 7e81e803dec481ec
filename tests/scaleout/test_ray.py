"""--executor ray on a real Ray cluster of several nodes on this machine (each node its own
`ray start` process, one CPU each): the same verdicts as a local run, also when a worker
node's raylet is killed mid-run or the driver is; placement by GPU; a need no node meets
is reported, not waited for; a node whose sandbox does not work sits the run out.

One cluster for the module (a node takes seconds to start): the head ("head", no GPU), a
node with a (declared) H100 ("gpu", through VIBES_GPUS) and one whose bwrap is broken
("nobwrap"). Every process the cluster started is ended afterwards.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.components import need, skip_reason

try:
    import ray  # noqa: F401
except ImportError:
    pytest.skip(
        skip_reason("ray", "the ray extra is not installed (pip install -e '.[ray]')"),
        allow_module_level=True,
    )

from tests.conftest import EXAMPLES, HUMANEVAL_X_RUST, ROOT, SANDBOX
from tests.scaleout import toy
from vibes_eval import api
from vibes_eval.core import registry
from vibes_eval.core.types import Reason
from vibes_eval.scaleout.local_cluster import LocalCluster, NodeProcess, _children, _comm
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _uses_ray() -> None:
    need("ray", None)


# What a node's broken bubblewrap says (unprivileged user namespaces turned off).
BROKEN_BWRAP = "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    bin_dir = tmp_path_factory.mktemp("nobwrap")
    (bin_dir / "bwrap").write_text(BROKEN_BWRAP)
    (bin_dir / "bwrap").chmod(0o755)
    c = LocalCluster(num_cpus=1, env={"PYTHONPATH": str(ROOT)})  # the toy benchmark
    try:
        c.start(env={"VIBES_TEST_NODE": "head", "VIBES_GPUS": ""})
        c.add_worker(env={"VIBES_TEST_NODE": "gpu", "VIBES_GPUS": "0:Fake H100:9.0"})
        c.add_worker(
            env={"VIBES_TEST_NODE": "nobwrap", "VIBES_GPUS": "",
                 "PATH": f"{bin_dir}:{os.environ['PATH']}"}
        )  # fmt: skip
        yield c
    finally:
        c.stop()


# -- HumanEval-X Rust (or the sanity set without ../shared), through the CLI ------------------


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(problems, samples): 30 HumanEval-X tasks with their canonical solutions and ten
    broken ones, or the sanity set's 50 samples."""
    if not HUMANEVAL_X_RUST.exists():
        return EXAMPLES / "sanity" / "problems.jsonl", EXAMPLES / "sanity" / "samples.jsonl"
    with gzip.open(HUMANEVAL_X_RUST, "rt") as fh:
        problems = [json.loads(line) for line in fh][:30]
    rows = [{"task_id": p["task_id"], "completion": p["canonical_solution"]} for p in problems]
    broken = ['    panic!("no")\n}\n', "    undefined_thing()\n}\n"]
    rows += [
        {"task_id": p["task_id"], "completion": broken[i % 2]} for i, p in enumerate(problems[:10])
    ]
    samples = tmp_path_factory.mktemp("hx") / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return HUMANEVAL_X_RUST, samples


def vibes(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "vibes_eval.cli.app", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 500) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out
    return out


def run_args(dataset: tuple[Path, Path], out: Path, *extra: str) -> list[str]:
    problems, samples = dataset
    return ["eval", "run", "humaneval-rust", "--problems", str(problems), "--samples",
            str(samples), "--k", "1", "--sandbox", SANDBOX, "--no-progress", "--no-cache",
            "--output", str(out), *extra]  # fmt: skip


def verdicts(results_file: Path) -> dict[tuple[str, int], tuple[bool, str, str]]:
    rows = [json.loads(line) for line in results_file.open()]
    return {(r["task_id"], i): (r["passed"], r["reason"], r["result"]) for i, r in enumerate(rows)}


@pytest.fixture(scope="module")
def local_verdicts(
    dataset: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, int], tuple[bool, str, str]]:
    out = tmp_path_factory.mktemp("local") / "results.jsonl"
    finish(vibes(*run_args(dataset, out, "--store", "none")))
    return verdicts(out)


def test_the_same_verdicts_through_ray_as_locally(
    cluster: LocalCluster, dataset: tuple[Path, Path], local_verdicts: dict, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    args = run_args(dataset, out, "--store", "none", "--executor", "ray")
    finish(vibes(*args, "--ray-address", cluster.address))
    assert verdicts(out) == local_verdicts
    # Ray Client: nothing streams, each unit's verdicts come back at its end.
    (tmp_path / "results.jsonl").unlink()
    finish(vibes(*args, "--ray-address", cluster.client_address, "--no-batch"))
    assert verdicts(out) == local_verdicts


def recorded(store: Path, run_id: str) -> list[Any]:
    """The run's SampleEvaluated events, read while another process may be writing."""
    try:
        with open_store(resolve(str(store)), create=False) as st:
            return [e.event.result for e in st.sample_events(run_id)]
    except Exception:  # not created yet, or the run not started yet
        return []


def wait_for(check: Callable[[], bool], what: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 300
    while not check():
        if proc.poll() is not None:
            pytest.fail(
                f"the run ended before {what}:\n{proc.stdout.read() if proc.stdout else ''}"
            )
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no {what} in 300 s")
        time.sleep(0.2)


def busy(node: NodeProcess) -> bool:
    """Whether a unit runs on ``node``: a compile of a sample or of a test program (rustc
    on a source file), or a pair run (the test binary ``tests``, the candidate ``cand``),
    not the toolchain checks of a worker starting up."""
    for pid, _ in _children(node.proc.pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        comm = _comm(pid)
        if comm in ("tests", "cand") or (comm == "rustc" and any(a.endswith(b".rs") for a in argv)):
            return True
    return False


def assert_each_sample_once(store: Path, run_id: str, expected: dict) -> None:
    results = recorded(store, run_id)
    keys = [r.key for r in results]
    assert len(keys) == len(set(keys)) == len(expected), "a sample graded twice or not at all"
    assert not [r for r in results if r.reason == Reason.INFRA]


def test_a_worker_node_killed_mid_run_loses_only_its_units(
    cluster: LocalCluster, dataset: tuple[Path, Path], local_verdicts: dict, tmp_path: Path
) -> None:
    victim = cluster.add_worker(env={"VIBES_TEST_NODE": "victim"})
    store, out = tmp_path / "s.sqlite", tmp_path / "results.jsonl"
    proc = vibes(*run_args(dataset, out, "--store", str(store), "--run-id", "node-dies",
                           "--executor", "ray", "--ray-address", cluster.address, "--no-batch"))  # fmt: skip
    try:
        wait_for(lambda: len(recorded(store, "node-dies")) >= 3, "progress in the store", proc)
        wait_for(lambda: busy(victim), "a unit on the victim node", proc)
        cluster.kill_raylet(victim)
        report = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "lost with their worker and run again elsewhere" in report, report
    assert verdicts(out) == local_verdicts
    assert_each_sample_once(store, "node-dies", local_verdicts)


def test_a_driver_killed_mid_run_resumes_like_a_local_run(
    cluster: LocalCluster, dataset: tuple[Path, Path], local_verdicts: dict, tmp_path: Path
) -> None:
    store, out = tmp_path / "s.sqlite", tmp_path / "results.jsonl"
    ray = ("--executor", "ray", "--ray-address", cluster.address)
    proc = vibes(*run_args(dataset, out, "--store", str(store), "--run-id", "driver-dies",
                           *ray, "--no-batch"))  # fmt: skip
    try:
        wait_for(lambda: len(recorded(store, "driver-dies")) >= 5, "progress in the store", proc)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert len(recorded(store, "driver-dies")) < len(local_verdicts)
    finish(vibes("eval", "resume", "driver-dies", "--store", str(store), "--no-progress", *ray))
    assert verdicts(out) == local_verdicts
    assert_each_sample_once(store, "driver-dies", local_verdicts)


# -- placement, refusals, bounded retries: the toy benchmark, in this process ----------------


@pytest.fixture
def toy_run(cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch) -> Callable[..., api.Outcome]:
    monkeypatch.setitem(registry.BENCHMARKS, toy.NAME, toy.TARGET)

    def run(completions: dict[str, list[str]], **kw: Any) -> api.Outcome:
        config = {"tasks": len(completions), **kw.pop("config", {})}
        rows = [{"task_id": t, "completion": c} for t, cs in completions.items() for c in cs]
        return api.evaluate(toy.NAME, rows, config=config, executor="ray",
                            ray_address=cluster.address, sandbox=kw.pop("sandbox", SANDBOX),
                            ks=[1], **kw)  # fmt: skip

    return run


def test_units_go_where_their_gpu_is_and_a_need_no_node_meets_is_reported(
    toy_run: Callable[..., api.Outcome],
) -> None:
    completions = {f"T/{i}": ["pass", "pass"] for i in range(6)}
    outcome = toy_run(completions, config={"gpu": {"T/0": 9.0, "T/1": 8.0, "T/2": 10.0}})
    by_task: dict[str, list[Any]] = {}
    for r in outcome.ordered:
        by_task.setdefault(r.task_id, []).append(r)
    assert {r.details["node"] for t in ("T/0", "T/1") for r in by_task[t]} == {"gpu"}
    for r in by_task["T/2"]:  # compute capability 10: no node has it
        assert r.reason == Reason.INFRA
        assert "CUDA GPU of compute capability >= 10" in r.detail
        assert "no node of the Ray cluster has it" in r.detail
    assert all(r.passed for t in ("T/0", "T/1", "T/3", "T/4", "T/5") for r in by_task[t])


def test_a_node_whose_sandbox_does_not_work_takes_no_units_and_says_so_once(
    toy_run: Callable[..., api.Outcome],
) -> None:
    outcome = toy_run({f"T/{i}": ["pass", "sleep:0.2", "fail"] for i in range(4)}, sandbox="bwrap")
    nodes = {r.details["node"] for r in outcome.ordered}
    assert "nobwrap" not in nodes and nodes <= {"head", "gpu"}
    said = [n for n in outcome.notes if "takes no units" in n]
    assert len(said) == 1 and "bwrap" in said[0], outcome.notes
    assert [r.passed for r in outcome.ordered] == [True, True, False] * 4


def test_a_unit_that_kills_every_worker_it_touches_becomes_an_infra_error(
    toy_run: Callable[..., api.Outcome],
) -> None:
    outcome = toy_run({"T/0": ["pass"], "T/1": ["die"], "T/2": ["pass", "fail"]})
    res = {r.key: r for r in outcome.ordered}
    assert res[("T/1", 0)].reason == Reason.INFRA
    assert "lost with the worker running it 3 times" in res[("T/1", 0)].detail
    assert res[("T/0", 0)].passed and res[("T/2", 0)].passed and not res[("T/2", 1)].passed
