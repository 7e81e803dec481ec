"""What recording into the result store costs: the same evaluation with and without it.

    python bench/store_overhead.py                    # HumanEval-X Rust, 500 samples
    python bench/store_overhead.py --store postgresql://vibes:vibes@127.0.0.1/vibes_test
    python bench/store_overhead.py --rounds 3 --no-batch

Default samples: for every HumanEval-X Rust task its canonical solution, a panicking body and
a body that does not compile, plus commented variants of a few solutions up to 500 (needs
../shared; falls back to examples/sanity). Rounds alternate "no store" and "store" on one
runner so that machine noise hits both; the store side uses no cache (every sample is
evaluated) and includes opening the store, the run's events and closing it. Exits 1 if the
verdicts differ.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from vibes_eval import evaluation
from vibes_eval.api import make_config
from vibes_eval.core.types import SampleResult
from vibes_eval.runners.select import resolve_runner
from vibes_eval.store import session

ROOT = Path(__file__).resolve().parents[1]
HUMANEVAL_X = ROOT.parent / "shared" / "datasets" / "humaneval-x" / "humaneval_rust.jsonl.gz"
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
    prepared: evaluation.Prepared, runner, samples: Path, store: str | None, workers: int
) -> tuple[float, dict[tuple[str, int], SampleResult]]:
    start = time.perf_counter()
    if store is None:
        outcome = evaluation.run(prepared, runner, ks=[1], workers=workers)
    else:
        st = session.open_store_for_run(store)
        assert st is not None
        with session.start(
            st, prepared, runner, run_id=None, samples_path=samples, output_path=None,
            ks=[1], labels={"bench": "store_overhead"}, workers=workers, use_cache=False,
        ) as recording:  # fmt: skip
            outcome = evaluation.run(
                prepared, runner, ks=[1], workers=workers, recorder=recording.recorder
            )
            recording.finish(outcome)
    return time.perf_counter() - start, outcome.results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path)
    parser.add_argument("--problems", type=Path)
    parser.add_argument("-n", type=int, default=500, help="samples generated (default 500)")
    parser.add_argument("--store", help="store URL or path (default: a fresh SQLite file)")
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("--workers", type=int, default=0, help="default: all cores")
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()

    import os

    workers = args.workers or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="vibes-store-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        problems, samples = (
            (args.problems, args.samples) if args.samples else default_inputs(tmp, args.n)
        )
        store = args.store or str(tmp / "bench.sqlite")
        config = make_config(
            "humaneval-rust",
            {"problems": str(problems), "batch": args.batch, "enforce_policy": False,
             "limits": {"timeout_s": args.timeout}},
        )  # fmt: skip
        prepared = evaluation.prepare("humaneval-rust", config, samples)
        prepared.benchmark.environment()  # crates are built before the clock starts
        times: dict[str, list[float]] = {"no store": [], "store": []}
        verdicts: dict[str, dict] = {}
        with resolve_runner(args.sandbox) as runner:
            for r in range(args.rounds):
                for name in ("no store", "store") if r % 2 == 0 else ("store", "no store"):
                    elapsed, results = run_once(
                        prepared, runner, samples, store if name == "store" else None, workers
                    )
                    times[name].append(elapsed)
                    verdicts[name] = {k: (v.passed, v.reason) for k, v in results.items()}
                    print(f"round {r + 1} {name:>8}: {elapsed:7.2f}s", flush=True)
    n = len(prepared.samples)
    base, with_store = statistics.median(times["no store"]), statistics.median(times["store"])
    print(
        f"{n} samples, {workers} workers, sandbox {args.sandbox}, batch {args.batch}, "
        f"store {args.store or 'SQLite (temporary file)'}"
    )
    print(f"median without store {base:.2f}s, with store {with_store:.2f}s: "
          f"{100 * (with_store - base) / base:+.1f}%")  # fmt: skip
    if verdicts["no store"] != verdicts["store"]:
        print("verdicts differ between the two modes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
