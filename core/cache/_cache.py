"""The scheduler cache and the per-cycle snapshot.

Pod states in the cache (``pkg/scheduler/backend/cache``)::

                 assume            finish_binding         add (informer)
    (unknown) ─────────► Assumed ─────────────► Assumed ─────────────► Added
        │                  │      (deadline set)    │ expiry / forget        │ update
        │ add              │ forget                  ▼                        ▼
        └────────────────► Added ◄──────── (removed from node) ◄──── remove ──┘

An assumed pod counts on its node at once, so the next cycle sees it although the binding has
not reached the API yet.  ``forget`` undoes an assume after a failed binding cycle; with a TTL,
assumed pods whose binding finished but whose Add never came expire (upstream's default TTL is
0: never).

The :class:`Snapshot` is refreshed once per cycle, incrementally: only nodes changed since the
last refresh are re-cloned and their rows of the columnar arrays rewritten.  Node order is
upstream's NodeTree order (zones interleaved round-robin), which the sampled filter and the
round-robin start index rely on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api._objects import Node, Pod
from kubesched.api._resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    NEWEST_RULES,
    PODS,
    RequestRules,
    resize_infeasible,
)
from kubesched.runtime._infos import NodeInfo, PodInfo, pod_value

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


def zone_key(node: Node) -> str:
    """``utilnode.GetZoneKey``: region + ":\\x00:" + zone, or "" when neither is set."""
    labels = node.metadata.labels
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


class NodeTree:
    """Nodes grouped by zone; ``list()`` interleaves the zones round-robin (upstream nodeTree)."""

    def __init__(self) -> None:
        self.zones: list[str] = []
        # zone -> its node names in the order added (a dict: an ordered set)
        self.tree: dict[str, dict[str, None]] = {}

    def add(self, node: Node) -> None:
        z = zone_key(node)
        names = self.tree.get(z)
        if names is None:
            self.zones.append(z)
            names = self.tree[z] = {}
        names[node.metadata.name] = None

    def remove(self, node: Node) -> None:
        z = zone_key(node)
        names = self.tree.get(z)
        if names is None or node.metadata.name not in names:
            return
        del names[node.metadata.name]
        if not names:
            del self.tree[z]
            self.zones.remove(z)

    def update(self, old: Node, new: Node) -> None:
        if zone_key(old) != zone_key(new):
            self.remove(old)
            self.add(new)

    def list(self) -> list[str]:
        out: list[str] = []
        zones = [list(self.tree[z]) for z in self.zones]
        if len(zones) == 1:
            return zones[0]
        pos = 0
        remaining = sum(len(v) for v in zones)
        while len(out) < remaining:
            for names in zones:
                if pos < len(names):
                    out.append(names[pos])
            pos += 1
        return out


@dataclass(slots=True)
class _PodState:
    pod_info: PodInfo
    node_name: str
    assumed: bool = False
    binding_finished: bool = False
    deadline: float | None = None


class CacheError(Exception):
    """An inconsistent cache operation (assume twice, forget an unknown pod...)."""


class Cache:
    """Nodes and the pods on them, bound or assumed.  Single-threaded: no locks."""

    def __init__(self, ttl: float = 0.0, rules: RequestRules = NEWEST_RULES) -> None:
        self.ttl = ttl
        self.rules = rules
        """How the emulated release computes requests, for the PodInfos made here."""
        self.node_infos: dict[str, NodeInfo] = {}
        self.pod_states: dict[str, _PodState] = {}
        self.tree = NodeTree()
        self.dirty: set[str] = set()
        self.tree_generation = 0
        self._generation = 0

    def _touch(self, name: str) -> NodeInfo:
        ni = self.node_infos.get(name)
        if ni is None:
            ni = self.node_infos[name] = NodeInfo(name=name)
        self._generation += 1
        ni.generation = self._generation
        self.dirty.add(name)
        return ni

    # --- pods -----------------------------------------------------------------------------
    def is_assumed(self, uid: str) -> bool:
        st = self.pod_states.get(uid)
        return st is not None and st.assumed

    def get_pod(self, uid: str) -> PodInfo | None:
        st = self.pod_states.get(uid)
        return st.pod_info if st else None

    def assume_pod(self, pi: PodInfo, node_name: str) -> None:
        if pi.uid in self.pod_states:
            raise CacheError(f"pod {pi.key}({pi.uid}) is in the cache, so can't be assumed")
        self._touch(node_name).add_pod(pi)
        self.pod_states[pi.uid] = _PodState(pi, node_name, assumed=True)

    def finish_binding(self, uid: str, now: float) -> None:
        st = self.pod_states.get(uid)
        if st is not None and st.assumed:
            st.binding_finished = True
            st.deadline = now + self.ttl if self.ttl > 0 else None

    def forget_pod(self, uid: str) -> None:
        st = self.pod_states.get(uid)
        if st is None:
            return
        if not st.assumed:
            raise CacheError(f"pod {st.pod_info.key}({uid}) was added to the cache, can't forget")
        self._remove(st)

    def _remove(self, st: _PodState) -> None:
        ni = self.node_infos.get(st.node_name)
        if ni is not None:
            self._touch(st.node_name).remove_pod(st.pod_info.uid)
            if ni.node is None and not ni.pods:
                del self.node_infos[st.node_name]
                self.dirty.discard(st.node_name)
        self.pod_states.pop(st.pod_info.uid, None)

    def add_pod(self, pod: Pod) -> None:
        """A bound pod from the informer: confirms an assumed pod or adds a new one."""
        uid = pod.metadata.uid
        st = self.pod_states.get(uid)
        pi: PodInfo | None = None
        if st is not None:
            if st.assumed and st.node_name == pod.spec.node_name and self._confirm(st, pod):
                return
            if st.node_name != pod.spec.node_name or st.assumed:
                # confirm the assumption, on the node the API says
                self._remove(st)
                pi = _same_spec(st.pod_info, pod)
            else:
                self.update_pod(pod)
                return
        pi = pi or PodInfo(pod, self.rules)
        self._touch(pod.spec.node_name).add_pod(pi)
        self.pod_states[uid] = _PodState(pi, pod.spec.node_name)

    def _confirm(self, st: _PodState, pod: Pod) -> bool:
        """The common confirmation: an assumed pod bound where it was assumed (a node still
        present), its spec and labels unchanged and no host ports.  Does what removing it and
        adding ``pod`` would do (its PodInfo moved to the end of the node's pods and of the pod
        states, the node touched twice, the sums unchanged) without the arithmetic; False
        (nothing done) otherwise."""
        old = st.pod_info
        ni = self.node_infos.get(st.node_name)
        if ni is None or ni.node is None or old.host_ports:
            return False
        pods = ni.pods
        uid = old.uid
        # where the uid's PodInfo is: a uid is on one node once (pod_states is keyed by uid,
        # and every add to a node goes through it), so that is where ``old`` is, if anywhere;
        # the assumed pod is most often the node's last
        if pods and pods[-1] is old:
            i = len(pods) - 1
        else:
            try:
                i = pods.index(old)  # (a PodInfo is equal to itself only)
            except ValueError:
                return False
        # ``_same_spec``, inlined
        was = old.pod
        if was.spec != pod.spec or was.metadata.labels != pod.metadata.labels:
            return False
        if old.rules.in_place and _resize_changed(was, pod):
            return False
        pi = old.with_pod(pod)
        del pods[i]
        pods.append(pi)
        self._generation += 2
        ni.generation = self._generation
        self.dirty.add(st.node_name)
        del self.pod_states[uid]
        st.pod_info, st.assumed, st.binding_finished, st.deadline = pi, False, False, None
        self.pod_states[uid] = st
        return True

    def update_pod(self, pod: Pod) -> None:
        uid = pod.metadata.uid
        st = self.pod_states.get(uid)
        if st is None or st.assumed:
            self.add_pod(pod)
            return
        ni = self._touch(st.node_name)
        ni.remove_pod(uid)
        pi = _same_spec(st.pod_info, pod) or PodInfo(pod, self.rules)
        target = pod.spec.node_name or st.node_name
        if target != st.node_name:
            ni = self._touch(target)
        ni.add_pod(pi)
        st.pod_info = pi
        st.node_name = target

    def remove_pod(self, uid: str) -> None:
        st = self.pod_states.get(uid)
        if st is not None:
            self._remove(st)

    def cleanup_expired(self, now: float) -> list[str]:
        """Forget assumed pods whose binding finished and whose deadline passed."""
        expired = [
            uid
            for uid, st in self.pod_states.items()
            if st.assumed and st.binding_finished and st.deadline is not None and now > st.deadline
        ]
        for uid in expired:
            self._remove(self.pod_states[uid])
        return expired

    # --- nodes ----------------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        ni = self._touch(node.metadata.name)
        old = ni.node
        ni.set_node(node)
        if old is None:
            self.tree.add(node)
        else:
            self.tree.update(old, node)
        self.tree_generation += 1

    # an update may change labels / taints that lazily-built columns hold: rebuild like an add
    update_node = add_node

    def remove_node(self, name: str) -> None:
        ni = self.node_infos.get(name)
        if ni is None or ni.node is None:
            return
        self.tree.remove(ni.node)
        self.tree_generation += 1
        if ni.pods:
            ni.node = None  # keep the pods until they are deleted
            self._touch(name)
        else:
            del self.node_infos[name]
            self.dirty.discard(name)

    def node_count(self) -> int:
        return sum(1 for ni in self.node_infos.values() if ni.node is not None)


def _same_spec(pi: PodInfo, pod: Pod) -> PodInfo | None:
    """``pi`` re-pointed at ``pod`` when only status / metadata changed (no recomputation); with
    InPlacePodVerticalScaling, a change of the resize status recomputes the requests too."""
    old = pi.pod
    if old.spec == pod.spec and old.metadata.labels == pod.metadata.labels:
        if pi.rules.in_place and _resize_changed(old, pod):
            return None
        if pi.rules.pod_level_in_place and _pod_level_resize_changed(old, pod):
            return None
        return pi.with_pod(pod)
    return None


def _resize_changed(old: Pod, new: Pod) -> bool:
    """Whether what a resize reads of the status changed: the container statuses, the resize
    status, whether the resize is infeasible.  Without container statuses on either side
    nothing of it is read (``pod_requests_and_non_zero`` takes the spec's requests then, the
    resize status apart): unchanged, without the conditions' walk (a started pod has four)."""
    a, b = old.status, new.status
    if not (a.container_statuses or b.container_statuses or a.init_container_statuses or b.init_container_statuses):
        return False
    return (
        a.container_statuses != b.container_statuses
        or a.init_container_statuses != b.init_container_statuses
        or a.resize != b.resize
        or resize_infeasible(old) != resize_infeasible(new)
    )


def _pod_level_resize_changed(old: Pod, new: Pod) -> bool:
    """Whether what a pod-level resize reads of the status changed (InPlacePodLevelResources-
    VerticalScaling): its actuated and allocated resources, and whether the resize is
    infeasible; nothing while neither status has ``resources``."""
    a, b = old.status, new.status
    if a.resources is None and b.resources is None:
        return False
    return (
        a.resources != b.resources
        or a.allocated_resources != b.allocated_resources
        or resize_infeasible(old) != resize_infeasible(new)
    )


class Snapshot:
    """An immutable-for-the-cycle view of the cache with columnar per-resource arrays."""

    def __init__(self) -> None:
        self.node_infos: list[NodeInfo] = []
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self._columns: dict[tuple[str, str], np.ndarray] = {}
        # (kind, resource, priority) -> the column summed over the pods of lower priority only
        self._below: dict[tuple[str, str, int], np.ndarray] = {}
        # the same keys -> column minus column_below: the nodes without those pods
        self._stripped: dict[tuple[str, str, int], np.ndarray] = {}
        # stacked columns (columns(), columns_stripped()): the stack, and per stack row its view
        # and the key of the column it stacks (in _columns or _stripped)
        self._stacks: dict[tuple[Any, ...], tuple[np.ndarray, list[tuple[np.ndarray, tuple[Any, ...]]]]] = {}
        self._labels: dict[str, list[str | None]] = {}
        self._flags: dict[str, np.ndarray] = {}
        self._flagged: dict[str, int] = {}
        self._bounds: dict[tuple[str, ...], tuple[int, int]] = {}
        self._codes: dict[str, tuple[np.ndarray, list[str], dict[str, int]]] = {}
        self._images: dict[str, tuple[int, list[int]]] | None = None
        # name -> (key function, {key: {row: pod count}}); see pod_index()
        self._pod_indexes: dict[str, tuple[Any, dict[Any, dict[int, int]]]] = {}
        # NodeInfo.generation per row: plugins compare it to refresh per-node caches incrementally
        self.generations = np.zeros(0, dtype=np.int64)
        self.tree_generation = -1
        self.generation = 0
        # the rows refreshed by update(), in order (see rows_changed_since()); _log_base is the
        # mark of _log[0]
        self._log: list[int] = []
        self._log_base = 0
        self._all_rows: np.ndarray | None = None
        # how update() writes a changed row (_write_plan): dropped when a column or stack is
        # added or removed
        self._plan: _Plan | None = None

    def __len__(self) -> int:
        return len(self.node_infos)

    def get(self, name: str) -> NodeInfo | None:
        i = self.index.get(name)
        return None if i is None else self.node_infos[i]

    def update(self, cache: Cache) -> None:
        """Refresh from ``cache``: a full rebuild if the node set changed, else the dirty rows."""
        if cache.tree_generation != self.tree_generation:
            self.tree_generation = cache.tree_generation
            names = cache.tree.list()
            self.node_infos = [cache.node_infos[n].clone() for n in names]
            self.names = names
            self.index = {n: i for i, n in enumerate(names)}
            self._columns = {}
            self._below = {}
            self._stripped = {}
            self._stacks = {}
            self._plan = None
            self._labels = {}
            self._flags = {}
            self._flagged = {}
            self._bounds = {}
            self._codes = {}
            self._images = None
            self._pod_indexes = {}
            self.generations = np.fromiter(
                (ni.generation for ni in self.node_infos), np.int64, len(self.node_infos)
            )
            cache.dirty.clear()
            self.generation += 1
            self._log_base += len(self._log) + 1  # every earlier mark: unknown
            self._log = []
            return
        if not cache.dirty:
            return
        self.generation += 1
        log = self._log
        if len(log) > 4096 and len(log) > 2 * len(self.node_infos):
            self._log_base += len(log)
            log = self._log = []
        plan = self._plan
        if plan is None and not self._below and not self._stripped:
            plan = self._plan = self._write_plan()
        node_infos = self.node_infos
        for name in cache.dirty:
            i = self.index.get(name)
            if i is None:
                continue
            ni = cache.node_infos.get(name)
            if ni is None:
                continue
            log.append(i)
            ni = ni.clone()
            old = node_infos[i]
            if self._pod_indexes:
                gone, came = _changed_pods(old.pods, ni.pods)
                for fn, pod_index in self._pod_indexes.values():
                    if gone:  # (none for the common append)
                        _index_pods(pod_index, fn, gone, i, -1)
                    _index_pods(pod_index, fn, came, i, 1)
            node_infos[i] = ni
            self.generations[i] = ni.generation
            if plan is not None:
                # each column's value written into the column and the stack rows of it (one
                # view each); allocatable is the Node's: the same object (a pod's change) has
                # the same values
                alloc_plan, pod_plan, other_plan = plan
                if ni.allocatable is not old.allocatable:
                    alloc = ni.allocatable
                    for resource, target in alloc_plan:
                        target[i] = alloc.get(resource)
                requested = ni.requested
                # the values by code (_POD_COUNT ... _NZ_MEM; _REQ_OTHER's are other_plan's)
                values = (len(ni.pods), requested.milli_cpu, requested.memory, 0, ni.non_zero_cpu, ni.non_zero_mem)
                for code, target in pod_plan:
                    target[i] = values[code]
                for resource, target in other_plan:
                    target[i] = requested.get(resource)
                continue
            self._refresh_row(i, ni)
        cache.dirty.clear()

    def _refresh_row(self, i: int, ni: NodeInfo) -> None:
        """Row ``i``'s value of every column, below-column, stripped column and stack (the
        general case of :meth:`update`: with below and stripped columns kept)."""
        # the row's value of each column and stripped column, for the stacks below
        values: dict[tuple[Any, ...], int] = {}
        for key, col in self._columns.items():
            col[i] = values[key] = _value(ni, key[0], key[1])
        below_values: dict[tuple[str, str, int], int] = {}
        for key3, col in self._below.items():
            col[i] = below_values[key3] = _value_below(ni, *key3)
        for key3, col in self._stripped.items():
            # from the row's column and below-column, already current, when both are kept
            whole_v = values.get(key3[:2])
            below_v = below_values.get(key3)
            if whole_v is None or below_v is None:
                whole_v, below_v = _value(ni, key3[0], key3[1]), _value_below(ni, *key3)
            col[i] = values[key3] = whole_v - below_v
        for _, rows in self._stacks.values():
            for row, key in rows:
                row[i] = values[key]

    def _write_plan(self) -> _Plan:
        """Per column (no below or stripped ones kept): where :meth:`update` writes a row's
        value (the column and every stack row of it that is not a view of it, as writable
        memoryviews: a row written through one is the array's), one entry a view, and how it
        computes the value.  Three lists: the allocatable columns' ``(resource, view)`` (a
        pod's change, the common one, leaves them as they are); the others' ``(code, view)``,
        the code of ``_value``'s case for a resource a NodeInfo keeps apart; ``(resource,
        view)`` for the other requested resources (``_REQ_OTHER``)."""
        alloc_plan: list[tuple[str, Any]] = []
        plan: list[tuple[int, Any]] = []
        other_plan: list[tuple[str, Any]] = []
        targets: dict[tuple[Any, ...], list[Any]] = {key: [col.data] for key, col in self._columns.items()}
        for _, rows in self._stacks.values():
            for row, key in rows:
                targets[key].append(row.data)
        for (kind, resource), views in targets.items():
            if kind == "allocatable":
                alloc_plan += [(resource, view) for view in views]
                continue
            if resource == PODS:
                code = _POD_COUNT
            elif kind != "requested" and resource == CPU:
                code = _NZ_CPU
            elif kind != "requested" and resource == MEMORY:
                code = _NZ_MEM
            elif resource == CPU:
                code = _REQ_CPU
            elif resource == MEMORY:
                code = _REQ_MEM
            else:
                other_plan += [(resource, view) for view in views]
                continue
            plan += [(code, view) for view in views]
        return alloc_plan, plan, other_plan

    def all_rows(self) -> np.ndarray:
        """``arange(len(self))``, kept until the node set changes (read only)."""
        rows = self._all_rows
        if rows is None or len(rows) != len(self.node_infos):
            rows = self._all_rows = np.arange(len(self.node_infos), dtype=np.int64)
            rows.flags.writeable = False
        return rows

    def change_mark(self) -> int:
        """A mark of the rows refreshed so far, for :meth:`rows_changed_since`."""
        return self._log_base + len(self._log)

    def rows_changed_since(self, mark: int) -> list[int] | None:
        """The rows refreshed since ``mark`` (:meth:`change_mark`), in order, a row once per
        refresh; None when that is no longer known (the node set changed, or the log was
        trimmed): compare :attr:`generations` instead.  Cheaper than that comparison when few
        rows change between two looks, as between two pods' cycles."""
        i = mark - self._log_base
        if i < 0:
            return None
        return self._log[i:]

    def column(self, kind: str, resource: str) -> np.ndarray:
        """The int64 array of ``kind`` (allocatable / requested / non_zero_requested) per node."""
        key = (kind, resource)
        col = self._columns.get(key)
        if col is None:
            col = np.fromiter(
                (_value(ni, kind, resource) for ni in self.node_infos),
                np.int64,
                len(self.node_infos),
            )
            self._columns[key] = col
            self._plan = None
        return col

    def columns(self, kind: str, resources: tuple[str, ...]) -> np.ndarray:
        """:meth:`column` of each of ``resources``, one row each (kept current row by row like
        the columns)."""
        key = (kind, resources)
        hit = self._stacks.get(key)
        if hit is None:
            hit = self._new_stack(key, [(kind, r) for r in resources], self._columns, lambda k: self.column(*k))
        return hit[0]

    def columns_stripped(self, kind: str, resources: tuple[str, ...], priority: int) -> np.ndarray:
        """:meth:`column_stripped` of each of ``resources``, one row each (as :meth:`columns`)."""
        key = (kind, resources, priority)
        hit = self._stacks.get(key)
        if hit is None:
            keys = [(kind, r, priority) for r in resources]
            hit = self._new_stack(key, keys, self._stripped, lambda k: self.column_stripped(*k))
        return hit[0]

    def _new_stack(
        self, key: tuple[Any, ...], keys: list[tuple[Any, ...]], store: dict[Any, np.ndarray], make: Any
    ) -> tuple[np.ndarray, list[tuple[np.ndarray, tuple[Any, ...]]]]:
        """The stack at ``key`` of the columns at ``keys`` (in ``store``, made by ``make``),
        kept current without writes of its own where it can be: a refreshed row is written
        once into each array that owns memory, so fewer arrays is fewer writes a changed row.

        - A run of rows of a stack already kept (same kind, same priority) is that stack's
          slice (a view: its rows are written already).
        - Otherwise a new stack; a column made for it (none was kept: no one holds it) is the
          stack's row, a view, so writing the column writes the stack.  The rows of columns
          kept before are written on their own (their arrays may be held by a caller: they
          stay what they are).
        Returns ``(stack, [(row view, column key)])``, the rows :meth:`update` writes apart."""
        n = len(keys)
        for other, (stack, _) in self._stacks.items() if n else ():
            if len(other) == len(key) and other[0] == key[0] and other[2:] == key[2:]:
                have = other[1]
                for j in range(len(have) - n + 1):
                    if have[j : j + n] == key[1]:
                        hit = self._stacks[key] = (stack[j : j + n], [])
                        return hit
        kept = {k for k in keys if k in store}
        sources = [make(k) for k in keys]
        stack = np.stack(sources)
        rows: list[tuple[np.ndarray, tuple[Any, ...]]] = []
        for j, k in enumerate(keys):
            if k in kept:
                rows.append((stack[j], k))
            else:
                store[k] = stack[j]
                kept.add(k)  # (a key twice in one stack: its second row written apart)
        hit = self._stacks[key] = (stack, rows)
        self._plan = None
        return hit

    def column_below(self, kind: str, resource: str, priority: int) -> np.ndarray:
        """:meth:`column` over only the pods of priority below ``priority`` (what preemption may
        remove from a node): ``column(k, r) - column_below(k, r, p)`` is each node stripped of
        them, and ``column_below("requested", "pods", p)`` counts them.  Kept current row by row
        like the columns, for the last few priorities asked."""
        key = (kind, resource, priority)
        col = self._below.get(key)
        if col is None:
            if len(self._below) >= 32:
                self._below.clear()
                self._stripped.clear()
                self._stacks = {k: v for k, v in self._stacks.items() if len(k) == 2}
            col = np.fromiter(
                (_value_below(ni, kind, resource, priority) for ni in self.node_infos),
                np.int64,
                len(self.node_infos),
            )
            self._below[key] = col
            self._plan = None
        return col

    def column_stripped(self, kind: str, resource: str, priority: int) -> np.ndarray:
        """``column(k, r) - column_below(k, r, p)``: each node without its pods of priority below
        ``priority``; kept current row by row like them."""
        key = (kind, resource, priority)
        col = self._stripped.get(key)
        if col is None:
            col = self.column(kind, resource) - self.column_below(kind, resource, priority)
            self._stripped[key] = col
            self._plan = None
        return col

    def node_flag(self, name: str, fn: Any) -> np.ndarray:
        """``fn(node_info)`` per node, cached until the node set or a Node object changes."""
        flag = self._flags.get(name)
        if flag is None:
            flag = self._flags[name] = np.fromiter(
                (bool(fn(ni)) for ni in self.node_infos), bool, len(self.node_infos)
            )
        return flag

    def node_flag_count(self, name: str, fn: Any) -> int:
        """How many nodes :meth:`node_flag` flags (cached with it)."""
        count = self._flagged.get(name)
        if count is None:
            count = self._flagged[name] = int(np.count_nonzero(self.node_flag(name, fn)))
        return count

    def allocatable_bounds(self, resources: tuple[str, ...]) -> tuple[int, int]:
        """The least and the greatest allocatable of ``resources`` over every node ((0, 0)
        without nodes); cached until the node set or a Node object changes (allocatable is the
        Node's)."""
        bounds = self._bounds.get(resources)
        if bounds is None:
            cols = self.columns("allocatable", resources)
            bounds = (int(cols.min()), int(cols.max())) if cols.size else (0, 0)
            self._bounds[resources] = bounds
        return bounds

    def label_column(self, key: str) -> list[str | None]:
        col = self._labels.get(key)
        if col is None:
            col = self._labels[key] = [ni.labels.get(key) for ni in self.node_infos]
        return col

    def label_codes(self, key: str) -> tuple[np.ndarray, list[str], dict[str, int]]:
        """Label ``key`` as integer codes: ``(codes, values, index)``.

        ``codes[i]`` is the position of node i's value in ``values`` (first-seen order), -1 when
        the node has no such label; ``index`` maps a value to its code.  Cached until the node
        set or a Node object changes, so topology domains become array indices.
        """
        out = self._codes.get(key)
        if out is None:
            index: dict[str, int] = {}
            values: list[str] = []
            codes = np.empty(len(self.node_infos), dtype=np.int64)
            for i, v in enumerate(self.label_column(key)):
                if v is None:
                    codes[i] = -1
                    continue
                c = index.get(v)
                if c is None:
                    c = index[v] = len(values)
                    values.append(v)
                codes[i] = c
            out = self._codes[key] = (codes, values, index)
        return out

    def pod_index(self, name: str, fn: Any) -> dict[Any, dict[int, int]]:
        """The snapshot's pods grouped by ``fn(pod_info)``: ``{key: {row: number of pods}}``.

        ``fn`` returns a hashable key, or None to leave the pod out, and must depend on the pod
        alone.  Built on first use (one pass over every pod), then kept current row by row as
        the snapshot refreshes; dropped on a full rebuild.  A plugin uses it to visit each
        distinct kind of pod (same namespace and labels, same affinity terms...) once per cycle
        instead of every pod.  The returned mapping is the snapshot's: do not mutate it.
        """
        entry = self._pod_indexes.get(name)
        if entry is None:
            index: dict[Any, dict[int, int]] = {}
            for i, ni in enumerate(self.node_infos):
                _index_pods(index, fn, ni.pods, i, 1)
            entry = self._pod_indexes[name] = (fn, index)
        return entry[1]

    def image_states(self) -> dict[str, tuple[int, list[int]]]:
        """``ImageStateSummary`` per image name: ``(size, rows of the nodes that have it)``.

        Names are taken as the nodes report them (``status.images[].names``); the size is the
        first reporting node's.  Cached until the node set or a Node object changes.
        """
        if self._images is None:
            images: dict[str, tuple[int, list[int]]] = {}
            for i, ni in enumerate(self.node_infos):
                if ni.node is None:
                    continue
                for img in ni.node.status.images:
                    for name in img.names:
                        st = images.get(name)
                        if st is None:
                            images[name] = (img.size_bytes, [i])
                        elif st[1][-1] != i:
                            st[1].append(i)
            self._images = images
        return self._images


# _write_plan's codes: which of a NodeInfo's values a column holds
_POD_COUNT, _REQ_CPU, _REQ_MEM, _REQ_OTHER, _NZ_CPU, _NZ_MEM = range(6)
# _write_plan's plan: the allocatable columns' (resource, view), the others' (code, view), the
# other requested resources' (resource, view)
_Plan = tuple[list[tuple[str, Any]], list[tuple[int, Any]], list[tuple[str, Any]]]


def _changed_pods(old: list[PodInfo], new: list[PodInfo]) -> tuple[list[PodInfo], list[PodInfo]]:
    """(pods to take out of, pods to put into) a row's pod indexes when its pods go from ``old``
    to ``new``.  The PodInfos both lists start with are left out: a key depends on the pod
    alone, so taking one out and putting it back leaves every count as it was (the indexes'
    users only count and collect rows, so the order of a mapping's keys does not matter).
    The common cases: pods appended (an assumed or added pod), the last one replaced (an
    assumed pod confirmed); anything else: every pod out, then every pod in."""
    n = len(old)
    if len(new) >= n and new[:n] == old:  # (a PodInfo is equal to itself only)
        return [], new[n:]
    if len(new) == n and new[: n - 1] == old[: n - 1]:
        return old[n - 1 :], new[n - 1 :]
    return old, new


def _index_pods(index: dict[Any, dict[int, int]], fn: Any, pods: list[PodInfo], row: int, delta: int) -> None:
    """Add (``delta`` 1) or remove (-1) ``pods`` of ``row`` to / from a :meth:`Snapshot.pod_index`."""
    for pi in pods:
        key = fn(pi)
        if key is None:
            continue
        rows = index.get(key)
        if rows is None:
            rows = index[key] = {}
        n = rows.get(row, 0) + delta
        if n > 0:
            rows[row] = n
        else:
            rows.pop(row, None)
            if not rows:
                del index[key]


def _value_below(ni: NodeInfo, kind: str, resource: str, priority: int) -> int:
    return sum(pod_value(pi, kind, resource) for pi in ni.pods if pi.priority < priority)


def _value(ni: NodeInfo, kind: str, resource: str) -> int:
    if kind == "allocatable":
        return ni.allocatable.get(resource)
    if kind == "requested":
        return ni.requested_of(resource)
    return ni.non_zero_of(resource)


__all__ = ["CPU", "EPHEMERAL_STORAGE", "MEMORY", "PODS", "Cache", "CacheError", "NodeTree", "Snapshot"]
