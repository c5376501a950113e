"""Object validation: the field checks the API server makes when an object is created.

Both manifest loading (``kubesched simulate``) and the fake API server (``transports/apiserver``)
apply them.  Each error is one :class:`ConfigError` naming the field, in upstream's words.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ._errors import ConfigError
from ._objects import Node, Pod, PodGroup
from ._resources import QuantityError, parse_quantity


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


def _check_node_selector_term(term: Any, path: str) -> None:
    _check_node_selector_requirements(term.match_expressions, f"{path}.matchExpressions")
    _check_node_selector_requirements(term.match_fields, f"{path}.matchFields")


def _check_label_selector(sel: Any, path: str) -> None:
    """``ValidateLabelSelectorRequirement``."""
    if sel is None:
        return
    for i, r in enumerate(sel.match_expressions):
        p = f"{path}.matchExpressions[{i}]"
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
        _check_label_selector(term.label_selector, f"{path}.{req}[{i}].labelSelector")
        _check_label_selector(term.namespace_selector, f"{path}.{req}[{i}].namespaceSelector")
    for i, wt in enumerate(aff.preferred_during_scheduling_ignored_during_execution):
        term = wt.pod_affinity_term
        _check_label_selector(term.label_selector, f"{path}.{pref}[{i}].podAffinityTerm.labelSelector")
        _check_label_selector(term.namespace_selector, f"{path}.{pref}[{i}].podAffinityTerm.namespaceSelector")


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


def _check_pod_spec(pod: Pod) -> None:
    spec = pod.spec
    for group, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, c in enumerate(containers):
            _check_quantities(c.resources.requests, f"spec.{group}[{i}].resources.requests")
            _check_quantities(c.resources.limits, f"spec.{group}[{i}].resources.limits")
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
    if not obj.metadata.name:
        raise ConfigError("Required value: name or generateName is required", field="metadata.name")
    if kind == "Pod":
        _check_pod_spec(obj)
    elif kind == "PodDisruptionBudget":
        _check_label_selector(obj.spec.selector, "spec.selector")
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


__all__ = ["go_quote", "validate_object"]
