"""Go on the trusted-test split: which signatures the wire carries, what each program is
made of, the wire's own checks (``go_wire_check_test.go``, built with the real toolchain),
HumanEval-X and MultiPL-E rows through the real sandbox, and every HumanEval-X Go
canonical solution."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import vibes_eval
from tests.components import need
from tests.conftest import SANDBOX, SHARED, tiered
from tests.multilang import langs as L
from vibes_eval.benchmarks.multilang.languages import split_go
from vibes_eval.benchmarks.multilang.languages.programs import GO_HELPERS, Go
from vibes_eval.benchmarks.multilang.tasks import CodeTask

HUMANEVAL_X_GO = SHARED / "datasets" / "humaneval-x" / "humaneval_go.jsonl.gz"
MULTIPLE_GO = SHARED / "datasets" / "multipl-e" / "humaneval-go.jsonl"
needs_go = pytest.mark.needs_tool("go")


def _task(row: dict, fmt: str = "humaneval-x") -> CodeTask:
    return CodeTask(
        task_id=row.get("task_id") or row["name"], source="t", language="go", format=fmt,
        prompt=row["prompt"], declaration=row.get("declaration", ""),
        test=row.get("test") or row.get("tests", ""),
        test_setup=row.get("test_setup", ""), imports=row.get("import", ""),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("decl", "params", "result"),
    [
        ("func F(x, y, z interface{}) bool {", ("interface{}",) * 3, "bool"),
        ("func F(a []int, b [2]int) [][2]int{", ("[]int", "[2]int"), "[][2]int"),
        ("func F(s,c string) [2]interface{} {", ("string", "string"), "[2]interface{}"),
        ("func F(m map[interface{}]interface{}) map[rune]int {",
         ("map[interface{}]interface{}",), "map[rune]int"),
        ("func F(int, string) (float64) {", ("int", "string"), "float64"),
        ("func F(v any) interface {} {", ("interface{}",), "interface{}"),
        ("// func G(x *int) {\nfunc F(x byte) []string {", ("byte",), "[]string"),
    ],
)  # fmt: skip
def test_signatures_the_wire_carries(decl: str, params: tuple[str, ...], result: str) -> None:
    sig, _ = split_go.signature("package main\n\n" + decl + "\n")
    assert sig == split_go.Signature("F", params, result)


@pytest.mark.parametrize(
    "decl",
    ["func F(x *int) int {", "func F(xs ...int) int {", "func F(x int) (int, error) {",
     "func F(x int) error {", "func F(p struct{ a int }) int {", "func F(f func()) int {",
     "func F(m map[[]int]int) int {", "func F(c chan int) int {", "func F(x Pair) int {",
     "func F(x int) {", "func F(x complex128) int {"],
)  # fmt: skip
def test_signatures_the_wire_cannot_carry(decl: str) -> None:
    sig, start = split_go.signature(decl + "\n")
    assert sig is None and start == 0
    row = dict(L.GO, declaration="\n" + decl + "\n", prompt="// Doc.\n" + decl + "\n")
    assert Go().test_program(_task(row)) is None  # such a task runs in-process


def test_the_test_program_holds_no_completion_and_the_candidate_no_test() -> None:
    row = dict(L.GO, prompt=L.GO["import"] + "\nfunc Helper() float64 { return math.Pi }\n"
               "// Distance from zero (see strings.Fields, rand.Intn).\n"
               "func Dist(x float64) float64 {\n")  # fmt: skip
    task = _task(row)
    test = Go().test_program(task)
    assert test is not None
    main = test.files["main_test.go"]
    assert "func Helper()" in main and "TestDist" in main and "vibesCall(" in main
    assert "func Dist(vibesA0 float64) float64 {" in main
    cand = Go().candidate(task, "    return -1 // SECRET-OF-THE-SAMPLE\n}\n").files
    assert "SECRET-OF-THE-SAMPLE" not in "".join(test.files.values())
    assert "TestDist" not in "".join(cand.values()) and "assert" not in cand["main_test.go"]
    assert "vibesServe(Dist)" in cand["vibes_main_test.go"]
    # imports by use outside comments: no "imported and not used" (Go/158, Go/160)
    assert '"math"' in cand["main_test.go"] and "var _ = math.Abs" in cand["main_test.go"]
    assert '"strings"' not in cand["main_test.go"] and '"math/rand"' not in cand["main_test.go"]


def test_multiple_prompt_keeps_its_own_imports_only() -> None:
    task = _task(GO_MULTIPLE, "multipl-e")
    cand = Go().candidate(task, "    return x + y\n}\n").files["main_test.go"]
    assert cand.startswith("package main\n") and "_test" not in cand.split("\n")[0]
    assert '"fmt"' not in cand and '"testing"' not in cand  # unused by the candidate
    uses = Go().candidate(task, "    return len(strings.Fields(fmt.Sprint(x))) + y\n}\n")
    assert '"fmt"' in uses.files["main_test.go"]
    assert '"strings"' not in uses.files["main_test.go"]  # MultiPL-E's prompt has no strings
    test = Go().test_program(task)
    assert test is not None and '"fmt"' in test.files["main_test.go"]


@needs_go
def test_wire_checks(tmp_path: Path) -> None:
    """The wire's own Go tests, against the real toolchain (outside any sandbox: the
    code is ours)."""
    go = Go()
    here = Path(__file__).parent
    for name in ("vibes_wire_test.go", "0vibes_server_test.go"):
        shutil.copy(split_go.WIRE / name, tmp_path / name)
    shutil.copy(here / "go_wire_check_test.go", tmp_path / "check_test.go")
    cache = tmp_path / "cache"
    subprocess.run(["cp", "-as", f"{go.seed_cache}/cache", str(cache)], check=True)
    env = {**os.environ, **go.build_env(), "GOCACHE": str(cache)}
    proc = subprocess.run(["go", "test", "-count=1", "."], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


GO_MULTIPLE = {
    "name": "HumanEval_53_add",
    "language": "go_test.go",
    "prompt": 'package add_test\n\nimport (\n    "testing"\n    "fmt"\n)\n\n'
              "// Add two numbers x and y\nfunc add(x int, y int) int {\n",
    "tests": "func TestAdd(t *testing.T) {\n  candidate := add\n\ttype test struct {\n"
             "\t\tactual   interface{}\n\t\texpected interface{}\n\t}\n   tests := []test{\n"
             "     { actual: candidate(0, 1), expected: 1 },\n"
             "     { actual: candidate(5, 7), expected: 12 },\n   }\n\n"
             "\tfor i, tc := range tests {\n"
             '\t\tt.Run(fmt.Sprintf("test num % d", i), func(t *testing.T) {\n'
             '\t\t\tif fmt.Sprintf("%v", tc.actual) != fmt.Sprintf("%v", tc.expected) {\n'
             "\t\t\t\tt.Errorf(\"expected '%s', got '%s'\", tc.expected, tc.actual)\n"
             "\t\t\t}\n\t\t})\n\t}\n}\n",
    "stop_tokens": ["\nfunc", "struct", "\n// "],
}  # fmt: skip


def _evaluate(tmp: Path, bench: str, rows: list[dict], samples: list[dict], **config):
    path = tmp / "problems.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = vibes_eval.evaluate(
        bench, samples, sandbox=SANDBOX, ks=[1], config={"problems": str(path), **config}
    )
    return [out.results[s.key] for s in out.prepared.samples]


@needs_go
def test_multiple_go_rows_on_the_split(tmp_path: Path) -> None:
    good, bad = "    return x + y\n}\n", "    return x - y\n}\n"
    panics = "    var a []int\n    return a[x+y]\n}\n"
    samples = [{"name": GO_MULTIPLE["name"], "completion": c}
               for c in (good, bad, good + "\nfunc main() { fmt.Println(add(1, 2)) }\n", panics)]  # fmt: skip
    results = _evaluate(tmp_path, "multipl-e", [GO_MULTIPLE], samples)
    assert [r.passed for r in results] == [True, False, True, False], [r.detail for r in results]
    assert all(r.details.get("trust") == "split" for r in results)
    assert "expected '%!s(int=1)', got '%!s(int=-1)'" in results[1].detail  # MultiPL-E's
    assert "the candidate panicked: runtime error: index out of range" in results[3].detail


@needs_go
def test_verdict_details_come_from_the_test_program(tmp_path: Path) -> None:
    row = L.GO
    samples = [{"task_id": "Go/0", "completion": c} for c in (
        row["canonical_solution"], "    return x\n}\n", "    return x\n",
        "    for {}\n}\n", '    panic("no")\n}\n', "    fmt.Println(\"noise\")\n    return math.Abs(x)\n}\n",
    )]  # fmt: skip
    results = _evaluate(tmp_path, "humaneval-go", [row], samples, limits={"timeout_s": 3})
    assert results[0].passed and results[0].details["trust"] == "split"
    assert results[1].reason == "failed" and "expected: 2" in results[1].detail
    assert "actual  : -2" in results[1].detail
    assert results[2].reason == "compile_error" and "main_test.go" in results[2].detail
    assert results[3].reason == "timeout"
    assert results[4].reason == "failed" and results[4].detail == "the candidate panicked: no"
    assert results[5].passed, results[5].detail  # its prints never reach the channel


VARIADIC = {
    "task_id": "Go/0", "import": "", "prompt": "// Sum.\nfunc Sum(xs ...int) int {\n",
    "declaration": "\nfunc Sum(xs ...int) int {\n", "canonical_solution": "",
    "test_setup": L.GO["test_setup"],
    "test": "func TestSum(t *testing.T) {\n    assert.Equal(t, 6, Sum(1, 2, 3))\n}\n",
}  # fmt: skip


@needs_go
def test_a_signature_the_wire_cannot_carry_runs_in_process(tmp_path: Path) -> None:
    right = "    s := 0\n    for _, x := range xs {\n        s += x\n    }\n    return s\n}\n"
    samples = [{"task_id": "Go/0", "completion": c} for c in (right, "    return 0\n}\n")]
    results = _evaluate(tmp_path, "humaneval-go", [VARIADIC], samples)
    assert [r.passed for r in results] == [True, False]
    assert [r.details.get("trust") for r in results] == ["in-process", "in-process"]


@pytest.mark.slow
@needs_go
def test_humaneval_x_go_canonical_solutions_pass() -> None:
    """All 164 but Go/95, whose canonical solution depends on Go's random map order
    (docs/multilang.md): it passes or fails by chance, in-process as on the split."""
    need("shared", None if HUMANEVAL_X_GO.exists() else f"{HUMANEVAL_X_GO} is absent")
    with gzip.open(HUMANEVAL_X_GO, "rt") as fh:
        rows = tiered([json.loads(line) for line in fh])
    out = vibes_eval.evaluate(
        "humaneval-go",
        [{"task_id": r["task_id"], "completion": r["canonical_solution"]} for r in rows],
        sandbox=SANDBOX, ks=[1], config={"problems": str(HUMANEVAL_X_GO)},
    )  # fmt: skip
    results = list(out.results.values())
    assert all(r.details.get("trust") == "split" for r in results)
    failed = [(r.task_id, r.reason, r.detail) for r in results if not r.passed]
    assert [f for f in failed if f[0] != "Go/95"] == []


def test_helpers_pool_is_the_in_process_one() -> None:
    assert "strings" in GO_HELPERS and split_go.GUARDS.keys() >= set(GO_HELPERS)
