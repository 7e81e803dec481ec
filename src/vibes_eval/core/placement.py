"""What a machine must have to run a task's samples, for executors that spread units over
several machines (``--executor ray``). A benchmark declares it per task
(``Benchmark.node_needs``); a unit needs what its tasks need together. The local executor
ignores it: on one machine a missing GPU is the benchmark's own verdict (``no_device``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field


class NodeNeeds(BaseModel):
    """Requirements (a node lacking one takes none of the unit) and preferences (a node
    that has them goes first)."""

    model_config = ConfigDict(frozen=True)

    # A CUDA GPU of at least this compute capability (9.0 for sm_90); 0.0: any CUDA GPU;
    # None: no GPU needed.
    min_compute_capability: float | None = None
    # Arch-specific code (sm_90a, sm_100a) runs only on exactly these; empty: any at or
    # above the minimum.
    compute_capabilities: tuple[float, ...] = ()
    # Custom resources the node must declare (Ray: `ray start --resources '{"x": 1}'`).
    resources: Mapping[str, float] = Field(default_factory=dict)
    # Container images the unit runs in: nodes already holding them are preferred (a
    # SWE-bench instance image is gigabytes). ``label=KEY=VALUE`` names any image with
    # that label.
    images: tuple[str, ...] = ()

    @property
    def needs_gpu(self) -> bool:
        return self.min_compute_capability is not None or bool(self.compute_capabilities)

    @property
    def empty(self) -> bool:
        return not (self.needs_gpu or self.resources or self.images)

    def describe(self) -> str:
        """The requirements in words, for a unit no node can take."""
        parts = []
        if self.compute_capabilities:
            caps = ", ".join(f"{c:g}" for c in self.compute_capabilities)
            parts.append(f"a CUDA GPU of compute capability {caps}")
        elif self.min_compute_capability:
            parts.append(f"a CUDA GPU of compute capability >= {self.min_compute_capability:g}")
        elif self.min_compute_capability is not None:
            parts.append("a CUDA GPU")
        parts += [f"resource {name} >= {amount:g}" for name, amount in self.resources.items()]
        return " and ".join(parts) or "nothing"

    def gpu_fits(self, capabilities: Iterable[float]) -> bool:
        """Whether one of a node's GPUs (their compute capabilities) meets the need."""
        if not self.needs_gpu:
            return True
        for cc in capabilities:
            if self.compute_capabilities and not any(
                abs(cc - want) < 1e-6 for want in self.compute_capabilities
            ):
                continue
            if cc + 1e-6 >= (self.min_compute_capability or 0.0):
                return True
        return False

    def resources_fit(self, resources: Mapping[str, float]) -> bool:
        return all(resources.get(name, 0.0) >= amount for name, amount in self.resources.items())


def combine(needs: Iterable[NodeNeeds]) -> NodeNeeds:
    """What a unit needs: every task's requirements at once, every task's preferences."""
    floor: float | None = None
    exact: set[float] | None = None
    resources: dict[str, float] = {}
    images: dict[str, None] = {}
    for need in needs:
        if need.min_compute_capability is not None:
            floor = max(floor or 0.0, need.min_compute_capability)
        if need.compute_capabilities:
            caps = set(need.compute_capabilities)
            exact = caps if exact is None else exact & caps
        for name, amount in need.resources.items():
            resources[name] = max(resources.get(name, 0.0), amount)
        images.update(dict.fromkeys(need.images))
    return NodeNeeds(
        min_compute_capability=floor,
        # An empty intersection stays unsatisfiable: (-1,) matches no GPU.
        compute_capabilities=tuple(sorted(exact)) if exact else ((-1.0,) if exact == set() else ()),
        resources=resources,
        images=tuple(images),
    )
