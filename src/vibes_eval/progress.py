"""Progress fed by per-sample results: a rich bar on a terminal, plain lines elsewhere
(CI logs, pipes), so a long run always says how far it is. Thread-safe: rich locks
internally, the plain printer holds its own lock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from vibes_eval.core.types import SampleResult

Advance = Callable[[SampleResult], None]
PLAIN_EVERY_S = 10.0  # a plain line at most this often (and at the end)


@contextmanager
def sample_progress(
    total: int, already: int, *, enabled: bool, console: Console
) -> Iterator[Advance]:
    """``enabled``: show progress at all; a bar where ``console`` is a terminal, else a
    line every ``PLAIN_EVERY_S`` seconds."""
    if not enabled:
        yield lambda _result: None
    elif console.is_terminal:
        with _bar(total, already, console) as advance:
            yield advance
    else:
        printer = PlainProgress(total, already, console)
        yield printer.advance
        printer.finish()


@contextmanager
def _bar(total: int, already: int, console: Console) -> Iterator[Advance]:
    columns = (
        TextColumn("[bold]evaluating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("passed {task.fields[passed]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("samples", total=total, completed=already, passed=0)
        passed = 0

        def advance(result: SampleResult) -> None:
            nonlocal passed
            passed += int(result.passed)
            bar.update(task, advance=1, passed=passed)

        yield advance


class PlainProgress:
    """``evaluated 120/349 (34%), passed 80, 12 s, about 23 s left`` lines (the rate is
    that of verdicts computed here, not of cached or resumed ones)."""

    def __init__(self, total: int, already: int, console: Console) -> None:
        self.total, self.done, self.passed = total, already, 0
        self.fresh = 0  # evaluated in this process: what the rate is measured on
        self.console = console
        self.start = self.last = time.monotonic()
        self._lock = threading.Lock()

    def advance(self, result: SampleResult) -> None:
        with self._lock:
            self.done += 1
            self.fresh += 0 if result.cached else 1
            self.passed += int(result.passed)
            now = time.monotonic()
            if now - self.last >= PLAIN_EVERY_S:
                self.last = now
                self._print(now)

    def finish(self) -> None:
        """The closing line, for runs long enough to have printed one before (a short
        run's log stays as it was)."""
        with self._lock:
            if self.last > self.start:
                self._print(time.monotonic())

    def _print(self, now: float) -> None:
        elapsed = now - self.start
        pct = 100 * self.done // self.total if self.total else 100
        line = f"evaluated {self.done}/{self.total} ({pct}%), passed {self.passed}, {elapsed:.0f} s"
        left = self.total - self.done
        if left and self.fresh and elapsed > 0:
            line += f", about {left * elapsed / self.fresh:.0f} s left"
        self.console.print(line, highlight=False, soft_wrap=True)
