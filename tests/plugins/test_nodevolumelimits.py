"""NodeVolumeLimits (k/k ``plugins/nodevolumelimits/csi_test.go``: TestCSILimits, TestCSILimitsQHint,
TestCSILimitsAddedPVCQHint, TestCSILimitsDeletedVolumeAttachmentQHint,
TestCSILimitsAfterCSINodeUpdatedQHint; ``csi-translation-lib`` aws_ebs_test.go
TestKubernetesVolumeIDToEBSVolumeID, TestTranslateInTreeInlineVolumeToCSI), plus the snapshot
batch path and EventsToRegister.

Left out of TestCSILimits: its two VolumeAttachment cases (kubesched has no VolumeAttachment
objects).  Upstream's fake PVC lister names the plural resource in its NotFound message; the
scheduler's informer lister (and kubesched) the singular: ``persistentvolumeclaim "abc-xyz"``."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from msgspec.structs import replace

from kubesched import CycleState, NodeBatch
from kubesched.api._objects import (
    AWSElasticBlockStoreVolumeSource,
    CSINode,
    CSINodeDriver,
    CSINodeSpec,
    CSIPersistentVolumeSource,
    EphemeralVolumeSource,
    GCEPersistentDiskVolumeSource,
    HostPathVolumeSource,
    ObjectMeta,
    OwnerReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource,
    PersistentVolumeSpec,
    Pod,
    StorageClass,
    Volume,
    VolumeNodeResources,
)
from kubesched.plugins import nodevolumelimits as nvl
from kubesched.runtime._events import ActionType as A
from kubesched.runtime._events import QueueingHint
from kubesched.runtime._events import Resource as R
from kubesched.runtime._status import Code, Status
from kubesched.testing import FakeHandle, framework_for, make_node, make_node_info, make_pod

EBS, GCE = "ebs.csi.aws.com", "pd.csi.storage.gke.io"
EBS_IN_TREE, HOSTPATH_IN_TREE = "kubernetes.io/aws-ebs", "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE = "node-for-max-pd-test-1"
EXCEEDED = Status(Code.UNSCHEDULABLE, nvl.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
SKIP = Status(Code.SKIP)

_seq = iter(range(1_000_000))


def pod(
    *volumes: Volume,
    claims: tuple[str, ...] = (),
    name: str = "",
    ns: str = "default",
    uid: str = "",
) -> Pod:
    b = make_pod(name or f"p{next(_seq)}", ns)
    if uid:
        b.uid(uid)
    p = b.obj()
    p.spec.volumes = [
        *(
            Volume(name=c, persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=c))
            for c in claims
        ),
        *volumes,
    ]
    return p


def ebs_inline(volume_id: str) -> Volume:
    return Volume(aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id=volume_id))


def ephemeral(name: str) -> Volume:
    return Volume(name=name, ephemeral=EphemeralVolumeSource())


CONFIGMAP = Volume(name="cm", config_map={})
SECRET = Volume(name="secret", secret={})


def claim(
    name: str, ns: str = "default", volume: str = "", cls: str | None = None, owner_uid: str = ""
) -> PersistentVolumeClaim:
    c = PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace=ns),
        spec=PersistentVolumeClaimSpec(volume_name=volume, storage_class_name=cls),
    )
    if owner_uid:
        c.metadata.owner_references = [
            OwnerReference(kind="Pod", name="abc", uid=owner_uid, controller=True)
        ]
    return c


def fake_pvs(*drivers: str) -> list[PersistentVolume]:
    """``getFakeCSIPVLister("csi", drivers...)``."""
    out = []
    for driver in drivers:
        for j in range(4):
            handle = f"csi-{driver}-{j}"
            if driver == EBS_IN_TREE:
                spec = PersistentVolumeSpec(
                    aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id=handle)
                )
            elif driver == HOSTPATH_IN_TREE:
                spec = PersistentVolumeSpec(host_path=HostPathVolumeSource(path="/tmp"))
            else:
                spec = PersistentVolumeSpec(
                    csi=CSIPersistentVolumeSource(driver=driver, volume_handle=handle)
                )
            out.append(PersistentVolume(metadata=ObjectMeta(name=handle), spec=spec))
    return out


def fake_pvcs(*drivers: str) -> list[PersistentVolumeClaim]:
    """``getFakeCSIPVCLister("csi", scName, drivers...)``."""
    out = [claim(f"csi-{d}-{j}", volume=f"csi-{d}-{j}") for d in drivers for j in range(4)]
    out.append(claim("csi-4", cls=SC_NAME))
    out.append(claim("csi-5"))
    out.append(claim("csi-6", cls=SC_NAME, volume="missing-in-action"))  # PV missing, class there
    return out


def csi_node(limit_source: str, limit: int, *drivers: str) -> CSINode | None:
    """``getNodeWithPodAndVolumeLimits``' CSINode (with ``enableMigrationOnNode`` for EBS)."""
    if limit_source not in ("csinode", "csinode-with-no-limit", "no-csi-driver"):
        return None
    node = CSINode(metadata=ObjectMeta(name=NODE), spec=CSINodeSpec())
    if limit_source != "no-csi-driver":
        with_limit = limit_source == "csinode"
        node.spec.drivers = [
            CSINodeDriver(
                name=d,
                node_id=NODE,
                allocatable=VolumeNodeResources(count=limit) if with_limit else None,
            )
            for d in drivers
        ]
    node.metadata.annotations = {"storage.alpha.kubernetes.io/migrated-plugins": EBS_IN_TREE}
    return node


def fill(
    cluster: Any, drivers: tuple[str, ...], extra: list[PersistentVolumeClaim], node: CSINode | None
) -> None:
    for v in fake_pvs(*drivers):
        cluster.pvs[v.metadata.name] = v
    for c in [*fake_pvcs(*drivers), *extra]:
        cluster.pvcs[(c.metadata.namespace, c.metadata.name)] = c
    cluster.storage_classes[SC_NAME] = StorageClass(
        metadata=ObjectMeta(name=SC_NAME), provisioner=drivers[0]
    )
    if node is not None:
        cluster.csi_nodes[NODE] = node


# --- TestCSILimits -----------------------------------------------------------------------------

running = pod(claims=("csi-ebs.csi.aws.com-3",))
pending_volume = pod(claims=("csi-4",))
unbound_pvc_pod2 = pod(claims=("csi-4",))  # another pod, the same unbound claim
missing_pv = pod(claims=("csi-6",))
no_sc_pvc = pod(claims=("csi-5",))
gce_two_vol = pod(claims=("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2"))
in_tree_one_vol = pod(claims=("csi-kubernetes.io/aws-ebs-0",))
in_tree_two_vol = pod(claims=("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2"))
csi_ebs_one_vol = pod(claims=("csi-ebs.csi.aws.com-0",))
csi_ebs_two_vol = pod(claims=("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"))
in_tree_non_migratable = pod(claims=("csi-kubernetes.io/hostpath-0",))
ephemeral_pod = pod(ephemeral("xyz"), name="abc", ns="test", uid="12345")
ephemeral_claim = claim("abc-xyz", ns="test", cls=SC_NAME, owner_uid="12345")
conflicting_claim = claim("abc-xyz", ns="test", cls=SC_NAME)  # not owned by the pod
ephemeral_two_vol = pod(ephemeral("x"), ephemeral("y"), name="abc", ns="test", uid="12345II")
ephemeral_claim_x = claim("abc-x", ns="test", cls=SC_NAME, owner_uid="12345II")
ephemeral_claim_y = claim("abc-y", ns="test", cls=SC_NAME, owner_uid="12345II")
in_tree_inline = pod(ebs_inline("aws-inline1"))
in_tree_inline_same_id = pod(ebs_inline("csi-ebs.csi.aws.com-1"))
only_configmap_and_secret = pod(CONFIGMAP, SECRET)
pvc_with_configmap_and_secret = pod(CONFIGMAP, SECRET, claims=("csi-ebs.csi.aws.com-0",))
ephemeral_with_configmap_and_secret = pod(
    CONFIGMAP, SECRET, ephemeral("xyz"), name="abc", ns="test", uid="abc-uid"
)
inline_migratable_with_configmap_and_secret = pod(CONFIGMAP, SECRET, ebs_inline("aws-inline1"))

NOT_FOUND = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',
)
NOT_OWNED = Status(
    Code.ERROR, "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"
)


def case(
    new: Pod,
    existing: list[Pod],
    max_vols: int,
    drivers: list[str],
    test: str,
    limit_source: str = "csinode",
    want: Status | None = None,
    want_pre: Status | None = None,
    extra: Sequence[PersistentVolumeClaim] = (),
) -> Any:
    return pytest.param(
        new,
        existing,
        max_vols,
        tuple(drivers),
        limit_source,
        list(extra),
        want_pre,
        want,
        id="TestCSILimits/" + test,
    )


# one row per upstream case: new pod, existing pods, maxVols, driverNames, test name, limitSource,
# then the wanted Filter status, PreFilter status and extra claims
# fmt: off
CSI_CASES = [
    case(csi_ebs_one_vol, [running, csi_ebs_two_vol], 4, [EBS], "fits when node volume limit >= new pods CSI volume"),
    case(csi_ebs_one_vol, [running, csi_ebs_two_vol], 2, [EBS], "doesn't when node volume limit <= pods CSI volume", want=EXCEEDED),
    case(csi_ebs_one_vol, [running, csi_ebs_two_vol], 2, [EBS], "should when driver does not support volume limits", "csinode-with-no-limit"),
    case(csi_ebs_one_vol, [pending_volume, csi_ebs_two_vol], 2, [EBS], "count pending PVCs towards volume limit <= pods CSI volume", want=EXCEEDED),
    case(csi_ebs_one_vol, [pending_volume, unbound_pvc_pod2, csi_ebs_two_vol], 4, [EBS], "count multiple pending pvcs towards volume limit >= pods CSI volume"),
    case(csi_ebs_one_vol, [missing_pv, csi_ebs_two_vol], 2, [EBS], "should count PVCs with invalid PV name but valid SC", want=EXCEEDED),
    case(csi_ebs_one_vol, [running, no_sc_pvc], 2, [EBS], "don't count pvcs with missing SC towards volume limit"),
    case(csi_ebs_one_vol, [gce_two_vol, csi_ebs_two_vol], 2, [EBS, GCE], "count pvcs with the same type towards volume limit", want=EXCEEDED),
    case(gce_two_vol, [csi_ebs_two_vol, running], 2, [EBS, GCE], "don't count pvcs with different type towards volume limit"),
    case(in_tree_one_vol, [in_tree_two_vol], 2, [EBS_IN_TREE, EBS], "should count in-tree volumes if migration is enabled", want=EXCEEDED),
    case(in_tree_inline, [in_tree_two_vol], 0, [EBS_IN_TREE, EBS], "nil csi node", ""),
    case(pending_volume, [in_tree_two_vol], 2, [EBS_IN_TREE, EBS], "should count unbound in-tree volumes if migration is enabled", want=EXCEEDED),
    case(in_tree_one_vol, [in_tree_two_vol], 2, [EBS_IN_TREE, EBS], "should not limit pod if volume used does not report limits", "csinode-with-no-limit"),
    case(in_tree_non_migratable, [csi_ebs_two_vol], 2, [HOSTPATH_IN_TREE, EBS], "should not count non-migratable in-tree volumes"),
    case(in_tree_inline, [in_tree_two_vol], 2, [EBS_IN_TREE, EBS], "should count in-tree inline volumes if migration is enabled", want=EXCEEDED),
    case(in_tree_one_vol, [csi_ebs_two_vol], 2, [EBS_IN_TREE, EBS], "should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)", want=EXCEEDED),
    case(in_tree_inline, [csi_ebs_two_vol, in_tree_one_vol], 3, [EBS_IN_TREE, EBS], "should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", want=EXCEEDED),
    case(in_tree_inline_same_id, [csi_ebs_two_vol, in_tree_one_vol], 3, [EBS_IN_TREE, EBS], "should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)"),
    case(csi_ebs_one_vol, [in_tree_two_vol], 2, [EBS_IN_TREE, EBS], "should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)", want=EXCEEDED),
    case(ephemeral_pod, [], 0, [EBS], "ephemeral volume missing", "csinode-with-no-limit", want=NOT_FOUND),
    case(ephemeral_pod, [], 0, [EBS], "ephemeral volume not owned", "csinode-with-no-limit", want=NOT_OWNED, extra=[conflicting_claim]),
    case(ephemeral_pod, [], 0, [EBS], "ephemeral volume unbound", "csinode-with-no-limit", extra=[ephemeral_claim]),
    case(ephemeral_pod, [running, csi_ebs_two_vol], 2, [EBS], "ephemeral doesn't when node volume limit <= pods CSI volume", want=EXCEEDED, extra=[ephemeral_claim]),
    case(csi_ebs_one_vol, [running, ephemeral_two_vol], 2, [EBS], "ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", want=EXCEEDED, extra=[ephemeral_claim_x, ephemeral_claim_y]),
    case(csi_ebs_one_vol, [running, ephemeral_pod, csi_ebs_two_vol], 3, [EBS], "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral disabled", want=EXCEEDED, extra=[ephemeral_claim]),
    case(csi_ebs_one_vol, [running, ephemeral_pod, csi_ebs_two_vol], 3, [EBS], "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", want=EXCEEDED, extra=[ephemeral_claim]),
    case(csi_ebs_one_vol, [running, ephemeral_pod, csi_ebs_two_vol], 5, [EBS], "persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", extra=[ephemeral_claim]),
    case(only_configmap_and_secret, [], 2, [EBS], "skip Filter when the pod only uses secrets and configmaps", want_pre=SKIP),
    case(pvc_with_configmap_and_secret, [], 2, [EBS], "don't skip Filter when the pod has pvcs"),
    case(ephemeral_with_configmap_and_secret, [], 0, [EBS], "don't skip Filter when the pod has ephemeral volumes", "csinode-with-no-limit", want=NOT_FOUND),
    case(inline_migratable_with_configmap_and_secret, [in_tree_two_vol], 2, [EBS_IN_TREE, EBS], "don't skip Filter when the pod has inline migratable volumes", want=EXCEEDED),
]
# fmt: on


def _check(got: Status | None, want: Status | None) -> None:
    if want is None:
        assert got is None
    else:
        assert got is not None and (got.code, got.message) == (want.code, want.message)


CSI_ARGS = ("new", "existing", "max_vols", "drivers", "limit_source", "extra", "want_pre", "want")


@pytest.mark.parametrize(CSI_ARGS, CSI_CASES)
def test_csi_limits(
    new: Pod,
    existing: list[Pod],
    max_vols: int,
    drivers: tuple[str, ...],
    limit_source: str,
    extra: list[Any],
    want_pre: Status | None,
    want: Status | None,
) -> None:
    node = csi_node(limit_source, max_vols, *drivers)
    handle = FakeHandle()
    fill(handle.cluster, drivers, extra, node)
    pl = nvl.new(None, handle)
    state = CycleState()
    pre = pl.kubesched_pre_filter(state, new, None)
    _check(pre, want_pre)
    if pre is None:
        ni = make_node_info(make_node(NODE).obj(), *existing)
        got = pl.kubesched_filter(state, new, NodeBatch.of([ni]))
        _check((got or {}).get(0), want)


@pytest.mark.parametrize(CSI_ARGS, [c for c in CSI_CASES if c.values[6] is None])
def test_csi_limits_over_a_snapshot_batch(
    new: Pod,
    existing: list[Pod],
    max_vols: int,
    drivers: tuple[str, ...],
    limit_source: str,
    extra: list[Any],
    want_pre: Status | None,
    want: Status | None,
) -> None:
    """The same cases with the existing pods bound in a snapshot (the pod-index path), beside a
    node without pods and one without CSINode."""
    bound = [replace(p, spec=replace(p.spec, node_name=NODE)) for p in existing]
    nodes = [make_node(NODE).obj(), make_node("empty").obj(), make_node("no-csinode").obj()]
    fw = framework_for({"preFilter": [nvl.NAME], "filter": [nvl.NAME]}, nodes, bound)
    node = csi_node(limit_source, max_vols, *drivers)
    fill(fw.handle.cluster, drivers, extra, node)
    if node is not None:
        fw.handle.cluster.csi_nodes["empty"] = replace(node, metadata=ObjectMeta(name="empty"))
    pl = fw.plugin(nvl.NAME)
    state = CycleState()
    assert pl.kubesched_pre_filter(state, new, fw.snapshot.node_infos) is None
    snap = fw.snapshot
    got = pl.kubesched_filter(state, new, NodeBatch(snapshot=snap, indices=np.arange(3))) or {}
    _check(got.get(snap.index[NODE]), want)
    # the empty node fails only for the pod itself (its own volumes, a missing claim)
    if want is None or want.code != Code.UNSCHEDULABLE:
        _check(got.get(snap.index["empty"]), want)
    _check(
        got.get(snap.index["no-csinode"]),
        want if want is not None and want.code != Code.UNSCHEDULABLE else None,
    )


def test_a_pod_without_volumes_skips_and_filters_nothing() -> None:
    pl = nvl.new(None, FakeHandle())
    p = pod()
    assert pl.kubesched_pre_filter(CycleState(), p, None) == SKIP
    assert (
        pl.kubesched_filter(CycleState(), p, NodeBatch.of([make_node_info(make_node(NODE).obj())]))
        is None
    )


def test_an_invalid_inline_ebs_id_is_an_error_on_nodes_with_a_csinode() -> None:
    """``checkAttachableInlineVolume``: a migratable inline volume that does not translate."""
    handle = FakeHandle()
    fill(handle.cluster, (EBS,), [], csi_node("csinode", 2, EBS))
    pl = nvl.new(None, handle)
    p = pod(replace(ebs_inline("aws://us-west-2a/02399794d890f9375"), name="bad"))
    with_csi = make_node_info(make_node(NODE).obj())
    without = make_node_info(make_node("other").obj())
    got = pl.kubesched_filter(CycleState(), p, NodeBatch.of([with_csi, without])) or {}
    assert list(got) == [0]
    assert got[0].code == Code.ERROR
    assert got[0].message == (
        "converting volume(bad) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID "
        "Invalid format for AWS volume (aws://us-west-2a/02399794d890f9375)"
    )


# --- csi-translation-lib -------------------------------------------------------------------------

VOL_ID = "vol-02399794d890f9375"


@pytest.mark.parametrize(
    ("kubernetes_id", "want"),
    [
        pytest.param(VOL_ID, VOL_ID, id="TestKubernetesVolumeIDToEBSVolumeID/Normal ID format"),
        pytest.param(
            "aws:///" + VOL_ID,
            VOL_ID,
            id="TestKubernetesVolumeIDToEBSVolumeID/aws:///{volumeId} format",
        ),
        pytest.param(
            "aws://us-west-2a/" + VOL_ID,
            VOL_ID,
            id="TestKubernetesVolumeIDToEBSVolumeID/aws://{zone}/{volumeId} format",
        ),
        pytest.param(
            "aws://us-west-2a/02399794d890f9375",
            None,
            id="TestKubernetesVolumeIDToEBSVolumeID/fails on invalid volume ID",
        ),
    ],
)
def test_ebs_volume_id(kubernetes_id: str, want: str | None) -> None:
    if want is None:
        with pytest.raises(nvl.TranslationError):
            nvl.ebs_volume_id(kubernetes_id)
    else:
        assert nvl.ebs_volume_id(kubernetes_id) == want
        assert nvl.translate_inline(ebs_inline(kubernetes_id)) == (
            EBS,
            VOL_ID,
        )  # TestTranslateInTreeInlineVolumeToCSI


def test_translate_inline_fails_on_empty_volume_source() -> None:
    """TestTranslateInTreeInlineVolumeToCSI/fails on empty volume source."""
    with pytest.raises(nvl.TranslationError):
        nvl.translate_inline(Volume(name="volume"))


@pytest.mark.parametrize(
    ("labels", "want"),
    [
        pytest.param({}, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd", id="no zone label"),
        pytest.param(
            {"topology.kubernetes.io/zone": "us-central1-a"},
            "projects/UNSPECIFIED/zones/us-central1-a/disks/pd",
            id="zonal",
        ),
        pytest.param(
            {"failure-domain.beta.kubernetes.io/zone": "us-central1-a__us-central1-c"},
            "projects/UNSPECIFIED/regions/us-central1/disks/pd",
            id="regional (beta label)",
        ),
        pytest.param(
            {"topology.kubernetes.io/zone": "us-central1-a__europe-west1-b"}, None, id="two regions"
        ),
    ],
)
def test_gce_pd_pv_volume_handle(labels: dict[str, str], want: str | None) -> None:
    """``gcePersistentDiskCSITranslator.TranslateInTreePVToCSI``: the handle follows the PV's zones."""
    pv = PersistentVolume(
        metadata=ObjectMeta(name="pv", labels=labels),
        spec=PersistentVolumeSpec(gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="pd")),
    )
    if want is None:
        with pytest.raises(nvl.TranslationError):
            nvl.translate_pv(pv)
    else:
        assert nvl.translate_pv(pv) == (GCE, want)
    inline = Volume(gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="pd"))
    assert nvl.translate_inline(inline) == (GCE, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd")


# --- queueing hints ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deleted", "scheduled", "want"),
    [
        pytest.param(
            pod(claims=("placeholder",)),
            True,
            QueueingHint.QUEUE,
            id="TestCSILimitsQHint/return a Queue when a deleted pod has a PVC",
        ),
        pytest.param(
            pod(Volume(aws_elastic_block_store=AWSElasticBlockStoreVolumeSource())),
            True,
            QueueingHint.QUEUE,
            id="TestCSILimitsQHint/return a Queue when a deleted pod has a inline migratable volume",
        ),
        pytest.param(
            pod(),
            True,
            QueueingHint.QUEUE_SKIP,
            id="TestCSILimitsQHint/return a QueueSkip when a deleted pod doesn't have any volume",
        ),
        pytest.param(
            pod(claims=("csi-ebs.csi.aws.com-0",)),
            False,
            QueueingHint.QUEUE_SKIP,
            id="TestCSILimitsQHint/return a QueueSkip when a deleted pod is not scheduled.",
        ),
        pytest.param(
            pod(CONFIGMAP), True, QueueingHint.QUEUE_SKIP, id="a deleted pod with only a configmap"
        ),
    ],
)
def test_is_schedulable_after_pod_deleted(
    deleted: Pod, scheduled: bool, want: QueueingHint
) -> None:
    deleted = replace(deleted, spec=replace(deleted.spec, node_name=NODE if scheduled else ""))
    pl = nvl.new(None, FakeHandle())
    assert (
        pl.is_schedulable_after_pod_deleted(pod(claims=("csi-ebs.csi.aws.com-2",)), deleted, None)
        == want
    )


def test_a_deleted_nominated_pod_queues() -> None:
    deleted = pod(claims=("x",))
    deleted.status.nominated_node_name = NODE
    assert (
        nvl.new(None, FakeHandle()).is_schedulable_after_pod_deleted(pod(claims=("y",)), deleted, None)
        == QueueingHint.QUEUE
    )


_Q = "TestCSILimitsAddedPVCQHint/"


@pytest.mark.parametrize(
    ("new", "added", "want"),
    [
        pytest.param(
            pod(ns="ns1"),
            claim("", ns="ns2"),
            QueueingHint.QUEUE_SKIP,
            id=_Q + "a pod isn't in the same namespace as an added PVC",
        ),
        pytest.param(
            pod(claims=("pvc1",), ns="ns1"),
            claim("pvc1", ns="ns1"),
            QueueingHint.QUEUE,
            id=_Q + "a pod is in the same namespace as an added PVC",
        ),
        pytest.param(
            pod(ephemeral("ephemeral"), name="pod1", ns="ns1"),
            claim("pod1-ephemeral", ns="ns1"),
            QueueingHint.QUEUE,
            id=_Q + "a pod has an ephemeral volume related to an added PVC",
        ),
        pytest.param(
            pod(claims=("pvc1",), ns="ns1"),
            claim("pvc2", ns="ns1"),
            QueueingHint.QUEUE_SKIP,
            id=_Q + "a pod doesn't have the same PVC as an added PVC",
        ),
        pytest.param(
            pod(ns="ns1"),
            claim("pvc2", ns="ns1"),
            QueueingHint.QUEUE_SKIP,
            id=_Q + "a pod doesn't have any PVC attached",
        ),
    ],
)
def test_is_schedulable_after_pvc_added(
    new: Pod, added: PersistentVolumeClaim, want: QueueingHint
) -> None:
    assert nvl.new(None, FakeHandle()).is_schedulable_after_pvc_added(new, None, added) == want


def _va(attacher: str) -> Any:
    """A VolumeAttachment as the hint reads it (kubesched has no such object yet)."""
    return SimpleNamespace(
        metadata=ObjectMeta(name="volumeattachment1"),
        spec=SimpleNamespace(node_name="fake-node", attacher=attacher),
    )


_V = "TestCSILimitsDeletedVolumeAttachmentQHint/"
GCE_INLINE = Volume(gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="test"))


@pytest.mark.parametrize(
    ("new", "attacher", "want"),
    [
        pytest.param(
            pod(claims=("pvc1",), ns="ns1"),
            "test.storage.gke.io",
            QueueingHint.QUEUE,
            id=_V + "a pod has PVC when VolumeAttachment is deleting",
        ),
        pytest.param(
            pod(ebs_inline("test"), ns="ns1"),
            EBS,
            QueueingHint.QUEUE,
            id=_V
            + "a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is deleting (match)",
        ),
        pytest.param(
            pod(GCE_INLINE, ns="ns1"),
            EBS,
            QueueingHint.QUEUE_SKIP,
            id=_V
            + "a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is deleting (no match)",
        ),
        pytest.param(
            pod(ebs_inline("test"), claims=("pvc1",), ns="ns1"),
            EBS,
            QueueingHint.QUEUE,
            id=_V
            + "a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver) is deleting",
        ),
        pytest.param(
            pod(ebs_inline("test"), claims=("pvc1",), ns="ns1"),
            "test.storage.gke.io",
            QueueingHint.QUEUE,
            id=_V
            + "a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver)  is deleting",
        ),
        pytest.param(
            pod(ns="ns1"),
            "test.storage.gke.io",
            QueueingHint.QUEUE_SKIP,
            id=_V + "a pod has no PVC when VolumeAttachment is deleting",
        ),
    ],
)
def test_is_schedulable_after_volume_attachment_deleted(
    new: Pod, attacher: str, want: QueueingHint
) -> None:
    assert (
        nvl.new(None, FakeHandle()).is_schedulable_after_volume_attachment_deleted(new, _va(attacher), None)
        == want
    )


def _csinode(count: int | None) -> CSINode:
    alloc = VolumeNodeResources(count=count) if count is not None else None
    return CSINode(
        metadata=ObjectMeta(name="test-node"),
        spec=CSINodeSpec(drivers=[CSINodeDriver(name=EBS, node_id="test-node", allocatable=alloc)]),
    )


_U = "TestCSILimitsAfterCSINodeUpdatedQHint/"


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(1, 2, QueueingHint.QUEUE, id=_U + "limit raised, queue"),
        pytest.param(2, 1, QueueingHint.QUEUE_SKIP, id=_U + "limit decreased, skip queueing"),
        pytest.param(1, 1, QueueingHint.QUEUE_SKIP, id=_U + "limit unchanged, skip queueing"),
        pytest.param(None, 1, QueueingHint.QUEUE, id="a limit appears"),
    ],
)
def test_is_schedulable_after_csi_node_updated(
    old: int | None, new: int, want: QueueingHint
) -> None:
    p = pod(claims=("csi-ebs.csi.aws.com-0",), name="test-pod", ns="ns1")
    assert (
        nvl.new(None, FakeHandle()).is_schedulable_after_csi_node_updated(p, _csinode(old), _csinode(new))
        == want
    )


def test_events_to_register() -> None:
    """Upstream's five events, the same with queueing hints on or off."""
    for gates in ({"SchedulerQueueingHints": True}, {"SchedulerQueueingHints": False}):
        pl = nvl.new(None, FakeHandle(feature_gates=gates))
        got = [
            (e.event.resource, e.event.action, e.hint is not None)
            for e in pl.kubesched_events_to_register()
        ]
        assert got == [
            (R.CSI_NODE, A.ADD, False),
            (R.CSI_NODE, A.UPDATE, True),
            (R.POD, A.DELETE, True),
            (R.PERSISTENT_VOLUME_CLAIM, A.ADD, True),
            (R.VOLUME_ATTACHMENT, A.DELETE, True),
        ]


def test_the_counts_follow_the_snapshot_row_by_row() -> None:
    """A node's volumes are recounted when its pods change (the snapshot replaces its row)."""
    from kubesched.cache._cache import Cache, Snapshot

    cluster = FakeHandle().cluster
    fill(cluster, (EBS,), [], csi_node("csinode", 1, EBS))
    cache, snap = Cache(), Snapshot()
    cache.add_node(make_node(NODE).obj())
    snap.update(cache)
    pl = nvl.new(None, FakeHandle(cluster=cluster, snapshot=snap))

    def verdict() -> Status | None:
        out = pl.kubesched_filter(
            CycleState(), csi_ebs_one_vol, NodeBatch(snapshot=snap, indices=np.arange(1))
        )
        return (out or {}).get(0)

    assert verdict() is None
    holder = replace(running, spec=replace(running.spec, node_name=NODE))
    cache.add_pod(holder)
    snap.update(cache)
    _check(verdict(), EXCEEDED)
    cache.remove_pod(holder.metadata.uid)
    snap.update(cache)
    assert verdict() is None
    # the same volume on the node is not a new one
    sharer = replace(
        csi_ebs_one_vol, metadata=ObjectMeta(name="sharer", namespace="default", uid="sharer")
    )
    cache.add_pod(replace(sharer, spec=replace(sharer.spec, node_name=NODE)))
    snap.update(cache)
    assert verdict() is None


def test_a_node_far_from_its_limit_still_reports_an_existing_pods_error() -> None:
    """Counting is skipped on a node with room to spare, except when resolving a pod on it fails
    (a generic ephemeral volume whose claim the pod does not own), which upstream reports."""
    handle = FakeHandle()
    fill(handle.cluster, (EBS,), [conflicting_claim], csi_node("csinode", 100, EBS))
    pl = nvl.new(None, handle)
    ni = make_node_info(make_node(NODE).obj(), ephemeral_pod)
    got = pl.kubesched_filter(CycleState(), csi_ebs_one_vol, NodeBatch.of([ni])) or {}
    _check(
        got.get(0),
        Status(Code.ERROR, "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"),
    )
    ni = make_node_info(make_node(NODE).obj(), running)
    assert pl.kubesched_filter(CycleState(), csi_ebs_one_vol, NodeBatch.of([ni])) is None
