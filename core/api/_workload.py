"""The Workload API (``scheduling.k8s.io``, KEP-4671): Workloads, standalone PodGroups and the pod
fields that point at them, as each emulated release serves them.

    1.35  scheduling.k8s.io/v1alpha1 Workload      spec.podGroups[] {name, policy {basic | gang
          (k8s.io/api v0.35.0                       {minCount}}}, spec.controllerRef
          scheduling/v1alpha1/types.go)             pod.spec.workloadRef {name, podGroup,
                                                    podGroupReplicaKey} (core/v1/types.go)
    1.36  scheduling.k8s.io/v1alpha2 Workload      spec.podGroupTemplates[] {name, schedulingPolicy,
          (k8s.io/api v0.36.0                       schedulingConstraints, resourceClaims,
          scheduling/v1alpha2/types.go)             disruptionMode, priorityClassName, priority}
          scheduling.k8s.io/v1alpha2 PodGroup      spec {podGroupTemplateRef, schedulingPolicy,
                                                    schedulingConstraints, resourceClaims,
                                                    disruptionMode, priorityClassName, priority},
                                                    status.conditions (PodGroupScheduled,
                                                    DisruptionTarget)
                                                    pod.spec.schedulingGroup {podGroupName}
                                                    (workloadRef is gone: protobuf tag 42 reserved)

Both are behind the GenericWorkload gate (alpha, off).  One :class:`Workload` struct carries the
fields of both versions; the strict schema (``_schema.json``, per apiVersion) refuses the other
version's fields, so a v1alpha1 Workload never has ``podGroupTemplates``.

kubesched also has scheduler-plugins' PodGroup (``scheduling.x-k8s.io/v1alpha1``,
:class:`kubesched.api.PodGroup`, for Coscheduling).  The standalone PodGroup of the Workload API
is :class:`SchedulingPodGroup` (its kind on the wire is ``PodGroup``); inside kubesched (the fake
cluster's store, manifests) its kind is named ``SchedulingPodGroup`` so that the two never meet.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.api._objects import (
    Condition,
    Int32,
    ObjectMeta,
    PodSchedulingGroup,
    WorkloadReference,
    _Obj,
)

WORKLOAD_API_V1ALPHA1 = "scheduling.k8s.io/v1alpha1"
WORKLOAD_API_V1ALPHA2 = "scheduling.k8s.io/v1alpha2"
SCHEDULING_POD_GROUP_KIND = "SchedulingPodGroup"
"""kubesched's internal kind name of the Workload API's PodGroup (``scheduling.k8s.io/v1alpha2``)."""

WORKLOAD_MAX_POD_GROUPS = 8
"""``WorkloadMaxPodGroups`` (v0.35.0 scheduling/v1alpha1) and ``WorkloadMaxPodGroupTemplates``
(v0.36.0 scheduling/v1alpha2)."""
MAX_POD_GROUP_RESOURCE_CLAIMS = 4
"""``MaxPodGroupResourceClaims`` (v0.36.0 scheduling/v1alpha2)."""

DISRUPTION_MODE_POD = "Pod"
DISRUPTION_MODE_POD_GROUP = "PodGroup"

# status.conditions of a PodGroup (v0.36.0 scheduling/v1alpha2 types.go)
POD_GROUP_SCHEDULED = "PodGroupScheduled"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


# --- policies (both versions) ----------------------------------------------------------------


class BasicSchedulingPolicy(_Obj):
    """Standard scheduling: no field (its presence is the choice)."""


class GangSchedulingPolicy(_Obj):
    """All-or-nothing: at least ``minCount`` pods schedulable or scheduled at the same time."""

    min_count: Int32 = 0


class PodGroupPolicy(_Obj):
    """``PodGroupPolicy`` (v1alpha1) / ``PodGroupSchedulingPolicy`` (v1alpha2): exactly one."""

    basic: BasicSchedulingPolicy | None = None
    gang: GangSchedulingPolicy | None = None


class TopologyConstraint(_Obj):
    key: str = ""


class PodGroupSchedulingConstraints(_Obj):
    topology: list[TopologyConstraint] = []


class PodGroupResourceClaim(_Obj):
    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class TypedLocalObjectReference(_Obj):
    """``spec.controllerRef`` of a Workload (required kind and name, unlike core/v1's)."""

    api_group: str = ""
    kind: str = ""
    name: str = ""


# --- Workload --------------------------------------------------------------------------------


class WorkloadPodGroup(_Obj):
    """``spec.podGroups[]`` of a v1alpha1 Workload."""

    name: str = ""
    policy: PodGroupPolicy = msgspec.field(default_factory=PodGroupPolicy)


class PodGroupTemplate(_Obj):
    """``spec.podGroupTemplates[]`` of a v1alpha2 Workload."""

    name: str = ""
    scheduling_policy: PodGroupPolicy = msgspec.field(default_factory=PodGroupPolicy)
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: list[PodGroupResourceClaim] = []
    disruption_mode: str | None = None
    priority_class_name: str = ""
    priority: Int32 | None = None


class WorkloadSpec(_Obj):
    controller_ref: TypedLocalObjectReference | None = None
    pod_groups: list[WorkloadPodGroup] = []
    pod_group_templates: list[PodGroupTemplate] = []


class Workload(_Obj):
    """A Workload of either version (``apiVersion`` says which)."""

    api_version: str = WORKLOAD_API_V1ALPHA2
    kind: str = "Workload"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: WorkloadSpec = msgspec.field(default_factory=WorkloadSpec)

    def pod_group_policy(self, name: str) -> PodGroupPolicy | None:
        """The policy of the pod group (v1alpha1) or template (v1alpha2) ``name``; None if none."""
        for pg in self.spec.pod_groups:
            if pg.name == name:
                return pg.policy
        for t in self.spec.pod_group_templates:
            if t.name == name:
                return t.scheduling_policy
        return None


# --- PodGroup (v1alpha2) -----------------------------------------------------------------------


class WorkloadPodGroupTemplateReference(_Obj):
    workload_name: str = ""
    pod_group_template_name: str = ""


class PodGroupTemplateReference(_Obj):
    workload: WorkloadPodGroupTemplateReference | None = None


class PodGroupResourceClaimStatus(_Obj):
    name: str = ""
    resource_claim_name: str | None = None


class SchedulingPodGroupSpec(_Obj):
    pod_group_template_ref: PodGroupTemplateReference | None = None
    scheduling_policy: PodGroupPolicy = msgspec.field(default_factory=PodGroupPolicy)
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: list[PodGroupResourceClaim] = []
    disruption_mode: str | None = None
    priority_class_name: str = ""
    priority: Int32 | None = None


class SchedulingPodGroupStatus(_Obj):
    conditions: list[Condition] = []
    resource_claim_statuses: list[PodGroupResourceClaimStatus] = []


class SchedulingPodGroup(_Obj):
    """The Workload API's standalone PodGroup (``scheduling.k8s.io/v1alpha2``, kind ``PodGroup``)."""

    api_version: str = WORKLOAD_API_V1ALPHA2
    kind: str = "PodGroup"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: SchedulingPodGroupSpec = msgspec.field(default_factory=SchedulingPodGroupSpec)
    status: SchedulingPodGroupStatus = msgspec.field(default_factory=SchedulingPodGroupStatus)

    def min_count(self) -> int:
        """The gang's minCount; 1 for a basic group (upstream ``getMinCount``)."""
        gang = self.spec.scheduling_policy.gang
        return 1 if gang is None else gang.min_count


WORKLOAD_KINDS: dict[tuple[str, str], type[Any]] = {
    (WORKLOAD_API_V1ALPHA1, "Workload"): Workload,
    (WORKLOAD_API_V1ALPHA2, "Workload"): Workload,
    (WORKLOAD_API_V1ALPHA2, "PodGroup"): SchedulingPodGroup,
}
"""(apiVersion, kind) → struct of the Workload API's kinds."""


__all__ = [
    "WORKLOAD_KINDS",
    "DISRUPTION_MODE_POD",
    "DISRUPTION_MODE_POD_GROUP",
    "DISRUPTION_TARGET",
    "MAX_POD_GROUP_RESOURCE_CLAIMS",
    "POD_GROUP_SCHEDULED",
    "REASON_PREEMPTION_BY_SCHEDULER",
    "REASON_SCHEDULER_ERROR",
    "REASON_UNSCHEDULABLE",
    "SCHEDULING_POD_GROUP_KIND",
    "WORKLOAD_API_V1ALPHA1",
    "WORKLOAD_API_V1ALPHA2",
    "WORKLOAD_MAX_POD_GROUPS",
    "BasicSchedulingPolicy",
    "Condition",
    "GangSchedulingPolicy",
    "PodGroupPolicy",
    "PodGroupResourceClaim",
    "PodGroupResourceClaimStatus",
    "PodGroupSchedulingConstraints",
    "PodGroupTemplate",
    "PodGroupTemplateReference",
    "PodSchedulingGroup",
    "SchedulingPodGroup",
    "SchedulingPodGroupSpec",
    "SchedulingPodGroupStatus",
    "TopologyConstraint",
    "TypedLocalObjectReference",
    "Workload",
    "WorkloadPodGroup",
    "WorkloadPodGroupTemplateReference",
    "WorkloadReference",
    "WorkloadSpec",
]
