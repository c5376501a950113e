"""SchedulingGates: hold pods with ``spec.schedulingGates`` at PreEnqueue (``plugins/schedulinggates``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    Handle,
    QueueingHint,
    Status,
    hookimpl,
)

from ._helper import go_slice

if TYPE_CHECKING:
    from kubesched.framework import Pod

NAME = "SchedulingGates"


class SchedulingGates:
    """PreEnqueue: UnschedulableAndUnresolvable("waiting for scheduling gates: [a b]")."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle

    @hookimpl
    def kubesched_pre_enqueue(self, pod: Pod) -> Status | None:
        gates = pod.spec.scheduling_gates
        if not gates:
            return None
        return Status.unresolvable(f"waiting for scheduling gates: {go_slice(g.name for g in gates)}")

    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self.is_schedulable_after_update_pod_scheduling_gates_eliminated,
            )
        ]

    def is_schedulable_after_update_pod_scheduling_gates_eliminated(
        self, pod: Pod, old: Pod | None, new: Pod
    ) -> QueueingHint:
        """Only the pod's own gate removal can let it in."""
        if new.metadata.uid != pod.metadata.uid:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def new(args: dict[str, Any] | None, handle: Handle) -> SchedulingGates:
    return SchedulingGates(args, handle)


__all__ = ["NAME", "SchedulingGates", "new"]
