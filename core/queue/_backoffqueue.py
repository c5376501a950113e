"""``backoff_queue.go``: backoffQ, the pods waiting out their backoff (see :mod:`kubesched.queue._scheduling_queue`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

from kubesched.api._objects import Pod
from kubesched.queue._heap import QueuedPodInfo, _Heap

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
# ``backoffQOrderingWindowDuration`` (SchedulerPopFromBackoffQ): expiries are truncated to it
BACKOFF_Q_ORDERING_WINDOW = 1.0


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
        self._plugin_items = self.pod_backoff_q._items  # (``delete``'s: never replaced)
        self._error_items = self.pod_error_backoff_q._items

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
        # ``_Heap.remove`` of each heap, inlined (every pod that enters activeQ or is bound
        # comes here, most often in neither heap: two membership tests)
        found = False
        if uid in self._plugin_items:
            self._plugin_items.pop(uid).valid = False
            found = True
        if uid in self._error_items:
            self._error_items.pop(uid).valid = False
            found = True
        return found

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

