"""Model clients: ``openai/NAME`` through the ``openai`` SDK (OpenAI or any compatible
endpoint given by ``base_url``: vLLM, llama.cpp, Ollama, OpenRouter) and ``anthropic/NAME``
through the ``anthropic`` SDK. Both SDKs are optional extras, imported on first use.

A client turns a conversation into the request body it will send (what the store records)
and sends one body once: retries are ``retry.py``'s, so every HTTP attempt is an event.
Keys come from environment variables and never enter a body, an event or a message.

Messages use the OpenAI chat layout throughout (role, content, tool_calls,
tool_call_id); the Anthropic client translates."""

from __future__ import annotations

import abc
import email.utils
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vibes_eval.core.errors import UserError
from vibes_eval.generation.settings import GenerationSettings

Message = dict[str, Any]
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
FATAL_STATUSES = frozenset({401, 403, 404})  # the key, the model name or the URL is wrong


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    raw: str = ""  # the arguments as the model wrote them (may not be JSON)
    error: str = ""  # why ``arguments`` could not be read


@dataclass
class Reply:
    """A usable answer (text, tool calls or both)."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # when the server reports it
    id: str = ""

    def as_record(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments, "raw": c.raw}
                for c in self.tool_calls
            ],
            "finish_reason": self.finish_reason,
            "id": self.id,
        }

    @classmethod
    def from_record(cls, rec: Mapping[str, Any], in_tok: int, out_tok: int) -> Reply:
        calls = [
            ToolCall(
                c.get("id", ""), c.get("name", ""), dict(c.get("arguments") or {}), c.get("raw", "")
            )
            for c in rec.get("tool_calls") or []
        ]
        return cls(
            rec.get("text", ""),
            calls,
            rec.get("finish_reason", ""),
            in_tok,
            out_tok,
            None,
            rec.get("id", ""),
        )


class CallFailed(Exception):
    """One HTTP attempt gave no usable answer. ``kind``: transient (429, 5xx, timeout,
    connection: retried), malformed (a body that cannot be read: retried), answer (empty,
    refused, a request the server rejects: final), fatal (bad key, model or URL: the run
    stops)."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in ("transient", "malformed")


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """Seconds a server asks to wait: ``retry-after-ms``, or ``Retry-After`` as seconds
    or an HTTP date."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ModelClient(abc.ABC):
    provider: str

    def __init__(self, settings: GenerationSettings) -> None:
        self.settings = settings
        self.model = settings.model_name

    @abc.abstractmethod
    def chat_body(
        self, messages: Sequence[Message], seed: int | None, tools: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """The request body for a conversation (and tools, in OpenAI's function format)."""

    def completion_body(self, prompt: str, stop: Sequence[str], seed: int | None) -> dict[str, Any]:
        raise UserError(f"{self.provider} models have no completion endpoint: use chat style")

    @abc.abstractmethod
    def send(self, body: Mapping[str, Any]) -> Reply:
        """One HTTP request. Raises: CallFailed."""

    def close(self) -> None:  # noqa: B027 - clients without resources need nothing
        pass


def _api_key(settings: GenerationSettings) -> str:
    """Raises: UserError when no key is set for a hosted API."""
    env = settings.api_key_env or KEY_ENV[settings.provider]
    key = os.environ.get(env)
    if key:
        return key
    if settings.base_url:  # a local server usually wants no key; the SDK wants a string
        return "unused"
    raise UserError(f"set {env} to the API key for {settings.model} (or give --base-url)")


def _import(name: str) -> Any:
    try:
        return __import__(name)
    except ImportError:
        raise UserError(
            f"--model {name}/...: the {name} package is not installed "
            "(pip install 'vibes-eval[models]')"
        ) from None


def _sampling(settings: GenerationSettings) -> dict[str, Any]:
    s = settings.sampling
    out: dict[str, Any] = {}
    if s.temperature is not None:
        out["temperature"] = s.temperature
    if s.top_p is not None:
        out["top_p"] = s.top_p
    return out


class OpenAIClient(ModelClient):
    provider = "openai"

    def __init__(self, settings: GenerationSettings) -> None:
        super().__init__(settings)
        openai = _import("openai")
        self._sdk = openai
        self._client = openai.OpenAI(
            api_key=_api_key(settings),
            base_url=settings.base_url,
            max_retries=0,  # ours, so that every attempt is recorded
            timeout=settings.request_timeout_s,
        )

    def chat_body(
        self, messages: Sequence[Message], seed: int | None, tools: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "max_tokens": self.settings.sampling.max_tokens,
            **_sampling(self.settings),
        }
        if self.settings.sampling.stop:
            body["stop"] = list(self.settings.sampling.stop)
        if seed is not None:
            body["seed"] = seed
        if tools:
            body["tools"] = [dict(t) for t in tools]
        return body

    def completion_body(self, prompt: str, stop: Sequence[str], seed: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": self.settings.sampling.max_tokens,
            **_sampling(self.settings),
        }
        if stop:
            body["stop"] = list(stop)[:4]  # OpenAI accepts at most four
        if seed is not None:
            body["seed"] = seed
        return body

    def send(self, body: Mapping[str, Any]) -> Reply:
        sdk = self._sdk
        try:
            if "prompt" in body:
                resp = self._client.completions.create(**body)
            else:
                resp = self._client.chat.completions.create(**body)
        except sdk.APIStatusError as exc:
            raise _status_failure(exc.status_code, exc.message, exc.response.headers) from None
        except (sdk.APITimeoutError, sdk.APIConnectionError) as exc:
            raise CallFailed("transient", f"{type(exc).__name__}: {exc}") from None
        except (sdk.APIResponseValidationError, ValueError, TypeError, AttributeError) as exc:
            raise CallFailed("malformed", f"unreadable response: {exc}") from None
        return _openai_reply(resp, completion="prompt" in body)

    def close(self) -> None:
        self._client.close()


def _status_failure(status: int, message: str, headers: Mapping[str, str] | None) -> CallFailed:
    text = f"HTTP {status}: {str(message).splitlines()[0][:300] if message else ''}".rstrip(": ")
    if status in RETRY_STATUSES or status >= 500:
        return CallFailed("transient", text, status=status, retry_after=retry_after_s(headers))
    if status in FATAL_STATUSES:
        return CallFailed("fatal", text, status=status)
    return CallFailed("answer", text, status=status)


def _usage(usage: Any, a: str, b: str) -> tuple[int, int, float | None]:
    if usage is None:
        return 0, 0, None
    extra = getattr(usage, "model_extra", None) or {}
    cost = extra.get("cost")
    return (
        int(getattr(usage, a, 0) or 0),
        int(getattr(usage, b, 0) or 0),
        float(cost) if isinstance(cost, int | float) else None,
    )


def _openai_reply(resp: Any, *, completion: bool) -> Reply:
    """Raises: CallFailed (malformed: no choices; answer: refused or empty)."""
    choices = getattr(resp, "choices", None)
    if not choices:
        raise CallFailed("malformed", "response without choices")
    choice = choices[0]
    in_tok, out_tok, cost = _usage(
        getattr(resp, "usage", None), "prompt_tokens", "completion_tokens"
    )
    finish = getattr(choice, "finish_reason", None) or ""
    if completion:
        text = getattr(choice, "text", None)
        if not isinstance(text, str):
            raise CallFailed("malformed", "completion choice without text")
        calls: list[ToolCall] = []
    else:
        msg = getattr(choice, "message", None)
        if msg is None:
            raise CallFailed("malformed", "chat choice without a message")
        refusal = getattr(msg, "refusal", None)
        if refusal:
            raise CallFailed("answer", f"refused: {str(refusal)[:300]}")
        text = msg.content or ""
        calls = [
            _tool_call(tc.id, tc.function.name, tc.function.arguments)
            for tc in getattr(msg, "tool_calls", None) or []
        ]
    if finish == "content_filter":
        raise CallFailed("answer", "refused: finish_reason content_filter")
    if not text.strip() and not calls:
        raise CallFailed("answer", f"empty response (finish_reason {finish or 'none'})")
    return Reply(text, calls, finish, in_tok, out_tok, cost, getattr(resp, "id", "") or "")


def _tool_call(call_id: str, name: str, raw: Any) -> ToolCall:
    if isinstance(raw, dict):
        return ToolCall(call_id or "", name or "", raw, json.dumps(raw))
    try:
        args = json.loads(raw or "{}")
    except (TypeError, ValueError) as exc:
        return ToolCall(call_id or "", name or "", {}, str(raw), f"arguments are not JSON: {exc}")
    if not isinstance(args, dict):
        return ToolCall(call_id or "", name or "", {}, str(raw), "arguments are not a JSON object")
    return ToolCall(call_id or "", name or "", args, str(raw))


class AnthropicClient(ModelClient):
    provider = "anthropic"

    def __init__(self, settings: GenerationSettings) -> None:
        super().__init__(settings)
        anthropic = _import("anthropic")
        self._sdk = anthropic
        self._client = anthropic.Anthropic(
            api_key=_api_key(settings),
            base_url=settings.base_url,
            max_retries=0,
            timeout=settings.request_timeout_s,
        )

    def chat_body(
        self, messages: Sequence[Message], seed: int | None, tools: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        # Anthropic takes no seed: the same request may give another answer.
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.settings.sampling.max_tokens,
            "messages": anthropic_messages([m for m in messages if m["role"] != "system"]),
            **_sampling(self.settings),
        }
        if system:
            body["system"] = system
        if self.settings.sampling.stop:
            body["stop_sequences"] = list(self.settings.sampling.stop)
        if tools:
            body["tools"] = [
                {
                    "name": t["function"]["name"],
                    "description": t["function"].get("description", ""),
                    "input_schema": t["function"].get("parameters", {"type": "object"}),
                }
                for t in tools
            ]
        return body

    def send(self, body: Mapping[str, Any]) -> Reply:
        sdk = self._sdk
        try:
            resp = self._client.messages.create(**body)
        except sdk.APIStatusError as exc:
            raise _status_failure(exc.status_code, exc.message, exc.response.headers) from None
        except (sdk.APITimeoutError, sdk.APIConnectionError) as exc:
            raise CallFailed("transient", f"{type(exc).__name__}: {exc}") from None
        except (sdk.APIResponseValidationError, ValueError, TypeError, AttributeError) as exc:
            raise CallFailed("malformed", f"unreadable response: {exc}") from None
        return _anthropic_reply(resp)

    def close(self) -> None:
        self._client.close()


def anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """OpenAI-layout messages as Anthropic's: tool calls become tool_use blocks, tool
    results tool_result blocks of one user turn."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": m.get("tool_call_id", ""),
                "content": m.get("content", ""),
            }
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m["role"] == "assistant" and m.get("tool_calls"):
            blocks: list[dict[str, Any]] = []
            if m.get("content"):
                blocks.append({"type": "text", "text": m["content"]})
            for call in m["tool_calls"]:
                args = call["function"].get("arguments") or "{}"
                try:
                    parsed = json.loads(args) if isinstance(args, str) else args
                except ValueError:
                    parsed = {}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": call["function"]["name"],
                        "input": parsed,
                    }
                )
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": m["role"], "content": m.get("content", "")})
    return out


def _anthropic_reply(resp: Any) -> Reply:
    content = getattr(resp, "content", None)
    if content is None:
        raise CallFailed("malformed", "response without content")
    stop = getattr(resp, "stop_reason", None) or ""
    if stop == "refusal":
        raise CallFailed("answer", "refused: stop_reason refusal")
    texts, calls = [], []
    for block in content:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(getattr(block, "text", "") or "")
        elif kind == "tool_use":
            calls.append(_tool_call(block.id, block.name, block.input))
    text = "".join(texts)
    if not text.strip() and not calls:
        raise CallFailed("answer", f"empty response (stop_reason {stop or 'none'})")
    in_tok, out_tok, cost = _usage(getattr(resp, "usage", None), "input_tokens", "output_tokens")
    return Reply(text, calls, stop, in_tok, out_tok, cost, getattr(resp, "id", "") or "")


def make_client(settings: GenerationSettings) -> ModelClient:
    """Raises: UserError (SDK missing, no key)."""
    return (AnthropicClient if settings.provider == "anthropic" else OpenAIClient)(settings)


def cost_of(settings: GenerationSettings, reply: Reply) -> float:
    if reply.cost_usd is not None:
        return reply.cost_usd
    p = settings.price
    return (reply.input_tokens * p.input + reply.output_tokens * p.output) / 1_000_000
