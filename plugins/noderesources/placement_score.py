"""NodeResourcesFit's PlacementScore (Kubernetes 1.36, TopologyAwareWorkloadScheduling): how full
a placement would be with the group on it.

The placement is scored as one node: for each resource of the plugin's ``scoringStrategy``
(its resources and weights, the same as pod-by-pod scoring), the requests of every pod already on
the placement's nodes plus those of the members proposed for it, over the placement's total
allocatable, scored by MostAllocated (``min(requested, allocatable) * 100 / allocatable``,
weighted average over the resources with allocatable) whatever the strategy's type: bin packing
within a placement.  Requests are the non-zero ones for cpu and memory (100m / 200Mi for a
container asking nothing), as pod-by-pod scoring counts them.

Source: kubernetes.io "Topology-Aware Workload Scheduling" (v1.36: "it scores placements based on
the allocation ratio across all nodes within the placement. It uses the MostAllocated strategy
... and it inherits resource weights from the standard pod-by-pod plugin settings"; "The type
will only be considered in pod-by-pod scheduling"), and the placement bin-packing scorer of the
1.36 line (``calculateNodeAllocatableRequest`` summed over the placement's nodes, the proposed
pods' ``calculatePodResourceRequestList`` added).  No NormalizePlacementScore: the score is within
[0, 100] already.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework import CPU, EPHEMERAL_STORAGE, MEMORY, hookimpl, is_scalar_resource_name

from ._resource_allocation import most_resource_scorer, pod_resource_request_list

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeInfo, PodGroupAssignments, PodGroupInfo


def _node_allocated(ni: NodeInfo, name: str) -> int:
    """The node's requests of ``name`` as scoring counts them (non-zero for cpu and memory)."""
    if name in (CPU, MEMORY):
        return int(ni.non_zero_of(name))
    return int(ni.requested_of(name))


class FitPlacementScore:
    """The PlacementScore of :class:`~kubesched.plugins.noderesources.fit.Fit` (a mixin: it uses the
    plugin's ``resources`` and ``rules``)."""

    resources: Any
    rules: Any

    @hookimpl
    def kubesched_placement_score(self, state: CycleState, pod_group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
        names = [r.name for r in self.resources]
        requested = [0] * len(names)
        for a in assignments.proposed:
            for i, v in enumerate(pod_resource_request_list(a.pod, self.resources, False, self.rules)):
                requested[i] += v
        # calculateNodeAllocatableRequest with the members' summed requests as the pod's: a
        # scalar resource they do not ask for counts for nothing (0 of 0: left out of the average)
        counted = [not (is_scalar_resource_name(name) and requested[i] == 0) for i, name in enumerate(names)]
        allocatable = [0] * len(names)
        for ni in assignments.placement.nodes:
            for i, name in enumerate(names):
                if counted[i] and (name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource_name(name)):
                    allocatable[i] += int(ni.allocatable.get(name))
                    requested[i] += _node_allocated(ni, name)
        score = most_resource_scorer(self.resources)(
            [np.array([r], dtype=np.int64) for r in requested], [np.array([c], dtype=np.int64) for c in allocatable]
        )
        return int(score[0]) if len(score) else 0


__all__ = ["FitPlacementScore"]
