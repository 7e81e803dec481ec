"""Two commands in two sessions, connected by pipes (``core.pair``): the split every
compiled language's trusted test program and candidate run in."""

from __future__ import annotations

import time

from vibes_eval.core.pair import Side, run_pair
from vibes_eval.core.runner import SessionSpec, TaskRunner
from vibes_eval.core.types import Limits, Termination

LIMITS = Limits(timeout_s=20)


def _pair(runner: TaskRunner, test: str, cand: str, cand_timeout: float = 20):
    with (
        runner.session(SessionSpec(label="pair-test")) as ts,
        runner.session(SessionSpec(label="pair-cand")) as cs,
    ):
        return run_pair(
            runner,
            Side(ts, ["/bin/sh", "-c", test], LIMITS),
            Side(cs, ["/bin/sh", "-c", cand], Limits(timeout_s=cand_timeout)),
        )


def test_each_reads_what_the_other_writes(sandbox: TaskRunner) -> None:
    res = _pair(
        sandbox,
        'echo ping; read x; [ "$x" = pong ] && echo done >&2',
        'read x; [ "$x" = ping ] && echo pong; read y; echo "eof:$y" >&2',
    )
    assert res.test.exit_code == 0, res.test.stderr
    assert res.test.stderr.strip() == "done"
    assert res.test.stdout == ""  # the channel is not kept
    assert "eof:" in res.candidate.stderr  # the test's end closed the candidate's stdin


def test_a_candidate_that_never_answers_ends_at_its_limit(sandbox: TaskRunner) -> None:
    res = _pair(sandbox, "echo ping; read x || exit 3", "sleep 60", cand_timeout=2)
    assert res.candidate.termination is Termination.TIMED_OUT
    assert res.test.exit_code == 3  # EOF once the candidate was gone


def test_the_candidate_is_ended_when_the_test_is_done(sandbox: TaskRunner) -> None:
    start = time.monotonic()
    res = _pair(sandbox, "true", "trap '' TERM HUP PIPE; while :; do sleep 1; done")
    assert res.test.exit_code == 0
    assert time.monotonic() - start < 15
    assert res.candidate.termination is Termination.KILLED  # our kill, not a crash
