"""Batched evaluation: many samples compiled as modules of one crate, one test binary.

A batch is one work dir holding each sample's whole program as `t_<i>.rs` (the same text a
lone compile would see) and a crate root `#[path = "t_<i>.rs"] mod t_<i>;` per sample.

Verdicts must equal one-at-a-time evaluation. How each way batching could change one is
handled (docs/batching.md has the full list):

- compile: errors are attributed to samples by the file names in rustc's JSON spans; those
  samples fail, the rest compile again. An error no sample can be blamed for splits the
  batch in two. A parse error stops rustc at the first broken file, so one `rustfmt` pass
  then finds every syntax error at once; those samples are re-checked alone.
- constructs that mean something else inside a module (`crate::`, `super::`, `#![...]`,
  `#[macro_export]`, `#[no_mangle]`, `file!()`, `module_path!()`, `type_name`) never enter a
  batch: such samples are evaluated alone.
- run: samples that could touch process-wide state (env, cwd, exit/abort, threads, stdout,
  panic hooks, unsafe...) run alone, in their own process, from the batch binary. The others
  share one process; libtest's log file tells which of their tests finished. If that
  process dies or times out, every sample whose tests did not all report runs alone. The
  shared run gets the per-sample timeout, so a sample judged there finished well within it.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vibes_eval.benchmarks.humaneval import harness
from vibes_eval.benchmarks.humaneval.rustsrc import strip_comments_and_strings
from vibes_eval.core.runner import Session, SessionSpec, TaskRunner
from vibes_eval.core.types import ExecutionResult, Reason, Sample, SampleResult, Termination

if TYPE_CHECKING:
    from vibes_eval.benchmarks.humaneval.benchmark import HumanEvalRust
    from vibes_eval.benchmarks.humaneval.formats import RustProblem

TARGET_SIZE = 90  # ~90 modules per crate kept both cores busy on 2 workers (docs/rust-eval)
MIN_SPLIT = 4  # below this, a batch that fails mysteriously is evaluated sample by sample
MAX_ROUNDS = 6

_COMPILE_RISKY = re.compile(
    r"\bcrate\s*::|\bsuper\s*::|#\s*!\s*\[|"
    r"#\s*\[\s*(macro_export|no_mangle|export_name|path|link|link_section|link_name|used)\b|"
    r"\bmod\s+\w+\s*;|\b(module_path|file|include|include_str|include_bytes)\s*!|"
    r"\btype_name(_of_val)?\b|\bLocation\b|\bextern\b"
)
# Anything that can reach process-wide state. Statics, leaks and panics are not here: statics
# are per module, and a leak or abort ends the shared process, whose unfinished samples are
# then run alone anyway.
_RUNTIME_RISKY = re.compile(
    r"\b(env|process|thread|fs|net|os|io|panic|alloc|ptr|intrinsics|arch)\s*::|"
    r"\buse\s+std\s*::\s*\{[^}]*\b(env|process|thread|fs|net|os|io|panic|alloc|ptr)\b|"
    r"\b(exit|abort|set_hook|take_hook|unsafe|extern|asm|global_asm|libc|stdout|stderr|stdin|"
    r"Command|File|OpenOptions|TcpStream|TcpListener|UdpSocket|UnixStream|set_current_dir|"
    r"set_var|remove_var|spawn|scope)\b"
)
_MODULE_FILE = re.compile(r"(?:^|/)t_(\d+)\.rs$")
_MODULE_TEST = re.compile(r"^t_(\d+)::")
_MODULE_PREFIX = re.compile(r"\bt_\d+::")
_FMT_ERROR_FILE = re.compile(r"^\s*--> (?:.*/)?t_(\d+)\.rs:\d+:\d+")

OnResult = Callable[[SampleResult], None]


def compile_risky(code: str, *, stripped: bool = False) -> bool:
    code = code if stripped else strip_comments_and_strings(code)
    return _COMPILE_RISKY.search(code) is not None


def runtime_risky(code: str, *, stripped: bool = False) -> bool:
    code = code if stripped else strip_comments_and_strings(code)
    return _RUNTIME_RISKY.search(code) is not None


def plan(samples: Sequence[Sample], workers: int) -> list[list[Sample]]:
    """Even batches of at most ~TARGET_SIZE, at least one per worker."""
    if not samples:
        return []
    n_batches = max(min(workers, len(samples)), math.ceil(len(samples) / TARGET_SIZE))
    size = math.ceil(len(samples) / n_batches)
    return [list(samples[i : i + size]) for i in range(0, len(samples), size)]


@dataclass
class Member:
    """One sample inside a batch; ``i`` names its module `t_<i>`."""

    i: int
    sample: Sample
    task: RustProblem
    code: str  # the completion after --extract
    isolated_run: bool  # run in its own process

    @property
    def module(self) -> str:
        return f"t_{self.i}"


def module_of(diag: dict) -> int | None:  # type: ignore[type-arg]
    """The sample a rustc JSON diagnostic is about, following macro expansions."""
    for span in diag.get("spans", []):
        while span is not None:
            m = _MODULE_FILE.search(span.get("file_name", ""))
            if m:
                return int(m.group(1))
            span = (span.get("expansion") or {}).get("span")
    for child in diag.get("children", []):
        found = module_of(child)
        if found is not None:
            return found
    return None


def compile_errors(stderr: str) -> tuple[dict[int, str], bool, bool]:
    """(first error per module, an error no module explains, a parse error stopped rustc)."""
    per_module: dict[int, str] = {}
    orphan = parse_stop = False
    for line in stderr.splitlines():
        try:
            diag = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(diag, dict) or not str(diag.get("level", "")).startswith("error"):
            continue
        message = diag.get("message", "")
        if message.startswith("aborting due to"):
            continue
        code = (diag.get("code") or {}).get("code")
        text = f"error[{code}]: {message}" if code else f"error: {message}"
        i = module_of(diag)
        if i is None:
            orphan = True
        else:
            per_module.setdefault(i, text)
            parse_stop = parse_stop or not code  # parse errors carry no error code
    return per_module, orphan, parse_stop


class BatchRunner:
    """Evaluates one unit of samples for ``HumanEvalRust`` in as few compiles as it can."""

    def __init__(self, bench: HumanEvalRust, runner: TaskRunner, on_result: OnResult) -> None:
        self.bench = bench
        self.runner = runner
        self.on_result = on_result
        self.build = bench.build

    # -- entry ------------------------------------------------------------------------

    def run(self, tasks: dict[str, RustProblem], unit: Sequence[Sample]) -> None:
        members: list[Member] = []
        alone: list[Sample] = []
        for n, sample in enumerate(unit):
            task = tasks[sample.task_id]
            code = self.bench.completion(task, sample)
            if self.bench.config.enforce_policy and self.bench.policy_violation(code):
                alone.append(sample)  # reported as blocked without compiling
            elif compile_risky(bare := strip_comments_and_strings(code), stripped=True):
                alone.append(sample)
            else:
                members.append(Member(n, sample, task, code, runtime_risky(bare, stripped=True)))
        if len(members) < 2:
            alone.extend(m.sample for m in members)
        else:
            alone.extend(m.sample for m in self.run_batch(members))
        for sample in alone:
            self.solo(tasks[sample.task_id], sample)

    def solo(self, task: RustProblem, sample: Sample) -> None:
        self.on_result(
            self.bench.evaluate(task, sample, self.bench.run_task(task, sample, self.runner))
        )

    # -- one crate --------------------------------------------------------------------

    def run_batch(self, members: list[Member]) -> list[Member]:
        """Evaluate ``members`` as one crate; returns those that must be evaluated alone."""
        files: dict[str, str | bytes] = {f"{m.module}.rs": m.task.program(m.code) for m in members}
        session = self.runner.prepare(
            SessionSpec(
                label=f"batch-{members[0].sample.task_id}",
                readonly_paths=self.build.readonly_paths(),
                files=files,
            )
        )
        try:
            return self._in_session(session, members)
        finally:
            self.runner.cleanup(session)

    def _in_session(self, session: Session, members: list[Member]) -> list[Member]:
        active = {m.i: m for m in members}
        compile_s = 0.0
        syntax_checked = False
        for _ in range(MAX_ROUNDS):
            self.runner.write_files(session, {"root.rs": _root(active)})
            comp = self.runner.execute(
                session,
                self.build.compile_argv(
                    "root.rs", "batch", "--error-format=json", "-C", "codegen-units=1"
                ),
                self.bench.compile_limits(),
                env=self.build.env(),
            )
            compile_s += comp.wall_s
            if comp.ok:
                break
            if comp.termination is not Termination.EXITED:
                return self._split(list(active.values()))
            errors, orphan, parse_stop = compile_errors(comp.stderr)
            if parse_stop and not syntax_checked:
                # rustc stopped at the first unparsable file: find all of them at once
                syntax_checked = True
                errors = {**self._syntax_errors(session, active), **errors}
            elif orphan or not errors:
                return self._split(list(active.values()))
            share = comp.wall_s / len(active)
            for i, text in errors.items():
                self.on_result(
                    self._result(active.pop(i), False, Reason.COMPILE_ERROR, text, compile_s=share)
                )
            if len(active) < 2:
                return list(active.values())
        else:
            return list(active.values())
        return self._run_tests(session, list(active.values()), compile_s / max(1, len(active)))

    def _split(self, members: list[Member]) -> list[Member]:
        """A failure no sample can be blamed for: halve the batch until it is found."""
        if len(members) < MIN_SPLIT:
            return members
        half = len(members) // 2
        return self.run_batch(members[:half]) + self.run_batch(members[half:])

    def _syntax_errors(self, session: Session, active: dict[int, Member]) -> dict[int, str]:
        """Every module's first parse error, from one rustfmt run (the same toolchain's
        parser as rustc's, so a file it cannot parse does not compile alone either)."""
        rustfmt = self.build.toolchain.bin_dir / "rustfmt"
        if not rustfmt.exists():
            return {}
        # An empty config here, so a rustfmt.toml in a parent folder cannot add checks.
        self.runner.write_files(session, {"rustfmt.toml": ""})
        res = self.runner.execute(
            session,
            [
                str(rustfmt),
                "--edition",
                "2021",
                "--emit",
                "stdout",
                "--config-path",
                "rustfmt.toml",
                *(f"{m.module}.rs" for m in active.values()),
            ],
            self.bench.compile_limits(),
            env=self.build.env(),
        )
        found: dict[int, str] = {}
        message = ""
        for line in res.stderr.splitlines():
            if line.startswith("error"):
                message = line if line.startswith("error: ") else ""  # not error[internal]
            elif message and (m := _FMT_ERROR_FILE.match(line)) and int(m.group(1)) in active:
                found.setdefault(int(m.group(1)), message)
                message = ""
        return found

    # -- tests ------------------------------------------------------------------------

    def _run_tests(self, session: Session, members: list[Member], compile_s: float) -> list[Member]:
        limits = self.bench.config.limits
        listing = self.runner.execute(
            session, ["./batch", "--list", "--format", "terse"], limits, env=harness.RUN_ENV
        )
        if not listing.ok:
            return members
        tests: dict[int, list[str]] = {m.i: [] for m in members}
        for name in harness.listed_tests(listing):
            m = _MODULE_TEST.match(name)
            if m and int(m.group(1)) in tests:
                tests[int(m.group(1))].append(name)
        shared = [m for m in members if not m.isolated_run]
        isolated = [m for m in members if m.isolated_run]
        if shared:
            isolated += self._shared_run(session, shared, isolated, tests, compile_s)
        for m in isolated:
            self._isolated_run(session, m, tests[m.i], compile_s)
        return []

    def _shared_run(
        self,
        session: Session,
        shared: list[Member],
        skip: list[Member],
        tests: dict[int, list[str]],
        compile_s: float,
    ) -> list[Member]:
        """One process for every member that cannot disturb the others; returns the members
        whose tests did not all report (they are run alone)."""
        log = f".libtest-{secrets.token_hex(8)}.log"
        skips = [arg for m in skip for arg in ("--skip", f"{m.module}::")]
        run = self.runner.execute(
            session,
            ["./batch", "--test-threads=1", "--logfile", log, *skips],
            self.bench.config.limits,
            env=harness.RUN_ENV,
        )
        statuses = self._read_log(session, log)
        panics = harness.panic_details(run.stdout) if "failed" in statuses.values() else {}
        unfinished = []
        per_test_s = run.wall_s / max(1, sum(len(tests[m.i]) for m in shared))
        for m in shared:
            names = tests[m.i]
            if not all(name in statuses for name in names):
                unfinished.append(m)
                continue
            log_part = {name: statuses[name] for name in names}
            verdict = harness.judge_log(names, self.bench.declared(m.task), log_part, panics)
            if verdict.reason is Reason.EARLY_EXIT:  # worded as the lone binary's run would be
                verdict.detail = f"process exited with code 0: {verdict.detail}"
            self.on_result(
                self._result(
                    m,
                    verdict.passed,
                    verdict.reason,
                    verdict.detail,
                    compile_s=compile_s,
                    run_s=per_test_s * len(names),
                    tests=(verdict.tests_passed, verdict.tests_expected),
                )
            )
        return unfinished

    def _isolated_run(
        self, session: Session, m: Member, names: list[str], compile_s: float
    ) -> None:
        """The member's tests alone in a fresh process: judged exactly like a lone binary."""
        log = f".libtest-{secrets.token_hex(8)}.log"
        run = self.runner.execute(
            session,
            ["./batch", f"{m.module}::", "--test-threads=1", "--logfile", log],
            self.bench.config.limits,
            env=harness.RUN_ENV,
        )
        verdict = harness.judge(
            run, names, self.bench.declared(m.task), self._read_log(session, log)
        )
        self.on_result(
            self._result(
                m,
                verdict.passed,
                verdict.reason,
                verdict.detail,
                compile_s=compile_s,
                run_s=run.wall_s,
                run=run,
                tests=(verdict.tests_passed, verdict.tests_expected),
            )
        )

    def _read_log(self, session: Session, name: str) -> dict[str, str]:
        try:
            return harness.parse_log(
                self.runner.read_file(session, name).decode("utf-8", "replace")
            )
        except (FileNotFoundError, ValueError):
            return {}

    def _result(
        self,
        m: Member,
        passed: bool,
        reason: Reason,
        detail: str,
        *,
        compile_s: float = 0.0,
        run_s: float = 0.0,
        run: ExecutionResult | None = None,
        tests: tuple[int, int] | None = None,
    ) -> SampleResult:
        keep = self.bench.KEEP_OUTPUT
        return SampleResult(
            task_id=m.sample.task_id,
            index=m.sample.index,
            passed=passed,
            reason=reason,
            detail=_MODULE_PREFIX.sub("", detail),  # the same text as a lone evaluation
            completion_hash=m.sample.completion_hash,
            compile_s=compile_s,
            run_s=run_s,
            tests_passed=tests[0] if tests else None,
            tests_expected=tests[1] if tests else None,
            stdout=run.stdout[:keep] if run else "",
            stderr=run.stderr[:keep] if run else "",
        )


def _root(active: dict[int, Member]) -> str:
    return "".join(f'#[path = "t_{i}.rs"]\nmod t_{i};\n' for i in sorted(active))
