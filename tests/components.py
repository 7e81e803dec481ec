"""What the suite depends on (sandboxes, services, datasets), and proof that it ran.

A test that needs a component calls ``need(name, why)`` (``why`` None: it is there) or
carries a skip reason tagged ``[name] ...``. Without ``VIBES_TEST_REQUIRE`` a missing
component skips the test, as usual. With ``VIBES_TEST_REQUIRE=landlock,docker,...``
(`.ci/run` exports it) a missing required component fails the test with the reason, and a
required component that no test ran with fails the session: a green run then means every
required component was really exercised.

Each test counts once per component it used (its worst phase: failed, skipped, xfailed,
passed), also when a wider fixture's cached value stood in for the need() call. The session
ends with a line per distinct skip and the component it counts against, then one line: per
component, how many tests passed, failed, skipped or xfailed with it (and why), then the
other skips. ``VIBES_TEST_SUMMARY=FILE`` also writes those lines to FILE (the Makefile
prints it last).

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
    "references": "the pinned reference graders of the parity tests (tests/references.py)",
    "history": "this clone's git history (the store-upgrade test runs the old release)",
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
    """One component's tests, each counted once (its worst phase)."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    xfailed: int = 0
    skip_reasons: Counter[str] = field(default_factory=Counter)
    fail_reasons: Counter[str] = field(default_factory=Counter)
    xfail_reasons: Counter[str] = field(default_factory=Counter)


@dataclass
class _Outcome:
    """How one test ended, over its setup, call and teardown."""

    status: str = "passed"  # passed, failed, skipped or xfailed; worst phase wins
    reason: str = ""
    component: str | None = None  # the component a tagged skip names


_RANK = {"passed": 0, "xfailed": 1, "skipped": 2, "failed": 3}


class _State:
    def __init__(self) -> None:
        self.required: frozenset[str] = frozenset()
        self.tallies: dict[str, _Tally] = {name: _Tally() for name in COMPONENTS}
        self.other_skips: Counter[str] = Counter()
        # every skip, as (component or None, reason) -> tests: the summary lists them all
        self.skips: Counter[tuple[str | None, str]] = Counter()
        self.current: str | None = None  # the test being run
        self.used: dict[str, set[str]] = {}  # nodeid -> components
        self.outcomes: dict[str, _Outcome] = {}  # nodeid -> outcome so far
        # A fixture wider than a test runs its body (and need()) once, for the first test
        # that uses it; the others get its cached value. What it needed is kept with the
        # fixture and its cache key, so every test that uses it counts (see _fixture_uses).
        self.fixture_stack: list[pytest.FixtureDef[Any]] = []
        self.fixture_needs: dict[int, list[tuple[object, set[str]]]] = {}
        self.problems: list[str] = []

    def note_use(self, component: str) -> None:
        if self.current is not None:
            self.used.setdefault(self.current, set()).add(component)
        for fixturedef in self.fixture_stack:
            if fixturedef.scope != "function" and fixturedef.cached_result is None:
                self._pending(fixturedef).add(component)

    def _pending(self, fixturedef: pytest.FixtureDef[Any]) -> set[str]:
        entries = self.fixture_needs.setdefault(id(fixturedef), [])
        if not entries or entries[-1][0] is not _PENDING:
            entries.append((_PENDING, set()))
        return entries[-1][1]


_PENDING = object()  # the cache key of a fixture whose body is running
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


def _fixture_uses(item: pytest.Item) -> set[str]:
    """What the wider fixtures this test got (cached or not) needed when they ran."""
    info = getattr(item, "_fixtureinfo", None)  # pytest's own; absent: count nothing extra
    found: set[str] = set()
    for name in getattr(item, "fixturenames", ()):
        defs = info.name2fixturedefs.get(name, ()) if info is not None else ()
        if not defs or defs[-1].cached_result is None:
            continue
        key = defs[-1].cached_result[1]
        for cached_key, components in _state.fixture_needs.get(id(defs[-1]), ()):
            if cached_key is key or _same(cached_key, key):
                found |= components
    return found


def _same(a: object, b: object) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a parameter whose == raises or is not a bool: not the same
        return False


# -- hooks ----------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    _state.required = required()


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    _state.fixture_stack.append(fixturedef)
    try:
        yield
    finally:
        _state.fixture_stack.pop()
        entries = _state.fixture_needs.get(id(fixturedef), [])
        if entries and entries[-1][0] is _PENDING and fixturedef.cached_result is not None:
            entries[-1] = (fixturedef.cached_result[1], entries[-1][1])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    _state.current = item.nodeid
    yield
    _state.current = None
    _count(item.nodeid, _state.used.pop(item.nodeid, set()))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    rep: pytest.TestReport = outcome.get_result()
    if call.when == "setup":
        _state.used.setdefault(item.nodeid, set()).update(_fixture_uses(item))
    seen = _state.outcomes.setdefault(item.nodeid, _Outcome())
    now = _Outcome()
    if hasattr(rep, "wasxfail"):
        now = _Outcome("xfailed", _one_line(str(rep.wasxfail)) or "xfail")
    elif rep.skipped:
        now = _skip_outcome(rep)
    elif rep.failed:
        now = _Outcome("failed", _failure_text(call))
    if _RANK[now.status] > _RANK[seen.status]:
        _state.outcomes[item.nodeid] = now


def _skip_outcome(rep: pytest.TestReport) -> _Outcome:
    """A skip; a tagged one of a required component turns the report into a failure."""
    why = _skip_text(rep)
    tag = _TAG.match(why)
    if tag is None:
        return _Outcome("skipped", _one_line(why))
    component = tag.group(1)
    if component in _state.required:
        # A required component that is missing: the test fails, saying why.
        rep.outcome = "failed"
        rep.longrepr = f"{component} is required ({ENV}) but did not run here: {why}"
    return _Outcome("skipped", _one_line(why[tag.end() :]), component)


def _count(nodeid: str, components: set[str]) -> None:
    """One test, once: against the components it used, or a skip against the one it names."""
    result = _state.outcomes.pop(nodeid, _Outcome())
    if result.status == "skipped":
        _note_skip(result.component, result.reason)
        return
    for component in components:
        tally = _state.tallies.setdefault(component, _Tally())
        if result.status == "failed":
            tally.failed += 1
            tally.fail_reasons[result.reason] += 1
        elif result.status == "xfailed":
            tally.xfailed += 1
            tally.xfail_reasons[result.reason] += 1
        else:
            tally.passed += 1


def _note_skip(component: str | None, reason: str) -> None:
    _state.skips[component, reason] += 1
    if component is None:
        _state.other_skips[_one_line(reason, 100)] += 1
        return
    tally = _state.tallies.setdefault(component, _Tally())
    tally.skipped += 1
    tally.skip_reasons[reason] += 1


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A whole module skipped (``pytest.importorskip``, ``pytest.skip(...,
    allow_module_level=True)``): counted once, against the component its reason names."""
    if report.skipped:
        why = _skip_text(report)
        tag = _TAG.match(why)
        where = report.nodeid or "collection"
        if tag is None:
            _note_skip(None, f"{where}: {_one_line(why)}")
        else:
            _note_skip(tag.group(1), f"{where}: {_one_line(why[tag.end() :])}")


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
    if tally.xfailed:
        reason, _ = tally.xfail_reasons.most_common(1)[0]
        parts.append(f"{tally.xfailed} xfailed ({reason})")
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


def skip_lines() -> list[str]:
    """Every distinct skip, with the component it counts against ("untagged": none)."""
    return [
        f"skipped [{component or 'untagged'}] {reason} x{n}"
        for (component, reason), n in sorted(
            _state.skips.items(), key=lambda kv: (kv[0][0] or "~", kv[0][1])
        )
    ]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    skips, line = skip_lines(), summary_line()
    for text in [*skips, line]:
        terminalreporter.write_line(text)
    for problem in _state.problems:
        terminalreporter.write_line(f"FAILED required component {problem}", red=True)
    path = os.environ.get(SUMMARY_ENV)
    if path:
        lines = [*skips, line, *(f"FAILED required component {p}" for p in _state.problems)]
        Path(path).write_text("\n".join(lines) + "\n")
