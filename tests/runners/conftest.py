"""Runner instances for the runner tests: one per sandbox this machine has, shared by the
session; each test gets a fresh session. A sandbox that is not installed here skips its
tests (fails them when VIBES_TEST_REQUIRE names it); one whose own parts are broken (the
launcher does not build, the Docker image does not build) fails them, always."""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.components import need
from vibes_eval.core.errors import RunnerBroken, RunnerUnavailable
from vibes_eval.core.registry import runner_class
from vibes_eval.core.runner import Session, SessionSpec, TaskRunner

SANDBOXES = [
    "landlock",
    "bwrap",
    "firejail",
    pytest.param("docker", marks=pytest.mark.docker),
]
_instances: dict[str, TaskRunner] = {}
_missing: dict[str, str] = {}  # why a sandbox is not installed here
_broken: dict[str, RunnerBroken] = {}


def get_runner(name: str) -> TaskRunner:
    """A shared instance of runner ``name``; skips when it is not installed here.

    Raises:
        RunnerBroken: its launcher or image failed to build (the test errors).
    """
    if name not in _instances and name not in _missing and name not in _broken:
        try:
            why = runner_class(name).check_available()
            if why is None:
                _instances[name] = runner_class(name)()
            else:
                _missing[name] = why
        except RunnerUnavailable as exc:
            _missing[name] = str(exc)
        except RunnerBroken as exc:
            _broken[name] = exc
    need(name, _missing.get(name))
    if name in _broken:
        raise _broken[name]
    return _instances[name]


@pytest.fixture(scope="session", autouse=True)
def _close_runners() -> Iterator[None]:
    yield
    for runner in _instances.values():
        runner.close()


@pytest.fixture(params=SANDBOXES)
def sandbox(request: pytest.FixtureRequest) -> TaskRunner:
    return get_runner(request.param)


@pytest.fixture
def session(sandbox: TaskRunner) -> Iterator[Session]:
    s = sandbox.prepare(SessionSpec(label="runner-test"))
    yield s
    sandbox.cleanup(s)


def nonce() -> str:
    return str(secrets.randbelow(10**9) + 10**9)


def live_processes(marker: str, grace_s: float = 2.0) -> list[str]:
    """Non-zombie processes whose argv contains ``marker``, after giving SIGKILLed ones
    ``grace_s`` to finish exiting."""
    deadline = time.monotonic() + grace_s
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            with contextlib.suppress(OSError, IndexError):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                if state not in ("Z", "X") and marker in cmdline:
                    found.append(f"{entry.name} [{state}] {cmdline}")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def kernel_landlock_abi() -> int:
    """The kernel's Landlock ABI, asked directly: landlock_create_ruleset(NULL, 0,
    LANDLOCK_CREATE_RULESET_VERSION) (syscall 444 on x86-64 and arm64); 0 without it."""
    if platform.machine() not in ("x86_64", "aarch64"):
        need("landlock", f"landlock_create_ruleset's number unknown on {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(abi, 0)
