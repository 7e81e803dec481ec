"""The driver's bookkeeping for ``--executor ray``: which unit goes to which node next,
which units no node can take, and how often a unit may be lost with its worker. Pure
Python (no Ray), so placement and retry rules are tested without a cluster."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vibes_eval.core.placement import NodeNeeds
from vibes_eval.core.types import Sample
from vibes_eval.scaleout.worker import NodeFacts


@dataclass(eq=False)
class Unit:
    uid: int
    samples: list[Sample]
    needs: NodeNeeds
    lost_on: list[str] = field(default_factory=list)  # nodes whose worker died running it

    @property
    def attempts(self) -> int:
        return len(self.lost_on)


@dataclass(eq=False)
class Node:
    """A node of the cluster and its worker (an actor once started)."""

    node_id: str
    slots: int  # units at once
    resources: Mapping[str, float] = field(default_factory=dict)  # as Ray lists them
    address: str = ""  # its IP, as Ray lists it
    actor: Any = None
    facts: NodeFacts | None = None  # None while its worker starts
    busy: int = 0
    suspect: bool = False  # a unit was lost there; asking whether its worker lives
    restarts: int = 0
    gone: bool = False

    @property
    def name(self) -> str:
        """host (address) and the start of its node id: several nodes may share a host."""
        host = self.facts.host if self.facts else self.address or "?"
        return f"{host}/{self.node_id[:8]}"

    @property
    def starting(self) -> bool:
        return not self.gone and (self.facts is None or self.suspect)

    @property
    def usable(self) -> bool:
        return not self.gone and not self.suspect and self.facts is not None and self.facts.ok

    @property
    def free(self) -> int:
        return self.slots - self.busy if self.usable else 0

    def meets(self, needs: NodeNeeds) -> bool:
        """Whether this node has what ``needs`` requires (known once its worker described
        itself)."""
        if self.facts is None:
            return False
        return needs.gpu_fits(self.facts.gpus) and needs.resources_fit(self.resources)

    def holds(self, needs: NodeNeeds) -> bool:
        return bool(self.facts and needs.images and self.facts.images & set(needs.images))


class Board:
    """Units waiting for a node. ``max_attempts``: how many workers a unit may lose before
    its samples become infra errors (a unit that kills every node it touches must end)."""

    def __init__(self, units: Iterable[Unit], *, max_attempts: int = 3) -> None:
        self.queue: list[Unit] = list(units)
        self.max_attempts = max_attempts

    def __len__(self) -> int:
        return len(self.queue)

    def take_for(self, node: Node, nodes: Iterable[Node]) -> Unit | None:
        """The next unit for ``node``: one whose image it holds first, then one whose image
        no other usable node holds, then any it can run."""
        others = [n for n in nodes if n is not node and n.usable]
        fallback: int | None = None
        spare: int | None = None
        for i, unit in enumerate(self.queue):
            if not node.meets(unit.needs):
                continue
            if node.holds(unit.needs):
                return self.queue.pop(i)
            if spare is None and not any(n.holds(unit.needs) for n in others):
                spare = i
                if not unit.needs.images:
                    break  # nothing better for this node further down than a plain unit
            if fallback is None:
                fallback = i
        pick = spare if spare is not None else fallback
        return self.queue.pop(pick) if pick is not None else None

    def unplaceable(self, nodes: Iterable[Node]) -> list[Unit]:
        """Units that no node can take, nor any node still starting might: removed from
        the queue. Empty while any node's worker has not described itself yet."""
        nodes = [n for n in nodes if not n.gone]
        if any(n.starting for n in nodes):
            return []
        able = [n for n in nodes if n.usable]
        stuck = [u for u in self.queue if not any(n.meets(u.needs) for n in able)]
        if stuck:
            ids = {id(u) for u in stuck}
            self.queue = [u for u in self.queue if id(u) not in ids]
        return stuck

    def lost(self, unit: Unit, node: Node, remaining: list[Sample]) -> bool:
        """``unit``'s worker died with ``remaining`` samples unreported. Requeues them
        (first in line) and returns True, or returns False once the unit has lost
        ``max_attempts`` workers."""
        unit.lost_on.append(node.name)
        unit.samples = remaining
        if unit.attempts >= self.max_attempts:
            return False
        self.queue.insert(0, unit)
        return True
