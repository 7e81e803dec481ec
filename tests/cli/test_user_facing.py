"""What a user meets on the command line (issue 27): help that fits 80 columns, a results
path that cannot be written refused before anything runs, a fresh run not announced as a
resumed one, progress lines where there is no terminal."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

import vibes_eval
from tests.conftest import EXAMPLES
from vibes_eval import progress
from vibes_eval.core import registry
from vibes_eval.core.errors import UserError
from vibes_eval.core.types import Reason, SampleResult


def _vibes(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    return subprocess.run([sys.executable, "-m", "vibes_eval.cli.app", *args],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=120)  # fmt: skip


@pytest.mark.parametrize("command", [["eval", "run"], ["eval", "results"], ["eval", "compare"]])
def test_help_fits_80_columns_with_every_option_name_whole(command: list[str]) -> None:
    out = _vibes(*command, "--help")
    assert out.returncode == 0, out.stderr
    too_wide = [line for line in out.stdout.splitlines() if len(line) > 80]
    assert not too_wide, too_wide
    assert "…" not in out.stdout
    for name in ("--samples", "--problems", "--workers", "--sandbox", "--store"):
        if command[-1] == "run":
            assert re.search(rf"(^|[\s,]){name}\b", out.stdout), name


def test_the_human_eval_drop_in_help_speaks_of_its_own_benchmarks_only() -> None:
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    out = subprocess.run(
        [sys.executable, "-c", "from vibes_eval.cli.humaneval_compat import main; main()",
         "--help"], capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split()).lower()
    assert "swe-bench" not in text and "task.yaml" not in text
    # one default for the workers, the one the help states
    assert "one per usable cpu" in text and "[default: 4" not in text
    assert not [line for line in out.stdout.splitlines() if len(line) > 80]


def test_an_unwritable_results_path_is_refused_before_evaluating(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(registry.BENCHMARKS, "fake", "tests.core.fake:FakeBenchmark")
    samples = [{"task_id": "F/0", "completion": "sleep:30"}]
    # /proc takes no new file, even from root (a read-only folder would not stop root)
    with pytest.raises(UserError, match="cannot write results"):
        vibes_eval.evaluate("fake", samples, sandbox="process", store=None,
                            output="/proc/results.jsonl")  # fmt: skip


def test_a_results_path_that_is_a_folder_is_refused_at_once(tmp_path: Path) -> None:
    out = _vibes("eval", "run", "humaneval-rust", "--problems",
                 str(EXAMPLES / "sanity" / "problems.jsonl"), "--samples",
                 str(EXAMPLES / "sanity" / "samples.jsonl"), "--store", "none",
                 "-o", str(tmp_path))  # fmt: skip
    assert out.returncode == 2
    assert "is a directory" in out.stderr and "Traceback" not in out.stderr


def test_a_fresh_run_is_not_announced_as_a_resumed_one_and_lists_in_80_columns(
    tmp_path: Path,
) -> None:
    store = tmp_path / "s.sqlite"
    out = _vibes("eval", "run", "humaneval-rust", "--problems",
                 str(EXAMPLES / "sanity" / "problems.jsonl"), "--samples",
                 str(EXAMPLES / "sanity" / "samples.jsonl"), "--store", str(store),
                 "-o", str(tmp_path / "r.jsonl"), "--k", "1")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "after an interruption" not in out.stderr
    assert "if it is interrupted: vibes eval resume" in out.stderr

    # The runs list on an 80-column terminal: every value whole, nothing cut to "…".
    env = {**os.environ, "COLUMNS": "80", "FORCE_COLOR": "1", "NO_COLOR": "1"}
    listed = subprocess.run(
        [sys.executable, "-m", "vibes_eval.cli.app", "eval", "results", "--store", str(store)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    text = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout)
    assert "…" not in text and "humaneval-rust" in text and "completed" in text, text
    assert all(len(line) <= 80 for line in text.splitlines()), text


def test_plain_progress_lines_where_there_is_no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "PLAIN_EVERY_S", 0.0)
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=200)
    with progress.sample_progress(3, 0, enabled=True, console=console) as advance:
        for i, ok in enumerate((True, False, True)):
            advance(SampleResult(task_id=f"T/{i}", index=0, passed=ok,
                                 reason=Reason.PASSED if ok else Reason.FAILED))  # fmt: skip
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("evaluated 1/3 (33%), passed 1")
    assert lines[-1].startswith("evaluated 3/3 (100%), passed 2")


def test_the_readme_python_example_runs_as_written(tmp_path: Path) -> None:
    """The README's API example, taken from the README itself, run from the repository
    root offline; its store goes to a temporary folder."""
    readme = (EXAMPLES.parent / "README.md").read_text()
    code = readme.split("## From Python")[1].split("```python\n")[1].split("```")[0]
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"),
           "VIBES_STORE": str(tmp_path / "store.sqlite")}  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=EXAMPLES.parent, env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Outcome(humaneval-rust, 50 of 50 samples, pass@1=0.4200, pass@5=0.8000" in out.stdout
    assert len(out.stdout) < 2000  # a readable repr, not every verdict
