"""Pod fields a feature gate guards, as the emulated release's API server drops them on create.

With MatchLabelKeysInPodAffinity off (1.30 by default; beta on from 1.31, GA locked from 1.33),
the pod strategy drops ``matchLabelKeys`` and ``mismatchLabelKeys`` from a new pod's pod
(anti-)affinity terms (``dropDisabledMatchLabelKeysFieldInPodAffinity``, v1.30.6
``pkg/api/pod/util.go``), and the workload strategies from their pod templates
(``DropDisabledTemplateFields``), before the object is validated: the pod reads back without them
and its terms select by their ``labelSelector`` alone.  Creates only: a pod's affinity cannot
change on update, and with the gates fixed for a server's life no stored object has the fields;
an update that adds them to a workload's template keeps them here, where upstream drops them
(unless the old template used them, ``matchLabelKeysFieldInPodAffinityInUse``).

Likewise, with MatchLabelKeysInPodTopologySpread off a topology spread constraint loses
``matchLabelKeys`` (``dropDisabledMatchLabelKeysFieldInTopologySpread``), with
NodeInclusionPolicyInPodTopologySpread off ``nodeAffinityPolicy`` and ``nodeTaintsPolicy``
(``dropDisabledNodeInclusionPolicyFields``); both are on in every release kubesched emulates, and
PodTopologySpread ignores the fields with its gates off, as upstream's plugin does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ._resource import ResourceSpec

__all__ = ["LABEL_KEYS_GATE", "drop_label_keys", "gated_pod_fields_row"]

LABEL_KEYS_GATE = "MatchLabelKeysInPodAffinity"
_SPREAD_FIELDS = (
    ("MatchLabelKeysInPodTopologySpread", ("matchLabelKeys",)),
    ("NodeInclusionPolicyInPodTopologySpread", ("nodeAffinityPolicy", "nodeTaintsPolicy")),
)

# the rows whose objects hold a pod spec, and where: a pod's own, a workload's template's
_POD_SPEC_AT: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("spec",),
    ("apps", "replicasets"): ("spec", "template", "spec"),
    ("apps", "deployments"): ("spec", "template", "spec"),
    ("apps", "statefulsets"): ("spec", "template", "spec"),
    ("batch", "jobs"): ("spec", "template", "spec"),
}
_TERMS = (
    ("requiredDuringSchedulingIgnoredDuringExecution", False),
    ("preferredDuringSchedulingIgnoredDuringExecution", True),
)


def _child(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def drop_label_keys(pod_spec: Any) -> None:
    """Remove matchLabelKeys and mismatchLabelKeys from every pod (anti-)affinity term of a pod
    spec (a decoded JSON body; anything not shaped as one is left to validation)."""
    affinity = _child(pod_spec, "affinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        terms_of = _child(affinity, kind)
        for name, weighted in _TERMS:
            terms = _child(terms_of, name)
            for item in terms if isinstance(terms, list) else ():
                term = _child(item, "podAffinityTerm") if weighted else item
                if isinstance(term, dict):
                    term.pop("matchLabelKeys", None)
                    term.pop("mismatchLabelKeys", None)


def _drop_spread_fields(pod_spec: Any, fields: tuple[str, ...]) -> None:
    constraints = _child(pod_spec, "topologySpreadConstraints")
    for c in constraints if isinstance(constraints, list) else ():
        if isinstance(c, dict):
            for f in fields:
                c.pop(f, None)


def gated_pod_fields_row(row: ResourceSpec, gates: Mapping[str, bool]) -> ResourceSpec:
    """``row`` as a server with ``gates`` serves it: unchanged while the gates above are on (or
    the row holds no pod spec), else its creates first drop the fields the gates turn off."""
    path = _POD_SPEC_AT.get((row.group, row.plural))
    affinity = not gates.get(LABEL_KEYS_GATE, True)
    spread = tuple(f for gate, fields in _SPREAD_FIELDS if not gates.get(gate, True) for f in fields)
    if path is None or not (affinity or spread):
        return row
    assert row.backend is not None
    prepare: Callable[[Any, dict[str, Any]], dict[str, Any]] = row.prepare_create or row.backend.prepare_create

    def drop_then_prepare(store: Any, body: dict[str, Any]) -> dict[str, Any]:
        spec: Any = body
        for key in path:
            spec = _child(spec, key)
        if affinity:
            drop_label_keys(spec)
        if spread:
            _drop_spread_fields(spec, spread)
        return prepare(store, body)

    return replace(row, prepare_create=drop_then_prepare)
