"""How many verdicts per second the result store takes: the ceiling of one driver, whatever
the cluster behind it (docs/scale-out.md, "Where the driver and the store become the
bottleneck").

    python bench/store_rate.py                        # SQLite, and PostgreSQL when it answers
    python bench/store_rate.py --events 20000 --size swe

Each backend gets a fresh store and a run of N samples (HumanEval-X Rust tasks when
../shared is there, else the sanity set's, with distinct completions), then:

- burst: one thread hands every verdict to the run's recorder as fast as it can (what the
  Ray driver does while results stream in): the writer commits whatever queued up in one
  transaction (group commit). Events/s = N / time until the last one is durable.
- one by one: each verdict waits for its own commit (a trickle of results, one at a time):
  the rate a slow trickle costs in transactions, the floor.

The driver's CPU per event (both threads, SQLite's work included; PostgreSQL's server
work is not) tells what an idle core would sustain, which wall-clock rates on a shared
machine do not.

``--size``: humaneval (about 1 kB of event: detail, a little output, measurements) or swe
(about 12 kB: a SWE-bench report with per-test statuses and a log tail).
"""

from __future__ import annotations

import argparse
import gzip
import json
import secrets
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

from vibes_eval import evaluation
from vibes_eval.api import make_config
from vibes_eval.core.types import Reason, SampleResult
from vibes_eval.runners.select import resolve_runner
from vibes_eval.runs import recording

ROOT = Path(__file__).resolve().parents[1]
HUMANEVAL_X = ROOT.parent / "shared" / "datasets" / "humaneval-x" / "humaneval_rust.jsonl.gz"
POSTGRES = "postgresql://vibes:vibes@127.0.0.1:5432/vibes_test"


def inputs(tmp: Path, n: int) -> tuple[Path, Path]:
    problems = HUMANEVAL_X if HUMANEVAL_X.exists() else ROOT / "examples/sanity/problems.jsonl"
    opener = gzip.open if problems.suffix == ".gz" else open
    with opener(problems, "rt") as fh:
        tasks = [json.loads(line) for line in fh]
    samples = tmp / "samples.jsonl"
    with samples.open("w") as fh:
        for i in range(n):
            p = tasks[i % len(tasks)]
            completion = f"// v{i}\n" + p.get("canonical_solution", "    todo!()\n}\n")
            fh.write(json.dumps({"task_id": p["task_id"], "completion": completion}) + "\n")
    return problems, samples


def verdict(sample, size: str) -> SampleResult:
    passed = sample.index % 3 != 0
    details: dict = {}
    stdout = "running 3 tests\ntest tests::it_works ... ok\n" * 3
    if size == "swe":
        tests = {f"tests/test_mod.py::test_case_{i}": "PASSED" for i in range(120)}
        details = {"status": "completed", "report": {"tests_status": tests},
                   "log_tail": "x" * 4000}  # fmt: skip
    return SampleResult(
        task_id=sample.task_id,
        index=sample.index,
        passed=passed,
        reason=Reason.PASSED if passed else Reason.FAILED,
        detail="" if passed else "assertion failed: left == right\n  left: 3\n right: 4",
        completion_hash=sample.completion_hash,
        measurements={"wall_s": 0.42, "compile_s": 0.31, "run_s": 0.05, "cpu_s": 0.36},
        details=details,
        stdout=stdout,
    )


def one_store(spec: str, prepared: evaluation.Prepared, samples: Path, size: str) -> dict:
    runner = resolve_runner("process")  # only named in the run's identity: nothing runs
    results = [verdict(s, size) for s in prepared.samples]
    out = {}
    for mode in ("burst", "one by one"):
        st = recording.open_store_for_run(spec)
        assert st is not None
        with recording.start(
            st, prepared, runner, run_id=None, samples_path=samples, output_path=None,
            ks=[1], labels={"bench": "store_rate"}, workers=1, use_cache=False,
        ) as rec:  # fmt: skip
            recorder = rec.recorder
            todo = results if mode == "burst" else results[: max(200, len(results) // 20)]
            start, cpu = time.perf_counter(), time.process_time()
            if mode == "burst":
                for r in todo:
                    recorder.record_then(r, lambda: None)
                recorder.flush()
            else:
                for r in todo:
                    recorder.record(r)
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            commits = rec.writer.commits
        out[mode] = {"events": len(todo), "seconds": round(elapsed, 3),
                     "events_per_s": round(len(todo) / elapsed), "commits": commits,
                     "driver_cpu_us_per_event": round(cpu / len(todo) * 1e6)}  # fmt: skip
    runner.close()
    return out


def postgres_schema(url: str) -> tuple[str, object] | None:
    """A URL on a fresh schema, and the engine to drop it; None when no server answers."""
    from sqlalchemy import create_engine, text

    driver = "postgresql+psycopg://" + url.split("://", 1)[1]
    try:
        admin = create_engine(driver, connect_args={"connect_timeout": 3})
        name = "bench_" + secrets.token_hex(4)
        with admin.begin() as conn:
            conn.execute(text(f"create schema {name}"))
    except Exception as exc:
        print(f"PostgreSQL skipped: {str(exc).splitlines()[0][:120]}", file=sys.stderr)
        return None
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-csearch_path={name}')}", (admin, name)


def drop_schema(handle: object) -> None:
    from sqlalchemy import text

    admin, name = handle  # type: ignore[misc]
    with admin.begin() as conn:
        conn.execute(text(f"drop schema {name} cascade"))
    admin.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10000)
    parser.add_argument("--size", choices=("humaneval", "swe"), default="humaneval")
    parser.add_argument("--postgres", default=POSTGRES, help="'none' to skip PostgreSQL")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="store-rate-") as tmp:
        problems, samples = inputs(Path(tmp), args.events)
        config = make_config("humaneval-rust", {"problems": str(problems)})
        prepared = evaluation.prepare("humaneval-rust", config, samples)
        event_bytes = len(
            json.dumps(verdict(prepared.samples[1], args.size).model_dump(mode="json"))
            + json.dumps(prepared.samples[1].record)
        )
        report: dict = {"events": args.events, "size": args.size, "event_bytes": event_bytes}
        report["sqlite"] = one_store(str(Path(tmp) / "rate.sqlite"), prepared, samples, args.size)
        pg = postgres_schema(args.postgres) if args.postgres != "none" else None
        if pg is not None:
            url, handle = pg
            try:
                report["postgresql"] = one_store(url, prepared, samples, args.size)
            finally:
                drop_schema(handle)
    print(f"{args.events} verdicts of ~{event_bytes} bytes ({args.size}), "
          f"{threading.active_count()} threads")  # fmt: skip
    for backend in ("sqlite", "postgresql"):
        for mode, m in report.get(backend, {}).items():
            print(f"{backend:10} {mode:10}: {m['events_per_s']:7d} events/s "
                  f"({m['events']} in {m['seconds']} s, {m['commits']} commits, "
                  f"{m['driver_cpu_us_per_event']} us of this process's CPU each)")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
