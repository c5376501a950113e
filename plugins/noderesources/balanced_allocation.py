"""NodeResourcesBalancedAllocation: favour nodes whose resource usage stays balanced.

Balance = ``(1 - std(min(requested / allocatable, 1))) * 100`` over the configured resources
(cpu and memory by default), using the nodes' *real* requests (no non-zero defaults).  Up to
1.35 the score is the balance with the pod; from 1.36 (kubernetes#135573) it is the change the
pod makes, ``50 + (50 + with - without) // 2``: 75 for no change, towards 100 for a node the pod
balances, towards 50 for one it unbalances.  PreScore skips best-effort pods (nothing requested
in those resources).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework import (
    DEFAULT_VERSION,
    MAX_NODE_SCORE,
    Handle,
    Status,
    hookimpl,
    request_rules,
)

from .._helper import SKIP
from ._args import parse_balanced_allocation_args
from ._resource_allocation import (
    _CPU_MEMORY,
    RowScores,
    allocatable_requested,
    balanced_change_fast,
    balanced_change_one,
    balanced_change_two,
    balanced_fast,
    balanced_one,
    balanced_resource_scorer,
    balanced_two,
    cpu_memory_columns,
    pod_resource_request_list,
)

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeBatch, Pod

BALANCED_NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + BALANCED_NAME


class BalancedAllocation:
    """PreScore and Score (no NormalizeScore)."""

    name = BALANCED_NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle
        self.resources = parse_balanced_allocation_args(args)
        self._names = tuple(r.name for r in self.resources)
        self._cpu_memory = self._names == _CPU_MEMORY  # (pod_resource_request_list)
        self._row_scores = RowScores(self._names, True, balanced_fast, balanced_one, compute_two=balanced_two)
        # 1.36's score of the change, kept per row as a whole (one gather a cycle)
        self._change_scores = RowScores(self._names, True, balanced_change_fast, balanced_change_one, with_pod=True, compute_two=balanced_change_two)  # type: ignore[arg-type]
        version = handle.emulated_version if handle is not None else DEFAULT_VERSION  # None: args checks only
        # 1.36 (kubernetes#135573): the score is the change in balance the pod makes
        self.score_the_change = version >= (1, 36)
        # PodLevelResources: resourceAllocationScorer's SkipPodLevelResources (v1.32
        # resource_allocation.go); the gate's default per release as Fit reads it
        self.rules = request_rules(version, handle.feature_gates if handle is not None else {})

    @hookimpl
    def kubesched_pre_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        reqs = pod_resource_request_list(pod, self.resources, True, self.rules, state, cpu_memory=self._cpu_memory)
        if not any(reqs):
            # best-effort pods would all pile onto one node (kubernetes#129138)
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, reqs)
        return None

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        return self.score_view(state, pod, nodes, False)

    def score_view(self, state: CycleState, pod: Pod, nodes: NodeBatch, view: bool = True) -> np.ndarray:
        """Score, whose answer may be a view of the kept per-row scores when ``view`` (for the
        Score runner only: see :mod:`kubesched.runtime._score_runners`)."""
        reqs = state.get(PRE_SCORE_STATE_KEY)
        if reqs is None:  # PreScore disabled
            reqs = pod_resource_request_list(pod, self.resources, True, self.rules)
            if not any(reqs):
                return np.zeros(len(nodes), dtype=np.int64)
        if not self.score_the_change:
            return self._balance(nodes, reqs, view)
        known = self._change_scores.scores(nodes, reqs, view)
        if known is not None:
            return known
        with_pod = self._balance(nodes, reqs)
        # 1.36 balanced_allocation.go (kubernetes#135573): scoreWithoutPod over the node's own
        # requests, with the resources the pod's requests leave out skipped as with it
        if all(n in _CPU_MEMORY for n in self._names):
            without = self._balance(nodes, [0] * len(reqs))
        else:
            requested, allocatable = allocatable_requested(nodes, self.resources, reqs, True)
            without = balanced_resource_scorer([r - p for r, p in zip(requested, reqs, strict=True)], allocatable)
        half = MAX_NODE_SCORE // 2
        out: np.ndarray = half + (half + with_pod - without) // 2  # 0 <= half + with - without
        return out

    def _balance(self, nodes: NodeBatch, reqs: list[int], view: bool = False) -> np.ndarray:
        """``balancedResourceScore`` of every node with ``reqs`` added (``view``: as
        :meth:`score_view`'s)."""
        known = self._row_scores.scores(nodes, reqs, view)
        if known is not None:
            return known
        fast = cpu_memory_columns(nodes, self._names, reqs, True)
        if fast is not None:
            out = balanced_fast(*fast)
            if out is not None:
                return out
        requested, allocatable = allocatable_requested(nodes, self.resources, reqs, True)
        return balanced_resource_scorer(requested, allocatable)


def new_balanced_allocation(args: dict[str, Any] | None, handle: Handle) -> BalancedAllocation:
    return BalancedAllocation(args, handle)


__all__ = ["BALANCED_NAME", "BalancedAllocation", "new_balanced_allocation"]
