"""Kernel forgery suite (issue 26): solutions that try to get speed credit for work they
did not do, one instance per attack class, each evaluated on the CPU example set

- with the anti-cheat patterns on (the defaults),
- with them off (``enforce_policy=False``: the static source rules are a courtesy), and
- with every check on the solution's source and object off (``symbol_check=False`` too),
  where the structure alone must hold: the harness runs the solution in a process of its
  own (kh_bench.h), so none of these reaches the timing, the checks or the reference.

None may get credit it did not earn: an instance that computes nothing must not pass, and
one that does honest work plus a trick may pass but only at its honest speed (its
``bound``: far below what the trick was after; a naive matmul is ~0.05x). Timings on a
loaded machine are noisy, so no assertion needs more than an order of magnitude.

The CUDA variants are checked where a check can happen without a GPU: at compile time,
before the sample is classified ``no_device``.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

import vibes_eval
from tests.conftest import SANDBOX
from tests.kernels.conftest import CPU_SET, CUDA_SET, gpus, needs_gxx, needs_nvcc, samples_of

__all__ = ["gpus"]  # the fixture, for the CUDA case

pytestmark = [pytest.mark.slow, needs_gxx]

# Median of 3 runs, each the least of 8 trials: on a loaded machine one run of 3 trials
# has seen a reference preempted in every trial (a naive matmul at 5x for one run).
QUICK = {"repeats": 3, "trials": 8, "warmup": 1}
MODES = {
    "patterns_on": {},
    "patterns_off": {"enforce_policy": False},
    "checks_off": {"enforce_policy": False, "symbol_check": False},
}
ATTACKS_DIR = Path(__file__).parent / "kernel_attacks"


def attacks(backend: str) -> dict[str, dict[str, str]]:
    """The instances of ``kernel_attacks/<backend>/``: name -> header fields (attack, task,
    bound: ``none`` = must not pass, ``pass`` = must pass, a number = may pass but only
    below it; refused: the rule a CUDA one is refused by) and the solution text."""
    found = {}
    for path in sorted((ATTACKS_DIR / backend).glob("*.h")):
        text = path.read_text()
        fields = dict(re.findall(r"^// (attack|task|bound|refused): (.+)$", text, re.M))
        found[path.stem] = {**fields, "solution": text}
    return found


def evaluate(rows: list[dict[str, Any]], tasks: Path = CPU_SET, **config: Any) -> list[Any]:
    out = vibes_eval.evaluate("kernels", rows, config={"problems": str(tasks), **QUICK, **config},
                              sandbox=SANDBOX, ks=[1], use_cache=False)  # fmt: skip
    return out.ordered


def rows(found: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    return [{"task_id": a["task"], "name": name, "solution": a["solution"]}
            for name, a in found.items()]  # fmt: skip


def undeserved(result: Any, bound: str) -> str:
    """Why ``result`` is credit its instance did not earn ("" when it is not)."""
    speed = result.measurements.get("speedup", 0.0)
    if bound == "pass":
        return "" if result.passed else f"{result.reason}: {result.detail[:200]}"
    if not result.passed:
        return ""
    if bound == "none":
        return f"passed ({speed}x) computing nothing of its own"
    return f"speed {speed}x above its honest bound {bound}x" if speed > float(bound) else ""


# What the object checks refuse whatever the patterns say (the rest run, and must not gain).
REFUSED_BY_OBJECT_CHECKS = {
    "harness_override": "global_symbol",
    "work_before_main": "symbols",
    "forges_the_clock": "interposition",
    "finishes_from_a_signal": "symbols",
    "leaves_a_thread_running": "symbols",
    "writes_the_channel": "symbols",
    "calls_the_reference": "symbols",
}


# With the patterns on, a pattern refuses some attacks first: the credit rules must hold
# without them, so the default tier runs patterns off (and every check off); both in full.
TIERED_MODES = [pytest.param(m, marks=pytest.mark.full) if m == "patterns_on" else m for m in MODES]


@pytest.mark.parametrize("mode", TIERED_MODES)
def test_no_attack_class_gets_credit(mode: str) -> None:
    """Every CPU instance, in one evaluation per mode: no undeserved credit; with the
    object checks on, the ones they see are refused before anything runs."""
    found = attacks("cpu")
    results = evaluate(rows(found), **MODES[mode])
    verdicts = {name: (r.reason, r.measurements.get("speedup"), r.detail[:160])
                for name, r in zip(found, results, strict=True)}  # fmt: skip
    print(json.dumps(verdicts, indent=1))  # for the log: what each attack got
    credited = {name: why for (name, a), r in zip(found.items(), results, strict=True)
                if (why := undeserved(r, a["bound"]))}  # fmt: skip
    assert not credited, credited
    if mode != "checks_off":
        for name, rule in REFUSED_BY_OBJECT_CHECKS.items():
            reason, _, detail = verdicts[name]
            assert reason == "anti_cheat" and detail.startswith(rule + ":"), (name, detail)
    for r in results:  # every run was judged by a harness the solution did not share
        assert r.details.get("trust", "split") == "split", r.details


def test_poisoning_cached_reference_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 #7: a sample that slows the reference goes first with
    ``reference_times: cached``; it must store nothing, and the expert's own run stores
    the times every later sample is scored by (the least per size, never raised)."""
    monkeypatch.setenv("VIBES_CACHE_DIR", str(tmp_path / "cache"))
    cache = tmp_path / "cache" / "kernels" / "reference_times.json"
    task = "cpu_05_matmul"
    (poison,) = rows({"poisoner": attacks("cpu")["slows_reference_via_runtime_state"]})
    expert, naive = (samples_of(CPU_SET, kind, {task})[0] for kind in ("expert", "naive"))
    config = {"reference_times": "cached", **MODES["patterns_off"]}
    (poisoner,) = evaluate([poison], **config)
    assert not cache.exists() or json.loads(cache.read_text()) == {}
    assert undeserved(poisoner, "0.5") == ""
    (own,) = evaluate([expert], **config)
    ((key, entry),) = json.loads(cache.read_text()).items()
    assert key.endswith("|1t") and len(entry["ref_min_ms"]) == 3
    runs = own.details["runs"]  # the least per size over the expert's own runs
    assert entry["ref_min_ms"] == [min(run[i]["ref_min"] for run in runs) for i in range(3)]
    again, honest = evaluate([poison, naive], **config)
    assert json.loads(cache.read_text())[key]["ref_min_ms"] == entry["ref_min_ms"]
    for result in (again, honest):
        assert result.details["ref_cached_ms"] == entry["ref_min_ms"]
        assert undeserved(result, "0.5") == ""


# -- CUDA: what can be checked without a GPU -------------------------------------------


@needs_nvcc
@pytest.mark.parametrize("mode", TIERED_MODES[:2])
def test_cuda_variants_are_refused_at_compile_time(mode: str, gpus) -> None:  # type: ignore[no-untyped-def]
    """Without a GPU the object checks still see these before the sample is no_device."""
    gpus("")
    found = attacks("cuda")
    results = evaluate(rows(found), CUDA_SET, **MODES[mode])
    for (name, a), r in zip(found.items(), results, strict=True):
        refused = r.reason == "anti_cheat" and r.detail.startswith(a["refused"] + ":")
        assert refused, (name, r.reason, r.detail)


@needs_nvcc
def test_no_harness_function_is_linkable(tmp_path: Path) -> None:
    """The harness override, checked on both harnesses' objects: the CPU harness exports
    nothing of its own (internal linkage); nvcc gives the CUDA harness's anonymous
    namespace a per-file name, still exported: there the link check (harness_symbol) is
    what refuses a definition of one."""
    cpu = _harness_globals(CPU_SET / "tasks/class1/general/cpu_00_vector_add", "harness.cpp",
                           tmp_path)  # fmt: skip
    assert not [n for n in cpu if n.startswith("kh::")], cpu
    cuda = _harness_globals(CUDA_SET / "tasks/class1/general/cuda_00_vector_add", "harness.cu",
                            tmp_path)  # fmt: skip
    assert all("(anonymous namespace)" in n for n in cuda if n.startswith("kh::")), cuda


def _harness_globals(folder: Path, unit: str, tmp: Path) -> list[str]:
    """Demangled names of the globals a task's harness object defines."""
    obj = tmp / f"{unit}.o"
    common = folder.parents[3] / "common"
    compiler = ["nvcc"] if unit.endswith(".cu") else ["g++", "-fopenmp"]
    subprocess.run([*compiler, "-std=c++17", f"-I{common}", f"-I{folder}", "-c",
                    str(folder / unit), "-o", str(obj)], check=True, capture_output=True)  # fmt: skip
    out = subprocess.run(["nm", "-gC", "--defined-only", str(obj)], check=True,
                         capture_output=True, text=True).stdout  # fmt: skip
    return [line.split(" ", 2)[-1] for line in out.splitlines() if line.strip()]
