"""The workload manager: the runtime state of every pod group the informers have seen pods of
(upstream ``pkg/scheduler/backend/workloadmanager``, ``podGroupInfo`` as of v1.35 and its
``podGroupState`` successor of v1.36).

A pod group is keyed by the pod's reference::

    1.35  pod.spec.workloadRef        (namespace, workload, podGroup, podGroupReplicaKey)
    1.36  pod.spec.schedulingGroup    (namespace, "", podGroupName, "")

and holds its pods in three disjoint states::

    informer add (no nodeName) ──► unscheduled ──Reserve──► assumed ──bound (informer update)──► assigned
                                        ▲                      │
                                        └──────Unreserve───────┘
    informer add with a nodeName ─────────────────────────────────────────────────────────► assigned

``schedulingTimeout``: the deadline the first Permit of a gang sets (5 minutes,
``DefaultSchedulingTimeoutDuration``), renewed once it has passed.  The event handlers feed the
manager (:meth:`add_pod`, :meth:`update_pod`, :meth:`delete_pod`); the GangScheduling plugin moves
pods between unscheduled and assumed (:meth:`PodGroupState.assume`, :meth:`PodGroupState.forget`).
Pods without a group never reach it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubesched.api._objects import Pod

DEFAULT_SCHEDULING_TIMEOUT = 300.0
"""``DefaultSchedulingTimeoutDuration`` (v1.35 workloadmanager/podgroupinfo.go): 5 minutes."""

GroupKey = tuple[str, str, str, str]
"""(namespace, workload name, pod group name, replica key); the workload and the replica key are
empty for a 1.36 ``schedulingGroup``."""


def group_key(pod: Pod) -> GroupKey | None:
    """The key of ``pod``'s group; None for a pod in none."""
    spec = pod.spec
    ref = spec.workload_ref
    if ref is not None:
        return (pod.metadata.namespace, ref.name, ref.pod_group, ref.pod_group_replica_key)
    sg = spec.scheduling_group
    if sg is not None and sg.pod_group_name:
        return (pod.metadata.namespace, "", sg.pod_group_name, "")
    return None


class PodGroupState:
    """One group's pods (``podGroupInfo``): by uid, in the order the informer saw them."""

    __slots__ = ("all_pods", "assigned", "assumed", "deadline", "unscheduled")

    def __init__(self) -> None:
        self.all_pods: dict[str, Pod] = {}
        self.unscheduled: dict[str, None] = {}
        self.assumed: dict[str, None] = {}
        self.assigned: dict[str, None] = {}
        self.deadline: float | None = None

    def all_pods_count(self) -> int:
        """``AllPodsCount``: every pod of the group the scheduler knows."""
        return len(self.all_pods)

    def scheduled_pods_count(self) -> int:
        """``ScheduledPodsCount``: assumed or assigned."""
        return len(self.assumed) + len(self.assigned)

    def unscheduled_pods(self) -> list[Pod]:
        """``UnscheduledPods``: neither assumed nor assigned, in informer order."""
        return [self.all_pods[uid] for uid in self.unscheduled]

    def assume(self, uid: str) -> None:
        """``AssumePod``: the pod passed Reserve."""
        if uid in self.all_pods:
            self.assumed[uid] = None
            self.unscheduled.pop(uid, None)

    def forget(self, uid: str) -> None:
        """``ForgetPod``: Unreserve undoes :meth:`assume`."""
        if uid in self.assumed:
            del self.assumed[uid]
            self.unscheduled[uid] = None

    def scheduling_timeout(self, now: float) -> float:
        """``SchedulingTimeout``: the time left until the gang's deadline, a new deadline when
        there is none or it has passed."""
        if self.deadline is None or self.deadline < now:
            self.deadline = now + DEFAULT_SCHEDULING_TIMEOUT
        return self.deadline - now


class WorkloadManager:
    """Every group with at least one pod (``WorkloadManager``); an empty group is dropped."""

    def __init__(self) -> None:
        self.groups: dict[GroupKey, PodGroupState] = {}

    def state(self, key: GroupKey) -> PodGroupState:
        """The group's state (an empty one, not stored, when no pod of it is known)."""
        return self.groups.get(key) or PodGroupState()

    def add_pod(self, key: GroupKey, pod: Pod) -> None:
        st = self.groups.get(key)
        if st is None:
            st = self.groups[key] = PodGroupState()
        uid = pod.metadata.uid
        st.all_pods[uid] = pod
        if pod.spec.node_name:
            st.assigned[uid] = None
            st.unscheduled.pop(uid, None)
            st.assumed.pop(uid, None)
        elif uid not in st.assumed:
            st.unscheduled[uid] = None

    def update_pod(self, key: GroupKey, old: Pod | None, pod: Pod) -> None:
        """``updatePod``: a bound pod moves to assigned (the group reference is immutable)."""
        st = self.groups.get(key)
        if st is None or old is None:
            self.add_pod(key, pod)
            return
        uid = pod.metadata.uid
        st.all_pods[uid] = pod
        if not old.spec.node_name and pod.spec.node_name:
            st.assigned[uid] = None
            st.unscheduled.pop(uid, None)
            st.assumed.pop(uid, None)

    def delete_pod(self, key: GroupKey, uid: str) -> None:
        st = self.groups.get(key)
        if st is None:
            return
        st.all_pods.pop(uid, None)
        st.unscheduled.pop(uid, None)
        st.assumed.pop(uid, None)
        st.assigned.pop(uid, None)
        if not st.all_pods:
            del self.groups[key]


__all__ = ["DEFAULT_SCHEDULING_TIMEOUT", "GroupKey", "PodGroupState", "WorkloadManager", "group_key"]
