"""Run a benchmark's pending samples on a runner with parallel workers.

Guarantees: every sample gets a result even when its neighbours crash; results go to the
recorder as soon as they are known (a crash loses at most what was running); identical
completions of one task are evaluated once; Ctrl-C stops the workers, kills what runs and
keeps everything already recorded.
"""

from __future__ import annotations

import contextlib
import threading
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from vibes_eval.core.benchmark import Benchmark
from vibes_eval.core.errors import UserError
from vibes_eval.core.executor import Executor, Job
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Sample, SampleResult, Task


class Recorder(Protocol):
    """Where results go. The event store implements it; so does ``MemoryRecorder``."""

    def done(self) -> dict[tuple[str, int], SampleResult]:
        """Results already recorded for this run (resume skips them)."""
        ...

    def record(self, result: SampleResult) -> None:
        """Make ``result`` durable. Called from worker threads."""
        ...

    def record_then(self, result: SampleResult, then: Callable[[], None]) -> None:
        """Make ``result`` durable, then call ``then`` (possibly from another thread).

        Does not wait, so a burst of results from one worker can be committed together.
        Raises an earlier record's error, if any; ``flush`` raises it too.
        """
        ...

    def flush(self) -> None:
        """Wait until every ``record_then`` is durable and its ``then`` has run.

        Raises: the first error a pending record met.
        """
        ...

    def lookup(self, sample: Sample) -> SampleResult | None:
        """A cached verdict for an identical evaluation, or None."""
        ...


class MemoryRecorder:
    def __init__(self) -> None:
        self.results: dict[tuple[str, int], SampleResult] = {}
        self._lock = threading.Lock()

    def done(self) -> dict[tuple[str, int], SampleResult]:
        return dict(self.results)

    def record(self, result: SampleResult) -> None:
        with self._lock:
            self.results[result.key] = result

    def record_then(self, result: SampleResult, then: Callable[[], None]) -> None:
        self.record(result)
        then()

    def flush(self) -> None:
        pass

    def lookup(self, sample: Sample) -> SampleResult | None:
        return None


Progress = Callable[[SampleResult], None]


class Stopped(Exception):
    """Raised inside workers once the run is being stopped."""


class _StopGuard:
    """Wraps a runner so workers start nothing new once Ctrl-C arrived: ``close()`` kills
    what runs, and this refuses what a worker would start next."""

    def __init__(self, runner: TaskRunner, stopping: threading.Event) -> None:
        self._runner = runner
        self._stopping = stopping

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._runner, name)
        if name in ("prepare", "execute", "execute_streaming", "write_files") and callable(attr):

            def guarded(*args: Any, **kwargs: Any) -> Any:
                if self._stopping.is_set():
                    raise Stopped()
                return attr(*args, **kwargs)

            return guarded
        return attr


def _copy_for(result: SampleResult, sample: Sample, *, cached: bool) -> SampleResult:
    return result.model_copy(
        update={"task_id": sample.task_id, "index": sample.index, "cached": cached}
    )


def _run_units(
    units: list[list[Sample]],
    work: Callable[[list[Sample]], None],
    workers: int,
    stopping: threading.Event,
    runner: TaskRunner,
) -> None:
    """Run ``work`` over ``units`` on ``workers`` threads; on any exception in this thread
    (Ctrl-C) stop them: nothing new starts, ``runner.close()`` kills what runs, and every
    thread has ended before it is raised again.

    Own threads, not a ThreadPoolExecutor: an executor whose ``submit`` is interrupted
    while it starts a thread has not recorded that thread yet, and would not wait for it.
    """
    queue: deque[list[Sample]] = deque(units)
    lock = threading.Lock()
    escaped: list[BaseException] = []

    def loop() -> None:
        while not stopping.is_set():
            with lock:
                if not queue:
                    return
                unit = queue.popleft()
            try:
                work(unit)
            except BaseException as exc:  # work() keeps Exceptions; this is worse
                escaped.append(exc)
                return

    threads: list[threading.Thread] = []
    try:
        for n in range(min(workers, len(units))):
            threads.append(threading.Thread(target=loop, name=f"vibes-worker-{n}", daemon=True))
            threads[-1].start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)  # short waits keep the main thread responsive to Ctrl-C
                if escaped:
                    raise escaped[0]
        if escaped:
            raise escaped[0]
    except BaseException:
        stopping.set()
        runner.close()  # kills every running command
        for t in threads:
            if t.ident is not None:  # started, even if start() was interrupted
                t.join()
        raise


class LocalExecutor(Executor):
    """At most ``workers`` units at once on threads, and no more than the runner's
    ``max_parallelism``."""

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        if address is not None:
            raise UserError(f"--ray-address {address} needs --executor ray")
        super().__init__(None, workers)

    def run(self, job: Job) -> None:
        limit = job.runner.capabilities.max_parallelism
        workers = max(1, min(job.workers, limit) if limit else job.workers)
        units = job.benchmark.plan(job.pending, workers)
        _run_units(units, job.work, workers, job.stopping, job.runner)


def run_samples(
    benchmark: Benchmark[Any, Any],
    tasks: dict[str, Task],
    samples: Sequence[Sample],
    runner: TaskRunner,
    recorder: Recorder,
    *,
    workers: int,
    on_result: Progress | None = None,
    executor: Executor | None = None,
) -> dict[tuple[str, int], SampleResult]:
    """Evaluate what ``recorder`` does not have yet; return all results of ``samples``.
    ``executor`` runs the units (default: ``LocalExecutor``, ``workers`` threads).

    Raises:
        KeyboardInterrupt: after stopping workers; recorded results stay recorded.
    """
    done = recorder.done()
    results: dict[tuple[str, int], SampleResult] = {k: v for k, v in done.items()}
    lock = threading.Lock()
    stopping = threading.Event()

    def deliver(result: SampleResult) -> None:
        if stopping.is_set():
            return  # killed by Ctrl-C: not a verdict on the sample

        def count() -> None:  # only once the result is durable
            with lock:
                results[result.key] = result
            if on_result is not None:
                on_result(result)

        recorder.record_then(result, count)

    # Cached verdicts and duplicates of one completion cost nothing.
    leaders: dict[tuple[str, str], Sample] = {}
    followers: dict[tuple[str, int], list[Sample]] = {}
    pending: list[Sample] = []
    for sample in samples:
        if sample.key in results:
            continue
        cached = recorder.lookup(sample)
        if cached is not None:
            deliver(_copy_for(cached, sample, cached=True))
            continue
        ident = (sample.task_id, sample.completion_hash)
        if ident in leaders:
            followers.setdefault(leaders[ident].key, []).append(sample)
        else:
            leaders[ident] = sample
            pending.append(sample)

    def deliver_all(result: SampleResult) -> None:
        deliver(result)
        for dup in followers.get(result.key, []):
            deliver(_copy_for(result, dup, cached=True))

    def work(unit: list[Sample]) -> None:
        reported: set[tuple[str, int]] = set()

        def on_unit_result(result: SampleResult) -> None:
            reported.add(result.key)
            deliver_all(result)

        try:
            benchmark.run_unit(tasks, unit, guarded_runner, on_unit_result)  # type: ignore[arg-type]
        except Exception as exc:  # a bug or runner failure must not cost the other samples
            if stopping.is_set():
                return
            detail = f"{type(exc).__name__}: {exc}".splitlines()[0]
            tb = traceback.format_exc(limit=-3)
            for sample in unit:
                if sample.key not in reported:
                    deliver_all(
                        benchmark.infra_result(sample, detail).model_copy(update={"stderr": tb})
                    )

    guarded_runner = _StopGuard(runner, stopping)
    job = Job(benchmark, tasks, pending, runner, workers, stopping, work, deliver_all,
              recorder.flush)  # fmt: skip
    try:
        (executor or LocalExecutor()).run(job)
    except BaseException:
        with contextlib.suppress(Exception):  # what the recorder has stays; the first error wins
            recorder.flush()
        raise
    recorder.flush()
    return {s.key: results[s.key] for s in samples if s.key in results}
