"""A generation run's events, per sample: the model calls already paid for, the attempts
already judged, the tool calls made, the final verdict. Loaded from the store when a run
resumes (so nothing finished is asked again) and kept up to date as events are written;
reports, `vibes eval show` and A/B experiments read the same structure."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vibes_eval.core import metrics
from vibes_eval.core.types import SampleResult
from vibes_eval.store.base import EventStore
from vibes_eval.store.events import (
    AttemptEvaluated,
    Event,
    ModelCalled,
    SampleEvaluated,
    ToolCalled,
)

Key = tuple[str, int]


@dataclass
class SampleHistory:
    key: Key
    calls: dict[int, ModelCalled] = field(default_factory=dict)  # usable answers, by step
    attempts: dict[int, AttemptEvaluated] = field(default_factory=dict)  # by round
    tools: list[ToolCalled] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)  # everything, in order (for `show`)
    final: SampleEvaluated | None = None

    @property
    def done(self) -> bool:
        """A final verdict that is not an infra error (those are tried again)."""
        return self.final is not None and not self.final.result.infra

    @property
    def final_round(self) -> int:
        if self.final is None:
            return 0
        return int(self.final.record.get("rounds", 1) or 1)

    def conversation(self) -> list[dict[str, Any]]:
        """The last request's messages and its answer: the whole conversation as the
        model saw it (for the final record, where result viewers look for a trajectory)."""
        if not self.calls:
            return []
        step = max(self.calls)
        body = next((ev.request for ev in self.events if isinstance(ev, ModelCalled)
                     and ev.step == step and ev.request), {})  # fmt: skip
        if "messages" in body:
            system = [{"role": "system", "content": body["system"]}] if "system" in body else []
            messages = [*system, *body["messages"]]
        else:
            messages = [{"role": "user", "content": body.get("prompt", "")}]
        answer = self.calls[step].response
        reply: dict[str, Any] = {"role": "assistant", "content": answer.get("text", "")}
        if answer.get("tool_calls"):
            reply["tool_calls"] = answer["tool_calls"]
        return [*messages, reply]

    def result_at(self, round_: int) -> SampleResult | None:
        """The verdict the sample had after ``round_`` rounds: its final one once it
        stopped, else its latest attempt."""
        if self.final is not None and self.final_round <= round_:
            return self.final.result
        earlier = [r for r in self.attempts if r <= round_]
        return self.attempts[max(earlier)].result if earlier else None


@dataclass
class Totals:
    requests: int = 0  # HTTP attempts
    retries: int = 0
    answers: int = 0  # usable responses
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0  # of the usable responses
    tool_calls: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class RunHistory:
    """Thread-safe: each sample's job adds its own events; totals are shared."""

    def __init__(self) -> None:
        self.samples: dict[Key, SampleHistory] = {}
        self.totals = Totals()
        self._lock = threading.Lock()

    def sample(self, key: Key) -> SampleHistory:
        with self._lock:
            found = self.samples.get(key)
            if found is None:
                found = self.samples[key] = SampleHistory(key)
            return found

    def add(self, event: Event) -> None:
        if isinstance(event, ModelCalled):
            self._model_called(event)
        elif isinstance(event, ToolCalled):
            hist = self.sample((event.task_id, event.index))
            hist.tools.append(event)
            hist.events.append(event)
            with self._lock:
                self.totals.tool_calls += 1
        elif isinstance(event, AttemptEvaluated):
            hist = self.sample(event.result.key)
            hist.attempts[event.round] = event
            hist.events.append(event)
        elif isinstance(event, SampleEvaluated):
            hist = self.sample(event.result.key)
            hist.final = event
            hist.events.append(event)

    def _model_called(self, ev: ModelCalled) -> None:
        hist = self.sample((ev.task_id, ev.index))
        hist.events.append(ev)
        if ev.ok:
            hist.calls[ev.step] = ev
        with self._lock:
            t = self.totals
            t.requests += 1
            t.retries += int(ev.attempt > 1)
            if ev.ok:
                t.answers += 1
                t.input_tokens += ev.input_tokens
                t.output_tokens += ev.output_tokens
                t.cost_usd += ev.cost_usd
                t.latency_s += ev.latency_s

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> RunHistory:
        out = cls()
        for ev in events:
            out.add(ev)
        return out

    @classmethod
    def load(cls, store: EventStore, run_id: str) -> RunHistory:
        """Raises: StoreError."""
        return cls.from_events(stored.event for stored in store.events(run_id))

    # -- reading ----------------------------------------------------------------------

    def finished(self) -> list[SampleHistory]:
        return [h for h in self.samples.values() if h.final is not None]

    def rounds(self) -> int:
        return max((h.final_round for h in self.finished()), default=0)

    def by_round(self) -> dict[int, list[SampleResult]]:
        """Round r -> the verdict of every finished sample after r rounds."""
        done = self.finished()
        out: dict[int, list[SampleResult]] = {}
        for r in range(1, self.rounds() + 1):
            found = [res for h in done if (res := h.result_at(r)) is not None]
            out[r] = found
        return out


def round_table(history: RunHistory, declared: Sequence[metrics.Metric]) -> list[dict[str, Any]]:
    """One row per round: the benchmark's metrics over every finished sample's verdict
    after that many rounds (a sample that passed earlier keeps its verdict), and how many
    samples were still refining."""
    rows = []
    for r, results in history.by_round().items():
        scores = metrics.score(declared, results)
        refining = sum(1 for h in history.finished() if h.final_round > r)
        rows.append(
            {
                "round": r,
                "samples": len(results),
                "refining": refining,
                "passed": sum(x.passed for x in results),
                **scores.values,
            }
        )
    return rows
