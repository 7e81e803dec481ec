"""Start a command in its own session, collect capped output, enforce a wall-clock timeout.

Waiting uses a pidfd in the same ``select`` as the output pipes: exact wake-up on exit (no
polling, see docs/sandbox.md) and no hang when a detached grandchild keeps the pipes open.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from vibes_eval.core.errors import RunnerError

_READ = 1 << 16
LAUNCH_ERRFD_ENV = "VIBES_LAUNCH_ERRFD"  # read (and removed from the env) by launcher.c
_DRAIN_GRACE_S = 0.05  # after exit, how long leftovers still writing to the pipes may take
WATCH_EVERY_S = 0.1  # how often run() polls its watch


@dataclass
class RawExit:
    """What happened, before a runner interprets it into a ``Termination``."""

    status: int  # os.wait4 status
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    wall_s: float
    cpu_s: float
    timed_out: bool
    output_limited: bool
    pid: int = 0
    launch_error: str = ""  # what the launcher reported when it could not start the job
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def exit_code(self) -> int | None:
        return os.WEXITSTATUS(self.status) if os.WIFEXITED(self.status) else None

    @property
    def signal(self) -> int | None:
        return os.WTERMSIG(self.status) if os.WIFSIGNALED(self.status) else None


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (ours or not). Used to tell leftovers of
    a run that died from those of one still running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid``; gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class _Stream:
    def __init__(self, cap: int, listener: Callable[[bytes], None] | None = None) -> None:
        self.cap = cap
        self.chunks: list[bytes] = []
        self.size = 0
        self.truncated = False
        self.listener = listener

    def add(self, data: bytes) -> bool:
        """Keep data up to the cap (and hand what is kept to the listener); True when the
        cap was passed."""
        room = self.cap - self.size
        if room > 0:
            self.chunks.append(data[:room])
            if self.listener is not None:
                self.listener(data[:room])
        self.size += len(data)
        if self.size > self.cap:
            self.truncated = True
        return self.truncated

    def value(self) -> bytes:
        return b"".join(self.chunks)


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    cwd: str | None,
    timeout_s: float,
    output_cap: int,
    stdin: bytes | int | None = None,
    stdout_fd: int | None = None,
    kill: Callable[[int], None] = kill_group,
    on_start: Callable[[int], None] | None = None,
    launcher_errors: bool = False,
    watch: Callable[[], bool] | None = None,
    on_stdout: Callable[[bytes], None] | None = None,
) -> RawExit:
    """Run ``argv`` to completion or until killed; never leaves it running.

    ``kill(pid)`` is called on timeout, on output overflow and after exit (to remove
    leftovers); runners with cgroups pass one that kills through the cgroup.
    ``watch()`` is polled every ``WATCH_EVERY_S`` while the command runs; when it returns
    True the command is killed then and there (the caller's watch knows why).
    ``on_stdout(chunk)`` gets stdout as it is read (what is kept, up to the cap), so a
    caller can act on a long command's lines before it ends; what it raises kills the
    command and is raised once the command is gone.
    ``stdin`` given as a file descriptor and ``stdout_fd`` connect the command to pipes
    another command holds the other ends of (``core.pair``); this function owns and
    closes them, and keeps no stdout then.
    ``launcher_errors``: ``argv`` starts with vibes-launch; give it a close-on-exec pipe
    for its own setup errors (``RawExit.launch_error``), so a job cannot fake them.

    Raises:
        RunnerError: the command could not be started.
    """
    start = time.monotonic()
    err_r = err_w = -1
    env = dict(env) if env is not None else dict(os.environ)
    if launcher_errors:
        err_r, err_w = os.pipe()
        env[LAUNCH_ERRFD_ENV] = str(err_w)
    wired = [fd for fd in (stdin, stdout_fd) if isinstance(fd, int)]
    if isinstance(stdin, int):
        stdin_arg: int = stdin
    else:
        stdin_arg = subprocess.PIPE if stdin is not None else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=stdin_arg,
            stdout=stdout_fd if stdout_fd is not None else subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,  # own process group: one killpg reaches the tree
            close_fds=True,
            pass_fds=(err_w,) if launcher_errors else (),
        )
    except OSError as exc:
        if launcher_errors:
            os.close(err_r)
            os.close(err_w)
        raise RunnerError(f"cannot start {argv[0]}: {exc}") from exc
    finally:
        for fd in wired:  # the command holds its own copies: EOF reaches the far end
            os.close(fd)
    if launcher_errors:
        os.close(err_w)  # the launcher holds the only copy: EOF once it execs or exits
    if on_start is not None:
        on_start(proc.pid)
    assert proc.stderr is not None
    out_stream, err_stream = _Stream(output_cap, on_stdout), _Stream(output_cap)
    streams = {proc.stderr.fileno(): err_stream}
    if proc.stdout is not None:
        streams = {proc.stdout.fileno(): out_stream, **streams}
    pidfd = os.pidfd_open(proc.pid)
    sel = selectors.DefaultSelector()
    for fd in streams:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    sel.register(pidfd, selectors.EVENT_READ)
    # stdin is fed from the same loop: a job that never reads it cannot block us
    pending = memoryview(stdin if isinstance(stdin, bytes) else b"")
    stdin_fd = -1
    if proc.stdin is not None:
        stdin_fd = proc.stdin.fileno()
        if pending:
            os.set_blocking(stdin_fd, False)
            sel.register(stdin_fd, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()

    deadline = start + timeout_s
    next_watch = start + WATCH_EVERY_S
    timed_out = output_limited = exited = False
    exit_time = 0.0
    open_fds = set(streams)
    try:
        while not exited or open_fds:
            now = time.monotonic()
            if exited:
                wait = max(0.0, exit_time + _DRAIN_GRACE_S - now)
                if wait == 0.0:
                    break
            else:
                wait = deadline - now
                if wait <= 0:
                    timed_out = True
                    kill(proc.pid)
                    break
                if watch is not None:
                    if now >= next_watch:
                        next_watch = now + WATCH_EVERY_S
                        if watch():
                            kill(proc.pid)
                            break
                    wait = min(wait, next_watch - now)
            for key, _ in sel.select(wait):
                fd = key.fd
                if fd == pidfd:
                    exited = True
                    exit_time = time.monotonic()
                    sel.unregister(pidfd)
                    continue
                if fd == stdin_fd:
                    try:
                        pending = pending[os.write(fd, pending[:_READ]) :]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(fd)
                        assert proc.stdin is not None
                        proc.stdin.close()
                    continue
                try:
                    data = os.read(fd, _READ)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(fd)
                    open_fds.discard(fd)
                elif streams[fd].add(data) and not output_limited:
                    output_limited = True
                    kill(proc.pid)
            if output_limited:
                break
        # Whatever is still around (a detached grandchild holding the pipes) goes now.
        kill(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    except Exception:
        kill(proc.pid)  # a listener's error leaves nothing running
        with contextlib.suppress(ChildProcessError):
            os.wait4(proc.pid, 0)
        raise
    finally:
        sel.close()
        os.close(pidfd)
        if proc.stdout is not None:
            proc.stdout.close()
        proc.stderr.close()
        if proc.stdin is not None:
            proc.stdin.close()
        launch_error = _read_all(err_r) if launcher_errors else b""
    wall = time.monotonic() - start
    out, err = out_stream, err_stream
    return RawExit(
        status=status,
        stdout=out.value(),
        stderr=err.value(),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        timed_out=timed_out,
        output_limited=output_limited,
        pid=proc.pid,
        launch_error=launch_error.decode("utf-8", "replace").strip(),
    )


def _read_all(fd: int) -> bytes:
    """Read what a pipe holds without waiting for more, then close it."""
    chunks = []
    os.set_blocking(fd, False)
    try:
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
    except BlockingIOError:
        pass
    finally:
        os.close(fd)
    return b"".join(chunks)
