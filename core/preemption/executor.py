"""Preparing the chosen candidate: its victims deleted, sync or async (upstream ``executor.go``).

Preempting one victim (:meth:`Executor.preempt_pod`): a victim waiting on Permit is rejected
(from Kubernetes 1.36 preempted: it goes to the backoff queue, not to the unschedulable pods);
any other gets a DisruptionTarget condition and is deleted (NotFound counts as done); then a
``Preempted`` event is recorded on it.

Sync (``prepare_candidate``), within the scheduling cycle::

    delete every victim not already terminating ─► clear the nominations of lower-priority
    pods nominated to the node ─► the preemptor is nominated

Async (``prepare_candidate_async``, gate ``SchedulerAsyncPreemption``): the preemptor enters
``preempting`` and the work goes to a task in the scheduler's task group::

    clear lower-priority nominations ─► delete N-1 victims ─► record the last victim as
    pending ─► delete it ─► leave ``preempting`` (on any failure: activate the preemptor)

While it is in ``preempting`` the preemptor is held at PreEnqueue
(:meth:`~Executor.is_pod_running_preemption`) until its last victim is gone or terminating.  In a simulation (a deterministic driver), or with
a transport whose writes complete within the call, a preemption's victims are preempted one
after another in victim order, so their API writes and ``Preempted`` events come out in the
same order on every event loop; a live scheduler preempts them concurrently, as upstream.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio

from kubesched._errors import NotFoundError
from kubesched.api._objects import PodCondition
from kubesched.runtime._status import Code, Status

from .types import DISRUPTION_TARGET, REASON_PREEMPTION_BY_SCHEDULER
from .util import pod_priority

if TYPE_CHECKING:
    from kubesched.api._objects import Pod
    from kubesched.runtime._handle import Handle

    from .types import Candidate

log = logging.getLogger("kubesched.preemption")


def _condition_changes(pod: Pod, cond: PodCondition) -> bool:
    """``UpdatePodCondition`` would change the status (a new condition or a different one)."""
    for c in pod.status.conditions:
        if c.type == cond.type:
            return (c.status, c.reason, c.message) != (cond.status, cond.reason, cond.message)
    return True


class Executor:
    """``preemption.Executor``: deletes a candidate's victims, sync or async, and keeps the
    ``preempting`` set; the Evaluator holds one (its ``executor``), built from the same
    handle.  ``handle`` is the plugin's handle."""

    def __init__(self, plugin_name: str, handle: Handle) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        # Kubernetes 1.36 (kubernetes#135719): a victim waiting at Permit is preempted into the
        # backoff queue (``waitingPod.Preempt``); before, it is rejected (``Reject``: unschedulable)
        self.preempt_waiting_to_backoff = handle.emulated_version >= (1, 36)
        # PodDisruptionConditions (beta on to 1.30, GA locked 1.31-1.32, removed from 1.33): off
        # (settable in 1.30 only), a victim is deleted without the DisruptionTarget condition
        # (v1.30 preemption.go prepareCandidate: the condition only with the gate on)
        self.disruption_conditions = bool(handle.feature_gates.get("PodDisruptionConditions", True))
        # uids of preemptors whose victims are being deleted in the background
        self.preempting: set[str] = set()
        # preemptor uid -> (namespace, name) of the last victim, while it is being deleted
        self.last_victims_pending_preemption: dict[str, tuple[str, str]] = {}

    def _observe_victims(self, c: Candidate) -> None:
        self.handle.metrics.preempted(len(c.victims))

    async def preempt_pod(self, c: Candidate, preemptor: Pod, victim: Pod) -> None:
        """``PreemptPod``: reject a waiting victim, else DisruptionTarget + delete; then the event.

        Raises the transport's error (NotFound counts as done).
        """
        fh = self.handle
        wp = fh.get_waiting_pod(victim.metadata.uid)
        if wp is not None and not self.preempt_waiting_to_backoff:
            wp.reject(self.plugin_name, "preempted")
        elif wp is None or not wp.preempt(self.plugin_name, "preempted"):
            client = fh.client
            condition = PodCondition(
                type=DISRUPTION_TARGET,
                status="True",
                reason=REASON_PREEMPTION_BY_SCHEDULER,
                message=f"{preemptor.spec.scheduler_name}: preempting to accommodate a higher priority pod",
            )
            if self.disruption_conditions and _condition_changes(victim, condition):
                try:
                    await client.patch_pod_status(
                        victim.metadata.namespace, victim.metadata.name, condition=condition
                    )
                except NotFoundError:
                    return
            try:
                await client.delete_pod(
                    victim.metadata.namespace, victim.metadata.name, uid=victim.metadata.uid
                )
            except NotFoundError:
                return
        await fh.record_event(
            victim,
            "Normal",
            "Preempted",
            "Preempting",
            f"Preempted by pod {preemptor.metadata.uid} on node {c.name}",
        )

    async def _preempt_all(
        self, c: Candidate, preemptor: Pod, victims: Sequence[Pod]
    ) -> BaseException | None:
        """Preempt ``victims``; the first error stops the rest and is returned.

        Upstream deletes them concurrently.  A live scheduler does too; a deterministic one (a
        simulation) preempts them one after another in victim order, which is what its driver's
        turns would make of concurrent tasks, so that the victims' API writes and ``Preempted``
        events come out in the same order on every event loop.  So does one whose transport
        completes every write within the call (the fake cluster without injected delays):
        there, tasks would only add their own cost.
        """
        if self.handle.deterministic or self.handle.instant_writes():
            for v in victims:
                try:
                    await self.preempt_pod(c, preemptor, v)
                except Exception as err:  # transport failures and plugin bugs alike
                    return err
            return None
        errors: list[BaseException] = []

        async with anyio.create_task_group() as tg:

            async def one(v: Pod) -> None:
                try:
                    await self.preempt_pod(c, preemptor, v)
                except Exception as err:  # transport failures and plugin bugs alike
                    if not errors:
                        errors.append(err)
                    tg.cancel_scope.cancel()

            for v in victims:
                tg.start_soon(one, v)
        return errors[0] if errors else None

    def lower_priority_nominated_pods(self, pod: Pod, node_name: str) -> list[Pod]:
        """``getLowerPriorityNominatedPods``."""
        prio = pod_priority(pod)
        return [pi.pod for pi in self.handle.nominator.for_node(node_name) if pi.priority < prio]

    async def clear_nominated_node_name(self, pods: Sequence[Pod]) -> list[BaseException]:
        """``clearNominatedNodeName``: drop each pod's nomination (nominator and status)."""
        errs: list[BaseException] = []
        nominator = self.handle.nominator
        for p in pods:
            nominator.delete(p.metadata.uid)
            if not p.status.nominated_node_name:
                continue
            try:
                await self.handle.client.patch_pod_status(
                    p.metadata.namespace, p.metadata.name, nominated_node_name=""
                )
            except Exception as err:
                errs.append(err)
        return errs

    async def prepare_candidate(self, c: Candidate, pod: Pod) -> Status | None:
        """``prepareCandidate``: delete the victims now, then clear lower nominations."""
        victims = [v for v in c.victims if not v.metadata.deletion_timestamp]
        err = await self._preempt_all(c, pod, victims)
        if err is not None:
            return Status(Code.ERROR, str(err), error=err)
        self._observe_victims(c)
        errs = await self.clear_nominated_node_name(self.lower_priority_nominated_pods(pod, c.name))
        for e in errs:
            log.warning("cannot clear 'NominatedNodeName' field: %s", e)
        return None

    def prepare_candidate_async(self, c: Candidate, pod: Pod) -> None:
        """``prepareCandidateAsync`` (upstream ``framework/preemption/preemption.go``, the ``SchedulerAsyncPreemption`` gate): mark the pod ``preempting`` and work in the
        background: clear lower-priority nominations to the node first, then, if some victim
        is not already terminating, delete N-1 victims, leave ``preempting``, delete the last."""
        self._observe_victims(c)
        victims = [v for v in c.victims if not v.metadata.deletion_timestamp]
        self.preempting.add(pod.metadata.uid)
        self.handle.spawn(self._preempt_in_background, c, pod, victims)

    async def _preempt_in_background(self, c: Candidate, pod: Pod, victims: list[Pod]) -> None:
        uid = pod.metadata.uid
        failed = False
        try:
            errs = await self.clear_nominated_node_name(
                self.lower_priority_nominated_pods(pod, c.name)
            )
            if errs:
                log.warning(
                    "cannot clear 'NominatedNodeName' field from lower priority pods on node %s: %s",
                    c.name,
                    errs[0],
                )
                failed = True
            if not victims:  # every victim is terminating already: nothing to delete
                return
            preempt_last = True
            if len(victims) > 1:
                err = await self._preempt_all(c, pod, victims[:-1])
                if err is not None:
                    log.warning("error occurred during async preemption: %s", err)
                    failed = True
                    preempt_last = False
            if preempt_last:
                last = victims[-1]
                self.last_victims_pending_preemption[uid] = (
                    last.metadata.namespace,
                    last.metadata.name,
                )
                try:
                    await self.preempt_pod(c, pod, last)
                except Exception as err:
                    log.warning(
                        "error occurred during async preemption of the last victim: %s", err
                    )
                    failed = True
        finally:
            self.preempting.discard(uid)
            self.last_victims_pending_preemption.pop(uid, None)
            if victims:  # v1.35.4: a goroutine (counted as it ends) only with victims to delete
                self.handle.metrics.preemption_goroutine()
            if failed:
                # the pod may be stuck in unschedulablePods: move it to activeQ
                self.handle.activate([pod])

    def is_pod_running_preemption(self, uid: str) -> bool:
        """``IsPodRunningPreemption``: in ``preempting`` and its last victim not yet going."""
        if uid not in self.preempting:
            return False
        pending = self.last_victims_pending_preemption.get(uid)
        if pending is None:
            return True
        victim = self.handle.cluster.get_pod(*pending)
        return not (victim is None or victim.metadata.deletion_timestamp)


__all__ = ["Executor"]
