"""C++, JavaScript, Java, Go and MultiPL-E scripting languages through the real sandbox:
right and wrong completions, cheats that must not pass, batched equal to alone, and every
HumanEval-X C++ and JavaScript canonical solution."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

import vibes_eval
from tests.components import need
from tests.conftest import SANDBOX, SHARED, tiered
from tests.multilang import langs as L
from tests.multilang import multiple_cpp
from tests.multilang.multiple_cpp import MULTIPLE_CPP
from vibes_eval.core.errors import UserError

SHARED_DIR = Path(os.environ.get("VIBES_TEST_SHARED", SHARED))
HUMANEVAL_X_CPP = SHARED_DIR / "datasets" / "humaneval-x" / "humaneval_cpp.jsonl.gz"
TOOLS = {"cpp": "g++", "js": "node", "java": "javac", "go": "go", "perl": "perl"}
BENCH = {"cpp": "humaneval-cpp", "js": "humaneval-js", "java": "humaneval-java",
         "go": "humaneval-go"}  # fmt: skip


def needs(lang: str):  # type: ignore[no-untyped-def]
    return pytest.mark.needs_tool(TOOLS[lang])  # the "toolchains" component


def evaluate(tmp: Path, bench: str, rows: list[dict], samples: list[dict], **config):
    path = tmp / "problems.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = vibes_eval.evaluate(
        bench, samples, sandbox=SANDBOX, ks=[1], config={"problems": str(path), **config}
    )
    return [out.results[s.key] for s in out.prepared.samples]


CPP_ROW = {
    "task_id": "CPP/0",
    "prompt": "/*\nAdd.\n*/\n#include<stdio.h>\n#include<vector>\nusing namespace std;\n"
              "int helper(int x){ return x; }\nvector<int> add_all(vector<int> xs, int k){\n",
    "declaration": "#include<stdio.h>\n#include<vector>\nusing namespace std;\n#include<algorithm>\n"
                   "vector<int> add_all(vector<int> xs, int k){\n",
    "canonical_solution": "    for (auto &x : xs) x += helper(k);\n    return xs;\n}\n",
    "test": "#undef NDEBUG\n#include<assert.h>\nbool issame(vector<int> a, vector<int> b){\n"
            "    return a == b;\n}\nint main(){\n    assert (issame(add_all({1, 2}, 1), {2, 3}));\n"
            "    assert (issame(add_all({}, 1), {}));\n}\n",
}  # fmt: skip
CPP_CHEATS = [
    "    exit(0);\n}\n",
    "    return xs;\n}\nstruct Early { Early() { std::_Exit(0); } } early;\n",
    # an == that is always true: never seen by the test's translation unit
    "    return {};\n}\nbool operator==(const vector<int>&, const vector<int>&) { return true; }\n",
    "    return {};\n}\n#define assert(x) (void)0\n#define issame(a, b) true\n",
    '    return {};\n}\nextern "C" void __assert_fail() {}\n',
    "    return {};\n}\nint vibes_test_main() { return 0; }\n",
    "    return {};\n}\nint main() { return 0; }\n",
    '    return {};\n}\nstruct P { P() { printf("\\n"); } } p;\n',
    '    char t[64]; fgets(t, 64, stdin); printf("\\n%s", t); return {};\n}\n',
    "    while (true) {}\n}\n",
    "    return *(vector<int>*)nullptr;\n}\n",
]


@needs("cpp")
def test_cpp_verdicts(tmp_path: Path) -> None:
    """Judged on the split: a trusted test program calls the candidate over a pipe."""
    good, bad = CPP_ROW["canonical_solution"], "    return xs;\n}\n"
    broken = "    return xs\n}\n"
    samples = [{"task_id": "CPP/0", "completion": c} for c in [good, bad, broken, *CPP_CHEATS]]
    results = evaluate(tmp_path, "humaneval-cpp", [CPP_ROW], samples, limits={"timeout_s": 3})
    assert results[0].passed, results[0].detail
    assert results[1].reason == "failed" and "issame" in results[1].detail
    assert results[2].reason == "compile_error" and "main.cpp" in results[2].detail
    for cheat, res in zip(CPP_CHEATS, results[3:], strict=True):
        assert not res.passed, cheat
    ran = [r for r in results if r.reason not in ("blocked_policy", "compile_error")]
    assert {r.details["trust"] for r in ran} == {"split"}
    alone = evaluate(tmp_path, "humaneval-cpp", [CPP_ROW], samples, batch=False,
                     limits={"timeout_s": 3})  # fmt: skip
    key = [(r.passed, r.reason, r.detail) for r in results]
    assert key == [(r.passed, r.reason, r.detail) for r in alone]


# The candidate's end, as the test program saw it: (completion, reason, detail part)
CPP_ENDS = [
    ("    throw std::runtime_error(\"no\");\n}\n", "failed", "the candidate raised: no"),
    ("    exit(0);\n}\n", "failed", "the candidate ended without answering"),
    ("    return *(vector<int>*)nullptr;\n}\n", "crash", "killed by signal"),
    ("    while (true) {}\n}\n", "timeout", "timed out"),
    ('    printf("noise"); fflush(stdout);\n    for (auto &x : xs) x += k;\n    return xs;\n}\n',
     "passed", ""),
]  # fmt: skip


@needs("cpp")
def test_cpp_split_reports_the_candidates_end(tmp_path: Path) -> None:
    """What the candidate raised, how it ended; its own output never reaches the channel."""
    samples = [{"task_id": "CPP/0", "completion": c} for c, _, _ in CPP_ENDS]
    results = evaluate(tmp_path, "humaneval-cpp", [CPP_ROW], samples, enforce_policy=False,
                       limits={"timeout_s": 2})  # fmt: skip
    for (code, reason, detail), res in zip(CPP_ENDS, results, strict=True):
        assert (res.reason, res.details["trust"]) == (reason, "split"), (code, res.detail)
        assert detail in res.detail, (code, res.detail)


@needs("cpp")
def test_cpp_cheats_fail_for_their_own_reason_without_the_policy(tmp_path: Path) -> None:
    """The policy filter off: the cheats run in the candidate's own process, which holds
    nothing that decides a verdict (tests/security/forgery/test_cpp.py has the rest)."""
    samples = [{"task_id": "CPP/0", "completion": c} for c in CPP_CHEATS[:8]]
    results = evaluate(tmp_path, "humaneval-cpp", [CPP_ROW], samples, enforce_policy=False)
    assert [r.passed for r in results] == [False] * len(samples)


UNION_ROW = {
    "name": "HumanEval_1_pick",
    "language": "cpp",
    "prompt": "#include<assert.h>\n#include<bits/stdc++.h>\nunion Union_std_string_long{\n"
              "    std::string f0;\n    long f1;\n    Union_std_string_long(std::string _f0) : f0(_f0) {}\n"
              "    Union_std_string_long(long _f1) : f1(_f1) {}\n    ~Union_std_string_long() {}\n"
              "    bool operator==(long f) {\n        return f1 == f ;\n    }\n};\n"
              "Union_std_string_long pick(long n) {\n",
    "tests": "}\nint main() {\n    auto candidate = pick;\n    assert(candidate((3)) == 3);\n}\n",
    "stop_tokens": ["\n}"],
}  # fmt: skip


@needs("cpp")
def test_cpp_signature_the_wire_cannot_carry_runs_in_process(tmp_path: Path) -> None:
    """MultiPL-E's unions carry no tag saying which member is set: such a task keeps the
    in-process way, and its results say so."""
    samples = [{"name": UNION_ROW["name"], "completion": c}
               for c in ("    return n;\n", "    return n + 1;\n")]  # fmt: skip
    results = evaluate(tmp_path, "humaneval-cpp", [UNION_ROW], samples)
    assert [(r.passed, r.details["trust"]) for r in results] == [
        (True, "in-process"), (False, "in-process")]  # fmt: skip


@pytest.mark.parametrize("lang", ["js", "java", "go"])
def test_humaneval_x_languages(tmp_path: Path, lang: str) -> None:
    need("toolchains", None if shutil.which(TOOLS[lang]) else f"{TOOLS[lang]} is not installed")
    row, good, bad = L.HUMANEVAL_X[lang]
    completions = [good, bad, *L.HOSTILE[lang]]
    samples = [{"task_id": row["task_id"], "completion": c} for c in completions]
    results = evaluate(tmp_path, BENCH[lang], [row], samples)
    assert results[0].passed, (results[0].reason, results[0].detail, results[0].stderr)
    assert results[1].reason == "failed"
    assert not any(r.passed for r in results[1:])
    if lang == "js":  # on the split: judged by the trusted test program (docs/integrity.md)
        assert {r.details.get("trust") for r in results if r.reason != "blocked_policy"} == {
            "split"
        }
        assert "assertion failed: console.assert(add(1, 2) === 3)" in results[1].detail

    if lang == "java":  # on the split: the trusted test program decided
        assert results[0].details == {"trust": "split"}
        assert "AssertionError" in results[1].detail and "Main.java:" in results[1].detail


@needs("js")
def test_js_verdicts_batched_equal_alone_with_cheats_and_no_policy(tmp_path: Path) -> None:
    """The JavaScript split: what the old in-process design refused by the filter alone
    (a stdin reader, an early exit, toJSON, the global object) fails with the filter off,
    the same batched and alone; a right answer that replaces console.assert in its own
    process passes (the tests' console.assert is in another process)."""
    row, good, bad = L.HUMANEVAL_X["js"]
    broken = "  return a +;\n}\n"
    completions = [good, bad, broken, *L.HOSTILE["js"], good]
    samples = [{"task_id": row["task_id"], "completion": c} for c in completions]
    got = {}
    for batch in (True, False):
        results = evaluate(tmp_path, "humaneval-js", [row], samples, batch=batch,
                           enforce_policy=False, limits={"timeout_s": 3})  # fmt: skip
        got[batch] = [(r.passed, r.reason, r.detail) for r in results]
    assert got[True] == got[False]
    # L.HOSTILE["js"][1] is right and replaces console.assert in its own process: it passes
    right = [True, False, False, False, True, False, False, False, True]
    assert [p for p, _, _ in got[True]] == right, got[True]
    assert got[True][2][1] == "compile_error" and "SyntaxError" in got[True][2][2]


@pytest.mark.parametrize("lang", ["cpp", "js", "perl", "java"])
def test_multiple_rows(tmp_path: Path, lang: str) -> None:
    need("toolchains", None if shutil.which(TOOLS[lang]) else f"{TOOLS[lang]} is not installed")
    row, good, bad = L.MULTIPLE[lang]
    # what a model generates past the function: cut at the stop tokens
    tail = {"cpp": "}\n\nint main() { return 0; }\n", "js": "\n//more\nfoo(",
            "perl": "\nsub other {\n", "java": "    }\n    static void more() {\n"}[lang]  # fmt: skip
    samples = [{"name": row["name"], "completion": c} for c in (good, bad, good + tail)]
    bench = {"cpp": "humaneval-cpp", "js": "humaneval-js",
             "java": "humaneval-java"}.get(lang, "multipl-e")  # fmt: skip
    results = evaluate(tmp_path, bench, [row], samples, stop_tokens=True)
    assert [r.passed for r in results] == [True, False, True], [r.detail for r in results]


def test_missing_toolchain_is_one_line(tmp_path: Path) -> None:
    row = dict(L.PERL_MULTIPLE, language="lua")
    if shutil.which("lua"):
        pytest.skip("lua is installed")
    with pytest.raises(UserError, match="lua is not installed"):
        evaluate(tmp_path, "multipl-e", [row], [{"name": row["name"], "completion": ""}])


HUMANEVAL_X_JS = SHARED_DIR / "datasets" / "humaneval-x" / "humaneval_js.jsonl.gz"
# canonical solutions that are wrong (docs/multilang.md): `return (z, true)` and
# evenOddCount(0) giving [0, 0]; the official harness passed them because node's
# console.assert only prints
JS_WRONG_CANONICAL = {"JavaScript/112", "JavaScript/155"}


@pytest.mark.slow
@needs("js")
def test_humaneval_x_js_canonical_solutions_pass_on_the_split() -> None:
    need("shared", None if HUMANEVAL_X_JS.exists() else f"{HUMANEVAL_X_JS} is absent")
    with gzip.open(HUMANEVAL_X_JS, "rt") as fh:
        rows = tiered([json.loads(line) for line in fh])
    out = vibes_eval.evaluate(
        "humaneval-js",
        [{"task_id": r["task_id"], "completion": r["canonical_solution"]} for r in rows],
        sandbox=SANDBOX, ks=[1], config={"problems": str(HUMANEVAL_X_JS)},
    )  # fmt: skip
    failed = {r.task_id: (r.reason, r.detail) for r in out.results.values() if not r.passed}
    assert set(failed) == JS_WRONG_CANONICAL & {r["task_id"] for r in rows}, failed
    assert all(reason == "failed" for reason, _ in failed.values())
    assert {r.details.get("trust") for r in out.results.values()} == {"split"}


@pytest.mark.slow
@needs("cpp")
def test_humaneval_x_cpp_canonical_solutions_pass() -> None:
    need("shared", None if HUMANEVAL_X_CPP.exists() else f"{HUMANEVAL_X_CPP} is absent")
    with gzip.open(HUMANEVAL_X_CPP, "rt") as fh:
        rows = tiered([json.loads(line) for line in fh])
    out = vibes_eval.evaluate(
        "humaneval-cpp",
        [{"task_id": r["task_id"], "completion": r["canonical_solution"]} for r in rows],
        sandbox=SANDBOX, ks=[1], config={"problems": str(HUMANEVAL_X_CPP)},
    )  # fmt: skip
    failed = [(r.task_id, r.reason, r.detail) for r in out.results.values() if not r.passed]
    assert failed == []
    assert {r.details["trust"] for r in out.results.values()} == {"split"}


@pytest.mark.slow
@pytest.mark.timeout(3600)  # 322 compiles of <bits/stdc++.h>, not precompiled
@needs("cpp")
def test_multiple_cpp_references_pass() -> None:
    """MultiPL-E C++ ships no solutions: HumanEval-X's behind an adapter
    (``multiple_cpp.py``) pass every task but those where the two datasets disagree;
    no wrong answer passes; all but the three `union` tasks are on the split."""
    need("shared", None if MULTIPLE_CPP.exists() else f"{MULTIPLE_CPP} is absent")
    pairs = multiple_cpp.samples()  # a reference and a wrong answer per row
    samples = [s for pair in tiered(list(zip(pairs[0::2], pairs[1::2], strict=True))) for s in pair]
    chosen = {s["task_id"] for s in samples}
    out = vibes_eval.evaluate(
        "humaneval-cpp", samples, sandbox=SANDBOX, ks=[1],
        config={"problems": str(MULTIPLE_CPP), "enforce_policy": False},
    )  # fmt: skip
    results = [out.results[s.key] for s in out.prepared.samples]
    refs, wrongs = results[0::2], results[1::2]
    failed = {int(r.task_id.split("_")[1]) for r in refs if not r.passed}
    different = {
        n for n in multiple_cpp.DIFFERENT if any(t.split("_")[1] == str(n) for t in chosen)
    }
    assert failed == different, [(r.task_id, r.detail) for r in refs]
    assert not any(r.passed for r in wrongs)
    in_process = {r.task_id for r in results if r.details.get("trust") != "split"}
    assert in_process == {"HumanEval_103_rounded_avg", "HumanEval_125_split_words",
                          "HumanEval_137_compare_one"} & chosen  # fmt: skip
