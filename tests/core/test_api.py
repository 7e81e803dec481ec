"""The Python API: ``vibes_eval.evaluate`` on records in memory, recorded in a store and
resumed by run id; ``vibes_eval.open_store`` reads runs, metrics, results and comparisons.
Both the small test benchmark (its own metric and headline) and HumanEval-Rust."""

from __future__ import annotations

from pathlib import Path

import pytest

import vibes_eval
from tests.conftest import EXAMPLES
from vibes_eval.core import registry
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import read_jsonl


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(registry.BENCHMARKS, "fake", "tests.core.fake:FakeBenchmark")
    return "fake"


def rows(*completions: str) -> list[dict[str, str]]:
    return [{"task_id": f"F/{i}", "completion": c} for i, c in enumerate(completions)]


def test_evaluate_records_resumes_and_reads_back(fake: str, tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite")
    out = vibes_eval.evaluate(
        fake, rows("speed:2", "fail", "speed:4"), config={"tasks": 3}, sandbox="process",
        store=store, run_id="a", ks=[1], labels={"model": "m1"},
    )  # fmt: skip
    assert out.run_id == "a" and not out.interrupted
    assert out.metrics == pytest.approx({"pass@1": 2 / 3, "mean_speed": 2.0})
    again = vibes_eval.evaluate(
        fake, rows("speed:2", "fail", "speed:4"), config={"tasks": 3}, sandbox="process",
        store=store, run_id="a", ks=[1], labels={"model": "m1"},
    )  # fmt: skip
    assert again.metrics == out.metrics  # the finished run, read back
    with pytest.raises(UserError, match="started with other settings"):
        vibes_eval.evaluate(fake, rows("pass", "pass", "pass"), config={"tasks": 3},
                            sandbox="process", store=store, run_id="a", ks=[1])  # fmt: skip
    vibes_eval.evaluate(fake, rows("speed:3", "speed:1", "speed:5"), config={"tasks": 3},
                        sandbox="process", store=store, run_id="b", ks=[1])  # fmt: skip

    with vibes_eval.open_store(store) as results:
        listed = {r["run_id"]: r for r in results.runs()}
        assert listed["a"]["metric"] == "mean_speed" and listed["a"]["value"] == 2.0
        assert results.metrics("b") == pytest.approx({"pass@1": 1.0, "mean_speed": 3.0})
        verdicts = results.results("a")
        assert [(r.task_id, r.passed) for r in verdicts] == [
            ("F/0", True),
            ("F/1", False),
            ("F/2", True),
        ]
        assert verdicts[2].measurements["speed"] == 4.0
        cmp = results.compare("a", "b")
        speed = next(m for m in cmp.metrics if m.metric == "mean_speed")
        assert (speed.a, speed.b) == pytest.approx((2.0, 3.0))
        assert [f.task_id for f in cmp.improved] == ["F/1"]


def test_bad_settings_and_inputs_are_one_line_errors(fake: str) -> None:
    with pytest.raises(UserError, match=r"field 'taks'.*unknown setting for fake"):
        vibes_eval.evaluate(fake, rows("pass"), config={"taks": 1}, sandbox="process")
    with pytest.raises(UserError, match="samples:1 field 'task_id': unknown task id"):
        vibes_eval.evaluate(fake, [{"task_id": "X", "completion": ""}], sandbox="process")
    with pytest.raises(UserError, match="needs a store"):
        vibes_eval.evaluate(fake, rows("pass"), sandbox="process", run_id="x")
    with pytest.raises(UserError, match="unknown benchmark"):
        vibes_eval.evaluate("no-such-bench", rows("pass"))


def test_humaneval_from_a_notebook(tmp_path: Path) -> None:
    """The README's example: HumanEval-Rust samples as dicts, nothing recorded."""
    problems = EXAMPLES / "sanity" / "problems.jsonl"
    samples = [row for _, row in read_jsonl(EXAMPLES / "sanity" / "samples.jsonl")]
    out = vibes_eval.evaluate(
        "humaneval-rust", samples, config={"problems": str(problems), "limits": {"timeout_s": 2}},
        ks=[1, 5],
    )  # fmt: skip
    assert out.metrics == pytest.approx({"pass@1": 0.42, "pass@5": 0.8})
    assert out.run_id is None and len(out.ordered) == 50


def test_every_metric_comes_with_its_interval_over_tasks(fake: str) -> None:
    out = vibes_eval.evaluate(
        fake, rows("speed:2", "fail", "speed:4"), config={"tasks": 3}, sandbox="process",
        ks=[1],
    )  # fmt: skip
    assert set(out.intervals) == set(out.metrics)
    for name, (low, high) in out.intervals.items():
        assert low <= out.metrics[name] <= high, name
    assert (
        out.intervals
        == vibes_eval.evaluate(
            fake,
            rows("speed:2", "fail", "speed:4"),
            config={"tasks": 3},
            sandbox="process",
            ks=[1],
        ).intervals
    )  # a fixed seed: the same run shows the same interval
    assert out.reasons == {"passed": 2, "failed": 1}
    assert len(repr(out)) < 200
