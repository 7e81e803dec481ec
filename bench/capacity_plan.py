"""The capacity plan of docs/scale-out.md as a model: what a cluster of N nodes of one type
evaluates per hour, and whether the nodes, the driver or the store is the limit.

    python bench/capacity_plan.py
    python bench/capacity_plan.py --store-json store.json --ray-json ray.json   # your measurements
    python bench/capacity_plan.py --node "swe 16vcpu=0.1667" --nodes 1,10,100,1000

Throughput of N nodes = min(N x per-node rate, store rate, driver rate): verdicts flow through
one driver and one store, nodes do not wait on each other. Per-node rates are measured on
this project's machines where possible (README: HumanEval batched 250-276 samples/s on 2
cores) and estimates otherwise (SWE-bench Lite in ~30 min on 16 cores; kernel timing
seconds per sample); every one can be overridden with --node NAME=RATE (results/s).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# Results per second of one node; (what it rests on).
NODES: dict[str, tuple[float, str]] = {
    "humaneval batched 32vcpu": (32 * 130.0, "measured 250-276/s on 2 idle cores"),
    "humaneval unbatched 32vcpu": (32 * 9.5, "measured 18.5-20.3/s on 2 cores"),
    "swe-bench warm 16vcpu": (300 / 1800, "estimate: Lite (300) in ~30 min at 16 workers"),
    "kernels 8xH100": (8 / 30.0, "estimate: 30 s of exclusive timing per sample"),
}
# Results per second one driver records; defaults measured by bench/store_rate.py and
# bench/ray_throughput.py on the shared 2-core machine (docs/scale-out.md).
STORE = {"sqlite": 1419.0, "postgresql": 672.0, "sqlite idle core": 6000.0}
# The driver's CPU per verdict through Ray (bench/ray_throughput.py, "driver CPU"): a unit
# of one sample costs a submission, a stream and a result (1.94 ms); a verdict inside a
# batched unit mostly just the result (0.8 ms).
DRIVER_MS = {"unit": 1.94, "batched": 0.8}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="1,4,16,64,256")
    parser.add_argument("--node", action="append", default=[], help="NAME=RESULTS_PER_S")
    parser.add_argument("--store-json", type=Path, help="bench/store_rate.py --json output")
    parser.add_argument("--ray-json", type=Path, help="bench/ray_throughput.py --json output")
    args = parser.parse_args()
    nodes = dict(NODES)
    for item in args.node:
        name, _, rate = item.rpartition("=")
        nodes[name] = (float(rate), "given")
    store = dict(STORE)
    if args.store_json:
        measured = json.loads(args.store_json.read_text())
        for backend in ("sqlite", "postgresql"):
            if backend in measured:
                store[backend] = float(measured[backend]["burst"]["events_per_s"])
    driver_ms = dict(DRIVER_MS)
    if args.ray_json:
        cases = json.loads(args.ray_json.read_text()).get("cases", {})
        for key, case in (("unit", "empty x1000"), ("batched", "humaneval batched")):
            if "ray_driver_cpu_ms_each" in cases.get(case, {}):
                driver_ms[key] = float(cases[case]["ray_driver_cpu_ms_each"])
    counts = [int(n) for n in args.nodes.split(",")]

    print(f"store: {', '.join(f'{k} {v:.0f}/s' for k, v in store.items())}; driver (one "
          f"core): {1000 / driver_ms['unit']:.0f} units/s, "
          f"{1000 / driver_ms['batched']:.0f} batched verdicts/s")  # fmt: skip
    for name, (rate, basis) in nodes.items():
        batched = "batched" in name and "unbatched" not in name
        driver = 1000.0 / driver_ms["batched" if batched else "unit"]
        print(f"\n{name}: {rate:.3g} results/s per node ({basis})")
        print(f"{'nodes':>6} {'cluster/h':>12} {'sqlite':>10} {'postgresql':>11}  limit")
        for n in counts:
            cluster = n * rate
            row = []
            for backend in ("sqlite", "postgresql"):
                row.append(min(cluster, store[backend], driver))
            limit = min(
                (cluster, "nodes"), (store["sqlite"], "store"), (driver, "driver")
            )[1]  # fmt: skip
            print(f"{n:6d} {cluster * 3600:12.3g} {row[0] * 3600:10.3g} "
                  f"{row[1] * 3600:11.3g}  {limit} (sqlite)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
