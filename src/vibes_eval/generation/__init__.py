"""Models in the loop: generate a benchmark's samples with a model (one-shot,
self-refine, tool-augmented), evaluate them as they arrive, record every request and
verdict, resume without paying twice, and compare variants (A/B experiments).

    from vibes_eval.generation import generate
    out = generate("humaneval-rust", {"model": "openai/gpt-4o-mini", "sampling": {"n": 5}},
                   store="default", ks=[1, 5])
    print(out.metrics, out.run_id)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vibes_eval.core.types import SampleResult
from vibes_eval.evaluation import Outcome
from vibes_eval.generation.settings import GenerationSettings


def generate(
    benchmark: str,
    settings: GenerationSettings | Mapping[str, Any],
    *,
    config: Any = None,
    sandbox: str = "auto",
    store: str | None = None,
    run_id: str | None = None,
    workers: int | None = None,
    ks: Sequence[int] = (1,),
    labels: Mapping[str, str] | None = None,
    use_cache: bool = True,
    on_result: Callable[[SampleResult], None] | None = None,
) -> Outcome:
    """Generate ``benchmark``'s samples with a model and evaluate them. ``settings``: a
    ``GenerationSettings`` or its fields as a dict (model, base_url, sampling, setting,
    prompt, options, tasks, limit, budgets...). ``store``/``run_id`` as in
    ``vibes_eval.evaluate``: an existing run of that id is resumed, and nothing it already
    paid for is asked again. The outcome's ``generated`` attribute holds the trajectories.

    Raises: UserError (bad settings or inputs, a bad key/model/URL, a store problem).
    """
    from vibes_eval import api
    from vibes_eval.core.settings import Layer, build
    from vibes_eval.generation.pipeline import GenerationEvaluation

    if not isinstance(settings, GenerationSettings):
        settings = build(GenerationSettings, [Layer("settings", dict(settings))], "generation")  # type: ignore[assignment]
    request = api.Request(
        benchmark=benchmark,
        samples=[],
        config=api.make_config(benchmark, config),
        sandbox=sandbox,
        store=store,
        workers=workers,
        run_id=run_id,
        labels=dict(labels or {}),
        ks=list(ks),
        use_cache=use_cache,
    )
    with GenerationEvaluation(request, settings) as ev:  # type: ignore[arg-type]
        outcome = ev.run(on_result)
    outcome.generated = ev.generated  # type: ignore[attr-defined]
    return outcome


__all__ = ["GenerationSettings", "generate"]
