"""The ``TaskRunner`` interface: where and how untrusted commands run.

A runner owns sessions. A session is a private work directory (on the host, in a
container, on a remote node) that lives from ``prepare`` to ``cleanup``; commands run in it
with ``execute``. Lifecycle (``prepare``/``cleanup``/``close``) is kept apart from the
operations on a live session (``write_files``, ``read_file``, ``execute``).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

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


class Capabilities(BaseModel):
    model_config = ConfigDict(frozen=True)

    isolation_level: IsolationLevel
    supports_snapshots: bool = False
    supports_networking: bool = False
    max_parallelism: int | None = None  # None: bounded only by the machine
    enforces_memory: bool = False
    enforces_pids: bool = False
    enforces_disk: bool = False
    blocks_network: bool = False
    notes: str = ""  # what is weaker than the isolation level suggests


class SessionSpec(BaseModel):
    """What a benchmark needs from a session before its first command."""

    label: str  # shows up in work dir names and logs, e.g. the task id
    readonly_paths: list[Path] = Field(default_factory=list)  # toolchains, caches
    files: dict[str, str | bytes] = Field(default_factory=dict)  # written before return


class Session(BaseModel):
    """A live work directory. ``path`` is where commands see it; ``host_dir`` is where
    the host sees it (None when it only exists inside a container or remote node)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str
    runner: str
    path: Path
    host_dir: Path | None = None
    spec: SessionSpec


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

    @abc.abstractmethod
    def write_files(self, session: Session, files: Mapping[str, str | bytes]) -> None:
        """Write files (paths relative to the work dir; parents are created).

        Raises:
            ValueError: a path escapes the work dir.
            RunnerError: the write failed.
        """

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
