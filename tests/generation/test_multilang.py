"""The multi-language benchmarks in the loop: `vibes eval run humaneval-python / mbpp /
humaneval-cpp --model ...` against the scripted server, evaluated in the real sandbox
(Python, g++), chat answers (a fenced whole function) and completion style (the prompt
continued to the stop sequences); and how answers of every brace language become the
continuation their evaluators append to the prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("jinja2")

from tests.conftest import SANDBOX, run_cli
from tests.generation.conftest import fence
from tests.multilang.langs import CPP_MULTIPLE, GO, JAVA, JS
from tests.multilang.problems import MBPP, OPENAI, write
from vibes_eval import open_store
from vibes_eval.benchmarks.multilang import prompting
from vibes_eval.benchmarks.multilang.tasks import CodeTask as Problem

ADD_PY = "def add(a, b):\n    return a + b\n"
EVENS_WRONG = "def evens(xs):\n    return xs\n"
CPP = [
    {"task_id": "CPP/0", "declaration": "#include<vector>\nusing namespace std;\nint add(int a, int b){\n",
     "prompt": "/*\nAdd two numbers.\n*/\n#include<vector>\nusing namespace std;\nint add(int a, int b){\n",
     "canonical_solution": "    return a + b;\n}\n",
     "test": "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (add(1, 2) == 3);\n"
             "    assert (add(-1, 1) == 0);\n}\n"},
    {"task_id": "CPP/1", "declaration": "#include<vector>\nusing namespace std;\nint twice(int a){\n",
     "prompt": "/*\nTwice a.\n*/\n#include<vector>\nusing namespace std;\nint twice(int a){\n",
     "canonical_solution": "    return 2 * a;\n}\n",
     "test": "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (twice(4) == 8);\n}\n"},
]  # fmt: skip


def gen_args(bench: str, problems: Path, srv: Any, run_id: str, *extra: str) -> list[str]:
    return [
        "eval", "run", bench, "--problems", str(problems), "--sandbox", SANDBOX,
        "--model", "openai/scripted", "--base-url", srv.url, "--seed", "0",
        "--gen", "retry_base_s=0.01", "--no-progress", "--run-id", run_id, *extra,
    ]  # fmt: skip


def outcomes(store: Path, run_id: str) -> dict[str, str]:
    with open_store(str(store)) as results:
        return {r["task_id"]: r["reason"] for r in results.export(run_id)}


def test_humaneval_python_chat_and_completion(serve: Any, tmp_path: Path) -> None:
    problems = write(tmp_path / "p.jsonl", OPENAI)
    srv = serve({"def add(": "Sure:\n" + fence(ADD_PY, "python"),
                 "def evens(": fence(EVENS_WRONG, "python")})  # fmt: skip
    store = tmp_path / "s.sqlite"
    run_cli(*gen_args("humaneval-python", problems, srv, "chat"), "--store", str(store),
            check=True)  # fmt: skip
    assert outcomes(store, "chat") == {"Test/0": "passed", "Test/1": "failed"}
    # A base model goes on past the function: Codex's stop sequences end it there.
    srv.script.answers.update({
        "def add(": "    return a + b\n\ndef unrelated():\n    raise SystemExit(1)\n",
        "def evens(": "    return [x for x in xs if x % 2 == 0]\n\nprint('more')\n",
    })  # fmt: skip
    run_cli(*gen_args("humaneval-python", problems, srv, "comp", "--prompt-style", "completion"),
            "--store", str(store), check=True)  # fmt: skip
    assert outcomes(store, "comp") == {"Test/0": "passed", "Test/1": "passed"}
    path, _, _, _, body = srv.requests[-1]
    assert path == "/v1/completions" and "\ndef " in body["stop"]


def test_mbpp_chat(serve: Any, tmp_path: Path) -> None:
    problems = write(tmp_path / "mbpp.jsonl", MBPP)
    right = MBPP[0]["code"]
    srv = serve({"remove the first and last": fence(right, "python"), "Pairs.": "no code"})
    store = tmp_path / "s.sqlite"
    run_cli(*gen_args("mbpp", problems, srv, "m"), "--store", str(store), check=True)
    assert outcomes(store, "m") == {"11": "passed", "12": "compile_error"}  # prose
    prompts = [b["messages"][-1]["content"] for *_, b in srv.requests]
    assert any('assert remove_Occ("hello","l") == "heo"' in p for p in prompts)  # tests name it


def test_humaneval_cpp_chat_self_refine_and_completion(serve: Any, tmp_path: Path) -> None:
    problems = write(tmp_path / "cpp.jsonl", CPP)
    whole = "#include<vector>\nusing namespace std;\nint add(int a, int b){\n    return a + b;\n}\n"
    srv = serve({
        "int add(": fence(whole, "cpp"),
        "int twice(": [fence("int twice(int a){\n    return 2 * a\n}", "cpp"),  # no `;`
                       fence("int twice(int a) {\n    return a << 1;\n}", "c++")],
    })  # fmt: skip
    store = tmp_path / "s.sqlite"
    args = gen_args("humaneval-cpp", problems, srv, "cpp", "--setting", "self-refine:2")
    proc = run_cli(*args, "--store", str(store), check=True)
    assert outcomes(store, "cpp") == {"CPP/0": "passed", "CPP/1": "passed"}
    assert "by round" in proc.stdout
    feedback = [b for _, m, _, r, b in srv.requests if m == "int twice(" and r == 2]
    assert len(feedback) == 1 and "compile_error" in feedback[0]["messages"][-1]["content"]
    assert "```cpp\n" in srv.requests[0][4]["messages"][-1]["content"]
    srv.script.answers.update({"int add(": "    return a + b;\n}\n\nint main() { return 1; }\n",
                               "int twice(": "    return a;\n}\n"})  # fmt: skip
    run_cli(*gen_args("humaneval-cpp", problems, srv, "comp", "--prompt-style", "completion"),
            "--store", str(store), check=True)  # fmt: skip
    assert outcomes(store, "comp") == {"CPP/0": "passed", "CPP/1": "failed"}


def _problem(row: dict[str, Any], lang: str, fmt: str = "humaneval-x") -> Problem:
    return Problem(task_id=row.get("task_id", row.get("name", "")), language=lang, format=fmt,
                   prompt=row["prompt"], stop_tokens=row.get("stop_tokens", []))  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "row", "answer", "want"),
    [
        ("java", JAVA, "```java\nimport java.util.*;\nclass Solution {\n    public List<Integer> "
         "addAll(List<Integer> xs, int k) {\n        return xs;\n    }\n}\n```",
         "\n        return xs;\n    }\n}\n"),
        ("java", JAVA, "```java\n    public List<Integer> addAll(List<Integer> xs, int k) {\n"
         "        return xs;\n    }\n```", "\n        return xs;\n    }\n}\n"),
        ("js", JS, "```javascript\nconst h = (x) => x;\nconst add = (a, b) => {\n  return h(a) + b;"
         "\n}\n```", "\n  return h(a) + b;\n}\n\nconst h = (x) => x;"),
        ("go", GO, "```go\npackage main\n\nimport (\n    \"math\"\n)\n\nfunc Dist(x float64) "
         "float64 {\n    return math.Abs(x)\n}\n```", "\n    return math.Abs(x)\n}\n"),
        ("go", GO, "    return math.Abs(x)\n}\n", "    return math.Abs(x)\n}\n"),  # a body
    ],
)  # fmt: skip
def test_chat_answers_become_the_continuation(
    lang: str, row: dict[str, Any], answer: str, want: str
) -> None:
    assert prompting.to_completion(_problem(row, lang), answer, "chat") == want


def test_multipl_e_leaves_the_function_open_for_its_tests() -> None:
    problem = _problem(CPP_MULTIPLE, "cpp", "multipl-e")
    ctx = prompting.prompt_context(problem)
    assert ctx.stop == ["\n}"] and ctx.variables["entry_point"] == "add"
    chat = "```cpp\nlong add(long x, long y) {\n    return x + y;\n}\n```"
    assert prompting.to_completion(problem, chat, "chat") == "\n    return x + y;\n"
    assert prompting.to_completion(problem, "    return x + y;\n}\nint main", "completion") == (
        "    return x + y;"
    )
