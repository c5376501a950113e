"""Validation of the Workload API (``scheduling.k8s.io`` v1alpha1 / v1alpha2) and of the pod fields
that point into it, in upstream's words.

Sources: ``pkg/apis/scheduling/validation/validation.go`` as of v1.35 (``ValidateWorkload``,
``validateWorkloadSpec``, ``validateControllerRef``, ``validatePodGroup``,
``validatePodGroupPolicy``, ``validateGangSchedulingPolicy`` = ``ValidatePositiveField``;
``ValidateWorkloadUpdate``: controllerRef and podGroups immutable) and as of v1.36 for v1alpha2
(the same rules over ``podGroupTemplates``; ``minCount: 0`` is ``Required value`` as declarative
validation reports it, a negative one ``must be greater than zero``; a standalone PodGroup's spec
is immutable).  kubesched validates by apiVersion: a v1alpha1 object gets the 1.35 rules, a
v1alpha2 object the 1.36 ones.  Pod fields (pkg/apis/core/validation ``validateWorkloadReference``
at v1.35, ``validateSchedulingGroup`` at v1.36): the names are a DNS subdomain (Workload, PodGroup)
and DNS labels (pod group, replica key).
"""

from __future__ import annotations

from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._workload import (
    DISRUPTION_MODE_POD,
    DISRUPTION_MODE_POD_GROUP,
    MAX_POD_GROUP_RESOURCE_CLAIMS,
    WORKLOAD_API_V1ALPHA1,
    WORKLOAD_MAX_POD_GROUPS,
    PodGroupPolicy,
    SchedulingPodGroup,
    Workload,
)
from kubesched.validation._base import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
    invalid,
    not_supported,
)

_NOT_POSITIVE = "must be greater than zero"  # apivalidation isNotPositiveErrorMsg
_PATH_SEGMENT_BAD = ("/", "%")


def _required(fld: str, msg: str = "") -> ConfigError:
    return ConfigError(f"Required value{': ' + msg if msg else ''}", field=fld)


def _path_segment_errors(value: str) -> list[str]:
    """``path.IsValidPathSegmentName``."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in _PATH_SEGMENT_BAD if c in value]


def check_policy(policy: PodGroupPolicy, path: str, *, v1alpha1: bool) -> None:
    """``validatePodGroupPolicy``: exactly one of basic and gang; a gang's minCount positive."""
    set_fields = [f for f, v in (("`basic`", policy.basic), ("`gang`", policy.gang)) if v is not None]
    if not set_fields:
        raise _required(path, "exactly one of `basic`, `gang` is required")
    if len(set_fields) > 1:
        raise invalid(path, "{" + ", ".join(set_fields) + "}", "exactly one of `basic`, `gang` is required, but multiple fields are set")
    gang = policy.gang
    if gang is not None:
        if gang.min_count == 0 and not v1alpha1:
            raise _required(f"{path}.gang.minCount")
        if gang.min_count <= 0:
            raise invalid(f"{path}.gang.minCount", gang.min_count, _NOT_POSITIVE)


def _check_controller_ref(ref: Any, path: str) -> None:
    if ref.api_group:
        errs = dns1123_subdomain_errors(ref.api_group)
        if errs:
            raise invalid(f"{path}.apiGroup", ref.api_group, errs[0])
    for fld, value in (("kind", ref.kind), ("name", ref.name)):
        if not value:
            raise _required(f"{path}.{fld}")
        errs = _path_segment_errors(value)
        if errs:
            raise invalid(f"{path}.{fld}", value, errs[0])


def _check_group_name(name: str, path: str, seen: set[str]) -> None:
    errs = dns1123_label_errors(name)
    if errs:
        raise invalid(path, name, errs[0])
    if name in seen:
        raise ConfigError(f"Duplicate value: {go_quote(name)}", field=path)
    seen.add(name)


def _check_disruption_mode(mode: str | None, path: str) -> None:
    if mode is not None and mode not in (DISRUPTION_MODE_POD, DISRUPTION_MODE_POD_GROUP):
        raise not_supported(path, mode, (DISRUPTION_MODE_POD, DISRUPTION_MODE_POD_GROUP))


def _check_claims(claims: list[Any], path: str) -> None:
    if len(claims) > MAX_POD_GROUP_RESOURCE_CLAIMS:
        raise ConfigError(f"Too many: {len(claims)}: must have at most {MAX_POD_GROUP_RESOURCE_CLAIMS} items", field=path)
    seen: set[str] = set()
    for i, c in enumerate(claims):
        _check_group_name(c.name, f"{path}[{i}].name", seen)
        if (c.resource_claim_name is None) == (c.resource_claim_template_name is None):
            raise invalid(f"{path}[{i}]", "", "exactly one of `resourceClaimName` or `resourceClaimTemplateName` must be specified")


def _check_constraints(constraints: Any, path: str) -> None:
    if constraints is None:
        return
    if len(constraints.topology) > 1:
        raise ConfigError(f"Too many: {len(constraints.topology)}: must have at most 1 item", field=f"{path}.topology")
    for i, t in enumerate(constraints.topology):
        if not t.key:
            raise _required(f"{path}.topology[{i}].key")


_HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000


def _check_preemption_holder(holder: Any, path: str) -> None:
    _check_disruption_mode(holder.disruption_mode, f"{path}.disruptionMode")
    if holder.priority_class_name:
        errs = dns1123_subdomain_errors(holder.priority_class_name)
        if errs:
            raise invalid(f"{path}.priorityClassName", holder.priority_class_name, errs[0])
    if holder.priority is not None and holder.priority > _HIGHEST_USER_DEFINABLE_PRIORITY:
        raise invalid(
            f"{path}.priority", holder.priority, f"must be less than or equal to {_HIGHEST_USER_DEFINABLE_PRIORITY}"
        )


def check_preemption_fields(obj: Workload | SchedulingPodGroup) -> None:
    """The fields WorkloadAwarePreemption guards, as declarative validation checks them with the
    gate on (k8s.io/api v0.36.0 scheduling/v1alpha2: ``disruptionMode`` an enum,
    ``priorityClassName`` a ``k8s-long-name``, ``priority`` at most ``HighestUserDefinablePriority``),
    of a PodGroup's spec or of each of a v1alpha2 Workload's podGroupTemplates.  With the gate off
    the strategies drop them before validation (``dropDisabled...Field``), so nothing is checked."""
    if isinstance(obj, SchedulingPodGroup):
        _check_preemption_holder(obj.spec, "spec")
        return
    for i, t in enumerate(obj.spec.pod_group_templates):
        _check_preemption_holder(t, f"spec.podGroupTemplates[{i}]")


def check_workload(w: Workload, *, preemption_fields: bool = True) -> None:
    """``ValidateWorkload`` (the spec: metadata is checked as every object's); the fields
    WorkloadAwarePreemption guards unless ``preemption_fields`` is False (their checks then wait
    for the gate: :func:`check_preemption_fields`)."""
    spec = w.spec
    if spec.controller_ref is not None:
        _check_controller_ref(spec.controller_ref, "spec.controllerRef")
    v1alpha1 = w.api_version == WORKLOAD_API_V1ALPHA1
    fld = "spec.podGroups" if v1alpha1 else "spec.podGroupTemplates"
    groups: list[Any] = spec.pod_groups if v1alpha1 else spec.pod_group_templates
    if not groups:
        raise _required(fld, "must have at least one item")
    if len(groups) > WORKLOAD_MAX_POD_GROUPS:
        raise ConfigError(f"Too many: {len(groups)}: must have at most {WORKLOAD_MAX_POD_GROUPS} items", field=fld)
    seen: set[str] = set()
    for i, g in enumerate(groups):
        _check_group_name(g.name, f"{fld}[{i}].name", seen)
        if v1alpha1:
            check_policy(g.policy, f"{fld}[{i}].policy", v1alpha1=True)
        else:
            check_policy(g.scheduling_policy, f"{fld}[{i}].schedulingPolicy", v1alpha1=False)
            _check_constraints(g.scheduling_constraints, f"{fld}[{i}].schedulingConstraints")
            _check_claims(g.resource_claims, f"{fld}[{i}].resourceClaims")
    if preemption_fields and not v1alpha1:
        check_preemption_fields(w)


def check_scheduling_pod_group(pg: SchedulingPodGroup, *, preemption_fields: bool = True) -> None:
    """``ValidatePodGroup`` (v1alpha2): the policy, the template reference, claims; the fields
    WorkloadAwarePreemption guards unless ``preemption_fields`` is False."""
    spec = pg.spec
    check_policy(spec.scheduling_policy, "spec.schedulingPolicy", v1alpha1=False)
    ref = spec.pod_group_template_ref
    if ref is not None:
        if ref.workload is None:
            raise _required("spec.podGroupTemplateRef", "exactly one of `workload` is required")
        for fld, value in (("workloadName", ref.workload.workload_name), ("podGroupTemplateName", ref.workload.pod_group_template_name)):
            p = f"spec.podGroupTemplateRef.workload.{fld}"
            if not value:
                raise _required(p)
            errs = dns1123_subdomain_errors(value) if fld == "workloadName" else dns1123_label_errors(value)
            if errs:
                raise invalid(p, value, errs[0])
    _check_constraints(spec.scheduling_constraints, "spec.schedulingConstraints")
    _check_claims(spec.resource_claims, "spec.resourceClaims")
    if preemption_fields:
        check_preemption_fields(pg)


def check_pod_workload_fields(spec: Any) -> None:
    """A pod's ``workloadRef`` (1.35) and ``schedulingGroup`` (1.36)."""
    ref = spec.workload_ref
    if ref is not None:
        if not ref.name:
            raise _required("spec.workloadRef.name")
        errs = dns1123_subdomain_errors(ref.name)
        if errs:
            raise invalid("spec.workloadRef.name", ref.name, errs[0])
        if not ref.pod_group:
            raise _required("spec.workloadRef.podGroup")
        for fld, value in (("podGroup", ref.pod_group), ("podGroupReplicaKey", ref.pod_group_replica_key)):
            if value:
                errs = dns1123_label_errors(value)
                if errs:
                    raise invalid(f"spec.workloadRef.{fld}", value, errs[0])
    group = spec.scheduling_group
    if group is not None:
        if group.pod_group_name is None:
            raise _required("spec.schedulingGroup", "must specify one of: `podGroupName`")
        errs = dns1123_subdomain_errors(group.pod_group_name) if group.pod_group_name else ["must be non-empty"]
        if errs:
            raise invalid("spec.schedulingGroup.podGroupName", group.pod_group_name, errs[0])


_IMMUTABLE = "field is immutable"


def check_workload_update(old: Workload, new: Workload) -> None:
    """``ValidateWorkloadUpdate``: controllerRef (once set) and the groups are immutable."""
    if old.spec.controller_ref is not None and old.spec.controller_ref != new.spec.controller_ref:
        raise ConfigError(f"Invalid value: {_IMMUTABLE}", field="spec.controllerRef")
    if old.api_version == WORKLOAD_API_V1ALPHA1:
        if old.spec.pod_groups != new.spec.pod_groups:
            raise ConfigError(f"Invalid value: {_IMMUTABLE}", field="spec.podGroups")
    elif old.spec.pod_group_templates != new.spec.pod_group_templates:
        raise ConfigError(f"Invalid value: {_IMMUTABLE}", field="spec.podGroupTemplates")


def check_scheduling_pod_group_update(old: SchedulingPodGroup, new: SchedulingPodGroup) -> None:
    """``ValidatePodGroupUpdate`` (v1alpha2): the spec is immutable."""
    for f in old.spec.__struct_fields__:
        if getattr(old.spec, f) != getattr(new.spec, f):
            camel = new.spec.__struct_encode_fields__[new.spec.__struct_fields__.index(f)]
            raise ConfigError(f"Invalid value: {_IMMUTABLE}", field=f"spec.{camel}")


__all__ = [
    "check_pod_workload_fields",
    "check_policy",
    "check_preemption_fields",
    "check_scheduling_pod_group",
    "check_scheduling_pod_group_update",
    "check_workload",
    "check_workload_update",
]
