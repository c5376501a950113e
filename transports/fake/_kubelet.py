"""The kubelet emulation: every node's kubelet at once, as a controller fed by the store.

A pod's life, as it plays it::

    Pending ──bind──► Running ──delete_pod──► terminating ──grace period──► (DELETED)
       │                        (deletionTimestamp = now + grace; MODIFIED)
       └──delete_pod──► (DELETED at once: an unbound pod has nothing to stop)

- Start (in-write, ``admit``): a pod created bound, and a pod being bound, is Running in that
  same write (phase, startTime; PodScheduled=True for a pod created bound), so a binding is one
  MODIFIED.  Its containers start at once and have no readiness probe, so it is also
  Initialized, Ready and ContainersReady (True) then, as the kubelet's ``generateAPIPodStatus``
  reports a started pod (pkg/kubelet/status/generate.go).
- Complete (``completed``): a pod whose containers all exited is Ready and ContainersReady
  False with reason ``PodCompleted``, as ``GeneratePodReadyCondition`` reports it.
- Without ``readiness`` (a deterministic simulation, whose output shows the conditions the
  scheduler writes) no readiness condition is reported, and a Running pod counts as Ready.
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

from kubesched.api import PodCondition, PodStatus
from kubesched.clock import now as _now

from ._store import Change, Controller, Key, Store

_STARTED = ("Initialized", "Ready", "ContainersReady")
"""The conditions a started pod's kubelet reports True (a pod without readiness probes)."""
_POD_COMPLETED = "PodCompleted"  # pkg/kubelet/status/generate.go


_STARTED_CONDITIONS = {t: ("True", "") for t in _STARTED}


def _with_conditions(status: PodStatus, conds: dict[str, tuple[str, str]], now: str) -> PodStatus:
    """``status`` with each condition type of ``conds`` set to (status, reason): a new one, or
    the one it had changed (lastTransitionTime moves only when its status changes)."""
    return replace(status, conditions=_conditions(status.conditions, conds, now))


def _conditions(conditions: list[PodCondition], conds: dict[str, tuple[str, str]], now: str) -> list[PodCondition]:
    """``conditions`` with those of ``conds`` set, as :func:`_with_conditions`."""
    out: list[PodCondition] = []
    left = dict(conds)
    for c in conditions:
        want = left.pop(c.type, None)
        if want is None or (c.status, c.reason) == want:
            out.append(c)
            continue
        ltt = now if c.status != want[0] else c.last_transition_time
        out.append(PodCondition(type=c.type, status=want[0], reason=want[1], last_transition_time=ltt))
    out += [PodCondition(type=t, status=st, reason=r, last_transition_time=now) for t, (st, r) in left.items()]
    return out


def started(status: PodStatus, now: str) -> PodStatus:
    """A started pod's status: Initialized, Ready and ContainersReady True."""
    return _with_conditions(status, _STARTED_CONDITIONS, now)


def completed(status: PodStatus, phase: str, now: str) -> PodStatus:
    """The status of a pod whose containers ended (``phase`` Succeeded or Failed): not Ready."""
    gone = ("False", _POD_COMPLETED)
    return _with_conditions(replace(status, phase=phase), {"Ready": gone, "ContainersReady": gone}, now)


def is_ready(status: PodStatus) -> bool:
    """``podutil.IsPodReady``: the Ready condition is True; a Running pod whose kubelet reports
    no Ready condition (a cluster built without ``readiness``, a file's pod) counts as Ready."""
    for c in status.conditions:
        if c.type == "Ready":
            return c.status == "True"
    return status.phase == "Running"


@dataclass(order=True, slots=True)
class _Termination:
    deadline: float
    seq: int
    key: Key
    uid: str


class Kubelet(Controller):
    """Starts bound pods and ends terminating ones (see the module docstring)."""

    kinds = ("Pod",)
    admit_verbs = ("create", "bind")  # a pod created bound, a binding
    admits_unbound_pods = False  # a pod created unbound starts at its binding
    observe_verbs = ("delete",)  # a graceful deletion beginning, a pod gone

    def __init__(self, store: Store, *, timers: bool = True, readiness: bool = True) -> None:
        super().__init__(store)
        self.timers = timers
        self.readiness = readiness
        self._terminating: dict[Key, _Termination] = {}
        self._heap: list[_Termination] = []
        self._seq = 0
        self._wake: anyio.Event | None = None
        self._scope = anyio.CancelScope()

    # --- fed by the store --------------------------------------------------------------------

    def admit(self, change: Change) -> None:
        pod = change.obj
        if change.verb == "bind":
            # FakeCluster.bind gives a binding's write a status and a condition list of its own
            # (new objects, not the stored pod's): the pod starts in them, neither copied again
            now = change.stamp or self.store.clock.timestamp()
            status = pod.status
            status.phase = "Running"
            status.start_time = now
            if self.readiness:  # started: _conditions(conditions, _STARTED_CONDITIONS, now), but
                # for a pod with none of them yet (a binding's: PodScheduled only), the list
                # itself (the write's own), the three appended: no merge, no new list
                conditions = status.conditions
                for c in conditions:
                    if c.type in _STARTED_CONDITIONS:
                        status.conditions = _conditions(conditions, _STARTED_CONDITIONS, now)
                        break
                else:
                    conditions += (
                        PodCondition(type="Initialized", status="True", last_transition_time=now),
                        PodCondition(type="Ready", status="True", last_transition_time=now),
                        PodCondition(type="ContainersReady", status="True", last_transition_time=now),
                    )
        elif change.verb == "create" and pod.spec.node_name:
            now = change.stamp or self.store.clock.timestamp()
            pod.status.phase = pod.status.phase or "Running"
            pod.status.start_time = pod.status.start_time or now
            if not any(c.type == "PodScheduled" for c in pod.status.conditions):
                pod.status.conditions = [
                    *pod.status.conditions,
                    PodCondition(type="PodScheduled", status="True", last_transition_time=now),
                ]
            if self.readiness and pod.status.phase == "Running" and not any(c.type == "Ready" for c in pod.status.conditions):
                pod.status = started(pod.status, now)  # (an export's Ready condition is kept)

    def observe(self, change: Change) -> None:
        if change.type == "DELETED":
            self._terminating.pop(change.key, None)
        elif change.verb == "delete":
            meta = change.obj.metadata
            self._seq += 1
            t = _Termination(
                _now() + meta.deletion_grace_period_seconds,
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
        now = _now()
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
