"""VolumeZone: a pod's bound volumes must be in the node's zone and region (``plugins/volumezone``).

- PreFilter: for each PersistentVolumeClaim volume of the pod, the bound PersistentVolume's
  topology labels — ``failure-domain.beta.kubernetes.io/zone`` and ``/region``,
  ``topology.kubernetes.io/zone`` and ``/region`` — each a set of values (``a__b`` is zones a and
  b; a label with an empty element is ignored).  An unbound claim of a WaitForFirstConsumer class
  is skipped (VolumeBinding picks its volume).  UnschedulableAndUnresolvable: a claim with no name
  ("PersistentVolumeClaim had no name"), a missing claim, PV or StorageClass (the lister's
  message, e.g. ``persistentvolumeclaim "x" not found``), an unbound claim without a class
  ("PersistentVolumeClaim had no pv name and storageClass name"), a class without a binding mode
  ("VolumeBindingMode not set for StorageClass "x"") and an unbound claim of an Immediate class
  ("PersistentVolume had no name").  Skip when no topology is found (every pod without claims).
- Filter, per node: a node without any of the four labels passes (a single-zone cluster);
  otherwise each PV label must be on the node (a beta label may match the node's GA label) with a
  value in the PV's set, else UnschedulableAndUnresolvable "node(s) had no available volume zone".
  Without the PreFilter state (PreFilter did not run) the topologies are computed here.
- EnqueueExtensions: StorageClass/Add (a WaitForFirstConsumer class), Node/Add and label updates
  (with hints off also taint updates, kubernetes#109437), PersistentVolumeClaim/Add|Update (a claim
  of the pod), PersistentVolume/Add|Update (a new PV, or changed topology labels).

The nodes are compared as label columns (the snapshot's label codes), not one by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework import (
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    Handle,
    QueueingHint,
    Status,
    get_persistent_volume_claim_class,
    hookimpl,
)

from ._helper import SKIP, queueing_hints_enabled
from ._volumes import PV_RESOURCE, PVC_RESOURCE, STORAGE_CLASS_RESOURCE, not_found

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeBatch, NodeInfo, Pod

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_TOPOLOGY_ZONE,
    LABEL_TOPOLOGY_REGION,
)
LABEL_MULTI_ZONE_DELIMITER = "__"
_GA = {
    LABEL_FAILURE_DOMAIN_BETA_ZONE: LABEL_TOPOLOGY_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION: LABEL_TOPOLOGY_REGION,
}

PVTopology = tuple[str, str, frozenset[str]]
"""``pvTopology``: (PV name, label key, the label's values)."""


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """``volumehelpers.LabelZonesToSet``: ``a__b`` → {a, b}; None when an element is empty."""
    out = set()
    for zone in value.split(LABEL_MULTI_ZONE_DELIMITER):
        zone = zone.strip()
        if not zone:
            return None
        out.add(zone)
    return frozenset(out)


def pv_topologies(pv: Any) -> list[PVTopology]:
    """``getPVTopologies``: the PV's topology labels in :data:`TOPOLOGY_LABELS` order."""
    out: list[PVTopology] = []
    labels = pv.metadata.labels
    for key in TOPOLOGY_LABELS:
        value = labels.get(key)
        if value is None:
            continue
        values = label_zones_to_set(value)
        if values is not None:  # a malformed label is ignored
            out.append((pv.metadata.name, key, values))
    return out


def pvc_names(pod: Pod) -> list[str]:
    """``getPersistentVolumeClaimNameFromPod``: the pod's claim names, in volume order."""
    return [
        v.persistent_volume_claim.claim_name
        for v in pod.spec.volumes
        if v.persistent_volume_claim is not None
    ]


class VolumeZone:
    """PreFilter, Filter and EnqueueExtensions."""

    name = NAME
    # PreFilter answers the shared Skip, and does nothing else, for a pod without volumes
    # (kubesched.runtime._filter_runners then does not call it)
    skips_pre_filter_without = "volumes"

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle: Handle = handle

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        if not queueing_hints_enabled(self.handle):
            node_actions |= ActionType.UPDATE_NODE_TAINT  # kubernetes#109437
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            # volumeBindingMode is immutable: a class update changes nothing
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD),
                self.is_schedulable_after_storage_class_added,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
                self.is_schedulable_after_pvc_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update),
                self.is_schedulable_after_pv_change,
            ),
        ]

    def is_schedulable_after_pvc_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when the added or updated claim is one of the pod's."""
        if (
            new is not None
            and new.metadata.namespace == pod.metadata.namespace
            and new.metadata.name in pvc_names(pod)
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_storage_class_added(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """Queue only for a new WaitForFirstConsumer class."""
        if new.volume_binding_mode != VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_pv_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue for a new PV, or when a PV's topology labels changed."""
        if old is None:
            return QueueingHint.QUEUE
        if pv_topologies(old) != pv_topologies(new):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # --- PreFilter ----------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        if not pod.spec.volumes:
            return SKIP
        topologies, st = self.pod_pv_topologies(pod)
        if st is not None:
            return st
        if not topologies:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, topologies)
        return None

    def pod_pv_topologies(self, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        """``getPVbyPod``: the topologies of the pod's bound volumes, or the status that rejects
        the pod."""
        cluster = self.handle.cluster
        ns = pod.metadata.namespace
        out: list[PVTopology] = []
        for claim in pvc_names(pod):
            if not claim:
                return [], Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name"
                )
            pvc = cluster.get_pvc(ns, claim)
            if pvc is None:
                return [], Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found(PVC_RESOURCE, claim)
                )
            pv_name = pvc.spec.volume_name
            if not pv_name:
                sc_name = get_persistent_volume_claim_class(pvc)
                if not sc_name:
                    return [], Status(
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        "PersistentVolumeClaim had no pv name and storageClass name",
                    )
                sc = cluster.get_storage_class(sc_name)
                if sc is None:
                    return [], Status(
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        not_found(STORAGE_CLASS_RESOURCE, sc_name),
                    )
                if sc.volume_binding_mode is None:
                    return [], Status(
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        f'VolumeBindingMode not set for StorageClass "{sc_name}"',
                    )
                if sc.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
                    continue  # an unbound volume: VolumeBinding chooses it
                return [], Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name"
                )
            pv = cluster.get_pv(pv_name)
            if pv is None:
                return [], Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found(PV_RESOURCE, pv_name)
                )
            out.extend(pv_topologies(pv))
        return out, None

    # --- Filter -------------------------------------------------------------------------------
    @hookimpl
    def kubesched_filter(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> dict[int, Status] | None:
        if not pod.spec.volumes:
            return None
        topologies: list[PVTopology] | None = state.get(PRE_FILTER_STATE_KEY)
        if topologies is None:  # PreFilter did not run: compute them here
            topologies, st = self.pod_pv_topologies(pod)
            if st is not None:
                return dict.fromkeys(range(len(nodes)), st)
        if not topologies:
            return None
        n = len(nodes)
        codes = {key: nodes.label_codes(key) for key in TOPOLOGY_LABELS}
        constrained = np.zeros(n, dtype=bool)  # the node has one of the topology labels
        for c, _, _ in codes.values():
            constrained |= c >= 0
        bad = np.zeros(n, dtype=bool)
        for _, key, values in topologies:
            ok = _matches(codes[key], values)
            ga = _GA.get(key)
            if ga is not None:  # a beta label of the PV may match the node's GA label
                ok = np.where(codes[key][0] >= 0, ok, _matches(codes[ga], values))
            bad |= ~ok
        bad &= constrained
        if not bad.any():
            return None
        st = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return dict.fromkeys((int(i) for i in np.flatnonzero(bad)), st)


def _matches(
    label: tuple[np.ndarray, list[str], dict[str, int]], values: frozenset[str]
) -> np.ndarray:
    """Per node: it has the label with a value in ``values``."""
    codes, label_values, index = label
    allowed = np.zeros(len(label_values) + 1, dtype=bool)  # slot 0: no such label
    for v in values:
        c = index.get(v)
        if c is not None:
            allowed[c + 1] = True
    out: np.ndarray = allowed[codes + 1]
    return out


def new(args: Any, handle: Handle) -> VolumeZone:
    return VolumeZone(args, handle)


__all__ = [
    "ERR_REASON_CONFLICT",
    "LABEL_FAILURE_DOMAIN_BETA_REGION",
    "LABEL_FAILURE_DOMAIN_BETA_ZONE",
    "LABEL_TOPOLOGY_REGION",
    "LABEL_TOPOLOGY_ZONE",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "TOPOLOGY_LABELS",
    "VolumeZone",
    "label_zones_to_set",
    "new",
    "pv_topologies",
    "pvc_names",
]
