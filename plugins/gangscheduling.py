"""GangScheduling: upstream's all-or-nothing plugin for pods of a Workload API gang
(``pkg/scheduler/framework/plugins/gangscheduling``), per emulated version.

A pod belongs to a gang through its reference, and the gang's policy comes from the object it
names (``basic``: the plugin lets the pod through everywhere)::

    1.35  pod.spec.workloadRef {name, podGroup, podGroupReplicaKey}
          -> Workload (scheduling.k8s.io/v1alpha1) spec.podGroups[podGroup].policy.gang.minCount;
          each replica key is a gang of its own
    1.36  pod.spec.schedulingGroup {podGroupName}
          -> PodGroup (scheduling.k8s.io/v1alpha2) spec.schedulingPolicy.gang.minCount

Hook by hook (the texts are upstream's of the release)::

    PreEnqueue  no Workload / PodGroup yet: UnschedulableAndUnresolvable
                "waiting for pods's workload "<w>" to appear in scheduling queue" (1.35) /
                "waiting for pods's pod group "<pg>" to appear in scheduling queue" (1.36);
                1.35 a pod group the Workload lacks: "pod group "<g>" doesn't exist for a workload
                "<w>""; fewer pods of the gang known than minCount:
                "waiting for minCount pods from a gang to appear in scheduling queue"
    Reserve     the pod is assumed in its group (the workload manager's AssumePod)
    Unreserve   ForgetPod
    Permit      assumed + assigned pods fewer than minCount: activate the group's unscheduled
                pods, Wait (up to the group's scheduling deadline, 5 minutes from the first
                Permit) "waiting for minCount pods from a gang to be waiting on permit" (1.35) /
                "... to be scheduled" (1.36); otherwise allow every assumed member that waits
    PlacementFeasible scheduled + remaining < minCount: Unschedulable "minCount (<n>) cannot be
                satisfied: <s> scheduled, <r> remaining"; scheduled < minCount: Wait "minCount
                (<n>) is not yet satisfied: ..."; else Success.  Read from the plugin as stored
                after v1.36 (with v1alpha3 listers); the 1.36 PodGroup cycle read
                (schedule_one_podgroup.go with the v1alpha2 lister) decides by Permit and does not
                call it, so kubesched's cycle does not either: :meth:`placement_feasible` is the
                plugin's answer, for the cycle that will

In 1.36 upstream counts a pod as assumed from the scheduler cache's PodGroup state (the plugin
is no Reserve plugin there); kubesched's plugin keeps Reserve/Unreserve in both versions to keep
that count, so a 1.36 attempt's recorded results show a GangScheduling Reserve.

Departure (1.36, the PodGroup cycle): inside that cycle Permit does not activate the group's
unscheduled pods — they are all in the cycle, in flight, and upstream's Activate of an in-flight
pod registers a ForceActivate that sends it straight back (with SchedulerPopFromBackoffQ even
out of backoff), so an infeasible gang would be retried without pause; kubesched lets it back
off instead.

EnqueueExtensions: a Pod add that matches the pod's group (1.35: the same namespace and the
same workloadRef; 1.36: UnscheduledPod and AssignedPod adds of the same namespace and
podGroupName) and a Workload add (1.35) / PodGroup add (1.36) it names; the references and the
objects' policies are immutable, so no update event is registered.

Sources: gangscheduling.go as of v1.35 (workloadRef, v1alpha1 Workload lister, Reserve/Unreserve
through the WorkloadManager's podGroupInfo) and v1.36 (schedulingGroup, v1alpha2 PodGroup lister,
PodGroupStates, permitTimeoutDuration 5 minutes, PlacementFeasible); the 1.36 Permit text is the
one quoted from v1.36.3 (no v1.36.0 file was read).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.framework import (
    POD_GROUP_CYCLE_KEY,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    ConfigError,
    EventResource,
    QueueingHint,
    Status,
    hookimpl,
)

if TYPE_CHECKING:
    from kubesched.framework import CycleState, Handle, Pod

NAME = "GangScheduling"

MSG_WAITING_FOR_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
MSG_PERMIT_WAIT_1_35 = "waiting for minCount pods from a gang to be waiting on permit"
MSG_PERMIT_WAIT_1_36 = "waiting for minCount pods from a gang to be scheduled"

GroupKey = tuple[str, str, str, str]


def group_key(pod: Pod) -> GroupKey | None:
    """The workload manager's key of ``pod``'s group (see kubesched.cache's workload manager)."""
    ref = pod.spec.workload_ref
    if ref is not None:
        return (pod.metadata.namespace, ref.name, ref.pod_group, ref.pod_group_replica_key)
    sg = pod.spec.scheduling_group
    if sg is not None and sg.pod_group_name:
        return (pod.metadata.namespace, "", sg.pod_group_name, "")
    return None


@dataclass(frozen=True)
class PlacementProgress:
    """``framework.PlacementProgress``: how far a PodGroup scheduling cycle has got."""

    scheduled: int
    remaining: int


class GangScheduling:
    """PreEnqueue, Reserve, Unreserve, Permit and PlacementFeasible (see the module)."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle: Handle = handle
        # 1.35 reads pods' workloadRef and Workloads; 1.36 schedulingGroup and PodGroups
        self.v1_36 = handle.emulated_version >= (1, 36)
        self.permit_wait = MSG_PERMIT_WAIT_1_36 if self.v1_36 else MSG_PERMIT_WAIT_1_35

    # --- the group's policy --------------------------------------------------------------------
    def gang_min_count(self, pod: Pod) -> int | Status | None:
        """The gang's minCount; None when the pod is in no gang (no reference, a basic policy);
        a Status when its Workload / PodGroup (or the group in it) is missing."""
        ns = pod.metadata.namespace
        cluster = self.handle.cluster
        if self.v1_36:
            sg = pod.spec.scheduling_group
            if sg is None or sg.pod_group_name is None:
                return None
            pg = cluster.get_scheduling_pod_group(ns, sg.pod_group_name)
            if pg is None:
                return Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f'waiting for pods\'s pod group "{sg.pod_group_name}" to appear in scheduling queue',
                )
            gang = pg.spec.scheduling_policy.gang
            return None if gang is None else gang.min_count
        ref = pod.spec.workload_ref
        if ref is None:
            return None
        wl = cluster.get_workload(ns, ref.name)
        if wl is None:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f'waiting for pods\'s workload "{ref.name}" to appear in scheduling queue',
            )
        policy = wl.pod_group_policy(ref.pod_group)
        if policy is None:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{wl.metadata.name}"',
            )
        return None if policy.gang is None else policy.gang.min_count

    # --- EnqueueExtensions -----------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        if self.v1_36:
            return [
                ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), self.is_schedulable_after_pod_added),
                ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), self.is_schedulable_after_pod_added),
                ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), self.is_schedulable_after_pod_group_added),
            ]
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD), self.is_schedulable_after_pod_added),
            ClusterEventWithHint(ClusterEvent(EventResource.WORKLOAD, ActionType.ADD), self.is_schedulable_after_workload_added),
        ]

    def is_schedulable_after_pod_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A pod of the same group (namespace and reference) may complete the gang."""
        if not _is_pod(new):
            return QueueingHint.QUEUE
        if self.v1_36:
            a, b = pod.spec.scheduling_group, new.spec.scheduling_group
            same = a is not None and b is not None and a.pod_group_name == b.pod_group_name
        else:
            a1, b1 = pod.spec.workload_ref, new.spec.workload_ref
            same = a1 is not None and a1 == b1
        if same and pod.metadata.namespace == new.metadata.namespace:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_workload_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        ref = pod.spec.workload_ref
        md = getattr(new, "metadata", None)
        if md is None or getattr(new, "kind", "Workload") != "Workload":
            return QueueingHint.QUEUE
        if ref is None or pod.metadata.namespace != md.namespace or ref.name != md.name:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_pod_group_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        sg = pod.spec.scheduling_group
        md = getattr(new, "metadata", None)
        if md is None:
            return QueueingHint.QUEUE
        if getattr(new, "api_version", "") != "scheduling.k8s.io/v1alpha2":
            return QueueingHint.QUEUE_SKIP  # scheduler-plugins' PodGroup: not ours
        if sg is None or pod.metadata.namespace != md.namespace or sg.pod_group_name != md.name:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    # --- PreEnqueue --------------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_enqueue(self, pod: Pod) -> Status | None:
        if pod.spec.workload_ref is None and pod.spec.scheduling_group is None:
            return None
        min_count = self.gang_min_count(pod)
        if min_count is None or isinstance(min_count, Status):
            return min_count
        key = group_key(pod)
        assert key is not None
        if self.handle.cluster.workload_manager.state(key).all_pods_count() < min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_WAITING_FOR_MIN_COUNT)
        return None

    # --- Reserve / Unreserve -----------------------------------------------------------------------
    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        key = group_key(pod)
        if key is not None:
            st = self.handle.cluster.workload_manager.groups.get(key)
            if st is not None:
                st.assume(pod.metadata.uid)
        return None

    @hookimpl
    def kubesched_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        key = group_key(pod)
        if key is not None:
            st = self.handle.cluster.workload_manager.groups.get(key)
            if st is not None:
                st.forget(pod.metadata.uid)

    # --- Permit ------------------------------------------------------------------------------------
    @hookimpl
    def kubesched_permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float] | Status | None:
        if pod.spec.workload_ref is None and pod.spec.scheduling_group is None:
            return None
        min_count = self.gang_min_count(pod)
        if isinstance(min_count, Status):
            # the object went away after PreEnqueue: an error, retried when it is added again
            return Status(Code.ERROR, self._permit_error(pod))
        if min_count is None:
            return None
        key = group_key(pod)
        assert key is not None
        st = self.handle.cluster.workload_manager.state(key)
        if st.scheduled_pods_count() < min_count:
            if state is None or state.get(POD_GROUP_CYCLE_KEY) is None:
                # inside a PodGroup cycle the group's unscheduled pods are all in the cycle:
                # activating them (in flight) would requeue them at once (see the module)
                self.handle.activate(st.unscheduled_pods())
            if self.v1_36:
                timeout = 300.0  # permitTimeoutDuration (v1.36)
            else:
                timeout = st.scheduling_timeout(self.handle.now())
            return Status(Code.WAIT, self.permit_wait), timeout
        for uid in list(st.assumed):
            wp = self.handle.get_waiting_pod(uid)
            if wp is not None:
                wp.allow(NAME)
        return None

    def _permit_error(self, pod: Pod) -> str:
        """Permit's error when the Workload / PodGroup (or the group in it) is gone, as upstream
        wraps the lister's NotFound (``apierrors.NewNotFound``'s text)."""
        ns = pod.metadata.namespace
        if self.v1_36:
            sg = pod.spec.scheduling_group
            name = sg.pod_group_name if sg is not None else ""
            return f'failed to get podGroup {ns}/{name}: podgroup.scheduling.k8s.io "{name}" not found'
        ref = pod.spec.workload_ref
        assert ref is not None
        if self.handle.cluster.get_workload(ns, ref.name) is None:
            return f'failed to get workload {ns}/{ref.name}: workload.scheduling.k8s.io "{ref.name}" not found'
        return f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{ref.name}"'

    # --- PlacementFeasible (1.36) ------------------------------------------------------------------
    def placement_feasible(self, min_count: int, progress: PlacementProgress) -> Status | None:
        """``PlacementFeasible``: whether the PodGroup cycle may still, or does, satisfy minCount."""
        scheduled, remaining = progress.scheduled, progress.remaining
        if remaining + scheduled < min_count:
            return Status(
                Code.UNSCHEDULABLE,
                f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining",
            )
        if scheduled < min_count:
            return Status(
                Code.WAIT, f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"
            )
        return None


def _is_pod(obj: Any) -> bool:
    return obj is not None and getattr(obj, "kind", "") == "Pod" and hasattr(obj, "spec")


def new(args: Mapping[str, Any] | None, handle: Handle) -> GangScheduling:
    if args:
        # upstream's GangScheduling takes no args (New ignores its runtime.Object)
        extra = [k for k in args if k not in ("apiVersion", "kind")]
        if extra:
            raise ConfigError(f'strict decoding error: unknown field "{extra[0]}"')
    return GangScheduling(handle)


__all__ = [
    "MSG_PERMIT_WAIT_1_35",
    "MSG_PERMIT_WAIT_1_36",
    "MSG_WAITING_FOR_MIN_COUNT",
    "NAME",
    "GangScheduling",
    "PlacementProgress",
    "group_key",
    "new",
]
