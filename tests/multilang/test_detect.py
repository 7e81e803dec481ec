"""`evaluate_functional_correctness` picks the language from --language, the problem
file, or the sample file's task ids, as a new user would run it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, SANDBOX, run_cli
from tests.multilang import problems as P
from vibes_eval.benchmarks.multilang.languages.detect import choose


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_choice_from_ids_fields_and_flag(tmp_path: Path) -> None:
    samples = _write(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": ""}])
    assert choose(None, None, samples) == ("humaneval-python", "humaneval")
    rust = _write(tmp_path / "r.jsonl", [{"task_id": "Rust/0", "completion": ""}])
    assert choose(None, None, rust) == ("humaneval-rust", "humaneval-x-rust")
    cpp = _write(tmp_path / "c.jsonl", [{"task_id": "CPP/3", "completion": ""}])
    assert choose(None, None, cpp) == ("humaneval-cpp", "humaneval-x-cpp")
    mbpp = _write(tmp_path / "m.jsonl", [{"task_id": 11, "completion": ""}])
    assert choose(None, None, mbpp) == ("humaneval-python", "mbpp")
    probs = _write(tmp_path / "p.jsonl", P.MBPP)
    assert choose(None, str(probs), samples)[0] == "humaneval-python"
    lua = _write(tmp_path / "lua.jsonl", [{**P.MULTIPLE_PY[0], "language": "lua"}])
    assert choose(None, str(lua), samples)[0] == "multipl-e"
    assert choose("JavaScript", None, samples)[0] == "humaneval-js"
    assert choose("rb", None, samples)[0] == "multipl-e"


def test_python_problems_are_not_compiled_as_rust(tmp_path: Path) -> None:
    """The bug this issue started from: OpenAI-format Python problems evaluated as Rust."""
    problems = _write(tmp_path / "problems.jsonl", P.OPENAI)
    samples = _write(
        tmp_path / "samples.jsonl",
        [{"task_id": "Test/0", "completion": "    return a + b\n"},
         {"task_id": "Test/1", "completion": "    return xs\n"}],
    )  # fmt: skip
    proc = run_cli(
        str(samples), f"--problem_file={problems}", "--k=1", f"--sandbox={SANDBOX}",
        "--store", "none", entry="evaluate_functional_correctness",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "{'pass@1': 0.5}"
    rows = [json.loads(x) for x in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    assert [r["passed"] for r in rows] == [True, False]
    assert rows[1]["result"].startswith("failed: assertion failed")


def test_rust_still_rust(tmp_path: Path) -> None:
    sanity = EXAMPLES / "sanity"
    if not (sanity / "problems.jsonl").exists():
        pytest.skip("no examples/sanity")
    first = json.loads((sanity / "samples.jsonl").read_text().splitlines()[0])
    samples = _write(tmp_path / "s.jsonl", [first])
    proc = run_cli(
        str(samples), f"--problem_file={sanity / 'problems.jsonl'}", "--k=1",
        f"--sandbox={SANDBOX}", "--store", "none", entry="evaluate_functional_correctness",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    row = json.loads(Path(f"{samples}_results.jsonl").read_text().splitlines()[0])
    assert row["kind"] == "ok" and row["passed"], row["result"]
    assert choose(None, str(sanity / "problems.jsonl"), samples)[0] == "humaneval-rust"
