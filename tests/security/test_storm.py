"""Issue 16, class 7: without root, one job's fork storm must not starve the jobs next to it.

Run as an unprivileged user (``nobody``): no cgroup, so the process limit is RLIMIT_NPROC,
which counts every process of the user. Before the fix, a storm used the whole budget and
the next jobs could not start (`bwrap: Can't fork`, `Creating new namespace failed`: an
infra error for samples that did nothing wrong). Now each job counts in a user namespace of
its own. The whole test process runs inside a pids cgroup of its own (and is killed with
it), so the storm can never reach the host, whatever the code under test does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import pytest

from tests.components import need
from tests.conftest import ROOT

USER = "nobody"
BOUND = 600  # processes the whole unprivileged test may have, storm included
NEIGHBOURS = 12


def _python() -> str | None:
    """A Python of this version that another user can run (this one may live in /root)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (f"/usr/bin/python{version}", f"/usr/local/bin/python{version}"):
        if os.path.exists(candidate):
            return candidate
    return None


def _pids_cgroup() -> Path | None:
    """A fresh pids cgroup (v1 or v2) limited to BOUND, or None."""
    name = f"vibes-storm-test-{os.getpid()}"
    for base, procs in (("/sys/fs/cgroup/pids", "pids.max"), ("/sys/fs/cgroup", "pids.max")):
        path = Path(base) / name
        try:
            path.mkdir()
            (path / procs).write_text(str(BOUND))
            return path
        except OSError:
            if path.exists():
                path.rmdir()
    return None


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root to switch to an unprivileged user and to bound it with a cgroup"
    if shutil.which("runuser") is None:
        return "runuser is missing"
    if _python() is None:
        return "no system Python of this version for the unprivileged user"
    return None


def _kill_all(cgroup: Path) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pids = (cgroup / "cgroup.procs").read_text().split()
        if not pids:
            break
        for pid in pids:
            subprocess.run(["kill", "-9", pid], capture_output=True)
        time.sleep(0.05)
    cgroup.rmdir()


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["bwrap", "landlock"])
def test_storm_starves_no_neighbour_without_root(sandbox: str) -> None:
    need("unprivileged", _skip_reason())
    cgroup = _pids_cgroup()
    if cgroup is None:
        need("unprivileged", "cannot create a pids cgroup to bound the unprivileged test")
    home = Path(tempfile.mkdtemp(prefix="vibes-storm-"))
    os.chmod(home, 0o777)
    paths = sysconfig.get_paths()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT), str(ROOT / "src"), paths["purelib"], paths["platlib"]]
        ),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "VIBES_WORK_DIR": str(home / "work"),
        "VIBES_DATA_DIR": str(home / "data"),
    }
    child = [_python(), str(Path(__file__).with_name("storm_child.py")), sandbox, str(NEIGHBOURS)]
    script = f'echo $$ > {cgroup}/cgroup.procs && exec runuser -u {USER} -- "$@"'
    try:
        proc = subprocess.run(
            ["/bin/sh", "-c", script, "sh", "env", "-i", *[f"{k}={v}" for k, v in env.items()],
             *child],
            capture_output=True, text=True, timeout=180, cwd=home,
        )  # fmt: skip
    finally:
        _kill_all(cgroup)
        shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0 and "not available" in proc.stderr:
        need("unprivileged", f"--sandbox {sandbox} unavailable to {USER}: {proc.stderr[-300:]}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "per job" in out["notes"], out["notes"]
    # The storm is held at its own limit, and reported as such.
    assert out["storm"].get("termination") == "pids", out["storm"]
    # Every neighbour started and ran to its end.
    for k in range(NEIGHBOURS):
        got = out[f"neighbour-{k}"]
        assert got.get("exit") == 0 and got.get("stdout") == "ok", (k, got)


def test_root_without_a_cgroup_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """As root, RLIMIT_NPROC is not enforced at all: without a cgroup a confined runner
    would have no process limit, so it refuses to start (and says why)."""
    from vibes_eval.core.errors import RunnerUnavailable
    from vibes_eval.core.registry import runner_class
    from vibes_eval.runners import sandbox

    monkeypatch.setattr(sandbox.cgroups, "manager", lambda: (None, "no cgroup here"))
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    for name in ("landlock", "bwrap"):
        cls = runner_class(name)
        if cls.check_available() is not None:
            continue
        with pytest.raises(RunnerUnavailable, match="RLIMIT_NPROC"):
            cls()
