"""NodeBatch and RowOverlay: the nodes a batch Filter/Score hook sees, as columns.

``NodeBatch`` is a set of nodes handed to a batch Filter/Score hook: its columns are numpy arrays
sliced from the snapshot (or built from explicit NodeInfos, e.g. a node with nominated pods
added, or from a ``RowOverlay`` of snapshot rows with pods added or removed).  ``PodInfo`` and
``NodeInfo`` (the per-node aggregate: the node, its pods, their summed requests, the host ports
in use) live one level down, in ``_infos`` (the cache builds on them too), and are re-exported
here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api._resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.runtime._infos import NodeInfo, PodInfo, parse_time, pod_value

if TYPE_CHECKING:
    from kubesched.cache._cache import Snapshot


class RowOverlay:
    """Pods added to and removed from snapshot rows, seen as columns without copies.

    A batch of snapshot rows with an overlay (``NodeBatch(snapshot=..., rows=..., overlay=...)``)
    shows each row's NodeInfo changed by the overlay: its pod-dependent columns are
    ``column(kind, resource)`` (the changed values themselves; ``allocatable`` is the Node's and
    comes from the snapshot), and only a plugin that reads the NodeInfos themselves makes them
    (``make(i)``, one node at a time, on first use).  A column is computed once for the full
    length and shared by every :meth:`subset`; ``make(i)`` must return a NodeInfo nobody changes
    afterwards (a fresh copy, or one kept frozen).
    """

    __slots__ = ("_column_fn", "_columns_fn", "_make", "_columns", "_made", "sel")

    def __init__(
        self,
        column: Callable[[str, str], np.ndarray],
        make: Callable[[int], NodeInfo],
        *,
        columns: Callable[[str, tuple[str, ...]], np.ndarray] | None = None,
        _shared: RowOverlay | None = None,
        sel: np.ndarray | None = None,
    ) -> None:
        self._column_fn = column
        # several columns at once, one row each (optional: else the columns stacked)
        self._columns_fn = columns
        self._make = make
        self._columns: dict[Any, np.ndarray] = _shared._columns if _shared is not None else {}
        self._made: dict[int, NodeInfo] = _shared._made if _shared is not None else {}
        self.sel = sel  # positions of this view in the full-length overlay (None: all of it)

    def full_column(self, kind: str, resource: str) -> np.ndarray:
        """The column over the full length."""
        key = (kind, resource)
        col = self._columns.get(key)
        if col is None:
            col = self._columns[key] = self._column_fn(kind, resource)
        return col

    def column(self, kind: str, resource: str) -> np.ndarray:
        col = self.full_column(kind, resource)
        return col if self.sel is None else col[self.sel]

    def full_columns(self, kind: str, resources: tuple[str, ...]) -> np.ndarray:
        """The columns of ``resources`` over the full length, one row each."""
        key = (kind, resources)
        cols = self._columns.get(key)
        if cols is None:
            fn = self._columns_fn
            if fn is not None:
                cols = fn(kind, resources)
            else:
                cols = np.stack([self.full_column(kind, r) for r in resources])
            self._columns[key] = cols
        return cols

    def columns(self, kind: str, resources: tuple[str, ...]) -> np.ndarray:
        cols = self.full_columns(kind, resources)
        return cols if self.sel is None else cols.take(self.sel, axis=1)

    def info(self, i: int) -> NodeInfo:
        """The NodeInfo at full-length position ``i``."""
        ni = self._made.get(i)
        if ni is None:
            ni = self._made[i] = self._make(i)
        return ni

    def info_at(self, pos: int) -> NodeInfo:
        """The NodeInfo at position ``pos`` of this view."""
        return self.info(pos if self.sel is None else int(self.sel[pos]))

    def infos(self, n: int) -> list[NodeInfo]:
        positions = range(n) if self.sel is None else self.sel.tolist()
        return [self.info(i) for i in positions]

    def subset(self, positions: np.ndarray) -> RowOverlay:
        sel = positions if self.sel is None else self.sel[positions]
        return RowOverlay(self._column_fn, self._make, columns=self._columns_fn, _shared=self, sel=sel)


_COLUMN_GETTERS: dict[str, Callable[[NodeInfo, str], int]] = {
    "allocatable": lambda ni, r: ni.allocatable.get(r),
    "requested": NodeInfo.requested_of,
    "non_zero_requested": NodeInfo.non_zero_of,
}


def _explicit_column(infos: Sequence[NodeInfo], kind: str, resource: str) -> np.ndarray:
    """A column of explicit NodeInfos (the common resources read straight off the fields)."""
    n = len(infos)
    if kind == "requested" or (kind == "non_zero_requested" and resource not in (CPU, MEMORY)):
        if resource == PODS:
            return np.fromiter((len(ni.pods) for ni in infos), np.int64, n)
        if resource == CPU:
            return np.fromiter((ni.requested.milli_cpu for ni in infos), np.int64, n)
        if resource == MEMORY:
            return np.fromiter((ni.requested.memory for ni in infos), np.int64, n)
    get = _COLUMN_GETTERS[kind]
    return np.fromiter((get(ni, resource) for ni in infos), np.int64, n)


def rows_span(snap: Snapshot, rows: np.ndarray) -> tuple[int, int] | None:
    """``(lo, hi)`` when ``rows`` are the snapshot's rows ``lo .. hi - 1`` in order (a unit-stride
    view of its ``all_rows()``), else None."""
    if not len(rows) or rows.strides != (8,) or rows.base is not snap.all_rows():
        return None
    lo: int = rows.item(0)  # a unit-stride view of arange(n): rows[i] == lo + i
    return lo, lo + len(rows)


class NodeBatch(Sequence[NodeInfo]):
    """The nodes one batch hook call works on, in a fixed order.

    ``nodes[i]`` is a :class:`NodeInfo`; ``names`` their names; the column accessors return one
    int64 array entry per node:

    - ``allocatable(r)``, ``requested(r)`` (real requests; ``requested("pods")`` is the pod
      count), ``non_zero_requested(r)`` (requests with the scoring defaults for cpu/memory).
    """

    __slots__ = ("_infos", "_snapshot", "indices", "_cols", "_names", "_rows", "_overlay", "snapshot", "_span")

    def __init__(
        self,
        infos: Sequence[NodeInfo] | None = None,
        *,
        snapshot: Snapshot | None = None,
        indices: np.ndarray | None = None,
        rows: np.ndarray | None = None,
        overlay: RowOverlay | None = None,
    ) -> None:
        """A batch of the snapshot's rows ``indices``, or of explicit ``infos``, or of the
        snapshot's ``rows`` changed by an ``overlay``.

        With ``infos``, ``snapshot`` and ``rows`` may say that ``infos[i]`` holds the same Node
        object as the snapshot's row ``rows[i]`` (a copy with pods added or removed): what
        depends only on the Node (:meth:`node_flag`) then comes from the snapshot's cache.
        With ``overlay`` instead of ``infos``, the columns are the overlay's and the NodeInfos are made only when a plugin reads them (see
        :class:`RowOverlay`); to a plugin it is a batch of explicit NodeInfos.
        """
        self._snapshot = snapshot
        self.indices = indices
        # the snapshot this batch is a view of (None for a batch of explicit NodeInfos or of
        # overlaid rows); a plain attribute, read by the plugins' fast paths at every call
        self.snapshot: Snapshot | None = snapshot if indices is not None else None
        self._span: tuple[int, int] | None | bool = False  # row_span(), once known (False: not yet)
        self._infos: Sequence[NodeInfo] | None = infos
        self._cols: dict[tuple[str, Any], np.ndarray] = {}
        self._names: list[str] | None = None
        self._overlay = overlay if snapshot is not None and rows is not None else None
        self._rows = rows if (infos is not None or self._overlay is not None) and snapshot is not None else None

    @classmethod
    def of(cls, infos: Sequence[NodeInfo]) -> NodeBatch:
        return cls(list(infos))

    @property
    def infos(self) -> Sequence[NodeInfo]:
        if self._infos is None and self._overlay is not None:
            assert self._rows is not None
            self._infos = self._overlay.infos(len(self._rows))
        if self._infos is None:
            assert self._snapshot is not None and self.indices is not None
            all_infos = self._snapshot.node_infos
            span = self.row_span()  # consecutive rows (the usual Filter pass): a slice
            self._infos = all_infos[span[0] : span[1]] if span is not None else [all_infos[i] for i in self.indices.tolist()]
        return self._infos

    @property
    def names(self) -> list[str]:
        if self._names is None:
            if self._snapshot is not None and self.indices is not None:
                all_names = self._snapshot.names
                span = self.row_span()  # consecutive rows (the usual Filter pass): a slice
                self._names = all_names[span[0] : span[1]] if span is not None else [all_names[i] for i in self.indices.tolist()]
            elif self._overlay is not None and self._snapshot is not None and self._rows is not None:
                all_names = self._snapshot.names
                self._names = [all_names[i] for i in self._rows.tolist()]
            else:
                self._names = [ni.name for ni in self.infos]
        return self._names

    def name_at(self, i: int) -> str:
        """``names[i]`` (without making the list)."""
        if self._names is None and self._snapshot is not None:
            rows = self.indices if self.indices is not None else self._rows if self._overlay is not None else None
            if rows is not None:
                name: str = self._snapshot.names[rows.item(i)]  # .item: a plain int, no numpy scalar
                return name
        return self.names[i]

    def __len__(self) -> int:
        indices = self.indices  # a snapshot batch (the usual one): its NodeInfos are these rows'
        if indices is not None:
            return len(indices)
        infos = self._infos
        if infos is not None:
            return len(infos)
        if self._overlay is not None and self._rows is not None:
            return len(self._rows)
        return len(self.infos)

    def __getitem__(self, i: Any) -> Any:
        ov = self._overlay
        if self._infos is None and ov is not None and self._rows is not None and isinstance(i, int):
            n = len(self._rows)
            j = i + n if i < 0 else i
            if not 0 <= j < n:
                raise IndexError(f"index {i} is out of range for a batch of {n}")
            return ov.info_at(j)
        return self.infos[i]

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.infos)

    def subset(self, positions: np.ndarray) -> NodeBatch:
        """The batch restricted to ``positions`` (indices into this batch)."""
        if self._snapshot is not None and self.indices is not None:
            return NodeBatch(snapshot=self._snapshot, indices=self.indices[positions])
        if self._overlay is not None and self._rows is not None:
            sub = NodeBatch(
                snapshot=self._snapshot, rows=self._rows[positions], overlay=self._overlay.subset(positions)
            )
            if self._infos is not None:
                sub._infos = [self._infos[i] for i in positions.tolist()]
            return sub
        infos = self.infos
        rows = self._rows
        return NodeBatch(
            [infos[i] for i in positions.tolist()],
            snapshot=self._snapshot,
            rows=None if rows is None else rows[positions],
        )

    def _column(self, kind: str, resource: str) -> np.ndarray:
        key = (kind, resource)
        col = self._cols.get(key)
        if col is None:
            if self._snapshot is not None and self.indices is not None:
                col = self._snapshot.column(kind, resource)[self.indices]
            elif kind == "allocatable" and self._rows is not None and self._snapshot is not None:
                col = self._snapshot.column(kind, resource)[self._rows]  # it is the Node's
            elif self._overlay is not None:
                col = self._overlay.column(kind, resource)
            else:
                col = _explicit_column(self.infos, kind, resource)
            self._cols[key] = col
        return col

    def allocatable(self, resource: str) -> np.ndarray:
        return self._column("allocatable", resource)

    def columns(self, kind: str, resources: tuple[str, ...]) -> np.ndarray:
        """The int64 columns of ``kind`` for ``resources``, one row each: shape
        ``(len(resources), len(self))`` (one array operation for a plugin that compares several
        resources)."""
        key = (kind, resources)
        cols = self._cols.get(key)
        if cols is None:
            snap = self._snapshot
            if snap is not None and self.indices is not None:
                cols = snap.columns(kind, resources).take(self.indices, axis=1)
            elif kind == "allocatable" and self._rows is not None and snap is not None:
                cols = snap.columns(kind, resources).take(self._rows, axis=1)  # it is the Node's
            elif self._overlay is not None:
                cols = self._overlay.columns(kind, resources)
            else:
                cols = np.empty((len(resources), len(self)), dtype=np.int64)
                for j, r in enumerate(resources):
                    cols[j] = _explicit_column(self.infos, kind, r)
            self._cols[key] = cols
        return cols

    def requested(self, resource: str) -> np.ndarray:
        return self._column("requested", resource)

    def non_zero_requested(self, resource: str) -> np.ndarray:
        return self._column("non_zero_requested", resource)

    def node_flag(self, name: str, fn: Callable[[NodeInfo], bool]) -> np.ndarray:
        """A bool per node of ``fn(node_info)``; ``fn`` must depend only on the Node object.

        Cached in the snapshot under ``name`` until the node set or a node changes, so a plugin
        can find its few interesting nodes (tainted, cordoned...) without a Python loop.
        """
        if self._snapshot is not None and self.indices is not None:
            flags: np.ndarray = self._snapshot.node_flag(name, fn)[self.indices]
            return flags
        if self._rows is not None and self._snapshot is not None:
            row_flags: np.ndarray = self._snapshot.node_flag(name, fn)[self._rows]
            return row_flags
        return np.array([bool(fn(ni)) for ni in self.infos], dtype=bool)

    def flagged(self, name: str, fn: Callable[[NodeInfo], bool]) -> list[int]:
        """The positions of the nodes :meth:`node_flag` flags, in order (without looking at
        the batch when the snapshot flags no node at all)."""
        snap = self._snapshot  # snapshot_rows(), inlined: the nodes are the snapshot's Node objects
        if snap is not None and (self.indices is not None or self._rows is not None) and not snap.node_flag_count(name, fn):
            return []
        out: list[int] = self.node_flag(name, fn).nonzero()[0].tolist()
        return out

    def row_span(self) -> tuple[int, int] | None:
        """``(lo, hi)`` when the batch is the snapshot's rows ``lo .. hi - 1`` in order (a slice
        of its ``all_rows()``, as the Filter pass hands over when every node it looked at
        passed), else None: an array kept per snapshot row is then sliced, not gathered."""
        span = self._span  # asked by each plugin that keeps scores per row: worked out once
        if span is not False:
            return span  # type: ignore[return-value]
        rows = self.indices
        snap = self._snapshot
        span = None if rows is None or snap is None else rows_span(snap, rows)
        self._span = span
        return span

    def allocatable_bounds(self, resources: tuple[str, ...]) -> tuple[int, int]:
        """Bounds (least, greatest) holding every node's allocatable of ``resources``: the
        snapshot's own for a batch of its rows (they hold the batch's), else the batch's."""
        at = self.snapshot_rows()
        if at is not None:
            return at[0].allocatable_bounds(resources)
        cols = self.columns("allocatable", resources)
        return (int(cols.min()), int(cols.max())) if cols.size else (0, 0)

    @property
    def has_infos(self) -> bool:
        """Whether the NodeInfos are at hand (False for a batch of overlaid rows whose
        NodeInfos are made only when read: its columns are the cheaper way in)."""
        return self._overlay is None or self._infos is not None

    def snapshot_rows(self) -> tuple[Snapshot, np.ndarray] | None:
        """(snapshot, the snapshot row of each node) when the nodes are the snapshot's Node
        objects (rows, possibly with pods added or removed): what depends only on the Node
        can then be read off the snapshot.  None for a batch of other NodeInfos."""
        snap = self._snapshot
        if snap is not None:
            if self.indices is not None:
                return snap, self.indices
            if self._rows is not None:
                return snap, self._rows
        return None

    def label_codes(self, key: str) -> tuple[np.ndarray, list[str], dict[str, int]]:
        """Label ``key`` per node as codes into ``values`` (-1: no label); see ``Snapshot.label_codes``.

        For a snapshot batch, ``values`` and ``index`` are the snapshot's own objects, shared by
        every batch of that snapshot; otherwise they are built for this batch.
        """
        if self._snapshot is not None and self.indices is not None:
            codes, snap_values, snap_index = self._snapshot.label_codes(key)
            return codes[self.indices], snap_values, snap_index
        index: dict[str, int] = {}
        values: list[str] = []
        out = np.empty(len(self), dtype=np.int64)
        for i, v in enumerate(self.label_values(key)):
            if v is None:
                out[i] = -1
                continue
            c = index.get(v)
            if c is None:
                c = index[v] = len(values)
                values.append(v)
            out[i] = c
        return out, values, index

    def label_values(self, key: str) -> list[str | None]:
        """Each node's value of label ``key`` (None when absent)."""
        if self._snapshot is not None and self.indices is not None:
            values = self._snapshot.label_column(key)
            return [values[i] for i in self.indices.tolist()]
        if self._overlay is not None and self._rows is not None and self._snapshot is not None:
            values = self._snapshot.label_column(key)  # labels are the Node's: no NodeInfo needed
            return [values[i] for i in self._rows.tolist()]
        return [ni.labels.get(key) for ni in self.infos]


__all__ = ["EPHEMERAL_STORAGE", "NodeBatch", "NodeInfo", "PodInfo", "RowOverlay", "parse_time", "pod_value", "rows_span"]
