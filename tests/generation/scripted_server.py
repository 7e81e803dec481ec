"""A real HTTP server speaking the OpenAI API (chat and completions) and Anthropic's
messages API, answering from a script, on 127.0.0.1. It counts every request so tests
can prove what was (not) sent again.

A script maps a marker (text found in the prompt, e.g. "fn add(") to what to answer:

- a string: the answer's text, for every sample and round;
- a list: per round (round r = the number of assistant turns in the request + 1; the
  last entry repeats);
- a dict {index: ...}: per sample, the index being the request's seed minus ``base_seed``;
- an action dict instead of a string: {"status": 429, "retry_after": "1"},
  {"status": 500}, {"malformed": True}, {"sleep": 2.0, "content": "..."},
  {"tool_calls": [{"name": ..., "arguments": {...}}]}, {"refusal": "..."},
  {"content": ""} (empty), and {"sequence": [action, ...]}: one per HTTP attempt of that
  sample and round (the last repeats).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Script:
    def __init__(self, answers: Mapping[str, Any], *, base_seed: int = 0) -> None:
        self.answers = dict(answers)
        self.base_seed = base_seed
        self.attempts: Counter[tuple[str, int, int]] = Counter()
        self.lock = threading.Lock()

    def action(self, text: str, index: int, round_: int) -> tuple[str, Any]:
        marker = next((m for m in self.answers if m in text), None)
        if marker is None:
            return "", {"content": "I do not know this task."}
        spec = self.answers[marker]
        if isinstance(spec, dict) and spec and all(isinstance(k, int) for k in spec):
            spec = spec.get(index, spec.get(-1, "no answer scripted"))
        if isinstance(spec, list):
            spec = spec[min(round_, len(spec)) - 1]
        if isinstance(spec, dict) and "sequence" in spec:
            with self.lock:
                key = (marker, index, round_)
                self.attempts[key] += 1
                n = self.attempts[key]
            seq = spec["sequence"]
            spec = seq[min(n, len(seq)) - 1]
        return marker, spec if isinstance(spec, dict) else {"content": spec}


class ScriptedServer:
    """``with ScriptedServer(script) as srv: srv.url``; ``srv.requests`` lists
    (path, marker, index, round, body) of every request."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[tuple[str, str, int, int, dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def count(self, marker: str | None = None, **where: int) -> int:
        with self.lock:
            return sum(
                1
                for _, m, i, r, _ in self.requests
                if (marker is None or m == marker)
                and where.get("index", i) == i
                and where.get("round", r) == r
            )

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _prompt_text(body: dict[str, Any]) -> tuple[str, int]:
    """The text markers are looked for in, and the round."""
    if "prompt" in body:
        return str(body["prompt"]), 1
    msgs = body.get("messages", [])
    users = [m for m in msgs if m.get("role") == "user"]
    first = users[0]["content"] if users else ""
    if isinstance(first, list):
        first = " ".join(b.get("text", "") for b in first if isinstance(b, dict))
    assistants = sum(1 for m in msgs if m.get("role") == "assistant")
    return str(first), assistants + 1


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            text, round_ = _prompt_text(body)
            seed = body.get("seed")
            index = (seed - server.script.base_seed) if isinstance(seed, int) else 0
            marker, action = server.script.action(text, index, round_)
            with server.lock:
                server.requests.append((self.path, marker, index, round_, body))
            if action.get("sleep"):
                time.sleep(float(action["sleep"]))
            if "status" in action:
                headers = {"retry-after": action["retry_after"]} if "retry_after" in action else {}
                self._json(
                    action["status"],
                    {"error": {"message": f"scripted {action['status']}", "type": "scripted"}},
                    headers,
                )
                return
            if action.get("malformed"):
                self._raw(200, b'{"choices": [{"message": {"content": "trunc')
                return
            if self.path.endswith("/messages"):
                self._json(200, _anthropic(body, action))
            elif self.path.endswith("/completions") and "prompt" in body:
                self._json(200, _completion(body, action))
            else:
                self._json(200, _chat(body, action))

        def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            self._raw(status, json.dumps(obj).encode(), headers)

        def _raw(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _usage(body: dict[str, Any], out: str) -> dict[str, int]:
    p = _tokens(json.dumps(body.get("messages", body.get("prompt", ""))))
    c = _tokens(out)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _chat(body: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
    content = action.get("content", "")
    message: dict[str, Any] = {"role": "assistant", "content": content}
    finish = action.get("finish_reason", "stop")
    if action.get("refusal"):
        message = {"role": "assistant", "content": None, "refusal": action["refusal"]}
    if action.get("tool_calls"):
        message["tool_calls"] = [
            {
                "id": c.get("id", f"call_{n}"),
                "type": "function",
                "function": {
                    "name": c["name"],
                    "arguments": c["arguments"]
                    if isinstance(c["arguments"], str)
                    else json.dumps(c["arguments"]),
                },
            }
            for n, c in enumerate(action["tool_calls"])
        ]
        finish = "tool_calls"
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _usage(body, content or ""),
    }


def _completion(body: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
    text = action.get("content", "")
    for stop in body.get("stop") or []:
        if stop in text:
            text = text[: text.index(stop)]
    return {
        "id": "cmpl-scripted",
        "object": "text_completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
        "usage": _usage(body, text),
    }


def _anthropic(body: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if action.get("content"):
        blocks.append({"type": "text", "text": action["content"]})
    for n, c in enumerate(action.get("tool_calls") or []):
        blocks.append(
            {
                "type": "tool_use",
                "id": c.get("id", f"toolu_{n}"),
                "name": c["name"],
                "input": c["arguments"],
            }
        )
    usage = _usage(body, action.get("content", ""))
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": blocks,
        "stop_reason": "tool_use" if action.get("tool_calls") else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "output_tokens": usage["completion_tokens"],
        },
    }
