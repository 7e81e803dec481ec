"""Generation and evaluation end to end on the spine's small test benchmark (verdicts
from the answer's text, no compiler), through the Python API, a real HTTP server and a
real store: pass@k as scripted, self-refine per round, per-sample errors, budgets that
stop cleanly, resume without asking again, the cache shared by identical outputs, and
keys that never reach the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("jinja2")

from vibes_eval.core.errors import UserError
from vibes_eval.generation import generate
from vibes_eval.generation.history import RunHistory
from vibes_eval.store.events import AttemptEvaluated, ModelCalled, RunInterrupted, SampleEvaluated
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve


def settings(srv: Any, **kw: Any) -> dict[str, Any]:
    base = {
        "model": "openai/scripted",
        "base_url": srv.url,
        "retry_base_s": 0.01,
        "sampling": {"n": 4, "seed": 0},
    }
    base.update(kw)
    return base


def run(
    bench: str, srv: Any, store: Path | None = None, run_id: str | None = None, **kw: Any
) -> Any:
    return generate(
        bench,
        settings(srv, **kw),
        config={"tasks": 3},
        sandbox="process",
        store=str(store) if store else None,
        run_id=run_id,
        ks=[1, 2],
    )


def events(store: Path, run_id: str) -> list[Any]:
    with open_store(resolve(str(store)), create=False) as st:
        return [e.event for e in st.events(run_id)]


def test_one_shot_pass_at_k_is_what_the_script_says(fake_gen: str, serve: Any) -> None:
    srv = serve(
        {
            "task F/0": {0: "pass", 1: "fail", 2: "pass", 3: "fail"},
            "task F/1": "pass",
            "task F/2": "fail",
        }
    )
    out = run(fake_gen, srv)
    # F/0: 2 of 4, F/1: 4 of 4, F/2: 0 of 4
    assert out.metrics["pass@1"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert out.metrics["pass@2"] == pytest.approx((1 - 1 / 6 + 1 + 0) / 3)
    assert len(srv.requests) == 12


def test_self_refine_fixes_exactly_what_the_script_fixes(
    fake_gen: str, serve: Any, tmp_path: Path
) -> None:
    srv = serve(
        {
            "task F/0": ["fail", "pass"],
            "task F/1": "pass",
            "task F/2": {0: ["fail", "fail", "pass"], -1: "fail"},
        }
    )
    store = tmp_path / "s.sqlite"
    one = run(fake_gen, srv, store, "one", setting="one-shot")
    refine = run(fake_gen, srv, store, "refine", setting="self-refine:3")
    assert one.metrics["pass@1"] == pytest.approx((0 + 1 + 0) / 3)
    assert refine.metrics["pass@1"] == pytest.approx((1 + 1 + 0.25) / 3)
    with open_store(resolve(str(store)), create=False) as st:
        history = RunHistory.load(st, "refine")
    by_round = {r: sum(x.passed for x in rs) for r, rs in history.by_round().items()}
    assert by_round == {1: 4, 2: 8, 3: 9}
    # The model saw its failure: the second round's request carries the feedback.
    second = next(b for _, m, i, r, b in srv.requests if m == "task F/0" and r == 2)
    assert "did not pass: failed" in second["messages"][-1]["content"]
    # Projections, attempts' cache entries included, come back from the events alone.
    cached = _cache_rows(store)
    with open_store(resolve(str(store)), create=False) as st:
        counts = st.rebuild()
    assert counts["vibes_samples"] == 24 and _cache_rows(store) == cached
    # Round 1 of each refine sample asked the same as one-shot: its verdict came from the
    # cache the one-shot run filled, not from a second evaluation.
    assert all(
        a.result.cached
        for a in (
            e for e in events(store, "refine") if isinstance(e, AttemptEvaluated) and e.round == 1
        )
    )


def _cache_rows(store: Path) -> list[tuple[str, str]]:
    import sqlite3

    with sqlite3.connect(store) as db:
        return sorted(db.execute("select key, result from vibes_cache").fetchall())


def test_unusable_answers_are_per_sample_errors(fake_gen: str, serve: Any, tmp_path: Path) -> None:
    srv = serve(
        {
            "task F/0": {
                0: {"content": ""},
                1: {"refusal": "no"},
                2: {"malformed": True},
                3: "pass",
            },
            "task F/1": {"status": 500},
            "task F/2": "pass",
        }
    )
    store = tmp_path / "s.sqlite"
    out = run(fake_gen, srv, store, "r", max_retries=2)
    reasons = {r.key: r.reason for r in out.ordered}
    assert [reasons[("F/0", i)] for i in range(4)] == ["generation_error"] * 3 + ["passed"]
    assert {reasons[("F/1", i)] for i in range(4)} == {"infra_error"}
    assert out.metrics["pass@1"] == pytest.approx((0.25 + 0 + 1) / 3)
    assert srv.count("task F/1") == 4 * 3  # each sample: one request and two retries
    # Infra errors (the API was down) are tried again on resume; the rest is not asked.
    before = len(srv.requests)
    srv.script.answers["task F/1"] = "pass"
    again = run(fake_gen, srv, store, "r", max_retries=2)
    assert len(srv.requests) - before == 4
    assert again.metrics["pass@1"] == pytest.approx((0.25 + 1 + 1) / 3)


def test_a_budget_stops_cleanly_and_a_larger_one_resumes(
    fake_gen: str, serve: Any, tmp_path: Path
) -> None:
    srv = serve({"task F/": "pass"})
    store = tmp_path / "s.sqlite"
    out = run(fake_gen, srv, store, "b", max_tokens_total=50, concurrency=1)
    done = len(out.results)
    assert 0 < done < 12 and out.generated.stop_reason.startswith("--max-tokens-total 50")
    stopped = [e for e in events(store, "b") if isinstance(e, RunInterrupted)]
    assert stopped and stopped[-1].reason.startswith("budget:")
    asked = len(srv.requests)
    assert asked == done  # no request was sent without its sample finishing
    full = run(fake_gen, srv, store, "b", max_tokens_total=10_000, concurrency=1)
    assert len(full.results) == 12 and full.metrics["pass@1"] == 1.0
    assert len(srv.requests) == 12  # the finished samples were not asked again


def test_max_cost_stops_at_its_price_and_a_larger_one_resumes(
    fake_gen: str, serve: Any, tmp_path: Path
) -> None:
    srv = serve({"task F/": "pass"})
    store = tmp_path / "s.sqlite"
    price = {"input": 1000.0, "output": 1000.0}  # dollars per million tokens: a few cents each
    out = run(fake_gen, srv, store, "c", max_cost=0.05, price=price, concurrency=1)
    done = len(out.results)
    assert 0 < done < 12 and out.generated.stop_reason.startswith("--max-cost 0.05")
    stopped = [e for e in events(store, "c") if isinstance(e, RunInterrupted)]
    assert stopped and stopped[-1].reason.startswith("budget:")
    assert len(srv.requests) == done  # nothing asked past the budget
    full = run(fake_gen, srv, store, "c", max_cost=100.0, price=price, concurrency=1)
    assert len(full.results) == 12 and len(srv.requests) == 12


def test_resume_replays_recorded_answers_without_asking(
    fake_gen: str, serve: Any, tmp_path: Path
) -> None:
    """A run that recorded answers but no verdicts (killed before evaluating them) is
    resumed from the store: the answers are evaluated, no request is sent."""
    srv = serve({"task F/0": ["fail", "pass"], "task F/1": "pass", "task F/2": "fail"})
    store = tmp_path / "s.sqlite"
    run(fake_gen, srv, store, "k", setting="self-refine:2")
    asked = len(srv.requests)
    with open_store(resolve(str(store)), create=False) as st:
        # Drop the verdicts, as if the process had stopped right after the last answer.
        from vibes_eval.store import schema

        dropped = ["sample_evaluated", "attempt_evaluated", "run_completed"]
        with st._write.begin() as conn:
            conn.execute(schema.events.delete().where(schema.events.c.type.in_(dropped)))
        st.rebuild()
        st.append([RunInterrupted(run_id="k", n_done=0)])
        assert not list(st.sample_events("k"))
    out = run(fake_gen, srv, store, "k", setting="self-refine:2")
    assert len(srv.requests) == asked
    assert out.metrics["pass@1"] == pytest.approx((1 + 1 + 0) / 3)


def test_other_sampling_settings_are_refused_on_resume(
    fake_gen: str, serve: Any, tmp_path: Path
) -> None:
    srv = serve({"task F/": "pass"})
    store = tmp_path / "s.sqlite"
    run(fake_gen, srv, store, "t")
    with pytest.raises(UserError, match=r"generation\.sampling\.temperature"):
        run(fake_gen, srv, store, "t", sampling={"n": 4, "seed": 0, "temperature": 0.7})
    # Where the model is served and how fast is not part of a run's identity.
    run(fake_gen, srv, store, "t", concurrency=2, request_timeout_s=30)


def test_every_attempt_is_an_event_and_keys_never_are(
    fake_gen: str, serve: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-key-123")
    srv = serve(
        {"task F/0": {"sequence": [{"status": 429, "retry_after": "0"}, "pass"]}, "task F/": "pass"}
    )
    store = tmp_path / "s.sqlite"
    generate(
        fake_gen,
        settings(srv, sampling={"n": 1, "seed": 0}, price={"input": 1.0, "output": 2.0}),
        config={"tasks": 3},
        sandbox="process",
        store=str(store),
        run_id="e",
    )
    evs = events(store, "e")
    calls = [e for e in evs if isinstance(e, ModelCalled)]
    assert len(calls) == len(srv.requests) == 4
    retried = [c for c in calls if not c.ok]
    assert retried[0].status == 429 and retried[0].retry and retried[0].request["messages"]
    ok = [c for c in calls if c.ok]
    assert all(
        c.cost_usd == pytest.approx((c.input_tokens + 2 * c.output_tokens) / 1e6) for c in ok
    )
    finals = [e for e in evs if isinstance(e, SampleEvaluated)]
    assert {f.record["completion"] for f in finals} == {"pass"}
    assert finals[0].record["input_tokens"] > 0
    assert b"sk-very-secret" not in store.read_bytes()
    for wal in tmp_path.glob("s.sqlite*"):
        assert b"sk-very-secret" not in wal.read_bytes()


def test_a_bad_key_stops_the_run_with_one_line(fake_gen: str, serve: Any, tmp_path: Path) -> None:
    srv = serve({"task F/": {"status": 401}})
    with pytest.raises(UserError, match="HTTP 401"):
        run(fake_gen, srv, tmp_path / "s.sqlite", "bad")
    assert len(srv.requests) <= 4  # the agents stop; nobody retries a bad key


def test_tool_augmented_works_in_the_sandbox_within_its_budget(
    fake_gen: str, serve: Any, tmp_path: Path
) -> None:
    write = {"name": "write_file", "arguments": {"path": "answer.txt", "content": "pass"}}
    test = {"name": "run_tests", "arguments": {}}
    submit = {"name": "submit", "arguments": {}}
    escape = {"name": "read_file", "arguments": {"path": "../../../../etc/hostname"}}
    srv = serve(
        {
            "task F/0": [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "answer.txt"}}]},
                {"tool_calls": [write]},
                {"tool_calls": [test]},
                {"tool_calls": [submit]},
            ],
            "task F/1": [
                {"tool_calls": [escape, {"name": "no_such_tool", "arguments": {}}]},
                {
                    "tool_calls": [
                        {"name": "run", "arguments": {"command": "echo fail > answer.txt"}}
                    ]
                },
                {"tool_calls": [test]},
                {"tool_calls": [test]},
                {"tool_calls": [submit]},
            ],
            "task F/2": {"content": "I will not use tools."},
        }
    )
    store = tmp_path / "s.sqlite"
    out = generate(
        fake_gen,
        settings(srv, sampling={"n": 1, "seed": 0}, setting="tool-augmented:4"),
        config={"tasks": 3},
        sandbox="process",
        store=str(store),
        run_id="t",
    )
    verdicts = {r.task_id: r.reason for r in out.ordered}
    assert verdicts["F/0"] == "passed" and verdicts["F/1"] == "failed"
    with open_store(resolve(str(store)), create=False) as st:
        history = RunHistory.load(st, "t")
    f0, f1 = history.samples[("F/0", 0)], history.samples[("F/1", 0)]
    assert [t.name for t in f0.tools] == ["read_file", "write_file", "run_tests", "submit"]
    assert f0.tools[0].output == "todo\n" and f0.final_round == 2
    # F/1: four tool calls allowed; the second run_tests and the submit were never run.
    assert [t.name for t in f1.tools] == ["read_file", "no_such_tool", "run", "run_tests"]
    assert not f1.tools[0].ok and not f1.tools[1].ok
    assert sum(1 for _, m, *_ in srv.requests if m == "task F/1") == 3  # then it was spent
    assert f1.tools[3].output.split("\n")[0] == "failed"  # run_tests' verdict
    assert "leaves the work dir" in f1.tools[0].output
    assert out.generated.history.totals.tool_calls == 8


def test_a_benchmark_without_prompts_is_refused_before_the_run(
    serve: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from vibes_eval.core import registry

    monkeypatch.setitem(registry.BENCHMARKS, "fake", "tests.core.fake:FakeBenchmark")
    srv = serve({})
    with pytest.raises(UserError, match="cannot prompt a model yet: it needs a Prompting"):
        generate("fake", settings(srv), sandbox="process", store=str(tmp_path / "s.sqlite"))
    assert not (tmp_path / "s.sqlite").exists() and not srv.requests
