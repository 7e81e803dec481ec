"""A store written by the release before measurements existed (events schema 1, tables
layout 1) keeps working: opening it re-projects its events into today's tables, and its
runs list, show, export, compare and resume as they did. The old store is made by the old
code itself, checked out of this repository's history."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.components import need
from tests.conftest import EXAMPLES, ROOT, run_cli
from vibes_eval.store import schema
from vibes_eval.store.events import SCHEMA_VERSION
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

OLD = "31035d7"  # the last commit with events schema 1 and tables layout 1
PROBLEMS = EXAMPLES / "sanity" / "problems.jsonl"
SAMPLES = EXAMPLES / "sanity" / "samples.jsonl"

pytestmark = pytest.mark.slow


def old_checkout(dest: Path) -> Path | None:
    """The old src/ tree, or None where the history is not here (a shallow clone)."""
    if shutil.which("git") is None:
        return None
    known = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{OLD}^{{commit}}"], capture_output=True
    )
    if known.returncode != 0:
        return None
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", OLD, "src"], capture_output=True, check=True
    )
    dest.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest / "src"


def old_cli(src: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = (
        f"import sys; sys.path.insert(0, {str(src)!r}); from vibes_eval.cli.app import main; main()"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300
    )


def test_a_store_of_the_previous_layout_is_upgraded_on_open(
    tmp_path: Path, store_spec: str
) -> None:
    """On each backend: SQLite, and PostgreSQL (a schema of its own)."""
    src = old_checkout(tmp_path / "old")
    # The old release runs from this clone's history: a shallow clone cannot run this test.
    need("history", None if src else f"commit {OLD} is not in this clone's history (shallow?)")
    assert src is not None
    store = store_spec
    common = ["--problems", str(PROBLEMS), "--k", "1,5", "--sandbox", "process",
              "--timeout", "2", "--store", store, "--no-progress"]  # fmt: skip
    old_out = tmp_path / "old.jsonl"
    proc = old_cli(src, "eval", "run", "humaneval-rust", "--samples", str(SAMPLES),
                   "-o", str(old_out), "--run-id", "old", *common)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with open_store(resolve(store), create=False) as st:  # today's code
        assert st.upgraded_from == 1
        rows = st.samples("old")
        assert len(rows) == 50 and st.run("old").n_passed == 21
        timed = [r for r in rows if r.reason == "timeout"]
        assert timed and all(r.wall_s > 0 and "compile_s" in r.measurements for r in timed)
        with st.engine.connect() as conn:
            meta = dict(conn.execute(schema.meta.select()).all())
        assert meta["tables_version"] == str(schema.TABLES_VERSION)
        assert meta["events_version"] == str(SCHEMA_VERSION)

    detail = json.loads(run_cli("eval", "results", "old", "--store", store, "-f", "json",
                                check=True).stdout)  # fmt: skip
    assert detail["metrics"] == pytest.approx({"pass@1": 0.42, "pass@5": 0.8})
    exported = tmp_path / "export.jsonl"
    run_cli("eval", "export", "old", "-o", str(exported), "--store", store, check=True)
    # The same rows, but for one deliberate change since: a plain test failure's result
    # string no longer repeats its reason ("failed: failed: ..." is "failed: ...").
    assert exported.read_text() == old_out.read_text().replace('"failed: failed: ', '"failed: ')

    # A new run beside the old one: cached verdicts from the old events, and a comparison.
    new = run_cli("eval", "run", "humaneval-rust", "--samples", str(SAMPLES), "-o",
                  str(tmp_path / "new.jsonl"), "--run-id", "new", *common)  # fmt: skip
    assert new.returncode == 0, new.stderr
    # The old release judged in the sample's process: its verdicts are not reused by a
    # release that judges on the trusted-test split (a different judging context).
    assert "cached verdicts reused" not in new.stderr
    cmp = json.loads(run_cli("eval", "compare", "old", "new", "--store", store, "-f", "json",
                             check=True).stdout)  # fmt: skip
    assert next(m for m in cmp["metrics"] if m["metric"] == "pass@1")["diff"] == 0
