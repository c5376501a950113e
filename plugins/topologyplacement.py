"""TopologyPlacement: the PlacementGenerate plugin of Kubernetes 1.36 (TopologyAwareWorkloadScheduling,
``pkg/scheduler/framework/plugins/topologyaware``): one candidate placement per domain of the
PodGroup's topology key.

    no schedulingConstraints.topology   the parent placement, unchanged (no constraint)
    topology[0].key (the API allows one) the parent's nodes grouped by the key's value (nodes
                                         without the label are in no placement), one placement
                                         per value, named after it
    members already scheduled           only their domain (they must all share one: else an
                                         Error "cannot determine domain for already scheduled
                                         pods: more than 1 domain found for pod group: a, b")

Source: the plugin as it is with the v1alpha2 PodGroup lister (the 1.36 line).  Upstream lists the
placements in Go map order (random); kubesched lists them by domain name, so that a run is
reproducible (the cycle's choice among equal scores stays random, seeded).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.framework import Code, ConfigError, Placement, Status, hookimpl

if TYPE_CHECKING:
    from kubesched.framework import CycleState, Handle, NodeInfo, Pod, PodGroupInfo

NAME = "TopologyPlacement"


class TopologyPlacement:
    """PlacementGenerate: a placement per topology domain (see the module)."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    @hookimpl
    def kubesched_placement_generate(self, state: CycleState, pod_group: PodGroupInfo, parent: Placement) -> list[Placement] | Status:
        pg = self.handle.cluster.get_scheduling_pod_group(pod_group.namespace, pod_group.name)
        if pg is None:
            return Status(Code.ERROR, f'podgroup.scheduling.k8s.io "{pod_group.name}" not found')
        constraints = pg.spec.scheduling_constraints
        if constraints is None or not constraints.topology:
            return [parent]  # no topology constraint: a single placement, the parent's
        key = constraints.topology[0].key
        required: str | None = None
        scheduled = self._scheduled_pods(pod_group)
        if scheduled:
            domain = self._scheduled_pods_domain(key, scheduled)
            if isinstance(domain, Status):
                return domain
            required = domain
        per_domain: dict[str, list[NodeInfo]] = {}
        for ni in parent.nodes:
            node = ni.node
            value = node.metadata.labels.get(key) if node is not None else None
            if value is not None and (required is None or value == required):
                per_domain.setdefault(value, []).append(ni)
        return [Placement(domain, nodes) for domain, nodes in sorted(per_domain.items()) if nodes]

    def _scheduled_pods(self, pod_group: PodGroupInfo) -> list[Pod]:
        """``PodGroupStates().Get(...).ScheduledPods()``: the members assumed or bound."""
        st = self.handle.cluster.workload_manager.groups.get((pod_group.namespace, "", pod_group.name, ""))
        if st is None:
            return []
        return [st.all_pods[uid] for uid in (*st.assumed, *st.assigned) if uid in st.all_pods]

    def _scheduled_pods_domain(self, key: str, pods: list[Pod]) -> str | Status:
        """``getScheduledPodsTopologyDomain``: the one domain of the scheduled members."""
        snapshot = self.handle.snapshot
        uids = {p.metadata.uid for p in pods}
        where: dict[str, str] = {}  # an assumed member is on its node in the snapshot only
        for ni in snapshot.node_infos:
            for pi in ni.pods:
                if pi.uid in uids and ni.node is not None:
                    where[pi.uid] = ni.node.metadata.name
        domain = ""
        for pod in pods:
            ref = f"{pod.metadata.namespace}/{pod.metadata.name}"
            node_name = where.get(pod.metadata.uid, pod.spec.node_name)
            found = snapshot.get(node_name)
            if found is None or found.node is None:
                return _cannot(f'getting node for pod {ref}: nodeinfo not found for node name "{node_name}"')
            value = found.node.metadata.labels.get(key)
            if value is None:
                return _cannot(f"no topology domain found for pod {ref}")
            if domain and domain != value:
                return _cannot(f"more than 1 domain found for pod group: {domain}, {value}")
            domain = value
        return domain


def _cannot(why: str) -> Status:
    return Status(Code.ERROR, f"cannot determine domain for already scheduled pods: {why}")


def new(args: Mapping[str, Any] | None, handle: Handle) -> TopologyPlacement:
    if args:
        extra = [k for k in args if k not in ("apiVersion", "kind")]
        if extra:  # upstream's New ignores its runtime.Object: no args
            raise ConfigError(f'strict decoding error: unknown field "{extra[0]}"')
    return TopologyPlacement(handle)


__all__ = ["NAME", "TopologyPlacement", "new"]
