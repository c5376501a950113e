"""Which of the Workload API's kinds and pod fields a scenario may use, per emulated version and
GenericWorkload gate, as that release's API server serves them.

    kind / field                                  served
    scheduling.k8s.io/v1alpha1 Workload           1.35, GenericWorkload on (k8s.io/api v0.35.0)
    scheduling.k8s.io/v1alpha2 Workload, PodGroup 1.36, GenericWorkload on (k8s.io/api v0.36.0)
    pod.spec.workloadRef                          1.35 (the field exists in no other release)
    pod.spec.schedulingGroup                      1.36

A kind the release does not serve is refused as kubectl reports a missing resource (``no matches
for kind "Workload" in version "scheduling.k8s.io/v1alpha1"``), with what would serve it.  A pod
field the release does not have is an unknown field (strict decoding); a field the release has
while GenericWorkload is off is dropped on create, as the API server's ``dropDisabledPodFields``
does (the pod is then scheduled as any other).  Likewise a PodGroup's ``schedulingConstraints``
while TopologyAwareWorkloadScheduling is off, and while WorkloadAwarePreemption is off the
``disruptionMode``, ``priorityClassName`` and ``priority`` of a PodGroup's spec and of each of a
v1alpha2 Workload's ``podGroupTemplates`` (the PodGroup and Workload strategies'
``dropDisabledDisruptionModeField``, ``dropDisabledPriorityClassNameField``,
``dropDisabledPriorityField``): silently, as upstream drops them before its declarative
``+k8s:ifDisabled("WorkloadAwarePreemption")=+k8s:forbidden`` could see them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kubesched._errors import ConfigError
from kubesched.api._schema import strict_error
from kubesched.api._workload import (
    SCHEDULING_POD_GROUP_KIND,
    WORKLOAD_API_V1ALPHA1,
    PodGroupTemplate,
    SchedulingPodGroupSpec,
)
from kubesched.config._versions import Version
from kubesched.validation._workload import check_preemption_fields

if TYPE_CHECKING:
    from kubesched.scenario._manifests import Manifest

_V1_35 = Version(1, 35)
_V1_36 = Version(1, 36)


def _served_at(api_version: str) -> Version:
    return _V1_35 if api_version == WORKLOAD_API_V1ALPHA1 else _V1_36


def _drop_preemption_fields(holder: SchedulingPodGroupSpec | PodGroupTemplate) -> None:
    """The fields "available only when the WorkloadAwarePreemption feature gate is enabled"
    (k8s.io/api v0.36.0 scheduling/v1alpha2), as the strategies drop them on create."""
    holder.disruption_mode = None
    holder.priority_class_name = ""
    holder.priority = None


def check_workload_api(manifests: Sequence[Manifest], version: Version, gates: Mapping[str, bool]) -> None:
    """Refuse what ``version`` does not serve; drop the pod fields the gate turns off."""
    enabled = bool(gates.get("GenericWorkload", False))
    for m in manifests:
        if m.kind == "Workload" or m.kind == SCHEDULING_POD_GROUP_KIND:
            api = m.obj.api_version
            kind = m.obj.kind
            served = _served_at(api)
            if version != served or not enabled:
                raise ConfigError(
                    f'no matches for kind "{kind}" in version "{api}" (served by Kubernetes {served} with '
                    f"--feature-gates GenericWorkload=true; emulated: {version}"
                    f"{'' if enabled else ', GenericWorkload off'})",
                    source=m.label,
                    field="kind",
                )
            if m.kind == SCHEDULING_POD_GROUP_KIND and not gates.get("TopologyAwareWorkloadScheduling", False):
                # the PodGroup strategy's dropDisabledPodGroupFields: the field is only available
                # with TopologyAwareWorkloadScheduling (k8s.io/api v0.36.0 scheduling/v1alpha2)
                m.obj.spec.scheduling_constraints = None
            if gates.get("WorkloadAwarePreemption", False):
                try:
                    check_preemption_fields(m.obj)
                except ConfigError as e:
                    raise e.at(source=m.label) from None
            else:
                holders = [m.obj.spec] if m.kind == SCHEDULING_POD_GROUP_KIND else m.obj.spec.pod_group_templates
                for h in holders:
                    _drop_preemption_fields(h)
        elif m.kind == "Pod":
            spec = m.obj.spec
            for fld, value, served in (
                ("workloadRef", spec.workload_ref, _V1_35),
                ("schedulingGroup", spec.scheduling_group, _V1_36),
            ):
                if value is None:
                    continue
                if version != served:
                    raise ConfigError(
                        f"{strict_error([f'spec.{fld}'])} (the field exists in Kubernetes {served}; emulated: {version})",
                        source=m.label,
                    )
                if not enabled:
                    if fld == "workloadRef":
                        spec.workload_ref = None
                    else:
                        spec.scheduling_group = None


__all__ = ["check_workload_api"]
