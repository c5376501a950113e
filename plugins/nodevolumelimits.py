"""NodeVolumeLimits: the CSI attach limit of each driver on a node (``plugins/nodevolumelimits``).

Upstream's ``CSILimits`` (csi.go, utils.go) with the part of ``k8s.io/csi-translation-lib`` it
uses to see in-tree volumes as the CSI volumes they migrate to.

- PreFilter: Skip unless the pod has a PersistentVolumeClaim, a generic ephemeral volume or an
  in-tree volume that migrates to CSI (GCE PD, AWS EBS, Cinder, Azure Disk, Azure File, vSphere,
  Portworx) — every pod without volumes skips, and Filter never runs for it.
- Filter, per node: the pod's attachable volumes, each ``driver/volumeHandle``: a claim's bound
  PV (its CSI source, or its in-tree source translated), an unbound claim (or one whose PV is
  missing) through its StorageClass's provisioner (the handle is a made-up per-claim one, so that
  pods sharing the claim count it once), a migratable inline volume translated.  An in-tree
  volume counts only on a node with a CSINode (``isCSIMigrationOn``: the four migrated plugins
  need nothing more; Portworx, whose migration kubesched leaves off, never counts).  A missing
  claim of the pod is UnschedulableAndUnresolvable ("looking up PVC ns/x: persistentvolumeclaim
  "x" not found"), a generic ephemeral volume's claim not owned by the pod an Error.  The limits
  are the CSINode's ``drivers[].allocatable.count``; with no volume, no CSINode or no limit the
  node passes.  Otherwise the unique volumes of the node's pods are counted per driver (a volume
  the pod shares with them is not new) and Unschedulable "node(s) exceed max volume count" when
  attached + new exceeds a driver's limit.
- EnqueueExtensions: CSINode/Add, CSINode/Update (a driver's limit rose), Pod/Delete (a
  scheduled or nominated pod with such volumes), PersistentVolumeClaim/Add (a claim of the pod),
  VolumeAttachment/Delete (the pod has claims, or an inline volume of that attacher).

Not modelled: VolumeAttachment objects (upstream also counts the node's attachments that no pod
on it explains); kubesched has no attach/detach controller, so the node's pods are the count.

Speed.  A pod's attachable volumes are derived once per PodInfo, and a snapshot row's (how many
volume entries its pods have) once per version of the row.  A node whose pods, each entry counted
as a distinct volume of the pod's drivers, still leave room for the pod's volumes passes without
resolving them; otherwise each distinct set of volumes is resolved (claim, PV, class) once per
Filter call.  The CSINode's limits are read once per CSINode object.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    Handle,
    KubeschedError,
    QueueingHint,
    Status,
    ephemeral_claim_name,
    get_persistent_volume_claim_class,
    hookimpl,
    is_controlled_by,
)

from ._helper import SKIP
from ._volumes import PVC_RESOURCE, not_found

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeBatch, NodeInfo, Pod, PodInfo, Snapshot

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
# stands in for upstream's random 32-character prefix of an unbound claim's handle (fixed, so
# that runs are reproducible)
UNBOUND_VOLUME_ID_PREFIX = "kubesched0unbound0claim000000000"

# --- k8s.io/csi-translation-lib ------------------------------------------------------------------

GCE_PD_IN_TREE_PLUGIN = "kubernetes.io/gce-pd"
AWS_EBS_IN_TREE_PLUGIN = "kubernetes.io/aws-ebs"
CINDER_IN_TREE_PLUGIN = "kubernetes.io/cinder"
AZURE_DISK_IN_TREE_PLUGIN = "kubernetes.io/azure-disk"
AZURE_FILE_IN_TREE_PLUGIN = "kubernetes.io/azure-file"
VSPHERE_IN_TREE_PLUGIN = "kubernetes.io/vsphere-volume"
PORTWORX_IN_TREE_PLUGIN = "kubernetes.io/portworx-volume"

IN_TREE_TO_CSI: dict[str, str] = {
    GCE_PD_IN_TREE_PLUGIN: "pd.csi.storage.gke.io",
    AWS_EBS_IN_TREE_PLUGIN: "ebs.csi.aws.com",
    CINDER_IN_TREE_PLUGIN: "cinder.csi.openstack.org",
    AZURE_DISK_IN_TREE_PLUGIN: "disk.csi.azure.com",
    AZURE_FILE_IN_TREE_PLUGIN: "file.csi.azure.com",
    VSPHERE_IN_TREE_PLUGIN: "csi.vsphere.vmware.com",
    PORTWORX_IN_TREE_PLUGIN: "pxd.portworx.com",
}
"""In-tree plugin → the CSI driver it migrates to (``GetCSINameFromInTreeName``)."""

# the volume-source field of each in-tree plugin (on a Volume and on a PersistentVolumeSpec)
_SOURCES = (
    ("gce_persistent_disk", GCE_PD_IN_TREE_PLUGIN),
    ("aws_elastic_block_store", AWS_EBS_IN_TREE_PLUGIN),
    ("cinder", CINDER_IN_TREE_PLUGIN),
    ("azure_disk", AZURE_DISK_IN_TREE_PLUGIN),
    ("azure_file", AZURE_FILE_IN_TREE_PLUGIN),
    ("vsphere_volume", VSPHERE_IN_TREE_PLUGIN),
    ("portworx_volume", PORTWORX_IN_TREE_PLUGIN),
)
_GA_MIGRATED = frozenset(
    {
        AWS_EBS_IN_TREE_PLUGIN,
        GCE_PD_IN_TREE_PLUGIN,
        AZURE_DISK_IN_TREE_PLUGIN,
        CINDER_IN_TREE_PLUGIN,
    }
)
_UNSPECIFIED = "UNSPECIFIED"
_AWS_VOLUME_ID = re.compile(r"vol-[^/]*")
_ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")


class TranslationError(KubeschedError):
    """An in-tree volume that cannot be translated to CSI."""


def in_tree_plugin(source: Any) -> str | None:
    """``GetInTreePluginNameFromSpec``: the in-tree plugin of a Volume or PersistentVolumeSpec
    that migrates to CSI (None: ``IsInlineMigratable`` / ``IsPVMigratable`` false)."""
    for field, plugin in _SOURCES:
        if getattr(source, field, None) is not None:
            return plugin
    return None


def ebs_volume_id(kubernetes_id: str) -> str:
    """``KubernetesVolumeIDToEBSVolumeID``: ``aws://<zone>/vol-x`` or ``vol-x`` → ``vol-x``."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlsplit(kubernetes_id).path.strip("/")
    if not _AWS_VOLUME_ID.fullmatch(aws_id):
        raise TranslationError(
            f"failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume ({kubernetes_id})"
        )
    return aws_id


def _gce_region(zones: list[str]) -> str:
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(
                f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}"
            )
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError(f"multiple or no regions gotten from zones, got: {sorted(regions)}")
    return regions.pop()


def _handle(plugin: str, src: Any, pv: Any = None) -> str:
    """The CSI volume handle of an in-tree source (of ``pv`` when translating a PV)."""
    if plugin == GCE_PD_IN_TREE_PLUGIN:
        zone = region = _UNSPECIFIED
        if pv is not None:
            labels = pv.metadata.labels
            zones = (labels.get(_ZONE_LABELS[0]) or labels.get(_ZONE_LABELS[1]) or "").split("__")
            if len(zones) > 1:
                region = _gce_region(zones)
                return f"projects/{_UNSPECIFIED}/regions/{region}/disks/{src.pd_name}"
            if zones[0]:
                zone = zones[0]
        return f"projects/{_UNSPECIFIED}/zones/{zone}/disks/{src.pd_name}"
    if plugin == AWS_EBS_IN_TREE_PLUGIN:
        return ebs_volume_id(src.volume_id)
    if plugin == AZURE_DISK_IN_TREE_PLUGIN:
        return str(src.disk_uri)
    if plugin == CINDER_IN_TREE_PLUGIN:
        return str(src.volume_id)
    return ""  # the plugins whose migration is off: never counted


def translate_inline(volume: Any) -> tuple[str, str]:
    """``TranslateInTreeInlineVolumeToCSI``: the (driver, volume handle) of an inline volume."""
    plugin = in_tree_plugin(volume)
    if plugin is None:
        raise TranslationError(
            f'could not find in-tree plugin translation logic for "{volume.name}"'
        )
    return IN_TREE_TO_CSI[plugin], _handle(plugin, getattr(volume, _field(plugin)))


def translate_pv(pv: Any) -> tuple[str, str]:
    """``TranslateInTreePVToCSI``: the (driver, volume handle) of an in-tree PV."""
    plugin = in_tree_plugin(pv.spec)
    if plugin is None:
        raise TranslationError(
            f'could not find in-tree plugin translation logic for "{pv.metadata.name}"'
        )
    return IN_TREE_TO_CSI[plugin], _handle(plugin, getattr(pv.spec, _field(plugin)), pv)


def _field(plugin: str) -> str:
    return next(f for f, p in _SOURCES if p == plugin)


def is_csi_migration_on(csi_node: Any, plugin: str) -> bool:
    """``isCSIMigrationOn``: a node with a CSINode counts the migrated plugins' volumes as CSI
    (GCE PD, AWS EBS, Azure Disk, Cinder: migration is GA, the annotation is not read)."""
    if csi_node is None or not plugin:
        return False
    return plugin in _GA_MIGRATED


# --- a pod's attachable volumes -------------------------------------------------------------------

_PVC, _EPHEMERAL, _INLINE = range(3)
_KEY = NAME + "/volumes"  # PodInfo.extra key of its attach key
_MISSING: Any = object()

AttachKey = tuple[str, str, str, tuple[tuple[Any, ...], ...]]
"""``(namespace, pod name, pod uid, volumes)``: what a pod's attachable volumes depend on (the
pod's name and uid only when it has ephemeral volumes, so that pods sharing claims share a key)."""


def attach_key(pod: Pod) -> AttachKey | None:
    """The pod's volumes ``filterAttachableVolumes`` looks at, in volume order (None: none)."""
    items: list[tuple[Any, ...]] = []
    ephemeral = False
    for vol in pod.spec.volumes:
        if vol.persistent_volume_claim is not None:
            items.append((_PVC, vol.persistent_volume_claim.claim_name))
        elif vol.ephemeral is not None:
            items.append((_EPHEMERAL, ephemeral_claim_name(pod, vol)))
            ephemeral = True
        else:
            plugin = in_tree_plugin(vol)
            if plugin is None:
                continue
            try:
                driver, handle = translate_inline(vol)
                items.append((_INLINE, vol.name, plugin, driver, handle, ""))
            except TranslationError as err:
                items.append((_INLINE, vol.name, plugin, "", "", str(err)))
    if not items:
        return None
    md = pod.metadata
    return (md.namespace, md.name if ephemeral else "", md.uid if ephemeral else "", tuple(items))


def _attach_key_of(pi: PodInfo) -> AttachKey | None:
    k = pi.extra.get(_KEY, _MISSING)
    if k is _MISSING:
        k = pi.extra[_KEY] = attach_key(pi.pod)
    return k  # type: ignore[no-any-return]


def volume_limits(csi_node: Any) -> dict[str, int]:
    """``getVolumeLimits``: driver name → ``allocatable.count`` (drivers without one: no limit)."""
    out: dict[str, int] = {}
    if csi_node is None:
        return out
    for d in csi_node.spec.drivers:
        if d.allocatable is not None and d.allocatable.count is not None:
            out[d.name] = int(d.allocatable.count)
    return out


Volumes = dict[str, str]
"""``volumeUniqueName`` (``driver/handle``) → driver."""


class _Resolver:
    """Resolves attach keys to volumes against the cluster's claims, PVs and classes, each
    (key, has CSINode, new pod) once."""

    __slots__ = ("cluster", "memo")

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.memo: dict[tuple[AttachKey, bool, bool], tuple[Volumes, Status | None]] = {}

    def volumes(
        self, key: AttachKey, csi_node: Any, new_pod: bool
    ) -> tuple[Volumes, Status | None]:
        m = (key, csi_node is not None, new_pod)
        hit = self.memo.get(m)
        if hit is None:
            hit = self.memo[m] = self._volumes(key, csi_node, new_pod)
        return hit

    def _volumes(
        self, key: AttachKey, csi_node: Any, new_pod: bool
    ) -> tuple[Volumes, Status | None]:
        """``filterAttachableVolumes`` (an error of an existing pod is the node's Error too)."""
        ns, pod_name, uid, items = key
        out: Volumes = {}
        for item in items:
            if item[0] == _INLINE:  # checkAttachableInlineVolume
                _, vol_name, plugin, driver, handle, err = item
                if not is_csi_migration_on(csi_node, plugin):
                    continue
                if err:
                    return {}, Status(
                        Code.ERROR, f"converting volume({vol_name}) from inline to csi: {err}"
                    )
                out[f"{driver}/{handle}"] = driver
                continue
            claim = item[1]
            if not claim:
                return {}, Status(Code.ERROR, "PersistentVolumeClaim had no name")
            pvc = self.cluster.get_pvc(ns, claim)
            if pvc is None:
                if new_pod:  # the pod cannot run without it
                    msg = f"looking up PVC {ns}/{claim}: {not_found(PVC_RESOURCE, claim)}"
                    return {}, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
                continue  # not counted: no guarantee it belongs to the running pod
            if item[0] == _EPHEMERAL and not is_controlled_by(pvc, uid):
                msg = f"PVC {ns}/{claim} was not created for pod {ns}/{pod_name} (pod is not owner)"
                return {}, Status(Code.ERROR, msg)
            driver, handle = self.csi_driver_info(csi_node, pvc)
            if driver and handle:
                out[f"{driver}/{handle}"] = driver
        return out, None

    def csi_driver_info(self, csi_node: Any, pvc: Any) -> tuple[str, str]:
        """``getCSIDriverInfo``: the claim's CSI driver and volume handle ("" when not counted)."""
        pv_name = pvc.spec.volume_name
        pv = self.cluster.get_pv(pv_name) if pv_name else None
        if pv is None:  # unbound, or its PV is gone or not created yet: go by the class
            return self._from_storage_class(csi_node, pvc)
        csi = pv.spec.csi
        if csi is not None:
            return str(csi.driver), str(csi.volume_handle)
        plugin = in_tree_plugin(pv.spec)
        if plugin is None or not is_csi_migration_on(csi_node, plugin):
            return "", ""
        try:
            return translate_pv(pv)
        except TranslationError:
            return "", ""

    def _from_storage_class(self, csi_node: Any, pvc: Any) -> tuple[str, str]:
        """``getCSIDriverInfoFromSC``: the class's provisioner and a handle unique to the claim
        (a claim without a class, or with a missing one, is bound before scheduling: not counted)."""
        sc_name = get_persistent_volume_claim_class(pvc)
        sc = self.cluster.get_storage_class(sc_name) if sc_name else None
        if sc is None:
            return "", ""
        handle = f"{UNBOUND_VOLUME_ID_PREFIX}-{pvc.metadata.namespace}/{pvc.metadata.name}"
        provisioner = str(sc.provisioner)
        if provisioner in IN_TREE_TO_CSI:
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return IN_TREE_TO_CSI[provisioner], handle
        return provisioner, handle


def exceeds_limits(new: Volumes, attached: Volumes, limits: dict[str, int]) -> bool:
    """Whether the new volumes (less those already attached) overflow a driver's limit."""
    fresh = {u: d for u, d in new.items() if u not in attached}
    if not fresh:
        return False
    in_use = Counter(attached.values())
    for driver, count in Counter(fresh.values()).items():
        limit = limits.get(driver)
        if limit is not None and in_use[driver] + count > limit:
            return True
    return False


class NodeVolumeLimits:
    """PreFilter, Filter and EnqueueExtensions (upstream's ``CSILimits``)."""

    name = NAME
    # PreFilter answers the shared Skip, and does nothing else, for a pod without volumes
    # (kubesched.runtime._filter_runners then does not call it)
    skips_pre_filter_without = "volumes"

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle: Handle = handle
        # per snapshot row: (its NodeInfo, the attachable volumes of its pods); per node name:
        # (its CSINode, the limits)
        self._rows_of: tuple[Any, int] | None = None
        self._rows: dict[int, tuple[NodeInfo, NodeVolumes]] = {}
        self._limit_cache: dict[str, tuple[Any, dict[str, int]]] = {}

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # any new CSINode may bring the limits a pod needs: no hint
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE),
                self.is_schedulable_after_csi_node_updated,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE),
                self.is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                self.is_schedulable_after_pvc_added,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE),
                self.is_schedulable_after_volume_attachment_deleted,
            ),
        ]

    def is_schedulable_after_pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when the deleted pod was scheduled or nominated and had attachable volumes."""
        deleted = old
        if not deleted.spec.volumes:
            return QueueingHint.QUEUE_SKIP
        if not deleted.spec.node_name and not deleted.status.nominated_node_name:
            return QueueingHint.QUEUE_SKIP
        for vol in deleted.spec.volumes:
            if (
                vol.persistent_volume_claim is not None
                or vol.ephemeral is not None
                or in_tree_plugin(vol)
            ):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pvc_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when the new claim is one of the pod's (a claim or an ephemeral volume's)."""
        if new.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QUEUE_SKIP
        for vol in pod.spec.volumes:
            if vol.persistent_volume_claim is not None:
                claim = vol.persistent_volume_claim.claim_name
            elif vol.ephemeral is not None:
                claim = ephemeral_claim_name(pod, vol)
            else:
                continue
            if claim == new.metadata.name:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_volume_attachment_deleted(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """Queue when the pod has a claim, or an inline volume migrating to the attachment's
        attacher (a VolumeAttachment has ``spec.attacher``)."""
        attacher = old.spec.attacher
        for vol in pod.spec.volumes:
            if vol.persistent_volume_claim is not None:
                return QueueingHint.QUEUE
            if in_tree_plugin(vol) is None:
                continue
            try:
                driver, _ = translate_inline(vol)
            except TranslationError:
                return QueueingHint.QUEUE
            if attacher == driver:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_node_updated(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when a driver's limit rose (a driver without ``allocatable.count`` counts as 0)."""
        old_limits = {d.name: _count(d) for d in old.spec.drivers}
        for d in new.spec.drivers:
            if _count(d) > old_limits.get(d.name, 0):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # --- PreFilter / Filter ---------------------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        for vol in pod.spec.volumes:
            if (
                vol.persistent_volume_claim is not None
                or vol.ephemeral is not None
                or in_tree_plugin(vol)
            ):
                return None
        return SKIP

    @hookimpl
    def kubesched_filter(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> dict[int, Status] | None:
        key = attach_key(pod) if pod.spec.volumes else None
        if key is None:
            return None
        cluster = self.handle.cluster
        get_csi_node = cluster.csi_nodes.get
        resolver = _Resolver(cluster)
        out: dict[int, Status] = {}
        # the pod's own volumes: on a node without CSINode none is in-tree, and with no limit
        # the node passes (but a missing claim rejects the pod everywhere)
        no_csi_node: Status | None = resolver.volumes(key, None, True)[1]
        new_volumes: Volumes | None = None
        with_csi_node: Status | None = None
        new_count: list[tuple[str, int]] = []
        exceeded: Status | None = None
        snap = nodes.snapshot
        rows = nodes.indices.tolist() if snap is not None and nodes.indices is not None else None
        for i, name in enumerate(nodes.names):
            csi_node = get_csi_node(name)
            if csi_node is None:
                if no_csi_node is not None:
                    out[i] = no_csi_node
                continue
            if new_volumes is None:  # the same on every node with a CSINode
                new_volumes, with_csi_node = resolver.volumes(key, csi_node, True)
                new_count = list(Counter(new_volumes.values()).items())
            if with_csi_node is not None:
                out[i] = with_csi_node
                continue
            if not new_volumes:
                continue
            limits = self._limits(name, csi_node)
            if not limits:
                continue
            items, keys, may_fail = (
                self._row_volumes(snap, rows[i])
                if snap is not None and rows is not None
                else _node_volumes(nodes[i])
            )
            if not may_fail:
                # the node's pods, every volume entry counted as a new volume, leave room for
                # the pod's: it passes without resolving them (unless resolving may fail, as
                # upstream then reports)
                for driver, count in new_count:
                    limit = limits.get(driver)
                    if limit is not None and items + count > limit:
                        break
                else:
                    continue
            attached, st = _attached(keys, csi_node, resolver)
            if st is None and exceeds_limits(new_volumes, attached, limits):
                if exceeded is None:
                    exceeded = Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
                st = exceeded
            if st is not None:
                out[i] = st
        return out or None

    def _limits(self, name: str, csi_node: Any) -> dict[str, int]:
        """:func:`volume_limits` of the node's CSINode, kept while the object is the same."""
        hit = self._limit_cache.get(name)
        if hit is not None and hit[0] is csi_node:
            return hit[1]
        limits = volume_limits(csi_node)
        self._limit_cache[name] = (csi_node, limits)
        return limits

    def _row_volumes(self, snap: Snapshot, row: int) -> NodeVolumes:
        """:func:`_node_volumes` of a snapshot row, kept while the row's NodeInfo is the same
        (the snapshot replaces a row's NodeInfo when its pods change)."""
        if self._rows_of != (snap, snap.tree_generation):  # other nodes in the rows: start over
            self._rows_of = (snap, snap.tree_generation)
            self._rows = {}
        ni = snap.node_infos[row]
        hit = self._rows.get(row)
        if hit is not None and hit[0] is ni:
            return hit[1]
        got = self._rows[row] = (ni, _node_volumes(ni))
        return got[1]


NodeVolumes = tuple[int, tuple[AttachKey, ...], bool]
"""The pods' attachable volumes on a node: (how many volume entries, at most so many unique
volumes; the distinct attach keys; whether resolving one may fail)."""


def _node_volumes(ni: NodeInfo) -> NodeVolumes:
    keys = [k for pi in ni.pods if (k := _attach_key_of(pi)) is not None]
    items = sum(len(k[3]) for k in keys)
    may_fail = any(_may_fail(k) for k in keys)
    return items, tuple(dict.fromkeys(keys)), may_fail


def _may_fail(key: AttachKey) -> bool:
    """Whether resolving an existing pod's volumes may end in an error (a generic ephemeral
    volume's owner check, an untranslatable inline volume, a claim without a name)."""
    return any(it[0] == _EPHEMERAL or (it[0] == _INLINE and it[5]) or not it[1] for it in key[3])


def _attached(
    keys: Sequence[AttachKey], csi_node: Any, resolver: _Resolver
) -> tuple[Volumes, Status | None]:
    """The unique attachable volumes of a node's pods (their attach keys)."""
    attached: Volumes = {}
    for k in keys:
        volumes, st = resolver.volumes(k, csi_node, False)
        if st is not None:
            return {}, st
        attached.update(volumes)
    return attached, None


def _count(driver: Any) -> int:
    a = driver.allocatable
    return int(a.count) if a is not None and a.count is not None else 0


def new(args: Any, handle: Handle) -> NodeVolumeLimits:
    return NodeVolumeLimits(args, handle)


__all__ = [
    "AWS_EBS_IN_TREE_PLUGIN",
    "AZURE_DISK_IN_TREE_PLUGIN",
    "CINDER_IN_TREE_PLUGIN",
    "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED",
    "GCE_PD_IN_TREE_PLUGIN",
    "IN_TREE_TO_CSI",
    "NAME",
    "NodeVolumeLimits",
    "TranslationError",
    "UNBOUND_VOLUME_ID_PREFIX",
    "attach_key",
    "ebs_volume_id",
    "exceeds_limits",
    "in_tree_plugin",
    "is_csi_migration_on",
    "new",
    "translate_inline",
    "translate_pv",
    "volume_limits",
]
