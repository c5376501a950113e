"""The persistent-volume helpers the scheduler and the PV controller share, in one copy.

Upstream keeps them in ``k8s.io/component-helpers/storage/volume`` (``helpers.go``,
``pv_helpers.go``) for both the scheduler's VolumeBinding and kube-controller-manager's
PersistentVolume controller; the generic ephemeral volume ones are
``component-helpers/storage/ephemeral``.  Here the VolumeBinding plugin (through
:mod:`kubesched.framework`), the other volume plugins and the fake cluster's PV controller
(``transports/fake/_pv_controller.py``) all call this module.

- Annotations and names: :data:`ANN_BIND_COMPLETED`, :data:`ANN_BOUND_BY_CONTROLLER`,
  :data:`ANN_SELECTED_NODE`, :data:`ANN_DYNAMICALLY_PROVISIONED`,
  :data:`ANN_STORAGE_PROVISIONER`, :data:`ANN_BETA_STORAGE_PROVISIONER`,
  :data:`NOT_SUPPORTED_PROVISIONER`, :data:`BETA_STORAGE_CLASS_ANNOTATION`
  (``v1.BetaStorageClassAnnotation``), :data:`VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER`.
- Classes and binding modes: :func:`get_persistent_volume_claim_class`,
  :func:`get_persistent_volume_class`, :func:`is_delay_binding_mode`.
- Matching a claim to a volume: :func:`find_matching_volume` (``FindMatchingVolume``: the
  scheduler passes the node, the volumes already chosen and ``delay_binding=True``; the PV
  controller no node, nothing excluded and the claim's :func:`is_delay_binding_mode`),
  :func:`check_volume_mode_mismatches`, :func:`check_access_modes`,
  :func:`check_node_affinity` (on a :func:`label_node`), :func:`is_volume_bound_to_claim`,
  :func:`storage_quantity`.
- Binding: :func:`claim_reference` (``reference.GetReference``),
  :func:`get_bind_volume_to_claim`.
- Generic ephemeral volumes: :func:`ephemeral_claim_name`, :func:`volume_is_for_pod`,
  :func:`is_controlled_by` (``metav1.IsControlledBy``).

Errors upstream returns are :class:`VolumeError`.  Quantities are exact (``Fraction``); a
malformed one raises :class:`~kubesched.QuantityError` (upstream's objects cannot hold one: they
are parsed when decoded).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from fractions import Fraction
from typing import Any

from msgspec.structs import replace

from kubesched._errors import KubeschedError
from kubesched.api._helpers import NodeSelectorMatcher
from kubesched.api._labels import compile_label_selector
from kubesched.api._objects import (
    Node,
    NodeSelector,
    ObjectMeta,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeSpec,
    Pod,
    StorageClass,
    Volume,
)
from kubesched.api._resources import parse_quantity

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

_VOLUME_AVAILABLE = "Available"
_FILESYSTEM = "Filesystem"
_STORAGE = "storage"


class VolumeError(KubeschedError):
    """An error the storage helpers (and VolumeBinding's binder) return upstream."""


def storage_quantity(resources: Mapping[str, Any] | None) -> Fraction:
    """``resources[v1.ResourceStorage]`` of a ResourceList, exactly (0 when absent)."""
    value = resources.get(_STORAGE) if resources else None
    return Fraction(0) if value is None else parse_quantity(value)


# --- classes and binding modes -------------------------------------------------------------------


def get_persistent_volume_claim_class(claim: PersistentVolumeClaim) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation first, then ``storageClassName``
    ("" when the claim asks for no class)."""
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
    """``IsDelayBindingMode``: the claim's class (looked up in ``classes``, the class lister)
    binds WaitForFirstConsumer; no class or an unknown one does not.  Raises VolumeError for a
    class without a binding mode."""
    name = get_persistent_volume_claim_class(claim)
    if not name:
        return False
    sc = classes.get(name)
    if sc is None:
        return False
    if sc.volume_binding_mode is None:
        raise VolumeError(f'VolumeBindingMode not set for StorageClass "{name}"')
    return sc.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER


# --- matching ------------------------------------------------------------------------------------

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
    """``CheckNodeAffinity``: None when the PV's required node affinity admits the node's labels,
    else the error.  ``node`` is a :func:`label_node` (upstream matches a Node made of the labels
    alone), made once for the many volumes checked against one node."""
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


def check_volume_mode_mismatches(
    claim_spec: PersistentVolumeClaimSpec, volume_spec: PersistentVolumeSpec
) -> bool:
    """``CheckVolumeModeMismatches``: True when the modes differ (unset means Filesystem)."""
    return (claim_spec.volume_mode or _FILESYSTEM) != (volume_spec.volume_mode or _FILESYSTEM)


def is_volume_bound_to_claim(volume: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``: the PV's claimRef names the claim (and its UID, when set)."""
    ref = volume.spec.claim_ref
    if ref is None:
        return False
    if claim.metadata.name != ref.name or claim.metadata.namespace != ref.namespace:
        return False
    return not (ref.uid and claim.metadata.uid != ref.uid)


def vac_matching(version: tuple[int, int], gates: Mapping[str, bool]) -> bool | None:
    """``find_matching_volume``'s ``vac_enabled`` for an emulated version and its gates: None
    before 1.31 (no check in v0.30.6), else the VolumeAttributesClass gate (beta off 1.31-1.33,
    GA on from 1.34)."""
    if tuple(version) < (1, 31):
        return None
    return bool(gates.get("VolumeAttributesClass", False))


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    node: Node | None,
    excluded: Container[str],
    delay_binding: bool,
    vac_enabled: bool | None = True,
) -> PersistentVolume | None:
    """``FindMatchingVolume``: the volume pre-bound to the claim (None when the node's labels do
    not fit it), else the smallest one that fits: capacity, volume mode, volumeAttributesClassName,
    not being deleted, phase Available, the claim's selector and class; with a ``node`` (the
    scheduler's path) its node affinity and the access modes too.  Volumes named in ``excluded``
    are skipped; with ``delay_binding`` and no node (the PV controller on a WaitForFirstConsumer
    claim) only a pre-bound volume matches.  Raises VolumeError for an invalid claim selector.

    ``vac_enabled`` is the VolumeAttributesClass gate (component-helpers v0.31.8 and later
    ``pv_helpers.go``): on, a volume matches only a claim of its class of attributes; off, a
    claim naming one is an error and a volume naming one matches nothing.  None: the v0.30.6
    function, which has no such check."""
    claim_vac = claim.spec.volume_attributes_class_name or ""
    if vac_enabled is False and claim_vac:
        raise VolumeError(
            f"unsupported volumeAttributesClassName is set on claim {claim.metadata.namespace}/"
            f"{claim.metadata.name} when the feature-gate VolumeAttributesClass is disabled"
        )
    requested = storage_quantity(claim.spec.resources.requests)
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
        volume_qty = storage_quantity(volume.spec.capacity)
        if volume_qty < requested:
            continue
        if check_volume_mode_mismatches(claim.spec, volume.spec):
            continue
        if vac_enabled is not None:
            volume_vac = volume.spec.volume_attributes_class_name or ""
            if (claim_vac != volume_vac) if vac_enabled else volume_vac:
                continue
        if volume.metadata.deletion_timestamp is not None:
            continue
        affinity_ok = labels_only is None or check_node_affinity(volume, labels_only) is None
        if is_volume_bound_to_claim(volume, claim):
            # a pre-bound PV that does not fit the node means no match at all
            return volume if affinity_ok else None
        if node is None and delay_binding:
            continue  # the PV controller leaves delayed binding to the scheduler
        if volume.status.phase != _VOLUME_AVAILABLE:
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


# --- binding -------------------------------------------------------------------------------------


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
        spec = replace(spec, claim_ref=claim_reference(claim))
        dirty = True
    if set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in meta.annotations:
        meta = replace(meta, annotations={**meta.annotations, ANN_BOUND_BY_CONTROLLER: "yes"})
        dirty = True
    return replace(volume, metadata=meta, spec=spec), dirty


# --- generic ephemeral volumes (component-helpers/storage/ephemeral) -----------------------------


def ephemeral_claim_name(pod: Pod, volume: Volume) -> str:
    """``ephemeral.VolumeClaimName``: the claim of a generic ephemeral volume,
    ``<pod name>-<volume name>``."""
    return f"{pod.metadata.name}-{volume.name}"


def is_controlled_by(obj: Any, uid: str) -> bool:
    """``metav1.IsControlledBy``: ``obj``'s controller owner reference has ``uid``."""
    for ref in obj.metadata.owner_references:
        if ref.controller:
            return bool(ref.uid == uid)
    return False


def volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """``ephemeral.VolumeIsForPod``: None when the pod controls the claim, else the error."""
    owned = is_controlled_by(pvc, pod.metadata.uid)
    if pvc.metadata.namespace != pod.metadata.namespace or not owned:
        return (
            f"PVC {pvc.metadata.namespace}/{pvc.metadata.name} was not created for pod "
            f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)"
        )
    return None


__all__ = [
    "ANN_BETA_STORAGE_PROVISIONER",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_DYNAMICALLY_PROVISIONED",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "NOT_SUPPORTED_PROVISIONER",
    "VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER",
    "VolumeError",
    "check_access_modes",
    "check_node_affinity",
    "check_volume_mode_mismatches",
    "claim_reference",
    "ephemeral_claim_name",
    "find_matching_volume",
    "get_bind_volume_to_claim",
    "get_persistent_volume_claim_class",
    "get_persistent_volume_class",
    "is_controlled_by",
    "is_delay_binding_mode",
    "is_volume_bound_to_claim",
    "label_node",
    "storage_quantity",
    "vac_matching",
    "volume_is_for_pod",
]
