"""The default Linux sandbox: Landlock + seccomp + rlimits + a per-job cgroup + an empty
network namespace, applied by the C launcher right before it execs the job.

As root it is the full stack. Unprivileged it keeps Landlock, seccomp and rlimits and says
what is weaker (``notes``): memory through RLIMIT_AS, no disk quota beyond RLIMIT_FSIZE, no
netns (seccomp still refuses every socket but AF_UNIX, Landlock every TCP connect).

Processes without a cgroup: RLIMIT_NPROC counts every process of the user, so one job's
fork storm would leave the next ones unable to start. Each job therefore gets a user
namespace of its own (the launcher's ``--own-userns``, or bubblewrap's), where the kernel
(>= 5.14) counts RLIMIT_NPROC per namespace: a per-job budget without root. A job that
could not start for want of processes or memory is started again a few times
(``START_RETRIES``) before it is reported as the runner's failure. Root without a cgroup
has no process limit at all (the kernel does not apply RLIMIT_NPROC to root): refused.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from vibes_eval.core.devices import cuda_paths
from vibes_eval.core.errors import (
    PolicyUnsupported,
    RunnerBroken,
    RunnerError,
    RunnerUnavailable,
)
from vibes_eval.core.runner import Capabilities, IsolationLevel, NetworkPolicy, Session
from vibes_eval.core.types import ExecutionResult, Limits, Termination
from vibes_eval.runners import cgroups, quota, spawn
from vibes_eval.runners.launcher import launcher_path
from vibes_eval.runners.local import Job, LocalRunner, rlimit_args

# Read + execute for every job: the dynamic loader and libraries, compilers and their
# helpers (cc, ld), and the few /etc files the loader reads. Symlinks (/lib -> usr/lib)
# resolve to the same trees. Nothing else of /etc, no /proc, /sys or /home.
SYSTEM_READONLY = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/dev/urandom",
    "/dev/random",
)
DEVICES_WRITABLE = ("/dev/null", "/dev/zero")
MIN_LANDLOCK_ABI = 1
PASSED_ERRFD = 63  # where the outer launcher puts its error pipe for the inner one
PASS_ERRFD = ("--pass-errfd", str(PASSED_ERRFD))  # for a launcher that runs a wrapper
_NPROC_MARGIN = 256  # RLIMIT_NPROC counts the whole user's processes: leave room for ours
START_RETRIES = 6  # a job that could not start (EAGAIN...) is tried again, backing off
_START_BACKOFF_S = 0.1  # doubled per try: 0.1 + 0.2 + ... + 3.2 s in all
# How a failure to start reads: the launcher's or Python's errno text, bwrap's own words.
_TRANSIENT = re.compile(
    r"Resource temporarily unavailable|Cannot allocate memory|No space left on device|"
    r"Can't fork|Creating new namespace failed|Errno 11\b|Errno 12\b"
)


def probe(launcher: str) -> dict[str, int]:
    """What the kernel offers: ``{"landlock_abi": N, "seccomp": 0|1}``.

    Raises:
        RunnerBroken: the launcher does not run or answers something else; the kernel
            lacking a feature is an answer (0), not an error.
    """
    try:
        out = subprocess.run(
            [launcher, "--probe"], capture_output=True, text=True, timeout=10, check=True
        ).stdout
        info = {k: int(v) for k, v in (item.split("=") for item in out.split())}
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise RunnerBroken(f"the sandbox launcher's probe failed: {exc}") from exc
    if not {"landlock_abi", "seccomp"} <= info.keys():
        raise RunnerBroken(f"the sandbox launcher's probe answered {out.strip()[:100]!r}")
    return info


def trial_run(argv: Sequence[str], what: str, timeout: float) -> str | None:
    """Why a sandbox tool cannot confine ``true`` here, or None when it can."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{what} does not run: {exc}"
    if proc.returncode != 0:
        return f"{what} cannot sandbox here: {proc.stderr.strip()[:200]}"
    return None


def _user_tasks() -> int:
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


# With --own-userns the launcher and the init of the job's pid namespace wait in the
# job's user namespace, so they count against its RLIMIT_NPROC (launcher.c, own_pidns).
LAUNCHER_PROCESSES = 2
STORM_POLLS = 3  # polls (spawn.WATCH_EVERY_S apart) at the process limit that make a storm


def namespace_members(pid: int) -> int:
    """How many processes share the user namespace of ``pid``'s job: its own, or that of
    its first descendant in another namespace than ours (bubblewrap's child). 0 when
    there is none (the job has no namespace of its own, or is gone)."""
    try:
        ours = os.readlink("/proc/self/ns/user")
        target, todo = "", [pid]
        while todo and not target:
            p = todo.pop(0)
            ns = os.readlink(f"/proc/{p}/ns/user")
            if ns != ours:
                target = ns
                break
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
    except (OSError, ValueError):
        return 0
    if not target:
        return 0
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                count += os.readlink(f"/proc/{entry.name}/ns/user") == target
    return count


def syscall_numbers(names: Sequence[str]) -> list[int]:
    """This architecture's numbers for syscall names (libseccomp's table).

    Raises:
        PolicyUnsupported: a name this architecture does not have.
    """
    if not names:
        return []
    import pyseccomp  # only when there is something to resolve (an optional C library)

    numbers = []
    for name in names:
        nr = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
        if nr < 0:
            raise PolicyUnsupported(f"unknown system call {name!r} in the sandbox policy")
        numbers.append(nr)
    return numbers


def policy_flags(session: Session) -> list[str]:
    """Launcher flags for the session's network policy and extra blocked syscalls, applied
    with its seccomp filter."""
    policy = session.spec.policy
    flags = [] if policy.network is NetworkPolicy.DISABLED else ["--net"]
    for nr in syscall_numbers(policy.blocked_syscalls):
        flags += ["--deny-syscall", str(nr)]
    return flags


def granted_paths(session: Session) -> tuple[list[str], list[str]]:
    """(read-only, read-write) paths the session's policy and its device add."""
    policy = session.spec.policy
    readonly = [str(p) for p in policy.readonly_paths]
    writable = [str(p) for p in policy.writable_paths]
    if session.device is not None:
        dev_rw, dev_ro = cuda_paths()
        readonly += dev_ro
        writable += dev_rw
    return readonly, writable


class ConfinedRunner(LocalRunner):
    """Shared by the Linux sandboxes: a per-job cgroup (memory, pids, kill of the whole
    tree), a tmpfs work dir with a size quota, rlimits through the launcher, and a note of
    what this machine cannot give (``capabilities.notes``). Subclasses build ``wrap``."""

    capabilities: ClassVar[Capabilities] = Capabilities(
        isolation_level=IsolationLevel.SANDBOX,
        enforces_memory=True,
        enforces_pids=True,
        enforces_disk=True,
        network=frozenset(
            {NetworkPolicy.DISABLED, NetworkPolicy.LOCAL, NetworkPolicy.UNRESTRICTED}
        ),
        blocks_syscalls=True,
        extra_writable=True,
    )  # what the machine lacks is added per instance (``notes``)
    uses_launcher: ClassVar[bool] = True
    # bwrap and firejail report a job killed by signal N as exit code 128+N
    signal_in_exit_code: ClassVar[bool] = False

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(root)
        why = self.check_available()
        if why is not None:
            raise RunnerUnavailable(f"--sandbox {self.name}: {why}")
        self.launcher = str(launcher_path())
        self.privileged = os.geteuid() == 0
        self.cgroup_manager, cgroup_why = cgroups.manager()
        if self.cgroup_manager is None and self.privileged:
            raise RunnerUnavailable(
                f"--sandbox {self.name}: running as root without a per-job cgroup "
                f"({cgroup_why}), nothing would limit a job's processes (the kernel does not "
                "apply RLIMIT_NPROC to root); give vibes a cgroup or run it as another user"
            )
        self.quotas = quota.WorkDirQuotas()
        # Without a cgroup: RLIMIT_NPROC in a user namespace of the job's own where the
        # kernel offers one, else per user (with room for the user's other processes).
        self.own_userns = self.cgroup_manager is None and self.job_userns()
        per_user = self.cgroup_manager is None and not self.own_userns
        self._nproc_base = _user_tasks() + _NPROC_MARGIN if per_user else 0
        weaker = []
        if self.cgroup_manager is None:
            processes = "per job (own user namespace)" if self.own_userns else "per user"
            weaker.append(
                f"no per-job cgroup ({cgroup_why}): memory via RLIMIT_AS, processes via "
                f"RLIMIT_NPROC ({processes})"
            )
        if not self.quotas.enabled:
            weaker.append("no tmpfs quota: disk use is checked after each command only")
        weaker += self.weaknesses()
        # Instance-level: what this machine actually gives, for reports and `auto`.
        self.capabilities = self.capabilities.model_copy(  # type: ignore[misc]
            update={"enforces_pids": self.cgroup_manager is not None, "notes": "; ".join(weaker)}
        )

    def weaknesses(self) -> list[str]:
        """What this runner lacks on this machine, beyond cgroups and quota."""
        return []

    def job_userns(self) -> bool:
        """Whether each job can get a user namespace of its own (unprivileged)."""
        return False

    # -- work dir -----------------------------------------------------------------------

    def setup_workdir(self, session: Session) -> None:
        assert session.host_dir is not None
        try:
            self.quotas.mount(session.host_dir, Limits().disk_mb)
        except OSError as exc:
            raise RunnerError(f"cannot mount the work dir quota: {exc}") from exc

    def cleanup(self, session: Session) -> None:
        if session.host_dir is not None:
            try:
                self.quotas.release(session.host_dir)
            except OSError as exc:
                raise RunnerError(f"cannot unmount {session.host_dir}: {exc}") from exc
        super().cleanup(session)

    # -- per command --------------------------------------------------------------------

    def open_job(self, job: Job) -> None:
        assert job.session.host_dir is not None
        try:
            self.quotas.fit(job.session.host_dir, job.limits.disk_mb)
        except OSError as exc:
            raise RunnerError(f"cannot resize the work dir quota: {exc}") from exc
        if self.cgroup_manager is None:
            job.cgroup_less = True
            return
        try:
            job.cgroup = self.cgroup_manager.create(job.limits.memory_mb, job.limits.pids)
        except OSError as exc:
            raise RunnerError(f"cannot create the job's cgroup: {exc}") from exc

    def close_job(self, job: Job) -> None:
        super().close_job(job)
        assert job.session.host_dir is not None
        job.disk_full = self.quotas.exceeded(job.session.host_dir, job.limits.disk_mb)

    def outer_args(self, job: Job) -> list[str]:
        """Launcher flags applied outside any namespace tool: cgroup join and rlimits."""
        args: list[str] = []
        if job.cgroup is not None:
            for procs in job.cgroup.procs_files:
                args += ["--cgroup", procs]
        # CUDA reserves far more address space than it uses: a GPU session's memory is
        # limited by its cgroup only.
        cgroupless = job.cgroup is None and job.session.device is None
        args += rlimit_args(job.limits, address_space=cgroupless)
        if job.cgroup is None:
            args += self.nproc_args(job)
        return args

    def nproc_args(self, job: Job) -> list[str]:
        """Launcher flags for the job's process budget where no cgroup gives one."""
        if self.own_userns:
            return ["--own-userns", "--rlimit", f"nproc={self.userns_budget(job)}"]
        return ["--rlimit", f"nproc={self._nproc_base + job.limits.pids}"]

    def userns_budget(self, job: Job) -> int:
        """RLIMIT_NPROC in the job's own user namespace: its pids limit, plus the launcher
        and the pid namespace's init, which wait in that namespace too."""
        return job.limits.pids + LAUNCHER_PROCESSES

    # -- starting, and storms -------------------------------------------------------------

    def execute(self, session: Session, command: Sequence[str], limits: Limits,
                **kwargs: object) -> ExecutionResult:  # fmt: skip
        """Raises, besides the interface's: RunnerError when the job could not start even
        after ``START_RETRIES`` tries (a neighbour's storm, the host out of memory)."""
        if kwargs.get("wiring") is not None:  # its pipes go with the first try: no retry
            result = super().execute(session, command, limits, **kwargs)  # type: ignore[arg-type]
            why = self.start_failure(result)
            if why is not None:
                raise RunnerError(f"{self.name} could not start {command[0]}: {why}")
            return result
        delay = _START_BACKOFF_S
        for attempt in range(START_RETRIES):
            last = attempt + 1 == START_RETRIES
            try:
                result = super().execute(session, command, limits, **kwargs)  # type: ignore[arg-type]
            except RunnerError as exc:
                if last or not _TRANSIENT.search(str(exc)):
                    raise
            else:
                why = self.start_failure(result)
                if why is None:
                    return result
                if last or not _TRANSIENT.search(why):
                    raise RunnerError(f"{self.name} could not start {command[0]}: {why}")
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    def start_failure(self, result: ExecutionResult) -> str | None:
        """What the sandbox tool said when it could not start the job, if it could not."""
        return None

    def watch(self, job: Job) -> Callable[[], bool] | None:
        """A fork storm ends at once: a job held at its process limit for STORM_POLLS
        polls in a row (forks still being refused, or its user namespace full) is killed
        and reported as ``pids``, rather than taking the CPU from its neighbours until
        its timeout. A job that touches the limit once and goes on is left alone."""
        if job.cgroup is None and not self.own_userns:
            return None
        streak = last_hits = 0

        def storming() -> bool:
            nonlocal streak, last_hits
            if job.cgroup is not None:
                hits = job.cgroup.pids_max_hits()
                full, last_hits = hits > last_hits, hits
            else:
                full = bool(job.pid) and namespace_members(job.pid) >= self.userns_budget(job) - 1
            streak = streak + 1 if full else 0
            if streak >= STORM_POLLS:
                job.extra["storm"] = True
            return streak >= STORM_POLLS

        return storming

    def kill(self, job: Job) -> None:
        # No pids counter to read afterwards: count the job's namespace before it goes
        # (kill also runs after the job ended: then there is nothing left to count).
        watched = job.cgroup is None and job.pid and not job.closed and self.own_userns
        if watched and namespace_members(job.pid) >= self.userns_budget(job) - 1:
            job.extra["pids_full"] = True
        super().kill(job)

    def classify(self, job: Job, raw: spawn.RawExit) -> Termination:
        ended = super().classify(job, raw)
        if job.extra.get("storm") and ended is not Termination.KILLED:
            return Termination.PIDS  # stopped by watch()
        if job.extra.get("pids_full") and ended in (Termination.TIMED_OUT, Termination.EXITED):
            return Termination.PIDS  # a storm at its limit until the timeout
        return ended

    def readonly_paths(self, job: Job) -> list[str]:
        return [*SYSTEM_READONLY, *granted_paths(job.session)[0]]

    def landlock_args(self, job: Job) -> list[str]:
        """Launcher flags for Landlock (only the listed paths) and the seccomp filter,
        with the session's network policy and extra blocked syscalls."""
        args: list[str] = []
        for path in self.readonly_paths(job):
            args += ["--ro", path]
        for path in [str(job.session.path), *DEVICES_WRITABLE, *granted_paths(job.session)[1]]:
            args += ["--rw", path]
        return [*args, "--landlock", "--seccomp", *policy_flags(job.session)]

    def normalize(self, raw: spawn.RawExit) -> spawn.RawExit:
        code = raw.exit_code
        if self.signal_in_exit_code and code is not None and 128 < code <= 128 + 64:
            # Ambiguous with a job that exits 129..192 by itself; libtest never does.
            return dataclasses.replace(raw, status=code - 128)  # wait status: killed by N
        return raw


class LandlockRunner(ConfinedRunner):
    """Landlock (read+execute on the system and the session's read-only paths, read-write
    on the work dir only, no TCP, signals scoped), seccomp (AF_UNIX sockets only; no
    namespace, mount, ptrace, bpf, io_uring or keyctl calls), rlimits, a per-job cgroup for
    memory and pids killed as a whole, a new network namespace and a tmpfs work dir with a
    size quota (the last three as root)."""

    name: ClassVar[str] = "landlock"

    def __init__(self, root: Path | None = None) -> None:
        self.abi = 0
        super().__init__(root)

    def job_userns(self) -> bool:
        return bool(probe(self.launcher).get("userns"))

    def weaknesses(self) -> list[str]:
        self.abi = probe(self.launcher)["landlock_abi"]
        weaker = []
        if not self.privileged:
            weaker.append("no network namespace (seccomp and Landlock still block sockets)")
            # Loopback only needs a namespace of its own.
            self.capabilities = self.capabilities.model_copy(  # type: ignore[misc]
                update={"network": frozenset({NetworkPolicy.DISABLED, NetworkPolicy.UNRESTRICTED})}
            )
        if self.abi < 4:
            weaker.append(f"Landlock ABI {self.abi} < 4: TCP is blocked by seccomp only")
        if self.abi < 6:
            weaker.append(f"Landlock ABI {self.abi} < 6: signals to other processes not scoped")
        return weaker

    @classmethod
    def check_available(cls) -> str | None:
        if not sys.platform.startswith("linux"):
            return "Landlock needs Linux"
        try:
            launcher = str(launcher_path())
        except RunnerUnavailable as exc:  # no C compiler; a failed build is RunnerBroken
            return str(exc)
        info = probe(launcher)
        if info.get("landlock_abi", 0) < MIN_LANDLOCK_ABI:
            return "the kernel has no Landlock (needs Linux >= 5.13 with landlock in lsm=)"
        if not info.get("seccomp"):
            return "the kernel has no seccomp filter support"
        return None

    def wrap(self, job: Job, command: Sequence[str]) -> list[str]:
        argv = [self.launcher, *self.outer_args(job)]
        network = job.session.spec.policy.network
        if self.privileged and network is not NetworkPolicy.UNRESTRICTED:
            argv += ["--netns"] + (["--loopback"] if network is NetworkPolicy.LOCAL else [])
        if self.privileged:
            argv += ["--drop-caps"]
        return [*argv, *self.landlock_args(job), "--", *command]
