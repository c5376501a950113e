"""Retries at one virtual instant: what the deterministic loop does when plugins keep a pod
coming back without time passing.

A pod normally comes back to activeQ only after its backoff or a cluster event.  Two upstream
paths skip the backoff: ``Activate`` (``PodsToActivate``, e.g. Coscheduling's ActivateSiblings,
scheduler-plugins ``pkg/coscheduling/core/core.go``), and, from v1.33 (SchedulerPopFromBackoffQ,
``pkg/scheduler/backend/queue/active_queue.go``), a pop from backoffQ when activeQ is empty.
Together they can keep a gang that does not fit in a cycle: one member fails Filter and its
PostFilter rejects the waiting members, which frees their room; a member popped again fits,
waits at Permit and activates its siblings, the next one fails...  (scheduler-plugins #429,
"Infinite scheduling loop"; upstream's answer is ``podGroupBackoffSeconds``, 0 by default).
Upstream, with those defaults, loops too, but in real time: every attempt takes time, the loop's
pods sort behind the others (Coscheduling's QueueSort uses the group's last failure time), and
the cluster changes under it until the gang fits.  In virtual time attempts take no time, and
the same loop would spin at one instant for ever.

So a pod popped more than :data:`ATTEMPTS_PER_INSTANT` times at one instant waits out its
backoff (``calculateBackoffDuration`` of its attempts, 1 s doubling to 10 s by default) in
virtual time before that attempt runs, as if the attempt had taken that long: it stays popped
(in flight: an ``Activate`` or a cluster event meanwhile is recorded for it, as for any pod in
a cycle), other pods are scheduled meanwhile, and its cycle runs at the end of the wait.  Only
with no backoff at all (``podInitialBackoffSeconds: 0``) does the simulation still stop with
its livelock warning, after :data:`LIVELOCK_ATTEMPTS_PER_POD` attempts.
"""

from __future__ import annotations

from collections.abc import Callable

from kubesched.api._objects import Pod
from kubesched.queue._scheduling_queue import QueuedPodInfo

ATTEMPTS_PER_INSTANT = 5
"""Attempts of one pod at one virtual instant before its next attempt waits out its backoff."""

LIVELOCK_ATTEMPTS_PER_POD = 100
"""A simulation that attempts one pod this many times at one virtual instant (possible only with
no backoff) is in a livelock: it stops rather than spin forever."""


class InstantRetries:
    """Counts each pod's attempts at the current instant and holds back the ones over the limit."""

    def __init__(
        self,
        backoff_duration: Callable[[QueuedPodInfo], float],
        current: Callable[[str], Pod | None],
        done: Callable[[str], None],
    ) -> None:
        self.backoff_duration = backoff_duration
        self.current = current  # the pod as the informers have it now, by uid
        self.done = done  # the queue's Done: a held-back pod deleted or bound meanwhile
        self.instant = -1.0
        self.attempts: dict[str, int] = {}  # pod uid -> its attempts at this instant
        self.deferred: list[tuple[float, int, QueuedPodInfo]] = []  # (due, order, pod), by due
        self._seq = 0

    def count(self, now: float, qpi: QueuedPodInfo) -> int:
        """Count an attempt of ``qpi`` at ``now``: its attempts at this instant so far."""
        if now != self.instant:
            self.instant = now
            self.attempts.clear()
        n = self.attempts[qpi.uid] = self.attempts.get(qpi.uid, 0) + 1
        return n

    def defer(self, now: float, qpi: QueuedPodInfo) -> bool:
        """Hold the popped ``qpi`` back for its backoff; False when it has none."""
        wait = self.backoff_duration(qpi)
        if wait <= 0:
            return False
        self._seq += 1
        self.deferred.append((now + wait, self._seq, qpi))
        self.deferred.sort(key=lambda d: (d[0], d[1]))
        return True

    def next_due(self) -> float | None:
        """When the first held-back attempt is due (a wake source of the loop)."""
        return self.deferred[0][0] if self.deferred else None

    def pop_due(self, now: float) -> QueuedPodInfo | None:
        """The first held-back pod whose wait is over, as it is now, or None.  A pod deleted or
        bound while it waited ends its flight here (the queue's Delete found it in none of its
        sub-queues)."""
        while self.deferred and self.deferred[0][0] <= now + 1e-9:
            qpi = self.deferred.pop(0)[2]
            pod = self.current(qpi.uid)
            if pod is None or pod.spec.node_name:
                self.done(qpi.uid)
                continue
            if pod is not qpi.pod:
                qpi.update(pod)
            return qpi
        return None

    def busy(self) -> bool:
        return bool(self.deferred)


__all__ = ["ATTEMPTS_PER_INSTANT", "LIVELOCK_ATTEMPTS_PER_POD", "InstantRetries"]
