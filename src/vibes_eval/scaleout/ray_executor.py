"""``--executor ray``: a run's units on the nodes of a Ray cluster.

One ``NodeWorker`` actor per node (pinned to it) holds the benchmark, the runner and their
warm caches; units go to nodes that meet their needs (``Benchmark.node_needs``), preferring
nodes that hold their image; each verdict streams back as soon as it is known and is
recorded here, on the driver, the store's only writer. A node that dies loses only the
samples it had not reported yet: they run again elsewhere, at most ``max_attempts`` times.
At most one unit per slot is in flight, so the driver holds a bounded number of them
whatever the size of the run. docs/scale-out.md tells the whole story.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import vibes_eval
from vibes_eval.core.errors import UserError
from vibes_eval.core.executor import Executor, Job
from vibes_eval.core.placement import combine
from vibes_eval.core.types import Sample, SampleResult
from vibes_eval.scaleout.board import Board, Node, Unit
from vibes_eval.scaleout.worker import DONE, ERROR, RESULT, NodeWorker, WorkerSpec, benchmark_path

log = logging.getLogger("vibes_eval.scaleout")

MAX_ATTEMPTS = 3  # workers a unit may lose before its samples are infra errors
START_TIMEOUT_S = 600.0  # a node's worker that has not described itself by then is left out
GATHER_S = 60.0  # how long the start waits for slower nodes once one can take units
NODE_REFRESH_S = 5.0  # how often the cluster's node list is read (nodes join and leave)
RESTARTS_PER_NODE = 3  # workers started again on a live node whose worker died
SETTLE_EVERY = 1000  # results handed to the store before waiting until they are durable


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError(
            "--executor ray needs Ray on this machine: pip install 'vibes-eval[ray]'"
        ) from None
    return ray


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:300]}" if text else type(exc).__name__


class RayExecutor(Executor):
    """Raises (``open``): UserError when Ray is missing or the cluster cannot be reached."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        super().__init__(address, workers)
        _ray()
        self.run_id = "vibes"
        self.max_attempts = MAX_ATTEMPTS
        self.start_timeout_s = START_TIMEOUT_S
        self._connected_here = False

    def open(self) -> None:
        ray = _ray()
        if ray.is_initialized():  # the caller connected already (a notebook, a test)
            return
        _check_reachable(self.address)
        try:
            ray.init(
                address=self.address,
                log_to_driver=False,  # the workers' logs stay on their nodes
                logging_level=logging.WARNING,
                include_dashboard=False if self.address is None else None,
            )
        except Exception as exc:  # ConnectionError, ValueError, RuntimeError, grpc errors
            where = self.address or "the default address"
            raise UserError(
                f"cannot reach the Ray cluster at {where}: {_first_line(exc)}"
            ) from None
        self._connected_here = True
        _quiet_cluster_errors()

    def start_run(self, run_id: str) -> None:
        self.run_id = run_id

    def run(self, job: Job) -> None:
        if not job.pending:
            return
        _Dispatch(self, job).run()

    def close(self) -> None:
        if self._connected_here:
            self._connected_here = False
            with contextlib.suppress(Exception):
                _ray().shutdown()


def _check_reachable(address: str | None) -> None:
    """Ray retries an address where nothing listens for minutes: say so at once.

    Raises: UserError when HOST:PORT (or ray://HOST:PORT) refuses a connection."""
    if not address or address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"--ray-address {address}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        raise UserError(
            f"cannot reach the Ray cluster at {address}: {exc.strerror or exc} (is its head "
            "running? `ray start --head` starts one)"
        ) from None


def _quiet_cluster_errors() -> None:
    """Ray prints the cluster's error messages (a raylet's last log lines when a node dies)
    on the driver's stdout, where the report goes; the run's own notes already say what
    matters. Their first line goes to this module's log instead."""
    import ray._private.worker as ray_worker

    original = ray_worker.print_to_stdstream
    if getattr(original, "vibes_quiet", False):
        return

    def quiet(data: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        if data.get("pid") == "raylet":
            for line in data.get("lines", [])[:1]:
                log.info("ray: %s", str(line).splitlines()[0] if line else "")
            return
        original(data, *args, **kwargs)

    quiet.vibes_quiet = True  # type: ignore[attr-defined]
    ray_worker.print_to_stdstream = quiet


@dataclass(eq=False)
class _Flight:
    """A unit running on a node: the stream of its results."""

    unit: Unit
    node: Node
    reported: set[tuple[str, int]] = field(default_factory=set)


class _Dispatch:
    """One run's units through the cluster. Everything happens on the calling thread:
    ``ray.wait`` over the result streams, the workers starting and the liveness checks."""

    def __init__(self, ex: RayExecutor, job: Job) -> None:
        self.ray = _ray()
        self.ex = ex
        self.job = job
        self.bench = job.benchmark
        self.nodes: dict[str, Node] = {}
        self.flights: dict[Any, _Flight] = {}  # result stream -> unit on a node
        self.starting: dict[Any, tuple[Node, float]] = {}  # describe() -> node, since
        self.pings: dict[Any, Node] = {}  # ping() after a loss -> node
        self.spec: WorkerSpec | None = None
        self.tasks_ref: Any = None
        self.delivered = 0
        self.lost_units: Counter[str] = Counter()  # node -> units lost there
        self.unplaced: Counter[str] = Counter()  # needs no node meets -> samples
        self.node_notes: dict[tuple[str, str], list[str]] = {}  # (what, detail) -> nodes
        weaker = job.runner.capabilities.weaknesses()
        self.driver_notes = {f"sandbox {job.runner.name}: {'; '.join(weaker)}"} if weaker else set()
        self._seen_nodes = 0.0
        self._actor_class: Any = None
        from ray.util.client import ray as ray_client

        self.streaming = not ray_client.is_connected()  # Ray Client (ray://) streams nothing

    # -- setting up ---------------------------------------------------------------------

    def run(self) -> None:
        job = self.job
        needs = {t: self.bench.node_needs(job.tasks[t]) for t in {s.task_id for s in job.pending}}
        images = tuple(dict.fromkeys(i for n in needs.values() for i in n.images))
        self.spec = WorkerSpec(
            benchmark=benchmark_path(self.bench),
            config=self.bench.config.model_dump(mode="json"),
            runner=job.runner.name,
            run_id=self.ex.run_id,
            environment=self.bench.environment(),
            version=vibes_eval.__version__,
            images=images,
        )
        self.tasks_ref = self.ray.put({t: job.tasks[t] for t in needs})  # once, not per unit
        try:
            self._refresh_nodes()
            self._gather()
            slots = sum(n.slots for n in self.nodes.values() if n.usable) or 1
            units = [
                Unit(i, list(u), combine(needs[s.task_id] for s in u))
                for i, u in enumerate(self.bench.plan(job.pending, slots))
            ]
            self.board = Board(units, max_attempts=self.ex.max_attempts)
            self._loop()
        except BaseException:
            self.job.stopping.set()
            self._stop_workers()
            raise
        finally:
            self._release()
            self._report()

    def _refresh_nodes(self) -> None:
        """Start a worker on every live node that has none; forget nodes that left."""
        self._seen_nodes = time.monotonic()
        alive = {n["NodeID"]: n for n in self.ray.nodes() if n.get("Alive")}
        for node_id, info in alive.items():
            if node_id not in self.nodes:
                resources = dict(info.get("Resources") or {})
                cpus = max(1, int(resources.get("CPU", 1)))
                slots = min(cpus, self.ex.workers) if self.ex.workers else cpus
                node = Node(node_id, slots, resources, address=info.get("NodeManagerAddress", ""))
                self.nodes[node_id] = node
                self._start_worker(node)
        for node in self.nodes.values():
            if node.node_id not in alive and not node.gone:
                self._drop(node, "left the cluster")

    def _gather(self) -> None:
        """Wait for every node's worker to say whether it can take units, so the units are
        planned over the slots that will run them and every node's problem is reported.
        Once one node is usable, a node slower than ``GATHER_S`` joins when it is ready.

        Raises: UserError when every node refuses."""
        since = time.monotonic()
        while self.starting:
            usable = any(n.usable for n in self.nodes.values())
            if usable and time.monotonic() - since > GATHER_S:
                return
            ready, _ = self.ray.wait(list(self.starting), num_returns=1, timeout=1.0)
            for ref in ready:
                self._on_described(ref)
            self._check_start_timeouts()
        if not any(n.usable for n in self.nodes.values()):
            self._nobody_left()

    def _start_worker(self, node: Node) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        if self._actor_class is None:
            self._actor_class = self.ray.remote(NodeWorker)
        node.facts = None
        node.suspect = False
        node.actor = self._actor_class.options(
            num_cpus=0,  # it runs units itself, up to its slots: Ray need not count them
            max_concurrency=node.slots + 2,  # + describe/ping/stop beside the units
            max_restarts=0,  # a dead worker's units are this driver's to place again
            scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False),
        ).remote(self.spec, self.tasks_ref, node.node_id)
        self.starting[node.actor.describe.remote()] = (node, time.monotonic())

    # -- the loop ---------------------------------------------------------------------------

    def _loop(self) -> None:
        while len(self.board) or self.flights:
            if time.monotonic() - self._seen_nodes > NODE_REFRESH_S:
                self._refresh_nodes()
            self._place()
            waiting = [*self.flights, *self.starting, *self.pings]
            if not waiting:  # units left, nothing running: _place takes them next round
                time.sleep(0.1)
                continue
            ready, _ = self.ray.wait(waiting, num_returns=1, timeout=1.0)
            if ready:  # and whatever else is ready by now, in one go
                ready, _ = self.ray.wait(waiting, num_returns=len(waiting), timeout=0)
            for item in ready:
                if item in self.flights:
                    self._on_stream(item)
                elif item in self.starting:
                    self._on_described(item)
                elif item in self.pings:
                    self._on_ping(item)
            self._check_start_timeouts()

    def _place(self) -> None:
        """Fail the units no node can take; give each free slot a unit it can run.

        Raises: UserError when no node can take any unit (see ``_nobody_left``)."""
        if len(self.board) and not any(n.usable or n.starting for n in self.nodes.values()):
            self._nobody_left()
        for unit in self.board.unplaceable(self.nodes.values()):
            self._fail_unplaceable(unit)
        nodes = list(self.nodes.values())
        for node in nodes:
            while node.free > 0 and len(self.board):
                unit = self.board.take_for(node, nodes)
                if unit is None:
                    break
                self._submit(node, unit)

    def _nobody_left(self) -> None:
        """No node can take the remaining units and none is starting.

        Raises: UserError naming why each node refused."""
        why = [f"{n.name}: {n.facts.reason if n.facts else 'gone'}" for n in self.nodes.values()]
        raise UserError(
            "no node of the Ray cluster can run this evaluation ("
            + "; ".join(why or ["no nodes"])
            + "); what was evaluated is recorded: fix the nodes, then vibes eval resume"
        )

    # -- events ---------------------------------------------------------------------------

    def _submit(self, node: Node, unit: Unit) -> None:
        if self.streaming:
            ref = node.actor.run.options(num_returns="streaming").remote(unit.samples)
        else:  # Ray Client streams nothing: the unit's results come back at its end
            ref = node.actor.run_all.remote(unit.samples)
        self.flights[ref] = _Flight(unit, node)
        node.busy += 1

    def _on_stream(self, stream: Any) -> None:
        """Handle what a unit's stream has ready, without waiting for more."""
        ray = self.ray
        try:
            if not self.streaming:
                for item in ray.get(stream):
                    self._on_item(stream, item)
                return
            while stream in self.flights:
                self._on_item(stream, ray.get(next(stream)))
                if stream in self.flights and not ray.wait([stream], timeout=0)[0]:
                    return
        except StopIteration:
            self._lost(stream, "its result stream ended early")
        except ray.exceptions.RayTaskError as exc:  # a bug on the node, not a lost node
            self._failed(stream, _first_line(exc))
        except ray.exceptions.RayError as exc:  # the worker or its node died
            self._lost(stream, _first_line(exc))

    def _on_item(self, stream: Any, item: tuple[Any, ...]) -> None:
        flight = self.flights[stream]
        kind = item[0]
        if kind == RESULT:
            result: SampleResult = item[1]
            flight.reported.add(result.key)
            self._deliver(result)
        elif kind == ERROR:
            self._infra(flight.unit.samples, flight.reported, item[1], item[2])
        elif kind == DONE:
            self._finished(stream)

    def _deliver(self, result: SampleResult) -> None:
        self.job.deliver(result)
        self.delivered += 1
        if self.delivered % SETTLE_EVERY == 0:
            self.job.settle()  # the store keeps up, or the driver waits for it

    def _infra(
        self, samples: list[Sample], reported: set[tuple[str, int]], detail: str, tb: str = ""
    ) -> None:
        for sample in samples:
            if sample.key not in reported:
                reported.add(sample.key)
                result = self.bench.infra_result(sample, detail)
                self._deliver(result.model_copy(update={"stderr": tb}) if tb else result)

    def _finished(self, stream: Any) -> None:
        flight = self.flights.pop(stream)
        flight.node.busy -= 1
        missing = [s for s in flight.unit.samples if s.key not in flight.reported]
        if missing:  # the benchmark forgot some: the engine's rule makes them infra errors
            self._infra(missing, flight.reported, "the unit ended without a verdict for it")

    def _failed(self, stream: Any, detail: str) -> None:
        flight = self.flights.pop(stream)
        flight.node.busy -= 1
        self._infra(flight.unit.samples, flight.reported, detail)

    def _lost(self, stream: Any, why: str) -> None:
        """The worker running a unit died (or its node did): what it had not reported runs
        again elsewhere, unless the unit has already cost ``max_attempts`` workers."""
        flight = self.flights.pop(stream)
        node, unit = flight.node, flight.unit
        node.busy -= 1
        self.lost_units[node.name] += 1
        remaining = [s for s in unit.samples if s.key not in flight.reported]
        log.warning("unit %d lost on node %s (%s)", unit.uid, node.name, why)
        if remaining and not self.board.lost(unit, node, remaining):
            detail = (
                f"lost with the worker running it {unit.attempts} times "
                f"(nodes {', '.join(unit.lost_on)}; last: {why})"
            )
            self._infra(remaining, set(), detail[:500])
        if not node.suspect and not node.gone:
            node.suspect = True  # no new units until it answers
            self.pings[node.actor.ping.remote()] = node

    def _on_described(self, ref: Any) -> None:
        node, _ = self.starting.pop(ref)
        try:
            node.facts = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            self._worker_died(node, _first_line(exc))
            return
        facts = node.facts
        if not facts.ok:
            self._node_note(node, "takes no units", facts.reason)
            return
        if facts.max_parallelism:
            node.slots = min(node.slots, facts.max_parallelism)
        for note in facts.notes:
            if note not in self.driver_notes:  # the driver's runner says the same already
                self._node_note(node, "notes", note)

    def _on_ping(self, ref: Any) -> None:
        node = self.pings.pop(ref)
        try:
            self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            self._worker_died(node, _first_line(exc))
            return
        node.suspect = False  # alive: the loss was something else's (a network blip)

    def _worker_died(self, node: Node, why: str) -> None:
        """Start the node's worker again while the node lives (a few times), else drop it."""
        with contextlib.suppress(Exception):
            self.ray.kill(node.actor)
        alive = {n["NodeID"] for n in self.ray.nodes() if n.get("Alive")}
        if node.node_id in alive and node.restarts < RESTARTS_PER_NODE:
            node.restarts += 1
            log.warning("worker on node %s died (%s); starting it again", node.name, why)
            self._start_worker(node)
        else:
            self._drop(node, f"its worker died: {why}")

    def _drop(self, node: Node, why: str) -> None:
        node.gone = True
        node.suspect = False
        self._node_note(node, "left the run", why)

    def _check_start_timeouts(self) -> None:
        now = time.monotonic()
        for ref, (node, since) in list(self.starting.items()):
            if now - since > self.ex.start_timeout_s:
                del self.starting[ref]
                with contextlib.suppress(Exception):
                    self.ray.kill(node.actor)
                self._drop(node, f"its worker did not start in {self.ex.start_timeout_s:.0f} s")

    def _fail_unplaceable(self, unit: Unit) -> None:
        usable = [n for n in self.nodes.values() if n.usable]
        detail = (
            f"needs {unit.needs.describe()}: no node of the Ray cluster has it "
            f"({len(usable)} usable nodes)"
        )
        self.unplaced[unit.needs.describe()] += len(unit.samples)
        self._infra(unit.samples, set(), detail)

    # -- ending ---------------------------------------------------------------------------

    def _node_note(self, node: Node, what: str, detail: str) -> None:
        """Say it now (the log), and once in the report, with every node it is true of."""
        names = self.node_notes.setdefault((what, detail), [])
        if node.name not in names:
            names.append(node.name)
            log.warning("node %s %s: %s", node.name, what, detail)

    def _stop_workers(self) -> None:
        """Ctrl-C: every worker kills what it runs; then the streams are dropped."""
        stops = []
        for node in self.nodes.values():
            if node.actor is not None and not node.gone:
                with contextlib.suppress(Exception):
                    stops.append(node.actor.stop.remote())
        with contextlib.suppress(Exception):
            self.ray.wait(stops, num_returns=len(stops), timeout=10)
        for stream in list(self.flights):
            with contextlib.suppress(Exception):
                self.ray.cancel(stream, force=False)
        self.flights.clear()

    def _release(self) -> None:
        for node in self.nodes.values():
            if node.actor is not None:
                with contextlib.suppress(Exception):
                    self.ray.kill(node.actor)
                node.actor = None

    def _report(self) -> None:
        """The run's notes for the report: one line per kind of trouble."""
        notes = self.ex.notes
        for (what, detail), names in self.node_notes.items():
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            who = f"node {shown}" if len(names) == 1 else f"{len(names)} nodes ({shown})"
            notes.append(f"{who} {what}: {detail}")
        for needs, count in self.unplaced.items():
            notes.append(f"{count} samples need {needs}: no node of the Ray cluster has it")
        if self.lost_units:
            where = ", ".join(f"{n} ({c})" for n, c in self.lost_units.items())
            notes.append(
                f"{sum(self.lost_units.values())} units lost with their worker and run "
                f"again elsewhere: {where}"
            )
