"""Generation tests talk to a real HTTP server on 127.0.0.1 (``scripted_server``) through
the real SDKs; they need the `models` extra (openai, anthropic, Jinja2) and skip
without it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.generation.scripted_server import Script, ScriptedServer
from vibes_eval.core import registry


@pytest.fixture
def serve() -> Iterator[Any]:
    """serve(answers, base_seed=0) -> a started ScriptedServer, stopped after the test."""
    servers: list[ScriptedServer] = []

    def start(answers: dict[str, Any], base_seed: int = 0) -> ScriptedServer:
        srv = ScriptedServer(Script(answers, base_seed=base_seed)).__enter__()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.__exit__()


@pytest.fixture
def fake_gen(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(registry.BENCHMARKS, "fake-gen", "tests.generation.fakebench:PromptedFake")
    return "fake-gen"


def fence(body: str, lang: str = "rust") -> str:
    return f"```{lang}\n{body}\n```"
