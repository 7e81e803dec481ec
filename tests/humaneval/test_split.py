"""The trusted-test split's pieces (``rust/split.py``, ``rust/signature.py``, ``rust/wire.rs``):
which signatures the wire carries, what each HumanEval-X task serves, the wire's decoding
of hostile text (through real rustc), and the in-process fallback's trust label."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import HUMANEVAL_X_RUST, SANDBOX, SHARED, needs_shared
from vibes_eval import evaluation
from vibes_eval.api import make_config
from vibes_eval.benchmarks.humaneval.rust import split, split_run
from vibes_eval.benchmarks.humaneval.rust.rustsrc import Lexed
from vibes_eval.benchmarks.humaneval.rust.scan import TaskFacts
from vibes_eval.benchmarks.humaneval.rust.signature import Signature
from vibes_eval.benchmarks.humaneval.rust.toolchain import find_toolchain
from vibes_eval.benchmarks.humaneval.tasks import RustProblem, load_problems
from vibes_eval.runners.select import resolve_runner


def signature(src: str) -> Signature | str:
    lexed = Lexed(src + " {}\n")
    fn = next(c for c in lexed.root.children if c.type == "function_item")
    return Signature.of(lexed, fn, frozenset({"RtnType"}))


@pytest.mark.parametrize(
    "src",
    [
        "fn f(a: i32, b: &str, c: Vec<&str>, d: &[f64], e: &Vec<f64>) -> bool",
        "fn f(m: HashMap<&str, &str>, s: std::collections::HashSet<char>) -> (i32, i64)",
        "fn f(v: Vec<Box<dyn Any>>) -> Vec<i32>",
        "fn compare_one<'a>(a: &'a dyn Any, b: &'a dyn Any) -> RtnType<String, f64, i32>",
        "pub fn f(mut a: i32, (x, y): (u8, u8)) -> Option<Vec<(String, bool)>>",
        "fn f(words: Vec<&str>) -> &str",
        "fn f()",
    ],
)
def test_signatures_the_wire_carries(src: str) -> None:
    assert isinstance(signature(src), Signature), signature(src)


@pytest.mark.parametrize(
    "src,why",
    [
        ("fn f(v: &mut Vec<i32>)", "mutable reference"),
        ("fn f<T: Ord>(v: Vec<T>) -> T", "generic"),
        ("fn f(x: impl Fn(i32) -> i32) -> i32", "abstract type"),
        ("fn f(x: Box<dyn std::fmt::Display>)", "dyn Any"),
        ("fn f(x: Rc<i32>)", "`Rc`"),
        ("fn f(x: i32) -> RtnType2", "`RtnType2`"),
        ("fn f(x: RtnType<i32, i32, i32>)", "`RtnType`"),  # the task's enums: results only
        ("async fn f(x: i32)", "qualified"),
        ("pub(super) fn f(x: i32)", "visibility"),
    ],
)
def test_signatures_it_does_not(src: str, why: str) -> None:
    got = signature(src)
    assert isinstance(got, str) and why in got, got


def test_lifetimes_become_static_for_the_owned_values() -> None:
    sig = signature("fn f<'a>(a: &'a dyn Any, b: Vec<&str>, c: &[&str]) -> &'a str")
    assert isinstance(sig, Signature)
    assert sig.params_static == ("&'static dyn Any", "Vec<&'static str>", "&'static [&'static str]")
    assert sig.ret_static == "&'static str"


def test_wire_words_agree_with_the_harness() -> None:
    source = split.wire_source()
    assert 'pub const DONE: &str = "\\x02T done";' in source
    assert split_run.DONE == "\x02T done"
    assert f'pub const ENDED: &str = "{split_run.ENDED}";' in source


@pytest.fixture(scope="module")
def humaneval_x() -> dict[str, RustProblem]:
    return load_problems(HUMANEVAL_X_RUST)


def plan_of(task: RustProblem) -> split.Plan | str:
    return split.plan(task, TaskFacts.of(task).calls)


@needs_shared
def test_every_humaneval_x_task_is_carried(humaneval_x: dict[str, RustProblem]) -> None:
    plans = {tid: plan_of(t) for tid, t in humaneval_x.items()}
    assert {tid: p for tid, p in plans.items() if isinstance(p, str)} == {}


@needs_shared
def test_what_the_irregular_humaneval_x_tasks_serve(humaneval_x: dict[str, RustProblem]) -> None:
    def served(tid: str) -> list[str]:
        p = plan_of(humaneval_x[tid])
        assert isinstance(p, split.Plan)
        return [s.name for s in p.served]

    # the prompt opens is_palindrome_10; the tests call make_palindrome
    assert served("Rust/10") == ["is_palindrome_10", "make_palindrome"]
    # the tests call the open function and a helper: the helper is the reference's
    for tid, helper in (("Rust/38", "encode_cyclic"), ("Rust/50", "decode_shift")):
        p = plan_of(humaneval_x[tid])
        assert isinstance(p, split.Plan) and len(p.served) == 1
        assert f"fn {helper}" in p.test_module
    p = plan_of(humaneval_x["Rust/137"])
    assert isinstance(p, split.Plan)
    assert "pub enum RtnType" in p.test_module  # the reference's type and PartialEq
    assert "impl ::vibes_wire::Enc for RtnType<String,f64,i32>" in p.server
    assert plan_of(humaneval_x["Rust/32"]).tests == ()  # type: ignore[union-attr]
    # Rust/50's tests call rand 0.4's gen_range(low, high): the test program gets a shim
    assert "__VibesGenRange04" in plan_of(humaneval_x["Rust/50"]).test_module  # type: ignore[union-attr]
    assert "__VibesGenRange04" not in plan_of(humaneval_x["Rust/0"]).test_module  # type: ignore[union-attr]


def test_a_task_the_wire_cannot_carry_is_judged_in_process(tmp_path: Path) -> None:
    problems = tmp_path / "p.jsonl"
    problems.write_text(
        json.dumps({
            "task_id": "M/0", "entry_point": "push_one",
            "prompt": "fn push_one(v: &mut Vec<i32>) {\n",
            "test": "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n"
                    "    fn t() { let mut v = vec![]; push_one(&mut v); assert_eq!(v, vec![1]); }\n}\n",
        }) + "\n"
    )  # fmt: skip
    task = load_problems(problems)["M/0"]
    assert "mutable reference" in str(plan_of(task))
    samples = tmp_path / "s.jsonl"
    samples.write_text(
        json.dumps({"task_id": "M/0", "completion": "    v.push(1);\n}\n"}) + "\n"
        + json.dumps({"task_id": "M/0", "completion": "    v.push(2);\n}\n"}) + "\n"
    )  # fmt: skip
    for batch in (True, False):
        config = make_config("humaneval-rust", {"problems": str(problems), "batch": batch})
        prepared = evaluation.prepare("humaneval-rust", config, samples)
        with resolve_runner(SANDBOX) as runner:
            got = evaluation.run(prepared, runner, ks=[1], workers=1).ordered
        assert [(r.passed, r.details["trust"]) for r in got] == [
            (True, "in-process"),
            (False, "in-process"),
        ]


# -- the wire's reading, in Rust ---------------------------------------------------------------

DECODER = """
#[path = "wire.rs"]
mod wire;
use wire::{parse, read_frame, Dec};
use std::collections::HashMap;

fn show<T: Dec + std::fmt::Debug>(text: &str) -> String {
    match parse(text).and_then(|v| T::dec(&v)) {
        Ok(x) => format!("ok {:?}", x),
        Err(_) => "err".to_string(),
    }
}

fn main() {
    let stdin = std::io::stdin();
    loop {
        let frame = match read_frame(&mut stdin.lock()) {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(_) => { println!("frame err"); continue; }
        };
        let (ty, text) = frame.split_once(' ').unwrap();
        let out = match ty {
            "i32" => show::<i32>(text),
            "f64" => show::<f64>(text),
            "char" => show::<char>(text),
            "string" => show::<String>(text),
            "vec" => show::<Vec<i32>>(text),
            "option" => show::<Option<i32>>(text),
            "tuple" => show::<(i32, String)>(text),
            "map" => show::<HashMap<char, i32>>(text),
            _ => "no such type".to_string(),
        };
        println!("{out}");
    }
}
"""

WIRE_CASES = [
    ("i32 42", "ok 42"),
    ("i32 -0", "ok 0"),
    ("i32 3.0", "err"),
    ('i32 "NaN"', "err"),
    ("i32 1e2", "err"),
    ("i32 4294967296", "err"),
    ("i32 [1]", "err"),
    ("i32 042", "err"),
    ('f64 "NaN"', "ok NaN"),
    ('f64 "-Infinity"', "ok -inf"),
    ("f64 2.5e-3", "ok 0.0025"),
    ('f64 "2.5"', "err"),
    ('char "ab"', "err"),
    ('char "\\u00e9"', "ok 'é'"),
    ('string "a\\nb\\u0000"', 'ok "a\\nb\\0"'),
    ('string "\\ud800"', "err"),
    ('string "tab\tinside"', "err"),
    ("string 3", "err"),
    ("vec [1,2,3]", "ok [1, 2, 3]"),
    ('vec [1,"2"]', "err"),
    ("vec [1,2,", "err"),
    ("vec [1] trailing", "err"),
    ("option null", "ok None"),
    ("option [7]", "ok Some(7)"),
    ("option 7", "err"),
    ("option [7,8]", "err"),
    ('tuple [1,"x"]', 'ok (1, "x")'),
    ("tuple [1]", "err"),
    ('map [["a",1],["b",2]]', "map ok"),
    ('map [["a",1],["a",2]]', "err"),
    ("vec " + "[" * 300 + "]" * 300, "err"),
]


@pytest.fixture(scope="module")
def decoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wire")
    (tmp / "wire.rs").write_text(split.wire_source())
    (tmp / "decoder.rs").write_text(DECODER)
    rustc = find_toolchain().rustc
    subprocess.run(
        [str(rustc), "--edition", "2021", "decoder.rs", "-o", "decoder"], cwd=tmp, check=True
    )
    return tmp / "decoder"


def test_the_wire_refuses_what_does_not_decode_to_the_declared_type(decoder: Path) -> None:
    noise = "line without the marker\n\x02W not a frame either\n" + "x" * 100_000 + "\n"
    text = noise + "".join(f"\x02V {case}\n" for case, _ in WIRE_CASES)
    out = subprocess.run([str(decoder)], input=text.encode(), capture_output=True, check=True)
    got = out.stdout.decode().splitlines()
    assert len(got) == len(WIRE_CASES)
    for (case, want), line in zip(WIRE_CASES, got, strict=True):
        if want == "map ok":
            assert line.startswith("ok {") and "'a': 1" in line, (case, line)
        else:
            assert line == want, (case, line)


def test_an_oversized_frame_is_refused_and_reading_goes_on(decoder: Path) -> None:
    text = b"\x02V i32 " + b"1" * (65 << 20) + b"\n\x02V i32 5\n"
    out = subprocess.run([str(decoder)], input=text, capture_output=True, check=True)
    assert out.stdout.decode().splitlines()[0] == "frame err"
    assert out.stdout.decode().splitlines()[-1] == "ok 5"


MULTIPL_E = SHARED / "datasets" / "multipl-e" / "humaneval-rs.jsonl"
# (right, wrong) bodies for a few MultiPL-E tasks: strings, options, maps, tuples, nesting
MULTIPL_E_SOLUTIONS = {
    "HumanEval_23_strlen": ("    string.len() as isize\n", "    0\n"),
    "HumanEval_12_longest": (
        "    let mut best: Option<String> = None;\n    for s in strings {\n"
        "        if best.as_ref().map_or(true, |b| s.len() > b.len()) { best = Some(s); }\n"
        "    }\n    best\n",
        "    strings.into_iter().last()\n",
    ),
    "HumanEval_111_histogram": (
        "    let mut counts: HashMap<String, isize> = HashMap::new();\n"
        "    for w in test.split_whitespace() { *counts.entry(w.to_string()).or_insert(0) += 1; }\n"
        "    let max = counts.values().copied().max().unwrap_or(0);\n"
        "    counts.into_iter().filter(|(_, c)| *c == max).collect()\n",
        "    HashMap::new()\n",
    ),
    "HumanEval_87_get_row": (
        "    let mut out = vec![];\n    for (i, row) in lst.iter().enumerate() {\n"
        "        for j in (0..row.len()).rev() {\n"
        "            if row[j] == x { out.push((i as isize, j as isize)); }\n        }\n    }\n"
        "    out\n",
        "    vec![(0, 0)]\n",
    ),
    "HumanEval_136_largest_smallest_integers": (
        "    (lst.iter().copied().filter(|&x| x < 0).max(), "
        "lst.iter().copied().filter(|&x| x > 0).min())\n",
        "    (lst.iter().copied().filter(|&x| x > 0).min(), None)\n",
    ),
}


@needs_shared
def test_multipl_e_rust_on_the_split(tmp_path: Path) -> None:
    """MultiPL-E's Rust loads (its `fn main` of asserts runs as one test) and is judged on
    the split, batched and alone: every task carried, right bodies pass, wrong ones fail."""
    rows = [json.loads(line) for line in MULTIPL_E.open()]
    assert all(isinstance(plan_of(t), split.Plan) for t in load_problems(MULTIPL_E).values())
    problems = tmp_path / "p.jsonl"
    problems.write_text("".join(json.dumps(r) + "\n" for r in rows if r["name"] in
                                MULTIPL_E_SOLUTIONS))  # fmt: skip
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(
        json.dumps({"name": name, "completion": body}) + "\n"
        for name, pair in MULTIPL_E_SOLUTIONS.items() for body in pair
    ))  # fmt: skip
    want = [(True, "split"), (False, "split")] * len(MULTIPL_E_SOLUTIONS)
    for batch in (True, False):
        config = make_config("humaneval-rust", {"problems": str(problems), "batch": batch})
        prepared = evaluation.prepare("humaneval-rust", config, samples)
        with resolve_runner(SANDBOX) as runner:
            got = evaluation.run(prepared, runner, ks=[1], workers=2).ordered
        assert [(r.passed, r.details["trust"]) for r in got] == want, [
            (r.task_id, r.reason, r.detail) for r in got
        ]


def test_a_reference_type_comes_with_its_impls_and_a_decoder() -> None:
    task = RustProblem(
        task_id="E/0", format="human-eval-rust", prompt="fn f(x: i32) -> Shape {\n",
        canonical_solution="    Shape::Dot(x)\n}\n#[derive(Debug)]\npub enum Shape { Dot(i32), Nothing }\n"
        "impl PartialEq for Shape { fn eq(&self, o: &Shape) -> bool { true } }\nfn unused() {}\n",
        test="#[cfg(test)]\nmod tests {\n use super::*;\n #[test]\n"
        " fn t() { assert_eq!(f(2), Shape::Dot(2)); }\n}\n",
    )  # fmt: skip
    p = plan_of(task)
    assert isinstance(p, split.Plan)
    assert "pub enum Shape" in p.test_module and "impl PartialEq for Shape" in p.test_module
    assert "fn unused" not in p.test_module  # only what the tests need
    assert '"Nothing" =>' in p.test_module  # the test side reads every variant
    assert "Shape::Dot(__f0) =>" in p.server and "Shape::Nothing" not in p.server
