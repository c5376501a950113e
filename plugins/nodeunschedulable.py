"""NodeUnschedulable: keep pods off cordoned nodes (``plugins/nodeunschedulable``).

A node with ``spec.unschedulable`` rejects every pod that does not tolerate the taint
``node.kubernetes.io/unschedulable:NoSchedule``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.framework import (
    NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    Handle,
    QueueingHint,
    Status,
    Taint,
    hookimpl,
    tolerations_tolerate_taint,
)

from ._helper import queueing_hints_enabled

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kubesched.framework import CycleState, Node, NodeBatch, NodeInfo, Pod, Toleration

NAME = "NodeUnschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=NO_SCHEDULE)


def pod_tolerates_unschedulable(tolerations: Sequence[Toleration]) -> bool:
    """If the pod tolerates the unschedulable taint, it also tolerates ``spec.unschedulable``."""
    return tolerations_tolerate_taint(tolerations, _UNSCHEDULABLE_TAINT)


class NodeUnschedulable:
    """Filter: UnschedulableAndUnresolvable "node(s) were unschedulable"."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle

    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        if not queueing_hints_enabled(self.handle):
            # hints off: label updates too (a Node/Add may be filtered out by preCheckForNode,
            # kubernetes#109437); no Pod event (an update of an unschedulable pod retries it)
            return [
                ClusterEventWithHint(
                    ClusterEvent(
                        EventResource.NODE,
                        ActionType.ADD | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL,
                    ),
                    self.is_schedulable_after_node_change,
                ),
            ]
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_pod_toleration_change,
            ),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node) -> QueueingHint:
        """Queue when a node turns schedulable, or a schedulable node is added."""
        if (old is not None and old.spec.unschedulable and not new.spec.unschedulable) or (
            old is None and not new.spec.unschedulable
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_toleration_change(self, pod: Pod, old: Pod, new: Pod) -> QueueingHint:
        """Queue when the pod itself gained a toleration of the unschedulable taint."""
        if (
            new.metadata.uid == pod.metadata.uid
            and not pod_tolerates_unschedulable(old.spec.tolerations)
            and pod_tolerates_unschedulable(new.spec.tolerations)
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> dict[int, Status] | None:
        out: dict[int, Status] = {}
        tolerates: bool | None = None
        if nodes.snapshot is None and len(nodes) == 1:  # preemption's dry runs: one node, no numpy
            flagged_list = [0] if _cordoned_or_missing(nodes[0]) else []
        else:
            flagged_list = nodes.flagged(NAME, _cordoned_or_missing)
        for i in flagged_list:
            node = nodes[i].node
            if node is None:
                out[i] = Status.unresolvable(ERR_REASON_UNKNOWN_CONDITION)
                continue
            if node.spec.unschedulable:
                if tolerates is None:
                    tolerates = pod_tolerates_unschedulable(pod.spec.tolerations)
                if not tolerates:
                    out[i] = Status.unresolvable(ERR_REASON_UNSCHEDULABLE)
        return out or None


def _cordoned_or_missing(ni: NodeInfo) -> bool:
    return ni.node is None or ni.node.spec.unschedulable


def new(args: dict[str, Any] | None, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable(args, handle)


__all__ = [
    "ERR_REASON_UNKNOWN_CONDITION",
    "ERR_REASON_UNSCHEDULABLE",
    "NAME",
    "NodeUnschedulable",
    "new",
    "pod_tolerates_unschedulable",
]
