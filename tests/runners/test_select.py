"""`--sandbox` resolution: auto picks the strongest available, bad configuration becomes
one line, `none` is loud."""

from __future__ import annotations

import os

import pytest

from tests.components import need
from tests.runners.conftest import kernel_landlock_abi
from vibes_eval.core.errors import RunnerUnavailable, UserError
from vibes_eval.core.registry import AUTO_ORDER, RUNNERS, runner_class
from vibes_eval.core.runner import NetworkPolicy
from vibes_eval.runners import cgroups
from vibes_eval.runners.select import _auto_order, resolve_runner


def test_auto_order_is_strongest_first_and_never_unsandboxed() -> None:
    assert AUTO_ORDER[0] == "landlock"
    assert AUTO_ORDER.index("bwrap") < AUTO_ORDER.index("firejail") < AUTO_ORDER.index("docker")
    assert "none" not in AUTO_ORDER and "process" not in AUTO_ORDER
    assert set(AUTO_ORDER) <= set(RUNNERS)


def test_auto_takes_the_strongest_sandbox_here() -> None:
    """As root (a cgroup per job): Landlock. Unprivileged: Landlock only where a cgroup
    was delegated, else bubblewrap (its pid namespace still ends a setsid grandchild)."""
    runner = resolve_runner("auto")
    try:
        if os.geteuid() == 0:
            assert runner.name == "landlock"
        else:
            assert runner.name == ("landlock" if runner.capabilities.enforces_pids else "bwrap")
    finally:
        runner.close()


@pytest.mark.parametrize(
    "missing,expected",
    [(("landlock",), "bwrap"), (("landlock", "bwrap"), "firejail")],
)
def test_auto_passes_over_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, missing: tuple[str, ...], expected: str
) -> None:
    for name in missing:
        monkeypatch.setattr(runner_class(name), "check_available", classmethod(lambda c: "gone"))
    for name in ("bwrap", "firejail"):
        if runner_class(name).check_available() is not None and name not in missing:
            need(name, f"{name} is not available here")
    runner = resolve_runner("auto")
    try:
        assert runner.name == expected
    finally:
        runner.close()


def test_auto_with_nothing_available_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vibes_eval.runners.select.AUTO_ORDER", ["seatbelt"])
    with pytest.raises(RunnerUnavailable) as info:
        resolve_runner("auto")
    assert str(info.value) == "no sandbox is available here (seatbelt: Seatbelt is macOS only)"


def test_unavailable_runner_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(RunnerUnavailable) as info:
        resolve_runner("docker")
    message = str(info.value)
    assert message.startswith("--sandbox docker: no Docker daemon reachable")
    assert "\n" not in message


def test_unknown_name() -> None:
    with pytest.raises(UserError, match="unknown sandbox 'nope'"):
        resolve_runner("nope")


def test_none_warns_every_time(capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(2):
        resolve_runner("none").close()
    assert capsys.readouterr().err.count("WARNING: --sandbox none") == 2


def test_capabilities_describe_this_machine() -> None:
    """The instance says what this machine gives, not what the class could: a loopback of
    its own needs a network namespace (root), and an old Landlock ABI is named."""
    runner = resolve_runner("landlock")
    caps, root, abi = runner.capabilities, os.geteuid() == 0, kernel_landlock_abi()
    try:
        assert (NetworkPolicy.LOCAL in caps.network) is root
        assert ("no network namespace" in caps.notes) is not root
        assert (f"Landlock ABI {abi} < 4" in caps.notes) is (abi < 4), caps.notes
        assert (f"Landlock ABI {abi} < 6" in caps.notes) is (abi < 6), caps.notes
    finally:
        runner.close()


def test_auto_prefers_bwrap_when_no_cgroup_can_be_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "manager", lambda: (None, "not root"))
    order = _auto_order()
    assert order.index("bwrap") < order.index("landlock")
