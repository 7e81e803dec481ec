"""Per-job cgroups: a memory and pids limit for one command's whole process tree, counters
that tell why it died, and a kill that reaches every descendant (``setsid`` included).

cgroup v2 is used where our cgroup is delegated to us (memory and pids controllers
available and writable); otherwise cgroup v1 (one directory per controller hierarchy).
Job cgroups are nested below the cgroup we run in, so limits set on the harness still
apply, under a parent named after our pid: a crashed run's leftovers are recognised and
removed by the next start (``sweep``).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from vibes_eval.runners.spawn import pid_alive

_PREFIX = "vibes-eval-"
_KILL_WAIT_S = 2.0  # how long dying processes may take to leave the cgroup


@dataclass(frozen=True)
class CgroupStats:
    """Counters read after a job ended."""

    oom_kills: int = 0  # processes the kernel killed for memory
    memory_max_hits: int = 0  # times usage hit the limit (reclaim may have saved it)
    pids_max_hits: int = 0  # fork/clone refused for the pids limit
    memory_peak: int = 0  # bytes, 0 when unknown


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _keyed(text: str, key: str) -> int:
    """The value of ``key`` in a flat-keyed file like ``memory.events``."""
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            with contextlib.suppress(ValueError):
                return int(value)
    return 0


def _pids(procs_file: Path) -> list[int]:
    return [int(p) for p in _read(procs_file).split()]


def _kill_until_empty(procs_files: list[Path]) -> None:
    """SIGKILL everything listed until the lists stay empty. Forks racing the kill are
    bounded by the pids limit, so this converges."""
    deadline = time.monotonic() + _KILL_WAIT_S
    while True:
        pids = {p for f in procs_files for p in _pids(f)}
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return
        time.sleep(0.001)


def _rmdir(path: Path) -> None:
    """Remove a cgroup directory; processes still exiting make it busy for a moment."""
    deadline = time.monotonic() + _KILL_WAIT_S
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                return
            time.sleep(0.002)


def _own_cgroup_paths() -> dict[str, str]:
    """Controller name ('' for v2) -> our cgroup path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, super options) of every cgroup mount."""
    out = []
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(rfields) >= 3 and rfields[0] in ("cgroup", "cgroup2"):
            out.append((fields[4], rfields[0], set(rfields[2].split(","))))
    return out


class JobCgroup:
    """One command's cgroup(s). ``procs_files`` are handed to the launcher, which writes
    its own pid into each before it execs the job."""

    def __init__(self, dirs: list[Path], version: int) -> None:
        self.dirs = dirs
        self.version = version

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def kill(self) -> None:
        """SIGKILL every process in the job, detached grandchildren included."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                _write(self.dirs[0] / "cgroup.kill", "1")  # atomic, kernel >= 5.14
        _kill_until_empty([d / "cgroup.procs" for d in self.dirs])

    def pids_max_hits(self) -> int:
        """How many forks the pids limit has refused so far (cheap: one small file)."""
        return _keyed(_read(self.dirs[-1] / "pids.events"), "max")

    def stats(self) -> CgroupStats:
        if self.version == 2:
            d = self.dirs[0]
            mem = _read(d / "memory.events")
            peak = _read(d / "memory.peak").strip()
            return CgroupStats(
                oom_kills=_keyed(mem, "oom_kill"),
                memory_max_hits=_keyed(mem, "max"),
                pids_max_hits=_keyed(_read(d / "pids.events"), "max"),
                memory_peak=int(peak) if peak.isdigit() else 0,
            )
        mem_dir, pids_dir = self.dirs
        failcnt = _read(mem_dir / "memory.failcnt").strip()
        peak = _read(mem_dir / "memory.max_usage_in_bytes").strip()
        return CgroupStats(
            oom_kills=_keyed(_read(mem_dir / "memory.oom_control"), "oom_kill"),
            memory_max_hits=int(failcnt) if failcnt.isdigit() else 0,
            pids_max_hits=_keyed(_read(pids_dir / "pids.events"), "max"),
            memory_peak=int(peak) if peak.isdigit() else 0,
        )

    def destroy(self) -> None:
        self.kill()
        for d in self.dirs:
            _rmdir(d)


class CgroupManager:
    """Creates job cgroups below ``<our cgroup>/vibes-eval-<pid>``. Thread-safe."""

    def __init__(self, version: int, parents: list[Path]) -> None:
        self.version = version
        self.parents = parents  # v2: [dir]; v1: [memory dir, pids dir]
        self._ids = itertools.count()
        self._lock = threading.Lock()

    @classmethod
    def detect(cls) -> tuple[CgroupManager | None, str]:
        """A manager for this machine, or None and the reason there is none."""
        try:
            manager, why_v2 = cls._detect_v2()
        except OSError as exc:
            manager, why_v2 = None, f"cgroup v2: {exc.strerror} ({exc.filename})"
        if manager is not None:
            return manager, ""
        try:
            manager = cls._detect_v1()
        except OSError as exc:
            return None, why_v2 or f"cannot create cgroups ({exc.strerror}); run as root"
        if manager is None:
            return None, why_v2 or "no cgroup v1 memory and pids hierarchies"
        return manager, ""

    @classmethod
    def _detect_v2(cls) -> tuple[CgroupManager | None, str]:
        mount = next((m for m, fs, _ in _mounts() if fs == "cgroup2"), None)
        own = _own_cgroup_paths().get("")
        if mount is None or own is None:
            return None, ""
        base = Path(mount) / own.lstrip("/")
        have = set(_read(base / "cgroup.controllers").split())
        if not {"memory", "pids"} <= have:
            if any(fs == "cgroup" for _, fs, _ in _mounts()):
                return None, ""  # a hybrid machine: the v1 hierarchies hold them
            return None, (
                f"cgroup v2: memory and pids are not delegated to {own} "
                f"(it has: {' '.join(sorted(have)) or 'none'})"
            )
        _sweep_dir(base, [base])
        try:
            _write(base / "cgroup.subtree_control", "+memory +pids")
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise
            # v2 allows controllers only below a cgroup without processes. In a cgroup
            # delegated to us alone we move into a leaf of our own and retry; we never
            # move other processes.
            others = set(_pids(base / "cgroup.procs")) - {os.getpid()}
            if others:
                return None, (
                    f"cgroup v2: {own} also holds other processes; run vibes in a "
                    "delegated cgroup (e.g. systemd-run --scope -p Delegate=yes)"
                )
            leaf = base / f"{_PREFIX}supervisor-{os.getpid()}"
            leaf.mkdir(exist_ok=True)
            _write(leaf / "cgroup.procs", str(os.getpid()))
            try:
                _write(base / "cgroup.subtree_control", "+memory +pids")
            except OSError:
                _write(base / "cgroup.procs", str(os.getpid()))  # back where we were
                raise
        parent = base / f"{_PREFIX}{os.getpid()}"
        parent.mkdir(exist_ok=True)
        _write(parent / "cgroup.subtree_control", "+memory +pids")
        return cls(2, [parent]), ""

    @classmethod
    def _detect_v1(cls) -> CgroupManager | None:
        own = _own_cgroup_paths()
        parents = []
        for controller in ("memory", "pids"):
            mount = next(
                (m for m, fs, opts in _mounts() if fs == "cgroup" and controller in opts), None
            )
            if mount is None or controller not in own:
                return None
            base = Path(mount) / own[controller].lstrip("/")
            parents.append(base / f"{_PREFIX}{os.getpid()}")
        for p in parents:
            _sweep_dir(p.parent, parents)
            p.mkdir(exist_ok=True)
        return cls(1, parents)

    def create(self, memory_mb: int, pids: int) -> JobCgroup:
        """A fresh cgroup with these limits.

        Raises:
            OSError: the cgroup could not be created or limited.
        """
        with self._lock:
            name = f"job-{next(self._ids)}"
        dirs = [p / name for p in self.parents]
        for d in dirs:
            d.mkdir()
        job = JobCgroup(dirs, self.version)
        try:
            mem = memory_mb << 20
            if self.version == 2:
                d = dirs[0]
                _write(d / "memory.max", str(mem))
                with contextlib.suppress(FileNotFoundError):  # no swap accounting
                    _write(d / "memory.swap.max", "0")
                _write(d / "pids.max", str(pids))
            else:
                mem_dir, pids_dir = dirs
                _write(mem_dir / "memory.limit_in_bytes", str(mem))
                with contextlib.suppress(FileNotFoundError):  # swap accounting off
                    _write(mem_dir / "memory.memsw.limit_in_bytes", str(mem))
                _write(pids_dir / "pids.max", str(pids))
        except OSError:
            job.destroy()
            raise
        return job

    def remove_parents(self) -> None:
        """Remove our parent cgroups if no job is left in them (at interpreter exit)."""
        for p in self.parents:
            with contextlib.suppress(OSError):
                p.rmdir()


_detected: tuple[CgroupManager | None, str] | None = None
_detect_lock = threading.Lock()


def manager() -> tuple[CgroupManager | None, str]:
    """The process-wide manager (every runner instance shares our parent cgroup), or None
    and the reason there is none."""
    global _detected
    with _detect_lock:
        if _detected is None:
            _detected = CgroupManager.detect()
            if _detected[0] is not None:
                atexit.register(_detected[0].remove_parents)
        return _detected


def _sweep_dir(base: Path, keep: list[Path]) -> None:
    """Remove ``vibes-eval-<pid>`` cgroups below ``base`` whose owner is gone."""
    with contextlib.suppress(OSError):
        for d in base.iterdir():
            if not d.name.startswith(_PREFIX) or d in keep:
                continue
            pid = d.name[len(_PREFIX) :].removeprefix("supervisor-")
            if not pid.isdigit() or pid_alive(int(pid)):
                continue
            for job in d.iterdir():
                if job.is_dir():
                    _kill_until_empty([job / "cgroup.procs"])
                    _rmdir(job)
            _rmdir(d)
