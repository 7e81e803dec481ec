"""Kernels in the loop: `vibes eval run kernels --model ...` on the CPU kernel set with the
scripted server, the real compiler and the real sandbox. One-shot as scripted, self-refine
fixing exactly what the script fixes after feedback (compile errors, a wrong output), a
cheat caught with its rule, an agent building in a work dir without the expert; the prompt
holds the interface and the tolerances, never the expert reference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("jinja2")

from tests.conftest import EXAMPLES, SANDBOX, run_cli
from tests.generation.conftest import fence
from vibes_eval import open_store
from vibes_eval.benchmarks.kernels.benchmark import Kernels
from vibes_eval.benchmarks.kernels.config import KernelsConfig
from vibes_eval.benchmarks.kernels.prompting import is_expert
from vibes_eval.generation.prompts import Templates, first_messages
from vibes_eval.generation.settings import PromptSettings

CPU_SET = EXAMPLES / "kernels" / "cpu"
TASKS = CPU_SET / "tasks" / "class1" / "general"
ADD, SUM, SCAN, TRANSPOSE = (f"class1/general/{n}" for n in (
    "cpu_00_vector_add", "cpu_01_reduce_sum", "cpu_02_prefix_scan", "cpu_03_transpose"))  # fmt: skip
# Markers the scripted server finds in each task's prompt (its api.h).
MARK = {
    ADD: "void vector_add(",
    SUM: "void reduce_sum(",
    SCAN: "void inclusive_scan(",
    TRANSPOSE: "void transpose(",
}


def naive(task: str) -> str:
    return (TASKS / task.rsplit("/", 1)[1] / "solution.h").read_text()


def cpp(code: str) -> str:
    return "Here it is.\n\n" + fence(code, "cpp")


def kernels_args(srv: Any, *extra: str) -> list[str]:
    return [
        "eval", "run", "kernels", "--problems", str(CPU_SET), "--sandbox", SANDBOX,
        "--model", "openai/scripted", "--base-url", srv.url, "--seed", "0",
        "--gen", "retry_base_s=0.01", "--no-progress", "--concurrency", "2",
        "--set", "repeats=1", "--set", "trials=3", "--set", "warmup=1",
        *extra,
    ]  # fmt: skip


def metrics(store: Path, run_id: str) -> dict[str, float]:
    with open_store(str(store)) as results:
        return results.metrics(run_id)


def verdicts(store: Path, run_id: str) -> dict[str, tuple[str, str]]:
    with open_store(str(store)) as results:
        return {r["task_id"]: (r["reason"], r.get("detail", "")) for r in results.export(run_id)}


def test_the_prompt_has_the_interface_and_rules_never_the_expert() -> None:
    bench = Kernels(KernelsConfig(problems=str(CPU_SET)))
    templates = Templates(PromptSettings())
    for task in bench.load_tasks().values():
        ctx = bench.prompting().context(task)
        text = "\n".join(
            m["content"] for m in first_messages(templates, ctx, agent=True, tool_budget=5)
        )
        folder = Path(task.folder)
        expert = (folder / "reference.h").read_text()
        signature = next(
            line for line in (folder / "api.h").read_text().splitlines() if "extern" in line
        )
        assert signature in text and "`solution.h`" in text
        tol = task.spec.correctness.tolerances
        assert f"atol {tol.atol:g}" in text and f"rtol {tol.rtol:g}" in text
        assert "speed = the mean over sizes" in text and "fast_p" in text
        assert expert.strip() not in text
        # No line of the expert's own code (beyond braces and trivial lines) is shown.
        own = {ln.strip() for ln in expert.splitlines() if len(ln.strip()) > 25}
        own -= {ln.strip() for ln in naive(task.task_id).splitlines()}
        assert own and not [ln for ln in own if ln in text], task.task_id
        # The agent's work dir: the expert's place holds a stand-in, the rest is there.
        ws = ctx.workspace
        assert ws is not None and ws.solution == "solution.h" and ws.device is None
        assert "kh_root/common/kh_bench.h" in ws.files and "harness.cpp" in ws.files
        assert not any(ln in content for content in ws.files.values() for ln in own)
        assert ws.files["reference.h"].endswith(naive(task.task_id))
    assert is_expert("reference.h") and is_expert("ref.cuh") and not is_expert("reference_tu.cpp")
    assert not is_expert("harness.cpp") and not is_expert("refine.h")


def test_one_shot_then_self_refine_on_the_cpu_set(serve: Any, tmp_path: Path) -> None:
    broken = naive(TRANSPOSE).replace(";", "", 1)  # a compile error
    wrong_sum = (CPU_SET / "wrong" / "cpu_01_reduce_sum.h").read_text()
    cheat = (CPU_SET / "cheats" / "dlsym_printf.h").read_text()
    srv = serve(
        {
            MARK[ADD]: cpp(naive(ADD)),  # right at once
            MARK[SUM]: [cpp(wrong_sum), cpp(naive(SUM))],  # fixed after the mismatch
            MARK[TRANSPOSE]: [cpp(broken), cpp(naive(TRANSPOSE))],  # fixed after the error
            MARK[SCAN]: cpp(cheat),  # cheats every time
        }
    )
    store = tmp_path / "s.sqlite"
    chosen = ",".join((ADD, SUM, SCAN, TRANSPOSE))
    run_cli(*kernels_args(srv, "--tasks", chosen, "--run-id", "one"), "--store", str(store),
            check=True)  # fmt: skip
    one = verdicts(store, "one")
    assert {t: r for t, (r, _) in one.items()} == {
        ADD: "passed",
        SUM: "failed",
        SCAN: "anti_cheat",
        TRANSPOSE: "compile_error",
    }
    assert one[SCAN][1].startswith("symbols")
    assert metrics(store, "one")["pass_rate"] == pytest.approx(0.25)
    assert len(srv.requests) == 4

    proc = run_cli(
        *kernels_args(srv, "--tasks", chosen, "--setting", "self-refine:2", "--run-id", "ref"),
        "--store", str(store), check=True,
    )  # fmt: skip
    refined = verdicts(store, "ref")
    assert {t: r for t, (r, _) in refined.items()} == {
        ADD: "passed",
        SUM: "passed",
        SCAN: "anti_cheat",
        TRANSPOSE: "passed",
    }
    got = metrics(store, "ref")
    assert got["pass_rate"] == pytest.approx(0.75) and got["compile_rate"] == 1.0
    # Round 2 was asked for exactly the three that failed, and saw why.
    second = [(m, body) for _, m, _, r, body in srv.requests[4:] if r == 2]
    assert sorted(m for m, _ in second) == sorted([MARK[SUM], MARK[TRANSPOSE], MARK[SCAN]])
    feedback = {m: body["messages"][-1]["content"] for m, body in second}
    assert "failed" in feedback[MARK[SUM]] and "want" in feedback[MARK[SUM]]  # the mismatch
    assert "compile_error" in feedback[MARK[TRANSPOSE]] and "error" in feedback[MARK[TRANSPOSE]]
    assert "anti_cheat" in feedback[MARK[SCAN]] and "symbols" in feedback[MARK[SCAN]]
    # The per-round table carries the kernel metrics.
    assert "by round" in proc.stdout and "fast_1.05" in proc.stdout
    assert "geomean_speed" in proc.stdout.split("by round", 1)[1]


def test_an_agent_builds_and_times_without_the_expert(serve: Any, tmp_path: Path) -> None:
    look = "cat reference.h | head -3; make test >/dev/null 2>&1 && ./test | grep -q Passed && echo BUILT-AND-PASSED"
    srv = serve(
        {
            MARK[ADD]: [
                {"tool_calls": [{"name": "run", "arguments": {"command": look}}]},
                {"tool_calls": [{"name": "write_file",
                                 "arguments": {"path": "solution.h", "content": naive(ADD)}}]},
                {"tool_calls": [{"name": "run_tests", "arguments": {}}]},
                {"tool_calls": [{"name": "submit", "arguments": {}}]},
            ]
        }
    )  # fmt: skip
    store = tmp_path / "s.sqlite"
    args = kernels_args(srv, "--tasks", ADD, "--setting", "tool-augmented:6", "--run-id", "t")
    run_cli(*args, "--store", str(store), check=True)
    assert verdicts(store, "t")[ADD][0] == "passed"
    events = json.loads(
        run_cli(
            "eval", "show", "t", ADD, "--format", "json", "--store", str(store), check=True
        ).stdout
    )
    tools = [e for e in events if e["type"] == "tool_called"]
    assert [t["name"] for t in tools] == ["run", "write_file", "run_tests", "submit"]
    shown = tools[0]["output"]
    assert "Stand-in for the expert reference" in shown
    assert "BUILT-AND-PASSED" in shown  # make test and ./test ran in the work dir
    expert = (TASKS / "cpu_00_vector_add" / "reference.h").read_text()
    assert not any(expert.strip() in e.get("output", "") for e in tools)


def test_few_shot_exemplars_come_through_a_user_template() -> None:
    bench = Kernels(KernelsConfig(problems=str(CPU_SET)))
    task = bench.load_tasks()[SUM]
    user = (
        "Example task: scale a vector.\n```cpp\nvoid scale(float* x, int n) {\n"
        "  #pragma omp simd\n  for (int i = 0; i < n; ++i) x[i] *= 2.f;\n}\n```\n\n"
        "Now: {{ task_description }}\n{{ interface }}\n{{ rules }}\nAnswer in {{ solution_file }}."
    )
    messages = first_messages(Templates(PromptSettings(user=user)), bench.prompting().context(task))
    text = messages[-1]["content"]
    assert text.startswith("Example task: scale a vector.") and "void reduce_sum(" in text
    assert "atol" in text and text.rstrip().endswith("Answer in solution.h.")
    expert = (TASKS / "cpu_01_reduce_sum" / "reference.h").read_text()
    assert expert.strip() not in text
