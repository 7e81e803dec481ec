"""Every registered benchmark meets the contract (docs/new-benchmark.md): it builds from
its default settings, declares its names, settings, reasons and metrics, has prompt hooks
of the declared kind, and turns a verdict into a results row. A new benchmark is checked
the moment it is registered, built in or installed."""

from __future__ import annotations

import pytest

from vibes_eval.core import metrics as m
from vibes_eval.core import registry
from vibes_eval.core.benchmark import Benchmark, BenchmarkConfig
from vibes_eval.core.prompting import Prompting
from vibes_eval.core.types import CORE_REASONS, Reason, SampleResult

NAMES = registry.benchmark_names()


@pytest.fixture(params=NAMES)
def bench(request: pytest.FixtureRequest) -> Benchmark:  # type: ignore[type-arg]
    cls = registry.benchmark_class(request.param)
    return cls(cls.config_model())


def test_every_builtin_is_registered() -> None:
    assert set(registry.BENCHMARKS) <= set(NAMES)


def test_declarations(bench: Benchmark) -> None:  # type: ignore[type-arg]
    assert issubclass(type(bench), Benchmark)
    assert registry.benchmark_class(bench.name) is type(bench)
    assert isinstance(bench.suite, str) and bench.suite
    assert issubclass(bench.config_model, BenchmarkConfig)
    assert isinstance(bench.config.identity(), dict)
    assert set(CORE_REASONS) <= set(bench.known_reasons())


def test_metrics_are_declared_and_score(bench: Benchmark) -> None:  # type: ignore[type-arg]
    metrics = bench.metrics([1])
    assert metrics and all(isinstance(x, m.Metric) for x in metrics)
    names = [x.name for x in metrics]
    assert bench.headline in names and len(set(names)) == len(names)
    results = [_result("T/0", 0, True), _result("T/0", 1, False)]
    scores = m.score(metrics, results)
    assert scores.values, scores.notes
    assert isinstance(bench.solved(results), bool)


def test_prompt_hooks_are_declared(bench: Benchmark) -> None:  # type: ignore[type-arg]
    assert bench.prompting_class is not None, f"{bench.name} cannot prompt a model"
    hooks = bench.prompting()
    assert isinstance(hooks, Prompting) and hooks.benchmark is bench
    assert type(hooks).context is not Prompting.context, "context() must be written"
    feedback = hooks.feedback(_result("T/0", 0, False), 100)
    assert feedback["reason"] == Reason.FAILED


def test_a_results_row(bench: Benchmark) -> None:  # type: ignore[type-arg]
    row = bench.export_row({"task_id": "T/0", "completion": "x"}, _result("T/0", 0, True))
    assert row["reason"] == Reason.PASSED  # and the benchmark's own verdict field
    assert row.get("passed", row.get("resolved")) is True


def _result(task: str, index: int, ok: bool) -> SampleResult:
    reason = Reason.PASSED if ok else Reason.FAILED
    return SampleResult(task_id=task, index=index, passed=ok, reason=reason,
                        measurements={"wall_s": 0.1, "speedup": 1.0})  # fmt: skip
