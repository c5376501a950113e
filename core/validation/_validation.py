"""Object validation: the field checks the API server makes when an object is created.

Both manifest loading (``kubesched simulate``) and the fake API server (``transports/apiserver``)
apply them, through :func:`validate_object`.  Each error is one :class:`ConfigError` naming the
field, in upstream's words.  The checks live in four modules, each building on the ones before:

    _validation_base     names, labels, selectors, resource names and quantities, error shapes
    _validation_storage  the storage kinds (PV, PVC, StorageClass, CSINode, CSIDriver,
                         CSIStorageCapacity), a pod's volumes, claim specs
    _validation_pod      a pod's spec (ValidatePodSpec), also a workload's pod template
    _validation          (here) every kind: metadata, Pod, Node, PriorityClass,
                         PodDisruptionBudget, PodGroup, StatefulSet; the Priority admission's
                         agreement rule
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._objects import (
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
    StatefulSet,
    Taint,
)
from kubesched.api._workload import SCHEDULING_POD_GROUP_KIND
from kubesched.validation._base import (
    check_label_selector,
    check_quantities,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
    invalid,
    label_value_errors,
    not_supported,
    qualified_errors,
    supported,
    validate_labels,
    validate_name,
    validate_namespace_name,
)
from kubesched.validation._dra import CLUSTER_SCOPED as _DRA_CLUSTER_SCOPED
from kubesched.validation._dra import KINDS as _DRA_KINDS
from kubesched.validation._dra import check_dra_object
from kubesched.validation._pod import check_pod_spec
from kubesched.validation._storage import CLUSTER_SCOPED as _STORAGE_CLUSTER_SCOPED
from kubesched.validation._storage import (
    check_claim_spec,
    check_storage_object,
    check_volume_attributes_class,
)
from kubesched.validation._workload import (
    check_pod_workload_fields,
    check_scheduling_pod_group,
    check_workload,
)

_PERCENT = re.compile(r"[0-9]+%")
# PriorityClass bounds (pkg/apis/scheduling): the built-in classes, and the user-definable maximum
# (there is no minimum: a negative value is a valid priority)
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
_CLUSTER_SCOPED = ("Node", "PriorityClass", *_STORAGE_CLUSTER_SCOPED, *_DRA_CLUSTER_SCOPED)
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# apimachinery ValidateAnnotations: keys and values together
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)

_check_pod_spec = check_pod_spec  # the name manifest loading imports for a workload's pod template

_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def _check_time(value: str | None, fld: str) -> None:
    """A ``metav1.Time``: RFC 3339, as Go's ``time.Parse(time.RFC3339, ...)`` takes it."""
    if value is None:
        return
    ok = _RFC3339.fullmatch(value) is not None
    if ok:
        try:
            datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
        except ValueError:
            ok = False
    if not ok:
        raise invalid(fld, value, f'parsing time {go_quote(value)} as "2006-01-02T15:04:05Z07:00": not an RFC 3339 time')


def _validate_meta(obj: Any, kind: str) -> None:
    """``ValidateObjectMeta``: name, namespace (namespaced kinds only), labels, annotations (keys,
    and at most 256 KiB of keys and values together)."""
    md = obj.metadata
    validate_name(kind, md.name)
    if kind in _CLUSTER_SCOPED:
        if md.namespace:
            raise ConfigError("Forbidden: not allowed on this type", field="metadata.namespace")
    elif md.namespace:
        validate_namespace_name(md.namespace)
    _check_time(md.creation_timestamp, "metadata.creationTimestamp")
    _check_time(md.deletion_timestamp, "metadata.deletionTimestamp")
    validate_labels(md.labels, "metadata.labels")
    size = 0
    for k, v in md.annotations.items():
        errs = qualified_errors(k.lower())
        if errs:
            raise invalid("metadata.annotations", k, errs[0])
        size += len(k.encode("utf-8", "surrogatepass")) + len(v.encode("utf-8", "surrogatepass"))
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        raise ConfigError(f"Too long: must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes", field="metadata.annotations")


def validate_object(obj: Any, kind: str, *, preemption_fields: bool = True, label_keys: bool = True,
                    vac_fields: bool = True) -> None:  # fmt: skip
    """Check ``obj`` (of ``kind``) as the API server does on create; fill a Node's allocatable
    from its capacity when only the capacity is given.  ``preemption_fields=False`` leaves out a
    PodGroup's or Workload's fields that WorkloadAwarePreemption guards, ``label_keys=False`` a
    pod's matchLabelKeys / mismatchLabelKeys in its pod (anti-)affinity terms, which
    MatchLabelKeysInPodAffinity guards, ``vac_fields=False`` the volumeAttributesClassName of a
    claim, a volume or a StatefulSet's claim templates, which VolumeAttributesClass guards (for a
    caller that knows the gates only later: the API server drops them before validating when the
    gate is off; :mod:`kubesched.scenario._gatedfields`)."""
    _validate_meta(obj, kind)
    if kind == "Pod":
        check_pod_spec(obj, label_keys=label_keys)
        if obj.spec.workload_ref is not None or obj.spec.scheduling_group is not None:
            check_pod_workload_fields(obj.spec)
        if obj.spec.node_name and obj.spec.scheduling_gates:  # ValidatePodCreate
            raise ConfigError("Forbidden: cannot be set until all schedulingGates have been cleared", field="spec.nodeName")
        _check_time(obj.status.start_time, "status.startTime")
        for i, c in enumerate(obj.status.conditions):
            _check_time(c.last_transition_time, f"status.conditions[{i}].lastTransitionTime")
            _check_time(c.last_probe_time, f"status.conditions[{i}].lastProbeTime")
    elif kind == "PodDisruptionBudget":
        _check_pdb(obj)
    elif kind == "PriorityClass":
        _check_priority_class(obj)
    elif kind == "Node":
        _check_node(obj)
    elif kind == "PodGroup":
        _check_pod_group(obj)
    elif kind == "StatefulSet":
        _check_stateful_set(obj)
        if vac_fields:
            check_volume_attributes_class(obj, kind)
    elif kind == "Workload":
        check_workload(obj, preemption_fields=preemption_fields)
    elif kind == SCHEDULING_POD_GROUP_KIND:
        check_scheduling_pod_group(obj, preemption_fields=preemption_fields)
    elif kind in _DRA_KINDS:
        check_dra_object(obj, kind)
    elif check_storage_object(obj, kind) and vac_fields:
        check_volume_attributes_class(obj, kind)


def _go_labels(labels: dict[str, str]) -> str:
    """A label map as Go's ``%#v`` prints it (keys sorted)."""
    items = ", ".join(f"{go_quote(k)}:{go_quote(v)}" for k, v in sorted(labels.items()))
    return f"map[string]string{{{items}}}"


def _check_stateful_set(sts: StatefulSet) -> None:
    """``ValidateStatefulSetSpec``: the pod management policy, replicas and the first ordinal not
    negative, a selector (not empty) matching the template's labels, the template (a pod's
    spec, restartPolicy Always, no activeDeadlineSeconds), the claim retention policy; and, as
    the claims the controller makes of them would be checked, each volume claim template named
    and valid."""
    spec = sts.spec
    policy = spec.pod_management_policy
    if not policy:
        raise ConfigError("Required value", field="spec.podManagementPolicy")
    if policy not in ("OrderedReady", "Parallel"):
        raise invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
    strategy = spec.update_strategy  # an empty type is defaulted to RollingUpdate (SetDefaults_StatefulSet)
    if strategy.type not in ("", "RollingUpdate", "OnDelete"):
        # field.Invalid of the struct, printed as %#v (a set rollingUpdate is a pointer: its address)
        rolling = "nil" if strategy.rolling_update is None else "0xc000000000"
        raise ConfigError(
            f'Invalid value: apps.StatefulSetUpdateStrategy{{Type:"{strategy.type}", '
            f"RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)({rolling})}}: must be 'RollingUpdate' or 'OnDelete'",
            field="spec.updateStrategy",
        )
    if spec.replicas is not None and spec.replicas < 0:
        raise invalid("spec.replicas", spec.replicas, "must be greater than or equal to 0")
    if spec.min_ready_seconds < 0:
        raise invalid("spec.minReadySeconds", spec.min_ready_seconds, "must be greater than or equal to 0")
    if spec.ordinals is not None and spec.ordinals.start < 0:
        raise invalid("spec.ordinals.start", spec.ordinals.start, "must be greater than or equal to 0")
    sel = spec.selector
    if sel is None:
        raise ConfigError("Required value", field="spec.selector")
    check_label_selector(sel, "spec.selector")
    if not sel.match_labels and not sel.match_expressions:
        raise ConfigError(
            "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset",
            field="spec.selector",
        )
    from kubesched.api._labels import selector_matches

    tmpl = spec.template
    if not selector_matches(sel, tmpl.metadata.labels):
        raise ConfigError(
            f"Invalid value: {_go_labels(tmpl.metadata.labels)}: `selector` does not match template `labels`",
            field="spec.template.metadata.labels",
        )
    validate_labels(tmpl.metadata.labels, "spec.template.labels")
    try:
        check_pod_spec(Pod(metadata=tmpl.metadata, spec=tmpl.spec))
    except ConfigError as e:
        raise e.at(field="spec.template") from None
    if tmpl.spec.restart_policy != "Always":
        raise not_supported("spec.template.spec.restartPolicy", tmpl.spec.restart_policy, ("Always",))
    if tmpl.spec.active_deadline_seconds is not None:
        raise ConfigError(
            "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported",
            field="spec.template.spec.activeDeadlineSeconds",
        )
    retention = spec.persistent_volume_claim_retention_policy
    if retention is not None:
        for fld, value in (("whenDeleted", retention.when_deleted), ("whenScaled", retention.when_scaled)):
            if value not in ("Retain", "Delete"):
                raise not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{fld}", value, ("Retain", "Delete"))
    for i, claim in enumerate(spec.volume_claim_templates):
        p = f"spec.volumeClaimTemplates[{i}]"
        if not claim.metadata.name:
            raise ConfigError("Required value", field=f"{p}.metadata.name")
        errs = dns1123_subdomain_errors(claim.metadata.name)
        if errs:
            raise invalid(f"{p}.metadata.name", claim.metadata.name, errs[0])
        validate_labels(claim.metadata.labels, f"{p}.metadata.labels")
        check_claim_spec(claim.spec, f"{p}.spec")


def _taint_go(t: Taint) -> str:
    """A taint as ``%#v`` prints a ``core.Taint``."""
    added = "(*v1.Time)(nil)" if t.time_added is None else f"(*v1.Time)({go_quote(t.time_added)})"
    return f"core.Taint{{Key:{go_quote(t.key)}, Value:{go_quote(t.value)}, Effect:{go_quote(t.effect)}, TimeAdded:{added}}}"


def _check_node(node: Node) -> None:
    """``ValidateNode``: taints (``validateNodeTaints``: a label key and value, an effect, unique
    by key and effect), and capacity / allocatable quantities (``ValidateNodeResources``)."""
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(node.spec.taints):
        p = f"spec.taints[{i}]"  # upstream reports metadata.taints[i]: kubesched names the field written
        errs = qualified_errors(taint.key)
        if errs:
            raise invalid(f"{p}.key", taint.key, errs[0])
        errs = label_value_errors(taint.value)
        if errs:
            raise invalid(f"{p}.value", taint.value, ";".join(errs))
        if not taint.effect:
            raise ConfigError("Required value", field=f"{p}.effect")
        if taint.effect not in _TAINT_EFFECTS:
            raise ConfigError(
                f"Unsupported value: {go_quote(taint.effect)}: supported values: {supported(_TAINT_EFFECTS)}",
                field=f"{p}.effect",
            )
        if (taint.key, taint.effect) in seen:
            raise ConfigError(
                f"Duplicate value: {_taint_go(taint)}: taints must be unique by key and effect pair", field=p
            )
        seen.add((taint.key, taint.effect))
    check_quantities(node.status.capacity, "status.capacity", integers=True)
    check_quantities(node.status.allocatable, "status.allocatable", integers=True)
    if not node.status.allocatable and node.status.capacity:
        node.status.allocatable = dict(node.status.capacity)


def _check_pod_group(pg: PodGroup) -> None:
    """A PodGroup (scheduling.x-k8s.io/v1alpha1).  The CRD bounds neither field; kubesched refuses
    a group that could never run (minMember below 1) and a negative scheduleTimeoutSeconds, with
    which every member's Permit wait times out at once and the gang retries at one instant
    forever."""
    check_quantities(pg.spec.min_resources, "spec.minResources")
    if pg.spec.min_member < 1:
        raise invalid("spec.minMember", pg.spec.min_member, "must be at least 1")
    timeout = pg.spec.schedule_timeout_seconds
    if timeout is not None and timeout < 0:
        raise invalid("spec.scheduleTimeoutSeconds", timeout, "must be greater than or equal to 0")


def _check_pdb(pdb: PodDisruptionBudget) -> None:
    """``ValidatePodDisruptionBudgetSpec``."""
    spec = pdb.spec
    if spec.min_available is not None and spec.max_unavailable is not None:
        raise ConfigError("Invalid value: minAvailable and maxUnavailable cannot be both set", field="spec")
    for fld, v in (("spec.minAvailable", spec.min_available), ("spec.maxUnavailable", spec.max_unavailable)):
        if v is None:
            continue
        if isinstance(v, int):
            if v < 0:
                raise invalid(fld, v, "must be greater than or equal to 0")
            continue
        if not _PERCENT.fullmatch(v):
            raise invalid(
                fld, v,
                "a valid percent string must be a numeric string followed by an ending '%' "
                "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            )
        if int(v[:-1]) > 100:
            raise invalid(fld, v, "must not be greater than 100%")
    check_label_selector(spec.selector, "spec.selector")


def _check_priority_class(pc: PriorityClass) -> None:
    """``ValidatePriorityClass``: ``system-`` names are the built-in classes only; others at most 1e9."""
    name = pc.metadata.name
    if name.startswith("system-"):
        known = SYSTEM_PRIORITY_CLASSES.get(name)
        if known is None:
            why = f"{name} is not a known system priority class"
        elif pc.value != known:
            why = f"value of {name} PriorityClass must be {known}"
        else:
            return
        raise ConfigError(
            f"Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: {why}",
            field="metadata.name",
        )
    if pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        raise ConfigError(
            f"Forbidden: maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
            field="value",
        )
    if pc.preemption_policy is not None:  # ValidatePreemptionPolicy
        if not pc.preemption_policy:
            raise ConfigError("Required value", field="preemptionPolicy")
        if pc.preemption_policy not in ("PreemptLowerPriority", "Never"):
            raise not_supported("preemptionPolicy", pc.preemption_policy, ("PreemptLowerPriority", "Never"))


def check_priority_admission(pod: Pod, pc: PriorityClass | None, *, source: str = "") -> None:
    """The Priority admission plugin's agreement rule (plugin/pkg/admission/priority): a pod that
    names a PriorityClass may give ``spec.priority`` / ``spec.preemptionPolicy`` only as the
    class resolves them.  ``pc`` is the named class (None for a built-in ``system-`` class, or
    for no class: kubesched then takes ``spec.priority`` as given, its documented input)."""
    name = pod.spec.priority_class_name
    if not name:
        return
    if pc is not None:
        value, policy = pc.value, pc.preemption_policy or "PreemptLowerPriority"
    elif name in SYSTEM_PRIORITY_CLASSES:
        value, policy = SYSTEM_PRIORITY_CLASSES[name], "PreemptLowerPriority"
    else:
        return
    spec = pod.spec
    if spec.priority is not None and spec.priority != value:
        raise ConfigError(
            f"the integer value of priority ({spec.priority}) must not be provided in pod spec; priority admission "
            f"controller computed {value} from the given PriorityClass name",
            field="spec.priority",
            source=source,
        )
    if spec.preemption_policy is not None and spec.preemption_policy != policy:
        raise ConfigError(
            f"the string value of PreemptionPolicy ({spec.preemption_policy}) must not be provided in pod spec; "
            f"priority admission controller computed {policy} from the given PriorityClass name",
            field="spec.preemptionPolicy",
            source=source,
        )


__all__ = [
    "SYSTEM_PRIORITY_CLASSES",
    "check_priority_admission",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "go_quote",
    "label_value_errors",
    "validate_labels",
    "validate_name",
    "validate_namespace_name",
    "validate_object",
]
