"""Sizes a workload cannot hold, found by arithmetic before any work (``bench``'s up-front check).

A workload's nodes are all alike and so are its init pods and its measured pods, so how many of
each a node holds is a division: the node's allocatable cpu, memory and pod count over the pod's
requests, and 1 for a pod whose required anti-affinity on ``kubernetes.io/hostname`` selects pods
like itself.  Then, phase by phase as the runner creates them:

- the init pods must fit on the nodes;
- measured pods of a higher priority than the init pods are preemptors: they evict init pods, so
  they must fit on the nodes alone; other measured pods must fit beside the init pods (pods that
  repel each other: ``init + pods <= nodes``; otherwise what the init pods leave of each resource);
- measured pods spread ``DoNotSchedule`` over a label: the domains' capacities with the smallest
  one's ``+ maxSkew`` bound on every other.

Each condition is necessary, never more: a size it lets through may still not fit (bin packing
is left to the scheduler), and the runner's stuck check (``_check_stuck``) stays the backstop.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from kubesched.api._objects import Node, Pod
from kubesched.api._resources import Resource, pod_requests

if TYPE_CHECKING:
    from kubesched.bench._workloads import Workload

HOSTNAME = "kubernetes.io/hostname"

__all__ = ["unschedulable_pods"]


def unschedulable_pods(w: Workload) -> int:
    """How many pods the phase that fails first leaves unscheduled at ``w``'s sizes (0: they may
    fit), from the workload's own node and pod templates."""
    nodes, init_pods, pods = w.nodes, w.init_pods, w.pods
    init, pod = w.make_init_pod(0), w.make_pod(0)
    alloc = Resource.from_list(w.make_node(0).status.allocatable)
    fit_init = _per_node(alloc, init)
    over = init_pods - nodes * fit_init if init_pods else 0
    if over > 0:
        return over
    fit_pod = _per_node(alloc, pod)
    over = pods - nodes * fit_pod
    if over <= 0 and (pod.spec.priority or 0) <= (init.spec.priority or 0) and init_pods:
        if fit_pod == 1 and fit_init == 1 and _repels(pod, init) and _repels(init, pod):
            over = init_pods + pods - nodes
        else:
            over = pods - _room_left(alloc, nodes, init, init_pods, pod)
    if over <= 0 and w.devices_per_node:
        # DRA: one device per claim, a claim per pods_per_claim pods
        per = max(w.pods_per_claim, 1)
        over = -(-init_pods // per) + -(-pods // per) - nodes * w.devices_per_node
    if over <= 0 and pod.spec.topology_spread_constraints:
        over = pods - _spread_capacity(pod, fit_pod, [w.make_node(i) for i in range(nodes)])
    return max(0, over)


def _per_node(alloc: Resource, pod: Pod) -> int:
    """How many pods like ``pod`` one node holds."""
    req = pod_requests(pod)
    fits = [alloc.allowed_pod_number]
    for have, need in ((alloc.milli_cpu, req.milli_cpu), (alloc.memory, req.memory)):
        if need:
            fits.append(have // need)
    for name, need in req.scalar.items():
        if need:
            fits.append(alloc.scalar.get(name, 0) // need)
    if _repels(pod, pod):
        fits.append(1)
    return max(0, min(fits))


def _room_left(alloc: Resource, nodes: int, init: Pod, init_pods: int, pod: Pod) -> int:
    """How many ``pod`` the nodes' resources hold beside ``init_pods`` init pods (summed over
    the nodes: a bound, not a packing)."""
    ri, rp = pod_requests(init), pod_requests(pod)
    room = [nodes * alloc.allowed_pod_number - init_pods]
    for have, a, b in ((alloc.milli_cpu, ri.milli_cpu, rp.milli_cpu), (alloc.memory, ri.memory, rp.memory)):
        if b:
            room.append((nodes * have - init_pods * a) // b)
    return max(0, min(room))


def _repels(a: Pod, b: Pod) -> bool:
    """Whether ``a``'s required pod anti-affinity on the hostname selects ``b`` (``matchLabels``
    within the term's namespaces)."""
    aff = a.spec.affinity
    anti = aff.pod_anti_affinity if aff is not None else None
    if anti is None:
        return False
    labels = b.metadata.labels or {}
    for term in anti.required_during_scheduling_ignored_during_execution or []:
        sel = term.label_selector
        if term.topology_key != HOSTNAME or sel is None or sel.match_expressions:
            continue
        if b.metadata.namespace not in (term.namespaces or [a.metadata.namespace]):
            continue
        if all(labels.get(k) == v for k, v in (sel.match_labels or {}).items()):
            return True
    return False


def _spread_capacity(pod: Pod, fit: int, nodes: list[Node]) -> int:
    """How many pods like ``pod`` its ``DoNotSchedule`` spread constraints let the nodes hold:
    per constraint, each domain's capacity capped at the smallest domain's plus ``maxSkew``."""
    best = len(nodes) * fit
    for c in pod.spec.topology_spread_constraints or []:
        if c.when_unsatisfiable != "DoNotSchedule":
            continue
        domains = Counter((n.metadata.labels or {}).get(c.topology_key) for n in nodes)
        domains.pop(None, None)
        if not domains:
            return 0
        caps = [count * fit for count in domains.values()]
        least = min(caps)
        best = min(best, sum(min(cap, least + int(c.max_skew)) for cap in caps))
    return best
