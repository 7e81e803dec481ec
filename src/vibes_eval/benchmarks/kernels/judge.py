"""Turn what the run observed (``run.py``) into a verdict: the first run that does not pass
decides the reason; when every run passes, speed is the median over runs and the spread is
reported."""

from __future__ import annotations

import re
from typing import Any

from vibes_eval.benchmarks.kernels import run as p
from vibes_eval.benchmarks.kernels.config import KernelsConfig
from vibes_eval.benchmarks.kernels.measure.timing import (
    RefCache,
    SizeTiming,
    parse_stdout,
    run_speed,
    sizes_json,
    spread,
)
from vibes_eval.benchmarks.kernels.tasks import KernelTask
from vibes_eval.core.metrics import IN_PROCESS_MEASURE
from vibes_eval.core.types import Reason, Sample, SampleResult, Termination

OUTPUT_KEEP = 4000  # characters of stdout/stderr kept with a verdict


def run_verdict(task: KernelTask, obs: p.RunObs) -> tuple[str, str]:
    """(reason, detail) of one timing run; reason "passed" when it validated."""
    r = obs.result
    text = (r.stdout + "\n" + r.stderr).lower()
    if r.termination is Termination.KILLED:
        return Reason.INFRA, "the run was stopped from outside"
    if r.termination is not Termination.EXITED or r.signal is not None:
        reason = Reason.from_termination(r.termination)
        return reason, p.first_error(r)
    if not p.run_passed(task, obs):
        if any(sign in text for sign in p.NO_DEVICE_SIGNS):
            return p.NO_DEVICE, _line_with(r.stdout + "\n" + r.stderr, p.NO_DEVICE_SIGNS)
        if any(sign in text for sign in p.ARCH_SIGNS):
            return p.ARCH_UNSUPPORTED, _line_with(r.stdout + "\n" + r.stderr, p.ARCH_SIGNS)
    if task.channel:
        verdict = _channel_verdict(obs, r.exit_code)
        if verdict is not None:
            return verdict
    success = task.spec.execute.success
    if r.exit_code != success.exit_code:
        return Reason.FAILED, f"exit code {r.exit_code}: {p.first_error(r)}"
    if success.stdout_regex and not re.search(success.stdout_regex, r.stdout, re.M):
        return Reason.FAILED, f"no {success.stdout_regex!r} in the output: {p.first_error(r)}"
    return Reason.PASSED, ""


def _channel_verdict(obs: p.RunObs, exit_code: int | None) -> tuple[str, str] | None:
    ch = obs.channel
    if obs.channel_missing or ch is None or not ch.begun:
        return Reason.EARLY_EXIT, (f"the harness never opened its results channel (exit code "
                                   f"{exit_code}): the process ended before main")  # fmt: skip
    if ch.reference_broken:
        return Reason.INFRA, f"the task's reference fails its own check: {ch.reference_broken}"
    if ch.cheat_rule:
        return p.ANTI_CHEAT, f"{ch.cheat_rule}: {ch.cheat_detail}"
    if ch.died:  # ended without its `end`, as the solution's process did (or by its signal)
        return Reason.EARLY_EXIT, ch.died
    if not ch.ended:
        harness = _line_with(obs.result.stderr, ("cuda error in ",))
        if harness:  # the harness's own CUDA call failed (kh::check), not the solution's
            return Reason.INFRA, f"the harness failed: {harness}"
        return Reason.EARLY_EXIT, f"the run ended before the harness finished (exit {exit_code})"
    if not ch.passed:
        return Reason.FAILED, ch.failure or "the harness reported a failure"
    return None


def _line_with(text: str, signs: tuple[str, ...]) -> str:
    for line in text.splitlines():
        if any(s in line.lower() for s in signs):
            return line.strip()[:300]
    return ""


def judge(
    task: KernelTask,
    sample: Sample,
    run: p.KernelRun,
    config: KernelsConfig,
    cache: RefCache | None,
    toolchain: str,
) -> SampleResult:
    m: dict[str, float] = {
        "task_class": float(task.task_class),
        "build_s": round(run.build_s, 3),
        "run_s": round(run.run_s, 3),
        "wall_s": round(run.build_s + run.run_s, 3),
    }
    if run.compiled is not None:
        m["compiled"] = 1.0 if run.compiled else 0.0
    details: dict[str, Any] = {
        "backend": task.backend,
        "channel": "results file" if task.channel else "stdout (untrusted)",
    }
    if run.gate is not None:
        details["device"] = run.gate.device or run.gate.detail
    if run.notes:
        details["notes"] = run.notes
    result = SampleResult(task_id=sample.task_id, index=sample.index, passed=False,
                          reason=Reason.INFRA, completion_hash=sample.completion_hash,
                          measurements=m, details=details)  # fmt: skip
    if run.outcome:
        result.reason, result.detail = run.outcome, run.detail
        if run.outcome == Reason.COMPILE_ERROR and run.build is not None:
            result.stderr = run.build.stderr[-OUTPUT_KEEP:]
            result.stdout = run.build.stdout[-OUTPUT_KEEP:]
        return result
    if not run.runs:
        result.detail = "no timing run happened"
        return result
    _trust(run, result)
    for n, obs in enumerate(run.runs):
        reason, detail = run_verdict(task, obs)
        if reason != Reason.PASSED:
            result.reason = reason
            result.detail = detail if n == 0 else f"run {n + 1} of {config.repeats}: {detail}"
            result.stdout = obs.result.stdout[-OUTPUT_KEEP:]
            result.stderr = obs.result.stderr[-OUTPUT_KEEP:]
            details["runs_passed"] = n
            return result
    result.passed, result.reason = True, Reason.PASSED
    result.stdout = run.runs[0].result.stdout[-OUTPUT_KEEP:]
    _timings(task, run, config, cache, toolchain, result)
    return result


def _trust(run: p.KernelRun, result: SampleResult) -> None:
    """`split` when every run's harness said the solution ran in a process of its own
    (kh_bench.h's `begin isolation=processes`), else `in-process`: the solution shared the
    harness's process (CUDA harnesses, CUDAHercules's stdout harnesses) and could reach
    its timing, its checks and the reference's buffers (docs/kernels.md)."""
    isolated = all(o.channel is not None and o.channel.isolation == "processes"
                   for o in run.runs)  # fmt: skip
    result.details["trust"] = "split" if isolated else "in-process"
    clocks = {o.channel.clock for o in run.runs if o.channel is not None and o.channel.clock}
    if clocks:
        result.details["clock"] = ",".join(sorted(clocks))
    if not isolated:
        result.measurements[IN_PROCESS_MEASURE] = 1.0


def _sizes(task: KernelTask, obs: p.RunObs) -> list[SizeTiming]:
    if obs.channel is not None:
        return obs.channel.sizes
    parser = task.spec.performance.parser
    return parse_stdout(obs.result.stdout, parser.kernel_time_ms_regex, parser.ref_time_ms_regex)


def _timings(
    task: KernelTask,
    run: p.KernelRun,
    config: KernelsConfig,
    cache: RefCache | None,
    toolchain: str,
    result: SampleResult,
) -> None:
    if not task.spec.performance.enabled:
        return
    per_run = [_sizes(task, obs) for obs in run.runs]
    if not all(per_run):
        result.details["timing"] = "no timings found in the harness's report: speed 0"
        result.measurements["speedup"] = 0.0
        return
    device = run.gate.device if run.gate else ""
    override = None
    if cache is not None:
        threads = 0 if task.needs_gpu else config.cpu_threads
        key = RefCache.key(task.fingerprint(), device, toolchain, threads)
        # Only a run of the expert against itself may set the times others are scored by.
        entry = cache.store_best(key, per_run) if run.reference_only else cache.get(key)
        if entry is not None:
            cached = entry.get("ref_min_ms", [])
            result.details["ref_cached_ms"] = cached
            live = per_run[0]
            drift = [s.ref_min / c for s, c in zip(live, cached, strict=False) if c > 0]
            if drift:
                result.measurements["ref_drift"] = round(sum(drift) / len(drift), 4)
            if config.reference_times == "cached":
                override = cached
    speeds = [run_speed(sizes, override) for sizes in per_run]
    means = [sum(s.speedup_mean for s in sizes) / len(sizes) for sizes in per_run]
    sp, sp_mean = spread(speeds), spread(means)
    last = [sizes[-1] for sizes in per_run]  # the largest size, as CUDAHercules reports
    result.measurements.update(
        speedup=round(sp.median, 4),
        speedup_min=round(sp.low, 4),
        speedup_max=round(sp.high, 4),
        speedup_spread=round(sp.relative, 4),
        speedup_mean_based=round(sp_mean.median, 4),
        kernel_ms=round(spread([s.sol_min for s in last]).median, 6),
        ref_ms=round(spread([s.ref_min for s in last]).median, 6),
        repeats=float(len(per_run)),
    )
    result.details["runs"] = [sizes_json(sizes) for sizes in per_run]
    result.details["speedups"] = [round(s, 4) for s in speeds]
    if sp.median > config.audit_speedup:
        result.measurements["audit"] = 1.0
        result.detail = (f"speedup {sp.median:.1f}x is above {config.audit_speedup:g}x: "
                         "flagged for audit")  # fmt: skip
