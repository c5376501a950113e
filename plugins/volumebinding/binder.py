"""The scheduler's volume binder (upstream ``volumebinding/binder.go``, ``SchedulerVolumeBinder``).

How it runs inside one pod's scheduling and binding cycles::

    PreFilter  get_pod_volume_claims   the pod's claims: bound, unbound with delayed binding
                                       (WaitForFirstConsumer), unbound immediate (PreFilter then
                                       rejects the pod), and the PVs of the delayed claims' classes
    Filter     find_pod_volumes        per node: bound claims' PV node affinity; a static binding
                                       (find_matching_volume) or a dynamic provision (provisioner,
                                       allowedTopologies, CSIStorageCapacity) per unbound claim
    Reserve    assume_pod_volumes      the chosen node's bindings into the assume caches (PV with
                                       claimRef, PVC with the selected-node annotation), so the
                                       next pod already sees the volume taken
    Unreserve  revert_assumed_pod_volumes
    PreBind    bind_pod_volumes        the API updates (bind_api_update), then every second
                                       check_bindings until the PV controller has bound every
                                       claim, for at most bindTimeoutSeconds
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from kubesched.framework import Handle, compile_label_selector

from .assume_cache import CacheNotFoundError, PVAssumeCache, PVCAssumeCache, object_version
from .helpers import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    STORAGE,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    Volume,
    VolumeError,
    check_node_affinity,
    find_matching_volume,
    get_bind_volume_to_claim,
    get_persistent_volume_claim_class,
    is_delay_binding_mode,
    label_node,
    match_topology_selector_terms,
    pod_claim_name,
    quantity,
    quantity_int,
    storage_request,
    try_translate_pv_to_csi,
    vac_matching,
    volume_is_for_pod,
)

if TYPE_CHECKING:
    from kubesched.framework import Node, Pod

# ConflictReasons (Filter's UnschedulableAndUnresolvable reasons).  ErrReasonNodeConflict changed in
# 1.33 (kubernetes#129887): v1.30.6, v1.31.8 binder.go "node(s) had volume node affinity conflict";
# v1.33.3 … v1.35.4 binder.go "node(s) didn't match PersistentVolume's node affinity".
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NODE_CONFLICT_BEFORE_1_33 = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

BIND_POLL_INTERVAL = 1.0
"""``wait.PollUntilContextTimeout(ctx, time.Second, bindTimeout, false, ...)``."""


@dataclass
class StorageResource:
    """Requested and capacity bytes of one storage class on a node (the scorer's input)."""

    requested: int = 0
    capacity: int = 0


@dataclass
class BindingInfo:
    """A claim and the PV proposed for it (``BindingInfo``)."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume

    def storage_class_name(self) -> str:
        return self.pv.spec.storage_class_name

    def storage_resource(self) -> StorageResource:
        return StorageResource(
            requested=quantity_int(storage_request(self.pvc)),
            capacity=quantity_int(self.pv.spec.capacity.get(STORAGE)),
        )


@dataclass
class DynamicProvision:
    """A claim to provision, with the CSIStorageCapacity that admitted it (if any)."""

    pvc: PersistentVolumeClaim
    node_capacity: CSIStorageCapacity | None = None


@dataclass
class PodVolumes:
    """What Filter found for one node (None lists are normalized from empty ones, as upstream)."""

    static_bindings: list[BindingInfo] | None = None
    dynamic_provisions: list[DynamicProvision] | None = None


@dataclass
class PodVolumeClaims:
    """The pod's claims by state (``PodVolumeClaims``)."""

    bound_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_claims_delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_claims_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = field(default_factory=dict)


def pvc_name(pvc: PersistentVolumeClaim) -> str:
    return f"{pvc.metadata.namespace}/{pvc.metadata.name}"


def is_pvc_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    """``isPVCFullyBound``: a volume name and the bind-completed annotation."""
    return bool(pvc.spec.volume_name) and ANN_BIND_COMPLETED in pvc.metadata.annotations


def volume_limit(capacity: CSIStorageCapacity) -> Any:
    """``volumeLimit``: maximumVolumeSize when set, else capacity (None when neither)."""
    if capacity.maximum_volume_size is not None:
        return capacity.maximum_volume_size
    return capacity.capacity


class VolumeBinder:
    """``volumeBinder``: the caches over ``handle.cluster`` and the API calls through
    ``handle.client``."""

    def __init__(self, handle: Handle, bind_timeout: float) -> None:
        self.handle: Handle = handle
        self.bind_timeout = bind_timeout
        self.node_conflict_reason = (
            ERR_REASON_NODE_CONFLICT if handle.emulated_version >= (1, 33) else ERR_REASON_NODE_CONFLICT_BEFORE_1_33
        )
        # VolumeAttributesClass (beta off 1.31-1.33, GA on from 1.34): b.enableVolumeAttributesClass
        self.vac_enabled = vac_matching(handle.emulated_version, handle.feature_gates)
        self.pv_cache = PVAssumeCache(lambda: self.handle.cluster.pvs)
        self.pvc_cache = PVCAssumeCache(lambda: self.handle.cluster.pvcs)

    @property
    def cluster(self) -> Any:
        return self.handle.cluster

    # --- PreFilter ---------------------------------------------------------------------------
    def is_pvc_bound(self, namespace: str, name: str) -> tuple[bool, PersistentVolumeClaim]:
        """``isPVCBound`` (through the PVC assume cache)."""
        try:
            pvc = self.pvc_cache.get((namespace, name))
        except CacheNotFoundError as e:
            raise VolumeError(f'error getting PVC "{namespace}/{name}": {e}') from None
        return is_pvc_fully_bound(pvc), pvc

    def is_volume_bound(self, pod: Pod, vol: Volume) -> tuple[bool, PersistentVolumeClaim | None]:
        """``isVolumeBound``: a volume without a claim counts as bound."""
        claim = pod_claim_name(pod, vol)
        if claim is None:
            return True, None
        name, ephemeral = claim
        bound, pvc = self.is_pvc_bound(pod.metadata.namespace, name)
        if ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err is not None:
                raise VolumeError(err)
        return bound, pvc

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """``GetPodVolumeClaims``; raises VolumeError."""
        out = PodVolumeClaims()
        classes = self.cluster.storage_classes
        for vol in pod.spec.volumes:
            bound, pvc = self.is_volume_bound(pod, vol)
            if pvc is None:
                continue
            if bound:
                out.bound_claims.append(pvc)
            elif is_delay_binding_mode(pvc, classes) and not pvc.spec.volume_name:
                out.unbound_claims_delay_binding.append(pvc)
            else:  # immediate binding, or pre-bound to a volume
                out.unbound_claims_immediate.append(pvc)
        for pvc in out.unbound_claims_delay_binding:
            cls = get_persistent_volume_claim_class(pvc)
            out.unbound_volumes_delay_binding[cls] = self.pv_cache.list_pvs(cls)
        return out

    # --- Filter ------------------------------------------------------------------------------
    def find_pod_volumes(
        self, pod: Pod, claims: PodVolumeClaims, node: Node
    ) -> tuple[PodVolumes, list[str]]:
        """``FindPodVolumes``: the node's bindings and provisions, and the conflict reasons
        (none when the node fits); raises VolumeError."""
        unbound_ok = bound_ok = sufficient = pvs_found = True
        static: list[BindingInfo] = []
        dynamic: list[DynamicProvision] = []
        labels_only = label_node(node.metadata.labels)
        if claims.bound_claims:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound_claims, node, labels_only)
        if claims.unbound_claims_delay_binding:
            to_match: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            for claim in claims.unbound_claims_delay_binding:
                selected = claim.metadata.annotations.get(ANN_SELECTED_NODE)
                if selected is None:
                    to_match.append(claim)
                elif selected != node.metadata.name:
                    unbound_ok = False  # fast path: provisioning was started for another node
                    to_match = to_provision = []
                    break
                else:
                    to_provision.append(claim)
            if to_match:
                unbound_ok, static, unmatched = self._find_matching_volumes(
                    to_match, claims.unbound_volumes_delay_binding, node
                )
                to_provision.extend(unmatched)
            if to_provision:
                unbound_ok, sufficient, dynamic = self._check_volume_provisions(to_provision, node)
        reasons: list[str] = []
        if not bound_ok:
            reasons.append(self.node_conflict_reason)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return PodVolumes(static or None, dynamic or None), reasons

    def _check_bound_claims(
        self, claims: list[PersistentVolumeClaim], node: Node, labels_only: Node
    ) -> tuple[bool, bool]:
        """``checkBoundClaims``: (node affinity satisfied, every PV found)."""
        csi_node = self.cluster.get_csi_node(node.metadata.name)
        for pvc in claims:
            try:
                pv = self.pv_cache.get(pvc.spec.volume_name)
            except CacheNotFoundError:
                return True, False
            pv = try_translate_pv_to_csi(pv, csi_node)
            if check_node_affinity(pv, labels_only) is not None:
                return False, True
        return True, True

    def _find_matching_volumes(
        self,
        claims: list[PersistentVolumeClaim],
        unbound_volumes: dict[str, list[PersistentVolume]],
        node: Node,
    ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        """``findMatchingVolumes``: smallest claims first, each PV chosen at most once."""
        ordered = sorted(claims, key=lambda c: quantity(storage_request(c)))
        chosen: dict[str, PersistentVolume] = {}
        bindings: list[BindingInfo] = []
        unbound: list[PersistentVolumeClaim] = []
        found = True
        for pvc in ordered:
            pvs = unbound_volumes.get(get_persistent_volume_claim_class(pvc), [])
            pv = find_matching_volume(pvc, pvs, node, chosen, True, self.vac_enabled)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen[pv.metadata.name] = pv
            bindings.append(BindingInfo(pvc=pvc, pv=pv))
        return found, bindings, unbound

    def _check_volume_provisions(
        self, claims: list[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool, list[DynamicProvision]]:
        """``checkVolumeProvisions``: (provisioning possible, enough storage, provisions)."""
        out: list[DynamicProvision] = []
        for claim in claims:
            class_name = get_persistent_volume_claim_class(claim)
            if not class_name:
                raise VolumeError(f'no class for claim "{pvc_name(claim)}"')
            sc = self.cluster.get_storage_class(class_name)
            if sc is None:
                raise VolumeError(f'failed to find storage class "{class_name}"')
            provisioner = sc.provisioner
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(sc.allowed_topologies, node.metadata.labels):
                return False, True, []
            sufficient, capacity = self._has_enough_capacity(provisioner, claim, sc, node)
            if not sufficient:
                return True, False, []
            out.append(DynamicProvision(pvc=claim, node_capacity=capacity))
        return True, True, out

    def _has_enough_capacity(
        self, provisioner: str, claim: PersistentVolumeClaim, sc: StorageClass, node: Node
    ) -> tuple[bool, CSIStorageCapacity | None]:
        """``hasEnoughCapacity``: only for a CSI driver with ``storageCapacity: true``."""
        request = storage_request(claim)
        if request is None:
            return True, None
        driver = self.cluster.get_csi_driver(provisioner)
        if driver is None or not driver.spec.storage_capacity:
            return True, None
        size = quantity_int(request)
        for capacity in list(self.cluster.csi_storage_capacities.values()):
            if (
                capacity.storage_class_name == sc.metadata.name
                and _capacity_sufficient(capacity, size)
                and _node_has_access(node, capacity)
            ):
                return True, capacity
        return False, None

    # --- Reserve / Unreserve ------------------------------------------------------------------
    def are_pod_volumes_bound(self, pod: Pod) -> bool:
        """``arePodVolumesBound`` (an error counts as unbound)."""
        for vol in pod.spec.volumes:
            try:
                bound, _ = self.is_volume_bound(pod, vol)
            except VolumeError:
                return False
            if not bound:
                return False
        return True

    def assume_pod_volumes(self, pod: Pod, node_name: str, pod_volumes: PodVolumes) -> bool:
        """``AssumePodVolumes``: True when every claim is already bound; otherwise the bindings
        and provisions go into the caches and ``pod_volumes`` (reverted on error, VolumeError)."""
        if self.are_pod_volumes_bound(pod):
            return True
        new_bindings: list[BindingInfo] = []
        for binding in pod_volumes.static_bindings or []:
            new_pv, dirty = get_bind_volume_to_claim(binding.pv, binding.pvc)
            if dirty:
                try:
                    self.pv_cache.assume(new_pv)
                except VolumeError:
                    self._revert_pvs(new_bindings)
                    raise
            new_bindings.append(BindingInfo(pvc=binding.pvc, pv=new_pv))
        new_provisions: list[DynamicProvision] = []
        for provision in pod_volumes.dynamic_provisions or []:
            meta = provision.pvc.metadata
            clone = msgspec.structs.replace(
                provision.pvc,
                metadata=msgspec.structs.replace(
                    meta, annotations={**meta.annotations, ANN_SELECTED_NODE: node_name}
                ),
            )
            try:
                self.pvc_cache.assume(clone)
            except VolumeError:
                self._revert_pvs(new_bindings)
                self._revert_pvcs([p.pvc for p in new_provisions])
                raise
            new_provisions.append(DynamicProvision(pvc=clone))
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = new_provisions
        return False

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        """``RevertAssumedPodVolumes``."""
        self._revert_pvs(pod_volumes.static_bindings or [])
        self._revert_pvcs([p.pvc for p in pod_volumes.dynamic_provisions or []])

    def _revert_pvs(self, bindings: list[BindingInfo]) -> None:
        for b in bindings:
            self.pv_cache.restore_pv(b.pv)

    def _revert_pvcs(self, claims: list[PersistentVolumeClaim]) -> None:
        for c in claims:
            self.pvc_cache.restore_pvc(c)

    # --- PreBind -----------------------------------------------------------------------------
    async def bind_pod_volumes(self, pod: Pod, pod_volumes: PodVolumes | None) -> None:
        """``BindPodVolumes``: the API updates, then poll (every second, after the first second)
        until every claim is bound; raises VolumeError "binding volumes: ..." on a failed check
        or when bindTimeoutSeconds pass ("context deadline exceeded")."""
        if pod_volumes is None:
            return
        bindings = pod_volumes.static_bindings
        claims = [p.pvc for p in pod_volumes.dynamic_provisions or []]  # never nil upstream
        await self.bind_api_update(pod, bindings, claims)
        # a simulation's scheduler parks the cycle while it polls
        park_until = self.handle.park_until
        start = anyio.current_time()
        deadline = start + self.bind_timeout
        tick = 1
        while True:
            at = start + tick * BIND_POLL_INTERVAL
            if at >= deadline:
                await park_until(deadline)
                raise VolumeError("binding volumes: context deadline exceeded")
            await park_until(at)
            try:
                if self.check_bindings(pod, bindings, claims):
                    return
            except VolumeError as e:
                raise VolumeError(f"binding volumes: {e}") from e
            tick += 1

    async def bind_api_update(
        self,
        pod: Pod,
        bindings: list[BindingInfo] | None,
        claims: list[PersistentVolumeClaim] | None,
    ) -> None:
        """``bindAPIUpdate``: PUT each bound PV, then each claim to provision (the stored
        objects replace the assumed ones in ``bindings``/``claims``); what was not written is
        reverted in the caches when one update fails."""
        pod_name = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if bindings is None:
            raise VolumeError(f'failed to get cached bindings for pod "{pod_name}"')
        if claims is None:
            raise VolumeError(f'failed to get cached claims to provision for pod "{pod_name}"')
        client = self.handle.client
        done_bindings = done_claims = 0
        try:
            for binding in bindings:
                binding.pv = await client.update_persistent_volume(binding.pv)
                done_bindings += 1
            for i, claim in enumerate(claims):
                claims[i] = await client.update_persistent_volume_claim(claim)
                done_claims += 1
        except Exception as e:
            self._revert_pvs(bindings[done_bindings:])
            self._revert_pvcs(claims[done_claims:])
            raise VolumeError(str(e)) from e

    def check_bindings(
        self,
        pod: Pod,
        bindings: list[BindingInfo] | None,
        claims: list[PersistentVolumeClaim] | None,
    ) -> bool:
        """``checkBindings``: True when the API objects (not the assumed ones) show every claim
        fully bound; False to poll again; VolumeError when binding failed for good."""
        pod_name = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if bindings is None:
            raise VolumeError(f'failed to get cached bindings for pod "{pod_name}"')
        if claims is None:
            raise VolumeError(f'failed to get cached claims to provision for pod "{pod_name}"')
        node_name = pod.spec.node_name
        node = self.cluster.nodes.get(node_name)
        if node is None:
            raise VolumeError(f'failed to get node "{node_name}": node "{node_name}" not found')
        csi_node = self.cluster.get_csi_node(node_name)
        if self.cluster.get_pod(pod.metadata.namespace, pod.metadata.name) is None:
            raise VolumeError(f'pod does not exist any more: pod "{pod.metadata.name}" not found')
        labels_only = label_node(node.metadata.labels)
        for binding in bindings:
            try:
                pv = self.pv_cache.get_api_obj(binding.pv.metadata.name)
                pvc = self.pvc_cache.get_api_obj(
                    (binding.pvc.metadata.namespace, binding.pvc.metadata.name)
                )
            except CacheNotFoundError as e:
                raise VolumeError(f"failed to check binding: {e}") from None
            if _newer(binding.pv, pv):
                return False  # the informer has not seen our update yet
            pv = try_translate_pv_to_csi(pv, csi_node)
            err = check_node_affinity(pv, labels_only)
            if err is not None:
                raise VolumeError(
                    f'pv "{pv.metadata.name}" node affinity doesn\'t match node "{node_name}": {err}'
                )
            ref = pv.spec.claim_ref
            if ref is None or not ref.uid:
                raise VolumeError(f'ClaimRef got reset for pv "{pv.metadata.name}"')
            if not is_pvc_fully_bound(pvc):
                return False
        for claim in claims:
            try:
                pvc = self.pvc_cache.get_api_obj((claim.metadata.namespace, claim.metadata.name))
            except CacheNotFoundError as e:
                raise VolumeError(f"failed to check provisioning pvc: {e}") from None
            if _newer(claim, pvc):
                return False
            if not pvc.metadata.annotations:
                raise VolumeError(f'selectedNode annotation reset for PVC "{pvc.metadata.name}"')
            if pvc.metadata.annotations.get(ANN_SELECTED_NODE, "") != node_name:
                # the provisioner drops the annotation when provisioning fails
                raise VolumeError(f'provisioning failed for PVC "{pvc.metadata.name}"')
            if pvc.spec.volume_name:
                try:
                    pv = self.pv_cache.get_api_obj(pvc.spec.volume_name)
                except CacheNotFoundError:
                    return False  # the PV may not have reached the informer yet
                pv = try_translate_pv_to_csi(pv, csi_node)
                err = check_node_affinity(pv, labels_only)
                if err is not None:
                    raise VolumeError(
                        f'pv "{pv.metadata.name}" node affinity doesn\'t match node "{node_name}": {err}'
                    )
            if not is_pvc_fully_bound(pvc):
                return False
        return True


def _newer(ours: Any, cached: Any) -> bool:
    """``versioner.CompareResourceVersion(ours, cached) > 0``."""
    name = ours.metadata.name
    return object_version(ours, "object", name) > object_version(cached, "object", name)


def _capacity_sufficient(capacity: CSIStorageCapacity, size: int) -> bool:
    limit = volume_limit(capacity)
    return limit is not None and quantity_int(limit) >= size


def _node_has_access(node: Node, capacity: CSIStorageCapacity) -> bool:
    """``nodeHasAccess``: the capacity's nodeTopology selects the node (no topology: no)."""
    if capacity.node_topology is None:
        return False
    try:
        return compile_label_selector(capacity.node_topology)(node.metadata.labels)
    except ValueError:
        return False


__all__ = [
    "BIND_POLL_INTERVAL",
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NODE_CONFLICT_BEFORE_1_33",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "BindingInfo",
    "DynamicProvision",
    "PodVolumeClaims",
    "PodVolumes",
    "StorageResource",
    "VolumeBinder",
    "is_pvc_fully_bound",
    "volume_limit",
]
