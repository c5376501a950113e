"""The scheduling queue: activeQ, backoffQ, unschedulable pods, and the nominator.

Why one file: the three sub-queues, the in-flight events, the nominator and the queueing-hint
moves share one state and one model, as upstream's ``scheduling_queue.go``; split apart, every
move of a pod would cross modules.

Three sub-queues (``pkg/scheduler/backend/queue/scheduling_queue.go``)::

      add / update ──► PreEnqueue ──ok──► activeQ ──pop──► (in flight: one scheduling cycle)
                          │ gated             ▲   ▲                    │ failure
                          ▼                   │   │ backoff done        ▼
                   unschedulablePods ─event──┘   └──── backoffQ ◄── AddUnschedulableIfNotPresent
                          ▲   │  (hint Queue, backoff over)  ▲          │ no hint says Queue
                          │   └─ event, still backing off ───┘          │
                          └─────────────────────────────────────────────┘

- activeQ is a heap in the profile's QueueSort order; ``pop`` waits while it is empty.  Every
  pop counts an attempt, advances the global scheduling cycle and marks the pod in flight.
- backoffQ holds two heaps ordered by backoff expiry: pods rejected by plugins, and pods that
  failed on an error (no rejecting plugin); the flush (every second) moves completed ones to
  activeQ, the plugin heap first.
- unschedulablePods holds pods that no event has yet made worth retrying, and gated pods
  (rejected by a PreEnqueue plugin).  A cluster event moves a pod out only if one of its
  rejecting plugins registered it and that plugin's hint says Queue (a gated pod: only events its
  gating plugin registered); every 30 s, pods that stayed longer than 5 minutes are moved anyway
  (gated pods excepted).
- While a pod is in flight, cluster events are recorded; when the pod comes back unschedulable,
  they decide (through the hints) whether it goes straight back to the queues.

Backoff: ``initial * 2^(attempts-1)``, capped at ``max``, counted from the pod's timestamp (which
``add_unschedulable_if_not_present`` refreshes).  The nominator remembers which pods are
nominated to which nodes.

Two feature gates change the model (both passed in by the Scheduler):

- ``SchedulerQueueingHints`` (default on).  Off, the legacy path: hint functions are ignored
  (every registered match counts as Queue), no events are recorded for pods in flight, a failed
  pod goes to backoffQ if a move request came during or after its cycle (``moveRequestCycle >=
  podSchedulingCycle``) or no plugin rejected it, else to unschedulablePods; an update moves an
  unschedulable pod whenever its spec or labels changed (``isPodUpdated``).
- ``SchedulerPopFromBackoffQ`` (default off here).  On: backoff expiries are truncated to a 1 s
  ordering window and a pod backs off while ``!expiry.Before(truncate(now))``; the plugin heap
  breaks equal expiries with activeQ's order; PreEnqueue runs on the way into backoffQ (and is
  skipped on the way from backoffQ to activeQ); ``pop`` with an empty activeQ takes the head of
  the plugin heap; the backoff flush ticks on whole seconds.  Off, the queue described above: no
  window, PreEnqueue only on the way to activeQ.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import anyio
import msgspec
import numpy as np

from . import _events as ev
from ._events import ClusterEvent, QueueingHint
from ._labels import selector_matches
from ._nodeinfo import PodInfo, pod_value
from ._objects import Pod, PodStatus
from ._status import Code, Status

if TYPE_CHECKING:
    from ._cache import Snapshot
    from ._objects import PodAffinityTerm

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE = 300.0
FLUSH_BACKOFF_PERIOD = 1.0
# ``backoffQOrderingWindowDuration`` (SchedulerPopFromBackoffQ): expiries are truncated to it
BACKOFF_Q_ORDERING_WINDOW = 1.0
FLUSH_UNSCHEDULABLE_PERIOD = 30.0

# The plugin whose rejections any assigned-pod event in the namespace may resolve
# (``getUnschedulablePodsWithCrossTopologyTerm``).
POD_TOPOLOGY_SPREAD = "PodTopologySpread"

_QUEUE_SKIP, _QUEUE_AFTER_BACKOFF, _QUEUE_IMMEDIATELY = 0, 1, 2

ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_Q = "active", "backoff", "unschedulable"


@dataclass(eq=False)
class QueuedPodInfo:
    """``framework.QueuedPodInfo``: a pod plus its queueing history."""

    pod_info: PodInfo
    timestamp: float = 0.0
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    gating_plugin_events: list[ClusterEvent] = field(default_factory=list)
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    backoff_expiration: float | None = None
    # the order in which the queue first saw the pod: breaks ties between equal pods the same
    # way whichever task requeued them first (so runs repeat exactly on any event loop)
    seq: int = 0

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod

    @property
    def uid(self) -> str:
        return self.pod_info.uid

    @property
    def key(self) -> str:
        return self.pod_info.key

    @property
    def priority(self) -> int:
        return self.pod_info.priority

    @property
    def gated(self) -> bool:
        """``Gated()``: a PreEnqueue plugin rejected the pod the last time it ran."""
        return bool(self.gating_plugin)

    def update(self, pod: Pod) -> None:
        """``QueuedPodInfo.Update``: a newer version of the same pod."""
        self.pod_info = self.pod_info.update(pod)

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.key}, attempts={self.attempts})"


class QueueProfile(Protocol):
    """What the queue needs of a profile (the Framework implements it)."""

    def queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...

    def run_pre_enqueue_plugins(self, pod: Pod, first: str = "") -> Status | None: ...

    def cluster_events(self) -> Sequence[tuple[str, ClusterEvent, Any]]: ...


_Num = TypeVar("_Num", int, float)


def calculate_backoff_duration(attempts: int, initial: _Num, maximum: _Num) -> _Num:
    """``calculateBackoffDuration``: 0 before the first attempt, then doubling up to ``maximum``.

    The cap is tested as ``d > maximum - d`` (upstream's overflow-safe form), so integer
    nanoseconds up to ``2**63 - 1`` behave exactly as in Go.
    """
    if attempts == 0:
        return initial - initial
    d = initial
    for _ in range(attempts - 1):
        if d > maximum - d:
            return maximum
        d += d
    return d


class _Heap:
    """A binary heap with removal by uid (lazy deletion) and a FIFO tie-break.

    With ``key`` (a function such that ``key(a) < key(b)`` exactly when ``less(a, b)``) the
    heap holds ``(key, qpi.seq, seq, entry)`` tuples and compares them without calling Python
    code; the order is the same.
    """

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        self._less = less
        self._key = key
        self._heap: list[Any] = []
        self._items: dict[str, _Entry] = {}
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, uid: str) -> bool:
        return uid in self._items

    def get(self, uid: str) -> QueuedPodInfo | None:
        e = self._items.get(uid)
        return e.qpi if e else None

    def push(self, qpi: QueuedPodInfo) -> None:
        """``AddOrUpdate``: insert, or re-place an item already there."""
        old = self._items.pop(qpi.uid, None)
        if old is not None:
            old.valid = False
        e = _Entry(qpi, self._less, next(self._seq))
        self._items[qpi.uid] = e
        key = self._key
        heapq.heappush(self._heap, e if key is None else (key(qpi), qpi.seq, e.seq, e))
        if len(self._heap) > 64 and len(self._heap) > 2 * len(self._items):
            self._heap = [x for x in self._heap if _entry(x).valid]
            heapq.heapify(self._heap)

    def remove(self, uid: str) -> QueuedPodInfo | None:
        e = self._items.pop(uid, None)
        if e is None:
            return None
        e.valid = False
        return e.qpi

    def peek(self) -> QueuedPodInfo | None:
        h = self._heap
        while h and not _entry(h[0]).valid:
            heapq.heappop(h)
        return _entry(h[0]).qpi if h else None

    def pop(self) -> QueuedPodInfo | None:
        h = self._heap
        while h:
            e = _entry(heapq.heappop(h))
            if e.valid:
                del self._items[e.qpi.uid]
                return e.qpi
        return None

    def values(self) -> list[QueuedPodInfo]:
        return [e.qpi for e in self._items.values()]


def _entry(x: Any) -> _Entry:
    """The entry of a heap item (itself, or the last of a keyed tuple)."""
    return x if type(x) is _Entry else x[3]


class _Entry:
    __slots__ = ("qpi", "less", "seq", "valid")

    def __init__(self, qpi: QueuedPodInfo, less: Any, seq: int) -> None:
        self.qpi = qpi
        self.less = less
        self.seq = seq
        self.valid = True

    def __lt__(self, other: _Entry) -> bool:
        if self.less(self.qpi, other.qpi):
            return True
        if self.less(other.qpi, self.qpi):
            return False
        if self.qpi.seq != other.qpi.seq:
            return self.qpi.seq < other.qpi.seq
        return self.seq < other.seq


def align_to_window(t: float) -> float:
    """``alignToWindow``: ``t.Truncate(backoffQOrderingWindowDuration)`` (whole seconds; a clock
    a float rounding short of a second counts as that second)."""
    return float(math.floor(t / BACKOFF_Q_ORDERING_WINDOW + 1e-9) * BACKOFF_Q_ORDERING_WINDOW)


class BackoffQueue:
    """``backoff_queue.go``: the plugin-rejection heap and the error heap, by backoff expiry.

    ``pop_from_backoff_q`` (the ``SchedulerPopFromBackoffQ`` gate) truncates expiries to the 1 s
    ordering window and orders equal expiries in the plugin heap by ``active_less`` (activeQ's
    QueueSort), so that the heap's head is what activeQ would pop.
    """

    def __init__(
        self,
        now: Callable[[], float],
        initial: float,
        maximum: float,
        *,
        pop_from_backoff_q: bool = False,
        active_less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] | None = None,
        active_sort_key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        self.now = now
        self.initial = initial
        self.maximum = maximum
        self.windowed = pop_from_backoff_q
        self._active_less = active_less
        plugin_less = self._less
        plugin_key: Callable[[QueuedPodInfo], Any] | None = self.expiry
        if pop_from_backoff_q and active_less is not None:
            plugin_less = self._less_with_priority
            active_key = active_sort_key
            plugin_key = None if active_key is None else (lambda q: (self.expiry(q), active_key(q)))
        self.pod_backoff_q = _Heap(plugin_less, plugin_key)
        self.pod_error_backoff_q = _Heap(self._less, self.expiry)

    def _less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """``lessBackoffCompleted``."""
        return self.expiry(a) < self.expiry(b)

    def _less_with_priority(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """``lessBackoffCompletedWithPriority``: by window, then as activeQ orders."""
        ea, eb = self.expiry(a), self.expiry(b)
        if ea != eb:
            return ea < eb
        assert self._active_less is not None
        return self._active_less(a, b)

    def duration(self, qpi: QueuedPodInfo) -> float:
        return calculate_backoff_duration(qpi.attempts, self.initial, self.maximum)

    def expiry(self, qpi: QueuedPodInfo) -> float:
        """``BackoffExpiration`` (cached on the pod until its timestamp is refreshed).

        Windowed (``getBackoffTime``): truncated to the window, and the zero time (before
        anything) for a pod never attempted, which is not cached.
        """
        if self.windowed:
            if qpi.attempts == 0:
                return -math.inf
            if qpi.backoff_expiration is None:
                qpi.backoff_expiration = align_to_window(qpi.timestamp + self.duration(qpi))
            return qpi.backoff_expiration
        if qpi.backoff_expiration is None:
            qpi.backoff_expiration = qpi.timestamp + self.duration(qpi)
        return qpi.backoff_expiration

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """``isPodBackingoff``: ``expiry.After(now)`` (to the nanosecond); windowed,
        ``!expiry.Before(alignToWindow(now))`` (a pod whose expiry falls in the current window
        still backs off)."""
        if self.windowed:
            return not self.expiry(qpi) < align_to_window(self.now())
        return self.expiry(qpi) > self.now() + 1e-9

    def pop_backoff(self) -> QueuedPodInfo | None:
        """``popBackoff``: the head of the plugin heap (never the error heap), backing off or not."""
        return self.pod_backoff_q.pop()

    def add(self, qpi: QueuedPodInfo) -> None:
        """A pod with no rejecting plugin goes to the error heap; the pod is never in both."""
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            self.pod_error_backoff_q.push(qpi)
            self.pod_backoff_q.remove(qpi.uid)
        else:
            self.pod_backoff_q.push(qpi)
            self.pod_error_backoff_q.remove(qpi.uid)

    def update(self, pod: Pod) -> QueuedPodInfo | None:
        for heap in (self.pod_backoff_q, self.pod_error_backoff_q):
            qpi = heap.get(pod.metadata.uid)
            if qpi is not None:
                qpi.update(pod)
                heap.push(qpi)
                return qpi
        return None

    def delete(self, uid: str) -> bool:
        a = self.pod_backoff_q.remove(uid)
        b = self.pod_error_backoff_q.remove(uid)
        return a is not None or b is not None

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self.pod_backoff_q.get(uid) or self.pod_error_backoff_q.get(uid)

    def __contains__(self, uid: str) -> bool:
        return uid in self.pod_backoff_q or uid in self.pod_error_backoff_q

    def __len__(self) -> int:
        return len(self.pod_backoff_q) + len(self.pod_error_backoff_q)

    def values(self) -> list[QueuedPodInfo]:
        return self.pod_backoff_q.values() + self.pod_error_backoff_q.values()

    def pop_each_backoff_completed(
        self, fn: Callable[[QueuedPodInfo], object] | None = None
    ) -> list[QueuedPodInfo]:
        """``popEachBackoffCompleted``: the plugin heap drained first, then the error heap."""
        popped: list[QueuedPodInfo] = []
        for heap in (self.pod_backoff_q, self.pod_error_backoff_q):
            while True:
                head = heap.peek()
                if head is None or self.is_backing_off(head):
                    break
                heap.pop()
                popped.append(head)
                if fn is not None:
                    fn(head)
        return popped


class NominatedView:
    """The pods nominated with priority >= ``priority`` (one pod left out), over a snapshot's rows.

    ``counts[row]`` is how many there are on each node; :meth:`delta` is what they add to a column
    (:func:`~kubesched._nodeinfo.pod_value` summed per node); :meth:`pods` lists them for one node
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


class SchedulingQueue:
    """``PriorityQueue``.  Single-threaded; ``pop`` is the only awaiting call.

    ``queueing_hints`` is the ``SchedulerQueueingHints`` gate, ``pop_from_backoff_q`` the
    ``SchedulerPopFromBackoffQ`` gate (see the module docstring for what each changes).
    """

    def __init__(
        self,
        profiles: Mapping[str, QueueProfile],
        *,
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE,
        now: Callable[[], float] | None = None,
        pod_exists: Callable[[Pod], bool] | None = None,
        pod_lister: Callable[[Pod], Pod | None] | None = None,
        namespace_labels: Callable[[str], Mapping[str, str]] | None = None,
        queueing_hints: bool = True,
        pop_from_backoff_q: bool = False,
    ) -> None:
        self.profiles = dict(profiles)
        self.queueing_hints = queueing_hints
        self.pop_from_backoff_q = pop_from_backoff_q
        first = next(iter(self.profiles.values()))
        self._less = first.queue_sort_less
        # a key that orders as the QueueSort does, when the profile knows one (PrioritySort)
        sort_key: Callable[[QueuedPodInfo], Any] | None = getattr(first, "queue_sort_key", None)
        self.initial_backoff = pod_initial_backoff
        self.max_backoff = pod_max_backoff
        self.max_in_unschedulable = pod_max_in_unschedulable
        self.now: Callable[[], float] = now or anyio.current_time
        self.active_q = _Heap(self._less, sort_key)
        self.backoff = BackoffQueue(
            lambda: self.now(),
            pod_initial_backoff,
            pod_max_backoff,
            pop_from_backoff_q=pop_from_backoff_q,
            active_less=self._less,
            active_sort_key=sort_key,
        )
        self.backoff_q = self.backoff.pod_backoff_q
        self.error_backoff_q = self.backoff.pod_error_backoff_q
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        self.nominator = Nominator(pod_exists, pod_lister)
        self.nominator.lookup = self._pod_info_of
        self._namespace_labels = namespace_labels
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self.in_flight: dict[str, int] = {}  # uid -> index into the event log when popped
        self._events: list[tuple[ClusterEvent, Any, Any]] = []
        self._events_base = 0
        self._waiter: anyio.Event | None = None
        self._closed = False
        # (plugin, event, hint) per profile, and the events each plugin registered
        self._registered: dict[str, list[tuple[str, ClusterEvent, Any]]] = {}
        self._plugin_events: dict[str, list[ClusterEvent]] = {}
        for name, prof in self.profiles.items():
            regs = list(prof.cluster_events())
            self._registered[name] = regs
            for plugin, event, _ in regs:
                self._plugin_events.setdefault(plugin, []).append(event)
        self._interest: dict[tuple[Any, Any], bool] = {}
        self._ticks: list[tuple[float, float, int]] = []
        self._pod_seq = 0
        self._all_events = [e for regs in self._registered.values() for _, e, _ in regs]
        self.on_change: Callable[[], None] | None = None
        # ``queue_incoming_pods_total``: (queue, event label) -> pods added, while a metrics
        # recorder is attached (it owns the dict)
        self.incoming: dict[tuple[str, str], int] | None = None

    # --- backoff ---------------------------------------------------------------------------
    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        return self.backoff.duration(qpi)

    def backoff_expiry(self, qpi: QueuedPodInfo) -> float:
        return self.backoff.expiry(qpi)

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        return self.backoff.is_backing_off(qpi)

    # --- entering --------------------------------------------------------------------------
    def _profile(self, pod: Pod) -> QueueProfile | None:
        return self.profiles.get(pod.spec.scheduler_name)

    def new_queued_pod_info(self, pod: Pod, pi: PodInfo | None = None) -> QueuedPodInfo:
        self._pod_seq += 1
        return QueuedPodInfo(pi or PodInfo(pod), timestamp=self.now(), seq=self._pod_seq)

    def _run_pre_enqueue(self, qpi: QueuedPodInfo) -> None:
        """``runPreEnqueuePlugins``: the gating plugin first; stop at the first rejection."""
        prof = self._profile(qpi.pod)
        if prof is None:
            qpi.gating_plugin = ""
            return
        status = prof.run_pre_enqueue_plugins(qpi.pod, qpi.gating_plugin)
        if status is None or status.is_success():
            qpi.gating_plugin = ""
            return
        qpi.unschedulable_plugins.add(status.plugin)
        qpi.gating_plugin = status.plugin
        qpi.gating_plugin_events = self._plugin_events.get(status.plugin, [])

    def _in_any_queue(self, uid: str) -> bool:
        return uid in self.active_q or uid in self.backoff or uid in self.unschedulable

    def _move_to_active(
        self, qpi: QueuedPodInfo, event: ClusterEvent, from_backoff: bool = False
    ) -> bool:
        """``moveToActiveQ``: PreEnqueue, then activeQ; a gated pod goes to unschedulablePods.

        With PopFromBackoffQ, a pod coming straight from backoffQ skips PreEnqueue (it ran on
        the way in)."""
        uid = qpi.uid
        if not (self.pop_from_backoff_q and from_backoff):
            self._run_pre_enqueue(qpi)
        if qpi.gated:
            if not self._in_any_queue(uid):
                self.unschedulable[uid] = qpi
                self._count(UNSCHEDULABLE_Q, event)
                self._changed()
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self.now()
        self.unschedulable.pop(uid, None)
        self.backoff.delete(uid)
        self.active_q.push(qpi)
        self._count(ACTIVE_Q, event)
        if event.label in (ev.UNSCHEDULED_POD_ADD.label, ev.UNSCHEDULED_POD_UPDATE.label):
            self.nominator.add(qpi.pod_info)
        self._wake()
        return True

    def _move_to_backoff(self, qpi: QueuedPodInfo, event: ClusterEvent) -> bool:
        """``moveToBackoffQ``.  With PopFromBackoffQ, PreEnqueue runs first (a gated pod goes to
        unschedulablePods instead), and ``pop`` is woken: it may now take the pod from backoffQ."""
        if self.pop_from_backoff_q:
            self._run_pre_enqueue(qpi)
            if qpi.gated:
                if qpi.uid not in self.unschedulable:
                    self.unschedulable[qpi.uid] = qpi
                    self._count(UNSCHEDULABLE_Q, event)
                    self._changed()
                return False
        self.unschedulable.pop(qpi.uid, None)
        self.backoff.add(qpi)
        self._count(BACKOFF_Q, event)
        if self.pop_from_backoff_q:
            self._wake()
        else:
            self._changed()
        return True

    def _count(self, queue: str, event: ClusterEvent) -> None:
        incoming = self.incoming
        if incoming is not None:
            key = (queue, event.label)
            incoming[key] = incoming.get(key, 0) + 1

    def _wake(self) -> None:
        if self._waiter is not None:
            self._waiter.set()
            self._waiter = None
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def add(self, pod: Pod, pi: PodInfo | None = None) -> None:
        """``Add``: a new unscheduled pod."""
        qpi = self.new_queued_pod_info(pod, pi)
        self._move_to_active(qpi, ev.UNSCHEDULED_POD_ADD)

    def activate(self, pods: Iterable[Pod]) -> None:
        """``Activate``: move pods waiting in unschedulablePods or backoffQ to activeQ now
        (PreEnqueue runs again).  For any other pod, a ForceActivate event targeted at it is
        recorded if it is in flight, so that it is requeued when it comes back."""
        for pod in pods:
            uid = pod.metadata.uid
            qpi = self.unschedulable.get(uid)
            from_backoff = False
            if qpi is None:
                qpi = self.backoff.get(uid)
                if qpi is not None:
                    self.backoff.delete(uid)
                    from_backoff = True
            if qpi is not None and self._move_to_active(qpi, ev.FORCE_ACTIVATE, from_backoff):
                continue
            if self.queueing_hints and uid in self.in_flight:  # addEventsIfPodInFlight
                self._events.append((ev.FORCE_ACTIVATE, None, pod))
            self.move_request_cycle = self.scheduling_cycle

    # --- popping ---------------------------------------------------------------------------
    async def pop(self) -> QueuedPodInfo:
        """``Pop``: wait for the head of activeQ; count the attempt and mark the pod in flight.

        Raises ``anyio.EndOfStream`` once the queue is closed and activeQ is empty.
        """
        while True:
            qpi = self.pop_nowait()
            if qpi is not None:
                return qpi
            if self._closed:
                raise anyio.EndOfStream
            if self._waiter is None:
                self._waiter = anyio.Event()
            await self._waiter.wait()

    def _poppable(self) -> bool:
        """activeQ has a pod (or, with PopFromBackoffQ, the plugin backoff heap has one)."""
        return bool(len(self.active_q)) or (self.pop_from_backoff_q and bool(len(self.backoff_q)))

    async def wait_for_pods(self) -> None:
        """Wait until there is a pod to pop (or the queue is closed)."""
        while not self._poppable() and not self._closed:
            if self._waiter is None:
                self._waiter = anyio.Event()
            await self._waiter.wait()

    def pop_nowait(self) -> QueuedPodInfo | None:
        """The head of activeQ, or None if it is empty (``unlockedPop`` without waiting).

        With PopFromBackoffQ, an empty activeQ gives the head of the plugin backoff heap."""
        while True:
            qpi = self.active_q.pop()
            if qpi is None and self.pop_from_backoff_q:
                qpi = self.backoff.pop_backoff()
            if qpi is None:
                return None
            qpi.attempts += 1
            if self.queueing_hints and qpi.uid in self.in_flight:
                # "the same pod is tracked in multiple places in the scheduler": discard it
                # (only tracked with hints on; without them the queue keeps no in-flight set,
                # and here the set only serves ``busy``)
                continue
            self.in_flight[qpi.uid] = self._events_base + len(self._events)
            self.scheduling_cycle += 1
            self._changed()
            return qpi

    def close(self) -> None:
        self._closed = True
        for uid in list(self.in_flight):
            self.in_flight.pop(uid)
        self._prune_events()
        self._wake()

    def done(self, uid: str) -> None:
        """``Done``: the pod's scheduling attempt is over."""
        if self.in_flight.pop(uid, None) is not None:
            self._prune_events()
        self._changed()

    def _prune_events(self) -> None:
        if not self.in_flight:
            self._events_base += len(self._events)
            self._events = []
            return
        oldest = min(self.in_flight.values())
        drop = oldest - self._events_base
        if drop > 0:
            del self._events[:drop]
            self._events_base = oldest

    def _record_event(self, event: ClusterEvent, old: Any, new: Any) -> None:
        """``addEventIfAnyInFlight`` (hints on only)."""
        if self.queueing_hints and self.in_flight:
            self._events.append((event, old, new))

    def in_flight_events(self) -> list[tuple[ClusterEvent, Any, Any]]:
        """The cluster events kept for the pods in flight (oldest first)."""
        return list(self._events)

    # --- failure path ------------------------------------------------------------------------
    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, scheduling_cycle: int) -> None:
        """``AddUnschedulableIfNotPresent``: back to the queues after a failed attempt.

        Raises ValueError if the pod is already queued; ``done`` is called in any case.
        """
        uid = qpi.uid
        try:
            if uid in self.unschedulable:
                raise ValueError(f"Pod {qpi.key} is already present in unschedulable queue")
            if uid in self.active_q:
                raise ValueError(f"Pod {qpi.key} is already present in the active queue")
            if uid in self.backoff:
                raise ValueError(f"Pod {qpi.key} is already present in the backoff queue")
            if not qpi.unschedulable_plugins and not qpi.pending_plugins:
                qpi.consecutive_errors_count += 1
            else:
                qpi.unschedulable_count += 1
                qpi.consecutive_errors_count = 0
            qpi.timestamp = self.now()
            qpi.backoff_expiration = None
            if not self.queueing_hints:
                self._add_unschedulable_without_hint(qpi, scheduling_cycle)
                return
            strategy = self._hint_for_in_flight(qpi)
            self._requeue(qpi, strategy, ev.SCHEDULE_ATTEMPT_FAILURE)
        finally:
            self.done(uid)

    def _add_unschedulable_without_hint(self, qpi: QueuedPodInfo, scheduling_cycle: int) -> None:
        """``addUnschedulableWithoutQueueingHint`` (hints off): backoffQ if a move request came
        during or after this cycle, or no plugin rejected the pod; otherwise unschedulablePods."""
        if self.move_request_cycle >= scheduling_cycle or not (
            qpi.unschedulable_plugins or qpi.pending_plugins
        ):
            self._move_to_backoff(qpi, ev.SCHEDULE_ATTEMPT_FAILURE)
        else:
            self.unschedulable[qpi.uid] = qpi
            self._count(UNSCHEDULABLE_Q, ev.SCHEDULE_ATTEMPT_FAILURE)
            self._changed()

    def _hint_for_in_flight(self, qpi: QueuedPodInfo) -> int:
        """``determineSchedulingHintForInFlightPod``."""
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return _QUEUE_AFTER_BACKOFF
        start = self.in_flight.get(qpi.uid)
        if start is None:  # "in flight entity isn't found in the scheduling queue"
            return _QUEUE_AFTER_BACKOFF
        best = _QUEUE_SKIP
        for event, old, new in self._events[max(0, start - self._events_base) :]:
            s = self._worth_requeuing(qpi, event, old, new)
            if s == _QUEUE_IMMEDIATELY:
                return s
            if s == _QUEUE_AFTER_BACKOFF:
                best = s
                if not qpi.pending_plugins:
                    return best
        return best

    def _requeue(self, qpi: QueuedPodInfo, strategy: int, event: ClusterEvent) -> str:
        """``requeuePodWithQueueingStrategy``: the sub-queue the pod ends up in."""
        if strategy == _QUEUE_SKIP:
            self.unschedulable[qpi.uid] = qpi
            self._count(UNSCHEDULABLE_Q, event)
            self._changed()
            return UNSCHEDULABLE_Q
        if strategy == _QUEUE_AFTER_BACKOFF and self.is_backing_off(qpi):
            return BACKOFF_Q if self._move_to_backoff(qpi, event) else UNSCHEDULABLE_Q
        if self._move_to_active(qpi, event):
            return ACTIVE_Q
        return UNSCHEDULABLE_Q

    def _worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> int:
        """``isPodWorthRequeuing``."""
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors:
            return _QUEUE_AFTER_BACKOFF
        if event.is_wildcard():
            # a wildcard event carrying a Pod is meant for that pod only (ForceActivate)
            if new is not None and (not isinstance(new, Pod) or new.metadata.uid != qpi.uid):
                return _QUEUE_SKIP
            return _QUEUE_AFTER_BACKOFF
        regs = self._registered.get(qpi.pod.spec.scheduler_name)
        if regs is None:
            return _QUEUE_AFTER_BACKOFF
        result = _QUEUE_SKIP
        for plugin, registered, hint_fn in regs:
            if not registered.matches(event) or plugin not in rejectors:
                continue
            hint = QueueingHint.QUEUE
            # hints off: every registered function is ``defaultQueueingHintFn`` (always Queue)
            if hint_fn is not None and self.queueing_hints:
                try:
                    hint = hint_fn(qpi.pod, old, new)
                except Exception:
                    hint = QueueingHint.QUEUE
            if hint == QueueingHint.QUEUE_SKIP:
                continue
            if plugin in qpi.pending_plugins:
                return _QUEUE_IMMEDIATELY
            if not qpi.pending_plugins:
                return _QUEUE_AFTER_BACKOFF
            result = _QUEUE_AFTER_BACKOFF
        return result

    # --- cluster events ------------------------------------------------------------------------
    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """``isEventOfInterest``: a wildcard event, or one some plugin registered."""
        if event.is_wildcard():
            return True
        key = (event.resource, event.action)
        hit = self._interest.get(key)
        if hit is None:
            hit = self._interest[key] = any(reg.matches(event) for reg in self._all_events)
        return hit

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: Any = None,
        new: Any = None,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> None:
        """``MoveAllToActiveOrBackoffQueue``."""
        if not self.is_event_of_interest(event):
            return
        pods = list(self.unschedulable.values())
        if pre_check is not None:
            pods = [q for q in pods if pre_check(q.pod)]
        self._move_pods(pods, event, old, new)

    def _move_pods(
        self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Any, new: Any
    ) -> None:
        """``movePodsToActiveOrBackoffQueue``."""
        if not self.is_event_of_interest(event):
            return
        for qpi in pods:
            if qpi.gated and not any(e.matches(event) for e in qpi.gating_plugin_events):
                continue  # only the gating plugin's events can ungate the pod
            strategy = self._worth_requeuing(qpi, event, old, new)
            if strategy == _QUEUE_SKIP:
                continue
            self.unschedulable.pop(qpi.uid, None)
            self._requeue(qpi, strategy, event)
        self.move_request_cycle = self.scheduling_cycle
        self._record_event(event, old, new)

    def assigned_pod_added(self, pod: Pod) -> None:
        """``AssignedPodAdded``: only pods the new pod may help (affinity, topology spread)."""
        self._move_pods(self._cross_topology_pods(pod), ev.ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old: Pod, new: Pod, events: Sequence[ClusterEvent]) -> None:
        """``AssignedPodUpdated`` for each update event: a scale-down moves every pod (it may
        free resources); other updates only pods with a cross-topology term."""
        for e in events:
            if _POD_SCALE_DOWN.matches(e):
                self.move_all_to_active_or_backoff(e, old, new)
            else:
                self._move_pods(self._cross_topology_pods(new), e, old, new)

    def _cross_topology_pods(self, pod: Pod) -> list[QueuedPodInfo]:
        """``getUnschedulablePodsWithCrossTopologyTerm``."""
        ns = pod.metadata.namespace
        ns_labels = self._namespace_labels(ns) if self._namespace_labels is not None else {}
        out = []
        for qpi in self.unschedulable.values():
            if (
                POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins
                and qpi.pod.metadata.namespace == ns
            ):
                out.append(qpi)
                continue
            if any(
                _term_matches(t, qpi.pod, pod, ns_labels) for t in _required_affinity_terms(qpi.pod)
            ):
                out.append(qpi)
        return out

    # --- update / delete ---------------------------------------------------------------------
    def update(self, old: Pod | None, new: Pod) -> None:
        """``Update`` of an unscheduled pod."""
        uid = new.metadata.uid
        events = ev.pod_update_events(old, new) if old is not None and self.queueing_hints else []
        if self.queueing_hints and uid in self.in_flight:
            # recorded for when the pod comes back; the pod object itself is refreshed by the
            # failure handler from the informer
            for e in events:
                self._events.append((e, old, new))
            return
        if old is not None:
            qpi = self.active_q.get(uid)
            if qpi is not None:
                qpi.update(new)
                self.active_q.push(qpi)
                self.nominator.update(old, qpi.pod_info)
                self._changed()
                return
            qpi = self.backoff.update(new)
            if qpi is not None:
                self.nominator.update(old, qpi.pod_info)
                self._changed()
                return
        qpi = self.unschedulable.get(uid)
        if qpi is not None:
            qpi.update(new)
            if old is not None:
                self.nominator.update(old, qpi.pod_info)
            if not self.queueing_hints:
                if old is None or is_pod_updated(old, new):
                    # it may have finished its backoff while unschedulable
                    if self.is_backing_off(qpi):
                        self._move_to_backoff(qpi, ev.UNSCHEDULED_POD_UPDATE)
                    else:
                        self._move_to_active(qpi, ev.UNSCHEDULED_POD_UPDATE)
                self._changed()
                return
            for e in events:
                strategy = self._worth_requeuing(qpi, e, old, new)
                if strategy == _QUEUE_SKIP:
                    continue
                self.unschedulable.pop(uid, None)
                where = self._requeue(qpi, strategy, e)
                if where == ACTIVE_Q or (self.pop_from_backoff_q and where == BACKOFF_Q):
                    break
            self._changed()
            return
        self._move_to_active(self.new_queued_pod_info(new), ev.UNSCHEDULED_POD_UPDATE)

    def delete(self, pod: Pod) -> None:
        """``Delete``: from the nominator and from whichever sub-queue holds the pod."""
        uid = pod.metadata.uid
        self.nominator.delete(uid)
        self.active_q.remove(uid)
        self.backoff.delete(uid)
        self.unschedulable.pop(uid, None)
        self._changed()

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self.active_q.get(uid) or self.backoff.get(uid) or self.unschedulable.get(uid)

    def _pod_info_of(self, uid: str) -> PodInfo | None:
        qpi = self.get(uid)
        return qpi.pod_info if qpi is not None else None

    def where(self, uid: str) -> str | None:
        """Which sub-queue holds the pod: "active", "backoff", "unschedulable", or None."""
        if uid in self.active_q:
            return ACTIVE_Q
        if uid in self.backoff:
            return BACKOFF_Q
        if uid in self.unschedulable:
            return UNSCHEDULABLE_Q
        return None

    # --- flushes ---------------------------------------------------------------------------
    def flush_backoff_completed(self) -> list[QueuedPodInfo]:
        """``flushBackoffQCompleted``: the plugin heap first, then the error heap."""
        moved = self.backoff.pop_each_backoff_completed()
        for qpi in moved:
            self._move_to_active(qpi, ev.BACKOFF_COMPLETE, from_backoff=True)
        return moved

    def flush_unschedulable_leftover(self) -> None:
        """``flushUnschedulablePodsLeftover``: pods stuck for longer than 5 minutes."""
        now = self.now()
        stale = [
            q for q in self.unschedulable.values() if now - q.timestamp > self.max_in_unschedulable
        ]
        if stale:
            self._move_pods(stale, ev.UNSCHEDULABLE_TIMEOUT, None, None)

    async def run(self) -> None:
        """The periodic flushes (every 1 s and every 30 s from now; with PopFromBackoffQ the 1 s
        flush on whole seconds); runs until cancelled.

        The flushes happen at fixed ticks.  ``run_due_flushes`` runs every tick that has come and
        not yet run, whoever calls it first — this task, or the scheduling loop before each pop —
        so what the loop pops at a tick's instant never depends on which task ran first.
        """
        self.start_ticks()
        while True:
            await anyio.sleep_until(min(t0 + period * k for t0, period, k in self._ticks))
            self.run_due_flushes()

    def start_ticks(self) -> None:
        """Start the periodic flushes' ticks from now (``run`` does; a driver may instead call
        ``run_due_flushes`` itself at ``next_tick()``)."""
        start = self.now()
        backoff_t0 = start
        if self.pop_from_backoff_q:
            # ``waitUntilAlignedWithOrderingWindow``: the first flush at the next whole second
            # (``alignToWindow(now + 1s)``), then every second
            backoff_t0 = align_to_window(start + BACKOFF_Q_ORDERING_WINDOW) - FLUSH_BACKOFF_PERIOD
        self._ticks = [
            (backoff_t0, FLUSH_BACKOFF_PERIOD, 1),
            (start, FLUSH_UNSCHEDULABLE_PERIOD, 1),
        ]

    def next_tick(self, *, backoff_only: bool = False) -> float | None:
        """When the next periodic flush is due (None before ``start_ticks``)."""
        ticks = self._ticks[:1] if backoff_only else self._ticks
        if not ticks:
            return None
        return min(t0 + period * k for t0, period, k in ticks)

    def next_useful_tick(self) -> float | None:
        """When the next periodic flush that can move a pod is due: the backoff flush while the
        backoff queue holds a pod, the leftover flush while a pod is unschedulable.  A flush of
        an empty queue does nothing, so a driver need not wake for it: idle virtual time costs
        no wall time.  (Adding a pod to either queue wakes the driver, which asks again.)"""
        if not self._ticks:
            return None
        times = []
        if len(self.backoff):
            t0, period, k = self._ticks[0]
            times.append(t0 + period * k)
        if self.unschedulable:
            t0, period, k = self._ticks[1]
            times.append(t0 + period * k)
        return min(times, default=None)

    def run_due_flushes(self) -> None:
        """Run the periodic flushes whose tick has come (each tick runs once, however many
        ticks an idle stretch skipped)."""
        if not self._ticks:
            return
        now = self.now()
        now += 1e-9  # a tick due at t runs at t, whatever the clock's float rounding
        for i, (t0, period, k) in enumerate(self._ticks):
            if now < t0 + period * k:
                continue
            # the first tick still to come, in O(1) after a long idle stretch (the same k as
            # stepping one tick at a time, float rounding included)
            first = k
            k = max(k, int((now - t0) // period))
            while now >= t0 + period * k:
                k += 1
            while k - 1 > first and now < t0 + period * (k - 1):
                k -= 1
            self._ticks[i] = (t0, period, k)
            if i == 0:
                self.flush_backoff_completed()
            else:
                self.flush_unschedulable_leftover()

    # --- introspection -----------------------------------------------------------------------
    def pending_pods(self) -> dict[str, list[QueuedPodInfo]]:
        return {
            ACTIVE_Q: self.active_q.values(),
            BACKOFF_Q: self.backoff.values(),
            UNSCHEDULABLE_Q: list(self.unschedulable.values()),
        }

    def busy(self) -> bool:
        """Anything queued to run (active or backoff) or in flight."""
        return bool(len(self.active_q) or len(self.backoff) or self.in_flight)

    def pending_count(self) -> int:
        """Pods queued to run: in activeQ or backing off (the unschedulable pods excluded)."""
        return len(self.active_q) + len(self.backoff)


_POD_SCALE_DOWN = ClusterEvent(ev.Resource.POD, ev.ActionType.UPDATE_POD_SCALE_DOWN)


def _strip_for_update(pod: Pod) -> Pod:
    meta = msgspec.structs.replace(pod.metadata, resource_version="", generation=0, finalizers=[])
    return msgspec.structs.replace(pod, metadata=meta, status=PodStatus())


def is_pod_updated(old: Pod, new: Pod) -> bool:
    """``isPodUpdated``: the pods differ once status, resourceVersion, generation and finalizers
    are dropped (upstream also drops managedFields and keeps the ResourceClaim statuses, which
    kubesched's Pod does not carry)."""
    return _strip_for_update(old) != _strip_for_update(new)


def _required_affinity_terms(pod: Pod) -> list[PodAffinityTerm]:
    aff = pod.spec.affinity
    if aff is None or aff.pod_affinity is None:
        return []
    return list(aff.pod_affinity.required_during_scheduling_ignored_during_execution)


def _term_matches(
    term: PodAffinityTerm, owner: Pod, pod: Pod, ns_labels: Mapping[str, str]
) -> bool:
    """``AffinityTerm.Matches``: the pod's namespace is covered and its labels are selected."""
    namespaces = set(term.namespaces)
    if not namespaces and term.namespace_selector is None:
        namespaces = {owner.metadata.namespace}
    ns_ok = pod.metadata.namespace in namespaces or selector_matches(
        term.namespace_selector, ns_labels
    )
    return ns_ok and selector_matches(term.label_selector, pod.metadata.labels)


def code_is_rejection(code: Code) -> bool:
    return code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)
