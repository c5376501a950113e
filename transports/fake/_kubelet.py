"""The kubelet emulation: every node's kubelet at once, as a controller fed by the store.

A pod's life, as it plays it::

    Pending ──bind──► Running ──delete_pod──► terminating ──grace period──► (DELETED)
       │                        (deletionTimestamp = now + grace; MODIFIED)
       └──delete_pod──► (DELETED at once: an unbound pod has nothing to stop)

- Start (in-write, ``admit``): a pod created bound, and a pod being bound, is Running in that
  same write (phase, startTime; PodScheduled=True for a pod created bound), so a binding is one
  MODIFIED.
- Terminate (``observe``): when a graceful deletion begins (a ``delete`` MODIFIED), the pod is
  removed once its ``deletionGracePeriodSeconds`` are over, deadlines in order (ties in the order
  the deletions began); a pod that goes otherwise meanwhile is forgotten.  The deadlines run from
  ``run_due_terminations``: called by the timer task (``tasks()``, when ``timers``) and by a
  deterministic simulation before each scheduling cycle.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from msgspec.structs import replace

from kubesched.api import PodCondition

from ._store import Change, Controller, Key, Store


@dataclass(order=True, slots=True)
class _Termination:
    deadline: float
    seq: int
    key: Key
    uid: str


class Kubelet(Controller):
    """Starts bound pods and ends terminating ones (see the module docstring)."""

    kinds = ("Pod",)

    def __init__(self, store: Store, *, timers: bool = True) -> None:
        super().__init__(store)
        self.timers = timers
        self._terminating: dict[Key, _Termination] = {}
        self._heap: list[_Termination] = []
        self._seq = 0
        self._wake: anyio.Event | None = None
        self._scope = anyio.CancelScope()

    # --- fed by the store --------------------------------------------------------------------

    def admit(self, change: Change) -> None:
        pod = change.obj
        if change.verb == "bind":
            now = self.store.clock.timestamp()
            pod.status = replace(pod.status, phase="Running", start_time=now)
        elif change.verb == "create" and pod.spec.node_name:
            now = self.store.clock.timestamp()
            pod.status.phase = pod.status.phase or "Running"
            pod.status.start_time = pod.status.start_time or now
            if not any(c.type == "PodScheduled" for c in pod.status.conditions):
                pod.status.conditions = [
                    *pod.status.conditions,
                    PodCondition(type="PodScheduled", status="True", last_transition_time=now),
                ]

    def observe(self, change: Change) -> None:
        if change.type == "DELETED":
            self._terminating.pop(change.key, None)
        elif change.verb == "delete":
            meta = change.obj.metadata
            self._seq += 1
            t = _Termination(
                anyio.current_time() + meta.deletion_grace_period_seconds,
                self._seq,
                change.key,
                meta.uid,
            )
            self._terminating[change.key] = t
            heapq.heappush(self._heap, t)
            if self._wake is not None:
                self._wake.set()

    # --- terminations ------------------------------------------------------------------------

    def pending_terminations(self) -> int:
        return len(self._terminating)

    def next_termination_time(self) -> float | None:
        heap = self._heap
        while heap and self._terminating.get(heap[0].key) is not heap[0]:
            heapq.heappop(heap)
        return heap[0].deadline if heap else None

    def run_due_terminations(self) -> None:
        heap = self._heap
        now = anyio.current_time()
        while heap and heap[0].deadline <= now + 1e-6:
            t = heapq.heappop(heap)
            if self._terminating.get(t.key) is not t:
                continue  # already gone (forced deletion)
            pod = self.store.get("Pod", t.key)
            if pod is not None and pod.metadata.uid == t.uid:
                self.store.remove("Pod", t.key)
            else:
                self._terminating.pop(t.key, None)

    # --- the timer task ----------------------------------------------------------------------

    def tasks(self) -> tuple[Callable[[], Any], ...]:
        return (self._run,) if self.timers else ()

    def close(self) -> None:
        self._scope.cancel()

    async def _run(self) -> None:
        """Remove each terminating pod when its grace period is over, in deadline order."""
        heap = self._heap
        with self._scope:
            while True:
                self.run_due_terminations()
                self._wake = wake = anyio.Event()
                deadline = heap[0].deadline if heap else math.inf
                with anyio.CancelScope(deadline=deadline):
                    await wake.wait()
