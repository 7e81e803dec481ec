"""One sample's generation: its model calls (replayed from the store when a resumed run
already paid for them), its attempts' evaluations, its final verdict. The agents in
``agents.py`` drive a ``Job``; the ``RunContext`` holds what every job of a run shares."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from vibes_eval.core.benchmark import Benchmark
from vibes_eval.core.errors import UserError
from vibes_eval.core.prompting import Prompting
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Reason, Sample, SampleResult, Task
from vibes_eval.generation.history import RunHistory
from vibes_eval.generation.models import CallFailed, Message, ModelClient, Reply, cost_of
from vibes_eval.generation.prompts import PromptContext, Templates, first_messages
from vibes_eval.generation.retry import Attempt, RetryPolicy, Stopped, send_with_retries
from vibes_eval.generation.settings import GenerationSettings
from vibes_eval.generation.stage import EvalStage, Sink
from vibes_eval.store.events import OUTPUT_CAP, AttemptEvaluated, ModelCalled

GENERATION_ERROR = "generation_error"
REASONS = {GENERATION_ERROR: "the model gave no usable answer (empty, refused, unreadable)"}


class BudgetExceeded(Exception):
    """--max-cost or --max-tokens-total is reached: no new request starts."""


class FatalModelError(UserError):
    """Every request would fail the same way (a bad key, model name or URL)."""


class Budget:
    """What the run may still spend, counted from its first request (a resumed run
    starts from what its events say was spent)."""

    def __init__(self, settings: GenerationSettings, cost: float = 0.0, tokens: int = 0) -> None:
        self.max_cost = settings.max_cost
        self.max_tokens = settings.max_tokens_total
        self.cost = cost
        self.tokens = tokens
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raises: BudgetExceeded (its message says which limit)."""
        with self._lock:
            if self.max_cost is not None and self.cost >= self.max_cost:
                raise BudgetExceeded(f"--max-cost {self.max_cost:g} reached (${self.cost:.4f})")
            if self.max_tokens is not None and self.tokens >= self.max_tokens:
                raise BudgetExceeded(
                    f"--max-tokens-total {self.max_tokens} reached ({self.tokens} tokens)"
                )

    def add(self, cost: float, tokens: int) -> None:
        with self._lock:
            self.cost += cost
            self.tokens += tokens


@dataclass
class RunContext:
    run_id: str
    benchmark: Benchmark[Any, Any]
    prompting: Prompting[Any]
    tasks: dict[str, Task]
    settings: GenerationSettings
    templates: Templates
    client: ModelClient
    policy: RetryPolicy
    stage: EvalStage
    sink: Sink
    history: RunHistory
    budget: Budget
    stopping: threading.Event
    runner: TaskRunner
    finalize: Callable[[Sample, SampleResult, dict[str, Any]], None]

    def option(self, name: str, default: Any) -> Any:
        return self.settings.options.get(name, default)


def body_sha256(body: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


class Job:
    def __init__(self, run: RunContext, task: Task, placeholder: Sample) -> None:
        self.run = run
        self.task = task
        self.placeholder = placeholder
        self.key = placeholder.key
        self.hist = run.history.sample(self.key)
        self.ctx: PromptContext = run.prompting.context(task)
        self.step = 0  # the next model call's step

    # -- prompts --------------------------------------------------------------------

    @property
    def style(self) -> str:
        return self.run.settings.prompt.style

    def seed(self) -> int | None:
        base = self.run.settings.sampling.seed
        return None if base is None else base + self.placeholder.index

    def render(self, name: str, **extra: Any) -> str:
        return self.run.templates.render(name, self.ctx, **extra)

    def first_messages(self, *, agent: bool = False, **extra: Any) -> list[Message]:
        return first_messages(self.run.templates, self.ctx, agent=agent, **extra)

    def feedback(self, result: SampleResult, round_: int, rounds: int) -> str:
        limit = int(self.run.option("feedback_chars", 4000))
        values = self.run.prompting.feedback(result, limit)
        return self.render("feedback", **values, round=round_, rounds=rounds)

    def completion(self, text: str) -> str:
        return self.run.prompting.completion(self.task, self.ctx, text, self.style)

    # -- model calls ------------------------------------------------------------------

    def chat(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = ()) -> Reply:
        """Raises: CallFailed, BudgetExceeded, Stopped, FatalModelError."""
        return self._send(self.run.client.chat_body(messages, self.seed(), tools))

    def complete(self) -> Reply:
        prompt = self.render("completion")
        stop = self.run.settings.sampling.stop or self.ctx.stop
        return self._send(self.run.client.completion_body(prompt, stop, self.seed()))

    def _send(self, body: dict[str, Any]) -> Reply:
        step = self.step
        self.step += 1
        sha = body_sha256(body)
        recorded = self.hist.calls.get(step)
        if recorded is not None and recorded.request_sha256 == sha:
            return Reply.from_record(
                recorded.response, recorded.input_tokens, recorded.output_tokens
            )
        if self.run.stopping.is_set():
            raise Stopped()
        self.run.budget.check()

        def on_attempt(a: Attempt) -> None:
            self._record_call(step, a, body, sha)

        try:
            return send_with_retries(
                self.run.client, body, self.run.policy, on_attempt, self.run.stopping
            )
        except CallFailed as failure:
            if failure.kind == "fatal":
                raise FatalModelError(f"{self.run.settings.model}: {failure}") from None
            raise

    def _record_call(self, step: int, a: Attempt, body: dict[str, Any], sha: str) -> None:
        s = self.run.settings
        reply, failure = a.reply, a.failure
        cost = cost_of(s, reply) if reply is not None else 0.0
        event = ModelCalled(
            run_id=self.run.run_id,
            task_id=self.key[0],
            index=self.key[1],
            step=step,
            attempt=a.number,
            model=s.model,
            request=body if a.number == 1 else {},
            request_sha256=sha,
            ok=reply is not None,
            status=failure.status if failure else None,
            error=str(failure) if failure else "",
            retry=a.retry,
            retry_in_s=round(a.retry_in_s, 3),
            response=reply.as_record() if reply else {},
            input_tokens=reply.input_tokens if reply else 0,
            output_tokens=reply.output_tokens if reply else 0,
            latency_s=round(a.latency_s, 4),
            cost_usd=cost,
        )
        self.run.sink.append([event])  # durable before the answer is used: never paid twice
        if reply is not None:
            self.run.budget.add(cost, reply.input_tokens + reply.output_tokens)

    # -- evaluation -------------------------------------------------------------------

    def sample(self, completion: str) -> Sample:
        fields = self.run.prompting.record_fields(self.task, completion, self.run.settings.model)
        return self.placeholder.model_copy(update={"completion": completion, "record": fields})

    def submit(self, completion: str) -> Future[SampleResult]:
        return self.run.stage.submit(self.sample(completion))

    def evaluate(self, completion: str, round_: int) -> SampleResult:
        """The verdict on an attempt: recorded already (a resumed run), else evaluated.
        Raises: Stopped."""
        recorded = self.hist.attempts.get(round_)
        if recorded is not None and recorded.completion == completion:
            return recorded.result
        return self.wait(self.submit(completion))

    def wait(self, fut: Future[SampleResult]) -> SampleResult:
        while True:
            if self.run.stopping.is_set():
                raise Stopped()
            try:
                return fut.result(timeout=0.2)
            except FutureTimeout:
                continue

    def record_attempt(self, round_: int, completion: str, result: SampleResult) -> None:
        if self.hist.attempts.get(round_) is not None:
            return  # replayed
        capped = result.model_copy(
            update={"stdout": result.stdout[:OUTPUT_CAP], "stderr": result.stderr[:OUTPUT_CAP]}
        )
        self.run.sink.append(
            [
                AttemptEvaluated(
                    run_id=self.run.run_id,
                    round=round_,
                    step=max(0, self.step - 1),
                    problem_hash=self.task.fingerprint(),
                    completion=completion,
                    result=capped,
                )
            ]
        )

    # -- the end ----------------------------------------------------------------------

    def finish(self, result: SampleResult, completion: str, rounds: int) -> None:
        result = result.model_copy(update={"task_id": self.key[0], "index": self.key[1]})
        self.run.finalize(self.placeholder, result, self.record(completion, rounds))

    def fail(self, reason: str, message: str, rounds: int, completion: str = "") -> None:
        """A final verdict without an evaluation: generation_error (the model's answer
        was unusable) or infra_error (the API could not be reached; tried again on resume)."""
        result = SampleResult(
            task_id=self.key[0],
            index=self.key[1],
            passed=False,
            reason=reason,
            detail=message[:500],
            completion_hash="",
        )
        self.run.finalize(self.placeholder, result, self.record(completion, rounds))

    def failed_call(self, failure: CallFailed, rounds: int) -> None:
        if failure.kind == "transient":
            self.fail(Reason.INFRA, f"model API: {failure}", rounds)
        else:
            self.fail(GENERATION_ERROR, str(failure), rounds)

    def record(self, completion: str, rounds: int) -> dict[str, Any]:
        """The final verdict's record (what `vibes eval export` writes): the completion and
        what the sample's generation took."""
        calls = [self.hist.calls[s] for s in sorted(self.hist.calls)]
        requests = sum(1 for ev in self.hist.events if isinstance(ev, ModelCalled))
        fields = self.run.prompting.record_fields(self.task, completion, self.run.settings.model)
        return {
            **fields,
            "completion": completion,
            "model": self.run.settings.model,
            "setting": self.run.settings.setting,
            "rounds": rounds,
            "model_calls": len(calls),
            "requests": requests,
            "tool_calls": len(self.hist.tools),
            "input_tokens": sum(c.input_tokens for c in calls),
            "output_tokens": sum(c.output_tokens for c in calls),
            "cost_usd": round(sum(c.cost_usd for c in calls), 8),
            "latency_s": round(sum(c.latency_s for c in calls), 4),
            "trajectory": self.hist.conversation(),
        }
