"""`--sandbox` resolution: auto picks the strongest available, bad configuration becomes
one line, `none` is loud."""

from __future__ import annotations

import pytest

from vibes_eval.core.errors import RunnerUnavailable, UserError
from vibes_eval.core.registry import AUTO_ORDER, RUNNERS, runner_class
from vibes_eval.runners import cgroups
from vibes_eval.runners.select import _auto_order, resolve_runner


def test_auto_order_is_strongest_first_and_never_unsandboxed() -> None:
    assert AUTO_ORDER[0] == "landlock"
    assert AUTO_ORDER.index("bwrap") < AUTO_ORDER.index("firejail") < AUTO_ORDER.index("docker")
    assert "none" not in AUTO_ORDER and "process" not in AUTO_ORDER
    assert set(AUTO_ORDER) <= set(RUNNERS)


def test_auto_takes_the_first_available() -> None:
    first = next(n for n in _auto_order() if runner_class(n).check_available() is None)
    runner = resolve_runner("auto")
    try:
        assert runner.name == first
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
    runner = resolve_runner("landlock")
    caps = runner.capabilities
    assert caps.isolation_level == "sandbox" and "disabled" in caps.network and caps.enforces_memory
    runner.close()


def test_auto_prefers_bwrap_when_no_cgroup_can_be_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "manager", lambda: (None, "not root"))
    order = _auto_order()
    assert order.index("bwrap") < order.index("landlock")
