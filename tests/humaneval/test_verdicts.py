"""Every way a sample can fail gets the right verdict, and none of them passes; the policy
filter is off so the verdict logic alone is tested."""

import json
from pathlib import Path

import pytest

from tests.conftest import SANDBOX, run_cli

PROBLEM = {
    "task_id": "V/0",
    "prompt": "fn add(a: i32, b: i32) -> i32 {\n",
    "canonical_solution": "    a + b\n}\n",
    "entry_point": "add",
    "test": "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn first() { assert_eq!(add(1, 2), 3); }\n"
    "    #[test]\n    fn second() { assert_eq!(add(-1, 1), 0); }\n}\n",
}

CASES = {
    "correct": ("    a + b\n}\n", "passed"),
    "wrong": ("    a - b\n}\n", "failed"),
    "panic": ('    panic!("boom")\n}\n', "failed"),
    "compile": ("    a + undefined\n}\n", "compile_error"),
    "loop": ("    loop { std::hint::black_box(a); }\n}\n", "timeout"),
    "exit0": ("    std::process::exit(0)\n}\n", "early_exit"),
    "exit0_after_first": (
        "    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);\n"
        "    if N.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 1 { std::process::exit(0) }\n"
        "    a + b\n}\n",
        "early_exit",
    ),
    "abort": ("    std::process::abort()\n}\n", "crash"),
    "stack_overflow": (
        "    fn r(n: u64) -> u64 { let big = [n; 4096]; r(big[7] + 1) + big[9] }\n"
        "    r(a as u64) as i32\n}\n",
        "crash",
    ),
    "fake_ok_lines": (
        "    use std::io::Write;\n    let mut o = std::io::stdout();\n"
        '    let _ = write!(o, "test tests::first ... ok\\ntest tests::second ... ok\\n\\n'
        'test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\\n");\n'
        "    let _ = o.flush();\n    std::process::exit(0)\n}\n",
        "early_exit",
    ),
    "hide_tests": ("    a + b\n}\n#[cfg(any())]\nmod hidden {\n", "compile_error"),
    "shadow_assert": ("    a - b\n}\nmacro_rules! assert_eq { ($($t:tt)*) => {} }\n", "failed"),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("verdicts")
    (tmp / "p.jsonl").write_text(json.dumps(PROBLEM) + "\n")
    with (tmp / "s.jsonl").open("w") as fh:
        for name, (completion, _) in CASES.items():
            fh.write(json.dumps({"task_id": "V/0", "completion": completion, "case": name}) + "\n")
    run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        str(tmp / "p.jsonl"),
        "--samples",
        str(tmp / "s.jsonl"),
        "--k",
        "1",
        "--timeout",
        "3",
        "--no-enforce-policy",
        "--sandbox",
        SANDBOX,
        "--no-progress",
        check=True,
    )
    return {r["case"]: r for r in map(json.loads, (tmp / "s.jsonl_results.jsonl").open())}


@pytest.mark.parametrize("case", list(CASES))
def test_verdict(results: dict[str, dict], case: str) -> None:
    row = results[case]
    expected = CASES[case][1]
    assert row["passed"] is (case == "correct"), row
    if expected is not None:
        assert row["reason"] == expected, row


def test_shadowed_assert_is_caught_by_the_policy(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text(json.dumps(PROBLEM) + "\n")
    (tmp_path / "s.jsonl").write_text(
        json.dumps({"task_id": "V/0", "completion": CASES["shadow_assert"][0]}) + "\n"
    )
    run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        str(tmp_path / "p.jsonl"),
        "--samples",
        str(tmp_path / "s.jsonl"),
        "--k",
        "1",
        "--sandbox",
        SANDBOX,
        "--no-progress",
        check=True,
    )
    row = json.loads((tmp_path / "s.jsonl_results.jsonl").read_text())
    assert row["reason"] == "blocked_policy" and "test tampering" in row["result"]
