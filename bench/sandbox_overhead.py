"""Per-exec overhead of each sandbox runner over a plain subprocess, measured in one run.

    .venv/bin/python bench/sandbox_overhead.py [--runs N] [--runners landlock,bwrap,...]
        [--job]

For each runner, pairs of ``subprocess.run(["/bin/true"])`` and ``runner.execute`` of
``/bin/true`` in one live session are timed back to back, so machine noise hits both
alike; medians are reported in milliseconds and as a ratio to the plain subprocess.
``--job`` also times a whole HumanEval-style job (rustc --test of a small file, then the
test binary) per runner.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from vibes_eval.core.errors import RunnerUnavailable
from vibes_eval.core.registry import RUNNERS
from vibes_eval.core.runner import Session, SessionSpec, TaskRunner
from vibes_eval.core.types import Limits
from vibes_eval.runners.select import resolve_runner

DEFAULT_RUNNERS = ["process", "landlock", "bwrap", "firejail", "docker"]
SLOW = {"firejail": 3, "docker": 10}  # fewer runs for these: each takes far longer
PROGRAM = (
    "fn add(a: i32, b: i32) -> i32 { a + b }\n#[test]\nfn adds() { assert_eq!(add(2, 3), 5); }\n"
)


def _time(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _job(runner: TaskRunner | None, sysroot: Path) -> float:
    """Seconds for compile + run of PROGRAM; ``runner`` None: plain subprocesses."""
    rustc = [str(sysroot / "bin" / "rustc"), "--edition", "2021", "--test", "main.rs",
             "-o", "main", "-C", "strip=debuginfo"]  # fmt: skip
    start = time.perf_counter()
    if runner is None:
        work = Path(subprocess.check_output(["mktemp", "-d"], text=True).strip())
        (work / "main.rs").write_text(PROGRAM)
        subprocess.run(rustc, cwd=work, check=True, capture_output=True)
        subprocess.run(["./main", "--test-threads=1"], cwd=work, check=True, capture_output=True)
        shutil.rmtree(work)
    else:
        spec = SessionSpec(label="bench-job", readonly_paths=[sysroot], files={"main.rs": PROGRAM})
        s = runner.prepare(spec)
        env = {"PATH": f"{sysroot / 'bin'}:/usr/bin:/bin"}
        assert runner.execute(s, rustc, Limits(timeout_s=60), env=env).ok
        assert runner.execute(s, ["./main", "--test-threads=1"], Limits()).ok
        runner.cleanup(s)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200, help="rounds of /bin/true per runner")
    ap.add_argument("--runners", default=",".join(DEFAULT_RUNNERS))
    ap.add_argument("--job", action="store_true", help="also time a whole rustc+test job")
    args = ap.parse_args()

    runners: dict[str, TaskRunner] = {}
    sessions: dict[str, Session] = {}
    for name in args.runners.split(","):
        if name not in RUNNERS:
            ap.error(f"unknown runner {name}")
        try:
            runners[name] = resolve_runner(name)
        except RunnerUnavailable as exc:
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        sessions[name] = runners[name].prepare(SessionSpec(label="bench"))
        runners[name].execute(sessions[name], ["/bin/true"], Limits())  # warm up

    # Pairs: a plain subprocess, then the runner, so both see the same load. Runners go
    # one after another with a pause between, so one runner's background clean-up (netns
    # teardown, dockerd) does not land in another's numbers.
    results: dict[str, tuple[float, float, int]] = {}
    for name, runner in runners.items():
        time.sleep(1.0)
        s = sessions[name]
        plain: list[float] = []
        mine: list[float] = []
        for _ in range(max(10, args.runs // SLOW.get(name, 1))):
            plain.append(_time(lambda: subprocess.run(["/bin/true"], check=True)))
            mine.append(_time(lambda r=runner, s=s: r.execute(s, ["/bin/true"], Limits())))
        results[name] = (statistics.median(plain), statistics.median(mine), len(mine))

    print("per exec of /bin/true: medians, each runner paired with a plain subprocess run")
    print(
        f"{'runner':<12}{'plain ms':>10}{'runner ms':>11}{'overhead ms':>13}{'ratio':>7}{'runs':>6}"
    )
    for name, (base, med, n) in results.items():
        print(f"{name:<12}{base * 1e3:>10.2f}{med * 1e3:>11.2f}{(med - base) * 1e3:>13.2f}"
              f"{med / base:>7.1f}{n:>6}")  # fmt: skip

    if args.job:
        rustc = shutil.which("rustc")
        if rustc is None:
            print("no rustc: --job skipped", file=sys.stderr)
        else:
            sysroot = Path(
                subprocess.check_output([rustc, "--print", "sysroot"], text=True).strip()
            )
            plain_job = statistics.median(_job(None, sysroot) for _ in range(5))
            print("\nwhole job (rustc --test + test run), median of 5")
            print(f"{'subprocess':<12}{plain_job:>8.3f} s{1:>8.2f}")
            for name, runner in runners.items():
                t = statistics.median(_job(runner, sysroot) for _ in range(5))
                print(f"{name:<12}{t:>8.3f} s{t / plain_job:>8.2f}")

    for name, runner in runners.items():
        runner.cleanup(sessions[name])
        runner.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
