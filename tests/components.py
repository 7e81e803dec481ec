"""What the suite depends on (sandboxes, services, datasets), and proof that it ran.

A test that needs a component calls ``need(name, why)`` (``why`` None: it is there) or
carries a skip reason tagged ``[name] ...``. Without ``VIBES_TEST_REQUIRE`` a missing
component skips the test, as usual. With ``VIBES_TEST_REQUIRE=landlock,docker,...``
(`.ci/run` exports it) a missing required component fails the test with the reason, and a
required component that no test ran with fails the session: a green run then means every
required component was really exercised.

The session ends with one line: per component, how many tests passed, failed or skipped
with it (and why), then the other skips. ``VIBES_TEST_SUMMARY=FILE`` also writes that line
to FILE (the Makefile prints it last).

A later component joins with one line in
``COMPONENTS`` and its name in `.ci/run`'s ``VIBES_TEST_REQUIRE``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

COMPONENTS: dict[str, str] = {
    "landlock": "the default sandbox: Landlock, seccomp and the C launcher",
    "bwrap": "--sandbox bwrap (bubblewrap)",
    "firejail": "--sandbox firejail",
    "docker": "--sandbox docker: a Docker daemon and the sandbox image",
    "postgres": "a PostgreSQL server at VIBES_TEST_POSTGRES_URL",
    "shared": "the ../shared datasets",
    "unprivileged": "the sandboxes' non-root fallbacks, run as an unprivileged user",
    "ray": "--executor ray: a real Ray cluster on this machine (the ray extra)",
    "chromium": "the results pages in Debian's headless chromium (selenium)",
    "toolchains": "the other languages' tools setup-system.sh installs (g++, node, javac, go)",
    "nvcc": "the CUDA kernel set's compile-only checks (nvcc)",
    "inspect": "exports read back with the real inspect_ai package (the inspect extra)",
}
ENV = "VIBES_TEST_REQUIRE"
SUMMARY_ENV = "VIBES_TEST_SUMMARY"
_TAG = re.compile(r"^\[([a-z0-9_-]+)\] ")


def required() -> frozenset[str]:
    """The components ``VIBES_TEST_REQUIRE`` names.

    Raises:
        pytest.UsageError: a name that is not a component (a typo must not require nothing).
    """
    names = {n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()}
    unknown = sorted(names - COMPONENTS.keys())
    if unknown:
        raise pytest.UsageError(
            f"{ENV}: unknown component(s) {', '.join(unknown)}; known: {', '.join(COMPONENTS)}"
        )
    return frozenset(names)


def need(component: str, why: str | None) -> None:
    """The current test uses ``component``; ``why`` says why it is missing here (None: it
    is there). Skips the test (fails it, when the component is required)."""
    if component not in COMPONENTS:
        raise KeyError(f"unknown test component {component!r}; add it to COMPONENTS")
    _state.note_use(component)
    if why is not None:
        pytest.skip(f"[{component}] {why}")


def skip_reason(component: str, why: str) -> str:
    """A reason for ``pytest.mark.skipif`` that counts against ``component``."""
    return f"[{component}] {why}"


@dataclass
class _Tally:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    skip_reasons: Counter[str] = field(default_factory=Counter)
    fail_reasons: Counter[str] = field(default_factory=Counter)


class _State:
    def __init__(self) -> None:
        self.required: frozenset[str] = frozenset()
        self.tallies: dict[str, _Tally] = {name: _Tally() for name in COMPONENTS}
        self.other_skips: Counter[str] = Counter()
        self.current: str | None = None  # the test being run
        self.used: dict[str, set[str]] = {}  # nodeid -> components
        self.problems: list[str] = []

    def note_use(self, component: str) -> None:
        if self.current is not None:
            self.used.setdefault(self.current, set()).add(component)


_state = _State()


def _skip_text(rep: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = rep.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def _one_line(text: str, limit: int = 160) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _failure_text(call: pytest.CallInfo[Any]) -> str:
    if call.excinfo is None:
        return "failed"
    return _one_line(call.excinfo.exconly())


# -- hooks ----------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    _state.required = required()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    _state.current = item.nodeid
    yield
    _state.current = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    rep: pytest.TestReport = outcome.get_result()
    if hasattr(rep, "wasxfail"):
        return
    components = set(_state.used.get(item.nodeid, ()))
    if rep.skipped:
        why = _skip_text(rep)
        tag = _TAG.match(why)
        if tag is None:
            if rep.when != "teardown":
                _state.other_skips[_one_line(why, 100)] += 1
            return
        component = tag.group(1)
        tally = _state.tallies.setdefault(component, _Tally())
        tally.skipped += 1
        tally.skip_reasons[_one_line(why[tag.end() :])] += 1
        if component in _state.required:
            # A required component that is missing: the test fails, saying why.
            rep.outcome = "failed"
            rep.longrepr = f"{component} is required ({ENV}) but did not run here: {why}"
        return
    if rep.failed:
        for component in components:
            tally = _state.tallies[component]
            tally.failed += 1
            tally.fail_reasons[_failure_text(call)] += 1
    elif rep.when == "call":
        for component in components:
            _state.tallies[component].passed += 1


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A whole module skipped for a component (``pytest.skip(..., allow_module_level)``)."""
    if report.skipped:
        why = _skip_text(report)
        tag = _TAG.match(why)
        if tag is not None:
            tally = _state.tallies.setdefault(tag.group(1), _Tally())
            tally.skipped += 1
            tally.skip_reasons[_one_line(why[tag.end() :])] += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for name in sorted(_state.required):
        tally = _state.tallies[name]
        if tally.skipped or not tally.passed:
            _state.problems.append(f"{name}: {_describe(tally)}")
    if _state.problems and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _describe(tally: _Tally) -> str:
    parts = []
    if tally.passed:
        parts.append(f"{tally.passed} passed")
    if tally.failed:
        reason, _ = tally.fail_reasons.most_common(1)[0]
        parts.append(f"{tally.failed} FAILED ({reason})")
    if tally.skipped:
        reason, _ = tally.skip_reasons.most_common(1)[0]
        parts.append(f"{tally.skipped} SKIPPED ({reason})")
    return ", ".join(parts) or "no test ran"


def summary_line() -> str:
    """One line: each component's tests, the other skips, what was required."""
    parts = []
    for name, tally in _state.tallies.items():
        parts.append(f"{name} {_describe(tally)}")
    other = sum(_state.other_skips.values())
    line = "components: " + "; ".join(parts)
    if other:
        reasons = ", ".join(f"{r} x{n}" for r, n in _state.other_skips.most_common(3))
        line += f" | other skips: {other} ({reasons})"
    line += f" | required: {','.join(sorted(_state.required)) or 'none'} ({ENV})"
    return line


def pytest_terminal_summary(terminalreporter: Any) -> None:
    line = summary_line()
    terminalreporter.write_line(line)
    for problem in _state.problems:
        terminalreporter.write_line(f"FAILED required component {problem}", red=True)
    path = os.environ.get(SUMMARY_ENV)
    if path:
        lines = [line, *(f"FAILED required component {p}" for p in _state.problems)]
        Path(path).write_text("\n".join(lines) + "\n")
