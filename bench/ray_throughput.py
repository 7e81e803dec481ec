"""Throughput through Ray against local threads on this machine, measured in the same run:
what ``--executor ray`` costs per unit when the cluster is this one machine.

    python bench/ray_throughput.py                      # HumanEval-X Rust when ../shared is there
    python bench/ray_throughput.py --problems P --samples S --rounds 3 --json out.json

One Ray cluster on this machine (`ray start` processes: a head node with as many CPUs as
the local run has workers, so both sides have the same slots), then, in alternating rounds
so machine noise hits both:

- HumanEval-Rust, batched and unbatched: samples/s local and through Ray, and their ratio.
- Empty units (the test suite's toy benchmark: a verdict from the completion's text, no
  process started), 200 and 1000 of them: the executor's cost alone. Per-unit overhead =
  (t(1000) - t(200)) / 800 on each side; fixed cost = t(200) - 200 x per-unit (Ray: starting
  a worker on each node, shipping the tasks).

The cluster's start-up is reported apart: it is paid once per cluster, not per run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the toy benchmark lives with the tests

from tests.scaleout import toy  # noqa: E402

from vibes_eval import api  # noqa: E402
from vibes_eval.core import registry  # noqa: E402
from vibes_eval.core.system import usable_cpus  # noqa: E402
from vibes_eval.scaleout.local_cluster import LocalCluster  # noqa: E402

HUMANEVAL_X = ROOT.parent / "shared" / "datasets" / "humaneval-x" / "humaneval_rust.jsonl.gz"
PANIC = '    panic!("not implemented");\n}\n'


def humaneval_inputs(tmp: Path, problems: Path | None, samples: Path | None) -> tuple[Path, Path]:
    if problems and samples:
        return problems, samples
    source = problems or (HUMANEVAL_X if HUMANEVAL_X.exists() else None)
    if source is None:
        sanity = ROOT / "examples" / "sanity"
        return sanity / "problems.jsonl", sanity / "samples.jsonl"
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt") as fh:
        tasks = [json.loads(line) for line in fh]
    out = tmp / "samples.jsonl"
    with out.open("w") as fh:
        for p in tasks:
            for c in (p["canonical_solution"], PANIC):
                fh.write(json.dumps({"task_id": p["task_id"], "completion": c}) + "\n")
    return source, out


def timed(**kw: Any) -> tuple[float, float, dict[tuple[str, int], tuple[bool, str]]]:
    """Wall seconds, this process's CPU seconds (the driver's; local runs evaluate in
    child processes, whose CPU is not counted), verdicts."""
    start, cpu = time.perf_counter(), time.process_time()
    outcome = api.evaluate(ks=[1], use_cache=False, **kw)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return elapsed, cpu, {k: (r.passed, r.reason) for k, r in outcome.results.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=Path)
    parser.add_argument("--samples", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=usable_cpus())
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    registry.BENCHMARKS[toy.NAME] = toy.TARGET
    env = {"PYTHONPATH": str(ROOT), "VIBES_GPUS": ""}
    report: dict[str, Any] = {"workers": args.workers, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="ray-bench-") as tmp:
        problems, samples = humaneval_inputs(Path(tmp), args.problems, args.samples)
        n_samples = sum(1 for _ in samples.open())
        start = time.perf_counter()
        cluster = LocalCluster(num_cpus=args.workers, env=env)
        try:
            cluster.start(env={"VIBES_TEST_NODE": "head"})
            report["cluster_start_s"] = round(time.perf_counter() - start, 1)
            report.update(measure(args, cluster, problems, samples, n_samples))
        finally:
            cluster.stop()
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0 if report.get("same_verdicts", True) else 1


def measure(
    args: argparse.Namespace, cluster: LocalCluster, problems: Path, samples: Path, n: int
) -> dict[str, Any]:
    sides = {"local": {}, "ray": {"executor": "ray", "ray_address": cluster.address}}
    times: dict[str, list[float]] = {}
    same = True
    cases: list[tuple[str, dict[str, Any], int]] = []
    for batch in (True, False):
        config = {"problems": str(problems), "batch": batch}
        he = {"benchmark": "humaneval-rust", "samples": samples, "config": config}
        cases.append((f"humaneval {'batched' if batch else 'unbatched'}", he, n))
    for units in (200, 1000):
        rows = [{"task_id": f"T/{i % 50}", "completion": f"pass{'' if i % 2 else ' '}"}
                for i in range(units)]  # fmt: skip
        rows = [{"task_id": r["task_id"], "completion": "pass" if i % 7 else "fail"}
                for i, r in enumerate(rows)]  # fmt: skip
        cfg = {"tasks": 50}
        for i, r in enumerate(rows):  # distinct completions: no de-duplication
            r["completion"] = r["completion"] + " " * (i // 50)
        cases.append((f"empty x{units}", {"benchmark": toy.NAME, "samples": rows, "config": cfg},
                      units))  # fmt: skip
    for _ in range(args.rounds):
        for name, case, _n in cases:
            seen = {}
            for side, extra in sides.items():
                kw = {**case, **extra, "sandbox": args.sandbox, "workers": args.workers}
                elapsed, cpu, verdicts = timed(**kw)
                times.setdefault(f"{name}|{side}", []).append(elapsed)
                times.setdefault(f"{name}|{side}|cpu", []).append(cpu)
                seen[side] = verdicts
            same = same and seen["local"] == seen["ray"]
    out: dict[str, Any] = {"same_verdicts": same, "cases": {}}
    for name, _case, units in cases:
        loc = statistics.median(times[f"{name}|local"])
        ray = statistics.median(times[f"{name}|ray"])
        out["cases"][name] = {"units_or_samples": units, "local_s": round(loc, 2),
                              "ray_s": round(ray, 2), "ray_over_local": round(ray / loc, 2),
                              "local_per_s": round(units / loc, 1),
                              "ray_per_s": round(units / ray, 1),
                              "ray_driver_cpu_ms_each": round(
                                  statistics.median(times[f"{name}|ray|cpu"]) / units * 1e3, 3
                              )}  # fmt: skip
    small, big = out["cases"]["empty x200"], out["cases"]["empty x1000"]
    for side in ("local", "ray"):
        per_unit = (big[f"{side}_s"] - small[f"{side}_s"]) / 800
        out[f"{side}_per_unit_ms"] = round(per_unit * 1000, 2)
        out[f"{side}_fixed_s"] = round(small[f"{side}_s"] - 200 * per_unit, 2)
    return out


def print_report(r: dict[str, Any]) -> None:
    print(f"cluster start-up: {r.get('cluster_start_s')} s (once per cluster); {r['workers']} "
          f"slots each side; verdicts identical: {r.get('same_verdicts')}")  # fmt: skip
    for name, c in r.get("cases", {}).items():
        print(f"{name:20} local {c['local_s']:7.2f} s ({c['local_per_s']:7.1f}/s)  "
              f"ray {c['ray_s']:7.2f} s ({c['ray_per_s']:7.1f}/s)  "
              f"ray/local {c['ray_over_local']:.2f}  driver CPU "
              f"{c['ray_driver_cpu_ms_each']} ms each")  # fmt: skip
    if "ray_per_unit_ms" in r:
        print(
            f"per unit: local {r['local_per_unit_ms']} ms, ray {r['ray_per_unit_ms']} ms; "
            f"fixed per run: local {r['local_fixed_s']} s, ray {r['ray_fixed_s']} s"
        )


if __name__ == "__main__":
    sys.exit(main())
