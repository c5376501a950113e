"""PodGroupPodsCount: a PlacementScore plugin of Kubernetes 1.36 (TopologyAwareWorkloadScheduling,
``pkg/scheduler/framework/plugins/podgrouppodscount``): the placement that takes more of the
group's pods is better.

    ScorePlacement           the group's scheduled pods (assumed or bound) + the members proposed
                             for the placement
    NormalizePlacementScore  score * 100 / the highest score (not minCount: small differences in
                             counts stay small differences in scores); an Error "no pods from pod
                             group are assigned to any of the candidate placements" when every
                             score is 0

Source: podgroup_pods_count.go as it is with ``PodGroupCycleState`` (the 1.36 line).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.framework import Code, ConfigError, Status, hookimpl

if TYPE_CHECKING:
    from kubesched.framework import (
        CycleState,
        Handle,
        PlacementScore,
        PodGroupAssignments,
        PodGroupInfo,
    )

NAME = "PodGroupPodsCount"
MSG_NO_PODS_ASSIGNED = "no pods from pod group are assigned to any of the candidate placements"
_MAX, _MIN = 100, 0


class PodGroupPodsCount:
    """PlacementScore and NormalizePlacementScore (see the module)."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    @hookimpl
    def kubesched_placement_score(self, state: CycleState, pod_group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
        st = self.handle.cluster.workload_manager.groups.get((pod_group.namespace, "", pod_group.name, ""))
        scheduled = st.scheduled_pods_count() if st is not None else 0
        return scheduled + len(assignments.proposed)

    @hookimpl
    def kubesched_normalize_placement_score(self, state: CycleState, pod_group: PodGroupInfo, scores: list[PlacementScore]) -> Status | None:
        top = max((s.score for s in scores), default=0)
        if top == 0:
            return Status(Code.ERROR, MSG_NO_PODS_ASSIGNED)
        for s in scores:
            s.score = _MIN + s.score * (_MAX - _MIN) // top
        return None


def new(args: Mapping[str, Any] | None, handle: Handle) -> PodGroupPodsCount:
    if args:
        extra = [k for k in args if k not in ("apiVersion", "kind")]
        if extra:
            raise ConfigError(f'strict decoding error: unknown field "{extra[0]}"')
    return PodGroupPodsCount(handle)


__all__ = ["MSG_NO_PODS_ASSIGNED", "NAME", "PodGroupPodsCount", "new"]
