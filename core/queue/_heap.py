"""The queue's pod record and its heap: ``framework.QueuedPodInfo`` and ``backend/heap``.

The lowest layer of the scheduling queue (:mod:`kubesched.queue._scheduling_queue`): the sub-queues
(:mod:`kubesched.queue._activequeue`, :mod:`kubesched.queue._backoffqueue`) are built on :class:`_Heap`.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kubesched.api._objects import Pod
from kubesched.runtime._events import ClusterEvent
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import Status

_new = object.__new__


class QueuedPodInfo:
    """``framework.QueuedPodInfo``: a pod plus its queueing history.

    A plain class with slots (one object a pod, made at each Add): the two plugin sets are made
    on first use, since a pod scheduled at its first attempt never needs them."""

    __slots__ = (
        "pod_info", "timestamp", "attempts", "initial_attempt_timestamp", "_unschedulable_plugins",
        "_pending_plugins", "gating_plugin", "gating_plugin_events", "unschedulable_count",
        "consecutive_errors_count", "backoff_expiration", "flushed", "seq",
    )  # fmt: skip

    def __init__(
        self,
        pod_info: PodInfo,
        timestamp: float = 0.0,
        attempts: int = 0,
        initial_attempt_timestamp: float | None = None,
        unschedulable_plugins: set[str] | None = None,
        pending_plugins: set[str] | None = None,
        gating_plugin: str = "",
        gating_plugin_events: Sequence[ClusterEvent] = (),
        unschedulable_count: int = 0,
        consecutive_errors_count: int = 0,
        backoff_expiration: float | None = None,
        flushed: bool = False,
        seq: int = 0,
    ) -> None:
        self.pod_info = pod_info
        self.timestamp = timestamp
        self.attempts = attempts
        self.initial_attempt_timestamp = initial_attempt_timestamp
        self._unschedulable_plugins = unschedulable_plugins
        self._pending_plugins = pending_plugins
        self.gating_plugin = gating_plugin
        self.gating_plugin_events = gating_plugin_events
        """The gating plugin's registered events (only ever replaced, never changed in place)."""
        self.unschedulable_count = unschedulable_count
        self.consecutive_errors_count = consecutive_errors_count
        self.backoff_expiration = backoff_expiration
        self.flushed = flushed
        """Moved out of the unschedulable pods by their 5-minute flush (``pod_scheduled_after_flush``)."""
        # the order in which the queue first saw the pod: breaks ties between equal pods the same
        # way whichever task requeued them first (so runs repeat exactly on any event loop)
        self.seq = seq

    @property
    def unschedulable_plugins(self) -> set[str]:
        """The plugins that rejected the pod's last attempt (or gated it at PreEnqueue)."""
        s = self._unschedulable_plugins
        if s is None:
            s = self._unschedulable_plugins = set()
        return s

    @unschedulable_plugins.setter
    def unschedulable_plugins(self, value: set[str]) -> None:
        self._unschedulable_plugins = value

    @property
    def pending_plugins(self) -> set[str]:
        """The plugins that said Pending at the pod's last attempt."""
        s = self._pending_plugins
        if s is None:
            s = self._pending_plugins = set()
        return s

    @pending_plugins.setter
    def pending_plugins(self, value: set[str]) -> None:
        self._pending_plugins = value

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

    @classmethod
    def new(cls, pod_info: PodInfo, timestamp: float, seq: int) -> QueuedPodInfo:
        """A pod the queue has just seen: ``QueuedPodInfo(pod_info, timestamp=timestamp,
        seq=seq)``, without the keyword call (each new pod comes here)."""
        q = _new(cls)
        q.pod_info, q.timestamp, q.attempts, q.initial_attempt_timestamp = pod_info, timestamp, 0, None
        q._unschedulable_plugins = q._pending_plugins = None
        q.gating_plugin, q.gating_plugin_events, q.unschedulable_count, q.consecutive_errors_count = "", (), 0, 0
        q.backoff_expiration, q.flushed, q.seq = None, False, seq
        return q

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
    code; the order is the same.  Such tuples are all different (``seq`` is unique), so the
    order is total, and a keyed heap keeps them in two places: ``_run``, a FIFO of the items
    pushed in increasing order (each one above the run's last), and the binary heap for the
    others.  The smallest item is the smaller of the two heads, so ``pop`` gives exactly what
    one heap would; pods that arrive in order (a burst of new pods: equal priority, increasing
    timestamps) never pay the heap's sifting.
    """

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        self._less = less
        self._key = key
        self._heap: list[Any] = []
        self._run: deque[Any] = deque()  # keyed items in increasing order (see the class doc)
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
        uid = qpi.pod_info.uid  # (``qpi.uid``, without the property's call)
        items = self._items
        old = items.pop(uid, None)
        if old is not None:
            old.valid = False
        e = _new(_Entry)  # ``_Entry(qpi, self._less, next(self._seq))``, without its __init__ call
        e.qpi, e.less, e.seq, e.valid = qpi, self._less, next(self._seq), True
        items[uid] = e
        key = self._key
        if key is None:
            heapq.heappush(self._heap, e)
        else:
            item = (key(qpi), qpi.seq, e.seq, e)
            run = self._run
            if not run or run[-1] < item:
                run.append(item)
            else:
                heapq.heappush(self._heap, item)
        n = len(self._heap) + len(self._run)
        if n > 64 and n > 2 * len(items):
            self._heap = [x for x in self._heap if _entry(x).valid]
            heapq.heapify(self._heap)
            self._run = deque(x for x in self._run if x[3].valid)

    def remove(self, uid: str) -> QueuedPodInfo | None:
        e = self._items.pop(uid, None)
        if e is None:
            return None
        e.valid = False
        return e.qpi

    def _head(self) -> Any:
        """The smallest item (valid or not), without taking it; None when there is none."""
        h, run = self._heap, self._run
        if run and (not h or run[0] < h[0]):
            return run[0]
        return h[0] if h else None

    def _take(self) -> Any:
        """Take the smallest item (valid or not); None when there is none."""
        h, run = self._heap, self._run
        if run and (not h or run[0] < h[0]):
            return run.popleft()
        return heapq.heappop(h) if h else None

    def peek(self) -> QueuedPodInfo | None:
        while (x := self._head()) is not None and not _entry(x).valid:
            self._take()
        return None if x is None else _entry(x).qpi

    def pop(self) -> QueuedPodInfo | None:
        h, run = self._heap, self._run
        while True:
            # ``_take`` and ``_entry``, inlined (once a pod)
            if run and (not h or run[0] < h[0]):
                x = run.popleft()
            elif h:
                x = heapq.heappop(h)
            else:
                return None
            e = x if type(x) is _Entry else x[3]
            if e.valid:
                del self._items[e.qpi.pod_info.uid]
                return e.qpi

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

