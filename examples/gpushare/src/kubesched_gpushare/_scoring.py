"""What the six score plugins share: a node's state as plain values, a per-shape score cache, and
the artifact's tie-break.

A policy's score of a node depends only on the node's cards, cpu left, model and affinity counts
and on the task's shape.  Between two tasks only the node that took the first changes, so each
plugin keeps, per task shape, the last score of every snapshot row with the row's version
(:attr:`Cards.version`) and recomputes only the rows that changed since.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
    """Row ``r`` of the table as a :class:`NodeRes`."""
    n = int(cards.ncards[r])
    return NodeRes(free=[int(x) for x in cards.free[r, :n]], cpu_left=cpu_left,
                   cpu_capacity=cpu_capacity, model=cards.models[r],
                   affinity=[int(x) for x in cards.affinity[r]])


@dataclass(slots=True)
class Nodes:
    """Some nodes' state as arrays: what a scorer computes over."""

    free: np.ndarray
    """(k, 8) milli free per card, 0 past a node's cards."""
    ncards: np.ndarray
    models: list[str]
    affinity: np.ndarray
    cpu_left: np.ndarray
    cpu_capacity: np.ndarray

    def res(self, i: int) -> NodeRes:
        n = int(self.ncards[i])
        return NodeRes(free=[int(x) for x in self.free[i, :n]], cpu_left=int(self.cpu_left[i]),
                       cpu_capacity=int(self.cpu_capacity[i]), model=self.models[i],
                       affinity=[int(x) for x in self.affinity[i]])


Scorer = Callable[[Nodes], np.ndarray]
"""The nodes' scores (int64), one per node."""


class ScoreCache:
    """Per shape: the last score of every row and the row version it was computed at."""

    __slots__ = ("scores", "versions")

    def __init__(self, n: int) -> None:
        self.scores = np.zeros(n, dtype=np.int64)
        self.versions = np.full(n, -1, dtype=np.int64)


def cached_scores(cards: Cards, owner: object, shape: Shape, nodes: NodeBatch, compute: Scorer) -> np.ndarray:
    """The batch's scores for ``shape``: for a batch of snapshot rows, recomputing only the rows
    that changed since the shape was last scored; for any other batch, all of them."""
    rows = cards.refresh(nodes)
    if rows is None:
        view = cards.view(nodes)
        return compute(Nodes(view.free, view.ncards, view.models, view.affinity,
                             cards.cpu_left(nodes), nodes.allocatable("cpu")))
    caches: dict[Shape, ScoreCache] = cards.caches.setdefault(owner, {})
    cache = caches.get(shape)
    if cache is None or len(cache.scores) != len(cards.version):
        cache = caches[shape] = ScoreCache(len(cards.version))
    stale = np.flatnonzero(cache.versions[rows] != cards.version[rows])
    if len(stale):
        srows = rows[stale]
        models = cards.models
        cache.scores[srows] = compute(Nodes(
            cards.free[srows], cards.ncards[srows], [models[r] for r in srows.tolist()],
            cards.affinity[srows], cards.cpu_left(nodes)[stale], nodes.allocatable("cpu")[stale]))
        cache.versions[srows] = cards.version[srows]
    out: np.ndarray = cache.scores[rows]
    return out


def per_node(fn: Callable[[NodeRes], int]) -> Scorer:
    """A :data:`Scorer` calling ``fn`` on each node."""

    def compute(nodes: Nodes) -> np.ndarray:
        return np.fromiter((fn(nodes.res(i)) for i in range(len(nodes.ncards))),
                           dtype=np.int64, count=len(nodes.ncards))

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

    def __init__(self, mode: str, key: str, cards: Cards) -> None:
        self.by_name = mode == "name"
        self.key = f"{key}/tie-break-nodes"
        self.cards = cards

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
        rows = self.cards.refresh(nodes)
        if rows is not None:
            pick = int(tied[np.argmin(self.cards.name_rank[rows[tied]])])
        else:
            pick = min(tied.tolist(), key=nodes.name_at)
        if top < MAX_NODE_SCORE:
            scores[pick] += 1
        else:
            scores[tied[tied != pick]] -= 1
