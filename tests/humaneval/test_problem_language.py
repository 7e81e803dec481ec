"""A problem file of the wrong language is refused at load, both ways (issue 27 item 2):
OpenAI's HumanEval (Python) given to humaneval-rust used to run every sample as Rust (all
compile errors, pass@1 0, recorded as a completed run, its results file overwritten)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from vibes_eval.benchmarks.humaneval.benchmark import HumanEvalRust
from vibes_eval.benchmarks.humaneval.config import HumanEvalConfig
from vibes_eval.benchmarks.multilang.benchmark import HumanEvalPython
from vibes_eval.benchmarks.multilang.config import PythonConfig
from vibes_eval.core.errors import UserError

# The shape of OpenAI's HumanEval.jsonl.gz (its first row, shortened).
OPENAI_ROW = {
    "task_id": "HumanEval/0",
    "prompt": "from typing import List\n\n\ndef has_close_elements(numbers: List[float], "
    'threshold: float) -> bool:\n    """ Check if in given list of numbers, are any two '
    'numbers closer to each other than\n    given threshold.\n    """\n',
    "canonical_solution": "    return any(abs(a - b) < threshold for a in numbers "
    "for b in numbers if a is not b)\n",
    "test": "\n\nMETADATA = {}\n\n\ndef check(candidate):\n"
    "    assert candidate([1.0, 2.0, 3.9], 0.3) == False\n",
    "entry_point": "has_close_elements",
}
# The Rust port of it keeps OpenAI's ids: only the code says it is Rust.
RUST_PORT_ROW = {
    "task_id": "HumanEval/0",
    "prompt": "/// Whether two numbers are closer than threshold.\n"
    "fn has_close_elements(numbers: Vec<f32>, threshold: f32) -> bool {\n",
    "canonical_solution": "    false\n}\n",
    "test": "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn t() {\n"
    "        assert!(!has_close_elements(vec![1.0], 0.5));\n    }\n}\n",
    "entry_point": "has_close_elements",
}


def write(path: Path, row: dict[str, str]) -> Path:
    path.write_text(json.dumps(row) + "\n")
    return path


def test_humaneval_rust_refuses_openai_python_problems(tmp_path: Path) -> None:
    problems = write(tmp_path / "HumanEval.jsonl", OPENAI_ROW)
    with pytest.raises(UserError) as err:
        HumanEvalRust(HumanEvalConfig(problems=str(problems))).load_tasks()
    text = str(err.value)
    assert "\n" not in text and str(problems) in text
    assert "python problems" in text and "humaneval-python" in text


def test_humaneval_python_refuses_rust_port_problems_with_openai_ids(tmp_path: Path) -> None:
    """The symmetric case: the ids name Python's family, the code is Rust."""
    problems = write(tmp_path / "rust_port.jsonl", RUST_PORT_ROW)
    with pytest.raises(UserError) as err:
        HumanEvalPython(PythonConfig(problems=str(problems))).load_tasks()
    text = str(err.value)
    assert "\n" not in text and str(problems) in text
    assert "rust problems" in text and "humaneval-rust" in text


def test_each_benchmark_still_takes_its_own_language(tmp_path: Path) -> None:
    rust = HumanEvalRust(HumanEvalConfig(problems=str(write(tmp_path / "r.jsonl", RUST_PORT_ROW))))
    assert list(rust.load_tasks()) == ["HumanEval/0"]
    py = HumanEvalPython(PythonConfig(problems=str(write(tmp_path / "p.jsonl", OPENAI_ROW))))
    assert list(py.load_tasks()) == ["HumanEval/0"]


def test_wrong_language_run_writes_nothing_and_exits_2(tmp_path: Path) -> None:
    """Refused before any sample runs: the earlier results file stays as it was."""
    problems = write(tmp_path / "HumanEval.jsonl", OPENAI_ROW)
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": "    pass\n"}) + "\n")
    results = tmp_path / "s.jsonl_results.jsonl"
    results.write_text("earlier\n")
    proc = run_cli("eval", "run", "humaneval-rust", "--problems", str(problems),
                   "--samples", str(samples), "--store", "none", "--no-progress")  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "humaneval-python" in proc.stderr and "Traceback" not in proc.stderr
    assert results.read_text() == "earlier\n"


def test_a_python_docstring_line_like_rust_is_not_refused(tmp_path: Path) -> None:
    """A line `use ...` at the start of a docstring line reads as Rust too: not sure, so
    not refused."""
    row = dict(OPENAI_ROW, prompt='def f(x):\n    """Sum.\n\nuse it well\n"""\n')
    py = HumanEvalPython(PythonConfig(problems=str(write(tmp_path / "p.jsonl", row))))
    assert list(py.load_tasks()) == ["HumanEval/0"]
