"""`make demo-kernels`: evaluate naive, expert (resubmitted), wrong, non-compiling and
cheating solutions on the CPU task set, and print the metrics per kind of solution.

    .venv/bin/python examples/kernels/demo.py [--set examples/kernels/cpu] [--repeats 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import vibes_eval
from vibes_eval.benchmarks.kernels.scoring import cheat_check, kind_table, sample_lines

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", type=Path, default=HERE / "cpu")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--sandbox", default="auto")
    ap.add_argument("--store", default=None, help="record the run here (default: none)")
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("make_samples", HERE / "make_samples.py")
    assert spec and spec.loader
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    with tempfile.TemporaryDirectory() as tmp:
        maker.main(args.set, Path(tmp))
        rows = [json.loads(line) for line in (Path(tmp) / "all.jsonl").read_text().splitlines()]
    print(f"evaluating {len(rows)} samples (repeats={args.repeats}); this takes minutes",
          file=sys.stderr)  # fmt: skip
    out = vibes_eval.evaluate("kernels", rows, config={"problems": str(args.set),
                              "repeats": args.repeats}, sandbox=args.sandbox,
                              store=args.store, ks=[1], use_cache=False)  # fmt: skip
    exported = out.rows()
    groups = defaultdict(list)
    for row, result in zip(exported, out.ordered, strict=True):
        groups[row.get("kind", "?")].append(result)
    print("\n".join(sample_lines(exported)))
    print()
    print(kind_table(groups))
    caught, cheats, other = cheat_check(exported)
    print(f"\ncheats caught with the expected rule: {caught} of {cheats}")
    for line in other:
        print(f"  {line}")
    print(f"{out.elapsed_s:.0f}s" + (f"; run {out.run_id} in {args.store}" if out.run_id else ""))


if __name__ == "__main__":
    main()
