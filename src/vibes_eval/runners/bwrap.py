"""bubblewrap: the job sees a private mount tree (only the system, its read-only paths and
the work dir), its own pid, network, ipc and uts namespaces, and no capabilities. The
launcher adds rlimits and the cgroup outside, and the seccomp filter inside.

Works unprivileged where user namespaces are allowed. Without root there is no per-job
cgroup (memory via RLIMIT_AS) and no tmpfs quota; the pid namespace still takes every
process down with the sandbox, and the job's process budget is RLIMIT_NPROC set inside
bubblewrap's own user namespace, where the kernel counts only the job's processes.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from vibes_eval.core.runner import NetworkPolicy
from vibes_eval.core.types import ExecutionResult
from vibes_eval.runners.local import Job
from vibes_eval.runners.sandbox import (
    PASS_ERRFD,
    ConfinedRunner,
    granted_paths,
    policy_flags,
    trial_run,
)

# Files of /etc the loader and the C toolchain need; /etc/alternatives holds the cc symlink.
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives")
_MERGED = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_OWN_WORDS = re.compile(r"bwrap: [^\n]*\n?")  # bubblewrap's one line when it cannot start


def _root_links() -> list[str]:
    """Recreate /bin -> usr/bin and friends as symlinks (merged /usr), else bind them."""
    args: list[str] = []
    for path in _MERGED:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


class BwrapRunner(ConfinedRunner):
    """bubblewrap namespaces + the launcher's seccomp and rlimits (+ cgroup as root)."""

    name: ClassVar[str] = "bwrap"
    signal_in_exit_code: ClassVar[bool] = True

    def __init__(self, root: Path | None = None) -> None:
        self.bwrap = shutil.which("bwrap") or "bwrap"
        super().__init__(root)

    def job_userns(self) -> bool:
        """Unprivileged and not setuid, bubblewrap makes a user namespace per job: the job's
        RLIMIT_NPROC is set inside it (``wrap``) and counts that job alone."""
        try:
            return not self.privileged and not os.stat(self.bwrap).st_mode & stat.S_ISUID
        except OSError:
            return False

    def nproc_args(self, job: Job) -> list[str]:
        return [] if self.own_userns else super().nproc_args(job)

    def userns_budget(self, job: Job) -> int:
        return job.limits.pids  # set inside bwrap's namespace, where nothing of ours waits

    def start_failure(self, result: ExecutionResult) -> str | None:
        if result.exit_code == 1 and not result.stdout and _OWN_WORDS.fullmatch(result.stderr):
            return result.stderr.strip()
        return None

    @classmethod
    def check_available(cls) -> str | None:
        if not sys.platform.startswith("linux"):
            return "bubblewrap needs Linux"
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            return "bwrap is not installed (apt-get install bubblewrap)"
        return trial_run([bwrap, "--unshare-all", "--ro-bind", "/", "/", "--", "true"], "bwrap", 10)

    def wrap(self, job: Job, command: Sequence[str]) -> list[str]:
        work = str(job.session.path)
        argv = [self.launcher, *self.outer_args(job), *PASS_ERRFD, "--", self.bwrap]
        argv += ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        argv += ["--ro-bind", "/usr", "/usr", *_root_links()]
        # Mounts apply in order: the fresh /tmp first, so binds below it stay visible.
        argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for path in _ETC:
            argv += ["--ro-bind-try", path, path]
        readonly, writable = granted_paths(job.session)
        for path in readonly:
            argv += ["--ro-bind", path, path]
        for path in writable:
            bind = "--dev-bind" if path.startswith("/dev/") else "--bind"
            argv += [bind, path, path]
        if job.session.spec.policy.network is NetworkPolicy.UNRESTRICTED:
            argv += ["--share-net"]  # else its own namespace, loopback up
        argv += ["--ro-bind", self.launcher, self.launcher]
        argv += ["--bind", work, work, "--chdir", str(job.cwd)]
        # Inside: the seccomp filter (bwrap has no syscall policy of its own to offer).
        inner = [self.launcher, "--seccomp", *policy_flags(job.session)]
        if self.own_userns and job.cgroup is None:
            inner += ["--rlimit", f"nproc={self.userns_budget(job)}"]
        return [*argv, "--", *inner, "--", *command]
