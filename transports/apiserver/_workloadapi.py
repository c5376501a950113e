"""The Workload API (``scheduling.k8s.io``, KEP-4671) as the emulated release's API server serves
it, behind the GenericWorkload gate (alpha, off), as a real API server without the alpha API
enabled serves nothing of it (404, absent from discovery)::

    release  GenericWorkload on                            pod fields
    1.35     scheduling.k8s.io/v1alpha1 workloads          spec.workloadRef
             (k8s.io/api v0.35.0 scheduling/v1alpha1)
    1.36     scheduling.k8s.io/v1alpha2 workloads,         spec.schedulingGroup (workloadRef is
             podgroups (+ podgroups/status)                gone: protobuf tag 42 reserved)
             (k8s.io/api v0.36.0 scheduling/v1alpha2)
    other    nothing                                       neither

A pod field of another release is an unknown field (``fieldValidation``: Strict refuses it, Warn
warns, both drop it); a field of this release sent while GenericWorkload is off is dropped on
create (the pod strategy's ``dropDisabledPodFields``), so the pod reads back without it.

Neither kind has short names or categories (upstream's REST storage declares none), so the
scheduler-plugins PodGroup CRD (``scheduling.x-k8s.io``) keeps ``pg``.  A PodGroup is created
without the status its client sent, and without ``spec.schedulingConstraints`` unless
TopologyAwareWorkloadScheduling is on (the PodGroup strategy's PrepareForCreate).  While
WorkloadAwarePreemption is off, a PodGroup's ``spec`` and each of a Workload's
``spec.podGroupTemplates[]`` lose ``disruptionMode``, ``priorityClassName`` and ``priority`` on
create and update (the strategies' ``dropDisabledDisruptionModeField``,
``dropDisabledPriorityClassNameField``, ``dropDisabledPriorityField``: silently, so the
declarative ``+k8s:ifDisabled("WorkloadAwarePreemption")=+k8s:forbidden`` on those fields never
sees them; an old object keeps what it has, and with the gates fixed for a server's life an old
object never has them).  ``kubectl get
podgroups`` resolves by discovery order, built-in groups first (``_registry.GROUP_PRIORITY``),
to ``scheduling.k8s.io``'s.  Updates are validated as upstream's ``ValidateWorkloadUpdate``
(controllerRef, groups immutable) and ``ValidatePodGroupUpdate`` (spec immutable).  Both kinds'
Tables are the default printer's Name and Age, as upstream's printers have them
(``pkg/printers/internalversion/printers.go``: ``workloadColumnDefinitions``,
``podGroupColumnDefinitions``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import msgspec

from kubesched import ConfigError
from kubesched.api import SCHEDULING_POD_GROUP_KIND, SchedulingPodGroup, Workload, convert
from kubesched.framework import Version
from kubesched.validation import check_scheduling_pod_group_update, check_workload_update

from ._http import HTTPError, invalid
from ._resource import STATUS, ResourceSpec
from ._store import CLUSTER

__all__ = ["WORKLOAD_API_RESOURCES", "pod_fields", "pod_group_prepare_create", "served_rows"]

_V1_35 = Version(1, 35)
_V1_36 = Version(1, 36)
_GATE = "GenericWorkload"


def _update_check(struct: type[Any], check: Callable[[Any, Any], None]) -> Callable[[ResourceSpec, str, dict[str, Any], dict[str, Any]], None]:
    """A row's ``validate_update``: ``check`` over the old and new object (422 naming the field)."""

    def validate(spec: ResourceSpec, name: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        try:
            check(convert(old, struct), convert(new, struct))
        except msgspec.ValidationError as e:  # the stored object was decoded before: not expected
            raise HTTPError(500, "InternalError", f"Internal error occurred: {e}") from None
        except ConfigError as e:
            raise invalid(spec, name, e.field, e.message) from None

    return validate


WORKLOAD_API_RESOURCES: tuple[tuple[Version, ResourceSpec], ...] = (
    (
        _V1_35,
        ResourceSpec(
            "scheduling.k8s.io",
            "v1alpha1",
            "workloads",
            "Workload",
            namespaced=True,
            backend=CLUSTER,
            validate_update=_update_check(Workload, check_workload_update),
        ),
    ),
    (
        _V1_36,
        ResourceSpec(
            "scheduling.k8s.io",
            "v1alpha2",
            "workloads",
            "Workload",
            namespaced=True,
            backend=CLUSTER,
            validate_update=_update_check(Workload, check_workload_update),
        ),
    ),
    (
        _V1_36,
        ResourceSpec(
            "scheduling.k8s.io",
            "v1alpha2",
            "podgroups",
            "PodGroup",
            namespaced=True,
            subresources=STATUS,
            backend=CLUSTER,
            store=SCHEDULING_POD_GROUP_KIND,
            validate_update=_update_check(SchedulingPodGroup, check_scheduling_pod_group_update),
        ),
    ),
)
"""Each row of the Workload API with the release that serves it (with GenericWorkload on)."""

_POD_FIELDS: tuple[tuple[str, Version], ...] = (("workloadRef", _V1_35), ("schedulingGroup", _V1_36))
"""The pod's ``spec`` fields that point into the Workload API, with the release that has each."""


_PREEMPTION_GATE = "WorkloadAwarePreemption"
_PREEMPTION_FIELDS = ("disruptionMode", "priorityClassName", "priority")
"""The fields of a v1alpha2 PodGroup's spec and of a Workload's podGroupTemplates[] that are
"available only when the WorkloadAwarePreemption feature gate is enabled" (k8s.io/api v0.36.0
scheduling/v1alpha2 types.go)."""


def _drop_preemption_fields(body: dict[str, Any], *, workload: bool) -> None:
    """The PodGroup and Workload strategies' ``dropDisabled{DisruptionMode,PriorityClassName,
    Priority}Field`` with the gate off (the old object never has them: see the module doc): from
    a PodGroup's spec, or from each of a Workload's podGroupTemplates[]."""
    spec = body.get("spec")
    if not isinstance(spec, dict):
        return
    holders = [t for t in spec.get("podGroupTemplates") or () if isinstance(t, dict)] if workload else [spec]
    for holder in holders:
        for f in _PREEMPTION_FIELDS:
            holder.pop(f, None)


def served_rows(version: Version, gates: Mapping[str, bool]) -> list[ResourceSpec]:
    """The Workload API's rows ``version`` serves with ``gates`` (a PodGroup created as
    :func:`pod_group_prepare_create` says; without WorkloadAwarePreemption, PodGroups and v1alpha2
    Workloads lose its fields on create and update)."""
    if not gates.get(_GATE, False):
        return []
    preemption = bool(gates.get(_PREEMPTION_GATE, False))
    rows = []
    for at, row in WORKLOAD_API_RESOURCES:
        if at != version:
            continue
        pod_group = row.plural == "podgroups"
        if pod_group:
            row = replace(row, prepare_create=pod_group_prepare_create(gates))
        elif row.version == "v1alpha2" and not preemption:
            row = replace(row, prepare_create=_workload_prepare_create)
        if row.version == "v1alpha2" and not preemption:
            row = replace(row, prepare_update=_update_drop(workload=not pod_group))
        rows.append(row)
    return rows


def _workload_prepare_create(store: Any, body: dict[str, Any]) -> dict[str, Any]:
    _drop_preemption_fields(body, workload=True)
    return CLUSTER.prepare_create(store, body)


def _update_drop(*, workload: bool) -> Callable[[dict[str, Any], str], None]:
    def prepare_update(body: dict[str, Any], name: str) -> None:
        _drop_preemption_fields(body, workload=workload)

    return prepare_update


def pod_group_prepare_create(gates: Mapping[str, bool]) -> Callable[[Any, dict[str, Any]], dict[str, Any]]:
    """The PodGroup strategy's ``PrepareForCreate``: no status from the client, and without
    TopologyAwareWorkloadScheduling no ``spec.schedulingConstraints`` (``dropDisabledPodGroupFields``:
    the field "is only available when the TopologyAwareWorkloadScheduling feature gate is
    enabled", k8s.io/api v0.36.0 scheduling/v1alpha2), without WorkloadAwarePreemption none of
    its fields (:data:`_PREEMPTION_FIELDS`)."""
    topology = bool(gates.get("TopologyAwareWorkloadScheduling", False))
    preemption = bool(gates.get(_PREEMPTION_GATE, False))

    def prepare(store: Any, body: dict[str, Any]) -> dict[str, Any]:
        body.pop("status", None)
        spec = body.get("spec")
        if not topology and isinstance(spec, dict):
            spec.pop("schedulingConstraints", None)
        if not preemption:
            _drop_preemption_fields(body, workload=False)
        return body

    return prepare


def _pop(body: dict[str, Any], field: str) -> bool:
    spec = body.get("spec")
    if isinstance(spec, dict) and field in spec:
        del spec[field]
        return True
    return False


def pod_fields(pods: ResourceSpec, version: Version, gates: Mapping[str, bool]) -> ResourceSpec:
    """The pods row of a server emulating ``version`` with ``gates``: a Workload API field of
    another release is unknown to it, one of this release is dropped on create with the gate
    off."""
    enabled = bool(gates.get(_GATE, False))
    foreign = tuple(f for f, at in _POD_FIELDS if at != version)
    disabled = tuple(f for f, at in _POD_FIELDS if at == version and not enabled)

    def unknown(body: dict[str, Any]) -> list[str]:
        return [f"spec.{f}" for f in foreign if _pop(body, f)]

    prepare = pods.prepare_create

    def drop_disabled(store: Any, body: dict[str, Any]) -> dict[str, Any]:
        for f in disabled:
            _pop(body, f)
        return prepare(store, body) if prepare is not None else CLUSTER.prepare_create(store, body)

    return replace(pods, unknown_in_release=unknown, prepare_create=drop_disabled if disabled else prepare)
