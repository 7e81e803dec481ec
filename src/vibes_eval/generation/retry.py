"""Sending one request until it gives an answer or its retry budget is spent.

429, 5xx, timeouts, dropped connections and unreadable bodies are retried with
exponential backoff and full jitter (a random wait in [0, base * 2^(attempt-1)], capped),
never sooner than a ``Retry-After`` the server sent (itself capped at ``max_s``, so a
server asking for an hour cannot stall the run). Every attempt is reported to
``on_attempt`` before the wait, so the store holds each one."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vibes_eval.generation.models import CallFailed, ModelClient, Reply


class Stopped(Exception):
    """The run is stopping (Ctrl-C, a budget, a fatal error): start nothing new."""


@dataclass
class RetryPolicy:
    max_retries: int = 5
    base_s: float = 1.0
    max_s: float = 60.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """The wait after failed attempt ``attempt`` (1-based)."""
        backoff = self.rng.uniform(0, min(self.max_s, self.base_s * 2 ** (attempt - 1)))
        if retry_after is None:
            return backoff
        # At least what the server asked, plus a little jitter so that clients told the
        # same moment do not all come back at once.
        return min(self.max_s, retry_after) + self.rng.uniform(0, min(1.0, self.base_s))


@dataclass
class Attempt:
    number: int
    reply: Reply | None
    failure: CallFailed | None
    latency_s: float
    retry_in_s: float = 0.0  # > 0 or ``retry``: another attempt follows
    retry: bool = False


def send_with_retries(
    client: ModelClient,
    body: Mapping[str, Any],
    policy: RetryPolicy,
    on_attempt: Callable[[Attempt], None],
    stopping: threading.Event,
) -> Reply:
    """Raises:
    CallFailed: the last attempt's failure (not retryable, or the budget is spent).
    Stopped: ``stopping`` was set before or while waiting.
    """
    attempt = 0
    while True:
        attempt += 1
        if stopping.is_set():
            raise Stopped()
        start = time.monotonic()
        try:
            reply = client.send(body)
        except CallFailed as failure:
            latency = time.monotonic() - start
            retry = failure.retryable and attempt <= policy.max_retries
            wait = policy.delay(attempt, failure.retry_after) if retry else 0.0
            on_attempt(Attempt(attempt, None, failure, latency, wait, retry))
            if not retry:
                raise
            if stopping.wait(wait):
                raise Stopped() from None
            continue
        on_attempt(Attempt(attempt, reply, None, time.monotonic() - start))
        return reply
