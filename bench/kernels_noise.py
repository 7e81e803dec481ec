"""How noisy is kernel timing on this machine? The expert reference of every CPU task is
resubmitted as the solution (its true speed is 1.0), and the naive solution beside it,
each timed `--repeats` times per evaluation, in `--rounds` separate evaluations.

Reported per task: the median speed, the spread within an evaluation (max - min over
repeats, relative to the median) and across evaluations; overall: how far expert-vs-expert
lands from 1.0 (the noise floor that fast_1.05's 5% margin has to cover), and the
min-based speed (what is scored) against the mean-based one.

    .venv/bin/python bench/kernels_noise.py [--repeats 5] [--rounds 2] [--trials 20]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import vibes_eval  # noqa: E402

CPU_SET = ROOT / "examples" / "kernels" / "cpu"


def samples() -> list[dict[str, str]]:
    rows = []
    for path in sorted(CPU_SET.glob("tasks/**/task.yaml")):
        task_id = "class1/general/" + path.parent.name
        rows.append({"task_id": task_id, "kind": "expert",
                     "solution": (path.parent / "reference.h").read_text()})  # fmt: skip
        rows.append({"task_id": task_id, "kind": "naive",
                     "solution": (path.parent / "solution.h").read_text()})  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--trials", type=int, default=None)
    ap.add_argument("--sandbox", default="auto")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = ap.parse_args()
    rows = samples()
    config = {"problems": str(CPU_SET), "repeats": args.repeats}
    if args.trials:
        config["trials"] = args.trials
    rounds: list[list] = []
    start = time.monotonic()
    for _ in range(args.rounds):
        out = vibes_eval.evaluate("kernels", rows, config=config, sandbox=args.sandbox,
                                  use_cache=False, ks=[1])  # fmt: skip
        rounds.append(out.ordered)
    elapsed = time.monotonic() - start
    report = summarize(rows, rounds)
    report.update(repeats=args.repeats, rounds=args.rounds, elapsed_s=round(elapsed, 1))
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


def summarize(rows: list[dict[str, str]], rounds: list[list]) -> dict:
    per_task = []
    for i, row in enumerate(rows):
        got = [r[i] for r in rounds]
        if not all(r.passed for r in got):
            per_task.append({"task": row["task_id"], "kind": row["kind"],
                             "failed": [r.reason for r in got]})  # fmt: skip
            continue
        medians = [r.measurements["speedup"] for r in got]
        ordered = sorted(r.measurements["speedup_mean_based"] for r in got)
        per_task.append(
            {
                "task": row["task_id"].rsplit("/", 1)[-1],
                "kind": row["kind"],
                "speed": round(statistics.median(medians), 4),
                "within": round(max(r.measurements["speedup_spread"] for r in got), 4),
                "across": round((max(medians) - min(medians)) / statistics.median(medians), 4),
                "mean_based": round(statistics.median(ordered), 4),
                "runs": [s for r in got for s in r.details["speedups"]],
            }
        )
    expert = [t for t in per_task if t["kind"] == "expert" and "speed" in t]
    runs = [s for t in expert for s in t["runs"]]
    logs = [abs(math.log(s)) for s in runs if s > 0]
    naive = [t["speed"] for t in per_task if t["kind"] == "naive" and "speed" in t]
    share = (lambda pred: round(sum(map(pred, runs)) / len(runs), 4)) if runs else (lambda _: None)
    return {
        "tasks": per_task,
        "expert_vs_expert": {
            "runs": len(runs),
            "median_abs_log_error": round(statistics.median(logs), 4) if logs else None,
            "share_outside_5pct": share(lambda s: not 0.95 <= s <= 1.05),
            "share_above_1.05": share(lambda s: s > 1.05),
            "worst": [round(min(runs), 4), round(max(runs), 4)] if runs else None,
        },
        "naive_geomean": geomean(naive),
        "expert_geomean": geomean([t["speed"] for t in expert]),
    }


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v > 0]
    return round(math.exp(sum(map(math.log, values)) / len(values)), 4) if values else None


def print_report(report: dict) -> None:
    print(f"{'task':22} {'kind':7} {'speed':>7} {'within':>7} {'across':>7} {'mean-based':>10}")
    for t in report["tasks"]:
        if "failed" in t:
            print(f"{t['task']:22} {t['kind']:7} failed: {t['failed']}")
            continue
        print(f"{t['task']:22} {t['kind']:7} {t['speed']:7.3f} {t['within']:7.3f} "
              f"{t['across']:7.3f} {t['mean_based']:10.3f}")  # fmt: skip
    e = report["expert_vs_expert"]
    print(
        f"\nexpert resubmitted (true speed 1.0), {e['runs']} timed runs: median |log speed| "
        f"{e['median_abs_log_error']}, outside [0.95, 1.05]: {e['share_outside_5pct']}, "
        f"above 1.05 (a false fast_1.05): {e['share_above_1.05']}, range {e['worst']}"
    )
    print(
        f"geomean speed: naive {report['naive_geomean']}, expert {report['expert_geomean']}; "
        f"{report['rounds']} rounds x {report['repeats']} repeats in {report['elapsed_s']}s"
    )


if __name__ == "__main__":
    main()
