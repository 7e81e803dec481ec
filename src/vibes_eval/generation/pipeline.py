"""A model-in-the-loop run: generate samples with a model and evaluate them as they
arrive, recorded and resumable.

Threads: ``concurrency`` agent threads each take the next sample without a verdict and
drive its ``Job`` (model calls, tools); the calling thread runs the evaluation stage,
which evaluates the attempts that have queued up, in batches, through the engine. A
sample's final verdict is a ``SampleEvaluated`` event like any other run's, so results,
compare, export and the cache work unchanged; the trajectory (model calls, tool calls,
earlier attempts) is in the events before it.

Stopping: Ctrl-C kills what the runner runs and abandons what is in flight (recorded
answers stay recorded; a resume replays them). A budget (--max-cost, --max-tokens-total)
lets in-flight work finish and starts no new request; the run is left interrupted with
the reason, to be resumed with a larger budget. A bad key, model or URL stops the run
with one line."""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vibes_eval import api, evaluation
from vibes_eval.core.errors import UserError
from vibes_eval.core.registry import benchmark_class
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Reason, Sample, SampleResult
from vibes_eval.evaluation import Outcome, Prepared
from vibes_eval.generation import agents
from vibes_eval.generation.adapters import prompting_of
from vibes_eval.generation.history import RunHistory
from vibes_eval.generation.job import (
    Budget,
    BudgetExceeded,
    Job,
    RunContext,
)
from vibes_eval.generation.models import ModelClient, make_client
from vibes_eval.generation.prompts import Templates
from vibes_eval.generation.retry import RetryPolicy, Stopped
from vibes_eval.generation.settings import GenerationSettings
from vibes_eval.generation.stage import EvalStage, Sink, store_cache
from vibes_eval.runs.lifecycle import new_run_id
from vibes_eval.runs.recording import Recording
from vibes_eval.store.events import RunInterrupted, SampleEvaluated

Key = tuple[str, int]
OnResult = Callable[[SampleResult], None]


def prepare(benchmark: str, config: Any, settings: GenerationSettings) -> Prepared:
    """The benchmark's tasks and one empty sample per (task, index) to generate.

    Raises: UserError (the benchmark's inputs, unknown task ids, a setting it cannot do).
    """
    settings.check()
    agents.check_options(settings)
    bench = benchmark_class(benchmark)(config)
    tasks = bench.load_tasks()
    chosen = list(tasks)
    if settings.tasks is not None:
        unknown = [t for t in settings.tasks if t not in tasks]
        if unknown:
            raise UserError(
                f"unknown task id {unknown[0]!r} (problems have ids like {next(iter(tasks))!r})",
                field="tasks",
            )
        chosen = list(dict.fromkeys(settings.tasks))
    if settings.limit is not None:
        chosen = chosen[: settings.limit]
    if not chosen:
        raise UserError("no tasks to generate for")
    check_prompt(bench, tasks[chosen[0]], settings)
    samples = [
        Sample(
            task_id=t,
            index=i,
            completion="",
            line=n * settings.sampling.n + i + 1,
            record={"task_id": t, "index": i},
        )
        for n, t in enumerate(chosen)
        for i in range(settings.sampling.n)
    ]
    return Prepared(bench, tasks, samples)


def check_prompt(bench: Any, task: Any, settings: GenerationSettings) -> None:
    """Render the first task's prompt before anything starts: a benchmark that cannot be
    prompted or a template mistake is one line, not a run of failed samples.

    Raises: UserError.
    """
    from vibes_eval.generation.prompts import first_messages

    ctx = prompting_of(bench).context(task)
    templates = Templates(settings.prompt)
    if settings.prompt.style == "completion":
        templates.render("completion", ctx)
    else:
        first_messages(templates, ctx)


@dataclass
class Generated:
    """What a generation run adds to its ``Outcome``."""

    history: RunHistory
    stop_reason: str = ""  # a budget that stopped it
    batches: int = 0  # evaluation batches
    evaluated: int = 0  # attempts evaluated (cached ones included)
    notes: list[str] = field(default_factory=list)


class Generation:
    def __init__(
        self,
        prepared: Prepared,
        settings: GenerationSettings,
        runner: TaskRunner,
        recording: Recording | None,
        *,
        workers: int,
        use_cache: bool,
        on_result: OnResult | None = None,
    ) -> None:
        self.prepared = prepared
        self.settings = settings
        self.runner = runner
        self.recording = recording
        self.workers = workers
        self.use_cache = use_cache
        self.on_result = on_result
        self.stopping = threading.Event()  # abandon everything
        self.no_new = threading.Event()  # start no new sample
        self.stop_reason = ""
        self.fatal: BaseException | None = None
        self.results: dict[Key, SampleResult] = {}
        self._lock = threading.Lock()

    @property
    def run_id(self) -> str:
        return self.recording.run_id if self.recording else "unrecorded"

    def _history(self) -> RunHistory:
        if self.recording is None:
            return RunHistory()
        return RunHistory.load(self.recording.store, self.run_id)

    def _context(self, history: RunHistory, client: ModelClient) -> RunContext:
        p, s = self.prepared, self.settings
        cache = None
        if self.recording is not None and self.use_cache:
            cache = store_cache(self.recording.store, self.recording.started, p.tasks)
        stage = EvalStage(p.benchmark, p.tasks, self.runner, workers=self.workers, cache=cache)
        writer = self.recording.writer if self.recording else None
        totals = history.totals
        return RunContext(
            run_id=self.run_id,
            benchmark=p.benchmark,
            prompting=prompting_of(p.benchmark),
            tasks=p.tasks,
            settings=s,
            templates=Templates(s.prompt),
            client=client,
            policy=RetryPolicy(s.max_retries, s.retry_base_s, s.retry_max_s),
            stage=stage,
            sink=Sink(writer, history),
            history=history,
            budget=Budget(s, totals.cost_usd, totals.tokens),
            stopping=self.stopping,
            runner=self.runner,
            finalize=self._finalize,
        )

    def run(self) -> tuple[dict[Key, SampleResult], Generated, bool]:
        """Generate and evaluate what is pending. Returns (every verdict of the run, what
        generation adds, interrupted). Raises: UserError (a fatal model error, a template
        error), StoreError."""
        history = self._history()
        for key, hist in history.samples.items():
            if hist.done:
                assert hist.final is not None
                self.results[key] = hist.final.result
        todo = [s for s in self.prepared.samples if s.key not in self.results]
        client = make_client(self.settings)
        ctx = self._context(history, client)
        self.ctx = ctx
        interrupted = False
        try:
            interrupted = self._drive(ctx, todo)
        finally:
            client.close()
        if self.fatal is not None:
            raise self.fatal
        out = Generated(history, self.stop_reason, ctx.stage.batches, ctx.stage.evaluated)
        return self.results, out, interrupted

    def _drive(self, ctx: RunContext, todo: list[Sample]) -> bool:
        queue = iter(todo)
        threads = [
            threading.Thread(
                target=self._agent_loop, args=(ctx, queue), daemon=True, name=f"vibes-agent-{n}"
            )
            for n in range(min(self.settings.concurrency, len(todo)))
        ]
        try:
            for t in threads:
                t.start()
            while True:
                ran = ctx.stage.serve(0.05)
                if self.stopping.is_set():
                    break
                if not ran and not any(t.is_alive() for t in threads) and not ctx.stage.pending():
                    break
            ctx.sink.flush()
            return False
        except KeyboardInterrupt:
            self.stopping.set()
            self.runner.close()  # kills what the sandboxes run
            ctx.stage.fail_pending()
            for t in threads:
                t.join(timeout=2)  # a request in flight may finish and be recorded
            with contextlib.suppress(Exception):  # what is recorded stays recorded
                ctx.sink.flush()
            return True

    def _agent_loop(self, ctx: RunContext, queue: Any) -> None:
        agent = agents.AGENTS[self.settings.agent.kind]
        while not self.no_new.is_set() and not self.stopping.is_set():
            with self._lock:
                sample = next(queue, None)
            if sample is None:
                return
            try:
                agent(Job(ctx, self.prepared.tasks[sample.task_id], sample))
            except Stopped:
                return
            except BudgetExceeded as exc:
                self.stop_reason = self.stop_reason or str(exc)
                self.no_new.set()
                return
            except UserError as exc:  # every sample would fail alike (key, template)
                self.fatal = self.fatal or exc
                self.no_new.set()
                self.stopping.set()
                return
            except Exception as exc:  # a bug costs this sample only
                detail = f"{type(exc).__name__}: {exc}".splitlines()[0]
                tb = traceback.format_exc(limit=-4)
                self._finalize(
                    sample,
                    SampleResult(
                        task_id=sample.task_id,
                        index=sample.index,
                        passed=False,
                        reason=Reason.INFRA,
                        detail=detail,
                        stderr=tb,
                    ),
                    {"task_id": sample.task_id, "completion": ""},
                )

    def _finalize(self, placeholder: Sample, result: SampleResult, record: dict[str, Any]) -> None:
        task = self.prepared.tasks[placeholder.task_id]
        event = SampleEvaluated.from_result(
            self.run_id,
            result,
            problem_hash=task.fingerprint(),
            line=placeholder.line,
            record=record,
        )

        def counted() -> None:
            with self._lock:
                self.results[result.key] = result
            if self.on_result is not None:
                self.on_result(result)

        self.ctx.sink.submit([event], counted)


def generated_samples(placeholders: list[Sample], generated: Generated) -> list[Sample]:
    """The samples as generated (completion and record), for the benchmark's run hooks."""
    out = []
    for s in placeholders:
        hist = generated.history.samples.get(s.key)
        final = hist.final if hist is not None else None
        if final is None:
            out.append(s)
            continue
        record = dict(final.record)
        out.append(
            s.model_copy(update={"completion": record.get("completion", ""), "record": record})
        )
    return out


class GenerationEvaluation(api.Evaluation):
    """``api.Evaluation`` whose samples a model generates: the same runner, store, run
    identity (the generation settings included) and outcome."""

    def __init__(self, request: api.Request, settings: GenerationSettings) -> None:
        prepared = prepare(request.benchmark, request.config, settings)
        make_client(settings).close()  # a missing SDK or key: one line before the run starts
        request.generation = settings.model_dump(mode="json")
        request.generation_identity = settings.identity()
        self.settings = settings
        self.use_generation_cache = request.use_cache
        request.use_cache = False  # placeholders have no completion to look up
        super().__init__(request, prepared)
        self.generated: Generated | None = None

    def done_keys(self) -> int:
        if self.recording is None:
            return 0
        history = RunHistory.load(self.recording.store, self.recording.run_id)
        return sum(1 for h in history.samples.values() if h.done)

    def run(self, on_result: OnResult | None = None) -> Outcome:
        assert self.runner is not None, "use GenerationEvaluation as a context manager"
        start = time.monotonic()
        bench = self.prepared.benchmark
        run_id = self.run_id or new_run_id()
        bench.start_run(run_id)
        gen = Generation(
            self.prepared,
            self.settings,
            self.runner,
            self.recording,
            workers=self.workers,
            use_cache=self.use_generation_cache,
            on_result=on_result,
        )
        try:
            results, generated, interrupted = gen.run()
        except UserError as exc:  # a bad key, model or template: the run says why it stopped
            if self.recording:
                done = len(gen.results)
                self.recording.writer.append(
                    [RunInterrupted(run_id=self.recording.run_id, n_done=done, reason=str(exc))]
                )
            raise
        self.generated = generated
        outcome = Outcome(
            self.prepared,
            results,
            list(self.request.ks),
            elapsed_s=time.monotonic() - start,
            interrupted=interrupted,
        )
        outcome.notes += self.notes
        bench.finish_run(run_id, results, generated_samples(self.prepared.samples, generated))
        if generated.stop_reason:
            outcome.notes.append(
                f"stopped: {generated.stop_reason}; {len(results)} of "
                f"{len(self.prepared.samples)} samples have a verdict"
            )
        if self.recording:
            self.recording.finish(outcome)
            if generated.stop_reason and len(results) < len(self.prepared.samples):
                self.recording.writer.append(
                    [
                        RunInterrupted(
                            run_id=self.recording.run_id,
                            n_done=len(results),
                            reason=f"budget: {generated.stop_reason}",
                        )
                    ]
                )
            outcome.run_id = self.recording.run_id
        if self.request.output is not None:
            evaluation.write_results(outcome, self.request.output)
        return outcome


__all__ = ["Generated", "Generation", "GenerationEvaluation", "prepare"]
