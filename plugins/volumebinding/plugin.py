"""The VolumeBinding plugin's extension points (upstream ``volumebinding/volume_binding.go``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    ConfigError,
    EventResource,
    Handle,
    PreBindPreFlightResult,
    QueueingHint,
    Status,
    hookimpl,
)

from .._helper import PRE_FLIGHT_SKIP, SKIP, queueing_hints_enabled
from .args import STORAGE_CAPACITY_SCORING, VolumeBindingArgs, parse_args, validate_shape
from .binder import PodVolumeClaims, PodVolumes, StorageResource, VolumeBinder, volume_limit
from .helpers import (
    CLAIM_LOST,
    MIGRATED_PLUGINS_ANNOTATION,
    VolumeError,
    pod_claim_name,
    quantity_int,
    storage_request,
    volume_is_for_pod,
)
from .scorer import VolumeCapacityScorer, build_scorer_function, scaled_shape

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kubesched.framework import CycleState, NodeBatch, NodeInfo, Pod

NAME = "VolumeBinding"
STATE_KEY = NAME
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ERR_NO_POD_VOLUME_FOR_NODE = "no pod volume found for node"
_NOT_FOUND = "not found"  # framework.ErrNotFound, a CycleState without the plugin's data
PARALLEL = PreBindPreFlightResult(allow_parallel=True)  # v1.36 PreBindPreFlight (kubernetes#135393)


class StateData:
    """``stateData``: written by PreFilter, filled by Filter (the node's PodVolumes), read by
    Score, Reserve, PreBind and Unreserve.  ``clone`` shares it, as upstream's pointer does."""

    __slots__ = ("all_bound", "pod_volumes_by_node", "pod_volume_claims", "has_static_bindings")

    def __init__(
        self,
        pod_volumes_by_node: dict[str, PodVolumes] | None = None,
        pod_volume_claims: PodVolumeClaims | None = None,
    ) -> None:
        self.all_bound = False
        self.pod_volumes_by_node = pod_volumes_by_node
        self.pod_volume_claims = pod_volume_claims
        self.has_static_bindings = False

    def clone(self) -> StateData:
        return self


def _state(state: CycleState) -> StateData | None:
    data = state.get(STATE_KEY)
    return data if isinstance(data, StateData) else None


class VolumeBinding:
    """PreFilter, Filter, PreScore, Score, Reserve/Unreserve, PreBind and EnqueueExtensions."""

    name = NAME

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle: Handle = handle
        self.args: VolumeBindingArgs = parse_args(args)
        gates = handle.feature_gates
        self._scorers: dict[bool, VolumeCapacityScorer | None] = {}
        if gates:  # gates given: validate as upstream's New does with the gate's value
            self._scorer_for(bool(gates.get(STORAGE_CAPACITY_SCORING, False)))
        elif self.args.shape is not None:  # none given: check what holds whatever the gate
            validate_shape(self.args, True)
        self.binder = VolumeBinder(handle, float(self.args.bind_timeout_seconds))

    # --- the StorageCapacityScoring gate ------------------------------------------------------
    def storage_capacity_scoring(self) -> bool:
        return bool(self.handle.feature_gates.get(STORAGE_CAPACITY_SCORING, False))

    def _scorer_for(self, enabled: bool) -> VolumeCapacityScorer | None:
        if enabled not in self._scorers:
            shape = validate_shape(self.args, enabled)
            self._scorers[enabled] = (
                None if shape is None else build_scorer_function(scaled_shape(shape))
            )
        return self._scorers[enabled]

    def scorer(self) -> VolumeCapacityScorer | None:
        """The scorer, None with StorageCapacityScoring off (upstream's ``pl.scorer``)."""
        scorers = self._scorers  # the known answer first (PreScore asks at every cycle)
        enabled = bool(self.handle.feature_gates.get(STORAGE_CAPACITY_SCORING, False))
        if enabled in scorers:
            return scorers[enabled]
        try:
            return self._scorer_for(self.storage_capacity_scoring())
        except ConfigError:  # a shape given with the gate off: no scoring
            self._scorers[self.storage_capacity_scoring()] = None
            return None

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        if not queueing_hints_enabled(self.handle):
            # hints off: also taint updates (a Node/Add may be filtered out by preCheck, kubernetes#109437)
            node_actions |= ActionType.UPDATE_NODE_TAINT
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, add_update),
                self.is_schedulable_after_storage_class_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, add_update),
                self.is_schedulable_after_csi_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE),
                self.is_schedulable_after_csi_driver_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, add_update),
                self.is_schedulable_after_csi_storage_capacity_change,
            ),
        ]

    def is_schedulable_after_csi_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A new CSINode, or a change of its migrated-plugins annotation."""
        if old is None:
            return QueueingHint.QUEUE
        if _kind(old) != "CSINode" or _kind(new) != "CSINode":
            return QueueingHint.QUEUE  # upstream: an error, which queues
        before = old.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION)
        after = new.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION)
        return QueueingHint.QUEUE if before != after else QueueingHint.QUEUE_SKIP

    def is_schedulable_after_persistent_volume_claim_change(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """A claim of the pod (in its namespace) was created or changed."""
        if _kind(new) != "PersistentVolumeClaim" or (
            old is not None and _kind(old) != "PersistentVolumeClaim"
        ):
            return QueueingHint.QUEUE
        if pod.metadata.namespace != new.metadata.namespace:
            return QueueingHint.QUEUE_SKIP
        for vol in pod.spec.volumes:
            claim = pod_claim_name(pod, vol)
            if claim is not None and claim[0] == new.metadata.name:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_storage_class_change(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """A new StorageClass, or a change of its allowedTopologies."""
        if _kind(new) != "StorageClass" or (old is not None and _kind(old) != "StorageClass"):
            return QueueingHint.QUEUE
        if old is None:
            return QueueingHint.QUEUE
        if old.allowed_topologies != new.allowed_topologies:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_storage_capacity_change(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """A new CSIStorageCapacity, or a larger volume limit."""
        if _kind(new) != "CSIStorageCapacity" or (
            old is not None and _kind(old) != "CSIStorageCapacity"
        ):
            return QueueingHint.QUEUE
        if old is None:
            return QueueingHint.QUEUE
        old_limit, new_limit = volume_limit(old), volume_limit(new)
        if new_limit is not None and (
            old_limit is None or quantity_int(new_limit) > quantity_int(old_limit)
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_driver_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A CSI driver the pod uses inline stopped tracking storage capacity."""
        if _kind(new) != "CSIDriver" or _kind(old) != "CSIDriver":
            return QueueingHint.QUEUE
        for vol in pod.spec.volumes:
            if vol.csi is None or vol.csi.driver != new.metadata.name:
                continue
            if old.spec.storage_capacity and not new.spec.storage_capacity:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # --- PreFilter ----------------------------------------------------------------------------
    def pod_has_pvcs(self, pod: Pod) -> bool:
        """``podHasPVCs``: whether the pod uses a claim; raises VolumeError for a missing, lost,
        terminating or foreign (generic ephemeral) one."""
        cluster = self.handle.cluster
        has = False
        for vol in pod.spec.volumes:
            claim = pod_claim_name(pod, vol)
            if claim is None:
                continue
            name, ephemeral = claim
            has = True
            pvc = cluster.get_pvc(pod.metadata.namespace, name)
            if pvc is None:
                if ephemeral:
                    raise VolumeError(
                        f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                    )
                raise VolumeError(f'persistentvolumeclaim "{name}" not found')
            if pvc.status.phase == CLAIM_LOST:
                raise VolumeError(
                    f'persistentvolumeclaim "{pvc.metadata.name}" bound to non-existent persistentvolume '
                    f'"{pvc.spec.volume_name}"'
                )
            if pvc.metadata.deletion_timestamp is not None:
                raise VolumeError(f'persistentvolumeclaim "{pvc.metadata.name}" is being deleted')
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    raise VolumeError(err)
        return has

    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        try:
            has_pvc = self.pod_has_pvcs(pod)
        except VolumeError as e:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(e))
        if not has_pvc:
            state.write(STATE_KEY, StateData())
            return SKIP
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except VolumeError as e:
            return Status.as_error(e)
        if claims.unbound_claims_immediate:
            # the PV controller binds them; a PVC event brings the pod back
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNBOUND_IMMEDIATE)
        kept = PodVolumeClaims(
            bound_claims=claims.bound_claims,
            unbound_claims_delay_binding=claims.unbound_claims_delay_binding,
            unbound_volumes_delay_binding=claims.unbound_volumes_delay_binding,
        )
        state.write(STATE_KEY, StateData(pod_volumes_by_node={}, pod_volume_claims=kept))
        return None

    # --- Filter -------------------------------------------------------------------------------
    @hookimpl
    def kubesched_filter(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> dict[int, Status] | None:
        s = _state(state)
        if s is None:
            st = Status(Code.ERROR, _NOT_FOUND)
            return dict.fromkeys(range(len(nodes)), st)
        claims = s.pod_volume_claims
        if claims is None or s.pod_volumes_by_node is None:
            return None
        out: dict[int, Status] = {}
        shared: dict[tuple[str, ...], Status] = {}
        for i, ni in enumerate(nodes.infos):
            node = ni.node
            assert node is not None  # a node in a Filter batch has its Node
            try:
                pod_volumes, reasons = self.binder.find_pod_volumes(pod, claims, node)
            except VolumeError as e:
                out[i] = Status.as_error(e)
                continue
            if reasons:
                key = tuple(reasons)
                rejected = shared.get(key)
                if rejected is None:
                    rejected = shared[key] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
                out[i] = rejected
                continue
            s.pod_volumes_by_node[node.metadata.name] = pod_volumes
            s.has_static_bindings = s.has_static_bindings or bool(pod_volumes.static_bindings)
        return out or None

    # --- PreScore / Score ---------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        if self.scorer() is None:
            return SKIP
        s = _state(state)
        if s is None:
            return Status(Code.ERROR, _NOT_FOUND)
        if s.has_static_bindings or self.storage_capacity_scoring():
            return None
        return SKIP

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        out = np.zeros(len(nodes), dtype=np.int64)
        scorer = self.scorer()
        if scorer is None:
            return out
        s = _state(state)
        if s is None:
            raise VolumeError(_NOT_FOUND)
        by_node = s.pod_volumes_by_node or {}
        gate = self.storage_capacity_scoring()
        for i, name in enumerate(nodes.names):
            pod_volumes = by_node.get(name)
            if pod_volumes is not None:
                out[i] = scorer(_class_resources(pod_volumes, gate))
        return out

    # --- Reserve / Unreserve ------------------------------------------------------------------
    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = _state(state)
        if s is None:
            return Status(Code.ERROR, _NOT_FOUND)
        pod_volumes = (s.pod_volumes_by_node or {}).get(node_name)
        if pod_volumes is None:
            s.all_bound = True  # the pod has no claim
            return None
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod, node_name, pod_volumes)
        except VolumeError as e:
            return Status.as_error(e)
        return None

    @hookimpl
    def kubesched_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = _state(state)
        if s is None:
            return
        pod_volumes = (s.pod_volumes_by_node or {}).get(node_name)
        if pod_volumes is not None:
            self.binder.revert_assumed_pod_volumes(pod_volumes)

    # --- PreBind ------------------------------------------------------------------------------
    pre_bind_pre_flight_skip = PRE_FLIGHT_SKIP  # the runner takes this answer by identity
    # a pod whose PreFilter was skipped (no claim) had its Reserve mark it all bound: the
    # pre-flight answers the shared Skip (taken without a call when every pre-flight would)
    pre_flight_skips_pre_filter_skipped = True

    def pre_bind_pre_flight(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[PreBindPreFlightResult, Status | None]:
        """``PreBindPreFlight`` (v1.34): Skip when every claim was bound already, an error when
        Filter found nothing for the node (run by the binding cycle with
        NominatedNodeNameForExpectation: :mod:`kubesched.scheduler._expectation`); its PreBind
        may run in parallel with the other PreBind plugins (v1.36, kubernetes#135393)."""
        s = _state(state)
        if s is None:
            return PARALLEL, Status(Code.ERROR, _NOT_FOUND)
        if s.all_bound:
            return PRE_FLIGHT_SKIP  # (PARALLEL, SKIP), the shared tuple
        if node_name not in (s.pod_volumes_by_node or {}):
            return PARALLEL, Status(Code.ERROR, f'{ERR_NO_POD_VOLUME_FOR_NODE} "{node_name}"')
        return PARALLEL, None

    @hookimpl
    async def kubesched_pre_bind(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        s = _state(state)
        if s is None:
            return Status(Code.ERROR, _NOT_FOUND)
        if s.all_bound:
            return None  # nothing to bind
        pod_volumes = (s.pod_volumes_by_node or {}).get(node_name)
        if pod_volumes is None:
            return Status(Code.ERROR, f'{ERR_NO_POD_VOLUME_FOR_NODE} "{node_name}"')
        try:
            await self.binder.bind_pod_volumes(pod, pod_volumes)
        except VolumeError as e:
            return Status.as_error(e)
        return None


def _kind(obj: Any) -> str:
    return getattr(obj, "kind", "") if obj is not None else ""


def _class_resources(
    pod_volumes: PodVolumes, storage_capacity_scoring: bool
) -> dict[str, StorageResource]:
    """Score's grouping by storage class: the static bindings (PV capacities), else, with
    StorageCapacityScoring, the provisions (their CSIStorageCapacity; one capacity per class,
    requests summed)."""
    out: dict[str, StorageResource] = {}
    if pod_volumes.static_bindings or not storage_capacity_scoring:
        for binding in pod_volumes.static_bindings or []:
            r = out.setdefault(binding.storage_class_name(), StorageResource())
            sr = binding.storage_resource()
            r.requested += sr.requested
            r.capacity += sr.capacity
        return out
    for provision in pod_volumes.dynamic_provisions or []:
        cap = provision.node_capacity
        if cap is None:
            continue
        r = out.setdefault(provision.pvc.spec.storage_class_name or "", StorageResource())
        r.capacity = quantity_int(cap.capacity)  # not +=: one class's capacity on the node
        r.requested += quantity_int(storage_request(provision.pvc))
    return out


def new(args: Any, handle: Handle) -> VolumeBinding:
    return VolumeBinding(args, handle)


__all__ = [
    "ERR_NO_POD_VOLUME_FOR_NODE",
    "ERR_UNBOUND_IMMEDIATE",
    "NAME",
    "STATE_KEY",
    "StateData",
    "VolumeBinding",
    "new",
]
