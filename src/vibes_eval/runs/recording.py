"""Recording one evaluation into the store, for the CLI and library callers:
open the store, start or resume the run, hand the engine a recorder, close the run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vibes_eval.core.runner import TaskRunner
from vibes_eval.runs import lifecycle
from vibes_eval.store.base import EventStore
from vibes_eval.store.events import RunCompleted, RunInterrupted, RunStarted
from vibes_eval.store.recorder import StoreRecorder
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import is_off, resolve
from vibes_eval.store.writer import GroupWriter

if TYPE_CHECKING:
    from vibes_eval.evaluation import Outcome, Prepared


class Recording:
    """An open run: ``recorder`` for the engine, ``finish`` once the engine returns.
    Use as a context manager so the writer and connections are released."""

    def __init__(
        self,
        store: EventStore,
        writer: GroupWriter,
        started: RunStarted,
        opened: lifecycle.OpenedRun,
        recorder: StoreRecorder,
    ) -> None:
        self.store = store
        self.writer = writer
        self.started = started
        self.run_id = opened.run_id
        self.resumed = opened.resumed
        self.already_finished = opened.finished
        self.recorder = recorder

    def finish(self, outcome: Outcome) -> None:
        """Append ``RunCompleted`` when every sample has a verdict, ``RunInterrupted`` after
        Ctrl-C. A run that had already completed gets nothing new."""
        if self.already_finished:
            return
        results = outcome.ordered
        if outcome.interrupted:
            self.writer.append([RunInterrupted(run_id=self.run_id, n_done=len(results))])
        elif len(results) == len(outcome.prepared.samples):
            self.writer.append(
                [
                    RunCompleted(
                        run_id=self.run_id,
                        metrics=outcome.metrics,
                        n_samples=len(results),
                        n_passed=sum(r.passed for r in results),
                        elapsed_s=round(outcome.elapsed_s, 3),
                    )
                ]
            )

    def close(self) -> None:
        try:
            self.writer.close()
        finally:
            self.store.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store_for_run(store_spec: str | None) -> EventStore | None:
    """The store to record into; None for ``--store none``.

    Raises: StoreError (one line) when the store cannot be opened or is not ours.
    """
    if is_off(store_spec):
        return None
    return open_store(resolve(store_spec), create=True)


def start(
    store: EventStore,
    prepared: Prepared,
    runner: TaskRunner,
    *,
    run_id: str | None,
    samples_path: Path | None,
    output_path: Path | None,
    ks: Sequence[int],
    labels: Mapping[str, str],
    workers: int,
    use_cache: bool,
    generation: Mapping[str, Any] | None = None,
    generation_identity: Mapping[str, Any] | None = None,
) -> Recording:
    """Start a new run (``run_id`` None: a generated id) or resume ``run_id``.

    Takes ownership of ``store`` (closed with the recording, or here on failure).

    Raises:
        UserError: the stored run has other settings, or is being evaluated elsewhere.
        StoreError: the store failed.
    """
    writer = GroupWriter(store)
    try:
        started = lifecycle.run_started(
            lifecycle.check_run_id(run_id) if run_id else lifecycle.new_run_id(),
            benchmark=prepared.benchmark,
            tasks=prepared.tasks,
            samples=prepared.samples,
            samples_path=samples_path,
            runner=runner,
            ks=ks,
            labels=labels,
            output_path=output_path,
            workers=workers,
            generation=generation,
            generation_identity=generation_identity,
        )
        opened = lifecycle.begin(store, writer, started, resume=run_id is not None)
        recorder = StoreRecorder(
            store, writer, started, prepared.tasks, prepared.samples, use_cache=use_cache
        )
    except BaseException:
        writer.close()
        store.close()
        raise
    return Recording(store, writer, started, opened, recorder)
