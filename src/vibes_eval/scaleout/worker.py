"""The node side of ``--executor ray``: one ``NodeWorker`` per node of the cluster (a Ray
actor), holding the benchmark, its runner and whatever they keep warm between units (built
crates, Docker images, reference timings). It runs units and streams each verdict back;
it never writes the store.

Nothing here imports Ray: the driver (``ray_executor.py``) makes this class an actor, so
it can be tested and read without a cluster.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import queue
import socket
import threading
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from vibes_eval.core.engine import Stopped, _StopGuard
from vibes_eval.core.types import Sample, SampleResult, Task

# What ``NodeWorker.run`` yields, in order: ("result", SampleResult) for each sample as
# soon as it is known, then ("error", detail, traceback) when the unit itself failed (the
# driver makes the samples not yet reported infra errors, as the local engine does), then
# ("done",). A stream that ends without ("done",) lost its worker.
RESULT, ERROR, DONE = "result", "error", "done"


@dataclass(frozen=True)
class WorkerSpec:
    """What every node needs to evaluate this run exactly as the driver would."""

    benchmark: str  # "module:ClassName" of the benchmark
    config: dict[str, Any]  # its settings, as JSON
    runner: str  # the sandbox the driver resolved (recorded with the run)
    run_id: str
    environment: dict[str, str]  # the driver's toolchain: a node with another refuses
    version: str  # vibes-eval on the driver
    images: tuple[str, ...] = ()  # images the units prefer: which does this node hold?


@dataclass
class NodeFacts:
    """What the driver places units by."""

    node_id: str
    host: str
    ok: bool
    reason: str = ""  # why this node takes no units (one line)
    gpus: tuple[float, ...] = ()  # compute capabilities of its CUDA GPUs
    images: frozenset[str] = frozenset()  # of ``WorkerSpec.images``, those held here
    max_parallelism: int | None = None  # the runner's own limit here
    notes: list[str] = field(default_factory=list)


def benchmark_path(bench: object) -> str:
    cls = type(bench)
    return f"{cls.__module__}:{cls.__qualname__}"


def _import(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


class NodeWorker:
    """One per node. ``describe`` says whether it can take units; ``run`` runs one (many
    at once, on the actor's threads); ``stop`` kills what runs (Ctrl-C on the driver).

    The constructor raises nothing: what goes wrong (a runner that does not work here, a
    toolchain other than the driver's, a benchmark that cannot be built) is reported by
    ``describe``, once, and the node takes no units.
    """

    def __init__(self, spec: WorkerSpec, tasks: Mapping[str, Task], node_id: str = "") -> None:
        self.spec = spec
        self.tasks = dict(tasks)
        self.stopping = threading.Event()
        self.facts = NodeFacts(node_id=node_id, host=socket.gethostname(), ok=False)
        self.benchmark: Any = None
        self.runner: Any = None
        try:
            self._setup()
        except Exception as exc:  # reported by describe(): this node sits the run out
            self.facts.reason = _first_line(exc)
            self._close_runner()

    def _setup(self) -> None:
        import vibes_eval
        from vibes_eval.core import devices
        from vibes_eval.runners.select import resolve_runner

        spec = self.spec
        if vibes_eval.__version__ != spec.version:
            raise RuntimeError(
                f"vibes-eval {vibes_eval.__version__} here, {spec.version} on the driver"
            )
        cls = _import(spec.benchmark)
        self.benchmark = cls(cls.config_model.model_validate(spec.config))
        self.benchmark.start_run(spec.run_id)
        self.runner = resolve_runner(spec.runner, getattr(cls, "runner_needs", ()))
        env = self.benchmark.environment()  # builds what the benchmark keeps warm
        differ = [
            f"{key}: {env.get(key)!r} here, {spec.environment.get(key)!r} on the driver"
            for key in sorted(set(env) | set(spec.environment))
            if env.get(key) != spec.environment.get(key)
        ]
        if differ:
            raise RuntimeError("another toolchain than the driver's: " + "; ".join(differ))
        self.guarded = _StopGuard(self.runner, self.stopping)
        self.facts.gpus = tuple(g.compute_capability for g in devices.gpus())
        self.facts.images = frozenset(held_images(spec.images))
        self.facts.max_parallelism = self.runner.capabilities.max_parallelism
        weaker = self.runner.capabilities.weaknesses()
        if weaker:
            self.facts.notes.append(f"sandbox {self.runner.name}: {'; '.join(weaker)}")
        self.facts.ok = True

    def describe(self) -> NodeFacts:
        return self.facts

    def ping(self) -> int:
        return os.getpid()

    def run(self, unit: list[Sample]) -> Iterator[tuple[Any, ...]]:
        """Run one unit; yields its results as they come (see ``RESULT``)."""
        if not self.facts.ok:
            yield (ERROR, f"node {self.facts.host} cannot run units: {self.facts.reason}", "")
            yield (DONE,)
            return
        # Unbounded: a unit's results are few, and a thread blocked on a full queue of a
        # stream the driver gave up on would never end.
        out: queue.Queue[tuple[Any, ...]] = queue.Queue()

        def on_result(result: SampleResult) -> None:
            out.put((RESULT, result))

        def work() -> None:
            try:
                self.benchmark.run_unit(self.tasks, unit, self.guarded, on_result)
            except Stopped:
                pass
            except Exception as exc:  # the engine's rule: it costs only this unit
                out.put((ERROR, _first_line(exc), traceback.format_exc(limit=-3)))
            finally:
                out.put((DONE,))

        thread = threading.Thread(target=work, name="vibes-unit", daemon=True)
        thread.start()
        while True:
            item = out.get()
            yield item
            if item[0] == DONE:
                return

    def run_all(self, unit: list[Sample]) -> list[tuple[Any, ...]]:
        """``run`` for drivers that cannot take a stream (Ray Client): every item at once."""
        return list(self.run(unit))

    def stop(self) -> None:
        """Start nothing new and kill what runs."""
        self.stopping.set()
        self._close_runner()

    def _close_runner(self) -> None:
        if self.runner is not None:
            with contextlib.suppress(Exception):
                self.runner.close()


def held_images(wanted: tuple[str, ...]) -> set[str]:
    """Which of ``wanted`` this node's Docker daemon holds (a tag, or ``label=K=V`` for any
    image with that label); none when there is no daemon."""
    if not wanted:
        return set()
    try:
        from vibes_eval.runners.docker.client import connect

        client = connect()
    except Exception:
        return set()
    held: set[str] = set()
    try:
        images = client.images.list()
        tags = {t for img in images for t in (img.tags or [])}
        labels = {f"label={k}={v}" for img in images for k, v in (img.labels or {}).items()}
        for want in wanted:
            name = want if ":" in want or want.startswith("label=") else f"{want}:latest"
            if name in tags or want in labels:
                held.add(want)
    except Exception:
        return held
    finally:
        with contextlib.suppress(Exception):
            client.close()
    return held
