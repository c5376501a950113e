"""What the six score plugins share: a node's state as plain values, and a per-shape score cache.

A policy's score of a node depends only on the node's cards, cpu left, model and affinity counts
and on the task's shape.  Between two tasks only the node that took the first changes, so each
plugin keeps, per task shape, the last score of every node with the node's version
(:attr:`Cards.version`) and recomputes only the nodes that changed since.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.framework import MAX_NODE_SCORE, CycleState, NodeBatch
from kubesched_gpushare._model import Shape
from kubesched_gpushare._state import Cards


@dataclass(slots=True)
class NodeRes:
    """``simontype.NodeResource``: one node as a policy reads it."""

    free: list[int]
    """Milli free per card (``MilliGpuLeftList``)."""
    cpu_left: int
    cpu_capacity: int
    model: str
    affinity: list[int]
    """Tasks on the node per affinity slot (0 share-gpu, k k-gpu)."""

    @property
    def gpu_left(self) -> int:
        return sum(self.free)

    @property
    def fully_free(self) -> int:
        return sum(1 for f in self.free if f == 1000)


def node_res(cards: Cards, r: int, cpu_left: int, cpu_capacity: int) -> NodeRes:
    n = int(cards.ncards[r])
    return NodeRes(free=[int(x) for x in cards.free[r, :n]], cpu_left=cpu_left,
                   cpu_capacity=cpu_capacity, model=cards.models[r],
                   affinity=[int(x) for x in cards.affinity[r]])


class ScoreCache:
    """Per shape: the last score of every row and the row version it was computed at."""

    __slots__ = ("scores", "versions")

    def __init__(self) -> None:
        self.scores = np.zeros(0, dtype=np.int64)
        self.versions = np.full(0, -1, dtype=np.int64)


StaleScorer = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""(rows, cpu_left, cpu_capacity) of the stale nodes -> their scores (int64)."""


def cached_scores(cards: Cards, owner: Any, shape: Shape, nodes: NodeBatch,
                  compute: StaleScorer) -> np.ndarray:
    """The batch's scores for ``shape``, recomputing only the nodes whose row changed."""
    rows = cards.refresh(nodes)
    caches: dict[Shape, ScoreCache] = cards.caches.setdefault(owner, {})
    cache = caches.get(shape)
    if cache is None:
        cache = caches[shape] = ScoreCache()
    n = len(cards.names)
    if len(cache.scores) < n:
        grow = n - len(cache.scores)
        cache.scores = np.concatenate([cache.scores, np.zeros(grow, dtype=np.int64)])
        cache.versions = np.concatenate([cache.versions, np.full(grow, -1, dtype=np.int64)])
    stale = np.flatnonzero(cache.versions[rows] != cards.version[rows])
    if len(stale):
        cpu_left = cards.cpu_left(nodes)[stale]
        cpu_cap = nodes.allocatable("cpu")[stale]
        srows = rows[stale]
        cache.scores[srows] = compute(srows, cpu_left, cpu_cap)
        cache.versions[srows] = cards.version[srows]
    out: np.ndarray = cache.scores[rows]
    return out


def per_node(cards: Cards, fn: Callable[[NodeRes], int]) -> StaleScorer:
    """A :data:`StaleScorer` calling ``fn`` on each stale node."""

    def compute(rows: np.ndarray, cpu_left: np.ndarray, cpu_cap: np.ndarray) -> np.ndarray:
        return np.fromiter(
            (fn(node_res(cards, r, c, cap))
             for r, c, cap in zip(rows.tolist(), cpu_left.tolist(), cpu_cap.tolist(), strict=True)),
            dtype=np.int64, count=len(rows))

    return compute


class TieBreak:
    """The artifact's host selection, from a score plugin: among the nodes tied at the top score
    the one with the smallest name wins (its scheduler, mental2008/kubernetes v1.20.5-minor,
    changed ``selectHost`` from kube-scheduler's random choice "for reproducibility").

    With ``tieBreak: name`` (the default) the plugin's NormalizeScore lifts that node one point
    above the others tied with it (or, at MaxNodeScore, lowers the others by one), so that
    kubesched's ``selectHost`` picks it whatever the plugin's weight; ``tieBreak: random`` leaves
    the ties to kube-scheduler's random choice.  Exact when the policy is the profile's only score
    plugin, as in the artifact's runs."""

    def __init__(self, mode: str, key: str) -> None:
        self.by_name = mode == "name"
        self.key = f"{key}/tie-break-nodes"

    def remember(self, state: CycleState, nodes: NodeBatch) -> None:
        if self.by_name:
            state.write(self.key, nodes)

    def apply(self, state: CycleState, scores: np.ndarray) -> None:
        if not self.by_name or len(scores) < 2:
            return
        nodes: NodeBatch | None = state.get(self.key)
        if nodes is None or len(nodes) != len(scores):
            return
        top = scores.max()
        tied = np.flatnonzero(scores == top)
        if len(tied) < 2:
            return
        pick = min(tied.tolist(), key=nodes.name_at)
        if top < MAX_NODE_SCORE:
            scores[pick] += 1
        else:
            scores[tied[tied != pick]] -= 1
