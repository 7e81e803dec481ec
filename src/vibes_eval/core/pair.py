"""Two commands connected by pipes: a trusted test program and the candidate it calls.

The split that keeps verdicts out of a sample's reach (docs/integrity.md): the tests run
in one session, the sample's code in another, and the only thing between them is a pair
of pipes, the test's stdout to the candidate's stdin and back. The test program's exit
and its stderr decide the verdict; the candidate can only answer the calls it is sent.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from vibes_eval.core.errors import RunnerError
from vibes_eval.core.runner import Session, TaskRunner, Wiring
from vibes_eval.core.types import ExecutionResult, Limits, Termination

# Limits a candidate can overrun: a sample that did is not a pass even when its test
# passed (without a tmpfs quota, disk use is only measured after the run, and the writes
# succeeded; the unsplit runs failed such a sample too).
OVERRUNS = frozenset(
    {Termination.MEMORY, Termination.PIDS, Termination.OUTPUT_LIMIT, Termination.DISK_LIMIT,
     Termination.BLOCKED_SYSCALL}
)  # fmt: skip


@dataclass
class Side:
    """One of the two commands: where and how it runs."""

    session: Session
    argv: Sequence[str]
    limits: Limits
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None


@dataclass
class PairResult:
    test: ExecutionResult
    candidate: ExecutionResult


def run_pair(runner: TaskRunner, test: Side, candidate: Side) -> PairResult:
    """Run ``test`` and ``candidate`` at once, each one's stdout feeding the other's stdin.
    The candidate is ended as soon as the test ends (it has nothing left to answer).

    Raises:
        RunnerError: either command could not be started.
    """
    to_cand_r, to_cand_w = os.pipe()
    to_test_r, to_test_w = os.pipe()
    cand_wiring = Wiring(to_cand_r, to_test_w)
    test_wiring = Wiring(to_test_r, to_cand_w)
    got: dict[str, ExecutionResult | BaseException] = {}

    def answer() -> None:
        try:
            res = runner.execute_wired(
                candidate.session, candidate.argv, candidate.limits, cand_wiring,
                env=candidate.env, cwd=candidate.cwd,
            )  # fmt: skip
            got["candidate"] = _ended_by_us(res, cand_wiring)
        except BaseException as exc:  # re-raised in the caller's thread
            got["candidate"] = exc
            test_wiring.stop.set()

    thread = threading.Thread(target=answer, name="vibes-candidate", daemon=True)
    thread.start()
    try:
        test_res = runner.execute_wired(
            test.session, test.argv, test.limits, test_wiring, env=test.env, cwd=test.cwd
        )
    finally:
        cand_wiring.stop.set()
        thread.join()
    cand = got["candidate"]
    if isinstance(cand, BaseException):
        if isinstance(cand, RunnerError):
            raise cand
        raise RunnerError(f"the candidate could not run: {cand}") from cand
    return PairResult(test=test_res, candidate=cand)


def _ended_by_us(res: ExecutionResult, wiring: Wiring) -> ExecutionResult:
    """A candidate the runner killed once the test had ended (it had not yet exited on
    its own: a busy machine, or it was not reading) was killed from outside, not by its
    own doing: KILLED, so its end does not read as a crash."""
    killed = res.termination is Termination.SIGNALED and res.signal == signal.SIGKILL
    if killed and wiring.stop.is_set():
        return res.model_copy(update={"termination": Termination.KILLED})
    return res
