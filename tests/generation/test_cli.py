"""`vibes eval run humaneval-rust --model ...`, `vibes eval resume`, `vibes eval show`
and `vibes eval ab` as a user runs them: a real CLI process, a real HTTP server with
scripted answers, rustc in the sandbox, a real store. The acceptance points of issue 12."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("jinja2")

from tests.conftest import EXAMPLES, SANDBOX, run_cli
from tests.generation.conftest import fence
from vibes_eval import open_store

PROBLEMS = str(EXAMPLES / "sanity" / "problems.jsonl")
SIGS = {
    "add": "fn add(a: i32, b: i32) -> i32",
    "is_even": "fn is_even(n: i64) -> bool",
    "reverse": "fn reverse(s: &str) -> String",
    "max_of": "fn max_of(v: &[i32]) -> Option<i32>",
}
RIGHT = {
    "add": "a + b",
    "is_even": "n % 2 == 0",
    "reverse": "s.chars().rev().collect()",
    "max_of": "v.iter().copied().max()",
}


def answer(name: str, body: str | None = None) -> str:
    return fence(f"{SIGS[name]} {{\n    {body or RIGHT[name]}\n}}")


WRONG = {
    "add": answer("add", "a - b"),
    "is_even": answer("is_even", "n % 2 == 1"),
    "reverse": answer("reverse", "s.to_string("),
    "max_of": answer("max_of", "None"),
}


def vibes(*args: str, store: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, "--store", str(store), **kw)


def gen_args(srv: Any, *extra: str) -> list[str]:
    return [
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        PROBLEMS,
        "--sandbox",
        SANDBOX,
        "--model",
        "openai/scripted",
        "--base-url",
        srv.url,
        "--seed",
        "0",
        "--gen",
        "retry_base_s=0.01",
        "--no-progress",
        *extra,
    ]


def metrics(store: Path, run_id: str) -> dict[str, float]:
    with open_store(str(store)) as results:
        return results.metrics(run_id)


def test_pass_at_k_is_what_the_scripted_answers_imply(serve: Any, tmp_path: Path) -> None:
    srv = serve(
        {
            "fn add(": {0: answer("add"), 1: answer("add"), -1: WRONG["add"]},  # 2 of 5
            "fn is_even(": answer("is_even"),  # 5 of 5
            "fn reverse(": WRONG["reverse"],  # 0 of 5: does not compile
            "fn max_of(": {
                4: answer("max_of"),
                -1: {"sequence": [{"status": 429, "retry_after": "0"}, WRONG["max_of"]]},
            },  # 1 of 5
        }
    )
    store = tmp_path / "s.sqlite"
    proc = vibes(
        *gen_args(srv, "--n", "5", "--tasks", "4", "--k", "1,2,5", "--run-id", "acc"),
        store=store,
        check=True,
    )
    assert "pass@1" in proc.stdout and "generation:" in proc.stdout
    got = metrics(store, "acc")
    assert got["pass@1"] == pytest.approx((2 / 5 + 1 + 0 + 1 / 5) / 4)
    assert got["pass@2"] == pytest.approx((0.7 + 1 + 0 + 0.4) / 4)
    assert got["pass@5"] == pytest.approx(3 / 4)
    assert len(srv.requests) == 20 + 4  # four 429s retried once each
    with open_store(str(store)) as results:
        rows = results.export("acc")
    assert {r["reason"] for r in rows if r["task_id"] == "Sanity/2"} == {"compile_error"}
    assert all(r["completion"] and r["model"] == "openai/scripted" for r in rows)


def test_kill_9_mid_run_then_resume_asks_nothing_twice(serve: Any, tmp_path: Path) -> None:
    answers: dict[str, Any] = {f"fn {n}(": {"sleep": 0.3, "content": answer(n)} for n in SIGS}
    srv = serve(answers)
    store = tmp_path / "s.sqlite"
    args = gen_args(
        srv,
        "--n",
        "3",
        "--tasks",
        "4",
        "--concurrency",
        "2",
        "--k",
        "1",
        "--run-id",
        "kill",
        "--store",
        str(store),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "vibes_eval.cli.app", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while _answers(store) < 5:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    paid = _answered_keys(store)
    assert 5 <= len(paid) < 12
    vibes("eval", "resume", "kill", "--no-progress", store=store, check=True)
    per_key: dict[tuple[str, int], int] = {}
    for _, marker, index, _, _ in srv.requests:
        per_key[(marker, index)] = per_key.get((marker, index), 0) + 1
    # A request in flight at the kill was never answered in the store: it may be asked
    # again. Nothing whose answer was recorded is.
    names = {f"Sanity/{i}": f"fn {n}(" for i, n in enumerate(SIGS)}
    assert all(per_key[(names[t], i)] == 1 for t, i in paid)
    assert len(per_key) == 12
    assert metrics(store, "kill")["pass@1"] == 1.0


def _answers(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
            return db.execute(
                "select count(*) from vibes_events where type = 'model_called'"
            ).fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _answered_keys(store: Path) -> set[tuple[str, int]]:
    with sqlite3.connect(store) as db:
        bodies = [
            json.loads(b)
            for (b,) in db.execute("select body from vibes_events where type = 'model_called'")
        ]
    return {(b["task_id"], b["index"]) for b in bodies if b["ok"]}


def test_ab_self_refine_beats_one_shot_exactly_where_the_script_fixes(
    serve: Any, tmp_path: Path
) -> None:
    srv = serve(
        {
            "fn add(": [WRONG["add"], answer("add")],  # fixed after feedback
            "fn is_even(": answer("is_even"),  # right at once
            "fn reverse(": [WRONG["reverse"], answer("reverse")],  # fixed: the compile error
            "fn max_of(": WRONG["max_of"],  # never fixed
        }
    )
    exp = tmp_path / "exp.yaml"
    exp.write_text(
        "name: ab\nbenchmark: humaneval-rust\n"
        f"config: {{problems: {PROBLEMS}}}\n"
        f"generation: {{model: openai/scripted, base_url: '{srv.url}', limit: 4, n: 2}}\n"
        f"sandbox: {SANDBOX}\nk: [1, 2]\n"
        "variants:\n  one: {setting: one-shot}\n  refine: {setting: 'self-refine:3'}\n"
    )
    store = tmp_path / "s.sqlite"
    table = vibes("eval", "ab", str(exp), "--no-progress", store=store, check=True).stdout
    assert "one" in table and "refine" in table and "refine - one" in table
    assert "95% CI" in table and "McNemar" in table and "$/solved" in table
    asked = len(srv.requests)
    report = json.loads(
        vibes("eval", "ab", str(exp), "--format", "json", store=store, check=True).stdout
    )
    assert len(srv.requests) == asked  # running it again resumed: nothing was asked
    pair = report["pairs"][0]
    assert sorted(f["task_id"] for f in pair["improved"]) == ["Sanity/0", "Sanity/2"]
    assert pair["regressed"] == []
    diff = next(m for m in pair["metrics"] if m["metric"] == "pass@1")
    assert (diff["a"], diff["b"], diff["diff"]) == pytest.approx((0.25, 0.75, 0.5))
    assert diff["ci_low"] <= 0.5 <= diff["ci_high"]
    refine = report["variants"][1]
    assert [r["pass@1"] for r in refine["rounds"]] == pytest.approx([0.25, 0.75, 0.75])
    # Round 1 asked what one-shot asked: some verdicts come from the cache. How many
    # depends on how the answers met in batches, which varies with the machine's load
    # (a fresh-check run under load saw 3; quiet runs 4 or more).
    assert refine["reused"] >= 1


def test_dry_run_sends_nothing_and_show_prints_a_trajectory(serve: Any, tmp_path: Path) -> None:
    srv = serve({"fn add(": [WRONG["add"], answer("add")]})
    store = tmp_path / "s.sqlite"
    dry = vibes(
        *gen_args(
            srv,
            "--n",
            "3",
            "--tasks",
            "Sanity/0,Sanity/1",
            "--setting",
            "self-refine:4",
            "--dry-run",
        ),
        store=store,
        check=True,
    ).stdout
    assert "requests: 6 to 24" in dry and "fn add(a: i32, b: i32) -> i32 {" in dry
    assert "--- system ---" in dry and len(srv.requests) == 0
    vibes(
        *gen_args(srv, "--tasks", "Sanity/0", "--setting", "self-refine:4", "--run-id", "sh"),
        store=store,
        check=True,
    )
    shown = vibes("eval", "show", "sh", "Sanity/0", store=store, check=True).stdout
    assert "round 1 · failed (failed)" in shown and "final · passed after 2 round(s)" in shown
    assert "Your solution did not pass" in shown and "a - b" in shown
    events = json.loads(
        vibes(
            "eval", "show", "sh", "Sanity/0", "0", "--format", "json", store=store, check=True
        ).stdout
    )
    assert [e["type"] for e in events] == [
        "model_called",
        "attempt_evaluated",
        "model_called",
        "sample_evaluated",
    ]


def test_completion_style_for_base_models(serve: Any, tmp_path: Path) -> None:
    # A base model continues the code past the function; the stop sequence ends it there.
    srv = serve({"fn add(": '    a + b\n}\n\nfn main() { println!("more"); }\n'})
    store = tmp_path / "s.sqlite"
    vibes(
        *gen_args(srv, "--tasks", "Sanity/0", "--prompt-style", "completion", "--run-id", "c"),
        store=store,
        check=True,
    )
    assert metrics(store, "c")["pass@1"] == 1.0
    path, _, _, _, body = srv.requests[0]
    assert path == "/v1/completions" and body["stop"] == ["\n}"]
    assert body["prompt"].endswith("fn add(a: i32, b: i32) -> i32 {\n")


def test_anthropic_models(serve: Any, tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    srv = serve({"fn add(": answer("add"), "fn is_even(": WRONG["is_even"]})
    store = tmp_path / "s.sqlite"
    args = gen_args(srv, "--tasks", "2", "--run-id", "an")
    args[args.index("openai/scripted")] = "anthropic/claude-scripted"
    args[args.index(srv.url)] = srv.anthropic_url
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-not-a-real-key"}
    vibes(*args, store=store, env=env, check=True)
    assert metrics(store, "an")["pass@1"] == 0.5
    assert {p for p, *_ in srv.requests} == {"/v1/messages"}


def test_tool_augmented_agent_works_in_the_sandbox(serve: Any, tmp_path: Path) -> None:
    solution = "/// Add two integers.\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
    probe = (
        "pwd; /usr/bin/python3 -c \"import socket; socket.create_connection(('127.0.0.1', "
        "PORT), 2); print('REACHED')\""
    )
    srv = serve({})
    srv.script.answers["fn add("] = [
        {
            "tool_calls": [
                {
                    "name": "run",
                    "arguments": {
                        "command": probe.replace("PORT", srv.url.split(":")[2].split("/")[0])
                    },
                }
            ]
        },
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "solution.rs", "content": solution}}
            ]
        },
        {"tool_calls": [{"name": "run_tests", "arguments": {}}]},
        {"tool_calls": [{"name": "submit", "arguments": {}}]},
    ]
    store = tmp_path / "s.sqlite"
    vibes(
        *gen_args(srv, "--tasks", "Sanity/0", "--setting", "tool-augmented:6", "--run-id", "t"),
        store=store,
        check=True,
    )
    assert metrics(store, "t")["pass@1"] == 1.0
    shown = vibes("eval", "show", "t", "Sanity/0", store=store, check=True).stdout
    assert "tool run(" in shown and "tool run_tests" in shown and "round 1 · passed" in shown
    first_tool = json.loads(
        vibes("eval", "show", "t", "Sanity/0", "--format", "json", store=store, check=True).stdout
    )[1]
    assert first_tool["type"] == "tool_called"
    if SANDBOX != "process":  # a sandbox: the model server is out of reach, cwd is the session's
        out = first_tool["output"]
        assert "REACHED" not in out and "stdout:" in out
        assert out.split("stdout:\n")[1].splitlines()[0] != str(Path.cwd())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--n", "3"], "--n needs --model"),
        (["--model", "mistral/x"], "expected provider/name"),
        (["--model", "openai/x", "--setting", "self-refine:0"], "at least 1"),
        (
            ["--model", "openai/x", "--setting", "self-refine:2", "--prompt-style", "completion"],
            "needs the chat prompt style",
        ),
        (
            ["--model", "openai/x", "--gen", "options.feedback_chars=10"],
            "means nothing to one-shot",
        ),
        (["--model", "openai/x", "--tasks", "Nope/1", "--dry-run"], "unknown task id 'Nope/1'"),
        (["--model", "openai/x", "--gen", "prompt.user={{ nope }}"], "'nope' is undefined"),
    ],
)
def test_mistakes_are_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    proc = run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        PROBLEMS,
        *args,
        "--store",
        str(tmp_path / "s.sqlite"),
    )
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_budget_stops_with_exit_3_and_says_how_to_go_on(serve: Any, tmp_path: Path) -> None:
    srv = serve({f"fn {n}(": answer(n) for n in SIGS})
    store = tmp_path / "s.sqlite"
    args = gen_args(
        srv, "--tasks", "4", "--concurrency", "1", "--max-tokens-total", "1", "--run-id", "b"
    )
    proc = vibes(*args, store=store)
    assert proc.returncode == 3, proc.stderr
    assert "stopped: --max-tokens-total 1 reached" in proc.stdout
    assert "--run-id b" in proc.stderr and len(srv.requests) == 1
    args[args.index("1", args.index("--max-tokens-total"))] = "100000"
    vibes(*args, store=store, check=True)
    assert len(srv.requests) == 4 and metrics(store, "b")["pass@1"] == 1.0
