"""macOS: Seatbelt (``sandbox-exec``) with a generated profile, plus the launcher's rlimits.

The profile denies everything by default, then allows: reading the system (``/usr``,
``/System``, ``/Library``, the dyld cache), reading and executing the session's read-only
paths, reading, writing and executing the work dir, forking, and signals within the
sandbox. No network of any kind. What is weaker than on Linux: no memory cgroup (memory
via RLIMIT_AS, which macOS barely enforces), no pids limit per job, no disk quota beyond
RLIMIT_FSIZE, and a grandchild that calls ``setsid`` can outlive a timeout (no cgroup to
kill through). Untested here (no Mac); the profile text is unit-tested.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import ClassVar

from vibes_eval.core.runner import Capabilities, IsolationLevel
from vibes_eval.runners.launcher import launcher_path
from vibes_eval.runners.local import Job, LocalRunner, rlimit_args

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

# Read-only for every job: the OS, the dynamic linker's cache, Xcode's command line tools
# (cc, ld) and Homebrew's prefix, where toolchains usually live. Not /private/etc (its
# master.passwd is the /etc/shadow of macOS), not /Users.
SYSTEM_READ = (
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library/Developer",
    "/Library/Frameworks",
    "/private/var/db/dyld",
    "/private/etc/localtime",
    "/opt/homebrew",
    "/Applications/Xcode.app",
)
# Files every process opens.
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/dtracehelper")


def quote(path: str) -> str:
    """A Seatbelt (Scheme) string literal."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _subpaths(paths: Iterable[str]) -> str:
    # Seatbelt matches resolved paths: /var and /tmp are symlinks into /private.
    return " ".join(f"(subpath {quote(os.path.realpath(p))})" for p in paths)


def profile(work_dir: str, readonly: Sequence[str] = ()) -> str:
    """The Seatbelt profile for one session.

    ``work_dir`` gets read, write and execute; ``readonly`` paths read and execute; the
    system read only (execute for its binaries). Network, other processes and IPC
    services outside the sandbox are denied.
    """
    work = _subpaths([work_dir])
    ro = _subpaths(readonly) if readonly else ""
    system = _subpaths(SYSTEM_READ)
    devices = " ".join(f"(literal {quote(d)})" for d in DEVICES)
    lines = [
        "(version 1)",
        "(deny default)",
        ";; processes: run the system's and the toolchain's binaries and the job's own",
        "(allow process-fork)",
        f"(allow process-exec {system} {ro} {work})",
        "(allow signal (target same-sandbox))",
        ";; files: read the system and the read-only paths, write only the work dir",
        ";; stat() anywhere: path lookups need it; it reveals names and sizes, no content",
        "(allow file-read-metadata)",
        f"(allow file-read* {system} {ro} {work} {devices})",
        f"(allow file-write* {work} {devices})",
        f"(allow file-ioctl {devices})",
        ";; what libc and the dynamic linker need to start a process",
        "(allow sysctl-read)",
        '(allow mach-lookup (global-name "com.apple.system.logger"))',
        "(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata"
        ' (ipc-posix-name "apple.shm.notification_center"))',
        ";; no network at all, not even loopback",
        "(deny network*)",
    ]
    return "\n".join(lines) + "\n"


class SeatbeltRunner(LocalRunner):
    """``sandbox-exec`` with ``profile()``, inside the launcher's rlimits."""

    name: ClassVar[str] = "seatbelt"
    uses_launcher: ClassVar[bool] = True
    capabilities: ClassVar[Capabilities] = Capabilities(
        isolation_level=IsolationLevel.SANDBOX,
        enforces_memory=True,
        notes="memory via RLIMIT_AS only; no pids limit or disk quota per job; a setsid "
        "grandchild can outlive a timeout",
    )

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(root)
        self.launcher = str(launcher_path())

    @classmethod
    def check_available(cls) -> str | None:
        if sys.platform != "darwin":
            return "Seatbelt is macOS only"
        if shutil.which(SANDBOX_EXEC) is None:
            return f"{SANDBOX_EXEC} is missing"
        return None

    def wrap(self, job: Job, command: Sequence[str]) -> list[str]:
        text = profile(str(job.session.path), [str(p) for p in job.session.spec.readonly_paths])
        argv = [self.launcher, *rlimit_args(job.limits), "--"]
        return [*argv, SANDBOX_EXEC, "-p", text, *command]
