"""The pieces under the sandbox runners: the launcher, spawn, cgroups, work-dir quotas and
the clean-up of what a crashed run left behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.runners.conftest import kernel_landlock_abi, live_processes, nonce
from vibes_eval.core.errors import RunnerBroken, RunnerUnavailable
from vibes_eval.core.runner import SessionSpec
from vibes_eval.core.types import Limits, Termination
from vibes_eval.runners import cgroups, launcher, quota, spawn
from vibes_eval.runners.launcher import launcher_path
from vibes_eval.runners.local import LocalRunner, ProcessRunner
from vibes_eval.runners.sandbox import probe
from vibes_eval.runners.select import resolve_runner

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
    assert int(info["landlock_abi"]) == kernel_landlock_abi()
    filters = Path("/proc/sys/kernel/seccomp/actions_avail").exists()  # seccomp filter mode
    assert info["seccomp"] == ("1" if filters else "0")


def _compilers(tmp_path: Path, script: str | None) -> str:
    """A PATH whose only `cc` runs ``script`` (None: no cc at all)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    if script is not None:
        for name in ("cc", "gcc"):
            (bin_dir / name).write_text(f"#!/bin/sh\n{script}\n")
            (bin_dir / name).chmod(0o755)
    return str(bin_dir)


def test_a_missing_compiler_is_unavailable_a_failing_build_is_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIBES_CACHE_DIR", str(tmp_path / "cache"))  # nothing built yet
    monkeypatch.setattr(launcher, "_built", {})
    monkeypatch.setenv("PATH", _compilers(tmp_path / "none", None))
    with pytest.raises(RunnerUnavailable, match="C compiler"):
        launcher_path()
    broken = "echo 'launcher.c:1:10: fatal error: linux/landlock.h: No such file' >&2; exit 1"
    monkeypatch.setenv("PATH", _compilers(tmp_path / "broken", broken))
    with pytest.raises(RunnerBroken, match=r"building the sandbox launcher .*landlock\.h"):
        launcher_path()
    # `auto` must not quietly take a weaker sandbox when the launcher is broken.
    with pytest.raises(RunnerBroken, match="--sandbox landlock: building the sandbox launcher"):
        resolve_runner("auto")


@pytest.mark.parametrize("answer", ["exit 1", "echo nonsense", "echo seccomp=1"])
def test_a_launcher_that_does_not_probe_is_broken(tmp_path: Path, answer: str) -> None:
    fake = tmp_path / "vibes-launch"
    fake.write_text(f"#!/bin/sh\n{answer}\n")
    fake.chmod(0o755)
    with pytest.raises(RunnerBroken, match="probe"):
        probe(str(fake))


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
