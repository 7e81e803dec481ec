"""Prompts and settings: templates a user can override (and whose mistakes are one line),
HumanEval's two styles (a base model's continuation closed at its stop sequence; a chat
answer's fenced function), settings validated with the field named."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("jinja2")

from tests.conftest import EXAMPLES
from tests.generation.conftest import fence
from vibes_eval.benchmarks.humaneval.prompting import RustPrompting as HumanEvalAdapter
from vibes_eval.benchmarks.humaneval.tasks import load_problems
from vibes_eval.core.errors import UserError
from vibes_eval.core.prompting import cut_at_stop, first_fence
from vibes_eval.core.settings import Layer, build
from vibes_eval.generation.prompts import (
    PromptContext,
    Templates,
    first_messages,
    read_template_file,
)
from vibes_eval.generation.settings import GenerationSettings, PromptSettings, parse_setting

TASK = load_problems(EXAMPLES / "sanity" / "problems.jsonl")["Sanity/0"]


class _Bench:
    suite = "humaneval"
    name = "humaneval-rust"


def test_default_chat_prompt_and_a_users_template() -> None:
    ctx = HumanEvalAdapter(_Bench()).context(TASK)  # type: ignore[arg-type]
    msgs = first_messages(Templates(PromptSettings()), ctx)
    assert msgs[0] == {"role": "system", "content": "You are an expert Rust programmer."}
    assert "```rust\n/// Add two integers.\nfn add(a: i32, b: i32) -> i32 {\n" in msgs[1]["content"]
    mine = Templates(
        PromptSettings(system="", user="Write {{ entry_point }} in {{ language_name }}.")
    )
    assert first_messages(mine, ctx) == [{"role": "user", "content": "Write add in Rust."}]


def test_template_mistakes_are_one_line() -> None:
    ctx = PromptContext(task_id="T/1", variables={"description": "d"})
    with pytest.raises(
        UserError, match=r"prompt template 'user': UndefinedError: 'nope' is undefined"
    ):
        Templates(PromptSettings(user="{{ nope }}")).render("user", ctx)
    with pytest.raises(UserError, match="prompt template 'user': TemplateSyntaxError"):
        Templates(PromptSettings(user="{% if %}")).render("user", ctx)


def test_templates_are_sandboxed() -> None:
    ctx = PromptContext(task_id="T/1", variables={"description": "d"})
    evil = "{{ ''.__class__.__mro__[1].__subclasses__() }}"
    with pytest.raises(UserError, match=r"SecurityError|UndefinedError"):
        Templates(PromptSettings(user=evil)).render("user", ctx)


def test_humaneval_completion_style_closes_the_function() -> None:
    adapter = HumanEvalAdapter(_Bench())  # type: ignore[arg-type]
    ctx = adapter.context(TASK)
    assert ctx.stop == ["\n}"]
    # The server ignored the stop sequence: cut here, then close the function.
    text = "    a + b\n}\n\nfn main() {}\n"
    assert adapter.completion(TASK, ctx, text, "completion") == "    a + b\n}\n"
    assert adapter.completion(TASK, ctx, "    a + b", "completion") == "    a + b\n}\n"


def test_humaneval_chat_answers_are_extracted() -> None:
    adapter = HumanEvalAdapter(_Bench())  # type: ignore[arg-type]
    ctx = adapter.context(TASK)
    answer = "Sure:\n" + fence(
        "use std::cmp;\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\nfn main() {}"
    )
    assert adapter.completion(TASK, ctx, answer, "chat").strip().startswith("a + b\n}")
    assert "fn main" not in adapter.completion(TASK, ctx, answer, "chat")


def test_generic_extraction() -> None:
    assert first_fence("x\n```python\nno\n```\n```cuda\nyes\n```", "cuda") == "yes\n"
    assert first_fence("plain", "rust") == "plain"
    assert cut_at_stop("a\nSTOP b\nEND", ["END", "STOP"]) == ("a\n", True)


def test_template_files(tmp_path: Path) -> None:
    j2 = tmp_path / "t.j2"
    j2.write_text("Solve {{ task_id }}")
    assert read_template_file(j2) == {"user": "Solve {{ task_id }}"}
    yml = tmp_path / "t.yaml"
    yml.write_text("style: completion\ncompletion: '{{ prompt }}'\n")
    assert read_template_file(yml) == {"style": "completion", "completion": "{{ prompt }}"}


def test_settings_name_the_field() -> None:
    def make(**values: object) -> GenerationSettings:
        return build(GenerationSettings, [Layer("--gen", dict(values))], "generation")  # type: ignore[return-value]

    with pytest.raises(UserError, match=r"field 'sampling.temperature'"):
        make(model="openai/x", sampling={"temperature": -1})
    with pytest.raises(UserError, match=r"field 'model'.*provider/name"):
        make(model="gpt-4o")
    with pytest.raises(UserError, match=r"field 'setting'.*self-refine:N"):
        make(model="openai/x", setting="refine")
    s = make(model="openai/x", setting="self-refine", base_url="http://h/v1", concurrency=9)
    assert (
        s.agent.budget == 10
        and "base_url" not in s.identity()
        and "concurrency" not in s.identity()
    )
    assert str(parse_setting("tool-augmented:5")) == "tool-augmented:5"
