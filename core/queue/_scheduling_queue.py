"""The scheduling queue: activeQ, backoffQ, unschedulable pods, and the nominator.

The queue is split along upstream's files (``pkg/scheduler/backend/queue/``): this module is
``scheduling_queue.go`` (``PriorityQueue``: the moves between the sub-queues, unschedulablePods,
the cluster events); :mod:`kubesched.queue._activequeue` is ``active_queue.go`` (activeQ, the pods in
flight and their events, the scheduling cycle, ``pop``); :mod:`kubesched.queue._backoffqueue` is
``backoff_queue.go``; :mod:`kubesched.queue._nominator` is ``nominator.go``;
:mod:`kubesched.queue._hints` evaluates the queueing hints, :mod:`kubesched.queue._ticks`
runs the periodic flushes, and :mod:`kubesched.queue._heap` holds ``QueuedPodInfo`` and the heap.

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

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from kubesched.api._labels import selector_matches
from kubesched.api._objects import Pod, PodStatus
from kubesched.api._resources import NEWEST_RULES, RequestRules
from kubesched.clock import now as _now
from kubesched.queue._activequeue import ActiveQueue
from kubesched.queue._backoffqueue import BACKOFF_Q_ORDERING_WINDOW as BACKOFF_Q_ORDERING_WINDOW
from kubesched.queue._backoffqueue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    BackoffQueue,
)
from kubesched.queue._backoffqueue import align_to_window as align_to_window
from kubesched.queue._backoffqueue import calculate_backoff_duration as calculate_backoff_duration
from kubesched.queue._heap import QueuedPodInfo, QueueProfile
from kubesched.queue._heap import _Heap as _Heap
from kubesched.queue._hints import QUEUE_AFTER_BACKOFF as _QUEUE_AFTER_BACKOFF
from kubesched.queue._hints import QUEUE_SKIP as _QUEUE_SKIP
from kubesched.queue._hints import QueueingHints
from kubesched.queue._nominator import NominatedView as NominatedView
from kubesched.queue._nominator import Nominator
from kubesched.queue._ticks import FLUSH_BACKOFF_PERIOD as FLUSH_BACKOFF_PERIOD
from kubesched.queue._ticks import FLUSH_UNSCHEDULABLE_PERIOD as FLUSH_UNSCHEDULABLE_PERIOD
from kubesched.queue._ticks import FlushTicks
from kubesched.runtime import _events as ev
from kubesched.runtime._events import ClusterEvent
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import Code

if TYPE_CHECKING:
    from kubesched.api._objects import PodAffinityTerm
    from kubesched.metrics._metrics import MetricsRecorder

__all__ = [
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "BackoffQueue",
    "Nominator",
    "QueueProfile",
    "QueuedPodInfo",
    "SchedulingQueue",
    "code_is_rejection",
    "is_pod_updated",
]

DEFAULT_POD_MAX_IN_UNSCHEDULABLE = 300.0

# The plugin whose rejections any assigned-pod event in the namespace may resolve
# (``getUnschedulablePodsWithCrossTopologyTerm``).
POD_TOPOLOGY_SPREAD = "PodTopologySpread"

ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_Q = "active", "backoff", "unschedulable"


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
        nominator: Nominator | None = None,
        namespace_labels: Callable[[str], Mapping[str, str]] | None = None,
        queueing_hints: bool = True,
        pop_from_backoff_q: bool = False,
        requeue_spread_on_assigned_pod: bool = True,
        rules: RequestRules = NEWEST_RULES,
        version: tuple[int, int] = (1, 36),
    ) -> None:
        self.profiles = dict(profiles)
        self.rules = rules  # how the release computes requests, for the PodInfos made here
        self.queueing_hints = queueing_hints
        self.pop_from_backoff_q = pop_from_backoff_q
        self._helped_by = functools.partial(cross_topology_pods, spread=requeue_spread_on_assigned_pod)
        first = next(iter(self.profiles.values()))
        self._less = first.queue_sort_less
        # a key that orders as the QueueSort does, when the profile knows one (PrioritySort)
        sort_key: Callable[[QueuedPodInfo], Any] | None = getattr(first, "queue_sort_key", None)
        self.max_in_unschedulable = pod_max_in_unschedulable
        self.now: Callable[[], float] = now or _now
        self.backoff = BackoffQueue(
            lambda: self.now(),
            pod_initial_backoff,
            pod_max_backoff,
            pop_from_backoff_q=pop_from_backoff_q,
            active_less=self._less,
            active_sort_key=sort_key,
        )
        self.activeq = ActiveQueue(
            self._less, sort_key, queueing_hints=queueing_hints, backoff=self.backoff if pop_from_backoff_q else None,
            changed=self._changed, from_backoff=lambda: self._count(ACTIVE_Q, ev.POP_FROM_BACKOFF_Q),
        )  # fmt: skip
        self.active_q = self.activeq.heap
        self._active_items = self.active_q._items  # never replaced
        self.backoff_q = self.backoff.pod_backoff_q
        self.error_backoff_q = self.backoff.pod_error_backoff_q
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        self.nominator = nominator if nominator is not None else Nominator()  # the scheduler's
        self.nominator.lookup = self._pod_info_of
        self._namespace_labels = namespace_labels
        self.move_request_cycle = -1
        self.hints = QueueingHints(self.profiles, enabled=queueing_hints)
        self._registered = self.hints.registered
        self.ticks = FlushTicks(
            lambda: self.now(),
            aligned=pop_from_backoff_q,
            flush_backoff=lambda: self.flush_backoff_completed(),
            flush_leftover=lambda: self.flush_unschedulable_leftover(),
            backoff_busy=lambda: bool(len(self.backoff)),
            unschedulable_busy=lambda: bool(self.unschedulable),
        )
        # the calls the sub-queues answer alone: activeQ (``pop`` waits while it is empty, and
        # ``done`` ends a pod's flight), backoffQ, the hints and the periodic flushes
        self.pop = self.activeq.pop
        self._wake = self.activeq.wake
        self.wait_for_pods = self.activeq.wait_for_pods
        self.pop_nowait = self.activeq.pop_nowait
        self.close = self.activeq.close
        self.done = self.activeq.done
        self.in_flight_events = self.activeq.in_flight_events
        self.backoff_duration = self.backoff.duration
        self.backoff_expiry = self.backoff.expiry
        self.is_backing_off = self.backoff.is_backing_off
        self.is_event_of_interest = self.hints.is_event_of_interest
        self.run = self.ticks.run
        self.start_ticks = self.ticks.start
        self.next_tick = self.ticks.next_tick
        self.next_useful_tick = self.ticks.next_useful_tick
        self.run_due_flushes = self.ticks.run_due
        self._pod_seq = 0
        self.on_change: Callable[[], None] | None = None
        # the scheduler's MetricsRecorder while one is attached: ``queue_incoming_pods_total``,
        # each event under upstream's label at the emulated ``version``
        self.metrics_recorder: MetricsRecorder | None = None
        self.labels = ev.QueueLabels(version)

    @property
    def scheduling_cycle(self) -> int:
        return self.activeq._scheduling_cycle  # read often: not through the activeQ's property

    @property
    def in_flight(self) -> dict[str, int]:
        """The pods in flight (uid -> their start in the event log); read only."""
        return self.activeq.in_flight

    # --- entering --------------------------------------------------------------------------
    def new_queued_pod_info(self, pod: Pod, pi: PodInfo | None = None) -> QueuedPodInfo:
        self._pod_seq += 1
        return QueuedPodInfo.new(pi or PodInfo(pod, self.rules), self.now(), self._pod_seq)

    def _run_pre_enqueue(self, qpi: QueuedPodInfo) -> None:
        """``runPreEnqueuePlugins``: the gating plugin first; stop at the first rejection."""
        prof = self.profiles.get(qpi.pod_info.pod.spec.scheduler_name)  # (``qpi.pod``, without its call)
        if prof is None:
            qpi.gating_plugin = ""
            return
        status = prof.run_pre_enqueue_plugins(qpi.pod_info.pod, qpi.gating_plugin)
        if status is None or status.is_success():
            qpi.gating_plugin = ""
            return
        qpi.unschedulable_plugins.add(status.plugin)
        qpi.gating_plugin = status.plugin
        qpi.gating_plugin_events = self.hints.plugin_events.get(status.plugin, [])

    def _move_to_active(
        self, qpi: QueuedPodInfo, event: ClusterEvent, from_backoff: bool = False, now: float | None = None
    ) -> bool:
        """``moveToActiveQ``: PreEnqueue, then activeQ; a gated pod goes to unschedulablePods.

        With PopFromBackoffQ, a pod coming straight from backoffQ skips PreEnqueue (it ran on
        the way in).  ``now``: the instant, when the caller has just read it."""
        uid = qpi.pod_info.uid
        if not (self.pop_from_backoff_q and from_backoff):
            self._run_pre_enqueue(qpi)
        if qpi.gating_plugin:  # ``qpi.gated``
            if not (uid in self.active_q or uid in self.backoff or uid in self.unschedulable):
                self._to_unschedulable(qpi, event)
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self.now() if now is None else now
        self.unschedulable.pop(uid, None)
        self.backoff.delete(uid)
        self.active_q.push(qpi)
        if (rec := self.metrics_recorder) is not None:  # ``_count``, inlined
            rec.pod_incoming(ACTIVE_Q, self.labels[event])
        # (Nominator.add does nothing for a pod naming no node and holding no nomination)
        pi = qpi.pod_info
        if event.label in _NOMINATING_LABELS and (pi.pod.status.nominated_node_name or uid in self.nominator.pod_to_node):
            self.nominator.add(pi)
        self._wake()
        return True

    def _move_to_backoff(self, qpi: QueuedPodInfo, event: ClusterEvent) -> bool:
        """``moveToBackoffQ``.  With PopFromBackoffQ, PreEnqueue runs first (a gated pod goes to
        unschedulablePods instead), and ``pop`` is woken: it may now take the pod from backoffQ."""
        if self.pop_from_backoff_q:
            self._run_pre_enqueue(qpi)
            if qpi.gated:
                if qpi.uid not in self.unschedulable:
                    self._to_unschedulable(qpi, event)
                return False
        self.unschedulable.pop(qpi.uid, None)
        self.backoff.add(qpi)
        self._count(BACKOFF_Q, event)
        if self.pop_from_backoff_q:
            self._wake()
        else:
            self._changed()
        return True

    def _to_unschedulable(self, qpi: QueuedPodInfo, event: ClusterEvent) -> None:
        self.unschedulable[qpi.uid] = qpi
        self._count(UNSCHEDULABLE_Q, event)
        self._changed()

    def _count(self, queue: str, event: ClusterEvent) -> None:
        if (rec := self.metrics_recorder) is not None:
            rec.pod_incoming(queue, self.labels[event])

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def add(self, pod: Pod, pi: PodInfo | None = None) -> None:
        """``Add``: a new unscheduled pod."""
        qpi = self.new_queued_pod_info(pod, pi)
        self._move_to_active(qpi, ev.UNSCHEDULED_POD_ADD, now=qpi.timestamp)  # the same instant

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
            self.activeq.record_events_for(uid, (ev.FORCE_ACTIVATE,), None, pod)
            self.move_request_cycle = self.scheduling_cycle

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
                _add_unschedulable_without_hint(self, qpi, scheduling_cycle)
                return
            strategy = self.hints.for_in_flight(qpi, self.activeq.events_since_pop(uid))
            self._requeue(qpi, strategy, ev.SCHEDULE_ATTEMPT_FAILURE)
        finally:
            self.done(uid)

    def _requeue(self, qpi: QueuedPodInfo, strategy: int, event: ClusterEvent) -> str:
        """``requeuePodWithQueueingStrategy``: the sub-queue the pod ends up in."""
        if strategy == _QUEUE_SKIP:
            self._to_unschedulable(qpi, event)
            return UNSCHEDULABLE_Q
        if strategy == _QUEUE_AFTER_BACKOFF and self.is_backing_off(qpi):
            return BACKOFF_Q if self._move_to_backoff(qpi, event) else UNSCHEDULABLE_Q
        if self._move_to_active(qpi, event):
            return ACTIVE_Q
        return UNSCHEDULABLE_Q

    # --- cluster events ------------------------------------------------------------------------
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

    def _move_pods(self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Any, new: Any) -> None:
        """``movePodsToActiveOrBackoffQueue``."""
        if not self.hints.is_event_of_interest(event):
            return
        for qpi in pods:
            if qpi.gated and not any(e.matches(event) for e in qpi.gating_plugin_events):
                continue  # only the gating plugin's events can ungate the pod
            strategy = self.hints.worth_requeuing(qpi, event, old, new)
            if strategy == _QUEUE_SKIP:
                continue
            self.unschedulable.pop(qpi.uid, None)
            self._requeue(qpi, strategy, event)
        self.move_request_cycle = self.activeq._scheduling_cycle  # (``scheduling_cycle``)
        self.activeq.record_event(event, old, new)

    def assigned_pod_added(self, pod: Pod) -> None:
        """``AssignedPodAdded``: only pods the new pod may help (affinity, topology spread)."""
        pods = self._helped_by(self.unschedulable.values(), pod, self._namespace_labels) if self.unschedulable else []
        self._move_pods(pods, ev.ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old: Pod, new: Pod, events: Sequence[ClusterEvent]) -> None:
        """``AssignedPodUpdated`` for each update event: a scale-down moves every pod (it may
        free resources); other updates only pods with a cross-topology term."""
        for e in events:
            if _POD_SCALE_DOWN.matches(e):
                self.move_all_to_active_or_backoff(e, old, new)
            else:
                pods = self._helped_by(self.unschedulable.values(), new, self._namespace_labels)
                self._move_pods(pods, e, old, new)

    # --- update / delete ---------------------------------------------------------------------
    def update(self, old: Pod | None, new: Pod) -> None:
        """``Update`` of an unscheduled pod."""
        uid = new.metadata.uid
        events = ev.pod_update_events(old, new) if old is not None and self.queueing_hints else []
        if self.activeq.record_events_for(uid, events, old, new):
            # recorded for when the pod comes back; the pod object itself is refreshed by the
            # failure handler from the informer
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
                    else:  # v1.31: BackoffComplete (QueueLabels.legacy_update)
                        self._move_to_active(qpi, self.labels.legacy_update)
                self._changed()
                return
            for e in events:
                strategy = self.hints.worth_requeuing(qpi, e, old, new)
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
        # each step only where the pod is (most often nowhere: a bound pod was in flight)
        if uid in self.nominator.pod_to_node:
            self.nominator.delete(uid)
        if uid in self._active_items:  # (``uid in self.active_q``, without its call)
            self.active_q.remove(uid)
        self.backoff.delete(uid)
        self.unschedulable.pop(uid, None)
        if self.on_change is not None:  # ``_changed``, inlined
            self.on_change()

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
            for q in stale:
                q.flushed = True
            self._move_pods(stale, ev.UNSCHEDULABLE_TIMEOUT, None, None)

    # --- introspection -----------------------------------------------------------------------
    def pending_pods(self) -> dict[str, list[QueuedPodInfo]]:
        return {
            ACTIVE_Q: self.active_q.values(),
            BACKOFF_Q: self.backoff.values(),
            UNSCHEDULABLE_Q: list(self.unschedulable.values()),
        }

    def busy(self) -> bool:
        """Anything queued to run (active or backoff) or in flight."""
        return bool(len(self.active_q) or len(self.backoff) or self.activeq.in_flight)

    def pending_count(self) -> int:
        """Pods queued to run: in activeQ or backing off (the unschedulable pods excluded)."""
        return len(self.active_q) + len(self.backoff)


# the events on which a pod entering activeQ is given to the nominator (``moveToActiveQ``)
_NOMINATING_LABELS = (ev.UNSCHEDULED_POD_ADD.label, ev.UNSCHEDULED_POD_UPDATE.label)
_POD_SCALE_DOWN = ClusterEvent(ev.Resource.POD, ev.ActionType.UPDATE_POD_SCALE_DOWN)


def _add_unschedulable_without_hint(queue: SchedulingQueue, qpi: QueuedPodInfo, scheduling_cycle: int) -> None:
    """``addUnschedulableWithoutQueueingHint`` (hints off): backoffQ if a move request came
    during or after this cycle, or no plugin rejected the pod; otherwise unschedulablePods."""
    if queue.move_request_cycle >= scheduling_cycle or not (qpi.unschedulable_plugins or qpi.pending_plugins):
        queue._move_to_backoff(qpi, ev.SCHEDULE_ATTEMPT_FAILURE)
    else:
        queue._to_unschedulable(qpi, ev.SCHEDULE_ATTEMPT_FAILURE)


def pop_specific(queue: SchedulingQueue, uid: str) -> QueuedPodInfo | None:
    """``PopSpecificPod`` (v1.36, for the PodGroup cycle): take the pod out of whichever of
    ``queue``'s sub-queues holds it and mark it popped, as ``pop`` would; None when the queue does
    not hold it (in flight, or gone)."""
    qpi = queue.active_q.remove(uid)
    if qpi is None:
        qpi = queue.backoff.get(uid)
        if qpi is not None:
            queue.backoff.delete(uid)
        else:
            qpi = queue.unschedulable.pop(uid, None)
    if qpi is None:
        return None
    queue.activeq.mark_popped(qpi)
    return qpi


def _strip_for_update(pod: Pod) -> Pod:
    meta = msgspec.structs.replace(pod.metadata, resource_version="", generation=0, finalizers=[])
    return msgspec.structs.replace(pod, metadata=meta, status=PodStatus())


def is_pod_updated(old: Pod, new: Pod) -> bool:
    """``isPodUpdated``: the pods differ once status, resourceVersion, generation and finalizers
    are dropped (upstream also drops managedFields and keeps the ResourceClaim statuses, which
    kubesched's Pod does not carry)."""
    return _strip_for_update(old) != _strip_for_update(new)


def cross_topology_pods(
    unschedulable: Iterable[QueuedPodInfo],
    pod: Pod,
    namespace_labels: Callable[[str], Mapping[str, str]] | None,
    spread: bool = True,
) -> list[QueuedPodInfo]:
    """``getUnschedulablePodsWithCrossTopologyTerm`` (v1.31.8 … v1.35.4 scheduling_queue.go):
    the pods ``pod`` (assigned) may help: PodTopologySpread's rejections in its namespace (from
    Kubernetes 1.31, kubernetes#122627) and the pods with a required pod-affinity term matching
    it.  Without ``spread`` (1.30), v1.30.6's ``getUnschedulablePodsWithMatchingAffinityTerm``:
    only the latter."""
    ns = pod.metadata.namespace
    ns_labels = namespace_labels(ns) if namespace_labels is not None else {}
    out = []
    for qpi in unschedulable:
        if spread and POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins and qpi.pod.metadata.namespace == ns:
            out.append(qpi)
            continue
        if any(_term_matches(t, qpi.pod, pod, ns_labels) for t in _required_affinity_terms(qpi.pod)):
            out.append(qpi)
    return out


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
