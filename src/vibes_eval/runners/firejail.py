"""firejail: new pid, network (none), ipc and mount namespaces, a private /dev, no
capabilities and no new privileges; inside it the launcher applies Landlock (firejail's
own file rules are a blacklist) and the seccomp filter. Root or the setuid firejail
binary is needed; slower to start than the others (tens of ms per command)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from vibes_eval.core.runner import NetworkPolicy
from vibes_eval.runners.local import Job
from vibes_eval.runners.sandbox import PASS_ERRFD, PASSED_ERRFD, ConfinedRunner, trial_run


class FirejailRunner(ConfinedRunner):
    """firejail namespaces + the launcher's Landlock, seccomp and rlimits (+ cgroup as
    root)."""

    name: ClassVar[str] = "firejail"
    signal_in_exit_code: ClassVar[bool] = True

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(root)
        self.firejail = shutil.which("firejail") or "firejail"
        if not self._own_network_namespace():
            # Inside a container firejail turns its networking off and runs --net=none in
            # the caller's namespace: "local" would then reach the host's loopback.
            # Disabled still holds (seccomp and Landlock block sockets).
            self.capabilities = self.capabilities.model_copy(  # type: ignore[misc]
                update={
                    "network": self.capabilities.network - {NetworkPolicy.LOCAL},
                    "notes": self.capabilities.notes + "; firejail's --net=none gives no "
                    "network namespace here (a container?): no loopback-only network",
                }
            )

    def _own_network_namespace(self) -> bool:
        """Whether ``--net=none`` really puts a job in a network namespace of its own."""
        argv = [self.firejail, "--quiet", "--noprofile", "--net=none", "--"]
        try:
            inside = subprocess.run(
                [*argv, "readlink", "/proc/self/ns/net"],
                capture_output=True, text=True, timeout=20,
            ).stdout.strip()  # fmt: skip
            return bool(inside) and inside != os.readlink("/proc/self/ns/net")
        except (OSError, subprocess.SubprocessError):
            return False

    @classmethod
    def check_available(cls) -> str | None:
        if not sys.platform.startswith("linux"):
            return "firejail needs Linux"
        firejail = shutil.which("firejail")
        if firejail is None:
            return "firejail is not installed (apt-get install firejail)"
        if os.geteuid() != 0 and not os.stat(firejail).st_mode & 0o4000:
            return "firejail needs root or its setuid bit"
        return trial_run(
            [firejail, "--quiet", "--noprofile", "--net=none", "--", "true"], "firejail", 20
        )

    def wrap(self, job: Job, command: Sequence[str]) -> list[str]:
        argv = [self.launcher, *self.outer_args(job), *PASS_ERRFD, "--", self.firejail]
        argv += ["--quiet", "--noprofile", "--nonewprivs", "--caps.drop=all"]
        if job.session.spec.policy.network is not NetworkPolicy.UNRESTRICTED:
            argv += ["--net=none"]  # a namespace with loopback only
        # end the sandbox with the command, not when its last (detached) process exits
        argv += ["--deterministic-shutdown", f"--keep-fd={PASSED_ERRFD}"]
        argv += ["--private-dev", "--nosound", "--nodbus", "--noroot"]
        if job.session.device is None:
            argv += ["--no3d"]  # keeps /dev/nvidia* out, unless the session holds a GPU
        argv += ["--", self.launcher, *self.landlock_args(job), "--chdir", str(job.cwd)]
        return [*argv, "--", *command]
