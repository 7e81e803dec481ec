"""The sandboxes without root, for real: test_limits.py runs again in a pytest of an
unprivileged user, where the fallbacks apply (memory through RLIMIT_AS, processes through
RLIMIT_NPROC, disk use measured after each command, no network namespace).

From a root suite it switches to ``nobody`` (``runuser``) with a work, cache and data dir
of its own, inside a cgroup that bounds its processes and memory, so that a fork storm
that got past the fallbacks could not reach the host. A suite that is unprivileged already
ran test_limits.py that way itself."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.components import need
from tests.conftest import ROOT
from vibes_eval.benchmarks.humaneval.rust.toolchain import find_toolchain
from vibes_eval.runners import cgroups
from vibes_eval.runners.launcher import launcher_path

USER = "nobody"
# firejail lets only the users of firejail.users in; docker only the docker group
SANDBOXES = ("landlock", "bwrap")
GUARD_PIDS = 1024  # the whole unprivileged pytest: RLIMIT_NPROC stops a storm far below
GUARD_MEMORY_MB = 4096  # RLIMIT_AS is 1 GiB per job

pytestmark = pytest.mark.slow


def _as_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", USER, "--", *argv]


def _python_for(user_env: dict[str, str]) -> tuple[list[str] | None, str]:
    """An interpreter the user can run that imports this checkout and its dependencies:
    ours, else the system's of the same version with our site-packages on its path (a
    pyenv under /root is closed to others). None and why when there is none."""
    check = ["-c", "import vibes_eval, pytest, pydantic_core, pyseccomp"]
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = dict.fromkeys([sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"])
    errors = []
    for python in candidates:
        proc = subprocess.run(
            _as_user(["env", "-i", *_env_args(user_env), python, *check]),
            capture_output=True,
            text=True,
        )
        if proc.returncode == 0:
            return [python], ""
        errors.append(f"{python}: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    return None, f"no Python that {USER} can run imports vibes_eval ({'; '.join(errors)})"


def _env_args(env: dict[str, str]) -> list[str]:
    return [f"{k}={v}" for k, v in env.items()]


@pytest.fixture
def user_dir() -> Iterator[Path]:
    """A directory the unprivileged user owns (``tmp_path`` is closed to others)."""
    path = Path(tempfile.mkdtemp(prefix="vibes-unprivileged-", dir="/tmp"))
    entry = pwd.getpwnam(USER)
    for sub in ("", "tmp", "cache", "work", "data"):
        (path / sub).mkdir(exist_ok=True)
        os.chown(path / sub, entry.pw_uid, entry.pw_gid)
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return None
    if shutil.which("runuser") is None:
        return "runuser is not installed (util-linux)"
    try:
        pwd.getpwnam(USER)
    except KeyError:
        return f"no user {USER!r}"
    if cgroups.manager()[0] is None:
        return f"no cgroup to bound the unprivileged run ({cgroups.manager()[1]})"
    return None


def _user_env(user_dir: Path, required: tuple[str, ...]) -> dict[str, str]:
    paths = sysconfig.get_paths()
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(user_dir),
        "LANG": "C.UTF-8",
        "TMPDIR": str(user_dir / "tmp"),
        "VIBES_CACHE_DIR": str(user_dir / "cache"),  # the launcher, built by that user
        "VIBES_WORK_DIR": str(user_dir / "work"),
        "VIBES_DATA_DIR": str(user_dir / "data"),
        "PYTHONPATH": os.pathsep.join(
            dict.fromkeys([str(ROOT), str(ROOT / "src"), paths["purelib"], paths["platlib"]])
        ),
        "PYTHONDONTWRITEBYTECODE": "1",
        "VIBES_TEST_REQUIRE": ",".join(required),  # a sandbox missing there fails here
        "VIBES_TEST_SUMMARY": str(user_dir / "summary.txt"),
        "VIBES_TEST_UNPRIVILEGED": "1",  # test_limits checks the fallbacks are in use
    }


def _pytest_as_user(
    user_dir: Path, env: dict[str, str], tests: list[str], wrap: list[str] | None = None
) -> tuple[subprocess.CompletedProcess[str], str]:
    """``pytest tests -k <sandboxes>`` as the user, inside a guard cgroup (behind ``wrap``,
    run as root first); returns the process and the components summary it wrote."""
    python, why = _python_for(env)
    assert python is not None, why
    pytest_argv = [
        *python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
        *tests, "-k", " or ".join(SANDBOXES),
    ]  # fmt: skip
    manager, _ = cgroups.manager()
    assert manager is not None
    guard = manager.create(memory_mb=GUARD_MEMORY_MB, pids=GUARD_PIDS)
    joins = [a for f in guard.procs_files for a in ("--cgroup", f)]
    argv = [*(wrap or []), *_as_user(["env", "-i", *_env_args(env), *pytest_argv])]
    try:
        proc = subprocess.run(
            [str(launcher_path()), *joins, "--", *argv],
            cwd=ROOT, capture_output=True, text=True, timeout=1200,
        )  # fmt: skip
        stats = guard.stats()
    finally:
        guard.kill()
        guard.destroy()
    summary = (user_dir / "summary.txt").read_text() if (user_dir / "summary.txt").exists() else ""
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert stats.pids_max_hits == 0 and stats.oom_kills == 0, stats  # the guard never bit
    assert "FAILED" not in summary, summary
    return proc, summary


def test_limits_hold_for_an_unprivileged_user(user_dir: Path) -> None:
    need("unprivileged", _unavailable())
    if os.geteuid() != 0:
        return  # this whole suite is unprivileged: test_limits.py ran as it is
    env = _user_env(user_dir, SANDBOXES)
    _, summary = _pytest_as_user(user_dir, env, [str(ROOT / "tests/runners/test_limits.py")])
    for name in SANDBOXES:  # every test of test_limits.py ran there, as that user
        ran = re.search(rf"\b{name} (\d+) passed", summary)
        assert ran and int(ran.group(1)) >= 20, summary


def _toolchain_mount(user_dir: Path) -> tuple[list[str], str]:
    """Root's Rust toolchain where the user can reach it (rustup's lives under /root,
    closed to others): bound over a directory of the user's, in a mount namespace of the
    test's own. Returns the wrapper argv and the rustc path the user runs."""
    sysroot = find_toolchain().sysroot
    target = user_dir / "rust"
    target.mkdir()
    target.chmod(0o755)
    script = 'mount --bind "$1" "$2"; shift 2; exec "$@"'
    wrap = ["unshare", "--mount", "--propagation", "private", "--",
            "sh", "-ec", script, "sh", str(sysroot), str(target)]  # fmt: skip
    return wrap, str(target / "bin" / "rustc")


def test_hostile_samples_are_contained_for_an_unprivileged_user(user_dir: Path) -> None:
    """tests/security/test_hostile.py as the user (issue 16: a storm in one sample must
    not starve its neighbours where RLIMIT_NPROC counts all of the user's processes)."""
    need("unprivileged", _unavailable())
    if os.geteuid() != 0:
        return  # this whole suite is unprivileged: test_hostile.py ran as it is
    wrap, rustc = _toolchain_mount(user_dir)
    env = {**_user_env(user_dir, SANDBOXES), "VIBES_RUSTC": rustc}
    tests = [str(ROOT / "tests/security/test_hostile.py")]
    _, summary = _pytest_as_user(user_dir, env, tests, wrap)
    for name in SANDBOXES:
        assert re.search(rf"\b{name} 1 passed", summary), summary
