"""C++, JavaScript, Java, Go and MultiPL-E scripting languages through the real sandbox:
right and wrong completions, cheats that must not pass, batched equal to alone, and every
HumanEval-X C++ canonical solution."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

import vibes_eval
from tests.components import need
from tests.conftest import SANDBOX, SHARED
from tests.multilang import langs as L
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
    good, bad = CPP_ROW["canonical_solution"], "    return xs;\n}\n"
    broken = "    return xs\n}\n"
    samples = [{"task_id": "CPP/0", "completion": c} for c in [good, bad, broken, *CPP_CHEATS]]
    results = evaluate(tmp_path, "humaneval-cpp", [CPP_ROW], samples, limits={"timeout_s": 3})
    assert results[0].passed, results[0].detail
    assert results[1].reason == "failed" and "issame" in results[1].detail
    assert results[2].reason == "compile_error" and "main.cpp" in results[2].detail
    for cheat, res in zip(CPP_CHEATS, results[3:], strict=True):
        assert not res.passed, cheat
    alone = evaluate(tmp_path, "humaneval-cpp", [CPP_ROW], samples, batch=False,
                     limits={"timeout_s": 3})  # fmt: skip
    key = [(r.passed, r.reason, r.detail) for r in results]
    assert key == [(r.passed, r.reason, r.detail) for r in alone]


@needs("cpp")
def test_cpp_cheats_fail_for_their_own_reason_without_the_policy(tmp_path: Path) -> None:
    """The policy filter off: separate translation units and the token still hold."""
    samples = [{"task_id": "CPP/0", "completion": c} for c in CPP_CHEATS[:8]]
    results = evaluate(tmp_path, "humaneval-cpp", [CPP_ROW], samples, enforce_policy=False)
    assert [r.passed for r in results] == [False] * len(samples)


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
    if lang == "java":  # on the split: the trusted test program decided
        assert results[0].details == {"trust": "split"}
        assert "AssertionError" in results[1].detail and "Main.java:" in results[1].detail


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


@pytest.mark.slow
@needs("cpp")
def test_humaneval_x_cpp_canonical_solutions_pass() -> None:
    need("shared", None if HUMANEVAL_X_CPP.exists() else f"{HUMANEVAL_X_CPP} is absent")
    with gzip.open(HUMANEVAL_X_CPP, "rt") as fh:
        rows = [json.loads(line) for line in fh]
    out = vibes_eval.evaluate(
        "humaneval-cpp",
        [{"task_id": r["task_id"], "completion": r["canonical_solution"]} for r in rows],
        sandbox=SANDBOX, ks=[1], config={"problems": str(HUMANEVAL_X_CPP)},
    )  # fmt: skip
    failed = [(r.task_id, r.reason, r.detail) for r in out.results.values() if not r.passed]
    assert failed == []
