"""A failing sample's output is the same batched and alone (issue 27 item 5): its stdout is
the test program's report (each test's line, each failure's panic message with the
`left:`/`right:` values), its stderr what the candidate printed (its prints go there: the
server moves its channel off stdout), and its detail the first failure."""

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


def same_run(stderr: str) -> str:
    """What differs between a batched and a lone candidate: thread ids, its file's name."""
    stderr = re.sub(r"^(thread '[^']*') \(\d+\)", r"\1", stderr, flags=re.M)
    return re.sub(r"\bt_\d+\.rs:", "main.rs:", stderr)


def test_batched_failure_keeps_the_lone_runs_output_and_detail(tmp_path: Path) -> None:
    batched = evaluate(tmp_path, ROWS, batch=True, policy=True, sandbox=SANDBOX)
    alone = evaluate(tmp_path, ROWS, batch=False, policy=True, sandbox=SANDBOX)
    for row in ROWS:
        b, a = batched[row.case], alone[row.case]
        assert (b.passed, b.reason, b.detail) == (a.passed, a.reason, a.detail), row.case
        assert b.details["evaluated"] == "shared", (row.case, b.details)  # compiled together
        assert b.stdout == a.stdout, row.case
        assert same_run(b.stderr) == same_run(a.stderr), row.case
    assert "  left: -1\n right: 3" in batched["minus"].stdout
    assert batched["minus"].detail == "tests::first: assertion `left == right` failed"
    assert "adding 1 and 2" in batched["prints"].stderr  # the candidate's own println!
    assert "test tests::first ... ok" in batched["one_of_two"].stdout
    assert "test tests::second ... FAILED" in batched["one_of_two"].stdout
