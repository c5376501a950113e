"""PreferEmptyNodes: a Score plugin computed over the batch's numpy columns.

Score = free pod slots (allocatable ``pods`` minus the pods already on the node), then
NormalizeScore scales the best node to 100.  One call per pod scores every feasible node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.framework import MAX_NODE_SCORE, CycleState, Handle, NodeBatch, Pod, hookimpl

NAME = "PreferEmptyNodes"


class PreferEmptyNodes:
    """Score (+ NormalizeScore): the more free pod slots a node has, the higher its score."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle = handle

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        # one int64 entry per node of the batch; requested("pods") is the node's pod count
        free = nodes.allocatable("pods") - nodes.requested("pods")
        scores: np.ndarray = np.maximum(free, 0)
        return scores

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> None:
        # in place, like upstream's DefaultNormalizeScore: the best node gets MaxNodeScore
        top = int(scores.max()) if len(scores) else 0
        if top > 0:
            scores[:] = scores * MAX_NODE_SCORE // top
