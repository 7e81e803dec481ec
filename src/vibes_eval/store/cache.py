"""The result-cache key: a verdict is reused when the problem, the completion, and
everything that judged it (benchmark, verdict-relevant config, toolchain, runner) match."""

from __future__ import annotations

import json

from vibes_eval.core.types import sha256
from vibes_eval.store.events import AttemptEvaluated, RunStarted, SampleEvaluated, verdict_config


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
    return sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")))


def cache_key(context: str, problem_hash: str, completion_hash: str) -> str:
    return sha256(f"{context}\0{problem_hash}\0{completion_hash}")


def cacheable(event: SampleEvaluated | AttemptEvaluated) -> bool:
    """Fresh verdicts only: a reused one is already in the cache, an infrastructure
    error says nothing about the sample, and a verdict without a completion (a model
    that gave no usable answer) judged no code."""
    result = event.result
    return not result.cached and not result.infra and bool(result.completion_hash)
