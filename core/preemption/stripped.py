"""Stripped nodes: a node without the pods a preemptor may preempt, kept while it is unchanged.

The dry run on columns starts every node from its stripped form.  For a preemptor of priority
``p`` (eligibility by priority alone) a node's potential victims are its pods of priority below
``p``; :class:`StrippedNodes` keeps, per node name, a :class:`Stripped` entry::

    Stripped(original NodeInfo, p)
        potential       the lower-priority pods, in the node's pod order
        by_importance   the same, most important first (made once needed)
        stripped        a copy of the node without them (made only for a plugin that reads one)
        block()         the values the reprieve needs of each pod of by_importance, one row per
                        key of BLOCK_KEYS (what NodeResourcesFit reads, the default rules' inputs)

An entry is valid while the snapshot still holds the same NodeInfo object and the preemptor
priority is the same.  Per snapshot row, :class:`RowStore` keeps the blocks of all rows in one
``values[key, row, slot]`` array and the NodeInfo generation each row was made from, so the stale
rows of a new dry run are found with one array comparison.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api._resources import CPU, MEMORY, PODS
from kubesched.runtime._nodeinfo import pod_value

from .util import more_important_pod, pod_start_ns, sort_by_importance

if TYPE_CHECKING:
    from kubesched.cache._cache import Snapshot
    from kubesched.runtime._handle import Handle
    from kubesched.runtime._nodeinfo import NodeInfo, PodInfo

    from .types import MoreImportantPodFunc

# the values the reprieve needs of every potential victim (what NodeResourcesFit reads, and the
# default candidate rules' inputs), kept together per node (see RowStore)
BLOCK_KEYS: dict[tuple[str, str], int] = {  # the order block_of makes them in
    ("requested", PODS): 0,
    ("requested", CPU): 1,
    ("requested", MEMORY): 2,
    ("priority", ""): 3,
    ("start", ""): 4,
}


def block_of(pods: list[PodInfo]) -> np.ndarray:
    """The values of :data:`BLOCK_KEYS` for ``pods``, one row per key (what :func:`values_of`
    gives for each, in one pass)."""
    if not pods:
        return np.empty((len(BLOCK_KEYS), 0), dtype=np.int64)
    rows = [
        (1, pi.requests.get(CPU), pi.requests.get(MEMORY), pi.priority, pod_start_ns(pi.pod))
        for pi in pods
    ]
    return np.array(rows, dtype=np.int64).T.copy()


def values_of(pods: list[PodInfo], kind: str, resource: str) -> np.ndarray:
    """Per pod: ``pod_value(pod, kind, resource)``; or its priority (kind "priority") or its
    start in nanoseconds (kind "start", :func:`pod_start_ns`)."""
    if kind == "priority":
        return np.fromiter((pi.priority for pi in pods), np.int64, len(pods))
    if kind == "start":
        return np.fromiter((pod_start_ns(pi.pod) for pi in pods), np.int64, len(pods))
    return np.fromiter((pod_value(pi, kind, resource) for pi in pods), np.int64, len(pods))


class Stripped:
    """A node's pods the preemptor may preempt (the column dry run's start).

    Kept per node while the snapshot's NodeInfo is ``original`` and the preemptor priority is
    ``prio``; never changed once made.  ``stripped`` (the node without them, for a plugin that
    reads a NodeInfo), ``by_importance`` and ``values`` are made on first use.
    """

    __slots__ = ("original", "prio", "potential", "_stripped", "by_importance", "values", "_block")

    def __init__(self, original: NodeInfo, prio: int, potential: list[PodInfo]) -> None:
        self.original = original
        self.prio = prio
        self.potential = potential  # in the node's pod order
        self._stripped: NodeInfo | None = None
        # ``potential`` sorted by the default ``more_important_pod``, once needed
        self.by_importance: list[PodInfo] | None = None
        # (kind, resource) -> pod_value of each pod of ``by_importance``
        self.values: dict[tuple[str, str], np.ndarray] = {}
        self._block: np.ndarray | None = None

    def block(self) -> np.ndarray:
        """The values of :data:`BLOCK_KEYS` (one row each) for the pods of ``by_importance``."""
        if self._block is None:
            assert self.by_importance is not None
            self._block = block_of(self.by_importance)
        return self._block

    @property
    def stripped(self) -> NodeInfo:
        if self._stripped is None:
            copy = self.original.clone()
            for pi in self.potential:
                copy.remove_pod(pi.uid)
            self._stripped = copy
        return self._stripped


class RowStore:
    """Per snapshot row, its stripped entry (for one preemptor priority) and the values of
    :data:`BLOCK_KEYS` of its potential victims in importance order, in one array
    ``values[key, row, slot]`` that grows its slots as needed; ``generations`` says which
    NodeInfo generation each row was made from (-1: not yet)."""

    __slots__ = ("snapshot", "tree_generation", "prio", "by_row", "generations", "counts", "values")

    def __init__(self, snapshot: Any, prio: int, n: int) -> None:
        self.snapshot = snapshot
        self.tree_generation = snapshot.tree_generation
        self.prio = prio
        self.by_row: list[Stripped | None] = [None] * n
        self.generations = np.full(n, -1, dtype=np.int64)
        self.counts = np.zeros(n, dtype=np.int64)
        self.values = np.zeros((len(BLOCK_KEYS), n, 4), dtype=np.int64)

    def set(self, row: int, entry: Stripped, generation: int) -> None:
        block = entry.block()
        width = block.shape[1]
        if width > self.values.shape[2]:
            grown = np.zeros(
                (len(BLOCK_KEYS), len(self.by_row), max(width, 2 * self.values.shape[2])),
                dtype=np.int64,
            )
            grown[:, :, : self.values.shape[2]] = self.values
            self.values = grown
        self.values[:, row, :width] = block
        self.values[:, row, width:] = 0
        self.by_row[row] = entry
        self.generations[row] = generation
        self.counts[row] = width


class StrippedNodes:
    """The stripped entries of one Evaluator: per node name (:meth:`entry`) and per snapshot row
    (:meth:`rows`, with the victims' values)."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        # node name -> its entry, valid while the node is unchanged
        self._by_name: dict[str, Stripped] = {}
        # the entries and victim values per snapshot row (rows)
        self._rows_memo: RowStore | None = None

    def entry(self, ni: NodeInfo, prio: int) -> Stripped:
        """The node's lower-priority pods (cached while the node is unchanged)."""
        cache = self._by_name
        entry = cache.get(ni.name)
        if entry is None or entry.original is not ni or entry.prio != prio:
            entry = Stripped(ni, prio, [pi for pi in ni.pods if pi.priority < prio])
            snapshot = self.handle.snapshot
            if snapshot.get(ni.name) is ni:
                if len(cache) > 4 * max(len(snapshot), 1024):
                    cache.clear()
                cache[ni.name] = entry
        return entry

    @staticmethod
    def by_importance(entry: Stripped, less: MoreImportantPodFunc) -> list[PodInfo]:
        """The entry's potential victims, most important first by ``less`` (kept on the entry
        for the default order)."""
        default_order = less is more_important_pod
        potential = entry.by_importance if default_order else None
        if potential is None:
            potential = list(entry.potential)
            sort_by_importance(potential, less, lambda pi: pi.pod)
            if default_order:
                entry.by_importance = potential
        return potential

    def rows(
        self, snap: Snapshot, rows: np.ndarray, prio: int
    ) -> tuple[list[Stripped], np.ndarray, np.ndarray] | None:
        """The stripped entries of the snapshot's ``rows`` (``by_importance`` made, in the
        default order), their numbers of potential victims, and the values of
        :data:`BLOCK_KEYS` of those pods in importance order (``(len(BLOCK_KEYS), len(rows),
        most victims)``, zero past a row's count).  Kept per row while the row's NodeInfo
        generation is the same (one array comparison finds the stale rows); None if the
        snapshot's generations are not those of its nodes."""
        generations = snap.generations
        n = len(snap.node_infos)
        if len(generations) != n:
            return None
        memo = self._rows_memo
        if (
            memo is None
            or memo.snapshot is not snap
            or memo.tree_generation != snap.tree_generation
            or memo.prio != prio
            or len(memo.by_row) != n
        ):
            memo = self._rows_memo = RowStore(snap, prio, n)
        stale = (memo.generations[rows] != generations[rows]).nonzero()[0]
        for i in stale.tolist():
            r = int(rows[i])
            entry = self.entry(snap.node_infos[r], prio)
            self.by_importance(entry, more_important_pod)
            memo.set(r, entry, int(generations[r]))
        by_row = memo.by_row
        entries: list[Stripped] = [by_row[r] for r in rows.tolist()]  # type: ignore[misc]
        counts = memo.counts[rows]
        width = int(counts.max()) if len(counts) else 0
        return entries, counts, memo.values.take(rows, axis=1)[:, :, :width]


__all__ = ["BLOCK_KEYS", "RowStore", "Stripped", "StrippedNodes", "block_of", "values_of"]
