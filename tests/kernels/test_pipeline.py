"""The whole way on real compilers and sandboxes: the CPU example set built, validated and
timed; wrong, non-compiling and cheating solutions caught; the CUDA set built and checked
here and classified no_device (no GPU on this machine)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import vibes_eval
from tests.conftest import SANDBOX, run_cli
from tests.kernels.conftest import (
    CPU_SET,
    CUDA_SET,
    needs_gxx,
    needs_nvcc,
    samples_of,
    write_task,
)

pytestmark = [pytest.mark.slow, needs_gxx]

QUICK = {"repeats": 2, "trials": 3, "warmup": 1}


def evaluate(rows: list[dict[str, Any]], tasks: Path = CPU_SET, **config: Any) -> list[Any]:
    out = vibes_eval.evaluate("kernels", rows, config={"problems": str(tasks), **QUICK, **config},
                              sandbox=SANDBOX, ks=[1])  # fmt: skip
    return out.ordered


def test_naive_expert_wrong_and_broken_solutions() -> None:
    names = {"cpu_03_transpose", "cpu_04_softmax"}
    rows = [samples_of(CPU_SET, k, names) for k in ("naive", "expert", "wrong", "broken")]
    naive, expert, wrong, broken = (evaluate(r) for r in rows)
    for r in naive + expert:
        assert r.passed and r.reason == "passed", r.detail
        m = r.measurements
        assert m["repeats"] == 2 and m["speedup_min"] <= m["speedup"] <= m["speedup_max"]
        assert "speedup_spread" in m and m["kernel_ms"] > 0 and m["compiled"] == 1.0
        assert len(r.details["runs"]) == 2 and r.details["channel"] == "results file"
    # A loose bound on an order-of-magnitude effect (a naive transpose is ~10x slower).
    assert naive[0].measurements["speedup"] < 0.8
    assert all(r.reason == "failed" and r.detail for r in wrong)
    assert all(r.reason == "compile_error" and "undeclared_helper" in r.detail for r in broken)
    assert all(r.measurements["compiled"] == 0.0 for r in broken)


def test_every_cheat_is_caught_with_its_rule() -> None:
    rows = samples_of(CPU_SET, "cheats")
    assert len(rows) >= 12
    results = evaluate(rows, repeats=1)
    for row, r in zip(rows, results, strict=True):
        assert r.reason == "anti_cheat", (row["name"], r.reason, r.detail)
        assert r.detail.startswith(row["expect"] + ":"), (row["name"], r.detail)


def test_a_forged_clock_does_not_reach_the_harness() -> None:
    """The symbol check refuses a solution that replaces the clock (interposition); with
    it off, the forged clock lives only in the solution's program: the harness times from
    its own process, so the sample gets its honest speed (it used to pass at >10x)."""
    row = [r for r in samples_of(CPU_SET, "cheats") if r["name"] == "fake_clock"]
    (forged,) = evaluate(row, repeats=1, symbol_check=False)
    assert forged.passed and forged.measurements["speedup"] < 5, forged.measurements
    assert "audit" not in forged.measurements and forged.details["trust"] == "split"
    (caught,) = evaluate(row, repeats=1)
    assert caught.reason == "anti_cheat" and caught.detail.startswith("interposition:")


FOREIGN_HARNESS = r"""
// A CUDAHercules-style harness: the solution is included into this translation unit and
// the verdict is printed on stdout.
#include <chrono>
#include <cstdio>
#include <vector>
#include "solution.h"

static double ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int main() {
  std::vector<float> x(1 << 16, 1.0f), y(x.size()), z(x.size());
  printf("=== small ===\n");
  double best_ref = 1e9, best_sol = 1e9;
  for (int t = 0; t < 5; ++t) {
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < x.size(); ++i) z[i] = 2.0f * x[i];
    auto t1 = std::chrono::steady_clock::now();
    scale(x.data(), y.data(), (int)x.size());
    auto t2 = std::chrono::steady_clock::now();
    best_ref = ms(t0, t1) < best_ref ? ms(t0, t1) : best_ref;
    best_sol = ms(t1, t2) < best_sol ? ms(t1, t2) : best_sol;
  }
  printf("Ref time: %.4f ms (avg over 5 trials, min: %.4f ms)\n", best_ref, best_ref);
  printf("Kernel time: %.4f ms (avg over 5 trials, min: %.4f ms)\n", best_sol, best_sol);
  for (size_t i = 0; i < x.size(); ++i)
    if (y[i] != z[i]) { printf("Incorrect\n"); return 1; }
  printf("Passed\n");
  return 0;
}
"""

FOREIGN_SOLUTION = """#include <cstddef>
// y = 2 x
void scale(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) {
    y[i] = 2.0f * x[i];
  }
}
"""

PRINTS_PASSED = """#include <cstdio>
#include <cstdlib>
// prints the verdict itself and leaves before the harness can check anything
void scale(const float* x, float* y, int n) {
  (void)x, (void)y, (void)n;
  printf("=== small ===\\nRef time: 9 ms (avg over 5 trials, min: 9 ms)\\n");
  printf("Kernel time: 0.1 ms (avg over 5 trials, min: 0.1 ms)\\nPassed\\n");
  exit(0);
}
"""


def test_a_stdout_harness_like_cudahercules(tmp_path: Path) -> None:
    write_task(tmp_path, "scale", harness__cpp=FOREIGN_HARNESS, solution__h=FOREIGN_SOLUTION,
               Makefile="test: harness.cpp solution.h\n\tg++ -O2 -o test harness.cpp\n")  # fmt: skip
    task_id = "class1/general/scale"
    ok, lying, lying_unchecked = (
        evaluate([{"task_id": task_id, "solution": FOREIGN_SOLUTION}], tmp_path)[0],
        evaluate([{"task_id": task_id, "solution": PRINTS_PASSED}], tmp_path)[0],
        evaluate([{"task_id": task_id, "solution": PRINTS_PASSED}], tmp_path, symbol_check=False)[
            0
        ],
    )
    assert ok.passed and ok.details["channel"] == "stdout (untrusted)"
    assert [s["label"] for s in ok.details["runs"][0]] == ["small"]
    assert lying.reason == "anti_cheat" and re.search(r"\bputs\b|\bprintf\b", lying.detail)
    # Without the symbol check, a harness that trusts stdout is fooled (the anchor's weakness).
    assert lying_unchecked.passed and lying_unchecked.measurements["speedup"] > 10


def test_samples_from_a_directory_and_the_cli_report(tmp_path: Path) -> None:
    task = CPU_SET / "tasks/class1/general/cpu_07_histogram"
    folder = tmp_path / "sols/class1/general/cpu_07_histogram"
    folder.mkdir(parents=True)
    (folder / "solution.h").write_text((task / "reference.h").read_text())
    store = tmp_path / "store.sqlite"
    proc = run_cli("eval", "run", "kernels", "--tasks", str(CPU_SET), "--samples",
                   str(tmp_path / "sols"), "--store", str(store), "--run-id", "dir", "--k", "1",
                   "--sandbox", SANDBOX, "--set", "repeats=1", "--set", "trials=3")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "fast_1.05" in proc.stdout and "geomean_speed" in proc.stdout
    shown = run_cli("eval", "results", "dir", "--store", str(store), "--format", "json")
    detail = json.loads(shown.stdout)
    assert detail["metrics"]["pass_rate"] == 1.0 and "fast_0.8" in detail["metrics"]


EXITS_ON_HOST = """#include <cstdlib>
#include <cuda_runtime.h>

__device__ float twice(float v) { return 2.f * v; }

__global__ void scan_serial(const float* x, float* y, int n) {
  float s = 0.f;
  for (int i = 0; i < n; ++i) y[i] = s += twice(x[i]) / 2.f;
}

void inclusive_scan(const float* x, float* y, int n) {
  scan_serial<<<1, 1>>>(x, y, n);
  if (n < 0) exit(0);
}
"""


@needs_nvcc
def test_the_cuda_set_builds_and_is_no_device_here(gpus) -> None:  # type: ignore[no-untyped-def]
    """Compile-only on this machine: built, symbol-checked, then no_device; a cheat the
    symbol and PTX checks see is still caught without a GPU."""
    gpus("")
    rows = samples_of(CUDA_SET, "naive", {"cuda_00_vector_add"})
    rows += samples_of(CUDA_SET, "broken", {"cuda_00_vector_add"})
    rows += [r for r in samples_of(CUDA_SET, "cheats") if r["name"] == "device_printf"]
    # nvcc's host stub of a non-inline __device__ function calls exit: not the solution's.
    rows += samples_of(CUDA_SET, "expert", {"cuda_02_prefix_scan"})
    rows += [{"task_id": "class1/general/cuda_02_prefix_scan", "solution": EXITS_ON_HOST}]
    naive, broken, cheat, stub, exits = evaluate(rows, CUDA_SET)
    assert naive.reason == "no_device" and naive.measurements["compiled"] == 1.0
    assert broken.reason == "compile_error"
    assert cheat.reason == "anti_cheat" and cheat.detail.startswith("device_io:")
    assert stub.reason == "no_device", stub.detail
    assert (
        exits.reason == "anti_cheat"
        and exits.detail.startswith("symbols:")
        and "exit" in exits.detail
    )


@needs_nvcc
def test_a_cuda_binary_without_a_driver_is_no_device_not_wrong(gpus) -> None:  # type: ignore[no-untyped-def]
    """With a GPU listed but no driver (VIBES_GPUS), the whole GPU path runs: `make ref`
    for sm_90, the build, the symbol check, the products carried into a session that holds
    the GPU, the run, which fails in the CUDA runtime: no_device, never `failed`."""
    gpus("0:NVIDIA H100 80GB HBM3:9.0")
    (r,) = evaluate(samples_of(CUDA_SET, "expert", {"cuda_01_reduce_sum"}), CUDA_SET, repeats=1)
    assert r.reason == "no_device", (r.reason, r.detail, r.stderr)
    assert "driver" in r.detail.lower() or "device" in r.detail.lower()
    assert r.details["device"] == "NVIDIA H100 80GB HBM3 (sm_90)"


# -- issue 26: credit from the solution's own outputs, through the entry point only ----------


def _cheat(name: str, **config: Any) -> Any:
    row = [r for r in samples_of(CPU_SET, "cheats") if r["name"] == name]
    (result,) = evaluate(row, repeats=1, **config)
    return result


def test_checked_program_is_not_the_built_program() -> None:
    """`#if __has_include("test")` showed the old check (compiled next to the build's
    ./test) a clean kernel while the build linked a forged clock: the object checked is
    now compiled once, away from build products, and linked as it is."""
    caught = _cheat("has_include_test")
    assert caught.reason == "anti_cheat" and caught.detail.startswith("interposition:")


def test_harness_function_replaced_at_link_time() -> None:
    """A strong kh::Outputs<float>::judge used to beat the harness's inline one: every
    output matched. Now the harness's functions have internal linkage and judge in a
    process the solution is not linked into: even unchecked, the forgery computes nothing
    and fails; checked, the link check refuses the extra global."""
    forged = _cheat("replace_judge", symbol_check=False)
    assert forged.reason == "anti_cheat" and forged.detail.startswith("no_output:"), forged.detail
    caught = _cheat("replace_judge")
    assert caught.reason == "anti_cheat" and caught.detail.startswith("global_symbol:")
    assert "_ZN2kh5CheckIfE5judge" in caught.detail


def test_work_before_main_through_an_init_section() -> None:
    caught = _cheat("init_section")
    assert caught.reason == "anti_cheat" and caught.detail.startswith("init_section:")


ALL_CORES = """#include <omp.h>
// Asks OpenMP for every core the process may use; its output is wrong if it got more than
// one, so a pass proves the timing run was held to cpu_threads = 1.
void vector_add(const float* a, const float* b, float* c, int n) {
  const int cores = omp_get_num_procs();
  omp_set_num_threads(cores);
  const float off = cores > 1 ? 1.f : 0.f;
#pragma omp parallel for
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i] + off;
}
"""


def test_more_cores_than_allowed() -> None:
    import os

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU here: nothing to hold the run back from")
    row = {"task_id": "class1/general/cpu_00_vector_add", "solution": ALL_CORES}
    (result,) = evaluate([row], repeats=1)
    assert result.passed, result.detail
