"""The recorder inside a real evaluation: a verdict counts (progress, results) only once
its event is committed, bursts are group-committed, and a resume skips what is stored."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.conftest import EXAMPLES
from vibes_eval import evaluation
from vibes_eval.api import make_config
from vibes_eval.core.types import SampleResult
from vibes_eval.runners.select import resolve_runner
from vibes_eval.runs import recording
from vibes_eval.store.sql import SqlStore

SAMPLES = EXAMPLES / "sanity" / "samples.jsonl"


def test_a_verdict_counts_only_once_it_is_in_the_store(store: SqlStore, tmp_path: Path) -> None:
    config = make_config(
        "humaneval-rust",
        {"problems": str(EXAMPLES / "sanity" / "problems.jsonl"), "limits": {"timeout_s": 2}},
    )
    prepared = evaluation.prepare("humaneval-rust", config, SAMPLES)
    seen: list[tuple[str, int]] = []
    missing: list[tuple[str, int]] = []
    lock = threading.Lock()

    def on_result(result: SampleResult) -> None:
        # Read through another connection: committed, not merely queued.
        stored = {(r.task_id, r.index) for r in store.samples("r")}
        with lock:
            seen.append(result.key)
            if result.key not in stored:
                missing.append(result.key)

    with resolve_runner("process") as runner, recording.start(
        store, prepared, runner, run_id="r", samples_path=SAMPLES, output_path=None,
        ks=[1], labels={}, workers=2, use_cache=False,
    ) as rec:  # fmt: skip
        outcome = evaluation.run(
            prepared, runner, ks=[1], workers=2, recorder=rec.recorder,
            on_result=on_result,
        )  # fmt: skip
        rec.finish(outcome)
        assert rec.writer.commits < len(prepared.samples)
    assert not missing
    assert len(seen) == len(outcome.results) == 50
    info = store.run("r")
    assert (info.status, info.n_done) == ("completed", 50)
