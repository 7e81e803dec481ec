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
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from vibes_eval.core.runner import Capabilities, IsolationLevel, Session, SessionSpec, TaskRunner
from vibes_eval.core.types import ExecutionResult, Limits, Termination
from vibes_eval.runners import spawn
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


def _force_remove(func, path, _exc):  # type: ignore[no-untyped-def]
    # A sample may chmod its own files to 000; make them removable and retry.
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        os.chmod(path, stat.S_IRWXU)
        func(path)


class LocalRunner(TaskRunner):
    """Sessions are directories under ``work_root()``. Subclasses decide how a command is
    wrapped (``wrap``) and how its end is interpreted (``classify``)."""

    name: ClassVar[str] = "local"
    capabilities: ClassVar[Capabilities] = Capabilities(isolation_level=IsolationLevel.PROCESS)

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or work_root()
        self._live: set[int] = set()  # pids of running commands, for close()
        self._lock = threading.Lock()

    # -- lifecycle --------------------------------------------------------------------

    def prepare(self, spec: SessionSpec) -> Session:
        label = re.sub(r"[^A-Za-z0-9_.-]", "_", spec.label)[:40] or "session"
        host_dir = Path(tempfile.mkdtemp(prefix=f"{label}-{next(_ids)}-", dir=self.root))
        (host_dir / "tmp").mkdir()
        session = Session(
            id=host_dir.name, runner=self.name, path=host_dir, host_dir=host_dir, spec=spec
        )
        if spec.files:
            self.write_files(session, spec.files)
        return session

    def cleanup(self, session: Session) -> None:
        if session.host_dir is not None:
            shutil.rmtree(session.host_dir, onerror=_force_remove)

    def close(self) -> None:
        with self._lock:
            pids = list(self._live)
        for pid in pids:
            self.kill(pid)

    # -- files ------------------------------------------------------------------------

    def write_files(self, session: Session, files: Mapping[str, str | bytes]) -> None:
        assert session.host_dir is not None
        for rel, content in files.items():
            path = safe_join(session.host_dir, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                path.write_text(content)
            else:
                path.write_bytes(content)

    def read_file(self, session: Session, path: str) -> bytes:
        assert session.host_dir is not None
        return safe_join(session.host_dir, path).read_bytes()

    # -- execution --------------------------------------------------------------------

    def base_env(self, session: Session) -> dict[str, str]:
        return {
            "PATH": DEFAULT_PATH,
            "HOME": str(session.path),
            "TMPDIR": str(session.path / "tmp"),  # cc aborts while linking without it
            "LANG": "C.UTF-8",
        }

    def wrap(
        self, session: Session, command: Sequence[str], limits: Limits, cwd: Path
    ) -> list[str]:
        """The argv that actually runs: the command inside whatever isolation applies."""
        return list(command)

    def kill(self, pid: int) -> None:
        spawn.kill_group(pid)

    def classify(self, raw: spawn.RawExit, limits: Limits) -> Termination:
        if raw.output_limited:
            return Termination.OUTPUT_LIMIT
        if raw.timed_out:
            return Termination.TIMED_OUT
        sig = raw.signal
        if sig is None:
            return Termination.EXITED
        if sig == signal.SIGXCPU:
            return Termination.TIMED_OUT
        if sig == signal.SIGXFSZ:
            return Termination.DISK_LIMIT
        if sig == signal.SIGSYS:
            return Termination.BLOCKED_SYSCALL
        if sig in (signal.SIGABRT, signal.SIGKILL) and _ALLOC_FAILED.search(raw.stderr):
            return Termination.MEMORY
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
    ) -> ExecutionResult:
        workdir = safe_join(session.path, cwd) if cwd else session.path
        full_env = self.base_env(session)
        if env:
            full_env.update(env)
        argv = self.wrap(session, command, limits, workdir)
        raw = spawn.run(
            argv,
            env=full_env,
            cwd=str(workdir),
            timeout_s=limits.timeout_s,
            output_cap=limits.output_bytes,
            stdin=stdin,
            kill=self.kill,
            on_start=self._track,
        )
        with self._lock:
            self._live.discard(raw.pid)
        return ExecutionResult(
            exit_code=raw.exit_code,
            signal=raw.signal,
            stdout=raw.stdout.decode("utf-8", "replace"),
            stderr=raw.stderr.decode("utf-8", "replace"),
            stdout_truncated=raw.stdout_truncated,
            stderr_truncated=raw.stderr_truncated,
            wall_s=raw.wall_s,
            cpu_s=raw.cpu_s,
            termination=self.classify(raw, limits),
        )

    def _track(self, pid: int) -> None:
        with self._lock:
            self._live.add(pid)


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
        notes="memory via RLIMIT_AS; no filesystem, network or pids isolation; "
        "a grandchild that calls setsid can outlive the timeout",
    )

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(root)
        self.launcher = str(launcher_path())

    def wrap(
        self, session: Session, command: Sequence[str], limits: Limits, cwd: Path
    ) -> list[str]:
        return [self.launcher, *rlimit_args(limits), "--", *command]


class UnsandboxedRunner(LocalRunner):
    """No isolation and no limits but the timeout. Only on explicit request."""

    name: ClassVar[str] = "none"
    capabilities: ClassVar[Capabilities] = Capabilities(
        isolation_level=IsolationLevel.NONE, supports_networking=True
    )

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(root)
        print(
            "WARNING: --sandbox none runs model-written code with your user's full access "
            "to files and network. Use it only for code you trust.",
            file=sys.stderr,
        )
