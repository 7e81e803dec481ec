"""`--dry-run`: what a run would send, without sending it (no key, runner or store is
needed): the first prompt and the number of requests."""

from __future__ import annotations

from typing import Any

from vibes_eval.generation.adapters import prompting_of
from vibes_eval.generation.pipeline import prepare
from vibes_eval.generation.prompts import Templates, first_messages
from vibes_eval.generation.settings import GenerationSettings


def request_count(samples: int, settings: GenerationSettings) -> str:
    agent = settings.agent
    if agent.kind == "one-shot":
        return f"{samples} (one per sample)"
    if agent.kind == "self-refine":
        return (
            f"{samples} to {samples * agent.budget} (one per round, up to {agent.budget}; "
            "a sample stops once it passes)"
        )
    return (
        f"{samples} to {samples * (agent.budget + 1)} (one per model turn; up to "
        f"{agent.budget} tool calls per sample)"
    )


def describe(benchmark: str, config: Any, settings: GenerationSettings) -> str:
    """Raises: UserError (the inputs, the templates)."""
    prepared = prepare(benchmark, config, settings)
    first = prepared.samples[0]
    task = prepared.tasks[first.task_id]
    prompting = prompting_of(prepared.benchmark)
    ctx = prompting.context(task)
    if settings.agent.kind == "tool-augmented":
        ctx = ctx.model_copy(update={"workspace": prompting.workspace(task, ctx)})
    templates = Templates(settings.prompt)
    n_tasks = len({s.task_id for s in prepared.samples})
    lines = [
        f"model: {settings.model}" + (f" at {settings.base_url}" if settings.base_url else ""),
        f"setting: {settings.setting}; {settings.sampling.n} samples per task, {n_tasks} tasks",
        f"requests: {request_count(len(prepared.samples), settings)}",
        f"first prompt ({first.task_id}):",
    ]
    if settings.prompt.style == "completion":
        stop = settings.sampling.stop or ctx.stop
        lines += [
            "--- prompt ---",
            templates.render("completion", ctx).rstrip("\n"),
            f"--- stop: {stop!r}",
        ]
    else:
        agent = settings.agent.kind == "tool-augmented"
        for msg in first_messages(templates, ctx, agent=agent, tool_budget=settings.agent.budget):
            lines += [f"--- {msg['role']} ---", str(msg["content"]).rstrip("\n")]
        if agent:
            from vibes_eval.generation.tools import SPECS

            lines.append(f"--- tools: {', '.join(SPECS)}")
    return "\n".join(lines)
