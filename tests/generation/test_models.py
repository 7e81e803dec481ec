"""The model clients and the retry loop against a real HTTP server: answers, usage,
429 with Retry-After, 5xx within the retry budget, malformed bodies, empty answers,
refusals, a bad key, timeouts; Anthropic's messages API and OpenAI's completions."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("jinja2")

from vibes_eval.core.errors import UserError
from vibes_eval.generation.models import (
    AnthropicClient,
    CallFailed,
    OpenAIClient,
    anthropic_messages,
    retry_after_s,
)
from vibes_eval.generation.retry import Attempt, RetryPolicy, Stopped, send_with_retries
from vibes_eval.generation.settings import GenerationSettings

USER = [{"role": "user", "content": "task fn add( please"}]


def client(url: str, **kw: Any) -> OpenAIClient:
    return OpenAIClient(GenerationSettings(model="openai/scripted", base_url=url, **kw))


def send(c: Any, body: dict[str, Any], retries: int = 3) -> tuple[Any, list[Attempt]]:
    attempts: list[Attempt] = []
    policy = RetryPolicy(max_retries=retries, base_s=0.01, max_s=5.0)
    try:
        reply = send_with_retries(c, body, policy, attempts.append, threading.Event())
    except CallFailed as exc:
        return exc, attempts
    return reply, attempts


def test_an_answer_with_usage_and_the_request_as_sent(serve: Any) -> None:
    srv = serve({"fn add(": "```rust\nfn add() {}\n```"}, base_seed=7)
    c = client(srv.url, sampling={"temperature": 0.5, "seed": 7, "max_tokens": 99})
    body = c.chat_body(USER, 9, [])
    reply, attempts = send(c, body)
    assert reply.text.startswith("```rust") and reply.finish_reason == "stop"
    assert reply.input_tokens > 0 and reply.output_tokens > 0
    assert len(attempts) == 1 and attempts[0].reply is reply
    sent = srv.requests[0][4]
    assert (sent["seed"], sent["temperature"], sent["max_tokens"]) == (9, 0.5, 99)
    assert srv.requests[0][2] == 2  # index = seed - base_seed


def test_429_waits_for_retry_after_then_succeeds(serve: Any) -> None:
    srv = serve({"fn add(": {"sequence": [{"status": 429, "retry_after": "1"}, "ok"]}})
    c = client(srv.url)
    start = time.monotonic()
    reply, attempts = send(c, c.chat_body(USER, None, []))
    assert reply.text == "ok" and len(srv.requests) == 2
    assert time.monotonic() - start >= 1.0  # honoured, although the backoff base is 10 ms
    assert attempts[0].failure is not None and attempts[0].failure.status == 429
    assert attempts[0].retry and attempts[0].retry_in_s >= 1.0


def test_5xx_is_retried_within_its_budget_and_no_further(serve: Any) -> None:
    srv = serve({"fn add(": {"status": 500}})
    c = client(srv.url)
    failure, attempts = send(c, c.chat_body(USER, None, []), retries=3)
    assert isinstance(failure, CallFailed) and failure.kind == "transient"
    assert len(srv.requests) == 4  # the first and three retries
    assert [a.retry for a in attempts] == [True, True, True, False]


@pytest.mark.parametrize(
    ("action", "kind", "requests"),
    [
        ({"malformed": True}, "malformed", 3),  # retried: the next body may be whole
        ({"content": ""}, "answer", 1),  # an empty answer is the model's answer
        ({"refusal": "I cannot help with that."}, "answer", 1),
        ({"status": 400}, "answer", 1),  # this request is refused (too long...)
        ({"status": 401}, "fatal", 1),  # every request would be
    ],
)
def test_unusable_answers(serve: Any, action: dict[str, Any], kind: str, requests: int) -> None:
    srv = serve({"fn add(": action})
    c = client(srv.url)
    failure, _ = send(c, c.chat_body(USER, None, []), retries=2)
    assert isinstance(failure, CallFailed) and failure.kind == kind
    assert len(srv.requests) == requests


def test_a_slow_server_times_out_and_is_retried(serve: Any) -> None:
    srv = serve({"fn add(": {"sequence": [{"sleep": 3, "content": "late"}, "fast"]}})
    c = client(srv.url, request_timeout_s=0.5)
    reply, attempts = send(c, c.chat_body(USER, None, []))
    assert reply.text == "fast"
    assert attempts[0].failure is not None and attempts[0].failure.kind == "transient"


def test_stopping_interrupts_the_wait_between_attempts(serve: Any) -> None:
    srv = serve({"fn add(": {"status": 503, "retry_after": "30"}})
    c = client(srv.url)
    stopping = threading.Event()
    threading.Timer(0.3, stopping.set).start()
    start = time.monotonic()
    with pytest.raises(Stopped):
        send_with_retries(
            c, c.chat_body(USER, None, []), RetryPolicy(5, 0.01, 60.0), lambda a: None, stopping
        )
    assert time.monotonic() - start < 5


def test_completion_endpoint_with_stop_sequences(serve: Any) -> None:
    srv = serve({"fn add(": "    a + b\n}\n\nfn main() {}\n"})
    c = client(srv.url)
    reply, _ = send(c, c.completion_body("/// add\nfn add(a: i32, b: i32) -> i32 {\n", ["\n}"], 3))
    assert reply.text == "    a + b"
    assert srv.requests[0][0] == "/v1/completions" and srv.requests[0][4]["stop"] == ["\n}"]


def test_anthropic_messages_text_and_tool_use(serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    srv = serve(
        {
            "fn add(": {
                "content": "let me look",
                "tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}],
            }
        }
    )
    c = AnthropicClient(
        GenerationSettings(model="anthropic/claude-test", base_url=srv.anthropic_url)
    )
    body = c.chat_body([{"role": "system", "content": "be brief"}, *USER], 3, [])
    assert body["system"] == "be brief" and "seed" not in body
    reply, _ = send(c, body)
    assert reply.text == "let me look"
    assert [(t.name, t.arguments) for t in reply.tool_calls] == [("read_file", {"path": "a"})]
    assert srv.requests[0][0] == "/v1/messages"


def test_tool_turns_become_anthropic_blocks() -> None:
    msgs = anthropic_messages(
        [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "run", "arguments": '{"command": "ls"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.rs"},
        ]
    )
    assert msgs[1]["content"] == [
        {"type": "tool_use", "id": "c1", "name": "run", "input": {"command": "ls"}}
    ]
    assert msgs[2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "a.rs"}],
    }


def test_retry_after_forms() -> None:
    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({"retry-after-ms": "250"}) == 0.25
    assert retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None


def test_backoff_grows_is_jittered_and_capped() -> None:
    policy = RetryPolicy(max_retries=10, base_s=1.0, max_s=8.0)
    waits = [policy.delay(a, None) for a in range(1, 9) for _ in range(20)]
    assert all(0 <= w <= 8.0 for w in waits) and len(set(waits)) > 100
    assert 30.0 <= policy.delay(1, 30.0) <= 31.0 or policy.delay(1, 30.0) <= 9.0  # capped at max_s
    assert policy.delay(1, 3.0) >= 3.0


def test_hosted_api_without_a_key_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="set OPENAI_API_KEY"):
        OpenAIClient(GenerationSettings(model="openai/gpt-4o-mini"))
