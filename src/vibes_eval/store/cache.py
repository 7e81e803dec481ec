"""The result-cache key: a verdict is reused when the problem, the completion, and
everything that judged it (benchmark, verdict-relevant config, toolchain, runner) match.

A benchmark may evaluate samples together (HumanEval's batches share a crate, a binary, a
process) and declare that setting not part of a run's identity, since verdicts are meant
not to depend on it. The cache does not take that on trust: a verdict is reusable across
such settings only when its ``details["evaluated"]`` says it was obtained ``alone``; any
other verdict is keyed by the run's exact settings (``Contexts.settings``), so a verdict
obtained in a shared process is never served to a run that evaluates alone.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from vibes_eval.core.types import SampleResult, sha256
from vibes_eval.store.events import AttemptEvaluated, RunStarted, SampleEvaluated, verdict_config

ALONE = "alone"  # details["evaluated"] of a verdict obtained on its own


def context_hash(started: RunStarted) -> str:
    """Hash of a run's judging context. The problem file's name is left out: the problem
    hash covers its content, so a moved or renamed file still hits the cache."""
    payload = {
        "benchmark": started.benchmark,
        "config": verdict_config(started),  # limits, policy, extraction...
        "toolchain": started.toolchain,
        "runner": started.runner,
        "isolation": started.isolation,
    }
    if started.judge_code:  # runs stored before it existed keep their keys
        payload["code"] = started.judge_code
    return _hash(payload)


def settings_hash(started: RunStarted) -> str:
    """The judging context with every setting, those left out of the identity too (the
    same as ``context_hash`` when there are none)."""
    full = {k: v for k, v in started.config.items() if k != "problems"}
    identity = context_hash(started)
    if full == verdict_config(started):
        return identity
    return _hash({"context": identity, "settings": full})


class Contexts(NamedTuple):
    """A run's two cache contexts."""

    identity: str  # for verdicts obtained alone
    settings: str  # for every other verdict

    @classmethod
    def of(cls, started: RunStarted) -> Contexts:
        return cls(context_hash(started), settings_hash(started))

    def for_result(self, result: SampleResult) -> str:
        return self.identity if result.details.get("evaluated") == ALONE else self.settings


def _hash(payload: dict[str, Any]) -> str:
    return sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")))


def cache_key(context: str, problem_hash: str, completion_hash: str) -> str:
    return sha256(f"{context}\0{problem_hash}\0{completion_hash}")


def cacheable(event: SampleEvaluated | AttemptEvaluated) -> bool:
    """Fresh verdicts only: a reused one is already in the cache, an infrastructure
    error says nothing about the sample, and a verdict without a completion (a model
    that gave no usable answer) judged no code."""
    result = event.result
    return not result.cached and not result.infra and bool(result.completion_hash)
