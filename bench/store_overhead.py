"""What recording into the result store costs: the same evaluation with and without it.

    python bench/store_overhead.py                    # HumanEval-X Rust, 500 samples
    python bench/store_overhead.py --store postgresql://vibes:vibes@127.0.0.1/vibes_test
    python bench/store_overhead.py --rounds 9 --no-batch

Default samples: for every HumanEval-X Rust task its canonical solution, a panicking body and
a body that does not compile, plus commented variants of a few solutions up to 500 (needs
../shared or VIBES_SHARED_DIR; falls back to examples/sanity). Every round prepares the
evaluation afresh (benchmark, tasks, samples, runner), as a new `vibes eval run` would; a
warm-up round of both sides is run first and not counted; the measured rounds alternate
"no store" and "store" so that machine noise hits both. The store side uses no cache (every
sample is evaluated) and includes opening the store, the run's events and closing it.
Reports medians and the spread of the per-round overhead. Exits 1 if the verdicts differ.
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

from vibes_eval import evaluation
from vibes_eval.api import make_config
from vibes_eval.core.types import SampleResult
from vibes_eval.runners.select import resolve_runner
from vibes_eval.runs import recording

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("VIBES_SHARED_DIR") or ROOT.parent / "shared")
HUMANEVAL_X = SHARED / "datasets" / "humaneval-x" / "humaneval_rust.jsonl.gz"
PANIC = '    panic!("not implemented");\n}\n'
NO_COMPILE = '    let x: i32 = "not a number";\n}\n'


def default_inputs(tmp: Path, n: int) -> tuple[Path, Path]:
    if not HUMANEVAL_X.exists():
        sanity = ROOT / "examples" / "sanity"
        return sanity / "problems.jsonl", sanity / "samples.jsonl"
    with gzip.open(HUMANEVAL_X, "rt") as fh:
        problems = [json.loads(line) for line in fh]
    rows = [
        {"task_id": p["task_id"], "completion": c}
        for p in problems
        for c in (p["canonical_solution"], PANIC, NO_COMPILE)
    ]
    for i, p in enumerate(problems * 10):
        if len(rows) >= n:
            break
        # A comment makes another completion: the engine evaluates identical ones once.
        rows.append({"task_id": p["task_id"], "completion": f"// v{i}\n" + p["canonical_solution"]})
    samples = tmp / f"humaneval_x_rust_{n}.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows[:n]))
    return HUMANEVAL_X, samples


def run_once(
    problems: Path, samples: Path, args: argparse.Namespace, store: str | None, workers: int
) -> tuple[float, int, dict[tuple[str, int], SampleResult]]:
    """One evaluation prepared from scratch (config, benchmark, tasks, samples, runner),
    timed from the start of the evaluation (with the store: its opening, the run's events
    and its closing). The toolchain lookup and crates are outside the clock: both sides
    would pay the same."""
    config = make_config(
        "humaneval-rust",
        {"problems": str(problems), "batch": args.batch, "enforce_policy": False,
         "limits": {"timeout_s": args.timeout}},
    )  # fmt: skip
    prepared = evaluation.prepare("humaneval-rust", config, samples)
    prepared.benchmark.environment()
    with resolve_runner(args.sandbox) as runner:
        start = time.perf_counter()
        if store is None:
            outcome = evaluation.run(prepared, runner, ks=[1], workers=workers)
        else:
            st = recording.open_store_for_run(store)
            assert st is not None
            with recording.start(
                st, prepared, runner, run_id=None, samples_path=samples, output_path=None,
                ks=[1], labels={"bench": "store_overhead"}, workers=workers, use_cache=False,
            ) as rec:  # fmt: skip
                outcome = evaluation.run(
                    prepared, runner, ks=[1], workers=workers, recorder=rec.recorder
                )
                rec.finish(outcome)
        elapsed = time.perf_counter() - start
    return elapsed, len(prepared.samples), outcome.results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path)
    parser.add_argument("--problems", type=Path)
    parser.add_argument("-n", type=int, default=500, help="samples generated (default 500)")
    parser.add_argument("--store", help="store URL or path (default: a fresh SQLite file)")
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("--workers", type=int, default=0, help="default: all cores")
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=6, help="measured rounds (default 6)")
    parser.add_argument("--batch", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()

    workers = args.workers or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="vibes-store-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        problems, samples = (
            (args.problems, args.samples) if args.samples else default_inputs(tmp, args.n)
        )
        store = args.store or str(tmp / "bench.sqlite")
        times: dict[str, list[float]] = {"no store": [], "store": []}
        verdicts: dict[str, dict] = {}
        n = 0
        for r in range(args.rounds + 1):  # round 0: the warm-up, not counted
            for name in ("no store", "store") if r % 2 == 0 else ("store", "no store"):
                elapsed, n, results = run_once(
                    problems, samples, args, store if name == "store" else None, workers
                )
                label = "warm-up" if r == 0 else f"round {r}"
                print(f"{label:>8} {name:>8}: {elapsed:7.2f}s", flush=True)
                if r == 0:
                    continue
                times[name].append(elapsed)
                v = {k: (res.passed, res.reason) for k, res in results.items()}
                if verdicts.setdefault(name, v) != v:
                    print(f"{name}: verdicts differ between rounds", file=sys.stderr)
                    return 1
    base, with_store = statistics.median(times["no store"]), statistics.median(times["store"])
    per_round = [100 * (s - b) / b for s, b in zip(times["store"], times["no store"], strict=True)]
    print(
        f"{n} samples, {workers} workers, sandbox {args.sandbox}, batch {args.batch}, "
        f"store {args.store or 'SQLite (temporary file)'}, {args.rounds} rounds after a warm-up"
    )
    print(f"median without store {base:.2f}s (range {min(times['no store']):.2f}-"
          f"{max(times['no store']):.2f}), with store {with_store:.2f}s (range "
          f"{min(times['store']):.2f}-{max(times['store']):.2f}): "
          f"{100 * (with_store - base) / base:+.1f}%")  # fmt: skip
    print("overhead per round: " + ", ".join(f"{x:+.1f}%" for x in per_round))
    if verdicts["no store"] != verdicts["store"]:
        print("verdicts differ between the two modes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
