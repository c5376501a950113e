"""The queueing hints: which cluster events may make a rejected pod schedulable, and how soon.

``isPodWorthRequeuing`` and ``determineSchedulingHintForInFlightPod`` of upstream's
``scheduling_queue.go``, over the events and hint functions each profile's plugins registered
(see :mod:`kubesched.queue._scheduling_queue`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.api._objects import Pod
from kubesched.queue._heap import QueuedPodInfo, QueueProfile
from kubesched.runtime._events import ClusterEvent, QueueingHint

QUEUE_SKIP, QUEUE_AFTER_BACKOFF, QUEUE_IMMEDIATELY = 0, 1, 2


class QueueingHints:
    """The (plugin, event, hint) each profile registered.  ``enabled`` is the
    ``SchedulerQueueingHints`` gate: off, every registered match counts as Queue."""

    def __init__(self, profiles: Mapping[str, QueueProfile], *, enabled: bool) -> None:
        self.enabled = enabled
        # (plugin, event, hint) per profile, and the events each plugin registered
        self.registered: dict[str, list[tuple[str, ClusterEvent, Any]]] = {}
        self.plugin_events: dict[str, list[ClusterEvent]] = {}
        for name, prof in profiles.items():
            regs = list(prof.cluster_events())
            self.registered[name] = regs
            for plugin, event, _ in regs:
                self.plugin_events.setdefault(plugin, []).append(event)
        self._interest: dict[tuple[Any, Any], bool] = {}
        self._all_events = [e for regs in self.registered.values() for _, e, _ in regs]

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """``isEventOfInterest``: a wildcard event, or one some plugin registered."""
        key = (event.resource, event.action)
        hit = self._interest.get(key)
        if hit is None:
            hit = self._interest[key] = event.is_wildcard() or any(reg.matches(event) for reg in self._all_events)
        return hit

    def worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> int:
        """``isPodWorthRequeuing``."""
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors:
            return QUEUE_AFTER_BACKOFF
        if event.is_wildcard():
            # a wildcard event carrying a Pod is meant for that pod only (ForceActivate)
            if new is not None and (not isinstance(new, Pod) or new.metadata.uid != qpi.uid):
                return QUEUE_SKIP
            return QUEUE_AFTER_BACKOFF
        regs = self.registered.get(qpi.pod.spec.scheduler_name)
        if regs is None:
            return QUEUE_AFTER_BACKOFF
        result = QUEUE_SKIP
        for plugin, registered, hint_fn in regs:
            if not registered.matches(event) or plugin not in rejectors:
                continue
            hint = QueueingHint.QUEUE
            # hints off: every registered function is ``defaultQueueingHintFn`` (always Queue)
            if hint_fn is not None and self.enabled:
                try:
                    hint = hint_fn(qpi.pod, old, new)
                except Exception:
                    hint = QueueingHint.QUEUE
            if hint == QueueingHint.QUEUE_SKIP:
                continue
            if plugin in qpi.pending_plugins:
                return QUEUE_IMMEDIATELY
            if not qpi.pending_plugins:
                return QUEUE_AFTER_BACKOFF
            result = QUEUE_AFTER_BACKOFF
        return result

    def for_in_flight(
        self, qpi: QueuedPodInfo, events: Iterable[tuple[ClusterEvent, Any, Any]] | None
    ) -> int:
        """``determineSchedulingHintForInFlightPod``: ``events`` came while the pod was in
        flight (None: "in flight entity isn't found in the scheduling queue")."""
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return QUEUE_AFTER_BACKOFF
        if events is None:
            return QUEUE_AFTER_BACKOFF
        best = QUEUE_SKIP
        for event, old, new in events:
            s = self.worth_requeuing(qpi, event, old, new)
            if s == QUEUE_IMMEDIATELY:
                return s
            if s == QUEUE_AFTER_BACKOFF:
                best = s
                if not qpi.pending_plugins:
                    return best
        return best

