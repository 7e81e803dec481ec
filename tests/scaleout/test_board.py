"""Placement and retry rules of --executor ray, without a cluster: which unit a node takes,
which units no node can take, and how many workers a unit may cost."""

from __future__ import annotations

from vibes_eval.core.placement import NodeNeeds, combine
from vibes_eval.core.types import Sample
from vibes_eval.scaleout.board import Board, Node, Unit
from vibes_eval.scaleout.worker import NodeFacts


def sample(task: str, index: int = 0) -> Sample:
    return Sample(task_id=task, index=index, completion="x")


def node(name: str, *, gpus: tuple[float, ...] = (), images: frozenset[str] = frozenset(),
         resources: dict[str, float] | None = None, ok: bool = True) -> Node:  # fmt: skip
    n = Node(name * 8, slots=1, resources=resources or {"CPU": 1.0})
    n.facts = NodeFacts(node_id=n.node_id, host=name, ok=ok, gpus=gpus, images=images)
    return n


def unit(uid: int, needs: NodeNeeds | None = None) -> Unit:
    return Unit(uid, [sample(f"T/{uid}")], needs or NodeNeeds())


def test_gpu_units_go_only_where_the_capability_is() -> None:
    hopper, ampere, cpu = node("h", gpus=(9.0,)), node("a", gpus=(8.0,)), node("c")
    sm90 = NodeNeeds(min_compute_capability=9.0)
    board = Board([unit(0, sm90), unit(1)])
    nodes = [hopper, ampere, cpu]
    assert board.take_for(cpu, nodes).uid == 1
    assert board.take_for(ampere, nodes) is None
    assert board.take_for(hopper, nodes).uid == 0


def test_exact_architectures_and_any_gpu() -> None:
    exact = NodeNeeds(min_compute_capability=9.0, compute_capabilities=(9.0,))
    assert exact.gpu_fits([9.0]) and not exact.gpu_fits([10.0])
    any_gpu = NodeNeeds(min_compute_capability=0.0)
    assert any_gpu.gpu_fits([7.5]) and not any_gpu.gpu_fits([])
    assert NodeNeeds().gpu_fits([])


def test_a_unit_needs_what_all_its_tasks_need() -> None:
    both = combine(
        [NodeNeeds(min_compute_capability=8.0, images=("a",)),
         NodeNeeds(min_compute_capability=9.0, resources={"swe": 1}, images=("b",))]
    )  # fmt: skip
    assert both.min_compute_capability == 9.0
    assert both.resources == {"swe": 1}
    assert both.images == ("a", "b")
    never = combine(
        [NodeNeeds(compute_capabilities=(8.0,)), NodeNeeds(compute_capabilities=(9.0,))]
    )
    assert not never.gpu_fits([8.0, 9.0])


def test_custom_resources_are_requirements() -> None:
    swe = node("s", resources={"CPU": 4.0, "swebench": 1.0})
    plain = node("p")
    needs = NodeNeeds(resources={"swebench": 1})
    board = Board([unit(0, needs)])
    assert board.take_for(plain, [swe, plain]) is None
    assert board.take_for(swe, [swe, plain]).uid == 0


def test_nodes_holding_the_image_go_first_and_others_do_not_steal_it() -> None:
    warm = node("w", images=frozenset({"img:1"}))
    cold = node("c")
    board = Board([unit(0, NodeNeeds(images=("img:1",))), unit(1, NodeNeeds(images=("img:2",)))])
    # The cold node leaves the unit whose image the warm node holds, and takes the other.
    assert board.take_for(cold, [warm, cold]).uid == 1
    assert board.take_for(warm, [warm, cold]).uid == 0


def test_a_node_without_the_image_still_takes_the_unit_when_it_is_the_only_work() -> None:
    warm, cold = node("w", images=frozenset({"img:1"})), node("c")
    board = Board([unit(0, NodeNeeds(images=("img:1",)))])
    assert board.take_for(cold, [warm, cold]).uid == 0


def test_a_unit_no_node_can_take_is_given_up_only_once_every_node_answered() -> None:
    cpu = node("c")
    starting = Node("s" * 8, slots=1)  # its worker has not described itself yet
    board = Board([unit(0, NodeNeeds(min_compute_capability=9.0)), unit(1)])
    assert board.unplaceable([cpu, starting]) == []
    starting.gone = True
    stuck = board.unplaceable([cpu, starting])
    assert [u.uid for u in stuck] == [0]
    assert [u.uid for u in board.queue] == [1]


def test_a_refusing_node_takes_nothing() -> None:
    broken = node("b", ok=False)
    assert broken.free == 0 and not broken.usable
    board = Board([unit(0)])
    assert [u.uid for u in board.unplaceable([broken])] == [0]


def test_a_unit_that_kills_every_worker_it_touches_ends() -> None:
    a, b, c = node("a"), node("b"), node("c")
    u = Unit(0, [sample("T/0", 0), sample("T/0", 1)], NodeNeeds())
    board = Board([], max_attempts=3)
    assert board.lost(u, a, u.samples) and board.queue == [u]
    board.queue.clear()
    assert board.lost(u, b, [u.samples[1]])  # the first sample was reported before b died
    assert u.samples == [sample("T/0", 1)]
    board.queue.clear()
    assert not board.lost(u, c, u.samples)
    assert u.lost_on == ["a/aaaaaaaa", "b/bbbbbbbb", "c/cccccccc"] and board.queue == []
