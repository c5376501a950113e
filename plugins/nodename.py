"""NodeName: a pod with ``spec.nodeName`` set fits only that node (``plugins/nodename``)."""

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

from ._helper import queueing_hints_enabled

if TYPE_CHECKING:
    from kubesched.framework import CycleState, Node, NodeBatch, Pod

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node: Node | None) -> bool:
    """``Fits``: no requested node name, or it is this node's name."""
    want = pod.spec.node_name
    return not want or (node is not None and node.metadata.name == want)


class NodeName:
    """Filter: reject every node but ``spec.nodeName`` (UnschedulableAndUnresolvable)."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle

    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD
        if not queueing_hints_enabled(self.handle):
            # hints off: also taint and label updates (a Node/Add may be filtered out by preCheckForNode, kubernetes#109437)
            node_actions |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions), self.is_schedulable_after_node_add)]

    def is_schedulable_after_node_add(self, pod: Pod, old: Any, new: Node) -> QueueingHint:
        return QueueingHint.QUEUE if fits(pod, new) else QueueingHint.QUEUE_SKIP

    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> dict[int, Status] | None:
        want = pod.spec.node_name
        if not want:
            return None
        st = Status.unresolvable(ERR_REASON)
        return {i: st for i, n in enumerate(nodes.names) if n != want} or None


def new(args: dict[str, Any] | None, handle: Handle) -> NodeName:
    return NodeName(args, handle)


__all__ = ["ERR_REASON", "NAME", "NodeName", "fits", "new"]
