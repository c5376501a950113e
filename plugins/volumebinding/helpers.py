"""The storage helpers VolumeBinding calls: the shared persistent-volume helpers (upstream
``component-helpers/storage/volume`` and ``storage/ephemeral``, one copy in ``kubesched.api._pvhelpers``
that the fake cluster's PV controller uses too) re-exported from :mod:`kubesched.framework`, and
the ones only VolumeBinding needs (``v1helper``, ``csi-translation-lib``).

- Re-exported: :data:`ANN_SELECTED_NODE`, :data:`ANN_BIND_COMPLETED`,
  :data:`ANN_BOUND_BY_CONTROLLER`, :data:`NOT_SUPPORTED_PROVISIONER`, :class:`VolumeError`,
  :func:`get_persistent_volume_claim_class`, :func:`get_persistent_volume_class`,
  :func:`is_delay_binding_mode`, :func:`find_matching_volume`, :func:`check_node_affinity`,
  :func:`label_node`, :func:`check_access_modes`, :func:`check_volume_mode_mismatches`,
  :func:`is_volume_bound_to_claim`, :func:`get_bind_volume_to_claim`,
  :func:`ephemeral_claim_name`, :func:`volume_is_for_pod`.
- Provisioning: :func:`match_topology_selector_terms` (a StorageClass's allowedTopologies).
- A pod's claims: :func:`pod_claim_name` (a claim volume's, or a generic ephemeral one's).
- CSI migration: :func:`try_translate_pv_to_csi` (an in-tree PV's zone topology as its CSI
  driver's, when the node's CSINode lists the plugin as migrated).
- Quantities: :func:`storage_request`, :func:`quantity`, :func:`quantity_int`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import msgspec

from kubesched.framework import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    Volume,
    VolumeError,
    check_access_modes,
    check_node_affinity,
    check_volume_mode_mismatches,
    convert,
    ephemeral_claim_name,
    find_matching_volume,
    get_bind_volume_to_claim,
    get_persistent_volume_claim_class,
    get_persistent_volume_class,
    is_delay_binding_mode,
    is_volume_bound_to_claim,
    label_node,
    parse_quantity,
    vac_matching,
    volume_is_for_pod,
)

if TYPE_CHECKING:
    from kubesched.framework import Pod

# the API types kubesched.framework does not export: plugins name them only in annotations
TopologySelectorTerm = Any

MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
CLAIM_LOST = "Lost"
STORAGE = "storage"


# --- quantities ----------------------------------------------------------------------------------


def quantity(value: Any) -> Fraction:
    """A quantity exactly (0 when absent), for comparisons (``Quantity.Cmp``)."""
    if value is None:
        return Fraction(0)
    return parse_quantity(value)


def quantity_int(value: Any) -> int:
    """``Quantity.Value()``: the integer value, rounded up."""
    q = quantity(value)
    return -((-q.numerator) // q.denominator)


def storage_request(pvc: PersistentVolumeClaim) -> Any:
    """The claim's ``resources.requests[storage]`` as written (None when absent)."""
    requests = pvc.spec.resources.requests
    return None if requests is None else requests.get(STORAGE)


# --- provisioning topology -----------------------------------------------------------------------


def match_topology_selector_terms(
    terms: Sequence[TopologySelectorTerm], labels: Mapping[str, str]
) -> bool:
    """``v1helper.MatchTopologySelectorTerms``: no terms match everything; an empty term nothing;
    a term matches when every key's node label is one of its values."""
    if not terms:
        return True
    for term in terms:
        if not term.match_label_expressions:
            continue
        if all(
            req.values and req.key in labels and labels[req.key] in req.values
            for req in term.match_label_expressions
        ):
            return True
    return False


# --- a pod's claims ------------------------------------------------------------------------------


def pod_claim_name(pod: Pod, volume: Volume) -> tuple[str, bool] | None:
    """The claim a pod volume uses and whether it is a generic ephemeral one (None: no claim)."""
    if volume.persistent_volume_claim is not None:
        return volume.persistent_volume_claim.claim_name, False
    if volume.ephemeral is not None:
        return ephemeral_claim_name(pod, volume), True
    return None


# --- CSI migration (csi-translation-lib) ---------------------------------------------------------

ZONE_GA = "topology.kubernetes.io/zone"
ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
REGION_GA = "topology.kubernetes.io/region"
REGION_BETA = "failure-domain.beta.kubernetes.io/region"
_MULTI_ZONE_DELIMITER = "__"

# in-tree source field -> (in-tree plugin name, the CSI driver's topology key); the plugins whose
# migration is on (``isCSIMigrationOnForPlugin``: AWS EBS, GCE PD, Azure Disk, Cinder)
_MIGRATABLE = {
    "aws_elastic_block_store": ("kubernetes.io/aws-ebs", "topology.ebs.csi.aws.com/zone"),
    "gce_persistent_disk": ("kubernetes.io/gce-pd", "topology.gke.io/zone"),
    "azure_disk": ("kubernetes.io/azure-disk", "topology.disk.csi.azure.com/zone"),
    "cinder": ("kubernetes.io/cinder", "topology.cinder.csi.openstack.org/zone"),
}


def _terms(pv: PersistentVolume) -> list[dict[str, Any]]:
    """The PV's required node selector terms as builtins (camelCase, as on the wire)."""
    na = pv.spec.node_affinity
    if na is None or na.required is None:
        return []
    terms: list[dict[str, Any]] = msgspec.to_builtins(na.required).get("nodeSelectorTerms", [])
    return terms


def _topology_values(terms: list[dict[str, Any]], key: str) -> list[str]:
    values = {
        v
        for t in terms
        for r in t.get("matchExpressions", [])
        if r["key"] == key
        for v in r.get("values", [])
    }
    return sorted(values)


def _has_topology_key(terms: list[dict[str, Any]], key: str) -> bool:
    return any(r["key"] == key for t in terms for r in t.get("matchExpressions", []))


def _topology_labels(terms: list[dict[str, Any]], labels: Mapping[str, str]) -> tuple[str, str]:
    """``getTopologyLabel``: the zone/region keys in use (node affinity first, then labels)."""
    if _has_topology_key(terms, ZONE_GA):
        return ZONE_GA, REGION_GA
    if _has_topology_key(terms, ZONE_BETA):
        return ZONE_BETA, REGION_BETA
    if ZONE_GA in labels:
        return ZONE_GA, REGION_GA
    if ZONE_BETA in labels:
        return ZONE_BETA, REGION_BETA
    return ZONE_GA, REGION_GA


def _replace_topology(terms: list[dict[str, Any]], old: str, new: str) -> None:
    for t in terms:
        for r in t.get("matchExpressions", []):
            if r["key"] == old:
                r["key"] = new


def _add_topology(terms: list[dict[str, Any]], key: str, zones: Sequence[str]) -> None:
    values = sorted({z.strip() for z in zones if z.strip()})
    if not values:
        return
    if not terms:
        terms.append({})
    for t in terms:
        t.setdefault("matchExpressions", []).append(
            {"key": key, "operator": "In", "values": values}
        )


def translate_topology(pv: PersistentVolume, csi_key: str) -> PersistentVolume:
    """``translateTopologyFromInTreeToCSI``: the in-tree zone topology (node affinity, else the
    PV's zone label) under the CSI driver's key; a beta region requirement becomes GA."""
    terms = _terms(pv)
    labels = pv.metadata.labels
    zone_label, region_label = _topology_labels(terms, labels)
    if _topology_values(terms, zone_label):
        _replace_topology(terms, zone_label, csi_key)
    elif zone_label in labels:
        _add_topology(terms, csi_key, labels[zone_label].split(_MULTI_ZONE_DELIMITER))
    if region_label == REGION_BETA and _topology_values(terms, region_label):
        _replace_topology(terms, region_label, REGION_GA)
    if not terms:
        return pv
    spec_fields = {f.name: f.type for f in msgspec.structs.fields(type(pv.spec))}
    affinity = convert({"required": {"nodeSelectorTerms": terms}}, spec_fields["node_affinity"])
    return msgspec.structs.replace(
        pv, spec=msgspec.structs.replace(pv.spec, node_affinity=affinity)
    )


def _migrated_on_node(plugin: str, csi_node: CSINode | None) -> bool:
    """``isPluginMigratedToCSIOnNode``: the CSINode's migrated-plugins annotation lists it."""
    if csi_node is None:
        return False
    value = csi_node.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return bool(value) and plugin in value.split(",")


def try_translate_pv_to_csi(pv: PersistentVolume, csi_node: CSINode | None) -> PersistentVolume:
    """``tryTranslatePVToCSI``: an in-tree PV whose plugin is migrated on the node, with its
    topology as its CSI driver's (only the node affinity matters to the scheduler)."""
    for source, (plugin, key) in _MIGRATABLE.items():
        if getattr(pv.spec, source) is not None:
            if _migrated_on_node(plugin, csi_node):
                return translate_topology(pv, key)
            return pv
    return pv


__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "CLAIM_LOST",
    "CSIStorageCapacity",
    "MIGRATED_PLUGINS_ANNOTATION",
    "NOT_SUPPORTED_PROVISIONER",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "STORAGE",
    "StorageClass",
    "Volume",
    "VolumeError",
    "check_access_modes",
    "check_node_affinity",
    "check_volume_mode_mismatches",
    "ephemeral_claim_name",
    "find_matching_volume",
    "get_bind_volume_to_claim",
    "get_persistent_volume_claim_class",
    "get_persistent_volume_class",
    "is_delay_binding_mode",
    "is_volume_bound_to_claim",
    "label_node",
    "match_topology_selector_terms",
    "pod_claim_name",
    "quantity",
    "quantity_int",
    "storage_request",
    "try_translate_pv_to_csi",
    "vac_matching",
    "volume_is_for_pod",
]
