"""Runners that execute on this machine: a base for work-dir sessions, the process runner
(rlimits + own process group + timeout) and the explicit, loud ``none`` runner."""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.core.devices import DevicePool
from vibes_eval.core.errors import RunnerError
from vibes_eval.core.runner import (
    Capabilities,
    IsolationLevel,
    NetworkPolicy,
    Session,
    SessionSpec,
    TaskRunner,
    Wiring,
)
from vibes_eval.core.types import ExecutionResult, Limits, Termination
from vibes_eval.runners import quota, spawn
from vibes_eval.runners.cgroups import CgroupStats, JobCgroup
from vibes_eval.runners.launcher import launcher_path

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_ids = itertools.count()
_ALLOC_FAILED = re.compile(rb"memory allocation of \d+ bytes failed|out of memory", re.I)


def work_root() -> Path:
    root = os.environ.get("VIBES_WORK_DIR")
    path = Path(root) if root else Path(tempfile.gettempdir()) / f"vibes-eval-{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def safe_join(base: Path, rel: str) -> Path:
    """``base / rel``, refusing paths that leave ``base``."""
    target = (base / rel).resolve()
    if target != base.resolve() and base.resolve() not in target.parents:
        raise ValueError(f"path {rel!r} leaves the work dir")
    return target


_STALE_SESSION = re.compile(r"-(\d+)-\d+-[A-Za-z0-9_]{8}$")  # label-PID-N-random
_swept: set[Path] = set()
_sweep_lock = threading.Lock()


def sweep_stale_sessions(root: Path) -> None:
    """Remove work dirs (and their quota mounts) left by runs that died; once per root."""
    with _sweep_lock:
        if root in _swept:
            return
        _swept.add(root)
    for entry in os.scandir(root):
        match = _STALE_SESSION.search(entry.name)
        if match is None or not entry.is_dir(follow_symlinks=False):
            continue
        pid = int(match.group(1))
        if pid == os.getpid() or spawn.pid_alive(pid):
            continue
        path = Path(entry.path)
        with contextlib.suppress(OSError):
            quota.unmount(path)
        shutil.rmtree(path, onerror=_force_remove)


def _force_remove(func, path, _exc):  # type: ignore[no-untyped-def]
    # A sample may chmod its own files to 000; make them removable and retry.
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        os.chmod(path, stat.S_IRWXU)
        func(path)


@dataclass
class Job:
    """One ``execute`` call, handed to the hooks so they can keep per-command state."""

    session: Session
    limits: Limits
    cwd: Path
    pid: int = 0
    cgroup: JobCgroup | None = None
    stats: CgroupStats | None = None  # read after the command ended
    disk_full: bool = False
    closed: bool = False  # killed by close(): shutdown or Ctrl-C, not the job's doing
    cgroup_less: bool = False  # memory limited by RLIMIT_AS, not a cgroup
    extra: dict[str, Any] = field(default_factory=dict)


class LocalRunner(TaskRunner):
    """Sessions are directories under ``work_root()``. Subclasses decide how a command is
    wrapped (``wrap``), how everything it started is killed (``kill``) and how its end is
    interpreted (``classify``); ``open_job``/``close_job`` bracket each command."""

    name: ClassVar[str] = "local"
    capabilities: ClassVar[Capabilities] = Capabilities(isolation_level=IsolationLevel.PROCESS)
    uses_launcher: ClassVar[bool] = False  # argv from wrap() starts with vibes-launch

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or work_root()
        sweep_stale_sessions(self.root)
        self._live: dict[int, Job] = {}  # running commands by pid, for close()
        self._lock = threading.Lock()
        self._closed = False
        self.devices = DevicePool()
        if self.devices.devices:
            self.capabilities = self.capabilities.model_copy(  # type: ignore[misc]
                update={"devices": tuple(d.index for d in self.devices.devices)}
            )

    # -- lifecycle --------------------------------------------------------------------

    def prepare(self, spec: SessionSpec) -> Session:
        """Raises, besides the interface's: PolicyUnsupported, DeviceUnavailable."""
        self.check_policy(spec)
        label = re.sub(r"[^A-Za-z0-9_.-]", "_", spec.label)[:40] or "session"
        # The pid in the name lets a later run recognise a crashed run's leftovers.
        prefix = f"{label}-{os.getpid()}-{next(_ids)}-"
        device = self.devices.acquire(spec.device) if spec.device else None
        try:
            host_dir = Path(tempfile.mkdtemp(prefix=prefix, dir=self.root))
        except BaseException:
            if device is not None:
                self.devices.release(device)
            raise
        session = Session(
            id=host_dir.name,
            runner=self.name,
            path=host_dir,
            host_dir=host_dir,
            spec=spec,
            device=device,
        )
        try:
            self.setup_workdir(session)
            (host_dir / "tmp").mkdir(exist_ok=True)
            if spec.files:
                self.write_files(session, spec.files)
        except BaseException:
            self.cleanup(session)
            raise
        return session

    def setup_workdir(self, session: Session) -> None:
        """Called on the empty work dir before files are written (e.g. mount a quota).

        Raises:
            RunnerError: the work dir could not be set up.
        """

    def cleanup(self, session: Session) -> None:
        try:
            if session.host_dir is not None and session.host_dir.exists():
                shutil.rmtree(session.host_dir, onerror=_force_remove)
        finally:
            if session.device is not None:
                self.devices.release(session.device)
                session.device = None

    def close(self) -> None:
        """Kill what runs; a command that starts after this is killed as it starts (a
        worker may be past every check when Ctrl-C arrives)."""
        with self._lock:
            self._closed = True
            jobs = list(self._live.values())
        for job in jobs:
            job.closed = True
            self.kill(job)

    # -- files ------------------------------------------------------------------------

    def write_files(self, session: Session, files: Mapping[str, str | bytes]) -> None:
        assert session.host_dir is not None
        for rel, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            if "/" not in rel and rel not in ("", ".", ".."):
                # A plain name in the work dir: O_NOFOLLOW refuses a symlink the job may
                # have planted there, without safe_join's path resolution (batches write
                # hundreds of files).
                try:
                    fd = os.open(
                        session.host_dir / rel,
                        os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                        0o644,
                    )
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(data)
                    continue
                except OSError as exc:
                    raise RunnerError(f"cannot write {rel} into the work dir: {exc}") from exc
            path = safe_join(session.host_dir, rel)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            except OSError as exc:
                raise RunnerError(f"cannot write {rel} into the work dir: {exc}") from exc

    def write_programs(self, session: Session, programs: Mapping[str, bytes]) -> None:
        """Staged as the base class does, copied into place by ``install`` run here, outside
        any sandbox (a sandbox start costs ~20 ms a program): the copy's write fd lives only
        in that child, so no fork of this process can hold it."""
        assert session.host_dir is not None
        self.write_files(session, {f"{name}.stage": data for name, data in programs.items()})
        for name in programs:
            stage = safe_join(session.host_dir, f"{name}.stage")
            dest = safe_join(session.host_dir, name)
            proc = subprocess.run(
                ["install", "-D", "-m", "755", "-T", str(stage), str(dest)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if proc.returncode != 0:
                raise RunnerError(f"cannot install {name}: {proc.stderr.strip()}")
            stage.unlink(missing_ok=True)

    def read_file(self, session: Session, path: str) -> bytes:
        assert session.host_dir is not None
        target = safe_join(session.host_dir, path)
        try:
            return target.read_bytes()
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise RunnerError(f"cannot read {path} from the work dir: {exc}") from exc

    # -- execution hooks --------------------------------------------------------------

    def base_env(self, session: Session) -> dict[str, str]:
        return {
            "PATH": DEFAULT_PATH,
            "HOME": str(session.path),
            "TMPDIR": str(session.path / "tmp"),  # cc aborts while linking without it
            "LANG": "C.UTF-8",
            # Only the GPU the session holds is visible; none for the others.
            "CUDA_VISIBLE_DEVICES": session.device or "",
        }

    def open_job(self, job: Job) -> None:
        """Set up per-command resources (a cgroup) before ``wrap``.

        Raises:
            RunnerError: they could not be set up.
        """

    def wrap(self, job: Job, command: Sequence[str]) -> list[str]:
        """The argv that actually runs: the command inside whatever isolation applies."""
        return list(command)

    def kill(self, job: Job) -> None:
        """Kill everything the command started; called on timeout, overflow and after exit."""
        if job.cgroup is not None:
            job.cgroup.kill()
        if job.pid:
            spawn.kill_group(job.pid)

    def watch(self, job: Job) -> Callable[[], bool] | None:
        """A check polled while the job runs: True ends it at once (see sandbox.py)."""
        return None

    def close_job(self, job: Job) -> None:
        """Read counters and release per-command resources; the job is dead by now."""
        if job.cgroup is not None:
            job.stats = job.cgroup.stats()
            job.cgroup.destroy()
            job.cgroup = None

    def normalize(self, raw: spawn.RawExit) -> spawn.RawExit:
        """Undo a wrapper's translation of the job's status (e.g. signal N -> 128+N)."""
        return raw

    def classify(self, job: Job, raw: spawn.RawExit) -> Termination:
        if job.closed:
            return Termination.KILLED
        if raw.output_limited:
            return Termination.OUTPUT_LIMIT
        sig = raw.signal
        if job.disk_full:
            # Over the quota, even if the job exited 0: without a tmpfs quota the disk is
            # only measured after the command, and nothing stopped the writes.
            return Termination.DISK_LIMIT
        if raw.exit_code != 0 or raw.timed_out:
            # Limits first: a fork storm or a full disk usually ends in a timeout or a
            # panic, but the limit is why.
            stats = job.stats or CgroupStats()
            if stats.oom_kills:
                return Termination.MEMORY
            if stats.pids_max_hits:
                return Termination.PIDS
            if sig == signal.SIGXFSZ:
                return Termination.DISK_LIMIT
            # Without a memory cgroup the limit is RLIMIT_AS: allocations fail and the
            # job says so (Rust aborts, others exit with a message).
            died = sig in (signal.SIGABRT, signal.SIGKILL) or (raw.exit_code or 0) >= 128
            if (died or job.cgroup_less) and _ALLOC_FAILED.search(raw.stderr):
                return Termination.MEMORY
        if raw.timed_out:
            return Termination.TIMED_OUT
        if sig is None:
            return Termination.EXITED
        if sig == signal.SIGXCPU:
            return Termination.TIMED_OUT
        if sig == signal.SIGSYS:
            return Termination.BLOCKED_SYSCALL
        return Termination.SIGNALED

    def execute(
        self,
        session: Session,
        command: Sequence[str],
        limits: Limits,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stdin: bytes | None = None,
        on_stdout: Callable[[bytes], None] | None = None,
        wiring: Wiring | None = None,
    ) -> ExecutionResult:
        try:
            workdir, full_env = self.command_setup(session, command, env, cwd)
        except BaseException:
            if wiring is not None:
                wiring.close()
            raise
        job = Job(session=session, limits=limits, cwd=workdir)
        try:
            self.open_job(job)
        except BaseException:
            if wiring is not None:
                wiring.close()
            raise
        try:
            raw = spawn.run(
                self.wrap(job, command),
                env=full_env,
                cwd=str(workdir),
                timeout_s=limits.timeout_s,
                output_cap=limits.output_bytes,
                stdin=wiring.stdin_fd if wiring is not None else stdin,
                stdout_fd=wiring.stdout_fd if wiring is not None else None,
                kill=lambda _pid: self.kill(job),
                on_start=lambda pid: self._track(job, pid),
                launcher_errors=self.uses_launcher,
                watch=_stoppable(self.watch(job), wiring),
                on_stdout=on_stdout,
            )
        finally:
            with self._lock:
                self._live.pop(job.pid, None)
            self.close_job(job)
        raw = self.normalize(raw)
        if raw.launch_error:
            raise RunnerError(f"{self.name} runner could not start {command[0]}: "
                              f"{raw.launch_error.removeprefix('vibes-launch: ')}")  # fmt: skip
        return ExecutionResult(
            exit_code=raw.exit_code,
            signal=raw.signal,
            stdout=raw.stdout.decode("utf-8", "replace"),
            stderr=raw.stderr.decode("utf-8", "replace"),
            stdout_truncated=raw.stdout_truncated,
            stderr_truncated=raw.stderr_truncated,
            wall_s=raw.wall_s,
            cpu_s=raw.cpu_s,
            termination=self.classify(job, raw),
        )

    def execute_wired(
        self,
        session: Session,
        command: Sequence[str],
        limits: Limits,
        wiring: Wiring,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> ExecutionResult:
        return self.execute(session, command, limits, env=env, cwd=cwd, wiring=wiring)

    def execute_streaming(
        self,
        session: Session,
        command: Sequence[str],
        limits: Limits,
        on_stdout: Callable[[bytes], None],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stdin: bytes | None = None,
    ) -> ExecutionResult:
        """Stdout reaches ``on_stdout`` as it is read from the pipe."""
        return self.execute(
            session, command, limits, env=env, cwd=cwd, stdin=stdin, on_stdout=on_stdout
        )

    def command_setup(
        self,
        session: Session,
        command: Sequence[str],
        env: Mapping[str, str] | None,
        cwd: str | None,
    ) -> tuple[Path, dict[str, str]]:
        """The work dir and environment ``execute`` runs ``command`` with.

        Raises:
            RunnerError: the command is empty.
            ValueError: ``cwd`` leaves the work dir.
        """
        if not command:
            raise RunnerError("empty command")
        workdir = safe_join(session.path, cwd) if cwd else session.path
        return workdir, {**self.base_env(session), **(env or {})}

    def _track(self, job: Job, pid: int) -> None:
        job.pid = pid
        with self._lock:
            self._live[pid] = job
            closed = self._closed
        if closed:
            job.closed = True
            self.kill(job)


def _stoppable(
    watch: Callable[[], bool] | None, wiring: Wiring | None
) -> Callable[[], bool] | None:
    """``watch``, ending the command as well once a wired command's stop is set."""
    if wiring is None:
        return watch
    stop = wiring.stop
    return lambda: stop.is_set() or (watch is not None and watch())


def rlimit_args(limits: Limits, *, address_space: bool = True) -> list[str]:
    """Launcher flags for the rlimits every local runner applies."""
    cpu = limits.cpu_s or math.ceil(limits.timeout_s) + 1
    args = [
        "--rlimit", f"cpu={cpu}",
        "--rlimit", f"fsize={limits.file_size_mb << 20}",
        "--rlimit", f"nofile={limits.open_files}",
        "--rlimit", "core=0",
    ]  # fmt: skip
    if address_space:
        # rustc needs >= 512 MiB of address space just to load LLVM (docs/sandbox.md)
        args += ["--rlimit", f"as={max(limits.memory_mb, 1024) << 20}"]
    return args


class ProcessRunner(LocalRunner):
    """Own process group, rlimits (CPU, file size, open files, core, address space) and a
    wall-clock timeout. No filesystem or network isolation: use a sandbox for that."""

    name: ClassVar[str] = "process"
    capabilities: ClassVar[Capabilities] = Capabilities(
        isolation_level=IsolationLevel.PROCESS,
        enforces_memory=True,
        network=frozenset({NetworkPolicy.UNRESTRICTED}),
        notes="memory via RLIMIT_AS; no filesystem, network or pids isolation; "
        "a grandchild that calls setsid can outlive the timeout",
    )

    uses_launcher: ClassVar[bool] = True

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(root)
        self.launcher = str(launcher_path())

    def wrap(self, job: Job, command: Sequence[str]) -> list[str]:
        # CUDA reserves far more address space than it uses: no RLIMIT_AS with a GPU.
        limits = rlimit_args(job.limits, address_space=job.session.device is None)
        return [self.launcher, *limits, "--", *command]


class UnsandboxedRunner(LocalRunner):
    """No isolation and no limits but the timeout. Only on explicit request."""

    name: ClassVar[str] = "none"
    capabilities: ClassVar[Capabilities] = Capabilities(
        isolation_level=IsolationLevel.NONE, network=frozenset({NetworkPolicy.UNRESTRICTED})
    )

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(root)
        print(
            "WARNING: --sandbox none runs model-written code with your user's full access "
            "to files and network. Use it only for code you trust.",
            file=sys.stderr,
        )
