"""The PodGroup scheduling cycle of Kubernetes 1.36 (upstream ``schedule_one_podgroup.go``):
with GenericWorkload on, a popped pod with ``spec.schedulingGroup`` is scheduled together with
every other unscheduled pod of its PodGroup, in one cycle.

    run(qpi)                                    ScheduleOne's branch (``genericWorkloadEnabled &&
                                                pod.Spec.SchedulingGroup != nil``)
      pod_group_info_for_pod                    the group's unscheduled pods, each taken out of
                                                the queue (PopSpecificPod), ordered by priority
                                                then first attempt
      framework_for_pod_group                   one schedulerName for all, else an Error for each
      skip_pod_group_pod_schedule               drop pods being deleted or already assumed
      default_algorithm                         per pod, on the cache's snapshot: the scheduling
        pod_algorithm                           algorithm (PostFilter = preemption: a nominated
                                                node counts as the pod's place), assume, Reserve,
                                                Permit without waiting; the group is feasible
                                                once a Permit says Success (GangScheduling: at
                                                minCount); a rejected pod is skipped, an error
                                                ends the attempt; at the end every pod it
                                                assumed is unreserved and forgotten
      submit                                    feasible: each placed pod is assumed, reserved and
                                                permitted again and its binding cycle starts (the
                                                gang's Permit releases them together); waiting on
                                                preemption: each placed pod back to the queue,
                                                nominated; unschedulable: each pod back with its
                                                own status (a placed one: Unschedulable with its
                                                Permit message; no plugin rejected it, so it backs
                                                off), nominations cleared; error: each pod fails
                                                with it
      update_pod_group_condition                PodGroupScheduled True "Scheduled" / False
                                                "Unschedulable" / False "SchedulerError", never
                                                regressing a True

With TopologyAwareWorkloadScheduling (1.36, alpha) the algorithm is
``podGroupSchedulingPlacementAlgorithm`` (:mod:`._placement_algorithm`): the placementGenerate plugins give the candidate
placements (sets of nodes), the default algorithm runs on each with the snapshot holding only the
placement's nodes (``AssumePlacement`` / ``ForgetPlacement``), and among the placements the group
fits (or fits once preemption completes) the placementScore plugins choose ("0/<n> placements are
available, first placement status: <the first placement's error>" when it fits none).  GangScheduling's
PlacementFeasible is not called: schedule_one_podgroup.go of the 1.36 line calls no such plugin
(the group's feasibility on a placement is Permit's, as without placements), and the framework of
k8s.io/kube-scheduler v0.36.0 has no PlacementFeasible (nor the PlacementCycleState every later
PlacementFeasible takes).

Source: ``pkg/scheduler/schedule_one_podgroup.go`` as it is with the v1alpha2 PodGroup lister
(the 1.36 line), ``ScheduleOne``'s branch as quoted from v1.36.2; the placement algorithm and
``findBestPlacement`` from the same file (placements in the generate plugins' order, ties among
the best totals broken by the scheduler's seeded random source).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from kubesched._errors import TransportError
from kubesched.api._objects import Pod
from kubesched.api._workload import (
    POD_GROUP_SCHEDULED,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    Condition,
)
from kubesched.cache._workloadmanager import group_key
from kubesched.queue._scheduling_queue import pop_specific
from kubesched.runtime._framework import (
    POD_GROUP_CYCLE_KEY,
    PODS_TO_ACTIVATE_KEY,
    CycleState,
    Framework,
)
from kubesched.runtime._status import Code, Diagnosis, FitError, Status
from kubesched.scheduler._binding_cycle import CLEAR_NOMINATION, PodsToActivate, ScheduleResult
from kubesched.scheduler._filterpass import CycleError, fit_status
from kubesched.scheduler._placement_algorithm import placement_algorithm

if TYPE_CHECKING:
    from kubesched._transport import Transport
    from kubesched.cache._clusterstate import ClusterState
    from kubesched.queue._scheduling_queue import QueuedPodInfo
    from kubesched.scheduler._schedule_one import ScheduleOne

log = logging.getLogger("kubesched")

ERR_POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
MSG_WAITING_FOR_PREEMPTION = "pod group is waiting for preemption to complete"


@dataclass
class PodResult:
    """``algorithmResult``: one pod's attempt inside the group's cycle."""

    qpi: QueuedPodInfo
    state: CycleState
    status: Status | None
    result: ScheduleResult = field(default_factory=ScheduleResult)
    nominating: str | None = None
    permit_status: Status | None = None
    requires_preemption: bool = False
    revert: Callable[[], Awaitable[None]] | None = None


@dataclass
class GroupResult:
    """``podGroupAlgorithmResult``: None status is Success."""

    pod_results: list[PodResult]
    status: Status | None
    waiting_on_preemption: bool = False
    nominations: dict[str, str] | None = None
    """Workload-aware preemption's nominations (member uid -> node), when it preempted."""


def _unschedulable(*reasons: str) -> Status:
    """An Unschedulable status with ``errPodGroupUnschedulable`` as its error."""
    st = Status(Code.UNSCHEDULABLE, *(r for r in reasons if r))
    st.error = RuntimeError(ERR_POD_GROUP_UNSCHEDULABLE)
    return st


class PodGroupCycle:
    """The PodGroup scheduling cycle of a Scheduler whose GenericWorkload gate is on (1.36)."""

    def __init__(self, scheduling: ScheduleOne, cluster: ClusterState, transport: Transport) -> None:
        self.scheduling = scheduling
        self.cluster = cluster
        self.transport = transport
        self.queue = scheduling.queue
        self.binding = scheduling.binding
        # WorkloadAwarePreemption (1.36, alpha): the group preempts as one; the per-pod
        # PostFilter is then not run inside the cycle (see the module)
        self.workload_aware = bool(scheduling.config.feature_gates.get("WorkloadAwarePreemption", False))
        # TopologyAwareWorkloadScheduling (1.36, alpha): the placement algorithm
        self.topology_aware = bool(scheduling.config.feature_gates.get("TopologyAwareWorkloadScheduling", False))

    # --- entry ---------------------------------------------------------------------------------
    async def run(self, qpi: QueuedPodInfo) -> None:
        """``podGroupInfoForPod`` then ``scheduleOnePodGroup``."""
        qpis = self.pod_group_info_for_pod(qpi)
        start = anyio.current_time()
        sched = self.scheduling
        fw, err = self.framework_for_pod_group(qpis)
        if fw is None:
            for q in qpis:
                pod_fw = sched.profiles.get(q.pod.spec.scheduler_name)
                if pod_fw is None:
                    self.queue.done(q.uid)
                    continue
                await self.binding.handle_scheduling_failure(pod_fw, q, Status(Code.ERROR, err), CLEAR_NOMINATION, start)
            return
        kept = []
        for q in qpis:  # skipPodGroupPodSchedule
            if q.pod.metadata.deletion_timestamp or sched.cache.is_assumed(q.uid):
                self.queue.done(q.uid)
            else:
                kept.append(q)
        if not kept:
            return
        sched.last_attempt = start
        counts = sched.metrics.pod_attempts
        if counts is not None:
            for q in kept:
                counts[q.uid] = counts.get(q.uid, 0) + 1
        result = await self.algorithm(fw, kept, post_filters=not self.workload_aware)
        if self.workload_aware and result.status is not None and result.status.code == Code.UNSCHEDULABLE:
            # podGroupCycle: workload-aware preemption for a group the algorithm could not place
            st, nominations = await self.workload_aware_preemption(fw, kept)
            if st is None:
                result.status = _unschedulable(MSG_WAITING_FOR_PREEMPTION)
                result.waiting_on_preemption = True
                result.nominations = nominations
            elif st.code == Code.ERROR:
                result.status = st
            else:
                result.status = _unschedulable(*(m for m in (result.status.message, st.message) if m))
        await self.submit(fw, kept, result, start)

    def pod_group_info_for_pod(self, qpi: QueuedPodInfo) -> list[QueuedPodInfo]:
        """The popped pod and every other unscheduled pod of its group the queue holds, in
        priority order, then by first attempt (a stable sort: ties keep the group's order)."""
        key = group_key(qpi.pod)
        out = [qpi]
        if key is not None:
            for pod in self.cluster.workload_manager.state(key).unscheduled_pods():
                if pod.metadata.uid == qpi.uid:
                    continue
                other = pop_specific(self.queue, pod.metadata.uid)
                if other is not None:
                    out.append(other)
        out.sort(key=lambda q: (-(q.pod.spec.priority or 0), q.initial_attempt_timestamp or 0.0))
        return out

    def framework_for_pod_group(self, qpis: list[QueuedPodInfo]) -> tuple[Framework | None, str]:
        name = ""
        for q in qpis:
            sn = q.pod.spec.scheduler_name
            if not name:
                name = sn
            elif sn != name:
                return None, (
                    "all pods in a single pod group should have the same .spec.schedulerName set, "
                    f'got: "{sn}" and "{name}"'
                )
        fw = self.scheduling.profiles.get(name)
        if fw is None:
            return None, f'profile not found for scheduler name "{name}"'
        return fw, ""

    # --- the algorithm --------------------------------------------------------------------------
    async def algorithm(self, fw: Framework, qpis: list[QueuedPodInfo], *, post_filters: bool = True) -> GroupResult:
        """``podGroupSchedulingAlgorithm``: the placement algorithm with
        TopologyAwareWorkloadScheduling, else the default one."""
        if not self.topology_aware:
            return await self.default_algorithm(fw, qpis, post_filters=post_filters)
        got = await placement_algorithm(
            self.scheduling, fw, qpis, lambda: self.default_algorithm(fw, qpis, post_filters=post_filters)
        )
        return GroupResult([], got) if isinstance(got, Status) else got

    async def default_algorithm(
        self, fw: Framework, qpis: list[QueuedPodInfo], *, post_filters: bool = True
    ) -> GroupResult:
        """``podGroupSchedulingDefaultAlgorithm`` (``post_filters`` False: runWithoutPostFilters)."""
        result = GroupResult([], _unschedulable())
        requires_preemption = False
        reverts: list[Callable[[], Awaitable[None]]] = []
        try:
            for q in qpis:
                pr = await self.pod_algorithm(fw, q, post_filters=post_filters)
                result.pod_results.append(pr)
                if not (pr.status is None or pr.status.is_success()) and not pr.requires_preemption:
                    if pr.status.is_rejected():
                        continue  # the group may still be feasible through Permit
                    result.status = Status(
                        Code.ERROR, f"failed to schedule other pod from a pod group: {pr.status.message}"
                    )
                    result.waiting_on_preemption = False
                    break
                assert pr.revert is not None
                reverts.append(pr.revert)
                requires_preemption = requires_preemption or pr.requires_preemption
                if pr.permit_status is None or pr.permit_status.is_success():
                    if requires_preemption:
                        result.status = _unschedulable(MSG_WAITING_FOR_PREEMPTION)
                        result.waiting_on_preemption = True
                    else:
                        result.status = None
        finally:
            for revert in reversed(reverts):  # the deferred unreserve-and-forget, last first
                await revert()
        return result

    async def pod_algorithm(self, fw: Framework, qpi: QueuedPodInfo, *, post_filters: bool = True) -> PodResult:
        """``podGroupPodSchedulingAlgorithm``: find a node (or a nominated one), assume, Reserve,
        Permit (a Wait is not a waiting pod here)."""
        sched = self.scheduling
        state = CycleState(record_plugin_metrics=sched.metrics.sample_plugins())
        state.pod_info = qpi.pod_info
        state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
        if post_filters and self.binding.recorder is not None:  # --explain: this attempt's results
            state.recording = self.binding.recorder.begin()
        pod = qpi.pod
        sg = pod.spec.scheduling_group
        state.write(POD_GROUP_CYCLE_KEY, f"{pod.metadata.namespace}/{sg.pod_group_name if sg is not None else ''}")
        requires_preemption = False
        nominating: str | None = None
        try:
            result = await sched.schedule_pod(fw, state, qpi.pod_info)
            status: Status | None = None
        except FitError as fe:
            status = fit_status(fe)
            if post_filters and fw.has_post_filter_plugins():
                from kubesched.scheduler._schedule_one import _FullStatusMap

                statuses = _FullStatusMap(fe.diagnosis, sched.snapshot.names, sched.snapshot.index)
                pf_result, pf_status = await fw.run_post_filter_plugins(state, pod, statuses)
                fe.diagnosis.post_filter_msg = pf_status.message
                status = fit_status(fe)
                nominating = pf_result.nominated_node_name if pf_result is not None else None
            if not nominating:
                return PodResult(qpi, state, status, nominating=nominating)
            result = ScheduleResult(nominating)
            requires_preemption = True
        except CycleError as ce:
            return PodResult(qpi, state, ce.status, nominating=CLEAR_NOMINATION)
        host = result.suggested_host
        assumed_pi = qpi.pod_info.with_pod(_on_node(pod, host))
        try:
            sched.cache.assume_pod(assumed_pi, host)
        except Exception as e:  # noqa: BLE001 - the cache's refusal is this pod's error
            return PodResult(qpi, state, Status.as_error(e), nominating=CLEAR_NOMINATION)
        assumed = assumed_pi.pod
        st = fw.run_reserve_plugins_reserve(state, assumed, host)
        if st is not None and not st.is_success():
            await fw.run_reserve_plugins_unreserve(state, assumed, host)
            sched.cache.forget_pod(assumed_pi.uid)
            return PodResult(qpi, state, st, nominating=CLEAR_NOMINATION)

        async def revert() -> None:
            await fw.run_reserve_plugins_unreserve(state, assumed, host)
            sched.cache.forget_pod(assumed_pi.uid)

        permit, timeouts = fw.binding.run_permit_plugins(state, assumed, host)
        if permit is None and timeouts:  # RunPermitPlugins' text (the pod does not wait here)
            permit = Status(Code.WAIT, f'one or more plugins asked to wait and no plugin rejected pod "{pod.metadata.name}"')
        if permit is not None and not permit.is_success() and not permit.is_wait():
            await revert()
            if permit.is_rejected():
                diagnosis = Diagnosis({host: permit}, {permit.plugin} if permit.plugin else set())
                permit = fit_status(FitError(qpi.pod_info.key, 1, diagnosis))
            return PodResult(qpi, state, permit, nominating=CLEAR_NOMINATION)
        return PodResult(
            qpi, state, status, result=result, nominating=nominating, permit_status=permit,
            requires_preemption=requires_preemption, revert=revert,
        )  # fmt: skip

    # --- workload-aware preemption ------------------------------------------------------------------
    async def workload_aware_preemption(self, fw: Framework, qpis: list[QueuedPodInfo]) -> tuple[Status | None, dict[str, str]]:
        """``runWorkloadAwarePreemption`` and ``PodGroupEvaluator.Preempt``
        (:mod:`kubesched.preemption.podgroup`): None and the nominations when it preempted."""
        from kubesched.preemption import podgroup as wap

        cluster = self.cluster
        pod0 = qpis[0].pod
        pg = wap.pod_group_of(pod0, cluster)
        if pg is None:
            sg = pod0.spec.scheduling_group
            name = sg.pod_group_name if sg is not None else ""
            return Status(Code.ERROR, f'failed to get pod group object: podgroup.scheduling.k8s.io "{name}" not found'), {}
        if not any(e.name == "DefaultPreemption" for e in fw.points.get("postFilter", [])):
            return Status(Code.UNSCHEDULABLE, wap.MSG_NO_PLUGIN), {}
        if pg.spec.scheduling_constraints is not None and pg.spec.scheduling_constraints.topology:
            return Status(Code.UNSCHEDULABLE, wap.MSG_CONSTRAINTS), {}
        prio = wap.pod_group_priority(pg, cluster)
        if pod0.spec.preemption_policy == "Never":
            return Status(Code.UNSCHEDULABLE, wap.MSG_NEVER), {}
        sched = self.scheduling
        cache = sched.cache
        for q in qpis:
            nominated = q.pod.status.nominated_node_name
            ni = sched.snapshot.get(nominated) if nominated else None
            if ni is not None and any(
                wap.effective_priority(p.pod, cluster) < prio and wap.pod_terminating_by_preemption(p.pod) for p in ni.pods
            ):
                return Status(Code.UNSCHEDULABLE, wap.MSG_TERMINATING), {}
        members = {q.uid for q in qpis}
        bound = [
            p for uid, p in cluster.pods.items()
            if p.spec.node_name and uid not in members and uid in cache.pod_states and not cache.is_assumed(uid)
        ]  # fmt: skip
        key = (pg.metadata.namespace, pg.metadata.name)
        units = [v for v in wap.all_victims(cluster, bound, key) if v.priority < prio]
        if not units:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, wap.MSG_NO_VICTIMS), {}
        removed = [p for v in units for p in v.pods]
        for p in removed:
            cache.remove_pod(p.metadata.uid)
        try:
            gr = await self.algorithm(fw, qpis, post_filters=False)
            if gr.status is not None:
                return gr.status, {}
            placed = [pr for pr in gr.pod_results if pr.status is None or pr.status.is_success()]
            ordered = wap.sort_victims(units)
            violating, others = wap.split_by_pdb_violation(ordered, cluster.list_pdbs())
            to_preempt: list[wap.Victim] = []
            for v in [*violating, *others]:  # reprieve: PDB violators first, most important first
                for p in v.pods:
                    cache.add_pod(p)
                if not await self._members_fit(fw, placed):
                    for p in v.pods:
                        cache.remove_pod(p.metadata.uid)
                    to_preempt.append(v)
            outcome = wap.PreemptionOutcome(
                wap.sort_victims(to_preempt), {pr.qpi.uid: pr.result.suggested_host for pr in placed}
            )
        finally:
            for p in removed:  # the snapshot as it was (the victims go through the informer)
                current = cluster.pods.get(p.metadata.uid)
                if current is not None and current.spec.node_name and p.metadata.uid not in cache.pod_states:
                    cache.add_pod(current)
            sched.snapshot.update(cache)
        await wap.actuate(
            outcome, pg, pod0.spec.scheduler_name, client=self.transport, get_waiting_pod=fw.get_waiting_pod,
            record_event=self.binding.record_event,
        )  # fmt: skip
        sched.metrics.preempted(sum(len(v.pods) for v in outcome.victims))
        return None, outcome.nominations

    async def _members_fit(self, fw: Framework, placed: list[PodResult]) -> bool:
        """``reprieveVictim``'s check: every placed member passes Filter (nominated pods
        counted) on its node, the members before it assumed and reserved; undone after."""
        sched = self.scheduling
        undo: list[Callable[[], Awaitable[None]]] = []
        try:
            for pr in placed:
                sched.snapshot.update(sched.cache)
                host = pr.result.suggested_host
                ni = sched.snapshot.get(host)
                if ni is None:
                    return False
                st = fw.run_filter_plugins_with_nominated_pods(pr.state, pr.qpi.pod, ni)
                if st is not None and not st.is_success():
                    return False
                assumed_pi = pr.qpi.pod_info.with_pod(_on_node(pr.qpi.pod, host))
                sched.cache.assume_pod(assumed_pi, host)
                fw.run_reserve_plugins_reserve(pr.state, assumed_pi.pod, host)

                async def revert(pi: Any = assumed_pi, h: str = host, state: CycleState = pr.state) -> None:
                    await fw.run_reserve_plugins_unreserve(state, pi.pod, h)
                    sched.cache.forget_pod(pi.uid)

                undo.append(revert)
            return True
        finally:
            for fn in reversed(undo):
                await fn()
            sched.snapshot.update(sched.cache)

    # --- the outcome -----------------------------------------------------------------------------
    async def submit(self, fw: Framework, qpis: list[QueuedPodInfo], gr: GroupResult, start: float) -> None:
        """``submitPodGroupAlgorithmResult``."""
        binding = self.binding

        async def failed(fw: Framework, q: QueuedPodInfo, st: Status, nominating: str | None, start: float) -> None:
            await binding.handle_scheduling_failure(fw, q, st, nominating, start)
            rec = by_uid[q.uid].state.recording if q.uid in by_uid else None
            if rec is not None:
                binding.emit_results(q.pod, rec, bound=False)

        by_uid = {pr.qpi.uid: pr for pr in gr.pod_results}
        group_error = gr.status is not None and gr.status.code == Code.ERROR
        for i, q in enumerate(qpis):
            pr = gr.pod_results[i] if i < len(gr.pod_results) else PodResult(q, CycleState(), gr.status)
            if gr.nominations is not None and gr.status is not None:
                # waiting on workload-aware preemption: every member back, each placed one nominated
                await failed(fw, q, gr.status, gr.nominations.get(q.uid, CLEAR_NOMINATION), start)
                continue
            if group_error:
                assert gr.status is not None
                own = pr.status is not None and pr.status.code == Code.ERROR
                await failed(fw, q, pr.status if own and pr.status is not None else gr.status, CLEAR_NOMINATION, start)
                continue
            if pr.status is None or pr.status.is_success():
                host = pr.result.suggested_host
                if gr.status is None:
                    pr.state.delete(POD_GROUP_CYCLE_KEY)  # SetPodGroupSchedulingCycle(nil)
                    assumed_pi, st, _ = await self.scheduling.prepare_for_binding_cycle(fw, pr.state, q, pr.result)
                    if st is not None and not st.is_success():
                        await failed(fw, q, st, CLEAR_NOMINATION, start)
                        continue
                    binding.start(fw, pr.state, q, assumed_pi, pr.result, start)
                elif gr.waiting_on_preemption:
                    await failed(fw, q, gr.status, host, start)
                else:
                    msg = pr.permit_status.message if pr.permit_status is not None else ""
                    await failed(fw, q, _unschedulable(msg), CLEAR_NOMINATION, start)
            elif pr.requires_preemption and not gr.waiting_on_preemption:
                msg = pr.permit_status.message if pr.permit_status is not None else ""
                await failed(fw, q, _unschedulable(msg), CLEAR_NOMINATION, start)
            else:
                await failed(fw, q, pr.status, pr.nominating, start)
        if gr.status is None:
            condition = Condition(type=POD_GROUP_SCHEDULED, status="True", reason="Scheduled")
        elif gr.status.is_rejected():
            condition = Condition(type=POD_GROUP_SCHEDULED, status="False", reason=REASON_UNSCHEDULABLE,
                                  message=gr.status.message)  # fmt: skip
        else:
            condition = Condition(type=POD_GROUP_SCHEDULED, status="False", reason=REASON_SCHEDULER_ERROR,
                                  message=gr.status.message)  # fmt: skip
        await self.update_pod_group_condition(qpis[0], condition)

    async def update_pod_group_condition(self, qpi: QueuedPodInfo, condition: Condition) -> None:
        """``updatePodGroupCondition``: never regress a True PodGroupScheduled."""
        pod = qpi.pod
        sg = pod.spec.scheduling_group
        if sg is None or sg.pod_group_name is None:
            return
        ns, name = pod.metadata.namespace, sg.pod_group_name
        pg = self.cluster.get_scheduling_pod_group(ns, name)
        if pg is None:
            log.error("Failed to get PodGroup for status update podGroup=%s/%s", ns, name)
            return
        existing = next((c for c in pg.status.conditions if c.type == condition.type), None)
        if existing is not None and existing.status == "True" and condition.status != "True":
            return
        condition.observed_generation = pg.metadata.generation
        if existing is not None and (existing.status, existing.reason, existing.message, existing.observed_generation) == (
            condition.status, condition.reason, condition.message, condition.observed_generation,
        ):  # fmt: skip
            return  # SetStatusCondition changed nothing: no patch
        try:
            await self.transport.patch_pod_group_status(ns, name, condition)
        except (TransportError, NotImplementedError) as e:
            log.error("Failed to update PodGroup status podGroup=%s/%s err=%s", ns, name, e)


def _on_node(pod: Pod, host: str) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=host))


__all__ = ["ERR_POD_GROUP_UNSCHEDULABLE", "MSG_WAITING_FOR_PREEMPTION", "GroupResult", "PodGroupCycle", "PodResult"]
