"""The cards of every node, as the plugins of one profile see them.

The artifact keeps a cache of each node's devices (``open-gpu-share/cache``), updated by Reserve
and by pod deletions, and published as a node annotation.  Here the cards are derived from the
pods on each node of the scheduler's snapshot: a pod's cards are its ``gpu-index`` annotation,
or what this profile's Reserve chose for it (while it is assumed).  A node's row is rebuilt only
when its NodeInfo's generation changed, so a cycle costs one pass over the batch's generations.

One :class:`Cards` per handle (every plugin of a profile gets the same handle), shared by
Open-Gpu-Share and the score plugins through :func:`cards_for`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from kubesched.framework import Handle, NodeBatch, NodeInfo, Pod
from kubesched_gpushare._model import MAX_CARDS, MILLI, Shape, gpu_index, node_cards, pod_shape

AFFINITY_SLOTS = MAX_CARDS + 1
"""Columns of :attr:`Cards.affinity`: 0 share-gpu, k the k-gpu tasks."""

CardSelector = Callable[["Cards", int, Shape], list[int] | None]
"""A card-selection rule (``allocateGpuIdFunc``): (cards, row, shape) -> the cards, None when none."""


def affinity_slot(shape: Shape) -> int:
    """Column of ``shape``'s affinity tag in :attr:`Cards.affinity` (-1 for no-gpu)."""
    if shape.num == 0:
        return -1
    if shape.num == 1 and shape.milli < MILLI:
        return 0
    return min(shape.num, MAX_CARDS)


class Cards:
    """Per node (one row each, by name): free milli per card, cards, model, affinity counts."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.rows: dict[str, int] = {}
        self.names: list[str] = []
        self.free = np.zeros((0, MAX_CARDS), dtype=np.int64)
        self.ncards = np.zeros(0, dtype=np.int64)
        self.models: list[str] = []
        self.affinity = np.zeros((0, AFFINITY_SLOTS), dtype=np.int64)
        self.version = np.zeros(0, dtype=np.int64)
        """Bumped whenever a row changes: what a cached score is checked against."""
        self._generation: list[int] = []
        self._node_ids: list[int] = []
        self.reserved: dict[str, tuple[str, list[int]]] = {}
        """uid -> (node, cards) chosen by Reserve, until the pod carries ``gpu-index``."""
        self._shapes: dict[str, Shape] = {}
        self.selectors: dict[str, CardSelector] = {}
        """Card-selection rules by name, beside best / worst / random (FGDScore, DotProductScore)."""
        self.caches: dict[Any, Any] = {}
        """Score plugins' per-shape caches, keyed by the plugin."""

    # --- rows -------------------------------------------------------------------------------
    def _add_row(self, name: str) -> int:
        r = len(self.names)
        self.rows[name] = r
        self.names.append(name)
        cap = max(16, 2 * len(self.names))
        if r >= len(self.free):
            self.free = np.resize(self.free, (cap, MAX_CARDS))
            self.ncards = np.resize(self.ncards, cap)
            self.affinity = np.resize(self.affinity, (cap, AFFINITY_SLOTS))
            self.version = np.resize(self.version, cap)
        self.free[r] = 0
        self.ncards[r] = 0
        self.affinity[r] = 0
        self.version[r] = 0
        self.models.append("")
        self._generation.append(-1)
        self._node_ids.append(0)
        return r

    def shape(self, pod: Pod) -> Shape:
        uid = pod.metadata.uid
        s = self._shapes.get(uid) if uid else None
        if s is None:
            s = pod_shape(pod)
            if uid:
                self._shapes[uid] = s
        return s

    def _rebuild(self, r: int, ni: NodeInfo) -> None:
        count, model = node_cards(ni.node)
        free = [MILLI] * count
        aff = [0] * AFFINITY_SLOTS
        for pi in ni.pods:
            s = self.shape(pi.pod)
            slot = affinity_slot(s)
            if slot >= 0:
                aff[slot] += 1
            if s.milli <= 0 or s.num <= 0 or count == 0:
                continue
            cards = gpu_index(pi.pod)
            if cards is not None:
                self.reserved.pop(pi.uid, None)  # the API holds the choice now
            else:
                got = self.reserved.get(pi.uid)
                cards = got[1] if got is not None and got[0] == ni.name else None
            if cards is None or any(c < 0 or c >= count for c in cards):
                cards = _fallback_cards(free, s)
            for c in cards:
                free[c] -= s.milli
        self.free[r] = 0
        self.free[r, :count] = free
        self.ncards[r] = count
        self.models[r] = model
        self.affinity[r] = aff
        self.version[r] += 1

    def refresh(self, nodes: NodeBatch) -> np.ndarray:
        """The rows of the batch's nodes, each brought up to date with its NodeInfo."""
        rows = np.empty(len(nodes), dtype=np.int64)
        get = self.rows.get
        gens = self._generation
        for i, ni in enumerate(nodes.infos):
            r = get(ni.name)
            if r is None:
                r = self._add_row(ni.name)
                gens = self._generation
            if gens[r] != ni.generation or self._node_ids[r] != id(ni.node):
                self._rebuild(r, ni)
                gens[r] = ni.generation
                self._node_ids[r] = id(ni.node)
            rows[i] = r
        return rows

    def cpu_left(self, nodes: NodeBatch) -> np.ndarray:
        """Allocatable cpu less the requests of the pods on each node (``GetNodeResourceViaNodeInfo``)."""
        left: np.ndarray = nodes.allocatable("cpu") - nodes.requested("cpu")
        return left

    # --- Reserve ------------------------------------------------------------------------------
    def take(self, node: str, uid: str, shape: Shape, cards: list[int]) -> None:
        """Record Reserve's choice and apply it to the node's row."""
        self.reserved[uid] = (node, cards)
        r = self.rows.get(node)
        if r is None:
            return
        for c in cards:
            self.free[r, c] -= shape.milli
        slot = affinity_slot(shape)
        if slot >= 0:
            self.affinity[r, slot] += 1
        self.version[r] += 1
        self._generation[r] = -1  # the NodeInfo will change: read it again

    def release(self, node: str, uid: str) -> None:
        """Unreserve: forget the choice; the node's row is read again from its NodeInfo."""
        got = self.reserved.pop(uid, None)
        r = self.rows.get(node if got is None else got[0])
        if r is not None:
            self._generation[r] = -1


def _fallback_cards(free: list[int], s: Shape) -> list[int]:
    """Cards for a placed pod that names none: the fullest that fit first (``NodeResource.Add``
    without an index list, and ``Sub``)."""
    order = sorted(range(len(free)), key=lambda i: free[i])
    out: list[int] = []
    for i in order:
        if len(out) == s.num:
            break
        if free[i] >= s.milli:
            out.append(i)
    return out


_CARDS: weakref.WeakKeyDictionary[Any, Cards] = weakref.WeakKeyDictionary()


def cards_for(handle: Handle) -> Cards:
    """The profile's :class:`Cards` (one per handle)."""
    c = _CARDS.get(handle)
    if c is None:
        c = _CARDS[handle] = Cards(handle)
    return c
