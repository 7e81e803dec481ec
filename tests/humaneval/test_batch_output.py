"""A failing sample's own test output survives batching (issue 27 item 5): batched, a
failed assertion used to show only ``assertion `left == right` failed`` with an empty
stdout, the `left:`/`right:` values printed only with --no-batch. Now its stdout is the
report a lone run prints, and its detail the same."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import SANDBOX
from tests.humaneval import integrity_cases as cases
from tests.humaneval.integrity_run import evaluate

ROWS = [
    cases.Row("I/add", "    a - b\n}\n", "minus", False),  # fails both of its tests
    cases.Row("I/add", "    if a < 0 { 1 } else { a + b }\n}\n", "one_of_two", False),
    cases.Row("I/add", '    println!("adding {a} and {b}");\n    a * b\n}\n', "prints", False),
    cases.Row("I/doubled", "    v.iter().map(|x| x + 2).collect()\n}\n", "vec", False),
    cases.Row("I/add", "    a + b\n}\n", "right", True),
    cases.Row("I/first", "    v.first().copied()\n}\n", "right_first", True),
]


def same_run(stdout: str) -> str:
    """What differs between any two runs of one binary: thread ids and timings."""
    stdout = re.sub(r"^(thread '[^']*') \(\d+\)", r"\1", stdout, flags=re.M)
    return re.sub(r"finished in \d+\.\d+s", "finished in _s", stdout)


def test_batched_failure_keeps_the_lone_runs_output_and_detail(tmp_path: Path) -> None:
    batched = evaluate(tmp_path, ROWS, batch=True, policy=True, sandbox=SANDBOX)
    alone = evaluate(tmp_path, ROWS, batch=False, policy=True, sandbox=SANDBOX)
    for row in ROWS:
        b, a = batched[row.case], alone[row.case]
        assert (b.passed, b.reason, b.detail) == (a.passed, a.reason, a.detail), row.case
        if not row.expected:  # judged in the batch's shared process, not alone
            assert b.details["evaluated"] == "shared", (row.case, b.details)
            assert same_run(b.stdout) == same_run(a.stdout), row.case
    assert "  left: -1\n right: 3\n" in batched["minus"].stdout
    assert "adding 1 and 2" in batched["prints"].stdout  # the test's own println!
    assert "test tests::first ... ok" in batched["one_of_two"].stdout
