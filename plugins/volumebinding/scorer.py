"""The volume capacity scorer (upstream ``volumebinding/scorer.go``).

Each storage class the pod's volumes use on a node has a utilization ``requested * 100 /
capacity`` (100 when the capacity is 0 or exceeded); the shape maps it to a score (a broken
linear function, scores scaled from [0, 10] to [0, 100]); the node's score is the classes'
mean, rounded half away from zero (Go's ``math.Round``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from kubesched.framework import MAX_NODE_SCORE

from .._helper import build_broken_linear_function
from .args import MAX_CUSTOM_PRIORITY_SCORE
from .binder import StorageResource

MAX_UTILIZATION = 100

VolumeCapacityScorer = Callable[[Mapping[str, StorageResource]], int]
"""``volumeCapacityScorer``: storage class → resources, to a node score."""


def round_half_away(x: float) -> int:
    """Go's ``math.Round``."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def scaled_shape(shape: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The args' ``(utilization, score)`` points with scores scaled to ``MaxNodeScore``."""
    return [(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape]


def build_scorer_function(shape: Sequence[tuple[int, int]]) -> VolumeCapacityScorer:
    """``buildScorerFunction`` over an already scaled shape."""
    raw = build_broken_linear_function(shape)

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return int(raw(MAX_UTILIZATION))
        return int(raw(requested * MAX_UTILIZATION // capacity))

    def score(class_resources: Mapping[str, StorageResource]) -> int:
        if not class_resources:
            return 0
        total = sum(class_score(r.requested, r.capacity) for r in class_resources.values())
        return round_half_away(total / len(class_resources))

    return score


__all__ = [
    "MAX_UTILIZATION",
    "VolumeCapacityScorer",
    "build_scorer_function",
    "round_half_away",
    "scaled_shape",
]
