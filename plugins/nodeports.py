"""NodePorts: a pod's host ports must be free on the node (``plugins/nodeports``).

- PreFilter: the pod's host ports (``util.GetHostPorts``: containers and restartable init
  containers, ``hostPort > 0``); Skip when it has none, which is most pods, so Filter never runs
  for them.
- Filter: Unschedulable "node(s) didn't have free ports for the requested pod ports" when one
  wanted ``(hostIP, protocol, hostPort)`` conflicts with a port in use on the node
  (``HostPortInfo.CheckConflict``): an empty hostIP means 0.0.0.0 and an empty protocol TCP; a
  wanted 0.0.0.0 port conflicts with that (protocol, port) on any IP; a specific IP conflicts with
  the same IP or 0.0.0.0; different protocols never conflict.  Nodes with no port in use pass
  without being looked at further.
- EnqueueExtensions: Pod/Delete (queue only when the deleted pod was scheduled or nominated and
  held a conflicting port) and Node/Add.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    Handle,
    QueueingHint,
    Status,
    hookimpl,
)

from ._helper import SKIP, queueing_hints_enabled

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kubesched.framework import CycleState, NodeBatch, NodeInfo, Pod

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"

HostPort = tuple[str, str, int]
"""``(hostIP, protocol, hostPort)``, sanitized (0.0.0.0 / TCP for empty values)."""


def get_host_ports(pod: Pod) -> list[HostPort]:
    """``util.GetHostPorts``: the pod's host ports, sanitized (as ``PodInfo.host_ports``)."""
    out: list[HostPort] = []
    for c in pod.spec.init_containers:
        if c.restart_policy == "Always":  # only sidecars run for the pod's whole life
            out.extend(_ports(c.ports))
    for c in pod.spec.containers:
        out.extend(_ports(c.ports))
    return out


def _ports(ports: Iterable[Any]) -> Iterable[HostPort]:
    for p in ports:
        if p.host_port > 0:
            yield (p.host_ip or DEFAULT_BIND_ALL_HOST_IP, p.protocol or "TCP", p.host_port)


def check_conflict(used: Mapping[HostPort, Any] | Iterable[HostPort], want: HostPort) -> bool:
    """``HostPortInfo.CheckConflict``: does ``want`` clash with a port in ``used``?"""
    ip, protocol, port = want
    if port <= 0:
        return False
    if ip == DEFAULT_BIND_ALL_HOST_IP:
        return any(p == port and proto == protocol for _, proto, p in used)
    if not isinstance(used, Mapping):
        used = dict.fromkeys(used, 1)
    return (DEFAULT_BIND_ALL_HOST_IP, protocol, port) in used or (ip, protocol, port) in used


def fits_ports(want: Iterable[HostPort], used: Mapping[HostPort, Any] | Iterable[HostPort]) -> bool:
    """``fitsPorts``: no wanted port conflicts with ``used``."""
    return not any(check_conflict(used, w) for w in want)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """``Fits``: the pod's host ports are free on ``node_info``."""
    return fits_ports(get_host_ports(pod), node_info.used_ports)


class NodePorts:
    """PreFilter, Filter and EnqueueExtensions."""

    name = NAME
    # PreFilter answers the shared Skip, and does nothing else, for a pod without host ports
    # (kubesched.runtime._filter_runners then does not call it)
    skips_pre_filter_without = "host ports"

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle: Handle = handle

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD
        if not queueing_hints_enabled(self.handle):
            # hints off: also taint and label updates (a Node/Add may be filtered out by preCheckForNode, kubernetes#109437)
            node_actions |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE), self.is_schedulable_after_pod_deleted
            ),
            # a node update never frees ports; with queueing hints only Add is registered
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
        ]

    def is_schedulable_after_pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue only when the deleted pod was placed (or nominated) and held a conflicting port."""
        deleted = old
        if deleted is None:
            return QueueingHint.QUEUE
        if not deleted.spec.node_name and not deleted.status.nominated_node_name:
            return QueueingHint.QUEUE_SKIP
        ports = get_host_ports(deleted)
        if not ports:
            return QueueingHint.QUEUE_SKIP
        if fits_ports(get_host_ports(pod), dict.fromkeys(ports, 1)):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    # --- PreFilter / Filter ---------------------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        pi = state.pod_info  # the cycle's PodInfo holds them (computed when the pod was queued)
        ports = pi.host_ports if pi is not None and pi.pod is pod else get_host_ports(pod)
        if not ports:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, tuple(ports))
        return None

    @hookimpl
    def kubesched_filter(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> dict[int, Status] | None:
        try:
            want = state.read(PRE_FILTER_STATE_KEY)
        except KeyError as e:
            return dict.fromkeys(
                range(len(nodes)),
                Status(Code.ERROR, f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: {e.args[0]}'),
            )
        if not want:
            return None
        out: dict[int, Status] = {}
        st: Status | None = None
        for i, ni in enumerate(nodes.infos):
            used = ni.used_ports
            if used and not fits_ports(want, used):
                if st is None:
                    st = Status(Code.UNSCHEDULABLE, ERR_REASON)
                out[i] = st
        return out or None


def new(args: Any, handle: Handle) -> NodePorts:
    return NodePorts(args, handle)


__all__ = [
    "ERR_REASON",
    "NAME",
    "NodePorts",
    "check_conflict",
    "fits",
    "fits_ports",
    "get_host_ports",
    "new",
]
