"""Which field selector labels each kind serves, and where a label's value lives in the wire form.

Upstream checks every requirement of a field selector with the kind's field label conversion
(``Scheme.ConvertFieldLabel``: the functions registered with ``AddFieldLabelConversionFunc`` in
pkg/apis/<group>/<version>/conversion.go) and answers 400 with the function's error when it
refuses a label; a kind without one takes ``runtime.DefaultMetaV1FieldSelectorConversion``
(metadata.name and metadata.namespace), a custom resource its CRD converter's (metadata.name, and
metadata.namespace when namespaced).  The object is then matched on its selectable fields (the
registry strategy's ``ToSelectableFields``), which set every label they serve: a bool or a count
that is not in the object reads ``false`` or ``0``, not empty.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._resource import ResourceSpec

__all__ = ["FieldLabels", "field_labels"]


@dataclass(frozen=True)
class FieldLabels:
    """A kind's field labels: label → (path in the wire form, value when the path is absent)."""

    labels: dict[str, tuple[str, str]]
    refuse: Callable[[str], str] = field(
        default=lambda label: f"field label not supported: {label}"
    )
    fallbacks: dict[str, str] = field(default_factory=dict)
    """label → a second path, read when the first is empty (a core Event's ``source``)."""

    def resolve(self, label: str) -> tuple[str, str, str]:
        """(path, default, fallback path) of ``label``; ValueError with upstream's message when the
        kind does not serve it."""
        if label not in self.labels:
            raise ValueError(self.refuse(label))
        path, default = self.labels[label]
        return path, default, self.fallbacks.get(label, "")


def _meta(namespaced: bool) -> dict[str, tuple[str, str]]:
    out = {"metadata.name": ("metadata.name", "")}
    if namespaced:
        out["metadata.namespace"] = ("metadata.namespace", "")
    return out


def _same(*labels: str) -> dict[str, tuple[str, str]]:
    return {label: (label, "") for label in labels}


_INVOLVED = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")

_TABLE: dict[tuple[str, str], FieldLabels] = {
    # pkg/apis/core/v1/conversion.go
    ("", "pods"): FieldLabels(
        {
            **_meta(True),
            **_same(
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            ),
            "spec.hostNetwork": ("spec.hostNetwork", "false"),
            "spec.host": ("spec.nodeName", ""),  # old v1 clients' name of spec.nodeName
            "status.podIPs": ("", ""),  # converted, never a selectable field: matches only ""
        }
    ),
    ("", "nodes"): FieldLabels(
        {**_meta(False), "spec.unschedulable": ("spec.unschedulable", "false")}
    ),
    ("", "replicationcontrollers"): FieldLabels(
        {**_meta(True), "status.replicas": ("status.replicas", "0")}
    ),
    ("", "events"): FieldLabels(
        {
            **_meta(True),
            **_same(
                *(f"involvedObject.{k}" for k in _INVOLVED), "reason", "reportingComponent", "type"
            ),
            "source": ("source.component", ""),
        },
        fallbacks={"source": "reportingComponent"},
    ),
    ("", "namespaces"): FieldLabels({**_meta(False), **_same("status.phase")}),
    ("", "secrets"): FieldLabels({**_meta(True), **_same("type")}),
    ("", "services"): FieldLabels({**_meta(True), **_same("spec.clusterIP", "spec.type")}),
    # pkg/apis/events/v1/conversion.go: the events.k8s.io names of the core Event's fields
    ("events.k8s.io", "events"): FieldLabels(
        {
            **_meta(True),
            **{f"regarding.{k}": (f"regarding.{k}", "") for k in _INVOLVED},
            **_same("reason", "reportingController", "type"),
            "source": ("deprecatedSource.component", ""),
        },
        fallbacks={"source": "reportingController"},
    ),
    # pkg/apis/batch/v1/conversion.go (Job's status.successful is its status.succeeded)
    ("batch", "jobs"): FieldLabels(
        {**_meta(True), "status.successful": ("status.succeeded", "0")},
        refuse=lambda label: f'field label "{label}" not supported for batchv1.Job',
    ),
    # pkg/apis/resource/v1/conversion.go
    ("resource.k8s.io", "resourceslices"): FieldLabels(
        {**_meta(False), **_same("spec.nodeName", "spec.driver")},
        refuse=lambda label: (
            f"field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: {label}"
        ),
    ),
}

# runtime.DefaultMetaV1FieldSelectorConversion
_DEFAULT = FieldLabels(
    _meta(True),
    refuse=lambda label: (
        f'"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"'
    ),
)


def field_labels(spec: ResourceSpec) -> FieldLabels:
    """The field labels ``spec``'s kind serves."""
    known = _TABLE.get((spec.group, spec.plural))
    if known is not None:
        return known
    if spec.crd:  # the CRD's converter: no selectableFields declared
        return FieldLabels(_meta(spec.namespaced))
    return _DEFAULT
