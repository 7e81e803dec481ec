"""Batched Rust reports each verdict as soon as it is known (issue 27 item 1): a policy
violation before anything is compiled, syntax errors after one rustfmt pass over them, before
the batch's build; the batch's members when its test binary has run, the first build of a
unit being small; and the verdicts equal
those of --no-batch."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, SANDBOX
from vibes_eval import evaluation
from vibes_eval.api import make_config
from vibes_eval.benchmarks.humaneval.rust.batch import BUILD_SIZE, FIRST_BUILD, build_chunks
from vibes_eval.core.types import SampleResult
from vibes_eval.runners.select import resolve_runner

SANITY = EXAMPLES / "sanity" / "problems.jsonl"
ROWS = [
    ("right", "Sanity/0", "    a + b\n}\n"),
    ("policy", "Sanity/0", '    std::process::Command::new("ls").status().ok();\n    a + b\n}\n'),
    ("syntax", "Sanity/0", "    let x = (1, 2;\n    a\n}\n"),
    ("syntax_too", "Sanity/1", "    let y = 1 +;\n    true\n}\n"),
    ("wrong", "Sanity/1", "    n % 2 == 1\n}\n"),
    ("right_even", "Sanity/1", "    n % 2 == 0\n}\n"),
]


class Recording:
    """A runner that notes each command it runs, in one list with the verdicts."""

    def __init__(self, runner: Any, events: list[str]) -> None:
        self._runner = runner
        self.events = events

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runner, name)

    def execute(self, session: Any, command: Sequence[str], *args: Any, **kw: Any) -> Any:
        if "root.rs" in command:  # a compile of the batch's crate
            self.events.append("build")
        return self._runner.execute(session, command, *args, **kw)


def run_unit(tmp_path: Path, batch: bool) -> tuple[list[str], dict[str, SampleResult]]:
    path = tmp_path / f"s-{batch}.jsonl"
    path.write_text("".join(json.dumps({"task_id": t, "completion": c}) + "\n"
                            for _, t, c in ROWS))  # fmt: skip
    config = make_config("humaneval-rust", {"problems": str(SANITY), "batch": batch})
    prepared = evaluation.prepare("humaneval-rust", config, path)
    events: list[str] = []
    results: dict[str, SampleResult] = {}

    line = {s.key: n for n, s in enumerate(prepared.samples)}

    def on_result(result: SampleResult) -> None:
        case = ROWS[line[result.key]][0]
        events.append(case)
        results[case] = result

    with resolve_runner(SANDBOX) as runner:
        units = prepared.benchmark.plan(prepared.samples, 1)
        for unit in units:
            prepared.benchmark.run_unit(prepared.tasks, unit, Recording(runner, events), on_result)
    return events, results


def test_known_verdicts_are_reported_before_the_batch_builds(tmp_path: Path) -> None:
    events, batched = run_unit(tmp_path, batch=True)
    first_build = events.index("build")
    assert {"policy", "syntax", "syntax_too"} <= set(events[:first_build]), events
    assert {"right", "wrong", "right_even"} <= set(events[first_build:]), events
    _, alone = run_unit(tmp_path, batch=False)
    for case, *_ in ROWS:
        b, a = batched[case], alone[case]
        assert (b.passed, b.reason, b.detail) == (a.passed, a.reason, a.detail), case
    assert batched["policy"].reason == "blocked_policy"
    assert batched["syntax"].reason == "compile_error"


@pytest.mark.parametrize("n", [2, 16, 31, 32, 82, 197, 212, 250, 400])
def test_the_first_build_of_a_unit_is_small_and_every_member_is_built_once(n: int) -> None:
    chunks = build_chunks(n)
    covered = [i for start, end in chunks for i in range(start, end)]
    assert covered == list(range(n))
    assert all(end - start >= 2 for start, end in chunks)  # a build of one is no build
    if n >= 2 * FIRST_BUILD:
        assert chunks[0] == (0, FIRST_BUILD)
    assert all(end - start <= BUILD_SIZE + FIRST_BUILD for start, end in chunks)
