"""The PersistentVolume controller of the fake cluster, with an external provisioner behind it.

kube-controller-manager's ``persistentvolume-controller`` (``pkg/controller/volume/
persistentvolume/pv_controller.go``), fed the store's writes, plus what a CSI
external-provisioner does for the claims it is asked to provision.  The binding model::

    claim (Pending) ──syncClaim──► best matching Available volume ──bind──► both Bound
          │   none: class with a provisioner
          │     Immediate ─────────────────────────┐
          │     WaitForFirstConsumer: wait for the │ scheduler's volume.kubernetes.io/selected-node
          ▼                                        ▼
    ExternalProvisioning, Provisioning ──(delay)──► PV pvc-<claim uid>, claimRef = the claim
                                                    ──syncVolume──► syncClaim ──bind──► Bound
    claim deleted ──► volume Released ──► reclaim policy: Delete removes it, Retain keeps it

``bind`` is upstream's: the volume's ``claimRef`` (and ``pv.kubernetes.io/bound-by-controller``
when the controller made the binding), the volume Bound, the claim's ``volumeName`` with
``pv.kubernetes.io/bind-completed`` and ``pv.kubernetes.io/bound-by-controller``, the claim Bound
with the volume's capacity and access modes.  A volume the scheduler's VolumeBinding PreBind
pre-bound (``claimRef`` set) is completed the same way.  Event reasons and messages are
upstream's; an event a sync would repeat (``WaitForFirstConsumer``, ``FailedBinding``) is
recorded once until it changes.

Simplified where the scheduler cannot tell: the periodic resync is a resync of the pending claims
a volume that becomes Available (or a new StorageClass) may serve; every provisioner but
``kubernetes.io/no-provisioner`` (and unknown ``kubernetes.io/`` names) works and is external
(in-tree names through their CSI driver, as with CSI migration); a provisioned volume has the
claim's request as capacity, a CSI source (in-tree for migrated names), and node affinity: the
class's ``allowedTopologies`` (Immediate), or the selected node's values for the
``allowedTopologies`` keys, else the driver's CSINode ``topologyKeys``, else
``topology.kubernetes.io/zone``, else ``kubernetes.io/hostname``, when the node has them.
Provisioning takes ``delay`` virtual seconds (a StorageClass's ``kubesched.io/provisioning-delay``
overrides it).  A Delete volume goes at once when an external deleter owns it (provisioned, or
CSI); claims go at once (no ``kubernetes.io/pvc-protection``).  PVC admission assigns the default
StorageClass (``storageclass.kubernetes.io/is-default-class``) to a claim that names none.

The matching and binding helpers are upstream's ``component-helpers/storage/volume``, in the one
copy the scheduler's VolumeBinding uses too (the persistent-volume helpers of ``kubesched.api``):
``FindMatchingVolume`` with no node, nothing excluded and the claim's ``IsDelayBindingMode``
(:func:`find_best_match_for_claim`, the controller's ``findBestMatchForClaim``, tries it per
access-mode group).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol, cast

import anyio
from msgspec.structs import replace

from kubesched.api import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    BETA_STORAGE_CLASS_ANNOTATION,
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    AWSElasticBlockStoreVolumeSource,
    AzureDiskVolumeSource,
    CinderVolumeSource,
    CSIPersistentVolumeSource,
    GCEPersistentDiskVolumeSource,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimStatus,
    PersistentVolumeSpec,
    Pod,
    QuantityError,
    StorageClass,
    VolumeError,
    VolumeNodeAffinity,
    check_access_modes,
    check_volume_mode_mismatches,
    claim_reference,
    find_matching_volume,
    get_bind_volume_to_claim,
    get_persistent_volume_claim_class,
    get_persistent_volume_class,
    is_delay_binding_mode,
    is_volume_bound_to_claim,
    parse_duration,
    storage_quantity,
)

from ._store import Change, Controller, kind_of

if TYPE_CHECKING:
    from ._store import Store

ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
PROVISIONING_DELAY_ANNOTATION = "kubesched.io/provisioning-delay"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"

MIGRATED_PROVISIONERS = {
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/azure-file": "file.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
    "kubernetes.io/rbd": "rbd.csi.ceph.com",
    "kubernetes.io/vsphere-volume": "csi.vsphere.vmware.com",
}
"""In-tree provisioner names and the CSI driver that provisions for them (csi-translation-lib)."""

_ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
_PV = "PersistentVolume"
_PVC = "PersistentVolumeClaim"

__all__ = [
    "ANN_BIND_COMPLETED", "ANN_BOUND_BY_CONTROLLER", "ANN_SELECTED_NODE", "PROVISIONING_DELAY_ANNOTATION",
    "PersistentVolumes", "VolumeWrites", "find_best_match_for_claim",
]  # fmt: skip


# --- matching (index.go) ----------------------------------------------------------------------


def _modes_key(modes: Iterable[str]) -> tuple[str, ...]:
    have = set(modes)
    return tuple(m for m in _ACCESS_MODES if m in have) + tuple(sorted(have - set(_ACCESS_MODES)))


def find_best_match_for_claim(
    claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume], delay_binding: bool,
    vac_enabled: bool | None = True,
) -> PersistentVolume | None:
    """The PV controller's ``findBestMatchForClaim``: volumes grouped by their set of access
    modes, the groups that offer every mode the claim asks for tried from the fewest modes up
    (ties by mode names), :func:`find_matching_volume` in each."""
    groups: dict[tuple[str, ...], list[PersistentVolume]] = {}
    for pv in volumes:
        groups.setdefault(_modes_key(pv.spec.access_modes), []).append(pv)
    asked = set(claim.spec.access_modes)
    for key in sorted((k for k in groups if asked <= set(k)), key=lambda k: (len(k), k)):
        found = find_matching_volume(claim, groups[key], None, (), delay_binding, vac_enabled)
        if found is not None:
            return found
    return None


def default_class(classes: Iterable[StorageClass]) -> StorageClass | None:
    """``GetDefaultClass``: the newest class marked default (ties by name)."""
    marked = [
        c for c in classes
        if "true" in (c.metadata.annotations.get(ANN_DEFAULT_CLASS), c.metadata.annotations.get(ANN_BETA_DEFAULT_CLASS))
    ]  # fmt: skip
    if not marked:
        return None
    newest = max(c.metadata.creation_timestamp or "" for c in marked)
    return min((c for c in marked if (c.metadata.creation_timestamp or "") == newest), key=lambda c: c.metadata.name)


def provisioned_affinity(
    cls: StorageClass, node: Node | None, topology_keys: Iterable[str] = ()
) -> VolumeNodeAffinity | None:
    """A provisioned volume's node affinity (see the module docstring)."""
    if node is None:
        terms = [
            NodeSelectorTerm(match_expressions=[_in(r.key, list(r.values)) for r in t.match_label_expressions])
            for t in cls.allowed_topologies
        ]
        return VolumeNodeAffinity(required=NodeSelector(node_selector_terms=terms)) if terms else None
    labels = node.metadata.labels
    keys = list(dict.fromkeys(r.key for t in cls.allowed_topologies for r in t.match_label_expressions))
    keys = [k for k in keys or list(topology_keys) if k in labels]
    if not keys:
        keys = [k for k in (ZONE_LABEL, HOSTNAME_LABEL) if k in labels][:1]
    if not keys:
        return None
    term = NodeSelectorTerm(match_expressions=[_in(k, [labels[k]]) for k in keys])
    return VolumeNodeAffinity(required=NodeSelector(node_selector_terms=[term]))


def _in(key: str, values: list[str]) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator="In", values=values)


_IN_TREE_SOURCES: dict[str, Callable[[str], dict[str, Any]]] = {
    "kubernetes.io/gce-pd": lambda n: {"gce_persistent_disk": GCEPersistentDiskVolumeSource(pd_name=n)},
    "kubernetes.io/aws-ebs": lambda n: {"aws_elastic_block_store": AWSElasticBlockStoreVolumeSource(volume_id=n)},
    "kubernetes.io/azure-disk": lambda n: {"azure_disk": AzureDiskVolumeSource(disk_name=n, disk_uri=n)},
    "kubernetes.io/cinder": lambda n: {"cinder": CinderVolumeSource(volume_id=n)},
}


def provisioned_source(provisioner: str, name: str) -> dict[str, Any]:
    """The volume source a provisioned volume gets: in-tree for a migrated in-tree name."""
    if provisioner in _IN_TREE_SOURCES:
        return _IN_TREE_SOURCES[provisioner](name)
    driver = MIGRATED_PROVISIONERS.get(provisioner, provisioner)
    return {"csi": CSIPersistentVolumeSource(driver=driver, volume_handle=name)}


# --- the controller ----------------------------------------------------------------------------


class ClusterAPI(Protocol):
    """What the PV controller needs of the cluster."""

    def create(self, obj: Any) -> Any: ...
    def update(self, obj: Any) -> Any: ...
    def record(
        self, kind: str, reason: str, obj: Any, message: str, type_: str = "Normal", *, source: str = ""
    ) -> None: ...


class PersistentVolumes(Controller):
    """The PV controller and the external provisioners (see the module docstring)."""

    kinds = (_PV, _PVC, "StorageClass")

    def __init__(
        self, store: Store, cluster: ClusterAPI, *, delay: float = 0.0, timers: bool = True,
        vac_enabled: bool | None = True,
    ) -> None:
        super().__init__(store)
        self.cluster = cluster
        self.delay = delay
        self.vac_enabled = vac_enabled
        """The controller-manager's VolumeAttributesClass gate (``find_matching_volume``; None:
        a 1.30 controller, without the check); on, a provisioned volume takes its claim's class."""
        """Seconds (virtual) a provisioning takes, unless the class says otherwise."""
        self.timers = timers
        self._pending: dict[tuple[str, str], None] = {}  # unbound claims, in order
        self._refs: dict[tuple[str, str], set[str]] = {}  # claim -> volumes whose claimRef names it
        self._provisioning: set[str] = set()  # claim uids with a provisioning under way
        self._heap: list[tuple[float, int, str, str, str]] = []
        self._seq = 0
        self._last_event: dict[str, tuple[str, str]] = {}  # claim uid -> last repeatable event
        self._wake: anyio.Event | None = None
        self._scope = anyio.CancelScope()

    # --- fed by the store ------------------------------------------------------------------

    def admit(self, change: Change) -> None:
        if change.verb != "create" or change.kind == "StorageClass":
            return
        obj = change.obj
        obj.status.phase = obj.status.phase or "Pending"
        # the DefaultStorageClass admission plugin
        if change.kind == _PVC and obj.spec.storage_class_name is None and BETA_STORAGE_CLASS_ANNOTATION not in obj.metadata.annotations:
            cls = default_class(self.store.objects("StorageClass").values())
            if cls is not None:
                obj.spec.storage_class_name = cls.metadata.name

    def observe(self, change: Change) -> None:
        if change.kind == "StorageClass":
            if change.type != "DELETED":
                self._resync(change.obj.metadata.name)
        elif change.kind == _PVC:
            if change.type == "DELETED":
                self._claim_deleted(change.obj)
                return
            self._sync_claim(change.key)
            # the volumes that name the claim but are not its own (syncVolume on resync)
            claim = self.store.get(_PVC, change.key)
            for name in sorted(self._refs.get(change.key, ())):
                if claim is None or name != claim.spec.volume_name:
                    self._sync_volume(("", name))
        else:
            self._index_refs(change)
            if change.type == "DELETED":
                ref = change.obj.spec.claim_ref
                if ref is not None:  # deleteVolume: the claim learns it lost its volume
                    self._sync_claim((ref.namespace or "default", ref.name))
                return
            self._sync_volume(change.key)
            self._resync_for(change.key)

    def _index_refs(self, change: Change) -> None:
        name = change.key[1]
        for obj, add in ((change.old, False), (change.obj, change.type != "DELETED")):
            ref = obj.spec.claim_ref if obj is not None else None
            if ref is None:
                continue
            names = self._refs.setdefault((ref.namespace or "default", ref.name), set())
            if add:
                names.add(name)
            else:
                names.discard(name)

    # --- claims ----------------------------------------------------------------------------

    def _resync(self, class_name: str) -> None:
        """The periodic resync, for the claims of ``class_name`` still unbound."""
        for key in list(self._pending):
            claim = self.store.get(_PVC, key)
            if claim is not None and get_persistent_volume_claim_class(claim) == class_name:
                self._sync_claim(key)

    def _resync_for(self, key: tuple[str, str]) -> None:
        """The periodic resync, for the unbound claims an Available volume could take."""
        for claim_key in list(self._pending):
            pv: PersistentVolume | None = self.store.get(_PV, key)
            if pv is None or pv.spec.claim_ref is not None or pv.status.phase != "Available":
                return
            claim: PersistentVolumeClaim | None = self.store.get(_PVC, claim_key)
            if claim is None or claim.spec.volume_name and claim.spec.volume_name != pv.metadata.name:
                continue
            if claim.spec.volume_name or (check_access_modes(claim, pv) and _fits(claim, pv, self.vac_enabled)):
                self._sync_claim(claim_key)

    def _sync_claim(self, key: tuple[str, str]) -> None:
        claim: PersistentVolumeClaim | None = self.store.get(_PVC, key)
        if claim is None or claim.metadata.deletion_timestamp:
            self._pending.pop(key, None)
            return
        if ANN_BIND_COMPLETED in claim.metadata.annotations:
            self._pending.pop(key, None)
            self._sync_bound_claim(claim)
            return
        self._pending[key] = None
        if claim.spec.volume_name:
            self._sync_claim_for_volume(claim)
            return
        name = get_persistent_volume_claim_class(claim)
        cls = self.store.get("StorageClass", ("", name)) if name else None
        try:  # IsDelayBindingMode (the class lister: the claim's class), findBestMatchForClaim
            delayed = is_delay_binding_mode(claim, {name: cls} if cls is not None else {})
            pv = find_best_match_for_claim(claim, self.store.objects(_PV).values(), delayed, self.vac_enabled)
        except (VolumeError, QuantityError):
            return  # the sync's error ("error finding PV for claim"): the next resync retries
        if pv is not None:
            self._bind(pv, claim)
            return
        if delayed and ANN_SELECTED_NODE not in claim.metadata.annotations:
            pods = self.store.in_namespace("Pod", claim.metadata.namespace)
            self._event(claim, "Normal", *_waiting_for_consumer(claim, pods), repeat=True)
        elif name:
            self._provision(claim, cls)
            return
        else:
            msg = "no persistent volumes available for this claim and no storage class is set"
            self._event(claim, "Normal", "FailedBinding", msg, repeat=True)
        self._claim_status(claim, "Pending", None)

    def _sync_claim_for_volume(self, claim: PersistentVolumeClaim) -> None:
        """The user (or a StatefulSet's surviving claim) asked for a volume by name."""
        pv: PersistentVolume | None = self.store.get(_PV, ("", claim.spec.volume_name))
        if pv is None:
            self._claim_status(claim, "Pending", None)
        elif pv.spec.claim_ref is None:
            err = _unsatisfied(pv, claim)
            if err:
                msg = f'Cannot bind to requested volume "{pv.metadata.name}": {err}'
                self._event(claim, "Warning", "VolumeMismatch", msg, repeat=True)
                self._claim_status(claim, "Pending", None)
            else:
                self._bind(pv, claim)
        elif is_volume_bound_to_claim(pv, claim):
            self._bind(pv, claim)
        else:
            msg = f'volume "{pv.metadata.name}" already bound to a different claim.'
            self._event(claim, "Warning", "FailedBinding", msg, repeat=True)
            if ANN_BOUND_BY_CONTROLLER not in claim.metadata.annotations:
                self._claim_status(claim, "Pending", None)

    def _sync_bound_claim(self, claim: PersistentVolumeClaim) -> None:
        pv: PersistentVolume | None = self.store.get(_PV, ("", claim.spec.volume_name)) if claim.spec.volume_name else None
        if not claim.spec.volume_name:
            self._lost(claim, "ClaimLost", "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
        elif pv is None:
            self._lost(claim, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
        elif pv.spec.claim_ref is None or pv.spec.claim_ref.uid == claim.metadata.uid:
            self._bind(pv, claim)
        else:
            self._lost(claim, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly")

    def _lost(self, claim: PersistentVolumeClaim, reason: str, message: str) -> None:
        if claim.status.phase != "Lost":
            claim = self._claim_status(claim, "Lost", None)
            self._event(claim, "Warning", reason, message)

    def _claim_deleted(self, claim: PersistentVolumeClaim) -> None:
        md = claim.metadata
        self._pending.pop((md.namespace, md.name), None)
        self._provisioning.discard(md.uid)
        self._last_event.pop(md.uid, None)
        for name in sorted(self._refs.get((md.namespace, md.name), ())):
            self._sync_volume(("", name))

    # --- volumes ---------------------------------------------------------------------------

    def _sync_volume(self, key: tuple[str, str]) -> None:
        """``syncVolume``."""
        pv: PersistentVolume | None = self.store.get(_PV, key)
        if pv is None:
            return
        ref = pv.spec.claim_ref
        if ref is None or not ref.uid:
            self._volume_phase(pv, "Available")
            if ref is not None:  # pre-bound by its creator: the claim's sync binds it
                self._sync_claim((ref.namespace or "default", ref.name))
            return
        claim: PersistentVolumeClaim | None = self.store.get(_PVC, (ref.namespace or "default", ref.name))
        if claim is not None and claim.metadata.uid != ref.uid:
            claim = None
        if claim is None:
            if pv.status.phase not in ("Released", "Failed"):
                pv = self._volume_phase(pv, "Released")
            self._reclaim(pv)
        elif not claim.spec.volume_name:
            if check_volume_mode_mismatches(claim.spec, pv.spec):
                msg = f'Cannot bind PersistentVolume to requested PersistentVolumeClaim "{claim.metadata.name}" due to incompatible volumeMode.'
                self._event(pv, "Warning", "VolumeMismatch", msg)
                msg = f'Cannot bind PersistentVolume "{pv.metadata.name}" to requested PersistentVolumeClaim due to incompatible volumeMode.'
                self._event(claim, "Warning", "VolumeMismatch", msg, repeat=True)
                return
            self._sync_claim((claim.metadata.namespace, claim.metadata.name))
        elif claim.spec.volume_name == pv.metadata.name:
            self._volume_phase(pv, "Bound")
        elif ANN_DYNAMICALLY_PROVISIONED in pv.metadata.annotations and pv.spec.persistent_volume_reclaim_policy == "Delete":
            if pv.status.phase not in ("Released", "Failed"):
                pv = self._volume_phase(pv, "Released")
            self._reclaim(pv)
        else:  # unbindVolume
            if ANN_BOUND_BY_CONTROLLER in pv.metadata.annotations:
                ann = {k: v for k, v in pv.metadata.annotations.items() if k != ANN_BOUND_BY_CONTROLLER}
                new = replace(pv, metadata=replace(pv.metadata, annotations=ann), spec=replace(pv.spec, claim_ref=None))
            else:
                new = replace(pv, spec=replace(pv.spec, claim_ref=replace(ref, uid="")))
            self._volume_phase(self._update(new), "Available")

    def _reclaim(self, pv: PersistentVolume) -> None:
        """``reclaimVolume``: Retain keeps the volume, Delete removes it (its deleter is external)."""
        policy = pv.spec.persistent_volume_reclaim_policy or "Retain"
        if policy == "Retain":
            return
        if policy == "Delete":
            if ANN_DYNAMICALLY_PROVISIONED in pv.metadata.annotations or pv.spec.csi is not None:
                self.store.remove(_PV, ("", pv.metadata.name))
                return
            reason = "VolumeFailedDelete"
            msg = f'error getting deleter volume plugin for volume "{pv.metadata.name}": no deletable volume plugin matched'
        elif policy == "Recycle":
            reason, msg = "VolumeFailedRecycle", "No recycler plugin found for the volume!"
        else:
            reason, msg = "VolumeUnknownReclaimPolicy", "Volume has unrecognized PersistentVolumeReclaimPolicy"
        if pv.status.phase != "Failed":
            pv = self._volume_phase(pv, "Failed", msg)
            self._event(pv, "Warning", reason, msg)

    # --- binding ---------------------------------------------------------------------------

    def _bind(self, pv: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        """``bind``: the volume first (claimRef, then Bound), then the claim (volumeName and
        annotations, then Bound with the volume's capacity and access modes)."""
        new, dirty = get_bind_volume_to_claim(pv, claim)
        if dirty:
            pv = self._update(new)
        pv = self._volume_phase(pv, "Bound")
        ann = claim.metadata.annotations
        if claim.spec.volume_name != pv.metadata.name or ANN_BIND_COMPLETED not in ann:
            ann = dict(ann)
            if claim.spec.volume_name != pv.metadata.name:
                ann.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
            ann.setdefault(ANN_BIND_COMPLETED, "yes")
            spec = replace(claim.spec, volume_name=pv.metadata.name)
            claim = self._update(replace(claim, metadata=replace(claim.metadata, annotations=ann), spec=spec))
        self._pending.pop((claim.metadata.namespace, claim.metadata.name), None)
        self._claim_status(claim, "Bound", pv)

    def _claim_status(
        self, claim: PersistentVolumeClaim, phase: str, pv: PersistentVolume | None
    ) -> PersistentVolumeClaim:
        """``updateClaimStatus``: written only when something changes."""
        new = claim_status(claim.status, phase, pv)
        if new == claim.status:
            return claim
        written: PersistentVolumeClaim = self._status(_PVC, claim, new)
        return written

    def _volume_phase(self, pv: PersistentVolume, phase: str, message: str = "") -> PersistentVolume:
        if pv.status.phase == phase:
            return pv
        written: PersistentVolume = self._status(_PV, pv, replace(pv.status, phase=phase, message=message))
        return written

    # --- provisioning ------------------------------------------------------------------------

    def _provision(self, claim: PersistentVolumeClaim, cls: StorageClass | None) -> None:
        """``provisionClaim`` and ``provisionClaimOperationExternal``, then the external
        provisioner picking the claim up."""
        md = claim.metadata
        if cls is None:
            msg = f'storageclass.storage.k8s.io "{get_persistent_volume_claim_class(claim)}" not found'
            self._event(claim, "Warning", "ProvisioningFailed", msg, repeat=True)
            return
        prov = cls.provisioner
        if prov.startswith("kubernetes.io/") and prov not in MIGRATED_PROVISIONERS:
            self._event(claim, "Warning", "ProvisioningFailed", f"no volume plugin matched name: {prov}", repeat=True)
            return
        if md.uid in self._provisioning or self.store.get(_PV, ("", f"pvc-{md.uid}")) is not None:
            return
        driver = MIGRATED_PROVISIONERS.get(prov, prov)
        if md.annotations.get(ANN_STORAGE_PROVISIONER) != driver or md.annotations.get(ANN_BETA_STORAGE_PROVISIONER) != driver:
            ann = {**md.annotations, ANN_STORAGE_PROVISIONER: driver, ANN_BETA_STORAGE_PROVISIONER: driver}
            claim = self._update(replace(claim, metadata=replace(md, annotations=ann)))
        self._provisioning.add(md.uid)
        msg = (
            f"Waiting for a volume to be created either by the external provisioner '{driver}' or manually by "
            "the system administrator. If volume creation is delayed, please verify that the provisioner is "
            "running and correctly registered."
        )
        self._event(claim, "Normal", "ExternalProvisioning", msg)
        msg = f'External provisioner is provisioning volume for claim "{md.namespace}/{md.name}"'
        self._event(claim, "Normal", "Provisioning", msg, source=driver)
        delay = provisioning_delay(cls, self.delay)
        if delay <= 0:
            self._provisioned(md.uid, md.namespace, md.name)
            return
        self._seq += 1
        heapq.heappush(self._heap, (anyio.current_time() + delay, self._seq, md.uid, md.namespace, md.name))
        if self._wake is not None:
            self._wake.set()

    def _provisioned(self, uid: str, namespace: str, name: str) -> None:
        """The external provisioner's volume is ready: the PV object, bound to the claim."""
        if uid not in self._provisioning:
            return
        self._provisioning.discard(uid)
        claim: PersistentVolumeClaim | None = self.store.get(_PVC, (namespace, name))
        if claim is None or claim.metadata.uid != uid or claim.spec.volume_name:
            return
        cls: StorageClass | None = self.store.get("StorageClass", ("", get_persistent_volume_claim_class(claim)))
        if cls is None:
            return
        driver = MIGRATED_PROVISIONERS.get(cls.provisioner, cls.provisioner)
        node: Node | None = None
        selected = claim.metadata.annotations.get(ANN_SELECTED_NODE)
        if cls.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
            if selected is None:
                return  # rescheduled meanwhile
            node = self.store.get("Node", ("", selected))
            if node is None:  # reschedule: the scheduler picks another node
                self._event(claim, "Warning", "ProvisioningFailed", f'node "{selected}" not found', source=driver)
                ann = {k: v for k, v in claim.metadata.annotations.items() if k != ANN_SELECTED_NODE}
                self._update(replace(claim, metadata=replace(claim.metadata, annotations=ann)))
                return
        csi_node = self.store.get("CSINode", ("", node.metadata.name)) if node is not None else None
        keys: list[str] = next((d.topology_keys for d in csi_node.spec.drivers if d.name == driver), []) if csi_node else []
        pv = self.cluster.create(provisioned_volume(claim, cls, node, keys, vac=bool(self.vac_enabled)))
        msg = f"Successfully provisioned volume {pv.metadata.name}"
        self._event(claim, "Normal", "ProvisioningSucceeded", msg, source=driver)

    # --- timed work: provisioning delays ------------------------------------------------------

    def next_due(self) -> float | None:
        """When the next delayed provisioning completes (anyio time), or None."""
        heap = self._heap
        while heap and heap[0][2] not in self._provisioning:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def run_due(self) -> None:
        """Complete every provisioning whose delay is over, in deadline order."""
        heap = self._heap
        now = anyio.current_time()
        while heap and heap[0][0] <= now + 1e-6:
            _, _, uid, ns, name = heapq.heappop(heap)
            self._provisioned(uid, ns, name)

    def pending_provisionings(self) -> int:
        return len(self._provisioning)

    def tasks(self) -> tuple[Callable[[], Any], ...]:
        return (self._run,) if self.timers else ()

    def close(self) -> None:
        self._scope.cancel()

    async def _run(self) -> None:
        with self._scope:
            while True:
                self.run_due()
                self._wake = wake = anyio.Event()
                due = self.next_due()
                with anyio.CancelScope(deadline=due if due is not None else math.inf):
                    await wake.wait()

    # --- writes ------------------------------------------------------------------------------

    def _update(self, obj: Any) -> Any:
        return self.cluster.update(replace(obj, metadata=replace(obj.metadata, resource_version="")))

    def _status(self, kind: str, obj: Any, status: Any) -> Any:
        new = replace(obj, metadata=replace(obj.metadata), status=status)
        self.store.put(kind, self.store.key(kind, obj.metadata.namespace, obj.metadata.name), new, "MODIFIED", "status")
        return new

    def _event(
        self, obj: Any, type_: str, reason: str, message: str, *, repeat: bool = False, source: str = ""
    ) -> None:
        """Record an event; one a sync repeats (``repeat``) only when it differs from the last
        such event on the object."""
        if repeat:
            last = (reason, message)
            if self._last_event.get(obj.metadata.uid) == last:
                return
            self._last_event[obj.metadata.uid] = last
        self.cluster.record(obj.kind, reason, obj, message, type_, source=source)


class VolumeWrites:
    """The scheduler's volume verbs over the cluster's store: ``update_persistent_volume`` and
    ``update_persistent_volume_claim`` (PUTs of the main resource: the stored status is kept)."""

    _store: Store
    faults: Any

    def _check_open(self) -> None:  # pragma: no cover - FakeCluster's own is used
        raise NotImplementedError

    async def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        """PUT the volume (its status kept: that is the status subresource's); NotFoundError
        when absent, ConflictError when its resourceVersion is stale."""
        await self.faults._enter("update_persistent_volume")
        self._check_open()
        return cast(PersistentVolume, _put(self._store, pv))

    async def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        """PUT the claim, as :meth:`update_persistent_volume`."""
        await self.faults._enter("update_persistent_volume_claim")
        self._check_open()
        return cast(PersistentVolumeClaim, _put(self._store, pvc))


def _put(store: Store, obj: Any) -> Any:
    """An update keeping the stored status (a PUT of the main resource leaves status alone)."""
    kind = kind_of(type(obj))
    old = store.get(kind, store.key(kind, obj.metadata.namespace, obj.metadata.name))
    return store.update(replace(obj, status=old.status) if old is not None else obj)


def _waiting_for_consumer(claim: PersistentVolumeClaim, pods: Iterable[Pod]) -> tuple[str, str]:
    """``emitEventForUnboundDelayBindingClaim``'s reason and message."""
    name = claim.metadata.name
    names = [
        p.metadata.name
        for p in pods
        if not p.spec.node_name
        and p.status.phase not in ("Succeeded", "Failed")
        and any(v.persistent_volume_claim and v.persistent_volume_claim.claim_name == name for v in p.spec.volumes)
    ]
    if not names:
        return "WaitForFirstConsumer", "waiting for first consumer to be created before binding"
    if len(names) == 1:
        return "WaitForPodScheduled", f"waiting for pod {names[0]} to be scheduled"
    return "WaitForPodScheduled", f"waiting for pods {','.join(names)} to be scheduled"


def provisioning_delay(cls: StorageClass, default: float) -> float:
    """The class's ``kubesched.io/provisioning-delay`` in seconds, else ``default`` (also for
    an invalid or negative value)."""
    text = cls.metadata.annotations.get(PROVISIONING_DELAY_ANNOTATION)
    if text is not None:
        try:
            d = parse_duration(text)
        except ValueError:
            d = -1.0
        if d >= 0:
            return d
    return default


def provisioned_volume(
    claim: PersistentVolumeClaim, cls: StorageClass, node: Node | None, topology_keys: Iterable[str],
    *, vac: bool = True,
) -> PersistentVolume:
    """The volume an external provisioner makes for the claim: ``pvc-<claim uid>``, bound to it;
    with ``vac`` (VolumeAttributesClass on) of the claim's class of attributes, as
    external-provisioner sets ``spec.volumeAttributesClassName``."""
    name = f"pvc-{claim.metadata.uid}"
    return PersistentVolume(
        metadata=ObjectMeta(name=name, annotations={ANN_DYNAMICALLY_PROVISIONED: cls.provisioner}),
        spec=PersistentVolumeSpec(
            capacity={"storage": (claim.spec.resources.requests or {}).get("storage", "0")},
            access_modes=list(claim.spec.access_modes),
            claim_ref=claim_reference(claim),
            persistent_volume_reclaim_policy=cls.reclaim_policy or "Delete",
            storage_class_name=get_persistent_volume_claim_class(claim),
            mount_options=list(cls.mount_options),
            volume_mode=claim.spec.volume_mode or "Filesystem",
            node_affinity=provisioned_affinity(cls, node, topology_keys),
            volume_attributes_class_name=claim.spec.volume_attributes_class_name if vac else None,
            **provisioned_source(cls.provisioner, name),
        ),
    )


def claim_status(st: PersistentVolumeClaimStatus, phase: str, pv: PersistentVolume | None) -> PersistentVolumeClaimStatus:
    """``updateClaimStatus``'s new status: the phase, the volume's access modes, and its capacity
    when the claim becomes ``phase`` (not when it already was)."""
    if pv is None:
        return replace(st, phase=phase, access_modes=[], capacity={})
    new = replace(st, phase=phase, access_modes=list(pv.spec.access_modes))
    if st.phase != phase and ("storage" not in st.capacity or _storage(st.capacity) != _storage(pv.spec.capacity)):
        new = replace(new, capacity=dict(pv.spec.capacity))
    return new


def _unsatisfied(pv: PersistentVolume, claim: PersistentVolumeClaim) -> str:
    """``checkVolumeSatisfyClaim``: why the requested volume does not fit the claim, or ""."""
    if pv.metadata.deletion_timestamp:
        return f'the volume is marked for deletion "{pv.metadata.name}"'
    if math.ceil(_storage(pv.spec.capacity)) < math.ceil(_storage(claim.spec.resources.requests)):
        return "requested PV is too small"  # Quantity.Value(): whole bytes, rounded up
    if get_persistent_volume_class(pv) != get_persistent_volume_claim_class(claim):
        return "storageClassName does not match"
    if check_volume_mode_mismatches(claim.spec, pv.spec):
        return "incompatible volumeMode"
    if not check_access_modes(claim, pv):
        return "incompatible accessMode"
    return ""


def _storage(resources: Mapping[str, Any] | None) -> Fraction:
    """:func:`storage_quantity`, 0 for a malformed quantity (the fake cluster stores objects
    unvalidated; upstream's cannot hold one)."""
    try:
        return storage_quantity(resources)
    except QuantityError:
        return Fraction(0)


def _fits(claim: PersistentVolumeClaim, pv: PersistentVolume, vac_enabled: bool | None) -> bool:
    """The volume could serve the claim now (``FindMatchingVolume`` on it alone, no node)."""
    try:
        return find_matching_volume(claim, [pv], None, (), False, vac_enabled) is not None
    except (VolumeError, QuantityError):
        return False
