"""The Python harness's verdicts are read as they come (issue 27 item 1): a line split
across pipe reads is one verdict, each position is reported once, forged lines are not."""

from __future__ import annotations

import json
import sys
from typing import Any

from vibes_eval.benchmarks.multilang.run import VerdictLines
from vibes_eval.runners import spawn

TOKEN = "a" * 32


def test_verdict_lines_split_across_reads_are_reported_once_each() -> None:
    got: list[tuple[int, dict[str, Any]]] = []
    lines = VerdictLines(TOKEN, lambda n, v: got.append((n, v)))
    text = (
        "".join(f"{TOKEN} {json.dumps({'id': n, 'passed': True})}\n" for n in (0, 1, 0))
        + f"{'b' * 32} {json.dumps({'id': 2})}\nnoise\n{TOKEN} {json.dumps({'id': 3})}"
    )
    data = text.encode()
    for i in range(0, len(data), 7):  # reads cut lines anywhere
        lines.feed(data[i : i + 7])
    assert [n for n, _ in got] == [0, 1]
    lines.end()  # the last line had no newline
    assert [n for n, _ in got] == [0, 1, 3]
    assert not lines.no_batch


def test_spawn_hands_stdout_over_while_the_command_runs() -> None:
    """The listener sees the first line before the command ends: it ends the command."""
    seen: list[bytes] = []

    def listener(chunk: bytes) -> None:
        seen.append(chunk)
        if b"first" in b"".join(seen):
            raise LookupError("stop")

    code = "import sys, time\nprint('first', flush=True)\ntime.sleep(60)\n"
    try:
        spawn.run([sys.executable, "-c", code], env=None, cwd=None, timeout_s=120,
                  output_cap=1 << 20, on_stdout=listener)  # fmt: skip
    except LookupError:
        pass
    else:
        raise AssertionError("the listener's error was not raised")
    assert b"first" in b"".join(seen)
