"""``active_queue.go``: activeQ, the pods in flight and the cluster events recorded for them.

The heap of pods ready to be scheduled (in the profile's QueueSort order), the waiter ``pop``
sleeps on while it is empty, the global scheduling cycle, and the in-flight pods with the log of
the cluster events that came while they were in flight (see :mod:`kubesched.queue._scheduling_queue`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import anyio

from kubesched.queue._heap import QueuedPodInfo, _Heap
from kubesched.runtime._events import ClusterEvent

if TYPE_CHECKING:
    from kubesched.queue._backoffqueue import BackoffQueue


class ActiveQueue:
    """``activeQueue``.  ``backoff`` (the ``SchedulerPopFromBackoffQ`` gate on) is where ``pop``
    takes a pod when the heap is empty; ``changed`` is called on every change the queue's
    observer must see."""

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        sort_key: Callable[[QueuedPodInfo], Any] | None,
        *,
        queueing_hints: bool,
        backoff: BackoffQueue | None,
        changed: Callable[[], None],
        from_backoff: Callable[[], None] | None = None,
    ) -> None:
        """``from_backoff``: called for each pod popped from the backoff heap (the queue's
        ``scheduler_queue_incoming_pods_total{queue="active",event="PopFromBackoffQ"}``)."""
        self.heap = _Heap(less, sort_key)
        self.queueing_hints = queueing_hints
        self._backoff = backoff
        self._changed = changed
        self._from_backoff = from_backoff
        self._scheduling_cycle = 0
        self._in_flight: dict[str, int] = {}  # uid -> index into the event log when popped
        self._events: list[tuple[ClusterEvent, Any, Any]] = []
        self._events_base = 0
        self._waiter: anyio.Event | None = None
        self.closed = False

    @property
    def scheduling_cycle(self) -> int:
        """``schedulingCycle``: how many pods have been popped."""
        return self._scheduling_cycle

    @property
    def in_flight(self) -> dict[str, int]:
        """The pods in flight (uid -> their start in the event log); read only."""
        return self._in_flight

    # --- popping ---------------------------------------------------------------------------
    async def pop(self) -> QueuedPodInfo:
        """``Pop``: wait for the head of activeQ; count the attempt and mark the pod in flight.

        Raises ``anyio.EndOfStream`` once the queue is closed and activeQ is empty.
        """
        while True:
            qpi = self.pop_nowait()
            if qpi is not None:
                return qpi
            if self.closed:
                raise anyio.EndOfStream
            if self._waiter is None:
                self._waiter = anyio.Event()
            await self._waiter.wait()

    def _poppable(self) -> bool:
        """activeQ has a pod (or, with PopFromBackoffQ, the plugin backoff heap has one)."""
        return bool(len(self.heap)) or (self._backoff is not None and bool(len(self._backoff.pod_backoff_q)))

    async def wait_for_pods(self) -> None:
        """Wait until there is a pod to pop (or the queue is closed)."""
        while not self._poppable() and not self.closed:
            if self._waiter is None:
                self._waiter = anyio.Event()
            await self._waiter.wait()

    def pop_nowait(self) -> QueuedPodInfo | None:
        """The head of activeQ, or None if it is empty (``unlockedPop`` without waiting).

        With PopFromBackoffQ, an empty activeQ gives the head of the plugin backoff heap."""
        while True:
            qpi = self.heap.pop()
            if qpi is None and self._backoff is not None:
                qpi = self._backoff.pop_backoff()
                if qpi is not None and self._from_backoff is not None:
                    self._from_backoff()  # counted before the in-flight check, as upstream
            if qpi is None:
                return None
            qpi.attempts += 1
            uid = qpi.pod_info.uid
            if self.queueing_hints and uid in self._in_flight:
                # "the same pod is tracked in multiple places in the scheduler": discard it
                # (only tracked with hints on; without them the queue keeps no in-flight set,
                # and here the set only serves ``busy``)
                continue
            self._in_flight[uid] = self._events_base + len(self._events)
            self._scheduling_cycle += 1
            self._changed()
            return qpi

    def mark_popped(self, qpi: QueuedPodInfo) -> None:
        """What ``pop`` does to the pod it returns, for a pod taken out of the queue by other
        means (``PopSpecificPod``): count the attempt, mark it in flight."""
        qpi.attempts += 1
        self._in_flight[qpi.uid] = self._events_base + len(self._events)
        self._scheduling_cycle += 1
        self._changed()

    def wake(self) -> None:
        """Wake a waiting ``pop`` (something was added)."""
        if self._waiter is not None:
            self._waiter.set()
            self._waiter = None
        self._changed()

    def close(self) -> None:
        self.closed = True
        for uid in list(self._in_flight):
            self._in_flight.pop(uid)
        self._prune_events()
        self.wake()

    def done(self, uid: str) -> None:
        """``Done``: the pod's scheduling attempt is over."""
        if self._in_flight.pop(uid, None) is not None:
            self._prune_events()
        self._changed()

    # --- the in-flight events --------------------------------------------------------------
    def _prune_events(self) -> None:
        if not self._in_flight:
            if self._events:
                self._events_base += len(self._events)
                self._events = []
            return
        oldest = min(self._in_flight.values())
        drop = oldest - self._events_base
        if drop > 0:
            del self._events[:drop]
            self._events_base = oldest

    def record_event(self, event: ClusterEvent, old: Any, new: Any) -> None:
        """``addEventIfAnyInFlight`` (hints on only)."""
        if self.queueing_hints and self._in_flight:
            self._events.append((event, old, new))

    def record_events_for(self, uid: str, events: Iterable[ClusterEvent], old: Any, new: Any) -> bool:
        """``addEventsIfPodInFlight`` (hints on only): whether the pod is in flight."""
        if not (self.queueing_hints and uid in self._in_flight):
            return False
        self._events.extend((e, old, new) for e in events)
        return True

    def events_since_pop(self, uid: str) -> list[tuple[ClusterEvent, Any, Any]] | None:
        """The events recorded since the pod was popped (None if it is not in flight)."""
        start = self._in_flight.get(uid)
        if start is None:
            return None
        return self._events[max(0, start - self._events_base) :]

    def in_flight_events(self) -> list[tuple[ClusterEvent, Any, Any]]:
        """The cluster events kept for the pods in flight (oldest first)."""
        return list(self._events)
