"""The storage helpers VolumeBinding calls (upstream ``component-helpers/storage/volume``,
``component-helpers/storage/ephemeral``, ``v1helper`` and ``csi-translation-lib``).

- Annotations and classes: :data:`ANN_SELECTED_NODE`, :data:`ANN_BIND_COMPLETED`,
  :data:`ANN_BOUND_BY_CONTROLLER`, :func:`get_persistent_volume_claim_class`,
  :func:`get_persistent_volume_class`, :func:`is_delay_binding_mode`.
- Matching a claim to a volume: :func:`find_matching_volume` (the smallest available PV that
  satisfies the claim on the node), :func:`check_node_affinity`, :func:`check_access_modes`,
  :func:`check_volume_mode_mismatches`, :func:`is_volume_bound_to_claim`,
  :func:`get_bind_volume_to_claim`.
- Provisioning: :func:`match_topology_selector_terms` (a StorageClass's allowedTopologies).
- Generic ephemeral volumes: :func:`ephemeral_claim_name`, :func:`volume_is_for_pod`.
- CSI migration: :func:`try_translate_pv_to_csi` (an in-tree PV's zone topology as its CSI
  driver's, when the node's CSINode lists the plugin as migrated).
- Quantities: :func:`storage_request`, :func:`quantity_int`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import msgspec

from kubesched.framework import (
    Node,
    NodeSelectorMatcher,
    ObjectMeta,
    ObjectReference,
    compile_label_selector,
    convert,
    parse_quantity,
)

if TYPE_CHECKING:
    from kubesched.framework import Pod

# The storage API objects are kubesched's msgspec structs (``PersistentVolume``, ...), which
# ``kubesched.framework`` does not export: in-tree plugins name them only in annotations.
PersistentVolume = Any
PersistentVolumeClaim = Any
StorageClass = Any
CSINode = Any
CSIStorageCapacity = Any
NodeSelector = Any
TopologySelectorTerm = Any
Volume = Any

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
VOLUME_AVAILABLE = "Available"
CLAIM_LOST = "Lost"
FILESYSTEM = "Filesystem"
STORAGE = "storage"


class VolumeError(Exception):
    """An error upstream's helpers and binder return (becomes an Error status)."""


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


# --- classes and binding modes -------------------------------------------------------------------


def get_persistent_volume_claim_class(claim: PersistentVolumeClaim) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation first, then ``storageClassName``."""
    cls = claim.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if cls is not None:
        return cls
    return claim.spec.storage_class_name or ""


def get_persistent_volume_class(volume: PersistentVolume) -> str:
    """``GetPersistentVolumeClass``: the beta annotation first, then ``storageClassName``."""
    cls = volume.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if cls is not None:
        return cls
    return volume.spec.storage_class_name


def is_delay_binding_mode(
    claim: PersistentVolumeClaim, classes: Mapping[str, StorageClass]
) -> bool:
    """``IsDelayBindingMode``: the claim's class binds WaitForFirstConsumer (an unknown class
    does not); raises VolumeError for a class without a binding mode."""
    name = get_persistent_volume_claim_class(claim)
    if not name:
        return False
    sc = classes.get(name)
    if sc is None:
        return False
    if sc.volume_binding_mode is None:
        raise VolumeError(f'VolumeBindingMode not set for StorageClass "{name}"')
    return sc.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER


# --- node affinity -------------------------------------------------------------------------------

_MATCHERS: dict[int, tuple[NodeSelector, NodeSelectorMatcher]] = {}


def _matcher(ns: NodeSelector) -> NodeSelectorMatcher:
    hit = _MATCHERS.get(id(ns))
    if hit is not None and hit[0] is ns:
        return hit[1]
    if len(_MATCHERS) > 4096:
        _MATCHERS.clear()
    m = NodeSelectorMatcher(ns)  # LazyErrorNodeSelector
    _MATCHERS[id(ns)] = (ns, m)  # the selector is kept, so its id is not reused while cached
    return m


def label_node(labels: Mapping[str, str]) -> Node:
    """A Node with only ``labels``: what ``CheckNodeAffinity`` matches (no name, no fields)."""
    return Node(metadata=ObjectMeta(labels=dict(labels)))


def check_node_affinity(pv: PersistentVolume, node: Node) -> str | None:
    """``CheckNodeAffinity``: None when the PV's required node affinity admits the node's labels
    (``node`` as made by :func:`label_node`), else the error."""
    na = pv.spec.node_affinity
    if na is None or na.required is None:
        return None
    if _matcher(na.required).match(node):
        return None
    return "no matching NodeSelectorTerms"


def check_access_modes(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """``CheckAccessModes``: the PV offers every access mode the claim asks for."""
    modes = set(volume.spec.access_modes)
    return all(m in modes for m in claim.spec.access_modes)


def check_volume_mode_mismatches(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """``CheckVolumeModeMismatches``: True when the modes differ (unset means Filesystem)."""
    return (claim.spec.volume_mode or FILESYSTEM) != (volume.spec.volume_mode or FILESYSTEM)


def is_volume_bound_to_claim(volume: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``: the PV's claimRef names the claim (and its UID, when set)."""
    ref = volume.spec.claim_ref
    if ref is None:
        return False
    if claim.metadata.name != ref.name or claim.metadata.namespace != ref.namespace:
        return False
    return not (ref.uid and claim.metadata.uid != ref.uid)


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: Sequence[PersistentVolume],
    node: Node | None,
    excluded: Mapping[str, Any],
    delay_binding: bool,
) -> PersistentVolume | None:
    """``FindMatchingVolume``: the volume pre-bound to the claim, else the smallest available
    one that fits (capacity, volume mode, not being deleted, phase Available, selector, class,
    node affinity, access modes), skipping ``excluded`` names; raises VolumeError for an invalid
    claim selector."""
    requested = quantity(storage_request(claim))
    requested_class = get_persistent_volume_claim_class(claim)
    selector = None
    if claim.spec.selector is not None:
        try:
            selector = compile_label_selector(claim.spec.selector)
        except ValueError as e:
            raise VolumeError(
                "error creating internal label selector for claim: "
                f"{claim.metadata.namespace}/{claim.metadata.name}: {e}"
            ) from e
    labels_only = label_node(node.metadata.labels) if node is not None else None
    smallest: PersistentVolume | None = None
    smallest_qty = Fraction(0)
    for volume in volumes:
        if volume.metadata.name in excluded:
            continue
        if volume.spec.claim_ref is not None and not is_volume_bound_to_claim(volume, claim):
            continue
        volume_qty = quantity(volume.spec.capacity.get(STORAGE))
        if volume_qty < requested:
            continue
        if check_volume_mode_mismatches(claim, volume):
            continue
        if volume.metadata.deletion_timestamp is not None:
            continue
        affinity_ok = labels_only is None or check_node_affinity(volume, labels_only) is None
        if is_volume_bound_to_claim(volume, claim):
            # a pre-bound PV that does not fit the node means no match at all
            return volume if affinity_ok else None
        if node is None and delay_binding:
            continue  # the PV controller leaves delayed binding to the scheduler
        if volume.status.phase != VOLUME_AVAILABLE:
            continue
        if selector is not None and not selector(volume.metadata.labels):
            continue
        if get_persistent_volume_class(volume) != requested_class:
            continue
        if not affinity_ok:
            continue
        if node is not None and not check_access_modes(claim, volume):
            continue
        if smallest is None or smallest_qty > volume_qty:
            smallest, smallest_qty = volume, volume_qty
    return smallest


def claim_reference(claim: PersistentVolumeClaim) -> ObjectReference:
    """``reference.GetReference`` of a claim."""
    m = claim.metadata
    return ObjectReference(
        api_version="v1",
        kind="PersistentVolumeClaim",
        namespace=m.namespace,
        name=m.name,
        uid=m.uid,
        resource_version=m.resource_version,
    )


def get_bind_volume_to_claim(
    volume: PersistentVolume, claim: PersistentVolumeClaim
) -> tuple[PersistentVolume, bool]:
    """``GetBindVolumeToClaim``: a copy of the volume bound to the claim (claimRef, and the
    bound-by-controller annotation unless the user pre-bound it); True when anything changed."""
    dirty = False
    set_bound_by_controller = not is_volume_bound_to_claim(volume, claim)
    spec = volume.spec
    meta = volume.metadata
    ref = spec.claim_ref
    m = claim.metadata
    if ref is None or ref.name != m.name or ref.namespace != m.namespace or ref.uid != m.uid:
        spec = msgspec.structs.replace(spec, claim_ref=claim_reference(claim))
        dirty = True
    if set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in meta.annotations:
        meta = msgspec.structs.replace(
            meta, annotations={**meta.annotations, ANN_BOUND_BY_CONTROLLER: "yes"}
        )
        dirty = True
    return msgspec.structs.replace(volume, metadata=meta, spec=spec), dirty


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


# --- generic ephemeral volumes -------------------------------------------------------------------


def ephemeral_claim_name(pod: Pod, volume: Volume) -> str:
    """``ephemeral.VolumeClaimName``: ``<pod name>-<volume name>``."""
    return f"{pod.metadata.name}-{volume.name}"


def volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """``ephemeral.VolumeIsForPod``: None when the pod controls the claim, else the error."""
    controller = next((ref for ref in pvc.metadata.owner_references if ref.controller), None)
    controlled = (
        controller is not None and controller.uid == pod.metadata.uid
    )  # metav1.IsControlledBy
    if pvc.metadata.namespace != pod.metadata.namespace or not controlled:
        return (
            f"PVC {pvc.metadata.namespace}/{pvc.metadata.name} was not created for pod "
            f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)"
        )
    return None


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
    "volume_is_for_pod",
]
