"""The run over time (``timeline``) and the nodes at its end (``nodes``), in the result's units:
``cpu`` in millicores, ``memory`` in bytes, ``pods`` a count, then the extended resources."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.api._objects import Node, Pod
from kubesched.api._resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    NEWEST_RULES,
    PODS,
    RequestRules,
    Resource,
    pod_requests,
)

__all__ = ["Timeline", "final_allocation"]


class Timeline:
    """``timeline``: after each instant at which a pod was created, bound, finished or deleted
    or a node changed, the pending and running pods, and what the running pods of schedulable
    nodes request against those nodes' allocatable (a cordoned node counts in neither).  O(1)
    per event; one entry per instant."""

    def __init__(self, rules: RequestRules = NEWEST_RULES) -> None:
        self.rules = rules  # how the scheduler computes requests (the release's gates)
        self.entries: list[dict[str, Any]] = []
        self.pending = 0
        self.running = 0
        self.allocated = Resource()
        self.capacity = Resource()
        self._pods: dict[tuple[str, str], tuple[str, Resource | None]] = {}
        self._nodes: dict[str, Resource] = {}  # schedulable nodes' allocatable
        self._on_node: dict[str, Resource] = {}  # node -> what its running pods request

    def pod(self, key: tuple[str, str], pod: Pod, deleted: bool, now: float) -> None:
        old_state, old_req = self._pods.get(key, ("", None))
        if deleted or pod.status.phase in ("Succeeded", "Failed"):
            state = ""
        elif pod.spec.node_name:
            state = "running"
        else:
            state = "pending"
        created = key not in self._pods and not deleted
        if state == old_state and not created:
            if deleted:
                self._pods.pop(key, None)
            return
        if old_state == "pending":
            self.pending -= 1
        elif old_state == "running" and old_req is not None:
            self.running -= 1
            self._charge(pod.spec.node_name, old_req, -1)
        req = None
        if state == "pending":
            self.pending += 1
        elif state == "running":
            self.running += 1
            req = pod_requests(pod, rules=self.rules)
            req.allowed_pod_number = 1
            self._charge(pod.spec.node_name, req, 1)
        if deleted:
            self._pods.pop(key, None)
        else:
            self._pods[key] = (state, req)
        self._snapshot(now)

    def node(self, node: Node, deleted: bool, now: float) -> None:
        name = node.metadata.name
        old = self._nodes.pop(name, None)
        on_node = self._on_node.get(name)
        if old is not None:
            self.capacity.add(old, -1)
            if on_node is not None:
                self.allocated.add(on_node, -1)
        if not deleted and not node.spec.unschedulable:
            cap = Resource.from_list(node.status.allocatable)
            self._nodes[name] = cap
            self.capacity.add(cap)
            if on_node is not None:
                self.allocated.add(on_node)
        self._snapshot(now)

    def _charge(self, node: str, req: Resource, sign: int) -> None:
        self._on_node.setdefault(node, Resource()).add(req, sign)
        if node in self._nodes:
            self.allocated.add(req, sign)

    def _snapshot(self, now: float) -> None:
        keys = [CPU, MEMORY, PODS]
        extra = {*self.capacity.scalar, *self.allocated.scalar}
        keys += sorted(k for k in extra if k not in keys and k != EPHEMERAL_STORAGE)
        entry = {
            "time": now,
            "pending": self.pending,
            "running": self.running,
            "allocated": {k: self.allocated.get(k) for k in keys},
            "capacity": {k: self.capacity.get(k) for k in keys},
        }
        if self.entries and self.entries[-1]["time"] == now:
            self.entries[-1] = entry
        else:
            self.entries.append(entry)


def final_allocation(nodes: Sequence[Node], pods: Sequence[Pod], rules: RequestRules = NEWEST_RULES) -> list[dict[str, Any]]:
    """The JSON ``nodes`` section: each node's capacity and what its pods request, at the end.

    Keys as in the timeline: ``cpu`` in millicores, ``memory`` in bytes, ``pods`` a count, then
    the node's extended resources.  Capacity is the node's allocatable (what the scheduler
    fits against); a pod counts while it is bound and not finished.
    """
    used: dict[str, Resource] = {}
    for pod in pods:
        if pod.spec.node_name and pod.status.phase not in ("Succeeded", "Failed"):
            r = used.setdefault(pod.spec.node_name, Resource())
            r.add(pod_requests(pod, rules=rules))
            r.allowed_pod_number += 1
    out = []
    for node in nodes:
        cap = Resource.from_list(node.status.allocatable)
        alloc = used.get(node.metadata.name, Resource())
        keys = [CPU, MEMORY, PODS]
        keys += sorted(k for k in {*cap.scalar, *alloc.scalar} if k not in keys and k != EPHEMERAL_STORAGE)
        out.append(
            {
                "name": node.metadata.name,
                "capacity": {k: cap.get(k) for k in keys},
                "allocated": {k: alloc.get(k) for k in keys},
            }
        )
    return out
