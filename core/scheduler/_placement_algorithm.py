"""The placement algorithm of the PodGroup cycle (Kubernetes 1.36, TopologyAwareWorkloadScheduling):
upstream's ``podGroupSchedulingPlacementAlgorithm`` and ``findBestPlacement``
(``pkg/scheduler/schedule_one_podgroup.go`` of the 1.36 line).

    placementGenerate plugins   the candidate placements, from every node of the snapshot
                                (Unschedulable "no feasible placements found" when none)
    for each placement          AssumePlacement (the snapshot holds only its nodes), the default
                                algorithm (its members reverted at its end), an Error ends all
    none fits                   the first placement's result, its status "0/<n> placements are
                                available, first placement status: <its error>"
    one fits                    its result
    several fit                 findBestPlacement: the placementScore plugins' highest total,
                                ties broken at random (the scheduler's seeded source)
    ForgetPlacement             once, after the last (each placement's snapshot is rebuilt from
                                the cache: the previous one's members are reverted by then)

Upstream lists a generate plugin's placements in its own order (TopologyPlacement: a Go map's);
kubesched keeps the order the plugins give (TopologyPlacement's: domain names).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from kubesched.runtime._cyclestate import CycleState
from kubesched.runtime._placement import (
    Placement,
    PodGroupAssignments,
    PodGroupInfo,
    ProposedAssignment,
    run_placement_generate_plugins,
    run_placement_score_plugins,
)
from kubesched.runtime._status import Code, Status

if TYPE_CHECKING:
    from kubesched.queue._scheduling_queue import QueuedPodInfo
    from kubesched.runtime._framework import Framework
    from kubesched.scheduler._schedule_one import ScheduleOne


class _PodResult(Protocol):
    @property
    def qpi(self) -> QueuedPodInfo: ...
    @property
    def result(self) -> Any: ...


class _GroupResult(Protocol):
    """What the algorithm reads of the default algorithm's ``GroupResult``."""

    status: Status | None

    @property
    def waiting_on_preemption(self) -> bool: ...
    @property
    def pod_results(self) -> list[Any]: ...


R = TypeVar("R", bound=_GroupResult)


async def placement_algorithm(
    sched: ScheduleOne, fw: Framework, qpis: list[QueuedPodInfo], default_algorithm: Callable[[], Awaitable[R]]
) -> R | Status:
    """``podGroupSchedulingPlacementAlgorithm`` for the group of ``qpis``: the result of
    ``default_algorithm`` on the best placement, or a Status when no placement is tried (the
    generate plugins failed or gave none) or none could be scored."""
    sched.snapshot.update(sched.cache)
    pod = qpis[0].pod
    sg = pod.spec.scheduling_group
    group = PodGroupInfo(pod.metadata.namespace, (sg.pod_group_name or "") if sg is not None else "", [q.pod for q in qpis])
    state = CycleState()  # the group's cycle state (podGroupCycleState)
    placements, st = run_placement_generate_plugins(
        fw.points.get("placementGenerate", []), state, group, list(sched.snapshot.node_infos)
    )
    if st is not None:  # an Error, or Unschedulable "no feasible placements found"
        return st
    first: R | None = None
    fitting: list[tuple[Placement, R]] = []
    try:
        for placement in placements:
            _assume_placement(sched, placement)
            result = await default_algorithm()
            if result.status is not None and result.status.code == Code.ERROR:
                return result
            if first is None:
                first = result
            if result.status is None or result.waiting_on_preemption:
                fitting.append((placement, result))
    finally:
        _forget_placement(sched)
    assert first is not None
    if not fitting:
        status = first.status
        why = status.error if status is not None and status.error is not None else None
        text = str(why) if why is not None else (status.message if status is not None else "")
        first.status = Status(
            Code.UNSCHEDULABLE, f"0/{len(placements)} placements are available, first placement status: {text}"
        )
        return first
    if len(fitting) == 1:
        return fitting[0][1]
    return _best_placement(sched, fw, state, group, fitting)


def _best_placement(
    sched: ScheduleOne, fw: Framework, state: CycleState, group: PodGroupInfo, fitting: list[tuple[Placement, R]]
) -> R | Status:
    """``findBestPlacement``: the placementScore plugins' highest total; ties at random."""
    assignments = [
        PodGroupAssignments(p, [
            ProposedAssignment(pr.qpi.pod, pr.result.suggested_host) for pr in r.pod_results if pr.result.suggested_host
        ])
        for p, r in fitting
    ]  # fmt: skip
    scores, st = run_placement_score_plugins(fw.points.get("placementScore", []), state, group, assignments)
    if st is not None:
        return st
    for s in scores:
        s.randomizer = sched.rng.getrandbits(62)
    best = 0
    for i in range(1, len(scores)):
        a, b = scores[i], scores[best]
        if a.total > b.total or (a.total == b.total and a.randomizer > b.randomizer):
            best = i
    return fitting[best][1]


class _PlacementView:
    """The cache as ``Snapshot.update`` reads it, its node list cut to a placement's: the snapshot
    is rebuilt from these nodes and stays at the cache's tree generation (so its later updates
    refresh the changed rows only, those outside the placement skipped)."""

    class _Tree:
        def __init__(self, names: list[str]) -> None:
            self.names = names

        def list(self) -> list[str]:
            return list(self.names)

    def __init__(self, cache: Any, names: list[str]) -> None:
        self.tree_generation = cache.tree_generation
        self.tree = self._Tree(names)
        self.node_infos = cache.node_infos
        self.dirty = cache.dirty


def _assume_placement(sched: ScheduleOne, placement: Placement) -> None:
    """``AssumePlacement``: the snapshot holds only the placement's nodes (in the cache's order)
    until :func:`_forget_placement`."""
    names = {ni.node.metadata.name for ni in placement.nodes if ni.node is not None}
    cache = sched.cache
    view = _PlacementView(cache, [n for n in cache.tree.list() if n in names])
    sched.snapshot.tree_generation = -1  # rebuilt from the view
    sched.snapshot.update(cast(Any, view))


def _forget_placement(sched: ScheduleOne) -> None:
    """``ForgetPlacement``: every node again (a full rebuild from the cache)."""
    sched.snapshot.tree_generation = -1
    sched.snapshot.update(sched.cache)


__all__ = ["placement_algorithm"]
