"""A Ray cluster of several nodes on one machine, each node a ``ray start --block``
process of its own: the tests' and benches' cluster, and a way to try scale-out on a laptop.

Every node gets its own ports (two raylets on one host must not share any), nodes join one
at a time (two raylets starting at once on one host race for the same socket file names),
and ``stop`` ends only the processes this object started: never ``ray stop``, which would
end every Ray process on the machine, other users' included.

    python -m vibes_eval.scaleout.local_cluster --workers 2   # prints the address; Ctrl-C stops
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Every node on loopback, nothing on the machine's outward address. Not 127.0.0.1: Ray
# swaps that (and "localhost") for the outward address; another loopback address it keeps.
LOOPBACK = "127.0.0.2"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def _ray_cli() -> list[str]:
    """``ray`` of this interpreter's environment (the PATH may have another)."""
    beside = Path(sys.executable).with_name("ray")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("ray")
    if found is None:
        raise RuntimeError("the ray command is not installed: pip install 'vibes-eval[ray]'")
    return [found]


@dataclass
class NodeProcess:
    """One ``ray start --block``: the node lives as long as this process."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path
    node_id: str = ""
    resources: dict[str, float] = field(default_factory=dict)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


class LocalCluster:
    """A head node and worker nodes on this machine, each with ``num_cpus`` CPUs.

    Raises (``start``, ``add_worker``): RuntimeError with the node's log tail when a node
    does not come up in ``timeout_s``.
    """

    def __init__(
        self,
        *,
        num_cpus: int = 1,
        object_store_mb: int = 100,
        timeout_s: float = 180.0,
        temp_dir: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.num_cpus = num_cpus
        self.object_store_mb = object_store_mb
        self.timeout_s = timeout_s
        self._own_temp = temp_dir is None
        # Short: Ray's socket paths must fit in 107 bytes.
        self.temp_dir = temp_dir or tempfile.mkdtemp(prefix="vray-", dir="/tmp")
        self.port = _free_port()
        self.client_port = _free_port()
        self.nodes: list[NodeProcess] = []
        self._gcs: Any = None
        self._env = {**os.environ, **(env or {}), "RAY_USAGE_STATS_ENABLED": "0"}
        self._worker_ports = 21000 + (os.getpid() % 200) * 150  # per cluster, per node below

    @property
    def address(self) -> str:
        """The GCS address a driver or ``ray start --address`` joins."""
        return f"{LOOPBACK}:{self.port}"

    @property
    def client_address(self) -> str:
        """The Ray Client address (``ray://``)."""
        return f"ray://{LOOPBACK}:{self.client_port}"

    # -- starting -------------------------------------------------------------------------

    def start(self, workers: int = 0, env: dict[str, str] | None = None) -> None:
        """The head node (which takes units too) with ``env`` added to its environment,
        and ``workers`` plain worker nodes."""
        self._launch(
            "head",
            [
                "--head",
                f"--port={self.port}",
                f"--ray-client-server-port={self.client_port}",
                f"--temp-dir={self.temp_dir}",
                "--include-dashboard=false",
            ],
            {},
            env or {},
        )
        for _ in range(workers):
            self.add_worker()

    def add_worker(
        self, resources: dict[str, float] | None = None, env: dict[str, str] | None = None
    ) -> NodeProcess:
        """Start one worker node (its own custom ``resources``, ``env`` added to its
        environment: a node's workers inherit it) and wait until the cluster lists it."""
        n = len(self.nodes)
        lo = self._worker_ports + 20 * n
        args = [
            f"--address={self.address}",
            f"--min-worker-port={lo}",
            f"--max-worker-port={lo + 19}",
        ]
        if resources:
            args.append(f"--resources={json.dumps(resources)}")
        return self._launch(f"worker-{n}", args, dict(resources or {}), env or {})

    def _launch(
        self, name: str, args: list[str], resources: dict[str, float], env: dict[str, str]
    ) -> NodeProcess:
        log = Path(self.temp_dir) / f"{name}.log"
        argv = [
            *_ray_cli(), "start", "--block", "--disable-usage-stats",
            f"--node-ip-address={LOOPBACK}",
            f"--num-cpus={self.num_cpus}", "--num-gpus=0",
            f"--object-store-memory={self.object_store_mb * 1024 * 1024}",
            f"--node-manager-port={_free_port()}", f"--object-manager-port={_free_port()}",
            f"--dashboard-agent-listen-port={_free_port()}",
            f"--dashboard-agent-grpc-port={_free_port()}",
            f"--runtime-env-agent-port={_free_port()}", f"--metrics-export-port={_free_port()}",
            *args,
        ]  # fmt: skip
        before = {n["NodeID"] for n in self.alive_nodes()} if self.nodes else set()
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**self._env, **env},
                start_new_session=True,
            )
        node = NodeProcess(name, proc, log, resources=resources)
        self.nodes.append(node)
        node.node_id = self._wait_for_new_node(node, before)
        return node

    def _wait_for_new_node(self, node: NodeProcess, before: set[str]) -> str:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if not node.alive:
                raise RuntimeError(f"ray node {node.name} exited:\n{self._tail(node)}")
            with contextlib.suppress(Exception):  # the GCS is not up yet
                new = [n["NodeID"] for n in self.alive_nodes() if n["NodeID"] not in before]
                if new:
                    return new[0]
            time.sleep(0.25)
        raise RuntimeError(
            f"ray node {node.name} not up in {self.timeout_s:.0f} s:\n{self._tail(node)}"
        )

    @staticmethod
    def _tail(node: NodeProcess) -> str:
        try:
            return "\n".join(node.log.read_text(errors="replace").splitlines()[-15:])
        except OSError:
            return "(no log)"

    def alive_nodes(self) -> list[dict[str, Any]]:
        """The cluster's live nodes as its GCS lists them (no driver connection needed, so
        a test's own driver is free to connect): ``NodeID`` and ``Resources`` of each.

        Raises: whatever Ray raises while the GCS is not up yet.
        """
        from ray._raylet import GcsClient  # no public call lists nodes without a driver

        if self._gcs is None:
            self._gcs = GcsClient(address=self.address)
        nodes = []
        for node_id, info in self._gcs.get_all_node_info(timeout=10).items():
            if info.state == 0:  # ALIVE
                resources = dict(info.resources_total)
                nodes.append({"NodeID": node_id.hex(), "Resources": resources})
        return nodes

    # -- faults and stopping ----------------------------------------------------------------

    def kill_raylet(self, node: NodeProcess) -> None:
        """Kill the node's raylet with SIGKILL: the cluster marks the node dead and its
        actors lose their raylet. Then the rest of the node goes too, as with a machine
        that died: its processes, and what they ran."""
        tree = _children(node.proc.pid)
        for pid, _ in tree:
            if _comm(pid) == "raylet":
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(1.0)
        _kill_all(tree)
        self._end(node, grace_s=5.0)

    def stop(self) -> None:
        """End every process this cluster started, workers first; remove its temp dir."""
        trees = {id(node): _children(node.proc.pid) for node in self.nodes}
        for node in reversed(self.nodes):
            with contextlib.suppress(ProcessLookupError):
                node.proc.send_signal(signal.SIGTERM)  # `ray start --block` stops its node
        for node in reversed(self.nodes):
            self._end(node, grace_s=20.0)
            _kill_all(trees[id(node)])  # what outlived it (sandboxed commands of its actors)
        self.nodes.clear()
        if self._own_temp:
            shutil.rmtree(self.temp_dir, ignore_errors=True)

    @staticmethod
    def _end(node: NodeProcess, *, grace_s: float) -> None:
        with contextlib.suppress(ProcessLookupError):
            node.proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            node.proc.wait(grace_s)
        # Whatever of the node outlived `ray start` is still in its process group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(node.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            node.proc.wait(5)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _children(pid: int) -> list[tuple[int, str]]:
    """Every descendant of ``pid`` (from /proc), each with its start time: a pid reused by
    another process later is not the one that was seen."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields:
                parents.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append((child, _started(child)))
            todo.append(child)
    return out


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat after the command name: state, ppid, ... (empty when gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _started(pid: int) -> str:
    fields = _stat(pid)
    return fields[19] if len(fields) > 19 else ""  # starttime, in clock ticks since boot


def _kill_all(seen: list[tuple[int, str]]) -> None:
    """SIGKILL each process of ``seen`` (this cluster's own tree) still running."""
    for pid, started in seen:
        if started and _started(pid) == started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--num-cpus", type=int, default=1)
    args = parser.parse_args()
    cluster = LocalCluster(num_cpus=args.num_cpus)

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        cluster.start(args.workers)
        print(f"ray cluster up: --ray-address {cluster.address} (or {cluster.client_address}); "
              "Ctrl-C stops it", flush=True)  # fmt: skip
        signal.signal(signal.SIGINT, signal.default_int_handler)  # Ray's libraries take it
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
