"""Shared test setup: where the repo, the examples and the shared datasets are, how to
run the CLI as a real subprocess, a fresh data dir (default store, cache) for every test,
and the components plugin (`tests/components.py`: VIBES_TEST_REQUIRE and the summary)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests import components
from tests.components import need

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# ../shared next to the checkout; VIBES_SHARED_DIR where it lies elsewhere (a git worktree).
SHARED = Path(os.environ.get("VIBES_SHARED_DIR") or ROOT.parent / "shared")
HUMANEVAL_X_RUST = SHARED / "datasets" / "humaneval-x" / "humaneval_rust.jsonl.gz"

# Results of test runs must not land in the user's own store, nor reuse verdicts cached by
# another session: a data dir of this session's own, whatever the environment says (each
# test then gets its own, below). VIBES_STORE would redirect every run: dropped.
os.environ["VIBES_DATA_DIR"] = tempfile.mkdtemp(prefix="vibes-test-data-")
os.environ.pop("VIBES_STORE", None)
# Tests send SIGINT to the CLI (Ctrl-C). A suite started in the background by a script
# (`cmd &`) inherits SIGINT ignored, and so would every child: Python then installs no
# KeyboardInterrupt handler and the CLI would never see the Ctrl-C. Children of a process
# that handles SIGINT start with the default disposition again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
SANDBOX = os.environ.get("VIBES_TEST_SANDBOX", "auto")


# Tools a test can ask for with @pytest.mark.needs_tool("name"): nvcc is a component of its
# own; the other languages' compilers and interpreters count as "toolchains".
TOOL_COMPONENTS = {"nvcc": "nvcc"}


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(components, "vibes-components")
    config.addinivalue_line("markers", "needs_tool(name): needs that program on PATH")


# The full tier: whole datasets and the long sweeps (docs/testing.md, "Tiers"). `make test`
# (CI) runs a deterministic part of each; `make test-full` (VIBES_TEST_FULL=1) runs them all.
FULL = os.environ.get("VIBES_TEST_FULL", "") not in ("", "0")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if FULL:
        return
    full = [item for item in items if item.get_closest_marker("full")]
    if full:
        config.hook.pytest_deselected(items=full)
        items[:] = [item for item in items if not item.get_closest_marker("full")]
        config.stash[_FULL_LEFT] = len(full)


_FULL_LEFT = pytest.StashKey[int]()
TIER_STRIDE = 16  # the default tier's share of a dataset: every 16th row


def forgery_modes() -> list[tuple[bool, bool]]:
    """(policy filter on, batched) modes of a forgery suite: all four in the full tier. The
    default tier leaves out "filter on, alone": the filter's verdicts are checked batched
    (the default), the defense without the filter both batched and alone."""
    modes = [(p, b) for p in (True, False) for b in (True, False)]
    return modes if FULL else [m for m in modes if m != (True, False)]


def batch_modes(policy: bool) -> tuple[bool, ...]:
    """The batched values ``forgery_modes`` runs for one policy value."""
    return tuple(b for p, b in forgery_modes() if p == policy)


def tiered(rows: list) -> list:
    """A whole dataset in the full tier; otherwise every ``TIER_STRIDE``-th row, the first
    included (the same rows every run, spread over the dataset)."""
    return list(rows) if FULL else list(rows)[::TIER_STRIDE]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    left = terminalreporter.config.stash.get(_FULL_LEFT, 0)
    if left:
        terminalreporter.write_line(
            f"full tier: {left} tests not run (make test-full or VIBES_TEST_FULL=1 runs them)"
        )


@pytest.fixture(autouse=True)
def _needs_tool(request: pytest.FixtureRequest) -> None:
    """A missing tool skips the test, or fails it where its component is required."""
    for mark in request.node.iter_markers("needs_tool"):
        tool = mark.args[0]
        missing = None if shutil.which(tool) else f"{tool} is not installed"
        need(TOOL_COMPONENTS.get(tool, "toolchains"), missing)


@pytest.fixture(autouse=True)
def _fresh_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test starts with an empty default store: no verdict cached by an earlier test
    can stand in for an evaluation."""
    monkeypatch.setenv("VIBES_DATA_DIR", str(tmp_path_factory.mktemp("data")))
    monkeypatch.delenv("VIBES_STORE", raising=False)


@pytest.fixture
def shared_datasets() -> Path:
    """The ../shared datasets, or skip (fail under VIBES_TEST_REQUIRE=shared)."""
    need("shared", None if HUMANEVAL_X_RUST.exists() else f"{HUMANEVAL_X_RUST} is absent")
    return SHARED


needs_shared = pytest.mark.usefixtures("shared_datasets")


def run_cli(
    *args: str,
    entry: str = "vibes",
    timeout: float = 600,
    check: bool = False,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `vibes ...` or `evaluate_functional_correctness ...` as a user would."""
    module = {
        "vibes": "vibes_eval.cli.app",
        "evaluate_functional_correctness": "vibes_eval.cli.humaneval_compat",
    }[entry]
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    return tmp_path
