"""Prompts: a benchmark gives a task's ``PromptContext`` (variables, a language, stop
sequences, a work dir for agents); Jinja2 templates turn it into messages. Every template
can be replaced by the user (``--prompt-template``, or ``prompt:`` in an experiment);
the template text, not its file name, is part of a run's identity.

Built-in template families: ``function`` (complete a function: HumanEval), ``solution``
(write a file that solves a described task: kernels, or any benchmark whose context
gives a ``description``). A benchmark may bring its own defaults in
``PromptContext.templates``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vibes_eval.core.errors import UserError
from vibes_eval.core.prompting import (  # noqa: F401 - re-exported for templates' users
    PromptContext,
    Workspace,
    cap,
    details_text,
)
from vibes_eval.generation.settings import PromptSettings

LANGUAGE_NAMES = {
    "rust": "Rust",
    "cuda": "CUDA C++",
    "cpp": "C++",
    "python": "Python",
    "c": "C",
    "diff": "unified diff",
    "go": "Go",
    "js": "JavaScript",
    "java": "Java",
}


_SYSTEM = "You are an expert {{ language_name }} programmer."

_FEEDBACK = """\
Your solution did not pass: {{ reason }}{% if reason_text %} ({{ reason_text }}){% endif %}.
{% if detail %}{{ detail }}
{% endif %}{% if output %}
```text
{{ output }}
```
{% endif %}
Fix it and reply with the complete corrected {{ answer_noun }} in one ```{{ language }} code block.
"""

_AGENT_NOTE = """\
You work in a sandboxed directory through tools; the solution lives in `{{ solution_file }}`.
{% if workspace_notes %}{{ workspace_notes }}
{% endif %}You have at most {{ tool_budget }} tool calls. Check your work with run_tests, and call \
submit when `{{ solution_file }}` holds your final solution."""

_PATCH_AGENT = """\
You work through tools in a sandbox where the repository is checked out at `{{ repo_dir }}` \
(file tools take paths relative to it; `run` starts there). Edit its files to fix the issue: \
your changes, as `git diff` shows them, are your answer. Do not edit the tests.
{% if workspace_notes %}{{ workspace_notes }}
{% endif %}You have at most {{ tool_budget }} tool calls; call submit when you are done."""

BUILTIN: dict[str, dict[str, str]] = {
    "function": {
        "system": _SYSTEM,
        "user": """\
Complete the following {{ language_name }} function. Reply with the whole function, \
signature included, in one ```{{ language }} code block. Do not write a main function or tests.

```{{ language }}
{{ prompt }}
```
""",
        "completion": "{{ prompt }}",
        "feedback": _FEEDBACK,
        "agent": _AGENT_NOTE,
    },
    "solution": {
        "system": _SYSTEM,
        "user": """\
{{ description }}

Reply with the complete {{ answer_noun }} in one ```{{ language }} code block.
""",
        "completion": "{{ description }}\n",
        "feedback": _FEEDBACK,
        "agent": _AGENT_NOTE,
    },
    "patch": {
        "system": "You are an expert software engineer fixing issues in real repositories.",
        "user": """\
Fix this issue of the repository {{ repo }} (at commit {{ base_commit }}):

{{ problem_statement }}
{% if hints %}
Hints:
{{ hints }}
{% endif %}
Reply with a unified diff of the fix (as `git diff` prints it, paths relative to the \
repository root) in one ```diff code block.
""",
        "completion": "{{ problem_statement }}\n",
        "feedback": _FEEDBACK,
        "agent": _PATCH_AGENT,
    },
}
ANSWER_NOUN = {"function": "function", "solution": "solution", "patch": "patch"}


def _environment() -> Any:
    try:
        from jinja2 import StrictUndefined
        from jinja2.sandbox import SandboxedEnvironment
    except ImportError:
        raise UserError("prompt templates need Jinja2 (pip install 'vibes-eval[models]')") from None
    return SandboxedEnvironment(
        undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False
    )


class Templates:
    """The templates one run uses: the user's, else the benchmark's, else the built-in
    family's. Compiled once; rendering is thread-safe."""

    def __init__(self, prompt: PromptSettings) -> None:
        self.settings = prompt
        self._env = _environment()
        self._compiled: dict[str, Any] = {}

    def source(self, name: str, ctx: PromptContext) -> str:
        mine = getattr(self.settings, name, None)
        if mine is not None:
            return mine
        if name in ctx.templates:
            return ctx.templates[name]
        family = BUILTIN.get(ctx.family, BUILTIN["solution"])
        return family[name]

    def render(self, name: str, ctx: PromptContext, **extra: Any) -> str:
        """Raises: UserError naming the template and what is wrong with it."""
        text = self.source(name, ctx)
        try:
            template = self._compiled.get(text)
            if template is None:
                template = self._compiled[text] = self._env.from_string(text)
            return template.render(**variables(ctx), **extra)
        except Exception as exc:  # jinja2's errors share no base we can import lazily
            raise UserError(f"prompt template '{name}': {type(exc).__name__}: {exc}") from None


def first_messages(
    templates: Templates, ctx: PromptContext, *, agent: bool = False, **extra: Any
) -> list[dict[str, Any]]:
    """The conversation's opening: the system message (unless empty) and the first user
    message (with the agent's note about its tools and budget, for tool-augmented runs)."""
    system = templates.render("system", ctx, **extra).strip()
    user = templates.render("user", ctx, **extra)
    if agent:
        user = user.rstrip() + "\n\n" + templates.render("agent", ctx, **extra)
    opening = [{"role": "system", "content": system}] if system else []
    return [*opening, {"role": "user", "content": user}]


def variables(ctx: PromptContext) -> dict[str, Any]:
    language = ctx.language
    out: dict[str, Any] = {
        "task_id": ctx.task_id,
        "language": language,
        "language_name": LANGUAGE_NAMES.get(language, language or "code"),
        "answer_noun": ANSWER_NOUN.get(ctx.family, "solution"),
    }
    if ctx.workspace is not None:
        out["solution_file"] = ctx.workspace.solution
        out["workspace_notes"] = ctx.workspace.notes
    out.update(ctx.variables)
    return out


def read_template_file(path: Path) -> dict[str, Any]:
    """``--prompt-template FILE``: a YAML/TOML/JSON table of prompt settings (style,
    system, user, completion, feedback), or any other file as the user template.

    Raises: UserError (unreadable file, not a table).
    """
    from vibes_eval.core.settings import read_config_file

    if path.suffix in (".yaml", ".yml", ".toml", ".json"):
        return read_config_file(path).values
    try:
        return {"user": path.read_text(encoding="utf-8")}
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", path=path) from None
