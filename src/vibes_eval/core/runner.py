"""The ``TaskRunner`` interface: where and how untrusted commands run.

A runner owns sessions. A session is a private work directory (on the host, in a
container, on a remote node) that lives from ``prepare`` to ``cleanup``, or for a
``with runner.session(spec) as session:`` block; commands run in it with ``execute``.
Lifecycle (``prepare``/``cleanup``/``close``) is kept apart from the operations on a live
session (``write_files``, ``read_file``, ``execute``).
"""

from __future__ import annotations

import abc
import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from vibes_eval.core.errors import PolicyUnsupported, RunnerError
from vibes_eval.core.types import ExecutionResult, Limits


class IsolationLevel(StrEnum):
    """How strongly a runner separates the code it runs from the host, weakest first."""

    NONE = "none"  # a plain process, no limits: explicit opt-in only
    PROCESS = "process"  # own process group, rlimits, timeouts
    SANDBOX = "sandbox"  # kernel sandbox: Landlock/seccomp/namespaces/cgroups, bwrap, ...
    CONTAINER = "container"
    VM = "vm"
    REMOTE = "remote"
    ORCHESTRATED = "orchestrated"


class NetworkPolicy(StrEnum):
    """What a session's commands may reach."""

    DISABLED = "disabled"  # nothing: no interface, no sockets but AF_UNIX where filtered
    LOCAL = "local"  # the session's own loopback only (a server the job starts itself)
    ALLOWLIST = "allowlist"  # only ``SandboxPolicy.allowed_hosts``
    UNRESTRICTED = "unrestricted"  # the host's network (environment builds, package installs)


class SandboxPolicy(BaseModel):
    """What a benchmark asks of a session beyond the work dir: the paths it may read or
    write, system calls to refuse on top of the runner's own filter, and the network.

    A sandbox that cannot enforce something refuses the session (``PolicyUnsupported``);
    the explicit non-sandboxes (``process``, ``none``) accept it and say so in ``notes``."""

    model_config = ConfigDict(frozen=True)

    readonly_paths: tuple[Path, ...] = ()  # toolchains, caches (read and execute)
    writable_paths: tuple[Path, ...] = ()  # besides the work dir, which is always writable
    blocked_syscalls: tuple[str, ...] = ()  # names, e.g. "ptrace"; a call kills the job
    network: NetworkPolicy = NetworkPolicy.DISABLED
    allowed_hosts: tuple[str, ...] = ()  # with ``NetworkPolicy.ALLOWLIST``


class DeviceNeed(BaseModel):
    """An accelerator a session needs, held for the session's whole life. Exclusive use
    keeps other sessions off it while it times kernels."""

    model_config = ConfigDict(frozen=True)

    kind: str = "cuda"
    exclusive: bool = True


class Capabilities(BaseModel):
    model_config = ConfigDict(frozen=True)

    isolation_level: IsolationLevel
    supports_snapshots: bool = False  # can reset a session's files to a saved state
    max_parallelism: int | None = None  # sessions at once; None: bounded by the machine
    enforces_memory: bool = False
    enforces_pids: bool = False
    enforces_disk: bool = False
    network: frozenset[NetworkPolicy] = frozenset({NetworkPolicy.DISABLED})  # enforceable
    blocks_syscalls: bool = False  # can add ``SandboxPolicy.blocked_syscalls`` to its filter
    extra_writable: bool = False  # can grant ``SandboxPolicy.writable_paths``
    devices: tuple[str, ...] = ()  # accelerators it can hand to sessions (``DeviceNeed``)
    session_images: bool = False  # can run a session in an image it names (``SessionSpec.image``)
    notes: str = ""  # what is weaker than the isolation level suggests

    def weaknesses(self) -> list[str]:
        """What this runner does not enforce, as short phrases for reports."""
        out = [] if self.enforces_memory else ["no memory limit"]
        out += [] if self.enforces_pids else ["no per-job process limit"]
        out += [] if self.enforces_disk else ["no disk quota"]
        if NetworkPolicy.DISABLED not in self.network:
            out.append("network not blocked")
        return out + ([self.notes] if self.notes else [])


class SessionSpec(BaseModel):
    """What a benchmark needs from a session before its first command."""

    label: str  # shows up in work dir names and logs, e.g. the task id
    files: dict[str, str | bytes] = Field(default_factory=dict)  # written before return
    policy: SandboxPolicy = SandboxPolicy()
    device: DeviceNeed | None = None
    # A container image to run the session in (an environment prebuilt for the task, e.g.
    # a repository at its base commit), instead of the runner's own. Its file system is
    # the session's, writable, and discarded with the session. Container runners only.
    image: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _readonly_shorthand(cls, data: Any) -> Any:
        """``readonly_paths=[...]``: shorthand for a policy with only those paths."""
        if isinstance(data, dict) and "readonly_paths" in data:
            data = dict(data)
            paths = tuple(Path(p) for p in data.pop("readonly_paths"))
            policy = data.get("policy") or SandboxPolicy()
            data["policy"] = policy.model_copy(update={"readonly_paths": paths})
        return data

    @property
    def readonly_paths(self) -> tuple[Path, ...]:
        return self.policy.readonly_paths


class Session(BaseModel):
    """A live work directory. ``path`` is where commands see it; ``host_dir`` is where
    the host sees it (None when it only exists inside a container or remote node)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str
    runner: str
    path: Path
    host_dir: Path | None = None
    spec: SessionSpec
    device: str | None = None  # the accelerator held for ``spec.device`` (e.g. "0")


@dataclass
class Wiring:
    """A command's stdin and stdout as pipe ends (``TaskRunner.execute_wired``), and an
    event that ends it early."""

    stdin_fd: int
    stdout_fd: int
    stop: threading.Event = field(default_factory=threading.Event)

    def close(self) -> None:
        for fd in (self.stdin_fd, self.stdout_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


class TaskRunner(abc.ABC):
    """Runs commands for a benchmark in isolated sessions.

    Implementations must be safe to call from several threads at once: the engine runs up to
    ``workers`` sessions in parallel against one runner instance.
    """

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities]

    @classmethod
    def check_available(cls) -> str | None:
        """Why this runner cannot work here (missing binary, no privileges), or None."""
        return None

    def check_policy(self, spec: SessionSpec) -> None:
        """Refuse a session whose policy this runner cannot enforce. Runners that are not
        sandboxes (isolation below ``SANDBOX``) enforce nothing of it and refuse nothing.

        Raises:
            PolicyUnsupported: one line naming the runner and what it cannot do.
        """
        caps, policy = self.capabilities, spec.policy
        if spec.image is not None and not caps.session_images:
            raise PolicyUnsupported(
                f"--sandbox {self.name} cannot run a session in an image ({spec.image}); "
                "use --sandbox docker"
            )
        if caps.isolation_level in (IsolationLevel.NONE, IsolationLevel.PROCESS):
            return
        if policy.network not in caps.network:
            raise PolicyUnsupported(
                f"--sandbox {self.name} cannot give a session network '{policy.network}' "
                f"(it can: {', '.join(sorted(caps.network))})"
            )
        if policy.blocked_syscalls and not caps.blocks_syscalls:
            raise PolicyUnsupported(f"--sandbox {self.name} cannot block extra system calls")
        if policy.writable_paths and not caps.extra_writable:
            raise PolicyUnsupported(f"--sandbox {self.name} cannot grant extra writable paths")

    # -- lifecycle --------------------------------------------------------------------

    @abc.abstractmethod
    def prepare(self, spec: SessionSpec) -> Session:
        """Create a session and write ``spec.files`` into it.

        Raises:
            RunnerUnavailable: the runner cannot start here (tool missing, no daemon).
            RunnerError: creating the work dir or container failed.
        """

    @abc.abstractmethod
    def cleanup(self, session: Session) -> None:
        """Kill whatever the session left running and delete its work dir. Idempotent.

        Raises:
            RunnerError: the session's resources could not be released.
        """

    @contextlib.contextmanager
    def session(self, spec: SessionSpec) -> Iterator[Session]:
        """A live session for the block: ``prepare`` on entry, ``cleanup`` on exit, also
        when the block raises (the block's exception wins over a failed cleanup)."""
        session = self.prepare(spec)
        try:
            yield session
        except BaseException:
            with contextlib.suppress(Exception):
                self.cleanup(session)
            raise
        self.cleanup(session)

    def close(self) -> None:  # noqa: B027 - optional hook, most runners hold nothing
        """Release everything the runner holds (pooled containers, cgroups). Idempotent.

        Kills commands still running, so it is also the Ctrl-C path.
        """

    # -- operations on a live session ------------------------------------------------

    @abc.abstractmethod
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
        """Run ``command`` in the session's work dir (or ``cwd`` relative to it).

        Never raises for anything the command does: timeouts, crashes, limits and output
        floods come back as ``ExecutionResult.termination``. The whole process tree is gone
        when this returns.

        Raises:
            RunnerError: the command could not be started (missing executable, runner
                failure).
        """

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
        """``execute`` with stdin and stdout connected to pipes another command holds the
        other ends of (``core.pair.run_pair``): this call owns and closes
        ``wiring``'s descriptors, keeps no stdout, and ends the command early once
        ``wiring.stop`` is set. Runners that cannot connect commands refuse.

        Raises:
            RunnerError: as ``execute``; or this runner cannot connect two commands.
        """
        wiring.close()
        raise RunnerError(f"the {type(self).__name__} runner cannot connect two commands")

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
        """``execute``, handing stdout to ``on_stdout`` in chunks as the command writes it,
        so a caller can report a long command's results while it runs. This default hands
        it over all at once when the command ended; runners that read it as it comes
        override it. What ``on_stdout`` raises ends the command and is raised.
        """
        result = self.execute(session, command, limits, env=env, cwd=cwd, stdin=stdin)
        on_stdout(result.stdout.encode())
        return result

    @abc.abstractmethod
    def write_files(self, session: Session, files: Mapping[str, str | bytes]) -> None:
        """Write files (paths relative to the work dir; parents are created).

        Raises:
            ValueError: a path escapes the work dir.
            RunnerError: the write failed.
        """

    def write_programs(self, session: Session, programs: Mapping[str, bytes]) -> None:
        """Write executables the session will run ({name in the work dir: bytes}). Here:
        written under a staging name, then copied into place by a command in the session:
        a file this process held open for writing could still be open in a child another
        thread forked meanwhile, and its exec would fail (ETXTBSY).

        Raises:
            RunnerError: the write or the copy failed.
        """
        self.write_files(session, {f"{name}.stage": data for name, data in programs.items()})
        for name in programs:
            argv = ["install", "-D", "-m", "755", f"{name}.stage", name]
            res = self.execute(session, argv, Limits())
            if not res.ok:
                raise RunnerError(f"cannot install {name}: {res.stderr.strip()}")

    @abc.abstractmethod
    def read_file(self, session: Session, path: str) -> bytes:
        """Read a file from the work dir.

        Raises:
            ValueError: the path escapes the work dir.
            FileNotFoundError: no such file.
            RunnerError: the read failed.
        """

    def __enter__(self) -> TaskRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
