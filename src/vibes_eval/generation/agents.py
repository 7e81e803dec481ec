"""The three settings, each driving one sample's ``Job``.

- one-shot: one request, one evaluation. The job hands its attempt to the evaluation
  stage and moves on to the next sample; the verdict is recorded when it arrives.
- self-refine:N: after a failed attempt the model sees what went wrong (the benchmark's
  reason, detail, compiler errors, failing tests, validation output) and answers again,
  up to N rounds; the sample's verdict is its last attempt's. Every round's verdict is
  recorded, so reports show correctness (and speed, where measured) per round.
- tool-augmented:N: the model works in a sandbox session through tools (``tools.py``),
  at most N tool calls, then its solution file is evaluated.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from vibes_eval.core.errors import UserError
from vibes_eval.core.types import SampleResult
from vibes_eval.generation.job import Job
from vibes_eval.generation.models import CallFailed, Message
from vibes_eval.generation.retry import Stopped
from vibes_eval.generation.settings import GenerationSettings

# Options each setting reads from ``GenerationSettings.options`` (free key/values in an
# experiment file); anything else is refused so that a typo is not silently ignored.
OPTIONS: dict[str, dict[str, Any]] = {
    "one-shot": {},
    "self-refine": {"feedback_chars": 4000},
    "tool-augmented": {
        "feedback_chars": 4000,
        "output_chars": 4000,
        "command_timeout_s": 60.0,
        "tools": None,
    },
}


def check_options(settings: GenerationSettings) -> None:
    """Raises: UserError naming an option the setting does not read."""
    known = OPTIONS[settings.agent.kind]
    for name in settings.options:
        if name not in known:
            raise UserError(
                f"option {name!r} means nothing to {settings.agent.kind} "
                f"(its options: {', '.join(sorted(known)) or 'none'})",
                field=f"options.{name}",
            )


def one_shot(job: Job) -> None:
    """Raises: Stopped, BudgetExceeded, FatalModelError."""
    if job.hist.done:
        return
    try:
        reply = job.complete() if job.style == "completion" else job.chat(job.first_messages())
    except CallFailed as failure:
        job.failed_call(failure, 1)
        return
    completion = job.completion(reply.text)
    job.submit(completion).add_done_callback(_finish_when_known(job, completion))


def _finish_when_known(job: Job, completion: str) -> Callable[[Future[SampleResult]], None]:
    def done(fut: Future[SampleResult]) -> None:
        if fut.exception() is None:  # Stopped: nothing to record
            job.finish(fut.result(), completion, 1)

    return done


def self_refine(job: Job) -> None:
    """Raises: Stopped, BudgetExceeded, FatalModelError."""
    if job.hist.done:
        return
    rounds = job.run.settings.agent.budget
    messages: list[Message] = job.first_messages()
    for r in range(1, rounds + 1):
        try:
            reply = job.chat(messages)
        except CallFailed as failure:
            job.failed_call(failure, r)
            return
        completion = job.completion(reply.text)
        result = job.evaluate(completion, r)
        if result.passed or r == rounds or result.infra:
            job.finish(result, completion, r)
            return
        job.record_attempt(r, completion, result)
        messages += [
            {"role": "assistant", "content": reply.text},
            {"role": "user", "content": job.feedback(result, r, rounds)},
        ]


def tool_augmented(job: Job) -> None:
    """Raises: Stopped, BudgetExceeded, FatalModelError."""
    from vibes_eval.generation.tools import run_agent

    if job.hist.done:
        return
    run_agent(job)


AGENTS: dict[str, Callable[[Job], None]] = {
    "one-shot": one_shot,
    "self-refine": self_refine,
    "tool-augmented": tool_augmented,
}

__all__ = ["AGENTS", "OPTIONS", "Stopped", "check_options"]
