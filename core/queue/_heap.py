"""The queue's pod record and its heap: ``framework.QueuedPodInfo`` and ``backend/heap``.

The lowest layer of the scheduling queue (:mod:`kubesched.queue._scheduling_queue`): the sub-queues
(:mod:`kubesched.queue._activequeue`, :mod:`kubesched.queue._backoffqueue`) are built on :class:`_Heap`.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubesched.api._objects import Pod
from kubesched.runtime._events import ClusterEvent
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import Status


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
    flushed: bool = False
    """Moved out of the unschedulable pods by their 5-minute flush (``pod_scheduled_after_flush``)."""
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

