"""What a session's ``SandboxPolicy`` asks, each sandbox enforces or refuses: the network
(disabled, the session's own loopback, the host's network), extra blocked system calls,
extra writable paths. A real C program probes from inside every real sandbox."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.components import need
from vibes_eval.core.errors import PolicyUnsupported
from vibes_eval.core.runner import NetworkPolicy, SandboxPolicy, SessionSpec, TaskRunner
from vibes_eval.core.types import Limits, Termination

PROBE = r"""
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int tcp(const char *ip, int port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) { printf("socket: %s\n", strerror(errno)); return 1; }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, ip, &a.sin_addr);
    if (connect(s, (struct sockaddr *)&a, sizeof a)) { printf("connect: %s\n", strerror(errno)); return 1; }
    printf("connected\n");
    return 0;
}

int main(int argc, char **argv) {
    if (!strcmp(argv[1], "loop")) {          /* a server of its own on loopback */
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET};
        inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        socklen_t n = sizeof a;
        if (bind(l, (struct sockaddr *)&a, n) || listen(l, 1)) { printf("bind: %s\n", strerror(errno)); return 1; }
        getsockname(l, (struct sockaddr *)&a, &n);
        return tcp("127.0.0.1", ntohs(a.sin_port));
    }
    if (!strcmp(argv[1], "connect")) return tcp(argv[2], atoi(argv[3]));
    if (!strcmp(argv[1], "getppid")) { printf("%ld\n", (long)syscall(SYS_getppid)); return 0; }
    return 2;
}
"""

FAST = Limits(timeout_s=10)


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    if shutil.which("cc") is None:
        need("toolchains", "no C compiler (cc)")
    d = tmp_path_factory.mktemp("probe")
    (d / "probe.c").write_text(PROBE)
    subprocess.run(["cc", "-O1", "-o", str(d / "probe"), str(d / "probe.c")], check=True)
    return (d / "probe").read_bytes()


@pytest.fixture
def host_listener() -> Iterator[int]:
    """A TCP server on the host, on every address: what an unrestricted session reaches."""
    srv = socket.create_server(("0.0.0.0", 0))
    srv.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    stop.set()
    thread.join()
    srv.close()


def run_probe(runner: TaskRunner, probe: bytes, policy: SandboxPolicy, *args: str):  # type: ignore[no-untyped-def]
    session = runner.prepare(SessionSpec(label="policy", files={"probe": probe}, policy=policy))
    try:
        return runner.execute(
            session, ["sh", "-c", 'chmod +x probe && exec ./probe "$@"', "sh", *args], FAST
        )
    finally:
        runner.cleanup(session)


def host_address(runner: TaskRunner) -> str:
    """Where an unrestricted session finds the host: loopback, unless it is a container
    on Docker's bridge (then the bridge's gateway)."""
    if runner.name != "docker":
        return "127.0.0.1"
    client = runner.client  # type: ignore[attr-defined]
    names = {n.name for n in client.networks.list()}
    if "bridge" not in names:
        return "127.0.0.1"  # host networking
    config = client.networks.get("bridge").attrs["IPAM"]["Config"][0]
    gateway = config.get("Gateway") or next(ipaddress.ip_network(config["Subnet"]).hosts())
    return str(gateway)


def test_disabled_network_kills_a_socket(sandbox: TaskRunner, probe: bytes) -> None:
    res = run_probe(sandbox, probe, SandboxPolicy(), "loop")
    assert res.termination is Termination.BLOCKED_SYSCALL, res


def test_local_network_is_the_sessions_own_loopback(
    sandbox: TaskRunner, probe: bytes, host_listener: int
) -> None:
    if NetworkPolicy.LOCAL not in sandbox.capabilities.network:
        pytest.skip(f"{sandbox.name} offers no local-only network here")
    local = SandboxPolicy(network=NetworkPolicy.LOCAL)
    res = run_probe(sandbox, probe, local, "loop")
    assert res.ok and res.stdout == "connected\n", res
    res = run_probe(sandbox, probe, local, "connect", host_address(sandbox), str(host_listener))
    assert not res.ok and "connect:" in res.stdout, res  # the host is out of reach


def test_unrestricted_network_reaches_the_host(
    sandbox: TaskRunner, probe: bytes, host_listener: int
) -> None:
    policy = SandboxPolicy(network=NetworkPolicy.UNRESTRICTED)
    res = run_probe(sandbox, probe, policy, "connect", host_address(sandbox), str(host_listener))
    assert res.ok and res.stdout == "connected\n", res


def test_extra_blocked_syscalls_kill_the_job(sandbox: TaskRunner, probe: bytes) -> None:
    assert run_probe(sandbox, probe, SandboxPolicy(), "getppid").ok
    res = run_probe(sandbox, probe, SandboxPolicy(blocked_syscalls=("getppid",)), "getppid")
    assert res.termination is Termination.BLOCKED_SYSCALL, res


def test_extra_writable_paths(sandbox: TaskRunner, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # the container's user is not root
    policy = SandboxPolicy(writable_paths=(shared,))
    session = sandbox.prepare(SessionSpec(label="policy", policy=policy))
    try:
        res = sandbox.execute(session, ["sh", "-c", f"echo hi > {shared}/out"], FAST)
    finally:
        sandbox.cleanup(session)
    assert res.ok, res
    assert (shared / "out").read_text() == "hi\n"


def test_what_a_sandbox_cannot_enforce_is_refused(sandbox: TaskRunner) -> None:
    allow = SandboxPolicy(network=NetworkPolicy.ALLOWLIST, allowed_hosts=("pypi.org",))
    with pytest.raises(PolicyUnsupported, match="allowlist"):
        sandbox.prepare(SessionSpec(label="policy", policy=allow))
    with pytest.raises(PolicyUnsupported, match="unknown system call"):
        session = sandbox.prepare(
            SessionSpec(label="policy", policy=SandboxPolicy(blocked_syscalls=("no_such",)))
        )
        try:
            sandbox.execute(session, ["true"], FAST)
        finally:
            sandbox.cleanup(session)


def test_session_images_only_where_a_runner_can(sandbox: TaskRunner) -> None:
    """Only container runners run a session in an image; the others refuse in one line."""
    spec = SessionSpec(label="image", image="vibes-eval-base:x")
    if sandbox.capabilities.session_images:
        return
    with pytest.raises(PolicyUnsupported, match="cannot run a session in an image"):
        sandbox.prepare(spec)
