"""The PodTopologySpread plugin: the parts it holds (filtering, scoring) and its EnqueueExtensions.

The plugin holds one :class:`Spread` (the args, the handle, the default constraints, the
matching-pod counts) and two stages built over it::

    PodTopologySpread ── spread     Spread: constraints for a pod, the nodes of the cycle, counts
                      ├─ filtering  Filtering: PreFilter (AddPod, RemovePod), Filter
                      └─ scoring    Scoring: PreScore, Score, NormalizeScore

Its ``@hookimpl`` methods call the stage; the queueing hints are its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    Handle,
    QueueingHint,
    hookimpl,
)

from .._helper import SKIP, queueing_hints_enabled

if TYPE_CHECKING:
    import numpy as np

    from kubesched.framework import CycleState, Node, NodeBatch, NodeInfo, Pod, Status
from .common import (
    HONOR,
    NAME,
    Spread,
    node_labels_match_spread_constraints,
)
from .filtering import Filtering
from .scoring import Scoring


class PodTopologySpread:
    """PreFilter (+AddPod/RemovePod), Filter, PreScore, Score, NormalizeScore, EnqueueExtensions.

    ``spread`` is what the stages share; ``filtering`` and ``scoring`` run the extension points.
    """

    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle
        self.spread = Spread(args, handle)
        self.filtering = Filtering(self.spread)
        self.scoring = Scoring(self.spread)

    # --- PreFilter, Filter (filtering.py) -----------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        if not pod.spec.topology_spread_constraints and not self.spread.hard_defaults:
            return SKIP  # Filtering.pre_filter's first answer, without its call (most pods get it)
        return self.filtering.pre_filter(state, pod, nodes)

    @hookimpl
    def kubesched_pre_filter_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Any, node_info: NodeInfo
    ) -> Status | None:
        return self.filtering.add_pod(state, pod, pod_to_add, node_info)

    @hookimpl
    def kubesched_pre_filter_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Any, node_info: NodeInfo
    ) -> Status | None:
        return self.filtering.remove_pod(state, pod, pod_to_remove, node_info)

    @hookimpl
    def kubesched_filter(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> dict[int, Status] | None:
        return self.filtering.filter(state, pod, nodes)

    # --- PreScore, Score, NormalizeScore (scoring.py) -----------------------------------------
    @hookimpl
    def kubesched_pre_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        if not pod.spec.topology_spread_constraints and not pod.metadata.owner_references:
            # no constraint of its own and no controller to default them from (default_selector
            # None): Scoring.init_pre_score_state finds no constraint, a Skip
            return SKIP
        return self.scoring.pre_score(state, pod, nodes)

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        return self.scoring.score(state, pod, nodes)

    @hookimpl
    def kubesched_normalize_score(
        self, state: CycleState, pod: Pod, scores: np.ndarray
    ) -> Status | None:
        return self.scoring.normalize_score(state, pod, scores)

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        if queueing_hints_enabled(self.handle):
            # a new toleration matters with nodeTaintsPolicy Honor; without hints an update of an
            # unschedulable pod retries it anyway, so upstream adds it only with hints
            pod_actions |= ActionType.UPDATE_POD_TOLERATION
        node_actions = (
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT
        )
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, pod_actions), self.is_schedulable_after_pod_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, node_actions), self.is_schedulable_after_node_change
            ),
        ]

    def is_schedulable_after_pod_change(
        self, pod: Pod, old: Pod | None, new: Pod | None
    ) -> QueueingHint:
        def involved(incoming: Pod) -> bool:
            return incoming.metadata.uid == pod.metadata.uid or (
                bool(incoming.spec.node_name)
                and incoming.metadata.namespace == pod.metadata.namespace
            )

        if (new is not None and not involved(new)) or (old is not None and not involved(old)):
            return QueueingHint.QUEUE_SKIP
        try:
            constraints = self.spread.get_constraints(pod)
        except ValueError:
            return QueueingHint.QUEUE
        if new is not None and old is not None:
            if (
                pod.metadata.uid == new.metadata.uid
                and new.spec.tolerations != old.spec.tolerations
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.QUEUE
            if new.metadata.labels == old.metadata.labels:
                return QueueingHint.QUEUE_SKIP
            for c in constraints:
                if c.selector.matches(old.metadata.labels) != c.selector.matches(
                    new.metadata.labels
                ):
                    return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        obj = new if new is not None else old
        if obj is not None and any(c.selector.matches(obj.metadata.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old: Node | None, new: Node | None
    ) -> QueueingHint:
        try:
            constraints = self.spread.get_constraints(pod)
        except ValueError:
            return QueueingHint.QUEUE
        old_match = old is not None and node_labels_match_spread_constraints(
            old.metadata.labels, constraints
        )
        new_match = new is not None and node_labels_match_spread_constraints(
            new.metadata.labels, constraints
        )
        if old is not None and new is not None:
            if old_match != new_match:
                return QueueingHint.QUEUE
            if new_match and (
                any(
                    old.metadata.labels.get(c.topology_key)
                    != new.metadata.labels.get(c.topology_key)
                    for c in constraints
                )
                or old.spec.taints != new.spec.taints
            ):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_match else QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if old_match else QueueingHint.QUEUE_SKIP


def new(args: Mapping[str, Any] | None, handle: Handle) -> PodTopologySpread:
    return PodTopologySpread(args, handle)


__all__ = ["PodTopologySpread", "new"]

