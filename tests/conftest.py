"""Shared test setup: where the repo, the examples and the shared datasets are, and how to
run the CLI as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared"
HUMANEVAL_X_RUST = SHARED / "datasets" / "humaneval-x" / "humaneval_rust.jsonl.gz"

# Results of test runs must not land in the user's own store.
os.environ.setdefault("VIBES_DATA_DIR", tempfile.mkdtemp(prefix="vibes-test-data-"))
SANDBOX = os.environ.get("VIBES_TEST_SANDBOX", "auto")

needs_shared = pytest.mark.skipif(
    not HUMANEVAL_X_RUST.exists(), reason=f"{HUMANEVAL_X_RUST} is absent (../shared)"
)


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
