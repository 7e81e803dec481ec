"""Docker: one locked-down container per session, commands run in it with ``docker exec``.

The container: ``--network none``, read-only root, no capabilities, no-new-privileges,
memory (swap included), pids and CPU limits, a tmpfs ``/tmp``. The session's work dir is
a host directory (a size-limited tmpfs as root) bind-mounted at the same path, and each
``readonly_paths`` entry is bind-mounted read-only at its host path, so commands and paths
are identical to the local runners'. Pid 1 is ``vibes-box init`` (root without
capabilities); commands run as an unprivileged user through ``vibes-box run``, which caps
output inside the container and kills every process of that user when the command ends.

A session may name its own image (``SessionSpec.image``: SWE-bench's repository at its
base commit). Its container runs that image with a writable root (the container's own
layer, discarded with it); an image without vibes-box gets static builds of vibes-box and
vibes-launch added once (``image.ensure_session_image``). Everything else is as above.

Isolation between samples: a session (one sample, or one batch of samples the benchmark
chose to compile together) owns its container and work dir; nothing is shared between
sessions but the read-only mounts. Commands of one session run one at a time.

A timeout kills the container (``docker kill``, not just the exec client, which would leave
the process running); the next command of that session starts it again, its work dir
intact. Every container carries the ``vibes-eval.owner`` label: containers of a run that
died are removed when the next runner starts.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from vibes_eval.core.errors import RunnerError, RunnerUnavailable
from vibes_eval.core.runner import (
    Capabilities,
    IsolationLevel,
    NetworkPolicy,
    Session,
    SessionSpec,
    TaskRunner,
    Wiring,
)
from vibes_eval.core.types import ExecutionResult, Limits
from vibes_eval.runners import quota, spawn
from vibes_eval.runners.cgroups import CgroupStats
from vibes_eval.runners.docker.client import connect
from vibes_eval.runners.docker.image import ensure_image, ensure_session_image
from vibes_eval.runners.local import Job, LocalRunner, rlimit_args
from vibes_eval.runners.sandbox import granted_paths, policy_flags

BOX = "/opt/vibes/bin/vibes-box"
LAUNCH = "/opt/vibes/bin/vibes-launch"  # launcher.c, built into the image
LABEL_OWNER = "vibes-eval.owner"  # "<host>:<pid>" of the runner that created it
JOB_USER = (1000, 1000)  # the image's unprivileged user
_TRAILER = re.compile(
    rb"\n?\x1evibes-box status=(-?\d+) output_limited=(\d) timed_out=(\d) "
    rb"oom_kills=(-?\d+) pids_max=(-?\d+) cpu_us=(\d+) launch_error=([^\n]*)\n?$"
)
_TRAILER_KEYS = ("status", "output_limited", "timed_out", "oom_kills", "pids_max", "cpu_us")
_SLACK = 8 << 10  # bytes beyond the cap accepted from the box (its status line)
_KILL_GRACE_S = 10.0  # how long a killed container may take to end the exec stream
_BOX_GRACE_S = 5.0  # vibes-box stops the command at the timeout; past this we kill it all


@dataclass
class _Box:
    """The container of one session."""

    container: Any
    limits: tuple[int, int]  # (memory MiB, pids) it was last set to
    running: bool = True
    lock: threading.Lock = field(default_factory=threading.Lock)


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class DockerRunner(LocalRunner):
    """Strong isolation: a container per session. ~0.5 s to start a session and ~0.1 s
    per command on top of the local runners; use batches of samples per session."""

    name: ClassVar[str] = "docker"
    capabilities: ClassVar[Capabilities] = Capabilities(
        isolation_level=IsolationLevel.CONTAINER,
        enforces_memory=True,
        enforces_pids=True,
        enforces_disk=True,
        network=frozenset(
            {NetworkPolicy.DISABLED, NetworkPolicy.LOCAL, NetworkPolicy.UNRESTRICTED}
        ),
        blocks_syscalls=True,
        extra_writable=True,
        session_images=True,
        notes="one container per session; commands of a session share it, one at a time",
    )

    def __init__(self, root: Path | None = None, *, cpus: float = 1.0) -> None:
        super().__init__(root)
        self.client = connect()
        self.image = ensure_image(self.client)
        self.cpus = cpus
        privileged = os.geteuid() == 0
        # As root the work dir's tmpfs is handed to the image's user; otherwise the job
        # runs as our own uid, which owns the work dir already.
        self.user = JOB_USER if privileged else (os.getuid(), os.getgid())
        self.quotas = quota.WorkDirQuotas(owner=self.user if privileged else None)
        if not self.quotas.enabled:
            self.capabilities = self.capabilities.model_copy(  # type: ignore[misc]
                update={
                    "notes": self.capabilities.notes + "; no tmpfs quota (not root): "
                    "disk use is checked after each command only"
                }
            )
        self._boxes: dict[str, _Box] = {}
        self._boxes_lock = threading.Lock()
        self._session_images: dict[str, str] = {}  # SessionSpec.image -> image with vibes-box
        self._images_lock = threading.Lock()
        self._closing = False
        self.remove_leftovers()

    @classmethod
    def check_available(cls) -> str | None:
        host = os.environ.get("DOCKER_HOST", "")
        if host and not host.startswith("unix://"):
            # Work dirs and toolchains are bind-mounted from this machine's paths.
            return f"needs a Docker daemon on this machine (DOCKER_HOST={host})"
        try:
            connect().close()
        except RunnerUnavailable as exc:
            return str(exc)
        return None

    # -- containers ---------------------------------------------------------------------

    def remove_leftovers(self) -> None:
        """Remove containers of runs on this host whose process is gone (crashed, killed)."""
        host = socket.gethostname()
        for c in self.client.containers.list(all=True, filters={"label": LABEL_OWNER}):
            owner_host, _, pid = c.labels.get(LABEL_OWNER, "").rpartition(":")
            if owner_host == host and pid.isdigit() and not spawn.pid_alive(int(pid)):
                with contextlib.suppress(Exception):  # gone already, removal in progress
                    c.remove(force=True)

    def _start(self, session: Session, limits: Limits) -> _Box:
        import docker.errors
        from docker.types import Mount

        work = str(session.path)
        mounts = [Mount(target=work, source=work, type="bind", read_only=False)]
        readonly, writable = granted_paths(session)
        for p in readonly:
            mounts.append(Mount(target=p, source=p, type="bind", read_only=True))
        for p in writable:
            if not p.startswith("/dev/"):  # device nodes come with the device request
                mounts.append(Mount(target=p, source=p, type="bind", read_only=False))
        mem = f"{limits.memory_mb}m"
        own_image = session.spec.image is None
        image = self.image if own_image else self._session_image(session.spec.image)
        try:
            container = self.client.containers.run(
                image,
                detach=True,
                name=f"vibes-{session.id}",
                labels={LABEL_OWNER: _owner(), "vibes-eval.session": session.id},
                network_mode=self._network_mode(session),
                device_requests=self._device_requests(session),
                # A session image's files are the session's (a repository to patch): the
                # container's own layer takes the writes and goes with the container.
                read_only=own_image,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                mem_limit=mem,
                memswap_limit=mem,  # no swap: the memory limit is the limit
                pids_limit=limits.pids,
                nano_cpus=int(self.cpus * 1e9),
                tmpfs={"/tmp": "size=16m,mode=1777", "/run": "size=1m"},
                mounts=mounts,
                working_dir=work,
                hostname="sandbox",
                ipc_mode="private",
            )
        except docker.errors.DockerException as exc:
            raise RunnerError(f"cannot start a container for {session.id}: {exc}") from exc
        return _Box(container=container, limits=(limits.memory_mb, limits.pids))

    def _session_image(self, name: str) -> str:
        """``name``, or a copy of it with vibes-box added (built once per runner and image).

        Raises:
            RunnerError: the image is missing or cannot be prepared.
        """
        with self._images_lock:
            if name not in self._session_images:
                try:
                    self._session_images[name] = ensure_session_image(self.client, name)
                except RunnerUnavailable as exc:
                    raise RunnerError(str(exc)) from exc
            return self._session_images[name]

    def _network_mode(self, session: Session) -> str:
        """``none`` still has a loopback interface: enough for a local-only session."""
        if session.spec.policy.network is not NetworkPolicy.UNRESTRICTED:
            return "none"
        names = {n.name for n in self.client.networks.list()}
        return "bridge" if "bridge" in names else "host"  # a daemon started with --bridge=none

    def _device_requests(self, session: Session) -> list[Any]:
        if session.device is None:
            return []
        from docker.types import DeviceRequest

        return [DeviceRequest(device_ids=[session.device], capabilities=[["gpu"]])]

    def _fit(self, box: _Box, limits: Limits) -> None:
        """Restart a container a timeout killed; apply changed memory and pids limits."""
        import docker.errors

        try:
            if not box.running:
                box.container.start()
                box.running = True
            wanted = (limits.memory_mb, limits.pids)
            if box.limits != wanted:
                # The SDK's update() has no pids limit: call the endpoint directly.
                mem = limits.memory_mb << 20
                api = self.client.api
                url = api._url("/containers/{0}/update", box.container.id)
                data = {"Memory": mem, "MemorySwap": mem, "PidsLimit": limits.pids}
                api._raise_for_status(api._post_json(url, data=data))
                box.limits = wanted
        except docker.errors.DockerException as exc:
            raise RunnerError(f"cannot prepare container {box.container.name}: {exc}") from exc

    # -- lifecycle ----------------------------------------------------------------------

    def setup_workdir(self, session: Session) -> None:
        assert session.host_dir is not None
        try:
            self.quotas.mount(session.host_dir, Limits().disk_mb)
            tmp = session.host_dir / "tmp"
            tmp.mkdir()
            if os.geteuid() == 0:
                os.chown(tmp, *self.user)
        except OSError as exc:
            raise RunnerError(f"cannot set up the work dir: {exc}") from exc

    def prepare(self, spec: SessionSpec) -> Session:
        session = super().prepare(spec)
        try:
            box = self._start(session, Limits())
        except BaseException:
            self.cleanup(session)  # the work dir and its quota mount
            raise
        with self._boxes_lock:
            self._boxes[session.id] = box
        return session

    def write_files(self, session: Session, files: Mapping[str, str | bytes]) -> None:
        super().write_files(session, files)
        assert session.host_dir is not None
        if os.geteuid() == 0:
            # Files written by root on the host: give them to the container's user.
            for rel in files:
                path = session.host_dir / rel
                while path != session.host_dir:
                    os.chown(path, *self.user, follow_symlinks=False)
                    path = path.parent

    def cleanup(self, session: Session) -> None:
        import docker.errors

        with self._boxes_lock:
            box = self._boxes.pop(session.id, None)
        if box is not None:
            try:
                box.container.remove(force=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.DockerException as exc:
                raise RunnerError(f"cannot remove {box.container.name}: {exc}") from exc
        if session.host_dir is not None:
            try:
                self.quotas.release(session.host_dir)
            except OSError as exc:
                raise RunnerError(f"cannot unmount {session.host_dir}: {exc}") from exc
        super().cleanup(session)

    def close(self) -> None:
        self._closing = True  # commands cut short now end as KILLED
        with self._boxes_lock:
            boxes = list(self._boxes.values())
            self._boxes.clear()
        for box in boxes:
            with contextlib.suppress(Exception):
                box.container.remove(force=True)

    # -- execution ----------------------------------------------------------------------

    def _box_argv(self, session: Session, limits: Limits, command: Sequence[str]) -> list[str]:
        return [
            BOX, "run", "--cap", str(limits.output_bytes),
            "--timeout-ms", str(max(1, int(limits.timeout_s * 1000))),
            *rlimit_args(limits, address_space=False),  # memory: the container's cgroup
            "--", LAUNCH, "--seccomp", *policy_flags(session), "--", *command,
        ]  # fmt: skip

    # Its execute reads the output when the command ended: no streaming.
    execute_streaming = TaskRunner.execute_streaming

    def execute(
        self,
        session: Session,
        command: Sequence[str],
        limits: Limits,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stdin: bytes | None = None,
        wiring: Wiring | None = None,
    ) -> ExecutionResult:
        feeding: list[_Reader] = []
        try:
            return self._execute(session, command, limits, env, cwd, stdin, wiring, feeding)
        finally:
            if wiring is not None:
                # The feeder thread owns stdin's pipe once it runs (closing it under a
                # blocked read could hand its number to another file).
                if not feeding:
                    with contextlib.suppress(OSError):
                        os.close(wiring.stdin_fd)
                with contextlib.suppress(OSError):
                    os.close(wiring.stdout_fd)

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

    def _execute(
        self,
        session: Session,
        command: Sequence[str],
        limits: Limits,
        env: Mapping[str, str] | None,
        cwd: str | None,
        stdin: bytes | None,
        wiring: Wiring | None,
        feeding: list[_Reader],
    ) -> ExecutionResult:
        import docker.errors

        workdir, full_env = self.command_setup(session, command, env, cwd)
        with self._boxes_lock:
            box = self._boxes.get(session.id)
        if box is None:
            raise RunnerError(f"session {session.id} is not live")
        assert session.host_dir is not None
        with box.lock:  # one command at a time per container (vibes-box kills the rest)
            self._fit(box, limits)
            try:
                self.quotas.fit(session.host_dir, limits.disk_mb)
            except OSError as exc:
                raise RunnerError(f"cannot resize the work dir quota: {exc}") from exc
            start = time.monotonic()
            try:
                exec_id = self.client.api.exec_create(
                    box.container.id,
                    self._box_argv(session, limits, command),
                    stdin=stdin is not None or wiring is not None,
                    user=f"{self.user[0]}:{self.user[1]}",
                    workdir=str(workdir),
                    environment=full_env,
                )["Id"]
                sock = self.client.api.exec_start(exec_id, socket=True)
            except docker.errors.DockerException as exc:
                raise RunnerError(f"docker exec in {box.container.name} failed: {exc}") from exc
            reader = _Reader(sock, limits.output_bytes + _SLACK, wiring)
            reader.start(stdin)
            if wiring is not None:
                feeding.append(reader)
            # vibes-box stops the command at the timeout and reports the cgroup counters;
            # our own deadline is for a box that cannot (a container frozen or gone).
            stuck = not reader.wait(limits.timeout_s + _BOX_GRACE_S)
            if stuck and reader.stopped:  # a wired command ended early: not a timeout
                reader.wait(_KILL_GRACE_S)
                stuck = False
            if stuck:
                self._kill(box)
                reader.wait(_KILL_GRACE_S)
            reader.close()
            timed_out = stuck or bool(reader.trailer and reader.trailer["timed_out"])
            if timed_out and not stuck:
                # The box killed the command already; killing the container as well leaves
                # nothing to chance (the exec client alone cannot stop anything).
                self._kill(box)
            wall = time.monotonic() - start
            exit_code = None
            if reader.trailer is None:
                with contextlib.suppress(docker.errors.DockerException):
                    exit_code = self.client.api.exec_inspect(exec_id).get("ExitCode")
        return self._result(session, command, limits, reader, timed_out, wall, exit_code)

    def _kill(self, box: _Box) -> None:
        """``docker kill`` the session's container; the next command starts it again."""
        import docker.errors

        with contextlib.suppress(docker.errors.DockerException):
            box.container.kill()
        box.running = False

    def _result(
        self,
        session: Session,
        command: Sequence[str],
        limits: Limits,
        reader: _Reader,
        timed_out: bool,
        wall: float,
        exit_code: int | None,
    ) -> ExecutionResult:
        trailer = reader.trailer
        if reader.launch_error:
            message = reader.launch_error.removeprefix("vibes-launch: ")
            raise RunnerError(f"docker runner could not start {command[0]}: {message}")
        if trailer is not None:
            status = trailer["status"]
        elif exit_code is not None:  # the box itself died (killed with the container)
            status = (exit_code - 128) if exit_code > 128 else (exit_code << 8)
        else:
            status = 9  # killed
        out, err = reader.stdout, reader.stderr
        cap = limits.output_bytes
        limited = trailer["output_limited"] if trailer else 0  # bits: 1 stdout, 2 stderr
        raw = spawn.RawExit(
            status=status,
            stdout=out[:cap],
            stderr=err[:cap],
            stdout_truncated=bool(limited & 1) or len(out) > cap,
            stderr_truncated=bool(limited & 2) or len(err) > cap,
            wall_s=wall,
            cpu_s=(trailer["cpu_us"] / 1e6) if trailer else 0.0,
            timed_out=timed_out,
            output_limited=bool(limited) or len(out) > cap or len(err) > cap,
        )
        assert session.host_dir is not None
        job = Job(session=session, limits=limits, cwd=session.path)
        job.stats = CgroupStats(
            oom_kills=trailer["oom_kills"] if trailer else 0,
            pids_max_hits=trailer["pids_max"] if trailer else 0,
        )
        job.disk_full = self.quotas.exceeded(session.host_dir, limits.disk_mb)
        job.closed = self._closing
        termination = self.classify(job, raw)
        return ExecutionResult(
            exit_code=raw.exit_code,
            signal=raw.signal,
            stdout=raw.stdout.decode("utf-8", "replace"),
            stderr=raw.stderr.decode("utf-8", "replace"),
            stdout_truncated=raw.stdout_truncated,
            stderr_truncated=raw.stderr_truncated,
            wall_s=raw.wall_s,
            cpu_s=raw.cpu_s,
            termination=termination,
        )


class _Reader:
    """Reads one exec's multiplexed stream in a thread; feeds stdin first."""

    def __init__(self, sock: Any, cap: int, wiring: Wiring | None = None) -> None:
        self.sock = sock
        self.cap = cap
        self.wiring = wiring
        self.stopped = False
        self.out = bytearray()
        self.err = bytearray()
        self.trailer: dict[str, int] | None = None
        self.launch_error = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self, stdin: bytes | None) -> None:
        raw = getattr(self.sock, "_sock", self.sock)
        if self.wiring is not None:
            threading.Thread(target=self._feed, args=(raw,), daemon=True).start()
        elif stdin is not None:
            with contextlib.suppress(OSError):
                raw.sendall(stdin)
                raw.shutdown(socket.SHUT_WR)
        self._thread.start()

    def _feed(self, raw: Any) -> None:
        """A wired command's stdin: what its pipe brings, until EOF."""
        assert self.wiring is not None
        try:
            with contextlib.suppress(OSError):
                while chunk := os.read(self.wiring.stdin_fd, 1 << 16):
                    raw.sendall(chunk)
                raw.shutdown(socket.SHUT_WR)
        finally:
            os.close(self.wiring.stdin_fd)

    def _pass_on(self, data: bytes) -> None:
        """A wired command's stdout goes to its pipe; a far end gone drops it."""
        assert self.wiring is not None
        with contextlib.suppress(OSError):
            os.write(self.wiring.stdout_fd, data)  # blocking: the pipe paces the box

    def _run(self) -> None:
        from docker.utils.socket import frames_iter

        try:
            for stream, data in frames_iter(self.sock, tty=False):
                if stream == 1 and self.wiring is not None:
                    self._pass_on(data)
                    continue
                buf = self.out if stream == 1 else self.err
                if len(buf) < self.cap:
                    buf += data[: self.cap - len(buf)]
        except (OSError, ValueError):
            pass  # the container was killed under us
        finally:
            self._done.set()

    def wait(self, timeout: float) -> bool:
        """Whether the stream ended within ``timeout``; a wired command whose stop is
        set is ended at once (its socket closed) and counts as ended."""
        if self.wiring is None:
            return self._done.wait(timeout)
        deadline = time.monotonic() + timeout
        while not self._done.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
            if self.wiring.stop.is_set():
                self.stopped = True
                return False
            if time.monotonic() >= deadline:
                return False
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        m = _TRAILER.search(bytes(self.err))
        if m is not None:
            self.trailer = {k: int(v) for k, v in zip(_TRAILER_KEYS, m.groups(), strict=False)}
            self.launch_error = m.group(len(_TRAILER_KEYS) + 1).decode("utf-8", "replace")
            del self.err[m.start() :]

    @property
    def stdout(self) -> bytes:
        return bytes(self.out)

    @property
    def stderr(self) -> bytes:
        return bytes(self.err)
