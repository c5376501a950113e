"""Object validation: the field checks the API server makes when an object is created.

Both manifest loading (``kubesched simulate``) and the fake API server (``transports/apiserver``)
apply them.  Each error is one :class:`ConfigError` naming the field, in upstream's words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ._errors import ConfigError
from ._helpers import qualified_name_errors
from ._objects import Node, Pod, PodDisruptionBudget, PodGroup, PriorityClass
from ._resources import QuantityError, parse_quantity

# --- names (k8s.io/apimachinery/pkg/util/validation) ------------------------------------------

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_PERCENT = re.compile(r"[0-9]+%")
DNS1123_LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN_ERROR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_VALUE_ERROR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
# PriorityClass bounds (pkg/apis/scheduling): the built-in classes, and the user-definable maximum
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
_CLUSTER_SCOPED = ("Node", "PriorityClass")


def dns1123_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label``."""
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _DNS1123_LABEL.fullmatch(value):
        errs.append(DNS1123_LABEL_ERROR)
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    errs = ["must be no more than 253 characters"] if len(value) > 253 else []
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(DNS1123_SUBDOMAIN_ERROR)
    return errs


def label_value_errors(value: str) -> list[str]:
    """``IsValidLabelValue``."""
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(LABEL_VALUE_ERROR)
    return errs


def _qualified(value: str) -> list[str]:
    # the shared helper matches with ``$`` (which takes a trailing newline): refuse one here
    errs = qualified_name_errors(value)
    if not errs and ("\n" in value or "\r" in value):
        errs = qualified_name_errors(value.strip() + " ")
    return errs


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
        raise _invalid(fld, value, f'parsing time {go_quote(value)} as "2006-01-02T15:04:05Z07:00": not an RFC 3339 time')


def _invalid(fld: str, value: Any, msg: str) -> ConfigError:
    return ConfigError(f"Invalid value: {go_quote(value)}: {msg}", field=fld)


def validate_name(kind: str, name: Any, fld: str = "metadata.name") -> None:
    """The object name rule upstream applies to ``kind`` (all kubesched reads: DNS-1123 subdomains)."""
    if not name:
        raise ConfigError("Required value: name or generateName is required", field=fld)
    errs = dns1123_subdomain_errors(name)
    if errs:
        raise _invalid(fld, name, errs[0])


def validate_namespace_name(namespace: str, fld: str = "metadata.namespace") -> None:
    """``ValidateNamespaceName``: a DNS-1123 label."""
    errs = dns1123_label_errors(namespace)
    if errs:
        raise _invalid(fld, namespace, errs[0])


def validate_labels(labels: Any, fld: str) -> None:
    """``ValidateLabels``: qualified-name keys, label values."""
    for k, v in labels.items():
        errs = _qualified(k)
        if errs:
            raise _invalid(fld, k, errs[0])
        errs = label_value_errors(v)
        if errs:
            raise _invalid(fld, v, errs[0])


def _validate_meta(obj: Any, kind: str) -> None:
    """``ValidateObjectMeta``: name, namespace (namespaced kinds only), labels, annotation keys."""
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
    for k in md.annotations:
        errs = _qualified(k.lower())
        if errs:
            raise _invalid("metadata.annotations", k, errs[0])


def go_quote(value: Any) -> str:
    """A value as Go's field errors print it (strings quoted with double quotes)."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


def _supported(values: Iterable[str]) -> str:
    return ", ".join(go_quote(v) for v in sorted(values))


_NODE_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _check_node_selector_requirements(reqs: Any, path: str) -> None:
    """``ValidateNodeSelectorRequirement``."""
    for i, r in enumerate(reqs):
        p = f"{path}[{i}]"
        if r.operator in ("In", "NotIn") and not r.values:
            raise ConfigError("Required value: must be specified when `operator` is 'In' or 'NotIn'", field=f"{p}.values")
        if r.operator in ("Exists", "DoesNotExist") and r.values:
            raise ConfigError(
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'", field=f"{p}.values"
            )
        if r.operator in ("Gt", "Lt") and len(r.values) != 1:
            raise ConfigError(
                "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'", field=f"{p}.values"
            )
        if r.operator not in _NODE_SELECTOR_OPS:
            raise ConfigError(
                f"Unsupported value: {go_quote(r.operator)}: supported values: {_supported(_NODE_SELECTOR_OPS)}",
                field=f"{p}.operator",
            )
        if path.endswith("matchExpressions"):  # a label key (matchFields name object fields)
            errs = _qualified(r.key)
            if errs:
                raise _invalid(f"{p}.key", r.key, errs[0])


def _check_node_selector_term(term: Any, path: str) -> None:
    _check_node_selector_requirements(term.match_expressions, f"{path}.matchExpressions")
    _check_node_selector_requirements(term.match_fields, f"{path}.matchFields")


def _check_label_selector(sel: Any, path: str) -> None:
    """``ValidateLabelSelectorRequirement``."""
    if sel is None:
        return
    validate_labels(sel.match_labels, f"{path}.matchLabels")
    for i, r in enumerate(sel.match_expressions):
        p = f"{path}.matchExpressions[{i}]"
        errs = _qualified(r.key)
        if errs:
            raise _invalid(f"{p}.key", r.key, errs[0])
        for v in r.values:
            verrs = label_value_errors(v)
            if verrs:
                raise _invalid(f"{p}.values", v, verrs[0])
        if r.operator in ("In", "NotIn"):
            if not r.values:
                raise ConfigError(
                    "Required value: must be specified when `operator` is 'In' or 'NotIn'", field=f"{p}.values"
                )
        elif r.operator in ("Exists", "DoesNotExist"):
            if r.values:
                raise ConfigError(
                    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    field=f"{p}.values",
                )
        else:
            raise ConfigError(f"Invalid value: {go_quote(r.operator)}: not a valid selector operator", field=f"{p}.operator")


def _check_pod_affinity(aff: Any, path: str) -> None:
    if aff is None:
        return
    req = "requiredDuringSchedulingIgnoredDuringExecution"
    pref = "preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(aff.required_during_scheduling_ignored_during_execution):
        _check_pod_affinity_term(term, f"{path}.{req}[{i}]")
    for i, wt in enumerate(aff.preferred_during_scheduling_ignored_during_execution):
        _check_weight(wt.weight, f"{path}.{pref}[{i}].weight")
        _check_pod_affinity_term(wt.pod_affinity_term, f"{path}.{pref}[{i}].podAffinityTerm")


def _check_pod_affinity_term(term: Any, path: str) -> None:
    """``validatePodAffinityTerm``."""
    _check_label_selector(term.label_selector, f"{path}.labelSelector")
    _check_label_selector(term.namespace_selector, f"{path}.namespaceSelector")
    for name in term.namespaces:
        validate_namespace_name(name, f"{path}.namespace")
    if not term.topology_key:
        raise ConfigError("Required value: can not be empty", field=f"{path}.topologyKey")
    errs = _qualified(term.topology_key)
    if errs:
        raise _invalid(f"{path}.topologyKey", term.topology_key, errs[0])


def _check_tolerations(tolerations: Any, path: str) -> None:
    """``validateTolerations``."""
    for i, t in enumerate(tolerations):
        p = f"{path}[{i}]"
        if not t.key and t.operator != "Exists":
            raise ConfigError(
                f'Invalid value: {go_quote(t.operator)}: operator must be Exists when `key` is empty, which means '
                '"match all values and all keys"',
                field=f"{p}.operator",
            )
        if t.operator == "Exists" and t.value:
            raise ConfigError(
                f"Invalid value: {go_quote(t.value)}: value must be empty when `operator` is 'Exists'", field=f"{p}.operator"
            )
        if t.operator not in ("", "Equal", "Exists"):
            raise ConfigError(
                f'Unsupported value: {go_quote(t.operator)}: supported values: "Equal", "Exists"', field=f"{p}.operator"
            )
        if t.effect and t.effect not in _TAINT_EFFECTS:
            raise ConfigError(
                f"Unsupported value: {go_quote(t.effect)}: supported values: {_supported(_TAINT_EFFECTS)}",
                field=f"{p}.effect",
            )


def _check_containers(spec: Any) -> None:
    """``validateContainers`` / ``validateInitContainers``: names, ports, requests within limits."""
    if not spec.containers:
        raise ConfigError("Required value", field="spec.containers")
    names: set[str] = set()
    for group, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, c in enumerate(containers):
            p = f"spec.{group}[{i}]"
            if not c.name:
                raise ConfigError("Required value", field=f"{p}.name")
            errs = dns1123_label_errors(c.name)
            if errs:
                raise _invalid(f"{p}.name", c.name, errs[0])
            if c.name in names:
                raise ConfigError(f"Duplicate value: {go_quote(c.name)}", field=f"{p}.name")
            names.add(c.name)
            for j, port in enumerate(c.ports):
                if not 1 <= port.container_port <= 65535:
                    raise _invalid(f"{p}.ports[{j}].containerPort", port.container_port, "must be between 1 and 65535, inclusive")
                if port.host_port and not 1 <= port.host_port <= 65535:
                    raise _invalid(f"{p}.ports[{j}].hostPort", port.host_port, "must be between 1 and 65535, inclusive")
            _check_quantities(c.resources.requests, f"{p}.resources.requests")
            _check_quantities(c.resources.limits, f"{p}.resources.limits")
            limits = c.resources.limits or {}
            for name, req in (c.resources.requests or {}).items():
                if name in limits and parse_quantity(req) > parse_quantity(limits[name]):
                    raise _invalid(
                        f"{p}.resources.requests[{name}]", str(req),
                        f"must be less than or equal to {name} limit of {limits[name]}",
                    )


def _check_topology_spread(spec: Any) -> None:
    """``validateTopologySpreadConstraints``."""
    for i, c in enumerate(spec.topology_spread_constraints):
        p = f"spec.topologySpreadConstraints[{i}]"
        if c.max_skew <= 0:
            raise _invalid(f"{p}.maxSkew", c.max_skew, "must be greater than zero")
        if not c.topology_key:
            raise ConfigError("Required value: can not be empty", field=f"{p}.topologyKey")
        errs = _qualified(c.topology_key)
        if errs:
            raise _invalid(f"{p}.topologyKey", c.topology_key, errs[0])
        if c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            raise ConfigError(
                f'Unsupported value: {go_quote(c.when_unsatisfiable)}: supported values: "DoNotSchedule", "ScheduleAnyway"',
                field=f"{p}.whenUnsatisfiable",
            )
        if c.min_domains is not None:
            if c.min_domains <= 0:
                raise _invalid(f"{p}.minDomains", c.min_domains, "must be greater than 0")
            if c.when_unsatisfiable != "DoNotSchedule":
                raise _invalid(
                    f"{p}.minDomains", c.min_domains,
                    'can only use minDomains if whenUnsatisfiable="DoNotSchedule", not "ScheduleAnyway"',
                )
        for fld, policy in (("nodeAffinityPolicy", c.node_affinity_policy), ("nodeTaintsPolicy", c.node_taints_policy)):
            if policy is not None and policy not in ("Honor", "Ignore"):
                raise ConfigError(
                    f'Unsupported value: {go_quote(policy)}: supported values: "Honor", "Ignore"', field=f"{p}.{fld}"
                )


def _check_weight(weight: int, fld: str) -> None:
    if not 1 <= weight <= 100:
        raise _invalid(fld, weight, "must be in the range 1-100")


def _check_pod_spec(pod: Pod) -> None:
    spec = pod.spec
    _check_containers(spec)
    _check_topology_spread(spec)
    if spec.node_name:
        errs = dns1123_subdomain_errors(spec.node_name)
        if errs:
            raise _invalid("spec.nodeName", spec.node_name, errs[0])
    validate_labels(spec.node_selector, "spec.nodeSelector")
    if spec.termination_grace_period_seconds is not None and spec.termination_grace_period_seconds < 0:
        raise _invalid(
            "spec.terminationGracePeriodSeconds", spec.termination_grace_period_seconds,
            "must be greater than or equal to 0",
        )
    _check_quantities(spec.overhead, "spec.overhead")
    _check_tolerations(spec.tolerations, "spec.tolerations")
    aff = spec.affinity
    if aff is not None and aff.node_affinity is not None:
        na, p = aff.node_affinity, "spec.affinity.nodeAffinity"
        if na.required_during_scheduling_ignored_during_execution is not None:
            req = f"{p}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
            for i, term in enumerate(na.required_during_scheduling_ignored_during_execution.node_selector_terms):
                _check_node_selector_term(term, f"{req}[{i}]")
        for i, pt in enumerate(na.preferred_during_scheduling_ignored_during_execution):
            _check_weight(pt.weight, f"{p}.preferredDuringSchedulingIgnoredDuringExecution[{i}].weight")
            _check_node_selector_term(pt.preference, f"{p}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference")
    if aff is not None:
        _check_pod_affinity(aff.pod_affinity, "spec.affinity.podAffinity")
        _check_pod_affinity(aff.pod_anti_affinity, "spec.affinity.podAntiAffinity")
    for i, tsc in enumerate(spec.topology_spread_constraints):
        _check_label_selector(tsc.label_selector, f"spec.topologySpreadConstraints[{i}].labelSelector")


def _check_quantities(rl: Any, path: str) -> None:
    if not rl:
        return
    if not isinstance(rl, dict):
        raise ConfigError("must be a map of resource quantities", field=path)
    for name, value in rl.items():
        try:
            q = parse_quantity(value)
        except QuantityError as e:
            raise ConfigError(str(e), field=f"{path}.{name}") from None
        if q < 0:
            raise ConfigError(f"Invalid value: {go_quote(value)}: must be greater than or equal to 0", field=f"{path}.{name}")


def validate_object(obj: Any, kind: str) -> None:
    """Check ``obj`` (of ``kind``) as the API server does on create; fill a Node's allocatable
    from its capacity when only the capacity is given."""
    _validate_meta(obj, kind)
    if kind == "Pod":
        _check_pod_spec(obj)
        _check_time(obj.status.start_time, "status.startTime")
        for i, c in enumerate(obj.status.conditions):
            _check_time(c.last_transition_time, f"status.conditions[{i}].lastTransitionTime")
            _check_time(c.last_probe_time, f"status.conditions[{i}].lastProbeTime")
    elif kind == "PodDisruptionBudget":
        _check_pdb(obj)
    elif kind == "PriorityClass":
        _check_priority_class(obj)
    elif kind == "Node":
        node: Node = obj
        for i, taint in enumerate(node.spec.taints):
            if not taint.effect:
                raise ConfigError("Required value", field=f"spec.taints[{i}].effect")
            if taint.effect not in _TAINT_EFFECTS:
                raise ConfigError(
                    f"Unsupported value: {go_quote(taint.effect)}: supported values: {_supported(_TAINT_EFFECTS)}",
                    field=f"spec.taints[{i}].effect",
                )
        _check_quantities(node.status.allocatable, "status.allocatable")
        _check_quantities(node.status.capacity, "status.capacity")
        if not node.status.allocatable and node.status.capacity:
            node.status.allocatable = dict(node.status.capacity)
    elif kind == "PodGroup":
        pg: PodGroup = obj
        _check_quantities(pg.spec.min_resources, "spec.minResources")
        if pg.spec.min_member < 1:
            raise ConfigError(f"Invalid value: {pg.spec.min_member}: must be at least 1", field="spec.minMember")


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
                raise _invalid(fld, v, "must be greater than or equal to 0")
            continue
        if not _PERCENT.fullmatch(v):
            raise _invalid(
                fld, v,
                "a valid percent string must be a numeric string followed by an ending '%' "
                "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            )
        if int(v[:-1]) > 100:
            raise _invalid(fld, v, "must not be greater than 100%")
    _check_label_selector(spec.selector, "spec.selector")


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
    if pc.preemption_policy is not None and pc.preemption_policy not in ("Never", "PreemptLowerPriority"):
        raise ConfigError(
            f'Unsupported value: {go_quote(pc.preemption_policy)}: supported values: "Never", "PreemptLowerPriority"',
            field="preemptionPolicy",
        )


__all__ = [
    "SYSTEM_PRIORITY_CLASSES",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "go_quote",
    "label_value_errors",
    "validate_labels",
    "validate_name",
    "validate_namespace_name",
    "validate_object",
]
