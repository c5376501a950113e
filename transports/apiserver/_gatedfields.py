"""Fields a feature gate guards, as the emulated release's API server drops them on create.

While its gate is off, the strategies drop a field from a new object before it is validated, so
the object reads back without it:

    gate (default)                              field                              rows
    MatchLabelKeysInPodAffinity                 pod (anti-)affinity terms'         pods, the workloads'
      (alpha off 1.30, beta on 1.31)              matchLabelKeys, mismatchLabelKeys  pod templates
    MatchLabelKeysInPodTopologySpread (on)      spread constraints' matchLabelKeys  likewise
    NodeInclusionPolicyInPodTopologySpread (on) spread constraints' nodeAffinity-   likewise
                                                  Policy, nodeTaintsPolicy
    VolumeAttributesClass                       volumeAttributesClassName          claims, volumes,
      (beta off 1.31-1.33, GA on 1.34)                                             StatefulSets'
                                                                                   claim templates

(v1.30.6 ``pkg/api/pod/util.go`` ``dropDisabledMatchLabelKeysFieldInPodAffinity``,
``dropDisabledMatchLabelKeysFieldInTopologySpread``, ``dropDisabledNodeInclusionPolicyFields``;
the workloads' ``DropDisabledTemplateFields``; the PV, PVC and StatefulSet strategies' drop of
``volumeAttributesClassName``.)  Creates only: with the gates fixed for a server's life no stored
object has a dropped field, and an update that adds one keeps it here, where upstream drops it
unless the old object used it (a pod's affinity and spread constraints cannot change anyway).
The scenario's objects take the same path in :mod:`kubesched.scenario._gatedfields`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ._resource import ResourceSpec

__all__ = ["drop_label_keys", "gated_fields_row"]

_Dropper = Callable[[dict[str, Any]], None]

# the rows whose objects hold a pod spec, and where: a pod's own, a workload's template's
_POD_SPEC_AT: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("spec",),
    ("apps", "replicasets"): ("spec", "template", "spec"),
    ("apps", "deployments"): ("spec", "template", "spec"),
    ("apps", "statefulsets"): ("spec", "template", "spec"),
    ("batch", "jobs"): ("spec", "template", "spec"),
}
_VAC_ROWS = (("", "persistentvolumeclaims"), ("", "persistentvolumes"), ("apps", "statefulsets"))
_SPREAD_FIELDS = (
    ("MatchLabelKeysInPodTopologySpread", ("matchLabelKeys",)),
    ("NodeInclusionPolicyInPodTopologySpread", ("nodeAffinityPolicy", "nodeTaintsPolicy")),
)
_TERMS = (
    ("requiredDuringSchedulingIgnoredDuringExecution", False),
    ("preferredDuringSchedulingIgnoredDuringExecution", True),
)


def _child(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _items(obj: Any, key: str) -> list[Any]:
    value = _child(obj, key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def drop_label_keys(pod_spec: Any) -> None:
    """Remove matchLabelKeys and mismatchLabelKeys from every pod (anti-)affinity term of a pod
    spec (a decoded JSON body; anything not shaped as one is left to validation)."""
    affinity = _child(pod_spec, "affinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        terms_of = _child(affinity, kind)
        for name, weighted in _TERMS:
            for item in _items(terms_of, name):
                term = _child(item, "podAffinityTerm") if weighted else item
                if isinstance(term, dict):
                    term.pop("matchLabelKeys", None)
                    term.pop("mismatchLabelKeys", None)


def _pod_spec_dropper(path: tuple[str, ...], gates: Mapping[str, bool]) -> _Dropper | None:
    affinity = not gates.get("MatchLabelKeysInPodAffinity", True)
    spread = tuple(f for gate, fields in _SPREAD_FIELDS if not gates.get(gate, True) for f in fields)
    if not (affinity or spread):
        return None

    def drop(body: dict[str, Any]) -> None:
        spec: Any = body
        for key in path:
            spec = _child(spec, key)
        if affinity:
            drop_label_keys(spec)
        for c in _items(spec, "topologySpreadConstraints"):
            for f in spread:
                c.pop(f, None)

    return drop


def _drop_vac(body: dict[str, Any]) -> None:
    spec = _child(body, "spec")
    for holder in [spec, *(_child(t, "spec") for t in _items(spec, "volumeClaimTemplates"))]:
        if isinstance(holder, dict):
            holder.pop("volumeAttributesClassName", None)


def gated_fields_row(row: ResourceSpec, gates: Mapping[str, bool]) -> ResourceSpec:
    """``row`` as a server with ``gates`` serves it: unchanged while the gates of its fields are
    on, else its creates first drop the fields the gates turn off."""
    key = (row.group, row.plural)
    droppers: list[_Dropper] = []
    path = _POD_SPEC_AT.get(key)
    if path is not None and (drop := _pod_spec_dropper(path, gates)) is not None:
        droppers.append(drop)
    if key in _VAC_ROWS and not gates.get("VolumeAttributesClass", True):
        droppers.append(_drop_vac)
    if not droppers:
        return row
    assert row.backend is not None
    prepare: Callable[[Any, dict[str, Any]], dict[str, Any]] = row.prepare_create or row.backend.prepare_create

    def drop_then_prepare(store: Any, body: dict[str, Any]) -> dict[str, Any]:
        for drop in droppers:
            drop(body)
        return prepare(store, body)

    return replace(row, prepare_create=drop_then_prepare)
