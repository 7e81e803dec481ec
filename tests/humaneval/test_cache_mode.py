"""Issue 16, class 8: the result cache and the evaluation mode.

Before: `batch` was left out of the run identity and the cache key, so a verdict obtained
in a batch (forged there, in the attack that found this) was served to a later
`--no-batch` run of the same samples. Now every verdict says how it was obtained
(``details["evaluated"]``), and only those obtained alone are reused across modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SANDBOX
from tests.humaneval import integrity_cases as cases
from vibes_eval.api import evaluate


def _run(
    tmp: Path, rows: list[cases.Row], store: Path, batch: bool, policy: bool
) -> dict[str, object]:
    problems = cases.write_problems(tmp / "problems.jsonl")
    samples = cases.write_samples(tmp / "samples.jsonl", rows)
    outcome = evaluate(
        "humaneval-rust",
        samples,
        config={
            "problems": str(problems),
            "batch": batch,
            "enforce_policy": policy,
            "limits": {"timeout_s": 3.0},
        },
        sandbox=SANDBOX,
        store=str(store),
        workers=1,
        ks=[1],
    )
    return {r.case: res for r, res in zip(rows, outcome.ordered, strict=True)}


@pytest.mark.slow
@pytest.mark.parametrize("policy", [True, False], ids=["policy", "no-policy"])
def test_lone_runs_are_never_served_shared_verdicts(tmp_path: Path, policy: bool) -> None:
    rows = [
        cases.Row(tid, code, f"{kind}_{tid}", kind == "correct")
        for tid in cases.PROBLEMS
        for kind, code in (("correct", cases.CORRECT[tid]), ("wrong", cases.WRONG[tid]))
    ]
    rows.append(cases.Row("I/add", cases.ATTACKS["impl_reach"][1].replace("String::new()", "0"),
                          "risky", None))  # fmt: skip
    store = tmp_path / "store.db"
    batched = _run(tmp_path, rows, store, batch=True, policy=policy)
    evaluated = {c: r.details["evaluated"] for c, r in batched.items()}
    assert evaluated["correct_I/add"] == "shared" and evaluated["risky"] == "alone"

    # A second batched run may reuse every verdict of the first.
    again = _run(tmp_path, rows, store, batch=True, policy=policy)
    assert all(r.cached for r in again.values())

    # A lone run reuses only what was obtained alone; the rest is evaluated again, alone.
    alone = _run(tmp_path, rows, store, batch=False, policy=policy)
    for case, res in alone.items():
        assert res.details["evaluated"] == "alone", case
        assert res.cached is (evaluated[case] == "alone"), case
        assert (res.passed, res.reason) == (batched[case].passed, batched[case].reason), case


def test_cache_contexts() -> None:
    """Verdicts obtained alone are keyed by the run's identity; any other verdict (shared, or
    from before verdicts said how they were obtained) by its exact settings, which are the
    identity itself when no setting is left out of it."""
    from vibes_eval.core.types import SampleResult
    from vibes_eval.store.cache import Contexts
    from vibes_eval.store.events import RunStarted

    def started(config: dict, identity: dict) -> RunStarted:
        return RunStarted(
            run_id="r", benchmark="humaneval-rust", config=config, config_identity=identity,
            problems_sha256="p", tasks_sha256="t", samples_sha256="s", n_samples=1,
            n_tasks=1, runner="landlock",
        )  # fmt: skip

    def result(details: dict) -> SampleResult:
        return SampleResult(task_id="T", index=0, passed=True, reason="passed", details=details)

    batched = Contexts.of(started({"timeout": 3, "batch": True}, {"timeout": 3}))
    alone = Contexts.of(started({"timeout": 3, "batch": False}, {"timeout": 3}))
    assert batched.identity == alone.identity and batched.settings != alone.settings
    assert batched.for_result(result({"evaluated": "alone"})) == alone.identity
    assert batched.for_result(result({"evaluated": "shared"})) == batched.settings
    assert batched.for_result(result({})) == batched.settings  # before the field existed
    plain = Contexts.of(started({"timeout": 3}, {"timeout": 3}))
    assert plain.settings == plain.identity  # nothing left out: nothing changes
