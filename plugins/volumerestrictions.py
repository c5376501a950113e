"""VolumeRestrictions: disk conflicts and ReadWriteOncePod claims (``plugins/volumerestrictions``).

- PreFilter: looks up the pod's PersistentVolumeClaims (a missing claim is
  UnschedulableAndUnresolvable with the lister's message, ``persistentvolumeclaim "x" not
  found``), keeps the names of those with the ReadWriteOncePod access mode and counts how many of
  them a scheduled pod already uses (``StorageInfos().IsPVCUsedByPods``: a pod on a node of the
  snapshot refers to ``namespace/claim``).  Skip when the pod has no GCE PD, AWS EBS, RBD or iSCSI
  volume and no such conflict, which is every pod without volumes.
- PreFilterExtensions: AddPod / RemovePod add / subtract the references of that pod to those
  claims (by claim name, as upstream), for the nominated pods and preemption's dry runs.
- Filter, per node: Unschedulable "node(s) had no available disk" when a pod on the node mounts
  the same disk (GCE PD: same pdName unless both read-only; AWS EBS: same volumeID; iSCSI: same
  IQN unless both read-only; RBD: a common monitor, same pool and image, unless both read-only);
  else Unschedulable "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod
  access mode already in-use by another pod" (before 1.34: "node has pod using
  PersistentVolumeClaim with the same name and ReadWriteOncePod access mode") when the count above
  is not zero (preemption may help: the victim's RemovePod lowers it).
- EnqueueExtensions: Pod/Delete (queue when the deleted pod, in the pod's namespace, mounted a
  conflicting disk or a claim the pod uses), Node/Add (with hints off also node taint and label
  updates, kubernetes#109437), PersistentVolumeClaim/Add (a claim of the pod was created).

Speed.  A pod's restricted disks and its claims are derived once per PodInfo.  Over a snapshot
batch the pods on the nodes are visited through a snapshot pod index (pods grouped by their
disks), so each distinct set of disks is compared with the pod's once per cycle, never pod by pod;
the claims in use are counted per snapshot row and recounted only for the rows that changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    Handle,
    QueueingHint,
    Status,
    hookimpl,
)

from ._helper import SKIP, queueing_hints_enabled
from ._volumes import PVC_RESOURCE, READ_WRITE_ONCE_POD, not_found

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeBatch, NodeInfo, Pod, PodInfo

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
# ErrReasonReadWriteOncePodConflict, from 1.33 as the issue that asked for versions dates it
# (kubernetes#129145).  The sources disagree: v1.33.3's volume_restrictions.go still has the old
# text, v1.34.7's the new one (docs/versions.md, "Where the issue and the upstream source
# disagree"); v1.30.6 and v1.31.8 have the old one.
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_BEFORE_1_33 = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)

_DISKS = NAME + "/disks"  # PodInfo.extra key and snapshot pod index of a pod's restricted disks
_CLAIMS = NAME + "/claims"  # PodInfo.extra key of its (namespace, claim names)
_MISSING: Any = object()

# --- disks --------------------------------------------------------------------------------------

_GCE, _AWS, _ISCSI, _RBD = range(4)

Disk = tuple[Any, ...]
"""A restricted disk: ``(kind, identity, read-only[, pool, monitors])``."""


def restricted_disks(pod: Pod) -> tuple[Disk, ...]:
    """The pod's volumes the conflict check looks at (``needsRestrictionsCheck``)."""
    out: list[Disk] = []
    for v in pod.spec.volumes:
        if (gce := v.gce_persistent_disk) is not None:
            out.append((_GCE, gce.pd_name, gce.read_only))
        if (ebs := v.aws_elastic_block_store) is not None:
            out.append((_AWS, ebs.volume_id, False))
        if (iscsi := v.iscsi) is not None:
            out.append((_ISCSI, iscsi.iqn, iscsi.read_only))
        if (rbd := v.rbd) is not None:
            out.append((_RBD, rbd.image, rbd.read_only, rbd.pool, frozenset(rbd.monitors)))
    return tuple(out)


def disk_conflict(a: Disk, b: Disk) -> bool:
    """``isVolumeConflict`` for one pair of volumes."""
    if a[0] != b[0] or a[1] != b[1]:
        return False
    if a[0] == _AWS:  # an EBS volume is never shared
        return True
    if a[0] == _RBD and (a[3] != b[3] or not (a[4] & b[4])):  # same pool, a common monitor
        return False
    return not (a[2] and b[2])  # unless both mount it read-only


def disks_conflict(want: Iterable[Disk], existing: Sequence[Disk]) -> bool:
    return any(disk_conflict(w, e) for w in want for e in existing)


def _disks_of(pi: PodInfo) -> tuple[Disk, ...] | None:
    """The pod's restricted disks, derived once per PodInfo (None: none)."""
    d = pi.extra.get(_DISKS, _MISSING)
    if d is _MISSING:
        d = pi.extra[_DISKS] = restricted_disks(pi.pod) or None
    return d  # type: ignore[no-any-return]


def _claims_of(pi: PodInfo) -> tuple[str, frozenset[str]] | None:
    """``(namespace, claim names)`` of the pod's PersistentVolumeClaim volumes (None: none)."""
    c = pi.extra.get(_CLAIMS, _MISSING)
    if c is _MISSING:
        names = frozenset(claim_names(pi.pod))
        c = pi.extra[_CLAIMS] = (pi.pod.metadata.namespace, names) if names else None
    return c  # type: ignore[no-any-return]


def claim_names(pod: Pod) -> list[str]:
    """The claim names of the pod's PersistentVolumeClaim volumes, in volume order."""
    return [
        v.persistent_volume_claim.claim_name
        for v in pod.spec.volumes
        if v.persistent_volume_claim is not None
    ]


class PreFilterState:
    """The pod's ReadWriteOncePod claim names and how many references scheduled pods hold."""

    __slots__ = ("rwop_claims", "conflicting")

    def __init__(self, rwop_claims: frozenset[str], conflicting: int) -> None:
        self.rwop_claims = rwop_claims
        self.conflicting = conflicting

    def clone(self) -> PreFilterState:
        return PreFilterState(self.rwop_claims, self.conflicting)

    def update_with_pod(self, pi: PodInfo, multiplier: int) -> None:
        """``updateWithPod``: the pod's references to the claims (by name, any namespace)."""
        rwop = self.rwop_claims
        self.conflicting += multiplier * sum(1 for c in claim_names(pi.pod) if c in rwop)


class UsedClaims:
    """How many pods of a snapshot use each claim, ``(namespace, name)`` → count.

    Rebuilt when the snapshot's node set changes; otherwise only the rows whose NodeInfo
    changed since the last look (the snapshot's per-row generations) are recounted, so a
    pod with a ReadWriteOncePod claim does not visit every pod of the cluster.
    """

    __slots__ = ("snap", "tree_generation", "generations", "row_claims", "counts")

    def __init__(self) -> None:
        self.snap: Any = None
        self.tree_generation = -1
        self.generations = np.zeros(0, dtype=np.int64)
        self.row_claims: list[list[tuple[str, str]]] = []
        self.counts: dict[tuple[str, str], int] = {}

    def is_used(self, snap: Any, ns: str, name: str) -> bool:
        """Whether some pod of ``snap`` uses the claim ``ns/name``."""
        self._refresh(snap)
        return self.counts.get((ns, name), 0) > 0

    def _refresh(self, snap: Any) -> None:
        gens = snap.generations
        if (
            snap is not self.snap
            or snap.tree_generation != self.tree_generation
            or len(gens) != len(self.generations)
        ):
            self.snap, self.tree_generation = snap, snap.tree_generation
            self.row_claims = [_row_claims(ni) for ni in snap.node_infos]
            self.counts = {}
            for claims in self.row_claims:
                self._count(claims, 1)
        else:
            for row in np.flatnonzero(gens != self.generations).tolist():
                self._count(self.row_claims[row], -1)
                claims = self.row_claims[row] = _row_claims(snap.node_infos[row])
                self._count(claims, 1)
        self.generations = gens.copy()

    def _count(self, claims: list[tuple[str, str]], delta: int) -> None:
        counts = self.counts
        for c in claims:
            n = counts.get(c, 0) + delta
            if n > 0:
                counts[c] = n
            else:
                counts.pop(c, None)


def _row_claims(ni: NodeInfo) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for pi in ni.pods:
        c = _claims_of(pi)
        if c is not None:
            out.extend((c[0], name) for name in c[1])
    return out


def _state_error() -> Status:
    return Status(Code.ERROR, f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')


class VolumeRestrictions:
    """PreFilter (+AddPod/RemovePod), Filter and EnqueueExtensions."""

    name = NAME
    # PreFilter answers the shared Skip, and does nothing else, for a pod without volumes
    # (kubesched.runtime._filter_runners then does not call it)
    skips_pre_filter_without = "volumes"

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle: Handle = handle
        self._claims = UsedClaims()
        self._rwop_reason = (
            ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT
            if handle.emulated_version >= (1, 33)
            else ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_BEFORE_1_33
        )

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD
        if not queueing_hints_enabled(self.handle):
            # a Node/Add may be filtered out by preCheckForNode without hints (kubernetes#109437)
            node_actions |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        return [
            # volumes are immutable: only a deletion releases a disk or a claim
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE),
                self.is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            # the claim must exist for its access modes to be read
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                self.is_schedulable_after_pvc_added,
            ),
        ]

    def is_schedulable_after_pvc_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when the pod refers to the new claim (same namespace and name)."""
        if new.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QUEUE_SKIP
        if new.metadata.name in claim_names(pod):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when the deleted pod (same namespace) mounted a conflicting disk or used one of
        the pod's claims (the access mode is not looked up: a ReadWriteOncePod claim may be free)."""
        deleted = old
        if deleted.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QUEUE_SKIP
        want = restricted_disks(pod)
        if want and disks_conflict(want, restricted_disks(deleted)):
            return QueueingHint.QUEUE
        claims = set(claim_names(pod))
        if any(c in claims for c in claim_names(deleted)):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # --- PreFilter ----------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        volumes = pod.spec.volumes
        if not volumes:
            return SKIP
        needs_check = bool(restricted_disks(pod))
        ns = pod.metadata.namespace
        rwop: set[str] = set()
        cluster = self.handle.cluster
        for claim in claim_names(pod):
            pvc = cluster.get_pvc(ns, claim)
            if pvc is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found(PVC_RESOURCE, claim))
            if READ_WRITE_ONCE_POD in pvc.spec.access_modes:
                rwop.add(pvc.metadata.name)
        conflicting = 0
        if rwop:
            conflicting = self._conflicting(ns, rwop, nodes)
        if not needs_check and conflicting == 0:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(frozenset(rwop), conflicting))
        return None

    def _conflicting(self, ns: str, rwop: set[str], nodes: Sequence[NodeInfo]) -> int:
        """How many of the claims ``rwop`` of namespace ``ns`` a pod on one of ``nodes`` uses
        (``StorageInfos().IsPVCUsedByPods``: at most one pod can), counted row by row over the
        snapshot when ``nodes`` are its nodes."""
        snap = self.handle.snapshot
        if nodes is snap.node_infos:
            return sum(1 for c in rwop if self._claims.is_used(snap, ns, c))
        used: set[str] = set()
        for ni in nodes:
            for pi in ni.pods:
                c = _claims_of(pi)
                if c is not None and c[0] == ns:
                    used |= c[1]
        return sum(1 for c in rwop if c in used)

    @hookimpl
    def kubesched_pre_filter_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _state_error()
        s.update_with_pod(pod_to_add, 1)
        return None

    @hookimpl
    def kubesched_pre_filter_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _state_error()
        s.update_with_pod(pod_to_remove, -1)
        return None

    # --- Filter -------------------------------------------------------------------------------
    @hookimpl
    def kubesched_filter(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> dict[int, Status] | None:
        out: dict[int, Status] = {}
        want = restricted_disks(pod)
        if want:
            bad = _conflicting_positions(want, nodes)
            if bad:
                out = dict.fromkeys(bad, Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT))
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            st: Status | None = _state_error()
        elif s.conflicting > 0:
            st = Status(Code.UNSCHEDULABLE, self._rwop_reason)
        else:
            st = None
        if st is not None:
            for i in range(len(nodes)):
                out.setdefault(i, st)
        return out or None


def _conflicting_positions(want: tuple[Disk, ...], nodes: NodeBatch) -> list[int]:
    """Positions of the batch's nodes with a pod whose disks conflict with ``want``
    (``satisfyVolumeConflicts`` false)."""
    snap = nodes.snapshot
    if snap is not None and nodes.indices is not None:
        rows: set[int] = set()
        for disks, on_rows in snap.pod_index(_DISKS, _disks_of).items():
            if disks_conflict(want, disks):
                rows.update(on_rows)
        if not rows:
            return []
        hit = np.isin(nodes.indices, np.fromiter(rows, np.int64, len(rows)))
        return [int(i) for i in np.flatnonzero(hit)]
    out: list[int] = []
    for i, ni in enumerate(nodes.infos):
        for pi in ni.pods:
            disks = _disks_of(pi)
            if disks is not None and disks_conflict(want, disks):
                out.append(i)
                break
    return out


def new(args: Any, handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions(args, handle)


__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_BEFORE_1_33",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PreFilterState",
    "VolumeRestrictions",
    "claim_names",
    "disk_conflict",
    "disks_conflict",
    "new",
    "restricted_disks",
]
