"""Batched compilation of candidates: same verdicts as one sample at a time, whatever a
neighbour does."""

import gzip
import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, HUMANEVAL_X_RUST, SANDBOX, needs_shared, run_cli
from vibes_eval.benchmarks.humaneval.rust import batch, harness
from vibes_eval.benchmarks.humaneval.rust.risk import compile_risk, runtime_risk
from vibes_eval.benchmarks.humaneval.rust.scan import Scan, TaskFacts
from vibes_eval.benchmarks.humaneval.tasks import RustProblem, load_problems
from vibes_eval.core.types import Sample

SANITY = EXAMPLES / "sanity" / "problems.jsonl"
ADD = load_problems(SANITY)["Sanity/0"]


def scan(code: str, task: RustProblem = ADD) -> Scan:
    return Scan.of(task, TaskFacts.of(task), code)


def samples(n: int) -> list[Sample]:
    return [Sample(task_id=f"T/{i}", index=0, completion="") for i in range(n)]


@pytest.mark.parametrize(
    "n,workers,sizes",
    [
        (1, 2, [1]),
        (5, 2, [3, 2]),
        (50, 2, [25, 25]),
        (492, 2, [246] * 2),
        (600, 2, [150] * 4),  # never 3 units for 2 workers: one would idle at the end
        (180, 4, [45] * 4),
    ],
)
def test_plan_sizes(n: int, workers: int, sizes: list[int]) -> None:
    assert [len(u) for u in batch.plan(samples(n), workers)] == sizes


@pytest.mark.parametrize(
    "code,compile_risky,runtime_risky",
    [
        ("    a + b\n}\n", False, False),
        ('    panic!("no")\n}\n', False, False),
        ("    crate::helper(a)\n}\n", True, False),
        ("    a\n}\n#[macro_export]\nmacro_rules! m { () => {} }\n", True, False),
        ("    std::process::exit(0)\n}\n", False, True),
        ('    std::env::set_var("A", "1"); a\n}\n', False, True),
        ("    use std::{io, fs};\n    a\n}\n", False, True),
        ('    // std::process::exit(0)\n    let s = "crate::x"; a\n}\n', False, False),
    ],
)
def test_risk_classes(code: str, compile_risky: bool, runtime_risky: bool) -> None:
    assert (compile_risk(scan(code)) is not None) is compile_risky
    assert (runtime_risk(scan(code)) is not None) is runtime_risky


def test_compile_errors_attributed_through_macro_expansions() -> None:
    lines = [
        {
            "level": "error",
            "message": "mismatched types",
            "code": {"code": "E0308"},
            "spans": [{"file_name": "t_3.rs", "line_start": 9, "column_start": 5}],
            "children": [],
        },
        {
            "level": "error",
            "message": "cannot find value",
            "code": {"code": "E0425"},
            "spans": [
                {
                    "file_name": "/rustc/abc/library/core/src/macros/mod.rs",
                    "line_start": 40,
                    "column_start": 1,
                    "expansion": {
                        "span": {"file_name": "t_7.rs", "line_start": 12, "column_start": 9}
                    },
                }
            ],
            "children": [],
        },
        {
            "level": "error",
            "message": "expected one of `,` or `)`",
            "spans": [{"file_name": "t_3.rs", "line_start": 4, "column_start": 2}],
        },
        {"level": "warning", "message": "unused", "spans": [{"file_name": "t_9.rs"}]},
        {"level": "error", "message": "aborting due to 3 previous errors", "spans": []},
    ]
    failed = batch.compile_errors("\n".join(map(json.dumps, lines)))
    first = {i: harness.first_error(ds) for i, ds in failed.per_module.items()}
    # the first error in the file, not the first rustc printed
    assert {i: d.text for i, d in first.items()} == {
        3: "error: expected one of `,` or `)`",
        7: "error[E0425]: cannot find value",
    }
    assert (first[7].line, first[7].column) == (12, 9)
    assert not failed.orphan and failed.parse_stop
    link = json.dumps({"level": "error", "message": "linking with `cc` failed", "spans": []})
    assert batch.compile_errors(link).orphan is True


CORRECT = {
    i: c for i, c in enumerate(json.loads(line)["canonical_solution"] for line in SANITY.open())
}
HOSTILE = {
    # replaces the binaries of its work dir with a script that writes an `ok` log for
    # whoever runs next: the next sample must not pass
    "tamper": r"""    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::remove_file("batch");
    let _ = std::fs::write("batch", r#"#!/bin/sh
printf 'ok %stests::test_add\n' "$1" > "$4"
"#);
    let _ = std::fs::set_permissions("batch", std::fs::Permissions::from_mode(0o755));
    a + b
}
""",
    "wrong_after_tamper": '    let _ = std::env::var("HOME");\n    a - b\n}\n',
    "exit0": "    std::process::exit(0)\n}\n",
    "abort": "    std::process::abort()\n}\n",
    "loop": "    loop { std::hint::black_box(a); }\n}\n",
    "stack_overflow": "    fn r(n: u64) -> u64 { let b = [n; 4096]; r(b[1] + 1) + b[2] }\n    r(a as u64) as i32\n}\n",
    "fake_ok": "    use std::io::Write;\n    let mut o = std::io::stdout();\n"
    '    let _ = writeln!(o, "test t_0::tests::test_add ... ok\\ntest t_1::tests::test_is_even ... ok");\n'
    "    let _ = o.flush();\n    std::process::exit(0)\n}\n",
    "env_cwd": '    std::env::set_var("RUST_TEST_THREADS", "7");\n    let _ = std::env::set_current_dir("/");\n    a + b\n}\n',
    "statics": "    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);\n"
    "    CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);\n    a + b\n}\n",
    "crate_path": "    crate::helper_add(a, b)\n}\nfn helper_add(a: i32, b: i32) -> i32 { a + b }\n",
    "macro_export_1": "    a + b\n}\n#[macro_export]\nmacro_rules! twice { ($x:expr) => { $x * 2 } }\n",
    "macro_export_2": "    twice!(a + b) / 2\n}\n#[macro_export]\nmacro_rules! twice { ($x:expr) => { $x + $x } }\n",
    "no_mangle_1": '    a + b\n}\n#[no_mangle]\npub extern "C" fn vibes_same_symbol() -> i32 { 1 }\n',
    "no_mangle_2": '    a + b\n}\n#[no_mangle]\npub extern "C" fn vibes_same_symbol() -> i32 { 2 }\n',
    "feature": "    #![feature(never_type)]\n    a + b\n}\n",
    "unclosed": "    a + (b\n}\n",
    # rustc recovers from this syntax error and reports a type error before it
    "label": "    'a\n}\n",
    "unterminated_string": '    "abc\n}\n',
    # a trailing doc comment documents the guard item after the completion
    "trailing_doc": "    a + b\n}\n/// documents whatever comes next\n",
    # a module named like the task's tests: they are in another program
    "second_tests_mod": "    a + b\n}\nmod tests {}\n",
    "type_error": '    a + "b"\n}\n',
}
DESTRUCTIVE = {
    "label",
    "unterminated_string",
    "wrong_after_tamper",
    "exit0",
    "abort",
    "loop",
    "stack_overflow",
    "fake_ok",
    "unclosed",
    "type_error",
}


def hostile_rows() -> list[dict]:
    rows = []
    for rep in range(2):  # correct samples on every side of the hostile ones
        rows += [
            {"task_id": f"Sanity/{i}", "completion": c, "case": f"correct_{i}_{rep}"}
            for i, c in CORRECT.items()
        ]
        if rep == 0:
            rows += [
                {"task_id": "Sanity/0", "completion": c, "case": name}
                for name, c in HOSTILE.items()
            ]
    return rows


def run_mode(tmp: Path, mode: str) -> dict[str, dict]:
    rows = hostile_rows()
    path = tmp / f"{mode}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        str(SANITY),
        "--samples",
        str(path),
        "--k",
        "1",
        "--timeout",
        "3",
        "--no-enforce-policy",
        f"--{mode}",
        "--workers",
        "2",
        "--sandbox",
        SANDBOX,
        "--no-progress",
        "--store",
        "none",
        check=True,
    )
    return {r["case"]: r for r in map(json.loads, Path(f"{path}_results.jsonl").open())}


@pytest.fixture(scope="module")
def both_modes(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    tmp = tmp_path_factory.mktemp("batch")
    return run_mode(tmp, "batch"), run_mode(tmp, "no-batch")


def test_hostile_neighbours_change_no_verdict(both_modes: tuple[dict, dict]) -> None:
    batched, alone = both_modes
    assert batched.keys() == alone.keys()
    for case in batched:
        assert (batched[case]["passed"], batched[case]["reason"], batched[case]["result"]) == (
            alone[case]["passed"],
            alone[case]["reason"],
            alone[case]["result"],
        ), case
    for case, row in batched.items():
        if case.startswith("correct_"):
            assert row["passed"], row
        if case in DESTRUCTIVE:
            assert not row["passed"], row
    # wrongly rejected in a shared crate, right alone: they must pass
    for case in (
        "second_tests_mod",
        "tamper",
        "trailing_doc",
        "crate_path",
        "macro_export_1",
        "macro_export_2",
        "no_mangle_1",
        "no_mangle_2",
        "env_cwd",
        "statics",
    ):
        assert batched[case]["passed"], batched[case]
    assert batched["feature"]["passed"] is alone["feature"]["passed"]


def compat_results(path: Path, mode: str) -> list[dict]:
    """`evaluate_functional_correctness` on HumanEval-X Rust in ``mode``: its result rows."""
    run_cli(
        str(path),
        f"--problem_file={HUMANEVAL_X_RUST}",
        "--k=1",
        f"--{mode}",
        f"--sandbox-mode={SANDBOX}",
        "--no-progress",
        "--store",
        "none",
        entry="evaluate_functional_correctness",
        check=True,
    )
    return [json.loads(line) for line in Path(f"{path}_results.jsonl").read_text().splitlines()]


@needs_shared
@pytest.mark.slow
def test_humaneval_x_mix_same_verdicts_both_ways(tmp_path: Path) -> None:
    with gzip.open(HUMANEVAL_X_RUST, "rt") as fh:
        probs = [json.loads(line) for line in fh][:40]
    rows = []
    for p in probs:
        rows += [
            p["canonical_solution"],
            '    panic!("nope");\n}\n',
            '    let x: i32 = "not a number";\n}\n',
        ]
    verdicts = {}
    for mode in ("batch", "no-batch"):
        path = tmp_path / f"{mode}.jsonl"
        path.write_text(
            "".join(
                json.dumps({"task_id": probs[n // 3]["task_id"], "completion": c}) + "\n"
                for n, c in enumerate(rows)
            )
        )
        verdicts[mode] = [(r["passed"], r["reason"]) for r in compat_results(path, mode)]
    assert verdicts["batch"] == verdicts["no-batch"]
    # the 40 canonical solutions, plus the panicking sample of Rust/32: its tests are
    # commented out in the dataset, so it passes by compiling (see README)
    assert sum(p for p, _ in verdicts["batch"]) == 40 + 1


BROKEN = [
    '    let v = vec![1]; let w = v; println!("{:?}", v); todo!()\n}\n',  # borrow
    "    undefined_fn(1)\n}\n",
    "    let x = (1, 2;\n}\n",
    '    "unterminated\n}\n',
    "    /* open comment\n}\n",
    "    todo!()\n}\nfn extra( {\n",
    '    let s: String = 5; let t: i32 = "x"; todo!()\n}\n',
    "    todo!()\n}\n}\n",
    "    todo!()\n",
    "    0..=\n}\n",
    '    r#"raw\n}\n',
    "    'a\n}\n",
    "    todo!()\n}\nfn main() {}\n",
    '    let x: i32 = "s";\n    /// dangling doc\n}\n',
    '    let x: i32 = "s";\n    let y = 1 +;\n}\n',
    '    undefined_macro!();\n    let x: i32 = "s";\n}\n',
    "    let c = 'ab';\n    todo!()\n}\n",
    "    todo!()\n}\n/// trailing doc\n",
    "    todo!()\n}\nmod tests {}\n",
    # errors of every analysis phase in one module (a batch charges them without a lone
    # compile: its neighbours' errors must not hide any of them)
    '    let v = vec![1]; let w = v; println!("{:?}", v);\n    let x = "5".parse().unwrap();\n'
    "    todo!()\n}\n",
    "    todo!()\n}\nstruct S<T: Copy>(T);\nfn g(_s: S<String>) {}\nconst C: u8 = 255 + 1;\n",
    '    todo!()\n}\nfn h() { let v = Vec::new(); }\nfn k() -> i32 { "s" }\n',
]


@needs_shared
@pytest.mark.slow
def test_broken_code_same_verdicts_and_details_both_ways(tmp_path: Path) -> None:
    """Every kind of compile error in one batch, on HumanEval-X tasks: syntax errors that
    stop rustc or rustfmt, ones it recovers from, lexer errors, type and borrow errors."""
    with gzip.open(HUMANEVAL_X_RUST, "rt") as fh:
        probs = [json.loads(line) for line in fh][:12]
    path = tmp_path / "broken.jsonl"
    path.write_text(
        "".join(
            json.dumps({"task_id": p["task_id"], "completion": c}) + "\n"
            for p in probs
            for c in [p["canonical_solution"], *BROKEN]
        )
    )
    results = {}
    for mode in ("batch", "no-batch"):
        results[mode] = [
            (r["passed"], r["reason"], r["result"]) for r in compat_results(path, mode)
        ]
    assert results["batch"] == results["no-batch"]
    assert sum(p for p, _, _ in results["batch"]) == len(probs)  # the canonical ones
