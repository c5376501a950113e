"""``nominator.go``: which pods are nominated to which nodes, also as arrays over a snapshot's rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from kubesched.api._objects import Pod
from kubesched.runtime._nodeinfo import PodInfo, pod_value

if TYPE_CHECKING:
    from kubesched.cache._cache import Snapshot


class NominatedView:
    """The pods nominated with priority >= ``priority`` (one pod left out), over a snapshot's rows.

    ``counts[row]`` is how many there are on each node; :meth:`delta` is what they add to a column
    (:func:`~kubesched.runtime._nodeinfo.pod_value` summed per node); :meth:`pods` lists them for one node
    as :meth:`Nominator.for_node` gives them.  The two-pass Filter of a batch of nodes is built on
    it (``Framework.run_filter_plugins_with_nominated_pods_rows``) instead of node copies.
    """

    __slots__ = ("nominator", "snapshot", "priority", "exclude_uid", "counts", "_base", "_own", "_deltas", "_deltas2")

    def __init__(
        self,
        nominator: Nominator,
        snapshot: Snapshot,
        priority: int,
        exclude_uid: str,
        counts: np.ndarray,
        base: _NominatedBase,
        own: tuple[PodInfo, int] | None,
    ) -> None:
        self.nominator = nominator
        self.snapshot = snapshot
        self.priority = priority
        self.exclude_uid = exclude_uid
        self.counts = counts
        self._base = base
        self._own = own  # (PodInfo, row) of the left-out pod when it is among the counted
        self._deltas: dict[tuple[str, str], np.ndarray] = {}
        self._deltas2: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}

    def delta(self, kind: str, resource: str) -> np.ndarray:
        key = (kind, resource)
        d = self._deltas.get(key)
        if d is None:
            d = self._base.delta(self.nominator, kind, resource)
            if self._own is not None and kind != "allocatable":
                d = d.copy()
                d[self._own[1]] -= pod_value(self._own[0], kind, resource)
            self._deltas[key] = d
        return d

    def deltas(self, kind: str, resources: tuple[str, ...]) -> np.ndarray:
        """:meth:`delta` of each of ``resources``, one row each."""
        key = (kind, resources)
        d = self._deltas2.get(key)
        if d is None:
            d = self._deltas2[key] = np.stack([self.delta(kind, r) for r in resources])
        return d

    def pods(self, row: int) -> list[PodInfo]:
        """The pods this view counts on the snapshot's node ``row``, in nomination order."""
        prio, uid = self.priority, self.exclude_uid
        return [
            p for p in self.nominator.for_node(self.snapshot.names[row]) if p.priority >= prio and p.uid != uid
        ]


class _NominatedBase:
    """The nominations of priority >= ``priority`` over ``snapshot``'s rows: per row their
    count and, per column asked for, their summed values.  Kept current as nominations come
    and go while the snapshot's node set is the same (the rows stay the same)."""

    __slots__ = ("snapshot", "tree_generation", "priority", "counts", "total", "deltas", "views")

    def __init__(self, snapshot: Snapshot, priority: int, counts: np.ndarray) -> None:
        self.snapshot = snapshot
        self.tree_generation = snapshot.tree_generation
        self.priority = priority
        self.counts = counts
        self.total = int(counts.sum())
        self.deltas: dict[tuple[str, str], np.ndarray] = {}
        self.views: dict[str, NominatedView | Literal[False]] = {}  # by the uid left out

    @property
    def current(self) -> bool:
        return self.tree_generation == self.snapshot.tree_generation

    def delta(self, nominator: Nominator, kind: str, resource: str) -> np.ndarray:
        key = (kind, resource)
        d = self.deltas.get(key)
        if d is None:
            d = np.zeros(len(self.counts), dtype=np.int64)
            if kind != "allocatable":
                slots, rows = nominator._selected(self.snapshot, self.priority)
                np.add.at(d, rows, nominator._slot_values(kind, resource)[slots])
            self.deltas[key] = d
        return d

    def change(self, pi: PodInfo, node: str, sign: int) -> None:
        """A nomination of ``pi`` to ``node`` added (``sign`` 1) or removed (-1)."""
        if pi.priority < self.priority:
            return
        self.views.clear()
        row = self.snapshot.index.get(node)
        if row is None:
            return
        self.counts[row] += sign
        self.total += sign
        for (kind, resource), d in self.deltas.items():
            d[row] += sign * pod_value(pi, kind, resource)


class Nominator:
    """``nominator.go``: pods nominated to nodes (by preemption).

    ``pod_lister(pod)`` returns the informer's current version of the pod, or None if it is
    gone; without one, the pod passed in is taken as current.  ``lookup(uid)`` (set by the
    queue) finds the pod's current PodInfo in the sub-queues for :meth:`for_node`.
    """

    def __init__(
        self,
        pod_exists: Callable[[Pod], bool] | None = None,
        pod_lister: Callable[[Pod], Pod | None] | None = None,
    ) -> None:
        self.nominated_pods: dict[str, list[PodInfo]] = {}
        self.pod_to_node: dict[str, str] = {}
        self._pod_exists = pod_exists
        self._pod_lister = pod_lister
        self.lookup: Callable[[str], PodInfo | None] | None = None
        # bumped on every change to ``nominated_pods``; keys the per-priority cache below
        self.generation = 0
        self._counts_gen = -1
        self._counts: dict[int, tuple[dict[str, int], set[str]]] = {}
        # every nomination also as a slot of flat arrays, in the order made (see view())
        self._slot_of: dict[str, int] = {}
        self._slot_pi: list[PodInfo | None] = []
        self._slot_prio = np.zeros(16, dtype=np.int64)
        self._slot_code = np.zeros(16, dtype=np.int64)  # node name code (_code_names)
        self._slot_alive = np.zeros(16, dtype=bool)
        self._slot_vals: dict[tuple[str, str], np.ndarray] = {}
        self._dead = 0
        self._code_of: dict[str, int] = {}
        self._code_names: list[str] = []
        # the snapshot row of each node name code, for (snapshot, node-set generation)
        self._code_rows = np.zeros(0, dtype=np.int64)
        self._code_rows_for: tuple[Any, int] = (None, -1)
        # (snapshot id, priority) -> the nominations over that snapshot's rows (see view())
        self._bases: dict[tuple[int, int], _NominatedBase] = {}

    def counts_at_or_above(self, priority: int) -> tuple[dict[str, int], set[str]]:
        """Per node, how many nominated pods have priority >= ``priority`` (nodes with none
        left out), and the set of those nodes.  Cached until the nominations change: callers
        must not modify what is returned."""
        if self._counts_gen != self.generation:
            self._counts.clear()
            self._counts_gen = self.generation
        hit = self._counts.get(priority)
        if hit is None:
            counts: dict[str, int] = {}
            for node, pods in self.nominated_pods.items():
                c = sum(1 for p in pods if p.priority >= priority)
                if c:
                    counts[node] = c
            hit = self._counts[priority] = (counts, set(counts))
        return hit

    def add(self, pi: PodInfo, node_name: str | None = None) -> None:
        """``addNominatedPod``: ``node_name`` None means ModeNoop (use the pod's status);
        a string is ModeOverride (the empty string clears the nomination)."""
        if pi.uid in self.pod_to_node:  # (``delete``'s call saved when there is none)
            self.delete(pi.uid)
        name = pi.pod.status.nominated_node_name if node_name is None else node_name
        if not name:
            return
        current: Pod | None = pi.pod
        if self._pod_lister is not None:
            current = self._pod_lister(pi.pod)
        if current is None or current.spec.node_name:
            return
        if self._pod_exists is not None and not self._pod_exists(pi.pod):
            return
        self.pod_to_node[pi.uid] = name
        pods = self.nominated_pods.setdefault(name, [])
        if all(p.uid != pi.uid for p in pods):
            pods.append(pi)
            self._slot_add(pi, name)
        self.generation += 1

    def delete(self, uid: str) -> None:
        """``DeleteNominatedPodIfExists``."""
        node = self.pod_to_node.pop(uid, None)
        if node is None:
            return
        self.generation += 1
        self._slot_delete(uid)
        pods = [p for p in self.nominated_pods.get(node, []) if p.uid != uid]
        if pods:
            self.nominated_pods[node] = pods
        else:
            self.nominated_pods.pop(node, None)

    def update(self, old: Pod, new_pi: PodInfo) -> None:
        """``UpdateNominatedPod``: keep a stored nomination the update does not mention."""
        node: str | None = None
        if not old.status.nominated_node_name and not new_pi.pod.status.nominated_node_name:
            node = self.pod_to_node.get(old.metadata.uid)
        self.delete(old.metadata.uid)
        self.add(new_pi, node)

    def for_node(self, node_name: str) -> list[PodInfo]:
        """``NominatedPodsForNode``: the pods nominated to the node, as the queue now holds them."""
        out = []
        for pi in self.nominated_pods.get(node_name, ()):
            cur = self.lookup(pi.uid) if self.lookup is not None else None
            out.append(cur or pi)
        return out

    def node_of(self, uid: str) -> str:
        return self.pod_to_node.get(uid, "")

    # --- the nominations as arrays --------------------------------------------------------
    def view(self, snapshot: Snapshot, priority: int, exclude_uid: str = "") -> NominatedView | None:
        """The nominations of priority >= ``priority`` but ``exclude_uid``'s over ``snapshot``'s
        rows; None when there are none.  Its per-row counts and sums are kept current as
        nominations change, until the node set changes."""
        key = (id(snapshot), priority)
        base = self._bases.get(key)
        if base is None or base.snapshot is not snapshot or not base.current:
            _, rows = self._selected(snapshot, priority)
            counts = np.bincount(rows, minlength=len(snapshot)).astype(np.int64)
            if len(self._bases) > 8:
                self._bases.clear()
            base = self._bases[key] = _NominatedBase(snapshot, priority, counts)
        if not base.total:
            return None
        view = base.views.get(exclude_uid)
        if view is None:
            own: tuple[PodInfo, int] | None = None
            slot = self._slot_of.get(exclude_uid)
            if slot is not None and self._slot_prio[slot] >= priority:
                row = snapshot.index.get(self._code_names[int(self._slot_code[slot])])
                pi = self._slot_pi[slot]
                if row is not None and pi is not None:
                    own = (pi, row)
            counts = base.counts
            if own is not None:
                counts = counts.copy()
                counts[own[1]] -= 1
            view = NominatedView(self, snapshot, priority, exclude_uid, counts, base, own) if counts.any() else False
            if len(base.views) > 8:
                base.views.clear()
            base.views[exclude_uid] = view
        return view if view is not False else None

    def _selected(self, snapshot: Snapshot, priority: int) -> tuple[np.ndarray, np.ndarray]:
        """The live slots of priority >= ``priority`` on nodes ``snapshot`` has, and their rows."""
        code_rows = self._rows_of_codes(snapshot)
        n = len(self._slot_pi)
        sel = self._slot_alive[:n] & (self._slot_prio[:n] >= priority)
        slots = sel.nonzero()[0]
        rows = code_rows[self._slot_code[slots]]
        known = rows >= 0  # a node the snapshot does not have counts nowhere
        if not known.all():
            slots, rows = slots[known], rows[known]
        return slots, rows

    def _rows_of_codes(self, snapshot: Snapshot) -> np.ndarray:
        snap, gen = self._code_rows_for
        index = snapshot.index
        if snap is not snapshot or gen != snapshot.tree_generation:
            self._code_rows = np.fromiter(
                (index.get(n, -1) for n in self._code_names), np.int64, len(self._code_names)
            )
            self._code_rows_for = (snapshot, snapshot.tree_generation)
        elif len(self._code_rows) < len(self._code_names):
            new = self._code_names[len(self._code_rows) :]
            self._code_rows = np.concatenate(
                (self._code_rows, np.fromiter((index.get(n, -1) for n in new), np.int64, len(new)))
            )
        return self._code_rows

    def _slot_values(self, kind: str, resource: str) -> np.ndarray:
        """``pod_value(pod, kind, resource)`` per slot (kept up to date from first use)."""
        key = (kind, resource)
        vals = self._slot_vals.get(key)
        if vals is None:
            vals = np.zeros(len(self._slot_prio), dtype=np.int64)
            for i, pi in enumerate(self._slot_pi):
                if pi is not None:
                    vals[i] = pod_value(pi, kind, resource)
            self._slot_vals[key] = vals
        return vals

    def _slot_add(self, pi: PodInfo, node: str) -> None:
        i = len(self._slot_pi)
        if i == len(self._slot_prio):
            grow = max(16, 2 * i)
            self._slot_prio = np.resize(self._slot_prio, grow)
            self._slot_code = np.resize(self._slot_code, grow)
            self._slot_alive = np.concatenate((self._slot_alive, np.zeros(grow - i, dtype=bool)))
            for key, vals in self._slot_vals.items():
                self._slot_vals[key] = np.resize(vals, grow)
        code = self._code_of.get(node)
        if code is None:
            code = self._code_of[node] = len(self._code_names)
            self._code_names.append(node)
        self._slot_pi.append(pi)
        self._slot_of[pi.uid] = i
        self._slot_prio[i] = pi.priority
        self._slot_code[i] = code
        self._slot_alive[i] = True
        for (kind, resource), vals in self._slot_vals.items():
            vals[i] = pod_value(pi, kind, resource)
        self._change_bases(pi, node, 1)

    def _slot_delete(self, uid: str) -> None:
        i = self._slot_of.pop(uid, None)
        if i is None:
            return
        pi = self._slot_pi[i]
        if pi is not None:
            self._change_bases(pi, self._code_names[int(self._slot_code[i])], -1)
        self._slot_alive[i] = False
        self._slot_pi[i] = None
        self._dead += 1
        if self._dead > 64 and self._dead * 2 > len(self._slot_pi):
            self._compact()

    def _change_bases(self, pi: PodInfo, node: str, sign: int) -> None:
        for key, base in list(self._bases.items()):
            if base.current:
                base.change(pi, node, sign)
            else:
                del self._bases[key]  # its rows are no longer the snapshot's

    def _compact(self) -> None:
        """Drop the dead slots, keeping the live ones in order."""
        n = len(self._slot_pi)
        keep = self._slot_alive[:n].nonzero()[0]
        cap = max(16, 2 * len(keep))
        def packed(a: np.ndarray) -> np.ndarray:
            out = np.zeros(cap, dtype=a.dtype)
            out[: len(keep)] = a[keep]
            return out
        self._slot_prio = packed(self._slot_prio)
        self._slot_code = packed(self._slot_code)
        self._slot_alive = packed(self._slot_alive)
        self._slot_vals = {k: packed(v) for k, v in self._slot_vals.items()}
        self._slot_pi = [self._slot_pi[i] for i in keep.tolist()]
        self._slot_of = {pi.uid: j for j, pi in enumerate(self._slot_pi) if pi is not None}
        self._dead = 0
