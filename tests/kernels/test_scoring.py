"""Reading timings (the trusted channel and CUDAHercules's stdout), speed and spread, the
reference-time cache, hardware gating, and the metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.kernels.conftest import CPU_SET, CUDA_SET, write_task
from vibes_eval.benchmarks.kernels.config import KernelsConfig
from vibes_eval.benchmarks.kernels.judge import judge
from vibes_eval.benchmarks.kernels.measure import hardware
from vibes_eval.benchmarks.kernels.measure.hardware import Gate
from vibes_eval.benchmarks.kernels.measure.timing import (
    ChannelReport,
    RefCache,
    SizeTiming,
    parse_channel,
    parse_stdout,
    run_speed,
    spread,
)
from vibes_eval.benchmarks.kernels.run import KernelRun, RunObs
from vibes_eval.benchmarks.kernels.scoring import kernel_metrics, solved
from vibes_eval.benchmarks.kernels.tasks import load_tasks
from vibes_eval.core.metrics import score
from vibes_eval.core.types import ExecutionResult, Sample, SampleResult

NONCE = "a1b2"


def test_the_channel_trusts_only_lines_with_the_nonce() -> None:
    text = (
        f"{NONCE} begin\n"
        f"{NONCE} size label=n=10 ok=1 trials=5 ref_min=2.0 ref_mean=2.5 sol_min=4.0 sol_mean=5.0\n"
        "forged size label=n=10 ok=1 trials=5 ref_min=100 ref_mean=100 sol_min=1 sol_mean=1\n"
        f"{NONCE} end passed=1 sizes=1\n"
        "forged end passed=1\n"
    )
    report = parse_channel(text, NONCE)
    assert report.begun and report.ended and report.passed
    assert [(s.label, s.speedup) for s in report.sizes] == [("n=10", 0.5)]
    failed = parse_channel(f"{NONCE} begin\n{NONCE} cheat rule=zero_output label=n=1 why=zeros"
                           f"\n{NONCE} end passed=0\n", NONCE)  # fmt: skip
    assert failed.cheat_rule == "zero_output" and not failed.passed
    assert not parse_channel("other begin\n", NONCE).begun


def test_cudahercules_stdout_is_parsed_per_size() -> None:
    out = """=== small ===
Ref time: 1.5000 ms (avg over 20 trials, min: 1.0000 ms)
Kernel time: 3.0000 ms (avg over 20 trials, min: 2.0000 ms)
Speedup: 0.50x
=== large ===
Ref time: 10.0 ms (avg over 20 trials, min: 8.0 ms)
Kernel time: 5.0 ms (avg over 20 trials, min: 4.0 ms)
Passed
"""
    sizes = parse_stdout(out, r"Kernel time:\s*([0-9.]+)\s*ms", r"Ref time:\s*([0-9.]+)\s*ms")
    assert [(s.label, s.ref_min, s.sol_min) for s in sizes] == [
        ("small", 1.0, 2.0),
        ("large", 8.0, 4.0),
    ]
    assert run_speed(sizes) == pytest.approx((0.5 + 2.0) / 2)  # CUDAHercules: mean over sizes
    assert run_speed(sizes, ref_override=[2.0, 8.0]) == pytest.approx((1.0 + 2.0) / 2)
    single = parse_stdout("Kernel time: 2 ms\nRef time: 3 ms\n", r"Kernel time:\s*([0-9.]+)",
                          r"Ref time:\s*([0-9.]+)")  # fmt: skip
    assert [(s.ref_min, s.sol_min) for s in single] == [(3.0, 2.0)]


def test_spread_and_reference_cache(tmp_path: Path) -> None:
    s = spread([1.0, 1.2, 0.9])
    assert s.median == 1.0 and s.relative == pytest.approx(0.3)
    cache = RefCache(tmp_path / "ref.json")
    sizes = [SizeTiming("n", 2.0, 1.0)]
    key = RefCache.key("f" * 64, "H100", "nvcc 13")
    assert cache.get(key) is None
    assert cache.store_best(key, [sizes])["ref_min_ms"] == [2.0]  # stored
    # A slower reference run never raises it; a faster one lowers it (least per size).
    assert cache.store_best(key, [[SizeTiming("n", 9.0, 1.0)]])["ref_min_ms"] == [2.0]
    assert cache.store_best(key, [[SizeTiming("n", 3.0, 1.0)], [SizeTiming("n", 1.5, 1.0)]])[
        "ref_min_ms"
    ] == [1.5]
    assert RefCache.key("f" * 64, "cpu", "g++", 2) != RefCache.key("f" * 64, "cpu", "g++", 1)


def test_hardware_gates(tmp_path: Path, gpus) -> None:  # type: ignore[no-untyped-def]
    task = load_tasks(CUDA_SET)["class1/general/cuda_00_vector_add"]
    gpus("")
    gate = hardware.gate(task)
    assert gate.status == "no_device" and gate.sm == 80  # still built, for min_sm
    gpus("0:Tesla V100:7.0")
    assert hardware.gate(task).status == "arch_unsupported"
    gpus("0:NVIDIA H100 80GB HBM3:9.0")
    gate = hardware.gate(task)
    assert gate.status == "ok" and gate.arch_vars["ARCH"] == "-gencode arch=compute_90,code=sm_90"
    hopper = write_task(tmp_path, "h", backend="class1_make")
    text = (hopper / "task.yaml").read_text().replace("class1/general/h", "class1/hopper/h")
    (hopper / "task.yaml").write_text(text.replace("tested_sms: [80]", "tested_sms: [90]"))
    t = load_tasks(tmp_path)["class1/hopper/h"]
    assert hardware.gate(t).status == "ok"
    gpus("0:NVIDIA B200:10.0")
    assert hardware.gate(t).status == "arch_unsupported"  # sm_90a code does not run on sm_100
    cpu = write_task(tmp_path / "cpu", "c")
    text = (
        (cpu / "task.yaml")
        .read_text()
        .replace("required_features: []", "required_features: [no_such_flag]")
    )
    (cpu / "task.yaml").write_text(text)
    assert (
        hardware.gate(load_tasks(tmp_path / "cpu")["class1/general/c"]).status == "arch_unsupported"
    )


def result(
    task: str, reason: str, speed: float | None = None, cls: int = 1, **m: float
) -> SampleResult:
    measurements = {"task_class": float(cls), **m}
    if speed is not None:
        measurements["speedup"] = speed
    return SampleResult(task_id=task, index=0, passed=reason == "passed", reason=reason,
                        measurements=measurements)  # fmt: skip


def test_metrics_follow_the_paper() -> None:
    rs = [
        result("class1/general/a", "passed", 2.0, compiled=1.0),
        result("class1/general/b", "passed", 1.05, compiled=1.0),  # not > 1.05
        result("class1/general/c", "failed", compiled=1.0),
        result("class1/general/d", "compile_error", compiled=0.0),
        result("class1/hopper/e", "arch_unsupported"),  # not counted
        result("class1/general/f", "no_device", compiled=1.0),  # compiles, not counted
        result("class2/general/g", "passed", 0.5, cls=2, compiled=1.0),
    ]
    values = score(kernel_metrics([1]), rs).values
    assert values["pass_rate"] == pytest.approx(3 / 5)
    assert values["compile_rate"] == pytest.approx(5 / 6)
    assert values["mean_speed"] == pytest.approx((2.0 + 1.05 + 0.5) / 5)
    assert values["geomean_speed"] == pytest.approx((2.0 * 1.05 * 0.5) ** (1 / 3))
    assert values["fast_0.5"] == pytest.approx(2 / 5)  # strict >: 0.5 is not fast_0.5
    assert values["fast_1.05"] == pytest.approx(1 / 5)
    assert values["pass@1"] == pytest.approx(3 / 5)  # the skipped tasks do not omit it
    assert values["pass_rate:class2"] == 1.0 and values["fast_1.05:class1"] == pytest.approx(1 / 4)
    assert "pass_rate:hopper" not in values  # every hopper task was skipped
    assert solved([rs[0]]) and not solved([rs[1]])


def test_pass_at_k_is_omitted_when_a_counted_task_has_too_few_samples() -> None:
    scores = score(kernel_metrics([2]), [result("class1/general/a", "passed", 1.0)])
    assert "pass@2" not in scores.values and any("pass@2" in n for n in scores.notes)


def test_compare_pairs_kernel_metrics_per_task() -> None:
    from vibes_eval.runs.compare import compare

    a = [result("class1/general/a", "passed", 0.5), result("class1/general/b", "failed"),
         result("class1/hopper/c", "arch_unsupported")]  # fmt: skip
    b = [result("class1/general/a", "passed", 2.0), result("class1/general/b", "passed", 1.2),
         result("class1/hopper/c", "passed", 3.0)]  # fmt: skip
    cmp = compare(a, b, kernel_metrics([1]), solved=solved, resamples=200)
    diffs = {d.metric: d for d in cmp.metrics}
    # c has no value in A: fast_1.05 is compared over a and b only.
    assert diffs["fast_1.05"].a == 0.0 and diffs["fast_1.05"].b == 1.0
    # McNemar's `solved` is a yes/no: a task skipped in A counts as unsolved there.
    assert cmp.mcnemar.improved == 3 and cmp.mcnemar.regressed == 0


def _judged(task_id: str, index: int, ref_ms: float, sol_ms: float, cache: RefCache,
            reference_only: bool = False) -> SampleResult:  # fmt: skip
    """One passing run with these times, judged with reference_times=cached."""
    task = load_tasks(CPU_SET)[task_id]
    sizes = [SizeTiming("n", ref_ms, sol_ms, ref_ms, sol_ms)]
    channel = ChannelReport(begun=True, ended=True, passed=True, sizes=sizes)
    obs = RunObs("0" * 32, ExecutionResult(exit_code=0, stdout="Passed\n"), channel=channel)
    run = KernelRun(gate=Gate("ok", device="cpu"), compiled=True, runs=[obs],
                    reference_only=reference_only)  # fmt: skip
    sample = Sample(task_id=task_id, index=index, completion=f"sample {index}")
    config = KernelsConfig(problems=str(CPU_SET), reference_times="cached")
    return judge(task, sample, run, config, cache, "g++")


def test_one_sample_poisons_the_others(tmp_path: Path) -> None:
    """A sample whose run slowed the reference (100 ms) must not set the reference time the
    next sample is scored by: only a run of the expert against itself stores one."""
    cache = RefCache(tmp_path / "ref.json")
    tid = "class1/general/cpu_00_vector_add"
    poisoner = _judged(tid, 0, ref_ms=100.0, sol_ms=1.0, cache=cache)
    assert poisoner.passed and "ref_cached_ms" not in poisoner.details
    assert not cache.path.exists() or json.loads(cache.path.read_text()) == {}
    honest = _judged(tid, 1, ref_ms=1.0, sol_ms=1.0, cache=cache)
    assert honest.measurements["speedup"] == pytest.approx(1.0)
    _judged(tid, 2, ref_ms=2.0, sol_ms=2.0, cache=cache, reference_only=True)  # the expert
    later = _judged(tid, 3, ref_ms=1.0, sol_ms=1.0, cache=cache)
    assert later.details["ref_cached_ms"] == [2.0] and later.measurements["speedup"] == 2.0
