"""Running a batch's test binary (``batch.py`` builds it).

The members (samples that cannot disturb each other: ``risk.py``) share a process, in
rounds: libtest runs tests one at a time in name order, so when a round's process dies or
times out, the first test its log lacks is the one that was running; that member runs alone
and the next round runs the rest. A member a round left runs in a fresh work dir with a
copy of the binary and exactly its own tests (``--exact``, full paths), judged exactly like
a lone binary. Test names are passed as arguments: a round holds at most ``ARGV_BUDGET``
characters of them.
"""

from __future__ import annotations

import functools
import re
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vibes_eval.benchmarks.humaneval import judge
from vibes_eval.benchmarks.humaneval.judge import KEEP_OUTPUT, SHARED, measured
from vibes_eval.benchmarks.humaneval.rust import harness
from vibes_eval.benchmarks.humaneval.rust.scan import Scan
from vibes_eval.core.errors import RunnerError
from vibes_eval.core.runner import Session, TaskRunner
from vibes_eval.core.system import usable_cpus
from vibes_eval.core.types import ExecutionResult, Reason, Sample, SampleResult, Termination

if TYPE_CHECKING:
    from vibes_eval.benchmarks.humaneval.run import RustEvaluator
    from vibes_eval.benchmarks.humaneval.tasks import RustProblem

SHARED_TIMEOUT_S = 1.0  # per shared test run; samples' tests take milliseconds
MAX_SHARED_ROUNDS = 8  # then whatever has not reported runs alone
ARGV_BUDGET = 64 * 1024  # characters of test names per process (Linux allows ~2 MiB in
# all and 128 KiB per argument; a batch's names take a few KiB)

_MODULE_TEST = re.compile(r"^t_(\d+)::")
_MODULE_PREFIX = re.compile(r"\bt_\d+::")

OnResult = Callable[[SampleResult], None]


@dataclass
class Member:
    """One sample inside a batch; ``i`` names its module `t_<i>`."""

    i: int
    sample: Sample
    task: RustProblem
    scan: Scan  # the completion (after --extract) read in its program
    head_check: bool  # the check compiles its code without the test block

    @property
    def code(self) -> str:
        return self.scan.code

    @property
    def module(self) -> str:
        return f"t_{self.i}"

    @property
    def check_file(self) -> str:
        return f"c_{self.i}.rs" if self.head_check else f"t_{self.i}.rs"


def _argv_groups(members: list[Member], tests: dict[int, list[str]]) -> list[list[Member]]:
    """``members`` in groups whose test names fit ``ARGV_BUDGET``."""
    groups: list[list[Member]] = []
    size = ARGV_BUDGET
    for m in members:
        need = sum(len(n) + 1 for n in tests[m.i])
        if size + need > ARGV_BUDGET:
            groups.append([])
            size = 0
        groups[-1].append(m)
        size += need
    return groups


def in_parallel(jobs: list[Callable[[], None]]) -> None:
    """Run what a unit leaves to be done alone (each job in its own work dir) on every core:
    a sample stuck until its timeout then holds up one thread, not the whole unit."""
    if len(jobs) < 2:
        for job in jobs:
            job()
        return
    with ThreadPoolExecutor(min(len(jobs), usable_cpus())) as pool:
        for future in [pool.submit(job) for job in jobs]:
            future.result()


_MODULE_FILE = re.compile(r"\bt_\d+\.rs:")
_REPORT_END = "\nfailures:\n"  # libtest's list of failed names, after every section
_NOTE = "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
_WORD = {"ok": "ok", "failed": "FAILED", "ignored": "ignored"}


def own_sections(stdout: str, names: list[str]) -> dict[str, str]:
    """{test: the output libtest captured of it} for ``names``, from a shared process's
    failure report: between its `---- name stdout ----` header and the next one (the
    last one ends where libtest's own list of failed names starts)."""
    marks = list(harness.SECTION.finditer(stdout))
    end = stdout.rfind(_REPORT_END)
    found: dict[str, str] = {}
    for n, mark in enumerate(marks):
        stop = marks[n + 1].start() if n + 1 < len(marks) else max(end, mark.end())
        if mark.group(1) in names:  # libtest ends each section with a newline of its own
            found[mark.group(1)] = stdout[mark.end() + 1 : stop].removesuffix("\n")
    return found


def lone_report(stdout: str, names: list[str], statuses: dict[str, str], run_s: float) -> str:
    """The report libtest prints when the member's tests run in a process of their own
    (what ``--no-batch`` keeps as its stdout), rebuilt from the shared process's: its
    tests' lines, each failed test's captured output (the panic message with its
    `left:`/`right:` values), the totals; names and file as a lone program has them.
    libtest's backtrace note goes with the first panic of a process: here, the member's."""
    names = sorted(names)
    sections = own_sections(stdout, names)
    note = _NOTE in stdout
    lines = [f"\nrunning {len(names)} test{'' if len(names) == 1 else 's'}\n"]
    lines += [f"test {n} ... {_WORD.get(statuses.get(n, ''), 'FAILED')}\n" for n in names]
    failed = [n for n in names if statuses.get(n) == "failed"]
    if failed:
        lines.append("\nfailures:\n")
        shown = []
        for name in failed:
            text = sections.get(name, "").replace(_NOTE, "")
            if note and "panicked at" in text:
                text, note = text + _NOTE, False
            if text:
                shown.append(f"---- {name} stdout ----\n{text}\n")
        if shown:
            lines += ["\n", *shown]
        lines += ["\nfailures:\n", *(f"    {n}\n" for n in failed)]
    counts = {w: sum(1 for n in names if statuses.get(n) == w) for w in _WORD}
    lines.append(
        f"\ntest result: {'FAILED' if failed else 'ok'}. {counts['ok']} passed; "
        f"{len(failed)} failed; {counts['ignored']} ignored; 0 measured; 0 filtered out; "
        f"finished in {run_s:.2f}s\n\n"
    )
    return _MODULE_FILE.sub("main.rs:", _MODULE_PREFIX.sub("", "".join(lines)))


def sample_result(
    m: Member,
    passed: bool,
    reason: Reason,
    detail: str,
    *,
    compile_s: float = 0.0,
    run_s: float = 0.0,
    run: ExecutionResult | None = None,
    tests: tuple[int, int] | None = None,
    stdout: str = "",
    stderr: str = "",
) -> SampleResult:
    return judge.result(
        m.sample,
        passed,
        reason,
        _MODULE_PREFIX.sub("", detail),  # the same text as a lone evaluation
        evaluated=SHARED,
        measurements=measured(compile_s=compile_s, run_s=run_s, tests=tests),
        stdout=run.stdout[:KEEP_OUTPUT] if run else stdout[:KEEP_OUTPUT],
        stderr=run.stderr[:KEEP_OUTPUT] if run else stderr[:KEEP_OUTPUT],
    )


class BinaryRun:
    """Runs the tests of one built batch binary and reports what they show."""

    def __init__(self, ev: RustEvaluator, runner: TaskRunner, on_result: OnResult) -> None:
        self.ev = ev
        self.runner = runner
        self.on_result = on_result
        self.build = ev.build

    def run(self, session: Session, members: list[Member], compile_s: float) -> list[Member]:
        """List the binary's tests and run them; returns the members to evaluate alone."""
        limits = self.ev.config.limits
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
        # A sample whose test names no argument list holds is evaluated alone (its own
        # binary needs no names); it costs its neighbours nothing.
        too_long = [m for m in members if sum(len(n) + 1 for n in tests[m.i]) > ARGV_BUDGET]
        isolated: list[Member] = []
        for group in _argv_groups([m for m in members if m not in too_long], tests):
            isolated += self._shared_run(session, group, tests, compile_s)
        if isolated:
            binary = self.runner.read_file(session, "batch")
            in_parallel(
                [
                    functools.partial(self._isolated_run, binary, m, tests[m.i], compile_s)
                    for m in isolated
                ]
            )
        return too_long

    def _shared_run(
        self,
        session: Session,
        shared: list[Member],
        tests: dict[int, list[str]],
        compile_s: float,
    ) -> list[Member]:
        """The tests of ``shared`` members in one process per round; returns the members to
        run alone.

        Tests run one at a time in name order (libtest sorts them), so when a round's
        process dies or times out, the first test its log lacks is the one that was
        running: its member is run alone (judged exactly there), and a new round runs the
        members after it. A member judged here finished within the round's timeout, which
        is at most the per-sample one; a round gets less (``SHARED_TIMEOUT_S``) so that a
        sample stuck in a loop costs that much before its own run, not a full timeout.
        """
        limits = self.ev.config.limits
        round_limits = limits.model_copy(
            update={"timeout_s": min(limits.timeout_s, SHARED_TIMEOUT_S), "cpu_s": None}
        )
        pending = {m.i: m for m in shared}
        alone: list[Member] = []
        for _ in range(MAX_SHARED_ROUNDS):
            if not pending:
                return alone
            names = sorted(name for i in pending for name in tests[i])
            log = f".libtest-{secrets.token_hex(8)}.log"
            try:
                run = self.runner.execute(
                    session,
                    ["./batch", "--test-threads=1", "--logfile", log, "--exact", *names],
                    round_limits,
                    env=harness.RUN_ENV,
                )
            except RunnerError:
                return alone + list(pending.values())  # judged alone instead
            statuses = harness.read_log(self.runner, session, log)
            panics = harness.reported_panics(run.stdout, statuses)
            failed = "failed" in statuses.values()
            per_test_s = run.wall_s / max(1, len(names))
            # libtest prints the failures' panic messages at the end: a process that did
            # not get there leaves its failed tests to the next round. A test's captured
            # output is printed there too: when the report cannot be read (a section
            # header of a test's making), the members that failed are judged alone.
            ended = run.termination is Termination.EXITED
            trusted = bool(panics) or not failed
            for i, m in list(pending.items()):
                done = [statuses.get(name) for name in tests[i]]
                if None in done or not (ended or "failed" not in done):
                    continue
                del pending[i]
                if "failed" in done and not trusted:
                    alone.append(m)
                else:
                    self._judge_shared(
                        m, tests[i], statuses, panics, compile_s, per_test_s, run.stdout
                    )
            unlogged = [name for i in pending for name in tests[i] if name not in statuses]
            if unlogged:
                # the one that was running when the process ended: the first not logged
                culprit = next(i for i in pending if min(unlogged) in tests[i])
                alone.append(pending.pop(culprit))
        return alone + list(pending.values())

    def _declared(self, m: Member) -> list[str]:
        """The task's tests of ``m`` by their full paths in the batch binary."""
        return [f"{m.module}::{name}" for name in self.ev.declared(m.task)]

    def _judge_shared(
        self,
        m: Member,
        names: list[str],
        statuses: dict[str, str],
        panics: dict[str, str],
        compile_s: float,
        per_test_s: float,
        stdout: str,
    ) -> None:
        log_part = {name: statuses[name] for name in names}
        verdict = harness.judge_log(names, self._declared(m), log_part, panics)
        if verdict.reason is Reason.EARLY_EXIT:  # worded as the lone binary's run would be
            verdict.detail = f"process exited with code 0: {verdict.detail}"
        # A failure's own output (the values an assertion compared) as a lone run shows it;
        # a pass keeps none (what would be shown is its test names).
        report = (
            "" if verdict.passed else lone_report(stdout, names, log_part, per_test_s * len(names))
        )
        self.on_result(
            sample_result(
                m,
                verdict.passed,
                verdict.reason,
                verdict.detail,
                compile_s=compile_s,
                run_s=per_test_s * len(names),
                tests=(verdict.tests_passed, verdict.tests_expected),
                stdout=report,
            )
        )

    def _isolated_run(self, binary: bytes, m: Member, names: list[str], compile_s: float) -> None:
        """The member's tests alone, judged exactly like a lone binary: a fresh process in
        a fresh work dir, as the sample before it may have written anything into its own
        (replaced the binary, filled the disk, made the dir read-only)."""
        spec = self.ev.session_spec(f"alone-{m.sample.task_id}", {"batch.bin": binary})
        with self.runner.session(spec) as session:
            # Copied by a child process, not written here: a thread that forks while this
            # one holds the file open for writing would make exec fail (ETXTBSY).
            copy = self.runner.execute(
                session, ["install", "-m", "755", "batch.bin", "batch"], self.ev.config.limits
            )
            if not copy.ok:
                raise RunnerError(f"cannot install the batch binary: {copy.stderr.strip()}")
            log = f".libtest-{secrets.token_hex(8)}.log"
            # Exactly its own tests: a filter `t_1::` would also run a test another sample
            # nests in a module of that name (`t_12::t_1::x`).
            run = self.runner.execute(
                session,
                # (no names: a filter no test matches, not every test of the binary)
                ["./batch", "--test-threads=1", "--logfile", log, "--exact",
                 *(names or [f"{m.module}::"])],
                self.ev.config.limits,
                env=harness.RUN_ENV,
            )  # fmt: skip
            statuses = harness.read_log(self.runner, session, log)
        verdict = harness.judge(run, names, self._declared(m), statuses)
        self.on_result(
            sample_result(
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
