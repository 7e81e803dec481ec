"""Stand-ins for the kernel and SWE-bench benchmarks being built elsewhere: only what the
pages read of a benchmark (declared metrics, headline, reasons, solved), and runs of them
written straight through the store API with the measurements and details those
benchmarks fill (a kernel's timings per size, SWE-bench's per-test statuses, an agent's
trajectory)."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from typing import Any, ClassVar

from vibes_eval.core import metrics
from vibes_eval.core.benchmark import Benchmark, BenchmarkConfig
from vibes_eval.core.types import Reason, SampleResult, Task
from vibes_eval.runs.process import host, start_token
from vibes_eval.store.base import EventStore
from vibes_eval.store.events import RunCompleted, RunStarted, SampleEvaluated

HOSTILE = (
    '</pre><script>window.__pwned=1</script><img id="pwned" src="x" onerror="window.__pwned=2">'
)


class _Stub(Benchmark[Task, BenchmarkConfig]):
    """Nothing here runs: the pages only score stored verdicts."""

    def load_tasks(self) -> dict[str, Task]:
        return {}

    def load_samples(self, source: Any, tasks: dict[str, Task]) -> list[Any]:
        return []

    def run_task(self, task: Task, sample: Any, runner: Any) -> Any:
        raise NotImplementedError

    def evaluate(self, task: Task, sample: Any, output: Any) -> SampleResult:
        raise NotImplementedError


def _best_speed(rs: Sequence[metrics.Scored]) -> float:
    return max((r.measurements.get("speedup", 0.0) for r in rs if r.passed), default=0.0)


def _fast(p: float) -> metrics.Metric:
    return metrics.Metric(f"fast_{p}", lambda rs: float(_best_speed(rs) > p))


class FakeKernels(_Stub):
    name: ClassVar[str] = "web-kernels"
    suite: ClassVar[str] = "kernels"
    reasons: ClassVar[dict[str, str]] = {
        "validation_failed": "the output differs from the reference",
        "anti_cheat": "the solution calls the reference implementation",
    }
    headline: ClassVar[str] = "fast_1.0"

    def metrics(self, ks: Sequence[int]) -> list[metrics.Metric]:
        def rate(pred: Any) -> Any:
            return lambda rs: sum(1 for r in rs if pred(r)) / len(rs)

        return [
            metrics.Metric("compiled", rate(lambda r: r.reason != Reason.COMPILE_ERROR)),
            metrics.Metric("correct", rate(lambda r: r.passed)),
            metrics.Metric(
                "speedup", _best_speed, aggregate="geomean", description="geomean best speedup"
            ),
            _fast(1.0),
            _fast(1.5),
        ]

    def solved(self, results: Sequence[metrics.Scored]) -> bool:
        return _best_speed(results) > 1.0


class FakeSwe(_Stub):
    name: ClassVar[str] = "web-swe"
    suite: ClassVar[str] = "swebench"
    reasons: ClassVar[dict[str, str]] = {"patch_apply_failed": "the patch did not apply"}
    headline: ClassVar[str] = "resolved"

    def metrics(self, ks: Sequence[int]) -> list[metrics.Metric]:
        return [metrics.Metric("resolved", lambda rs: sum(r.passed for r in rs) / len(rs))]

    def group_of(self, task_id: str) -> str | None:
        return task_id.rsplit("-", 1)[0].replace("__", "/")


BENCHMARKS = {
    "web-kernels": "tests.web.fakebench:FakeKernels",
    "web-swe": "tests.web.fakebench:FakeSwe",
}


def started(run_id: str, benchmark: str, n: int, tasks: int, **kw: Any) -> RunStarted:
    values: dict[str, Any] = {
        "benchmark": benchmark,
        "suite": benchmark,
        "config": {},
        "problems_sha256": "p" * 64,
        "tasks_sha256": "t" * 64,
        "samples_sha256": "s" * 64,
        "n_samples": n,
        "n_tasks": tasks,
        "ks": [1],
        "runner": "process",
        "isolation": "process",
        "labels": {"model": run_id},
        "host": host(),  # with no live pid: a run that did not finish shows as interrupted
    }
    values.update(kw)
    return RunStarted(run_id=run_id, **values)


def kernel_run(store: EventStore, run_id: str, *, seed: int, tasks: int = 6) -> None:
    """A finished kernel run: two samples per task, timings per size in the details."""
    rng = random.Random(seed)
    events: list[Any] = [started(run_id, "web-kernels", 2 * tasks, tasks)]
    line = 0
    for t in range(tasks):
        for i in range(2):
            line += 1
            kind = rng.choice(["fast", "fast", "slow", "validation_failed", "compile_error"])
            passed = kind in ("fast", "slow")
            speed = rng.uniform(1.1, 3.0) if kind == "fast" else rng.uniform(0.3, 0.9)
            sizes = [
                {"size": s, "ref_ms": round(s / 100, 3), "kernel_ms": round(s / 100 / speed, 3)}
                for s in (1024, 4096, 16384)
            ]
            result = SampleResult(
                task_id=f"K/{t}",
                index=i,
                passed=passed,
                reason=Reason.PASSED if passed else kind,
                detail="" if passed else f"{kind}: max abs error 0.5 at size 4096",
                measurements={
                    "wall_s": rng.uniform(1, 5),
                    **({"speedup": speed} if passed else {}),
                },
                details={"timings": sizes, "gpu": "fake-gpu"} if passed else {"log": "nvcc ..."},
                stdout="timing 3 sizes\n",
            )
            events.append(
                SampleEvaluated.from_result(
                    run_id,
                    result,
                    problem_hash=f"k{t}",
                    line=line,
                    record={"task_id": f"K/{t}", "solution": "__global__ void k(float* x) {}\n"},
                )
            )
    store.append(events)
    results = [ev.result for ev in events[1:]]
    declared = FakeKernels(BenchmarkConfig()).metrics([1])
    store.append(
        [
            RunCompleted(
                run_id=run_id,
                metrics=metrics.score(declared, results).values,
                n_samples=len(results),
                n_passed=sum(r.passed for r in results),
            )
        ]
    )


def swe_run(store: EventStore, run_id: str) -> None:
    """A finished SWE-bench-like run of two instances, one with an agent's trajectory."""
    statuses = {
        "FAIL_TO_PASS": {"success": ["tests/test_a.py::test_fix"], "failure": []},
        "PASS_TO_PASS": {
            "success": ["tests/test_a.py::test_old"],
            "failure": ["tests/test_b.py::test_x"],
        },
    }
    trajectory = [
        {"role": "system", "content": "You are a software engineer."},
        {"role": "user", "content": "Fix the bug " + HOSTILE},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [{"function": {"name": "open_file", "arguments": '{"path": "a.py"}'}}],
        },
        {"role": "tool", "name": "open_file", "content": "def f():\n    return 1\n"},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]
    patch = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    results = [
        SampleResult(
            task_id="org__repo-1",
            index=0,
            passed=False,
            reason="partial",
            detail="RESOLVED_PARTIAL",
            measurements={"wall_s": 12.5, "test_s": 8.0},
            details={"status": "unresolved", "report": {"org__repo-1": {"tests_status": statuses}}},
            stdout="collected 3 items\n",
        ),
        SampleResult(
            task_id="org__repo-2",
            index=0,
            passed=False,
            reason="patch_apply_failed",
            detail="no fallback applied the patch",
            measurements={"wall_s": 2.0},
            stderr="error: patch failed: a.py:1",
        ),
    ]
    records = [
        {"instance_id": "org__repo-1", "model_patch": patch, "trajectory": trajectory},
        {"instance_id": "org__repo-2", "model_patch": patch},
    ]
    store.append(
        [
            started(run_id, "web-swe", 2, 2),
            *(
                SampleEvaluated.from_result(run_id, r, problem_hash="h", line=i + 1, record=rec)
                for i, (r, rec) in enumerate(zip(results, records, strict=True))
            ),
        ]
    )


def running_run(store: EventStore, run_id: str, *, total: int, done: int) -> None:
    """A run that this test process is evaluating right now (so it shows as running)."""
    store.append(
        [
            started(
                run_id,
                "humaneval-rust",
                total,
                2,
                config={"problems": "p.jsonl"},
                ks=[1],
                host=host(),
                pid=os.getpid(),
                proc_start=start_token(),
            )
        ]
    )
    add_verdicts(store, run_id, 0, done)


def add_verdicts(store: EventStore, run_id: str, start: int, stop: int) -> None:
    store.append(
        [
            SampleEvaluated.from_result(
                run_id,
                SampleResult(
                    task_id=f"T/{i % 2}",
                    index=i // 2,
                    passed=i % 3 != 0,
                    reason=Reason.PASSED if i % 3 else Reason.FAILED,
                    measurements={"wall_s": 0.1 + i / 100},
                ),
                problem_hash=f"h{i % 2}",
                line=i + 1,
            )
            for i in range(start, stop)
        ]
    )
