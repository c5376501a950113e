"""The Filter of a batch of snapshot rows with the nominated pods counted in (upstream
``RunFilterPluginsWithNominatedPods`` and ``addGENominatedPods``, over many nodes at once): the
nominated pods' requests as column deltas from the nominator's arrays instead of node copies,
and the node copies made when a plugin reads NodeInfos kept while they stay valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from kubesched.api._objects import Pod
from kubesched.runtime._cyclestate import CycleState
from kubesched.runtime._nodeinfo import NodeBatch, NodeInfo, PodInfo, RowOverlay
from kubesched.runtime._status import Rejections, Status, merge_rejections

if TYPE_CHECKING:
    from kubesched.queue._scheduling_queue import NominatedView
    from kubesched.runtime._filter_runners import FilterRunners


class _Profile(Protocol):
    """What a NominatedFilter reads of its Framework."""

    @property
    def snapshot(self) -> Any: ...

    @property
    def nominator(self) -> Any: ...

    @property
    def filters(self) -> FilterRunners: ...


class NominatedFilter:
    """The two-pass Filter of a profile, for one node or over snapshot rows (the Framework
    holds one)."""

    def __init__(self, fw: _Profile) -> None:
        self.fw = fw
        # node name -> (NodeInfo, nominated PodInfos, the copy with them added); see _with_nominated
        self._nominated_copies: dict[int, tuple[NodeInfo, list[PodInfo], NodeInfo]] = {}
        # the last nominator view asked for, by (nominator generation, snapshot, node-set
        # generation, priority, pod uid)
        self._last_view: tuple[tuple[Any, ...], NominatedView | None] | None = None

    def run_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pod_priority: int | None = None
    ) -> Status | None:
        """``RunFilterPluginsWithNominatedPods`` for one node: first with the nominated pods of
        equal or higher priority added (when there are any), then as the node is."""
        prio = pod.spec.priority or 0 if pod_priority is None else pod_priority
        nominator = self.fw.nominator
        nominated = nominator.for_node(node_info.name) if nominator else None
        if nominated:
            uid = pod.metadata.uid
            nominated = [p for p in nominated if p.priority >= prio and p.uid != uid]
        filters = self.fw.filters
        if nominated:
            # pass 1: with the nominated pods of equal or higher priority added
            state_to_use = state.clone()
            info_to_use = node_info.clone()
            for p in nominated:
                info_to_use.add_pod(p)
                err = filters.run_pre_filter_extension_add_pod(state_to_use, pod, p, info_to_use)
                if err is not None:
                    return err
            st = filters.run_filter_plugins_one(state_to_use, pod, NodeBatch([info_to_use])).get(0)
            if st is not None:
                return st
        # pass 2 (the only one without nominated pods): the node as it is
        return filters.run_filter_plugins_one(state, pod, NodeBatch([node_info])).get(0)

    def run_rows(
        self,
        state: CycleState,
        pod: Pod,
        rows: np.ndarray,
        pod_priority: int | None = None,
        *,
        base: RowOverlay | None = None,
    ) -> Mapping[int, Status]:
        """``Framework.run_filter_plugins_with_nominated_pods`` for the snapshot's nodes ``rows``, each
        changed by ``base`` when given (a :class:`RowOverlay` over ``rows``): {position in
        ``rows``: failing status}.

        One batch Filter call shows every node as its first pass sees it: the nodes with
        nominated pods of priority >= the pod's with them added (their requests are column
        deltas from the nominator's arrays), the others as they are (their only pass).  A second
        call runs the second pass of the nodes with nominated pods that passed the first.  No
        node is copied unless a plugin reads the NodeInfos.  With an AddPod extension to run, the
        nodes with nominated pods go one by one through the per-node two-pass Filter instead.
        """
        snap = self.fw.snapshot
        nominator = self.fw.nominator
        view: NominatedView | None = None
        if nominator is not None and nominator.nominated_pods:
            # (the priority is read only here: without a view, no pass below needs it)
            prio = pod.spec.priority or 0 if pod_priority is None else pod_priority
            key = (nominator.generation, snap, snap.tree_generation, prio, pod.metadata.uid)
            last = self._last_view
            if last is not None and last[0] == key:
                view = last[1]
            else:
                view = nominator.view(snap, prio, pod.metadata.uid)
                self._last_view = (key, view)
        if view is None and base is None:  # no nominated pod: one plain pass (_filter_rows's)
            return self.fw.filters.run_filter_plugins(state, pod, NodeBatch(snapshot=snap, indices=rows))
        has = view.counts[rows] > 0 if view is not None else None
        if has is None or not has.any():
            return self._filter_rows(state, pod, rows, base)
        assert view is not None
        first = has.nonzero()[0]
        if self.fw.filters.has_add_pod(state):
            failed: dict[int, Status] = {}
            for i in first.tolist():
                ni = base.info_at(i) if base is not None else snap.node_infos[int(rows[i])]
                st = self.run_node(state, pod, ni, prio)
                if st is not None and not st.is_success():
                    failed[i] = st
            rest = (~has).nonzero()[0]
            if len(rest):
                out = self._filter_rows(state, pod, rows[rest], None if base is None else base.subset(rest))
                if out:
                    keys = np.fromiter(out.keys(), np.int64, len(out))
                    failed.update(zip(rest[keys].tolist(), out.values(), strict=True))
            return failed
        # pass 1 of the nodes with nominated pods, and the only pass of the others
        ov = self._nominated_overlay(view, rows, has, base)
        first_pass = Rejections.of(self.fw.filters.run_filter_plugins(state, pod, NodeBatch(snapshot=snap, rows=rows, overlay=ov)))
        if first_pass:
            again = has.copy()
            again[first_pass.positions] = False
            second = again.nonzero()[0]
        else:
            second = first
        if not len(second):
            return first_pass
        # pass 2: the nodes with nominated pods that passed, as they are
        out = self._filter_rows(state, pod, rows[second], None if base is None else base.subset(second))
        return merge_rejections([(None, first_pass), (second, out)]) if out else first_pass

    def _filter_rows(
        self, state: CycleState, pod: Pod, rows: np.ndarray, base: RowOverlay | None
    ) -> Mapping[int, Status]:
        """One Filter pass over the snapshot's ``rows`` (changed by ``base`` when given)."""
        if base is None:
            return self.fw.filters.run_filter_plugins(state, pod, NodeBatch(snapshot=self.fw.snapshot, indices=rows))
        return self.fw.filters.run_filter_plugins(state, pod, NodeBatch(snapshot=self.fw.snapshot, rows=rows, overlay=base))

    def _nominated_overlay(
        self, view: NominatedView, rows: np.ndarray, has: np.ndarray, base: RowOverlay | None
    ) -> RowOverlay:
        """``rows`` (each changed by ``base``) with the view's nominated pods added where ``has``."""
        snap = self.fw.snapshot

        def column(kind: str, resource: str) -> np.ndarray:
            # the view's delta is 0 on the rows without its pods: no need to mask with ``has``
            col: np.ndarray = snap.column(kind, resource)[rows] if base is None else base.column(kind, resource)
            out: np.ndarray = col + view.delta(kind, resource)[rows]
            return out

        def columns(kind: str, resources: tuple[str, ...]) -> np.ndarray:
            cols: np.ndarray = snap.columns(kind, resources).take(rows, axis=1) if base is None else base.columns(kind, resources)
            out: np.ndarray = cols + view.deltas(kind, resources).take(rows, axis=1)
            return out

        def make(i: int) -> NodeInfo:
            row = int(rows[i])
            if not has[i]:
                return base.info_at(i) if base is not None else snap.node_infos[row]
            nominated = view.pods(row)
            if base is None:
                return self._with_nominated(snap, snap.node_infos[row], nominated)
            info = base.info_at(i).clone()
            for p in nominated:
                info.add_pod(p)
            return info

        return RowOverlay(column, make, columns=columns)

    def _with_nominated(self, snapshot: Any, ni: NodeInfo, nominated: list[PodInfo]) -> NodeInfo:
        """A copy of ``ni`` with ``nominated`` added.

        For a NodeInfo of the current snapshot (never changed in place: the snapshot replaces a
        changed node's NodeInfo) the copy is reused while the node and the nominated PodInfos
        are the same objects: Filter plugins do not change the NodeInfos they are shown, and
        the pods nominated to a node stay the same over many scheduling attempts.
        """
        if snapshot is None or snapshot.get(ni.name) is not ni:
            info: NodeInfo = ni.clone()
            for p in nominated:
                info.add_pod(p)
            return info
        cache = self._nominated_copies
        key = id(ni)  # the entry holds ni: the id cannot be reused while it is there
        hit = cache.get(key)
        if hit is not None and hit[0] is ni and len(hit[1]) == len(nominated) and all(
            a is b for a, b in zip(hit[1], nominated, strict=True)
        ):
            return hit[2]
        info = ni.clone()
        for p in nominated:
            info.add_pod(p)
        if len(cache) > 4 * max(len(snapshot or ()), 1024):
            cache.clear()
        cache[key] = (ni, nominated, info)
        return info
