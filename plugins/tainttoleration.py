"""TaintToleration: taints repel pods that do not tolerate them (``plugins/tainttoleration``).

- Filter: the first NoSchedule / NoExecute taint of the node the pod does not tolerate rejects
  the node, UnschedulableAndUnresolvable "node(s) had untolerated taint {key: value}" through
  Kubernetes 1.33 (v1.33.3 taint_toleration.go), "node(s) had untolerated taint(s)" from 1.34
  (v1.34.7, v1.35.4 taint_toleration.go: kubernetes#134740, in 1.35.0 and cherry-picked to the
  1.34 patch releases as #135023; each minor is emulated as its latest patch).
- Score: the number of the node's PreferNoSchedule taints not tolerated by the pod's
  PreferNoSchedule (or empty-effect) tolerations; normalized reversed (fewer is better).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework import (
    MAX_NODE_SCORE,
    PREFER_NO_SCHEDULE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    Handle,
    QueueingHint,
    Status,
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
    hookimpl,
    tolerations_tolerate_taint,
)

from ._helper import default_normalize_score, queueing_hints_enabled

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kubesched.framework import CycleState, Node, NodeBatch, NodeInfo, Pod, Taint, Toleration

NAME = "TaintToleration"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_NOT_MATCH = "node(s) had taints that the pod didn't tolerate"


ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
"""The Filter reason from 1.34 on (v1.34.7 taint_toleration.go; the taint is only logged)."""


def err_reason_untolerated(taint: Taint) -> str:
    """The Filter reason for one untolerated taint, through 1.33 (v1.33.3 taint_toleration.go)."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def tolerations_prefer_no_schedule(tolerations: Sequence[Toleration]) -> list[Toleration]:
    """The tolerations with effect PreferNoSchedule or empty (which means every effect)."""
    return [t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE]


def count_intolerable_taints_prefer_no_schedule(
    taints: Sequence[Taint], tolerations: Sequence[Toleration]
) -> int:
    """How many PreferNoSchedule taints none of ``tolerations`` tolerates."""
    return sum(
        1
        for taint in taints
        if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tolerations, taint)
    )


class TaintToleration:
    """Filter, PreScore, Score and NormalizeScore (reversed DefaultNormalizeScore)."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle
        self.names_the_taint = handle.emulated_version < (1, 34)

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        if not queueing_hints_enabled(self.handle):
            # hints off: label updates too (a Node/Add may be filtered out by preCheckForNode, kubernetes#109437); no Pod event (an update of
            # an unschedulable pod already retries it without hints)
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
        """Queue when the node goes from untolerated (or absent) to tolerated."""
        tols = pod.spec.tolerations
        was_untolerated = True
        if old is not None:
            was_untolerated = (
                find_matching_untolerated_taint(old.spec.taints, tols, do_not_schedule_taints_filter)
                is not None
            )
        is_untolerated = (
            find_matching_untolerated_taint(new.spec.taints, tols, do_not_schedule_taints_filter)
            is not None
        )
        if was_untolerated and not is_untolerated:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_toleration_change(self, pod: Pod, old: Pod | None, new: Pod) -> QueueingHint:
        """Only the rejected pod's own toleration change may help it."""
        if pod.metadata.uid == new.metadata.uid:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # --- Filter ---------------------------------------------------------------------------
    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> dict[int, Status] | None:
        out: dict[int, Status] = {}
        tols = pod.spec.tolerations
        if nodes.snapshot is None and len(nodes) == 1:  # preemption's dry runs: one node, no numpy
            flagged = [0] if _tainted_or_missing(nodes[0]) else []
        else:
            flagged = nodes.flagged(NAME, _tainted_or_missing)
        for i in flagged:
            node = nodes[i].node
            if node is None:
                out[i] = Status.as_error("invalid nodeInfo")
                continue
            taints = node.spec.taints
            if not taints:
                continue
            taint = find_matching_untolerated_taint(taints, tols, do_not_schedule_taints_filter)
            if taint is not None:
                reason = err_reason_untolerated(taint) if self.names_the_taint else ERR_REASON_UNTOLERATED
                out[i] = Status.unresolvable(reason)
        return out or None

    # --- Score ----------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        tols = pod.spec.tolerations  # most pods have none: no call for them
        state.write(PRE_SCORE_STATE_KEY, tolerations_prefer_no_schedule(tols) if tols else [])
        return None

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        tols = state.get(PRE_SCORE_STATE_KEY)
        if tols is None:
            raise ValueError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        out = np.zeros(len(nodes), dtype=np.int64)
        for i in nodes.flagged(NAME, _tainted_or_missing):
            ni = nodes[i]
            if ni.node is not None and ni.node.spec.taints:
                out[i] = count_intolerable_taints_prefer_no_schedule(ni.node.spec.taints, tols)
        return out

    def uniform_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> int | None:
        """MAX_NODE_SCORE when no node of the batch has a PreferNoSchedule taint the pod does
        not tolerate (Score all 0, which NormalizeScore makes all MAX_NODE_SCORE), else None
        (see :mod:`kubesched.runtime._score_runners`)."""
        tols = state.get(PRE_SCORE_STATE_KEY)
        if tols is None:
            return None  # Score's error
        for i in nodes.flagged(NAME, _tainted_or_missing):
            node = nodes[i].node
            if node is not None and node.spec.taints and count_intolerable_taints_prefer_no_schedule(node.spec.taints, tols):
                return None
        return MAX_NODE_SCORE

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> Status | None:
        if len(scores) and not scores[scores.argmax()]:  # no intolerable taint (the usual case)
            scores[:] = MAX_NODE_SCORE  # what the reversed normalization makes of all zeros
            return None
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None


def _tainted_or_missing(ni: NodeInfo) -> bool:
    return ni.node is None or bool(ni.node.spec.taints)


def new(args: dict[str, Any] | None, handle: Handle) -> TaintToleration:
    return TaintToleration(args, handle)


__all__ = [
    "ERR_REASON_NOT_MATCH",
    "ERR_REASON_UNTOLERATED",
    "NAME",
    "TaintToleration",
    "count_intolerable_taints_prefer_no_schedule",
    "err_reason_untolerated",
    "new",
    "tolerations_prefer_no_schedule",
]
