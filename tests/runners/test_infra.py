"""The pieces under the sandbox runners: the launcher, spawn, cgroups, work-dir quotas and
the clean-up of what a crashed run left behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.runners.conftest import live_processes, nonce
from vibes_eval.core.runner import SessionSpec
from vibes_eval.core.types import Limits, Termination
from vibes_eval.runners import cgroups, quota, spawn
from vibes_eval.runners.launcher import launcher_path
from vibes_eval.runners.local import LocalRunner, ProcessRunner

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (cgroups, mounts)")


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _run(argv: list[str], **kw: object) -> spawn.RawExit:
    return spawn.run(argv, env=None, cwd=None, timeout_s=5, output_cap=1 << 16, **kw)  # type: ignore[arg-type]


def test_launcher_probe_reports_kernel_features() -> None:
    out = subprocess.run([str(launcher_path()), "--probe"], capture_output=True, text=True)
    info = dict(item.split("=") for item in out.stdout.split())
    assert int(info["landlock_abi"]) >= 0 and info["seccomp"] in ("0", "1")


def test_launcher_errors_arrive_on_their_own_pipe() -> None:
    launcher = str(launcher_path())
    raw = _run([launcher, "--bogus", "--", "true"], launcher_errors=True)
    assert raw.launch_error == "vibes-launch: unknown option: --bogus"
    # A job printing the same words is just a job printing words.
    fake = "echo 'vibes-launch: unknown option' >&2; exit 125"
    raw = _run([launcher, "--", "sh", "-c", fake], launcher_errors=True)
    assert raw.launch_error == "" and raw.exit_code == 125


def test_spawn_feeds_large_stdin_without_blocking() -> None:
    data = os.urandom(1 << 20)
    raw = _run(["sh", "-c", "sleep 0.2; wc -c"], stdin=data)
    assert raw.stdout.strip() == str(len(data)).encode()
    raw = _run(["true"], stdin=data)  # never reads: no hang, no error
    assert raw.exit_code == 0


def test_process_runner_is_not_a_sandbox_but_limits() -> None:
    runner = ProcessRunner()
    assert "setsid" in runner.capabilities.notes
    s = runner.prepare(SessionSpec(label="process"))
    try:
        res = runner.execute(s, ["yes"], Limits(output_bytes=1000))
        assert res.termination is Termination.OUTPUT_LIMIT
        res = runner.execute(s, ["sleep", "10"], Limits(timeout_s=0.5))
        assert res.termination is Termination.TIMED_OUT
    finally:
        runner.cleanup(s)


@root_only
def test_job_cgroup_limits_counts_and_kills() -> None:
    manager, why = cgroups.manager()
    assert manager is not None, why
    job = manager.create(memory_mb=64, pids=8)
    mark = nonce()
    try:
        # Something in the cgroup that detaches: the kill must still reach it.
        launcher = str(launcher_path())
        procs = [a for f in job.procs_files for a in ("--cgroup", f)]
        subprocess.run(
            [launcher, *procs, "--", "sh", "-c", f"setsid sleep 1000.{mark} &"], check=True
        )
        assert live_processes(f"1000.{mark}", grace_s=0)
        job.kill()
        assert live_processes(f"1000.{mark}") == []
        assert job.stats().oom_kills == 0
    finally:
        job.destroy()
    assert not any(Path(d).exists() for d in job.dirs)


@root_only
def test_stale_cgroups_of_dead_runs_are_swept() -> None:
    manager, why = cgroups.manager()
    assert manager is not None, why
    stale = [p.parent / f"vibes-eval-{_dead_pid()}" / "job-0" for p in manager.parents]
    mark = nonce()
    for d in stale:
        d.mkdir(parents=True)
    launcher = str(launcher_path())
    procs = [a for d in stale for a in ("--cgroup", str(d / "cgroup.procs"))]
    subprocess.run([launcher, *procs, "--", "sh", "-c", f"sleep 1000.{mark} &"], check=True)
    cgroups.CgroupManager.detect()  # what the next run does first
    assert not any(d.parent.exists() for d in stale)
    assert live_processes(f"1000.{mark}") == []


@root_only
def test_tmpfs_quota_mount_resize_full(tmp_path: Path) -> None:
    quotas = quota.WorkDirQuotas()
    work = tmp_path / "w"
    work.mkdir()
    quotas.mount(work, 4)
    try:
        assert not quotas.exceeded(work, 4)
        with pytest.raises(OSError), open(work / "big", "wb") as f:
            f.write(b"x" * (5 << 20))
        assert quotas.exceeded(work, 4)
        quotas.fit(work, 8)
        assert not quotas.exceeded(work, 8)
    finally:
        quotas.release(work)
    assert str(work) not in Path("/proc/self/mounts").read_text()


@root_only
def test_stale_work_dirs_of_dead_runs_are_swept(tmp_path: Path) -> None:
    stale = tmp_path / f"Task_1-{_dead_pid()}-0-abcd1234"
    live = tmp_path / f"Task_2-{os.getpid()}-0-abcd1234"
    for d in (stale, live):
        d.mkdir()
    quota.mount_tmpfs(stale, 1)
    (stale / "f").write_text("left over")
    LocalRunner(root=tmp_path)
    assert not stale.exists() and live.exists()
    assert str(stale) not in Path("/proc/self/mounts").read_text()
