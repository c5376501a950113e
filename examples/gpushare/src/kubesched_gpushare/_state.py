"""The cards of every node, as the plugins of one profile see them.

The artifact keeps a cache of each node's devices (``open-gpu-share/cache``), updated by Reserve
and by pod deletions, and published as a node annotation.  Here the cards are derived from the
pods on each node of the scheduler's snapshot: a pod's cards are its ``gpu-index`` annotation,
or what this profile's Reserve chose for it (while it is assumed).

The table has one row per snapshot row.  A batch of the snapshot's own rows (what Filter and
Score get in a scheduling cycle) reads the table, rebuilding only the rows whose NodeInfo
generation changed (``Snapshot.generations``); any other batch (preemption's dry runs, a
hand-made batch) is read off its NodeInfos without touching the table.

One :class:`Cards` per handle (every plugin of a profile gets the same handle), shared by
Open-Gpu-Share and the score plugins through :func:`cards_for`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.framework import Handle, NodeBatch, NodeInfo, Pod, Snapshot
from kubesched_gpushare._model import MAX_CARDS, MILLI, Shape, gpu_index, node_cards, pod_shape

AFFINITY_SLOTS = MAX_CARDS + 1
"""Columns of the affinity counts: 0 share-gpu, k the k-gpu tasks."""

CardSelector = Callable[["Cards", int, Shape], list[int] | None]
"""A card-selection rule (``allocateGpuIdFunc``): (cards, row, shape) -> the cards, None when none."""


def affinity_slot(shape: Shape) -> int:
    """Column of ``shape``'s affinity tag in the affinity counts (-1 for no-gpu)."""
    if shape.num == 0:
        return -1
    if shape.num == 1 and shape.milli < MILLI:
        return 0
    return min(shape.num, MAX_CARDS)


@dataclass(slots=True)
class View:
    """A batch's nodes: free milli per card (n, 8), cards, models, affinity counts (n, 9), and
    their rows in the table (None for a batch that is not the snapshot's)."""

    free: np.ndarray
    ncards: np.ndarray
    models: list[str]
    affinity: np.ndarray
    rows: np.ndarray | None


class Cards:
    """Per snapshot row: free milli per card, cards, model, affinity counts, version."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.names: list[str] = []
        self.free = np.zeros((0, MAX_CARDS), dtype=np.int64)
        self.ncards = np.zeros(0, dtype=np.int64)
        self.models: list[str] = []
        self.affinity = np.zeros((0, AFFINITY_SLOTS), dtype=np.int64)
        self.version = np.zeros(0, dtype=np.int64)
        """Bumped whenever a row changes: what a cached score is checked against."""
        self.name_rank = np.zeros(0, dtype=np.int64)
        """Each row's place in name order (the artifact's tie-break)."""
        self._gen = np.zeros(0, dtype=np.int64)
        self._snap: Snapshot | None = None
        self._names_obj: list[str] | None = None
        self.reserved: dict[str, tuple[str, list[int]]] = {}
        """uid -> (node, cards) chosen by Reserve, until the pod carries ``gpu-index``."""
        self._shapes: dict[str, Shape] = {}
        self.selectors: dict[str, CardSelector] = {}
        """Card-selection rules by name, beside best / worst / random (FGDScore, DotProductScore)."""
        self.caches: dict[Any, Any] = {}
        """Score plugins' per-shape caches, keyed by the plugin; emptied when the rows change."""

    def shape(self, pod: Pod) -> Shape:
        uid = pod.metadata.uid
        s = self._shapes.get(uid) if uid else None
        if s is None:
            s = pod_shape(pod)
            if uid:
                self._shapes[uid] = s
        return s

    # --- one node --------------------------------------------------------------------------------
    def node_state(self, ni: NodeInfo) -> tuple[list[int], int, str, list[int]]:
        """(free per card, cards, model, affinity counts) of a NodeInfo."""
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
                self.reserved.pop(pi.uid, None)  # the pod holds the choice now
            else:
                got = self.reserved.get(pi.uid)
                cards = got[1] if got is not None and got[0] == ni.name else None
            if cards is None or any(c < 0 or c >= count for c in cards):
                cards = _fallback_cards(free, s)
            for c in cards:
                free[c] -= s.milli
        return free, count, model, aff

    # --- the table ---------------------------------------------------------------------------------
    def _sync(self, snap: Snapshot) -> None:
        """Follow the snapshot's rows (a new node set: every row read again, caches dropped)."""
        if snap is self._snap and snap.names is self._names_obj:
            return
        self._snap = snap
        self._names_obj = snap.names
        n = len(snap.names)
        self.names = list(snap.names)
        self.free = np.zeros((n, MAX_CARDS), dtype=np.int64)
        self.ncards = np.zeros(n, dtype=np.int64)
        self.models = [""] * n
        self.affinity = np.zeros((n, AFFINITY_SLOTS), dtype=np.int64)
        self.version = np.zeros(n, dtype=np.int64)
        self._gen = np.full(n, -1, dtype=np.int64)
        rank = np.empty(n, dtype=np.int64)
        rank[sorted(range(n), key=self.names.__getitem__)] = np.arange(n)
        self.name_rank = rank
        self.caches.clear()

    def _rebuild(self, r: int, ni: NodeInfo) -> None:
        free, count, model, aff = self.node_state(ni)
        self.free[r] = 0
        self.free[r, :count] = free
        self.ncards[r] = count
        self.models[r] = model
        self.affinity[r] = aff
        self.version[r] += 1

    def refresh(self, nodes: NodeBatch) -> np.ndarray | None:
        """The table rows of a batch of the snapshot's rows, brought up to date; None for any
        other batch."""
        snap = nodes.snapshot
        rows = nodes.indices
        if snap is None or rows is None:
            return None
        self._sync(snap)
        gens = snap.generations[rows]
        stale = np.flatnonzero(gens != self._gen[rows])
        if len(stale):
            infos = snap.node_infos
            for i in stale.tolist():
                r = int(rows[i])
                self._rebuild(r, infos[r])
            self._gen[rows[stale]] = gens[stale]
        return rows

    def row_of(self, node_name: str) -> int | None:
        """The node's row, up to date, from the handle's snapshot (Reserve, the selectors)."""
        snap = self.handle.snapshot
        r = snap.index.get(node_name)
        if r is None:
            return None
        self._sync(snap)
        if self._gen[r] != snap.generations[r]:
            self._rebuild(r, snap.node_infos[r])
            self._gen[r] = snap.generations[r]
        return r

    def view(self, nodes: NodeBatch) -> View:
        rows = self.refresh(nodes)
        if rows is not None:
            return View(self.free[rows], self.ncards[rows], [self.models[r] for r in rows.tolist()],
                        self.affinity[rows], rows)
        n = len(nodes)
        free = np.zeros((n, MAX_CARDS), dtype=np.int64)
        ncards = np.zeros(n, dtype=np.int64)
        aff = np.zeros((n, AFFINITY_SLOTS), dtype=np.int64)
        models: list[str] = []
        for i, ni in enumerate(nodes.infos):
            f, count, model, a = self.node_state(ni)
            free[i, :count] = f
            ncards[i] = count
            models.append(model)
            aff[i] = a
        return View(free, ncards, models, aff, None)

    def cpu_left(self, nodes: NodeBatch) -> np.ndarray:
        """Allocatable cpu less the requests of the pods on each node (``GetNodeResourceViaNodeInfo``)."""
        left: np.ndarray = nodes.allocatable("cpu") - nodes.requested("cpu")
        return left

    # --- Reserve ------------------------------------------------------------------------------
    def take(self, node: str, uid: str, shape: Shape, cards: list[int]) -> None:
        """Record Reserve's choice and apply it to the node's row until the snapshot has the pod."""
        self.reserved[uid] = (node, cards)
        snap = self._snap
        r = snap.index.get(node) if snap is not None else None
        if r is None or r >= len(self.free):
            return
        for c in cards:
            self.free[r, c] -= shape.milli
        slot = affinity_slot(shape)
        if slot >= 0:
            self.affinity[r, slot] += 1
        self.version[r] += 1
        self._gen[r] = -1  # read the NodeInfo again once the snapshot holds the pod

    def release(self, node: str, uid: str) -> None:
        """Unreserve: forget the choice; the node's row is read again from its NodeInfo."""
        got = self.reserved.pop(uid, None)
        snap = self._snap
        name = node if got is None else got[0]
        r = snap.index.get(name) if snap is not None else None
        if r is not None and r < len(self._gen):
            self._gen[r] = -1


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
