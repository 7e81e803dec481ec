"""What a model-in-the-loop run is asked to do: which model, how to sample it, which
prompt, which setting (one-shot, self-refine, tool-augmented), and the limits on what it
may spend. Validated like a benchmark's settings (``core.settings``): one line per mistake.

The part of these settings that defines the samples (model, sampling, prompt, setting,
agent options, tasks) is the run's ``generation_identity``: a resume with other values is
refused. Where the model is served, how many requests run at once, retries, prices and
budgets change what a run costs, not what it means, and may differ on resume."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vibes_eval.core.errors import UserError

PROVIDERS = ("openai", "anthropic")
SETTINGS = ("one-shot", "self-refine", "tool-augmented")
DEFAULT_ROUNDS = {"one-shot": 1, "self-refine": 10, "tool-augmented": 20}
_SETTING = re.compile(r"(one-shot|self-refine|tool-augmented)(?::(\d+))?")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Sampling(_Frozen):
    """Sent with every request. ``None`` leaves a value to the server's default."""

    n: int = Field(1, ge=1, le=1000)  # samples per task, one request each
    temperature: float | None = Field(None, ge=0)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int = Field(1024, ge=1)
    stop: list[str] | None = None  # None: the prompt style's default (completion style)
    seed: int | None = None  # sample i of every task is sent seed + i


class PromptSettings(_Frozen):
    """Jinja2 templates; ``None``: the benchmark's own. ``style`` chat sends messages and
    takes the code out of the answer; completion (base models) sends the code prefix and
    continues it up to the stop sequences."""

    style: Literal["chat", "completion"] = "chat"
    system: str | None = None
    user: str | None = None  # chat: the first user message
    completion: str | None = None  # completion style: the prompt text
    feedback: str | None = None  # self-refine: the message after a failed attempt


class Price(_Frozen):
    """US dollars per million tokens, for the cost of a run (a server that reports a
    request's cost, such as OpenRouter's ``usage.cost``, is believed instead)."""

    input: float = Field(0.0, ge=0)
    output: float = Field(0.0, ge=0)


@dataclass(frozen=True)
class Setting:
    kind: Literal["one-shot", "self-refine", "tool-augmented"]
    budget: int  # rounds (self-refine) or tool calls (tool-augmented); 1 for one-shot

    def __str__(self) -> str:
        return self.kind if self.kind == "one-shot" else f"{self.kind}:{self.budget}"


def parse_setting(text: str) -> Setting:
    """'one-shot', 'self-refine:3', 'tool-augmented:20' (a missing N: 10 rounds, 20 calls).

    Raises: ValueError naming the accepted forms.
    """
    m = _SETTING.fullmatch(text.strip())
    if not m:
        raise ValueError(
            f"unknown setting {text!r}: use one-shot, self-refine:N or tool-augmented:N"
        )
    kind = m.group(1)
    budget = int(m.group(2)) if m.group(2) else DEFAULT_ROUNDS[kind]
    if kind == "one-shot" and m.group(2) not in (None, "1"):
        raise ValueError("one-shot takes no budget (it is one request per sample)")
    if budget < 1:
        raise ValueError(f"{kind}:{budget}: the budget must be at least 1")
    return Setting(kind, budget)  # type: ignore[arg-type]


class GenerationSettings(_Frozen):
    model: str  # provider/name: openai/gpt-4o-mini, anthropic/claude-..., openai/qwen
    base_url: str | None = None  # any OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama)
    api_key_env: str | None = None  # default OPENAI_API_KEY / ANTHROPIC_API_KEY
    sampling: Sampling = Sampling()
    prompt: PromptSettings = PromptSettings()
    setting: str = "one-shot"
    options: dict[str, Any] = Field(default_factory=dict)  # the agent's options
    tasks: list[str] | None = None  # these task ids only, in this order
    limit: int | None = Field(None, ge=1)  # the first N tasks
    # How, not what: not part of the identity.
    concurrency: int = Field(4, ge=1, le=256)
    request_timeout_s: float = Field(300.0, gt=0)
    max_retries: int = Field(5, ge=0, le=100)
    retry_base_s: float = Field(1.0, ge=0)
    retry_max_s: float = Field(60.0, ge=0)
    price: Price = Price()
    max_cost: float | None = Field(None, ge=0)  # US dollars over the whole run
    max_tokens_total: int | None = Field(None, ge=0)  # input + output over the whole run

    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset(
        {
            "base_url",
            "api_key_env",
            "concurrency",
            "request_timeout_s",
            "max_retries",
            "retry_base_s",
            "retry_max_s",
            "price",
            "max_cost",
            "max_tokens_total",
        }
    )

    @field_validator("model")
    @classmethod
    def _provider(cls, value: str) -> str:
        provider, sep, name = value.partition("/")
        if not sep or not name or provider not in PROVIDERS:
            raise ValueError(
                f"expected provider/name with provider {' or '.join(PROVIDERS)}, "
                f"e.g. openai/gpt-4o-mini (got {value!r})"
            )
        return value

    @field_validator("setting")
    @classmethod
    def _setting(cls, value: str) -> str:
        return str(parse_setting(value))

    @property
    def provider(self) -> str:
        return self.model.partition("/")[0]

    @property
    def model_name(self) -> str:
        return self.model.partition("/")[2]

    @property
    def agent(self) -> Setting:
        return parse_setting(self.setting)

    def identity(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude=set(self.NOT_IDENTITY))

    def check(self) -> None:
        """Combinations no single field can refuse.

        Raises: UserError.
        """
        if self.prompt.style == "completion":
            if self.provider == "anthropic":
                raise UserError("--prompt-style completion needs an openai/ model")
            if self.agent.kind != "one-shot":
                raise UserError(
                    f"--setting {self.setting} needs the chat prompt style (a base model in "
                    "completion style cannot read feedback)"
                )
