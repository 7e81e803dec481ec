"""Where a run's units execute. The engine (``core/engine.py``) decides what is pending
(resume, cache, duplicates) and records every result; an executor only runs units and hands
their results back: ``LocalExecutor`` on threads of this process, ``RayExecutor``
(``scaleout/``) on the nodes of a Ray cluster. ``registry.EXECUTORS`` names them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vibes_eval.core.benchmark import Benchmark
    from vibes_eval.core.runner import TaskRunner
    from vibes_eval.core.types import Sample, SampleResult, Task


@dataclass
class Job:
    """The pending part of one evaluation, handed to an executor. Whatever runs the units,
    every result comes back through ``deliver`` on this process: the recorder stays the
    only writer, so resume, the cache and "every sample once" hold for any executor."""

    benchmark: Benchmark[Any, Any]
    tasks: dict[str, Task]
    pending: list[Sample]  # one per distinct completion, not yet recorded nor cached
    runner: TaskRunner
    workers: int
    stopping: threading.Event  # set on Ctrl-C: start nothing new
    work: Callable[[list[Sample]], None]  # run one unit here, on ``runner``
    deliver: Callable[[SampleResult], None]  # record a result (and its duplicates' copies)
    settle: Callable[[], None]  # wait until what was delivered is durable


class Executor:
    """Runs a job's units somewhere. ``LocalExecutor``: threads of this process;
    ``--executor ray`` (scaleout/): actors on the nodes of a Ray cluster."""

    name = "local"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        """``address``: where the executor's cluster is (``--ray-address``); ``workers``:
        ``--workers`` as given (None: the executor's default).

        Raises: UserError for an address this executor cannot use."""
        self.address = address
        self.workers = workers
        self.notes: list[str] = []  # for the report: nodes left out, units retried...

    def open(self) -> None:
        """Connect to wherever units run, before the run starts in the store.

        Raises: UserError when that cannot be done."""

    def start_run(self, run_id: str) -> None:
        """The run's id, as ``Benchmark.start_run`` gets it."""

    def run(self, job: Job) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release connections and remote workers; idempotent."""
