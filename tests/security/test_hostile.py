"""Hostile samples through the real CLI, under every sandbox this machine has, with the
policy filter off so the sandbox alone stops them.

For each sample: not passed, the expected reason recorded; and after the run: nothing
written outside the work dir, no TCP connection or UDP datagram reached the test's
listeners, the victim process alive, no process of the attack left running, the run
completed with every sample reported.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.components import need
from tests.conftest import run_cli
from tests.security import hostile
from vibes_eval.core.errors import RunnerUnavailable
from vibes_eval.core.registry import runner_class

SANDBOXES = [
    "landlock",
    "bwrap",
    "firejail",
    pytest.param("docker", marks=pytest.mark.docker),
]
# Per sample's test run; fork storm and setsid_hang use all of it. The 2 GiB that
# alloc_64g touches before its cgroup stops it took over 8 s on a loaded 2-core machine
# (CI beside a fresh-check), which read as `timeout` instead of `memory`.
TIMEOUT_S = 15
_GONE_GRACE_S = 2.0  # SIGKILLed processes may take a moment to finish exiting


def _skip_unless_available(sandbox: str) -> None:
    """Skip when the sandbox is not installed here (fail when VIBES_TEST_REQUIRE names it);
    a broken one (RunnerBroken: launcher or image build) fails the test."""
    cls = runner_class(sandbox)
    try:
        why = cls.check_available()
    except RunnerUnavailable as exc:
        why = str(exc)
    need(sandbox, why)


@pytest.fixture
def listeners() -> Iterator[tuple[socket.socket, socket.socket]]:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    tcp.setblocking(False)
    udp.setblocking(False)
    yield tcp, udp
    tcp.close()
    udp.close()


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def outside() -> Iterator[Path]:
    # Directly under /tmp and open to everyone: only the sandbox stands in the way.
    path = Path("/tmp") / f"vibes-outside-{secrets.token_hex(4)}"
    path.mkdir(mode=0o777)
    path.chmod(0o777)
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


def _attack_processes(nonce: str) -> list[str]:
    """Live (non-zombie) processes carrying the nonce in their argv or working dir."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = ""
            with contextlib.suppress(OSError):
                cwd = os.readlink(entry / "cwd")
        except (OSError, IndexError):
            continue
        if state in ("Z", "X"):
            continue
        if nonce in cmdline or nonce in cwd:
            found.append(f"{entry.name} [{state}] {cmdline.strip()} (cwd {cwd})")
    return found


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_hostile_samples_are_contained(
    sandbox: str,
    tmp_path: Path,
    listeners: tuple[socket.socket, socket.socket],
    victim: subprocess.Popen[bytes],
    outside: Path,
) -> None:
    _skip_unless_available(sandbox)
    tcp, udp = listeners
    secret = secrets.token_hex(8)
    (outside / "secret.txt").write_text(secret)
    (outside / "secret.txt").chmod(0o644)
    targets = hostile.Targets(
        outside=outside,
        secret=secret,
        tcp_port=tcp.getsockname()[1],
        udp_port=udp.getsockname()[1],
        victim_pid=victim.pid,
        nonce=str(secrets.randbelow(10**9) + 10**9),
    )
    names = list(hostile.ATTACKS)
    problems, samples = hostile.write_files(tmp_path, targets, names)
    results_path = tmp_path / "results.jsonl"

    proc = run_cli(
        "eval", "run", "humaneval-rust",
        "--problems", str(problems), "--samples", str(samples),
        "--sandbox", sandbox, "--no-enforce-policy",
        "--workers", "2", "--timeout", str(TIMEOUT_S), "--k", "1",
        "--output", str(results_path),
        "--no-progress", "--no-cache", "--store", "none", "--no-store-hint",
        timeout=600,
    )  # fmt: skip

    # The run completes and reports every sample.
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    rows = {r["task_id"]: r for r in map(json.loads, results_path.read_text().splitlines())}
    assert set(rows) == {hostile.task_id(n, targets) for n in names}

    # Nothing passed, and each failed for the reason its attack should produce.
    wrong = {}
    for name in names:
        row = rows[hostile.task_id(name, targets)]
        if row["passed"] or row["reason"] not in hostile.expected_reasons(name):
            wrong[name] = (row["passed"], row["reason"], row["result"][:200])
    assert not wrong, f"attacks not contained as expected under {sandbox}: {wrong}"

    # Nothing written outside, nothing received, nobody signalled.
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    with pytest.raises(BlockingIOError):
        tcp.accept()
    with pytest.raises(BlockingIOError):
        udp.recv(64)
    assert victim.poll() is None, "the victim process was killed from inside the sandbox"

    # No process of the attacks left (the fork storm, the setsid grandchildren, sleep).
    deadline = time.monotonic() + _GONE_GRACE_S
    while (left := _attack_processes(targets.nonce)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"processes left behind under {sandbox}: {left}"
    if sandbox == "docker":
        out = subprocess.run(
            ["docker", "ps", "-a", "--filter", "label=vibes-eval.owner", "--format",
             "{{.Names}}"], capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert targets.nonce not in out, f"containers left behind: {out}"
