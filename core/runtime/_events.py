"""Cluster events: what can move a rejected pod back to the active queue.

A plugin that rejects pods declares (``kubesched_events_to_register``) the events that may undo
its rejection, each with an optional queueing hint; the queue moves a pod only for events some
of its rejecting plugins registered (``framework.ClusterEvent``, ``QueueingHint``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api._resources import pod_requests


class ActionType(enum.IntFlag):
    """``framework.ActionType``: what happened to the object."""

    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_OTHER = 1 << 11
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_OTHER
    )
    ALL = ADD | DELETE | UPDATE


class Resource(enum.StrEnum):
    """``framework.EventResource``."""

    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    NODE = "Node"
    PDB = "PodDisruptionBudget"
    POD_GROUP = "PodGroup"
    WORKLOAD = "Workload"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    CSI_NODE = "storage.k8s.io/CSINode"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"
    RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
    RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
    DEVICE_CLASS = "resource.k8s.io/DeviceClass"
    WILDCARD = "*"


class QueueingHint(enum.IntEnum):
    QUEUE_SKIP = 0
    QUEUE = 1


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: Resource
    action: ActionType
    label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource == Resource.WILDCARD and self.action == ActionType.ALL

    def matches(self, incoming: ClusterEvent) -> bool:
        """``ClusterEvent.Match``: does this *registered* event cover ``incoming``?

        A registered ``*`` resource matches any resource (with an overlapping action); an
        incoming wildcard event (UnschedulableTimeout, ForceActivate) is matched only by a
        registered wildcard event.
        """
        if self.is_wildcard():
            return True
        if not (self.action & incoming.action):
            return False
        if self.resource == Resource.WILDCARD or self.resource == incoming.resource:
            return True
        return self.resource == Resource.POD and incoming.resource in (
            Resource.ASSIGNED_POD,
            Resource.UNSCHEDULED_POD,
        )

    def __str__(self) -> str:
        return self.label or f"{self.resource.value}{self.action!r}"


QueueingHintFn = Callable[[Any, Any, Any], QueueingHint]
"""``(pod, old_obj, new_obj) -> QueueingHint``."""


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None


# Events the scheduler itself generates (pkg/scheduler/framework/events.go).
WILDCARD = ClusterEvent(Resource.WILDCARD, ActionType.ALL, "WildCardEvent")
UNSCHEDULABLE_TIMEOUT = ClusterEvent(Resource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(Resource.WILDCARD, ActionType.ALL, "ForceActivate")
NODE_ADD = ClusterEvent(Resource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(Resource.NODE, ActionType.DELETE, "NodeDelete")
ASSIGNED_POD_ADD = ClusterEvent(Resource.ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE = ClusterEvent(Resource.ASSIGNED_POD, ActionType.UPDATE, "AssignedPodUpdate")
ASSIGNED_POD_DELETE = ClusterEvent(Resource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
UNSCHEDULED_POD_ADD = ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.ADD, "UnscheduledPodAdd")
UNSCHEDULED_POD_UPDATE = ClusterEvent(
    Resource.UNSCHEDULED_POD, ActionType.UPDATE, "UnscheduledPodUpdate"
)
UNSCHEDULED_POD_DELETE = ClusterEvent(
    Resource.UNSCHEDULED_POD, ActionType.DELETE, "UnscheduledPodDelete"
)
# Not cluster events upstream, only labels of how a pod entered a queue (metrics, logs).
SCHEDULE_ATTEMPT_FAILURE = ClusterEvent(Resource.WILDCARD, ActionType.ALL, "ScheduleAttemptFailure")
BACKOFF_COMPLETE = ClusterEvent(Resource.WILDCARD, ActionType.ALL, "BackoffComplete")
POP_FROM_BACKOFF_Q = ClusterEvent(Resource.WILDCARD, ActionType.ALL, "PopFromBackoffQ")


def node_update_events(old: Any, new: Any) -> list[ClusterEvent]:
    """``NodeSchedulingPropertiesChange``: the update actions between two Node versions."""
    actions = ActionType(0)
    if old.status.allocatable != new.status.allocatable:
        actions |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old.metadata.labels != new.metadata.labels:
        actions |= ActionType.UPDATE_NODE_LABEL
    if old.spec.taints != new.spec.taints or old.spec.unschedulable != new.spec.unschedulable:
        actions |= ActionType.UPDATE_NODE_TAINT
    if old.status.conditions != new.status.conditions:
        actions |= ActionType.UPDATE_NODE_CONDITION
    if old.metadata.annotations != new.metadata.annotations:
        actions |= ActionType.UPDATE_NODE_ANNOTATION
    return [
        ClusterEvent(Resource.NODE, a, f"Node{a.name}")
        for a in ActionType
        if a in actions and a.bit_count() == 1
    ]


# The storage objects' informers (``addAllEventHandlers``' ``buildEvtResHandler``): one event per
# watch event type, labelled as upstream's ``ClusterEvent.Label()`` prints it (resource, action).
STORAGE_RESOURCES = (
    Resource.PERSISTENT_VOLUME,
    Resource.PERSISTENT_VOLUME_CLAIM,
    Resource.CSI_NODE,
    Resource.CSI_DRIVER,
    Resource.CSI_STORAGE_CAPACITY,
    Resource.STORAGE_CLASS,
)
_WATCH_ACTIONS = {"ADDED": ActionType.ADD, "MODIFIED": ActionType.UPDATE, "DELETED": ActionType.DELETE}
_ACTION_NAMES = {ActionType.ADD: "Add", ActionType.UPDATE: "Update", ActionType.DELETE: "Delete"}
STORAGE_EVENTS: dict[tuple[Resource, str], ClusterEvent] = {
    (r, watch): ClusterEvent(r, action, f"{r.value}{_ACTION_NAMES[action]}")
    for r in STORAGE_RESOURCES
    for watch, action in _WATCH_ACTIONS.items()
}
"""(resource, watch event type) → the cluster event its informer sends, e.g.
``PersistentVolumeAdd``, ``storage.k8s.io/StorageClassUpdate``, ``storage.k8s.io/CSINodeDelete``."""

# The DRA informers (``addAllEventHandlers``, v1.36: ResourceClaims through the claim assume
# cache, ResourceSlices through the slice tracker, DeviceClasses), while DynamicResourceAllocation
# is on: ``buildEvtResHandler`` events as the storage kinds'.
DRA_RESOURCES = (Resource.RESOURCE_CLAIM, Resource.RESOURCE_SLICE, Resource.DEVICE_CLASS)
DRA_EVENTS: dict[tuple[Resource, str], ClusterEvent] = {
    (r, watch): ClusterEvent(r, action, f"{r.value}{_ACTION_NAMES[action]}")
    for r in DRA_RESOURCES
    for watch, action in _WATCH_ACTIONS.items()
}
"""(resource, watch event type) → its cluster event, e.g. ``resource.k8s.io/ResourceClaimUpdate``."""


def unroll_wildcard_resource() -> list[ClusterEvent]:
    """``UnrollWildCardResource``: what a plugin without EnqueueExtensions is registered for.

    Every resource with ActionType All, but *not* the wildcard event itself, so a pod gated by
    such a plugin is not released by UnschedulableTimeout.  Upstream's list (v1.36
    pkg/scheduler/framework/types.go): the storage kinds, then ResourceClaim and DeviceClass.
    """
    return [
        ClusterEvent(Resource.POD, ActionType.ALL, "PodAll"),
        ClusterEvent(Resource.NODE, ActionType.ALL, "NodeAll"),
        *(ClusterEvent(r, ActionType.ALL, f"{r.value}All") for r in STORAGE_RESOURCES),
        *(ClusterEvent(r, ActionType.ALL, f"{r.value}All") for r in (Resource.RESOURCE_CLAIM, Resource.DEVICE_CLASS)),
    ]


def _pod_scaled_down(old: Any, new: Any) -> bool:
    """``extractPodScaleDown``: some request of the old pod shrank (or vanished)."""
    if old.spec is new.spec:  # a status or metadata update shares the spec object
        return False
    o, n = pod_requests(old), pod_requests(new)
    if (
        o.milli_cpu > n.milli_cpu
        or o.memory > n.memory
        or o.ephemeral_storage > n.ephemeral_storage
    ):
        return True
    return any(v > n.scalar.get(k, 0) for k, v in o.scalar.items())


def pod_update_events(old: Any, new: Any, resource: Resource | None = None) -> list[ClusterEvent]:
    """``PodSchedulingPropertiesChange``: the update actions between two Pod versions.

    The resource is AssignedPod or UnscheduledPod after ``new.spec.nodeName`` unless given.
    """
    if resource is None:
        resource = Resource.ASSIGNED_POD if new.spec.node_name else Resource.UNSCHEDULED_POD
    out: list[ClusterEvent] = []
    if old.metadata.labels != new.metadata.labels:
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_LABEL))
    if _pod_scaled_down(old, new):
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_SCALE_DOWN))
    if old.spec.scheduling_gates and not new.spec.scheduling_gates:
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED))
    if old.spec.tolerations != new.spec.tolerations:
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_TOLERATION))
    if not out:
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_OTHER))
    return out


# --- the event label of kube-scheduler's metrics ------------------------------------------------
# From 1.32, ``ClusterEvent.Label()`` prints the resource then the action (``types.go``:
# ``fmt.Sprintf("%v%v", ce.Resource, ce.ActionType)``), the unscheduled pods' resource being
# ``UnschedulablePod`` and ``updatePodOther`` printing as ``Update``; 1.31's events carry a label
# of their own (``pkg/scheduler/internal/queue/events.go``).
_GO_ACTIONS = {
    ActionType.ADD: "Add",
    ActionType.DELETE: "Delete",
    ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_TOLERATION: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_OTHER: "Update",
    ActionType.UPDATE: "Update",
    ActionType.ALL: "All",
}
_GO_RESOURCES = {Resource.UNSCHEDULED_POD: "UnschedulablePod"}
_LABELS_1_31 = {
    (Resource.NODE, ActionType.UPDATE_NODE_ALLOCATABLE): "NodeAllocatableChange",
    (Resource.NODE, ActionType.UPDATE_NODE_LABEL): "NodeLabelChange",
    (Resource.NODE, ActionType.UPDATE_NODE_TAINT): "NodeTaintChange",
    (Resource.NODE, ActionType.UPDATE_NODE_CONDITION): "NodeConditionChange",
    (Resource.NODE, ActionType.UPDATE_NODE_ANNOTATION): "NodeAnnotationChange",
    (Resource.UNSCHEDULED_POD, ActionType.ADD): "UnschedulablePodAdd",
    (Resource.UNSCHEDULED_POD, ActionType.UPDATE): "UnschedulablePodUpdate",
    (Resource.UNSCHEDULED_POD, ActionType.DELETE): "UnschedulablePodDelete",
    (Resource.PERSISTENT_VOLUME, ActionType.ADD): "PvAdd",
    (Resource.PERSISTENT_VOLUME, ActionType.UPDATE): "PvUpdate",
    (Resource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD): "PvcAdd",
    (Resource.PERSISTENT_VOLUME_CLAIM, ActionType.UPDATE): "PvcUpdate",
}
_POD_LABELS_1_31 = {
    ActionType.UPDATE_POD_LABEL: "PodLabelChange",
    ActionType.UPDATE_POD_SCALE_DOWN: "PodRequestScaledDown",
    ActionType.UPDATE_POD_TOLERATION: "PodTolerationChange",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "PodSchedulingGateChange",
    ActionType.UPDATE_POD_OTHER: "AssignedPodUpdate",
}


def metric_label(event: ClusterEvent, version: tuple[int, int]) -> str:
    """The ``event`` label kube-scheduler's metrics give ``event`` at ``version`` (1.31 and on):
    ``NodeAdd``, ``NodeUpdateNodeTaint``, ``AssignedPodUpdatePodLabel``, ``UnschedulablePodAdd``,
    ``storage.k8s.io/CSINodeAdd`` ... (1.31: ``NodeTaintChange``, ``PodLabelChange``, ``PvAdd``,
    ``CSINodeAdd`` ...).  A wildcard event keeps its own label (``UnschedulableTimeout``)."""
    resource, action = event.resource, event.action
    if resource is Resource.WILDCARD:
        return event.label
    if version < (1, 32):
        label = _LABELS_1_31.get((resource, action))
        if label is not None:
            return label
        if resource in (Resource.ASSIGNED_POD, Resource.UNSCHEDULED_POD) and action in _POD_LABELS_1_31:
            return _POD_LABELS_1_31[action]
        # 1.31 named the other kinds without their group (``StorageClassAdd``, ``ResourceClaimAdd``)
        return f"{resource.value.rpartition('/')[2]}{_GO_ACTIONS.get(action, '')}"
    return f"{_GO_RESOURCES.get(resource, resource.value)}{_GO_ACTIONS.get(action, '')}"


# --- the event label of scheduler_queue_incoming_pods_total -------------------------------------
def queue_label(event: ClusterEvent, version: tuple[int, int]) -> str:
    """The ``event`` label upstream's queue counts a pod entering a sub-queue on ``event`` under
    (``SchedulerQueueIncomingPods.WithLabelValues(queue, label)``) at ``version``.

    From 1.32 the event's ``Label()`` (:func:`metric_label`): ``UnschedulablePodAdd`` for a new
    pod, ``UnschedulablePodUpdate`` for an update of a pod in no sub-queue, each hinted update
    event's own (``UnschedulablePodUpdatePodLabel``), ``NodeAdd``, ``AssignedPodUpdatePodScaleDown``;
    the queue's own moves keep their constants (``ScheduleAttemptFailure``, ``BackoffComplete``,
    ``ForceActivate``, ``UnschedulableTimeout``).  Before 1.32 (v1.31 ``scheduling_queue.go``,
    ``framework/events.go``) the queue's string constants: a new pod is ``PodAdd``, an update of a
    pod in no sub-queue (``UNSCHEDULED_POD_UPDATE``, all update actions) ``PodUpdate``, and a
    hinted update ``UnschedulablePodUpdate`` whatever it changed; an assigned pod's scale-down
    moves every pod as ``AssignedPodUpdate``, and in 1.30, which had no smaller Pod update events
    (kubernetes#122628, 1.31), every assigned pod's update is ``AssignedPodUpdate``.
    """
    if version < (1, 32):
        resource, action = event.resource, event.action
        if resource is Resource.UNSCHEDULED_POD:
            if action == ActionType.ADD:
                return "PodAdd"
            if action == ActionType.UPDATE:
                return "PodUpdate"
            if action & ActionType.UPDATE:
                return "UnschedulablePodUpdate"
        elif resource is Resource.ASSIGNED_POD and action & ActionType.UPDATE and (
            version < (1, 31) or action == ActionType.UPDATE_POD_SCALE_DOWN
        ):
            return "AssignedPodUpdate"
    return metric_label(event, version)


class QueueLabels(dict[ClusterEvent, str]):
    """:func:`queue_label` of each event at one version, computed once per distinct event (the
    counting on the queue's hot path is a dict hit).  ``legacy_update`` is the event the queue's
    ``Update`` moves an updated unschedulable pod to activeQ with while queueing hints are off:
    v1.31's ``moveToActiveQ(logger, pInfo, framework.BackoffComplete)`` before 1.32 (counted as
    ``BackoffComplete``, no nomination re-added), ``EventUnscheduledPodUpdate`` from 1.32."""

    def __init__(self, version: tuple[int, int]) -> None:
        super().__init__()
        self.version = version
        self.legacy_update = BACKOFF_COMPLETE if version < (1, 32) else UNSCHEDULED_POD_UPDATE

    def __missing__(self, event: ClusterEvent) -> str:
        label = self[event] = queue_label(event, self.version)
        return label
