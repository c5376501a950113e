"""The fake cluster's storage side: the PersistentVolume controller (binding, provisioning in
virtual time, reclaiming) and the PV/PVC update verbs.  Every async test runs on both backends.

Binding cases are ports of upstream's ``pkg/controller/volume/persistentvolume/binder_test.go``
(``TestSync``, ``TestMultiSync``): the fake cluster runs every sync to the end, so the expected
state is the converged one (upstream's TestSync case names; the volumes are created before the
claims)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from msgspec.structs import replace

from kubesched._errors import ConflictError, NotFoundError
from kubesched.api._objects import (
    CSIPersistentVolumeSource,
    LabelSelector,
    ObjectMeta,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimStatus,
    PersistentVolumeSpec,
    PersistentVolumeStatus,
    StorageClass,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
    VolumeResourceRequirements,
)
from kubesched.testing import make_node
from kubesched.transports.fake import FakeCluster
from kubesched.transports.fake._pv_controller import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
)

pytestmark = pytest.mark.anyio

NS = "default"
BOUND_BY = ANN_BOUND_BY_CONTROLLER
COMPLETED = ANN_BIND_COMPLETED
CLASS_ANN = "volume.beta.kubernetes.io/storage-class"
LABELS = {"foo": "true", "bar": "false"}
DRIVER = "disk.csi.example.com"


# --- builders (upstream's newVolume / newClaim) ------------------------------------------------


def volume(
    name: str, size: str, claim_uid: str = "", claim: str = "", phase: str = "Pending",
    policy: str = "Retain", *ann: str, cls: str = "", labels: dict[str, str] | None = None,
    modes: tuple[str, ...] = ("ReadWriteOnce", "ReadOnlyMany"), csi: bool = False,
) -> PersistentVolume:  # fmt: skip
    """``newVolume``: bound (or pre-bound) to ``claim`` when given; ``ann``: annotations set to
    "yes" (the class annotation to "gold")."""
    annotations = {a: ("gold" if a == CLASS_ANN else "yes") for a in ann}
    ref = ObjectReference(kind="PersistentVolumeClaim", namespace=NS, name=claim, uid=claim_uid) if claim else None
    return PersistentVolume(
        metadata=ObjectMeta(name=name, annotations=annotations, labels=dict(labels or {})),
        spec=PersistentVolumeSpec(
            capacity={"storage": size}, access_modes=list(modes), claim_ref=ref,
            persistent_volume_reclaim_policy=policy, storage_class_name=cls,
            csi=CSIPersistentVolumeSource(driver=DRIVER, volume_handle=name) if csi else None,
        ),
        status=PersistentVolumeStatus(phase=phase),
    )  # fmt: skip


def claim(
    name: str, uid: str, size: str, volume_name: str = "", phase: str = "Pending", *ann: str,
    cls: str | None = None, selector: dict[str, str] | None = None,
    modes: tuple[str, ...] = ("ReadWriteOnce", "ReadOnlyMany"),
) -> PersistentVolumeClaim:  # fmt: skip
    """``newClaim``."""
    annotations = {a: ("gold" if a == CLASS_ANN else "yes") for a in ann}
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace=NS, uid=uid, annotations=annotations),
        spec=PersistentVolumeClaimSpec(
            access_modes=list(modes), resources=VolumeResourceRequirements(requests={"storage": size}),
            volume_name=volume_name, storage_class_name=cls,
            selector=LabelSelector(match_labels=selector) if selector is not None else None,
        ),
        status=PersistentVolumeClaimStatus(phase=phase),
    )  # fmt: skip


def storage_class(
    name: str, provisioner: str = DRIVER, mode: str = "Immediate", reclaim: str = "Delete",
    topologies: dict[str, list[str]] | None = None, annotations: dict[str, str] | None = None,
) -> StorageClass:  # fmt: skip
    terms = []
    if topologies:
        terms = [
            TopologySelectorTerm(
                match_label_expressions=[TopologySelectorLabelRequirement(key=k, values=v) for k, v in topologies.items()]
            )
        ]
    return StorageClass(
        metadata=ObjectMeta(name=name, annotations=dict(annotations or {})),
        provisioner=provisioner, reclaim_policy=reclaim, volume_binding_mode=mode, allowed_topologies=terms,
    )  # fmt: skip


def claim_events(cluster: FakeCluster, name: str) -> list[tuple[str, str]]:
    return [(e.type, e.reason) for e in cluster.events if e.object == f"{NS}/{name}"]


def affinity(pv: PersistentVolume) -> list[list[tuple[str, str, list[str]]]]:
    aff = pv.spec.node_affinity
    if aff is None or aff.required is None:
        return []
    return [
        [(r.key, r.operator, r.values) for r in t.match_expressions] for t in aff.required.node_selector_terms
    ]


# --- TestSync / TestMultiSync --------------------------------------------------------------------


@dataclass
class Expect:
    """The claim's volumeName, phase and annotations (None: not checked), each volume's
    (claimRef name, claimRef uid, phase, annotations) (a phase None is not checked), the events
    on the claim."""

    volume_name: str | None
    phase: str | None
    annotations: set[str] | None
    volumes: dict[str, tuple[str, str, str | None, set[str]]] = field(default_factory=dict)
    events: list[tuple[str, str]] = field(default_factory=list)
    capacity: str | None = None


C = PersistentVolumeClaim
V = PersistentVolume

SYNC_CASES: list[Any] = [
    pytest.param(
        [volume("volume1-1", "1Gi")], claim("claim1-1", "uid1-1", "1Gi"),
        Expect("volume1-1", "Bound", {BOUND_BY, COMPLETED}, {"volume1-1": ("claim1-1", "uid1-1", "Bound", {BOUND_BY})}),
        id="TestSync/1-1 - successful bind",
    ),
    pytest.param(
        [volume("volume1-2", "1Gi")], claim("claim1-2", "uid1-2", "10Gi"),
        Expect("", "Pending", set(), {"volume1-2": ("", "", "Available", set())}, [("Normal", "FailedBinding")]),
        id="TestSync/1-2 - noop",
    ),
    pytest.param(
        [volume("volume1-3", "1Gi")], claim("claim1-3", "uid1-3", "10Gi", "", "Bound"),
        Expect("", "Pending", set(), {}, [("Normal", "FailedBinding")]),
        id="TestSync/1-3 - reset to Pending",
    ),
    pytest.param(
        [volume("volume1-4_1", "10Gi"), volume("volume1-4_2", "1Gi")], claim("claim1-4", "uid1-4", "1Gi"),
        Expect("volume1-4_2", "Bound", {BOUND_BY, COMPLETED}, {
            "volume1-4_1": ("", "", "Available", set()), "volume1-4_2": ("claim1-4", "uid1-4", "Bound", {BOUND_BY}),
        }),
        id="TestSync/1-4 - smallest volume",
    ),
    pytest.param(
        [volume("volume1-5_1", "10Gi", "", "claim1-5"), volume("volume1-5_2", "1Gi")], claim("claim1-5", "uid1-5", "1Gi"),
        Expect("volume1-5_1", "Bound", {BOUND_BY, COMPLETED}, {
            "volume1-5_1": ("claim1-5", "uid1-5", "Bound", set()), "volume1-5_2": ("", "", "Available", set()),
        }, capacity="10Gi"),
        id="TestSync/1-5 - prebound volume by name - success",
    ),
    pytest.param(
        [volume("volume1-6_1", "10Gi", "uid1-6", "claim1-6"), volume("volume1-6_2", "1Gi")],
        claim("claim1-6", "uid1-6", "1Gi"),
        Expect("volume1-6_1", "Bound", {BOUND_BY, COMPLETED}, {"volume1-6_1": ("claim1-6", "uid1-6", "Bound", set())}, capacity="10Gi"),
        id="TestSync/1-6 - prebound volume by UID - success",
    ),
    pytest.param(
        [volume("volume1-7", "10Gi", "uid1-777", "claim1-7")], claim("claim1-7", "uid1-7", "1Gi"),
        Expect("", "Pending", set(), {"volume1-7": ("claim1-7", "uid1-777", None, set())}, [("Normal", "FailedBinding")]),
        id="TestSync/1-7 - prebound volume to different claim",
    ),
    pytest.param(
        [volume("volume1-8", "1Gi", "uid1-8", "claim1-8", "Pending", "Retain", BOUND_BY)], claim("claim1-8", "uid1-8", "1Gi"),
        Expect("volume1-8", "Bound", {BOUND_BY, COMPLETED}, {"volume1-8": ("claim1-8", "uid1-8", "Bound", {BOUND_BY})}),
        id="TestSync/1-8 - complete bind after crash - PV bound",
    ),
    pytest.param(
        [volume("volume1-9", "1Gi", "uid1-9", "claim1-9", "Bound", "Retain", BOUND_BY)], claim("claim1-9", "uid1-9", "1Gi"),
        Expect("volume1-9", "Bound", {BOUND_BY, COMPLETED}, {"volume1-9": ("claim1-9", "uid1-9", "Bound", {BOUND_BY})}),
        id="TestSync/1-9 - complete bind after crash - PV status saved",
    ),
    pytest.param(
        [volume("volume1-10", "1Gi", "uid1-10", "claim1-10", "Bound", "Retain", BOUND_BY)],
        claim("claim1-10", "uid1-10", "1Gi", "volume1-10", "Pending", BOUND_BY, COMPLETED),
        Expect("volume1-10", "Bound", {BOUND_BY, COMPLETED}, {"volume1-10": ("claim1-10", "uid1-10", "Bound", {BOUND_BY})}),
        id="TestSync/1-10 - complete bind after crash - PVC bound",
    ),
    pytest.param(
        [volume("volume1-1", "1Gi", labels=LABELS)], claim("claim1-1", "uid1-1", "1Gi", selector=LABELS),
        Expect("volume1-1", "Bound", {BOUND_BY, COMPLETED}, {"volume1-1": ("claim1-1", "uid1-1", "Bound", {BOUND_BY})}),
        id="TestSync/1-11 - bind when selector matches",
    ),
    pytest.param(
        [volume("volume1-1", "1Gi")], claim("claim1-1", "uid1-1", "1Gi", selector=LABELS),
        Expect("", "Pending", set(), {"volume1-1": ("", "", "Available", set())}, [("Normal", "FailedBinding")]),
        id="TestSync/1-12 - do not bind when selector does not match",
    ),
    pytest.param(
        [], claim("claim2-1", "uid2-1", "10Gi", "volume2-1"), Expect("volume2-1", "Pending", set()),
        id="TestSync/2-1 - claim prebound to non-existing volume - noop",
    ),
    pytest.param(
        [], claim("claim2-2", "uid2-2", "10Gi", "volume2-2", "Bound"), Expect("volume2-2", "Pending", set()),
        id="TestSync/2-2 - claim prebound to non-existing volume - reset status",
    ),
    pytest.param(
        [volume("volume2-3", "1Gi")], claim("claim2-3", "uid2-3", "1Gi", "volume2-3"),
        Expect("volume2-3", "Bound", {COMPLETED}, {"volume2-3": ("claim2-3", "uid2-3", "Bound", {BOUND_BY})}),
        id="TestSync/2-3 - claim prebound to unbound volume",
    ),
    pytest.param(
        [volume("volume2-4", "1Gi", "", "claim2-4")], claim("claim2-4", "uid2-4", "1Gi", "volume2-4"),
        Expect("volume2-4", "Bound", {COMPLETED}, {"volume2-4": ("claim2-4", "uid2-4", "Bound", set())}),
        id="TestSync/2-4 - claim prebound to prebound volume by name",
    ),
    pytest.param(
        [volume("volume2-5", "1Gi", "uid2-5", "claim2-5")], claim("claim2-5", "uid2-5", "1Gi", "volume2-5"),
        Expect("volume2-5", "Bound", {COMPLETED}, {"volume2-5": ("claim2-5", "uid2-5", "Bound", set())}),
        id="TestSync/2-5 - claim prebound to prebound volume by UID",
    ),
    pytest.param(
        [volume("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", "Bound")], claim("claim2-6", "uid2-6", "1Gi", "volume2-6", "Bound"),
        Expect("volume2-6", "Pending", set(), {"volume2-6": ("claim2-6_1", "uid2-6_1", None, set())}, [("Warning", "FailedBinding")]),
        id="TestSync/2-6 - claim prebound to already bound volume",
    ),
    pytest.param(
        [volume("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", "Bound")],
        claim("claim2-7", "uid2-7", "1Gi", "volume2-7", "Bound", BOUND_BY),
        Expect("volume2-7", "Bound", {BOUND_BY}, {}, [("Warning", "FailedBinding")]),
        id="TestSync/2-7 - claim bound by controller to already bound volume",
    ),
    pytest.param(
        [volume("volume2-3", "1Gi")], claim("claim2-3", "uid2-3", "1Gi", "volume2-3", selector=LABELS),
        Expect("volume2-3", "Bound", {COMPLETED}, {"volume2-3": ("claim2-3", "uid2-3", "Bound", {BOUND_BY})}),
        id="TestSync/2-8 - claim prebound to unbound volume that does not match the selector",
    ),
    pytest.param(
        [], claim("claim3-1", "uid3-1", "10Gi", "", "Bound", BOUND_BY, COMPLETED),
        Expect("", "Lost", {BOUND_BY, COMPLETED}, {}, [("Warning", "ClaimLost")]),
        id="TestSync/3-1 - bound claim with missing VolumeName",
    ),
    pytest.param(
        [], claim("claim3-2", "uid3-2", "10Gi", "volume3-2", "Bound", BOUND_BY, COMPLETED),
        Expect("volume3-2", "Lost", {BOUND_BY, COMPLETED}, {}, [("Warning", "ClaimLost")]),
        id="TestSync/3-2 - bound claim with missing volume",
    ),
    pytest.param(
        [volume("volume3-3", "10Gi")], claim("claim3-3", "uid3-3", "10Gi", "volume3-3", "Pending", BOUND_BY, COMPLETED),
        Expect("volume3-3", "Bound", {BOUND_BY, COMPLETED}, {"volume3-3": ("claim3-3", "uid3-3", "Bound", {BOUND_BY})}),
        id="TestSync/3-3 - bound claim with unbound volume",
    ),
    pytest.param(
        [volume("volume3-4", "10Gi", "claim3-4-x", "claim3-4")],
        claim("claim3-4", "uid3-4", "10Gi", "volume3-4", "Pending", BOUND_BY, COMPLETED),
        Expect("volume3-4", "Lost", {BOUND_BY, COMPLETED}, {}, [("Warning", "ClaimMisbound")]),
        id="TestSync/3-4 - bound claim with prebound volume",
    ),
    pytest.param(
        [volume("volume3-5", "10Gi", "uid3-5", "claim3-5")], claim("claim3-5", "uid3-5", "10Gi", "volume3-5", "Pending", COMPLETED),
        Expect("volume3-5", "Bound", {COMPLETED}, {"volume3-5": ("claim3-5", "uid3-5", "Bound", set())}),
        id="TestSync/3-5 - bound claim with bound volume",
    ),
    pytest.param(
        [volume("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x")], claim("claim3-6", "uid3-6", "10Gi", "volume3-6", "Pending", COMPLETED),
        Expect("volume3-6", "Lost", {COMPLETED}, {}, [("Warning", "ClaimMisbound")]),
        id="TestSync/3-6 - bound claim with bound volume",
    ),
    pytest.param(
        [volume("volume3-3", "10Gi")],
        claim("claim3-3", "uid3-3", "10Gi", "volume3-3", "Pending", BOUND_BY, COMPLETED, selector=LABELS),
        Expect("volume3-3", "Bound", {BOUND_BY, COMPLETED}, {"volume3-3": ("claim3-3", "uid3-3", "Bound", {BOUND_BY})}),
        id="TestSync/3-7 - bound claim with unbound volume where selector doesn't match",
    ),
    pytest.param(
        [volume("volume4-1", "10Gi")], None, Expect(None, None, None, {"volume4-1": ("", "", "Available", set())}),
        id="TestSync/4-1 - pending volume",
    ),
    pytest.param(
        [volume("volume4-2", "10Gi", "", "claim4-2")], None,
        Expect(None, None, None, {"volume4-2": ("claim4-2", "", "Available", set())}),
        id="TestSync/4-2 - pending prebound volume",
    ),
    pytest.param(
        [volume("volume4-3", "10Gi", "uid4-3", "claim4-3", "Bound")], None,
        Expect(None, None, None, {"volume4-3": ("claim4-3", "uid4-3", "Released", set())}),
        id="TestSync/4-3 - bound volume with missing claim",
    ),
    pytest.param(
        [volume("volume4-4", "10Gi", "uid4-4", "claim4-4", "Bound")],
        claim("claim4-4", "uid4-4-x", "10Gi", "volume4-4", "Bound", COMPLETED),
        Expect(None, None, None, {"volume4-4": ("claim4-4", "uid4-4", "Released", set())}, [("Warning", "ClaimMisbound")]),
        id="TestSync/4-4 - volume bound to claim with different UID",
    ),
    pytest.param(
        [volume("volume4-6", "10Gi", "uid4-6", "claim4-6", "Available")], claim("claim4-6", "uid4-6", "10Gi", "volume4-6", "Bound"),
        Expect("volume4-6", "Bound", None, {"volume4-6": ("claim4-6", "uid4-6", "Bound", set())}),
        id="TestSync/4-6 - volume bound by to bound claim",
    ),
    pytest.param(
        [volume("volume4-7", "10Gi", "uid4-7", "claim4-7", "Bound", "Retain", BOUND_BY)],
        claim("claim4-7", "uid4-7", "10Gi", "volume4-7-x", "Bound"),
        Expect("volume4-7-x", None, None, {"volume4-7": ("", "", "Available", set())}),
        id="TestSync/4-7 - volume bound by controller to claim bound somewhere else",
    ),
    pytest.param(
        [volume("volume4-8", "10Gi", "uid4-8", "claim4-8", "Bound")], claim("claim4-8", "uid4-8", "10Gi", "volume4-8-x", "Bound"),
        Expect("volume4-8-x", None, None, {"volume4-8": ("claim4-8", "", "Available", set())}),
        id="TestSync/4-8 - volume bound by user to claim bound somewhere else",
    ),
    pytest.param(
        [volume("volume13-1-1", "1Gi"), volume("volume13-1-2", "10Gi", "", "", "Pending", "Retain", CLASS_ANN)],
        claim("claim13-1", "uid13-1", "1Gi", "", "Pending", CLASS_ANN),
        Expect("volume13-1-2", "Bound", {BOUND_BY, COMPLETED, CLASS_ANN}, {
            "volume13-1-1": ("", "", "Available", set()), "volume13-1-2": ("claim13-1", "uid13-1", "Bound", {BOUND_BY, CLASS_ANN}),
        }, capacity="10Gi"),
        id="TestSync/13-1 - binding to class",
    ),
    pytest.param(
        [volume("volume13-2-1", "1Gi", "", "", "Pending", "Retain", CLASS_ANN), volume("volume13-2-2", "10Gi")],
        claim("claim13-2", "uid13-2", "1Gi"),
        Expect("volume13-2-2", "Bound", {BOUND_BY, COMPLETED}, {"volume13-2-2": ("claim13-2", "uid13-2", "Bound", {BOUND_BY})}, capacity="10Gi"),
        id="TestSync/13-2 - binding without a class",
    ),
    pytest.param(
        [volume("volume13-3-1", "1Gi", cls="silver"), volume("volume13-3-2", "10Gi", "", "", "Pending", "Retain", CLASS_ANN, cls="silver")],
        claim("claim13-3", "uid13-3", "1Gi", "", "Pending", CLASS_ANN),
        Expect("volume13-3-2", "Bound", {BOUND_BY, COMPLETED, CLASS_ANN}, {
            "volume13-3-2": ("claim13-3", "uid13-3", "Bound", {BOUND_BY, CLASS_ANN}),
        }, capacity="10Gi"),
        id="TestSync/13-3 - binding to specific a class",
    ),
    pytest.param(
        [volume("volume13-4", "1Gi")], claim("claim13-4", "uid13-4", "1Gi", cls=""),
        Expect("volume13-4", "Bound", {BOUND_BY, COMPLETED}, {"volume13-4": ("claim13-4", "uid13-4", "Bound", {BOUND_BY})}),
        id="TestSync/13-4 - empty class",
    ),
    pytest.param(
        [volume("volume13-5", "1Gi")], claim("claim13-5", "uid13-5", "1Gi", cls=None),
        Expect("volume13-5", "Bound", {BOUND_BY, COMPLETED}, {"volume13-5": ("claim13-5", "uid13-5", "Bound", {BOUND_BY})}),
        id="TestSync/13-5 - nil class",
    ),
    pytest.param(
        [volume("volume10-2-1", "1Gi", "uid10-2", "claim10-2", "Bound", "Retain", BOUND_BY),
         volume("volume10-2-2", "1Gi", "uid10-2", "claim10-2", "Bound", "Retain", BOUND_BY)],
        claim("claim10-2", "uid10-2", "1Gi", "volume10-2-1", "Bound", BOUND_BY, COMPLETED),
        Expect("volume10-2-1", "Bound", {BOUND_BY, COMPLETED}, {
            "volume10-2-1": ("claim10-2", "uid10-2", "Bound", {BOUND_BY}), "volume10-2-2": ("", "", "Available", set()),
        }),
        id="TestMultiSync/10-2 - bind PV race",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("volumes", "pvc", "want"), SYNC_CASES)
async def test_sync(volumes: list[V], pvc: C | None, want: Expect) -> None:
    async with FakeCluster() as cluster:
        for pv in volumes:
            cluster.create(pv)
        if pvc is not None:
            cluster.create(pvc)
            got = cluster.get("PersistentVolumeClaim", NS, pvc.metadata.name)
            if want.volume_name is not None:
                assert got.spec.volume_name == want.volume_name
            if want.phase is not None:
                assert got.status.phase == want.phase
            if want.annotations is not None:
                assert set(got.metadata.annotations) == want.annotations
            if want.volumes.get(got.spec.volume_name, ("", "", "", set()))[2] == "Bound":
                pv = cluster.get("PersistentVolume", "", got.spec.volume_name)
                assert got.status.access_modes == pv.spec.access_modes
                # the capacity is set when the claim becomes Bound, not when it already was
                was_bound = pvc.status.phase == "Bound"
                assert got.status.capacity == ({} if was_bound else {"storage": want.capacity or pv.spec.capacity["storage"]})
            assert claim_events(cluster, pvc.metadata.name) == want.events
        for name, (ref_name, ref_uid, phase, annotations) in want.volumes.items():
            pv = cluster.get("PersistentVolume", "", name)
            ref = pv.spec.claim_ref
            assert ((ref.name, ref.uid) if ref is not None else ("", "")) == (ref_name, ref_uid)
            if phase is not None:
                assert pv.status.phase == phase
            assert set(pv.metadata.annotations) == annotations


async def test_messages_of_the_claim_events() -> None:
    """The whole texts (pv_controller.go): FailedBinding without a class, ClaimLost."""
    async with FakeCluster() as cluster:
        cluster.create(claim("c1", "u1", "1Gi", cls=""))
        cluster.create(claim("c2", "u2", "1Gi", "gone", "Bound", COMPLETED))
        cluster.create(claim("c3", "u3", "1Gi", "", "Bound", COMPLETED))
        assert [(e.object, e.reason, e.message, e.source) for e in cluster.events] == [
            ("default/c1", "FailedBinding", "no persistent volumes available for this claim and no storage class is set",
             "persistentvolume-controller"),
            ("default/c2", "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
             "persistentvolume-controller"),
            ("default/c3", "ClaimLost", "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!",
             "persistentvolume-controller"),
        ]  # fmt: skip


async def test_a_volume_created_later_binds_the_pending_claim_at_once() -> None:
    """The periodic resync, emulated: a claim waiting for a volume is bound when one appears."""
    async with FakeCluster() as cluster:
        cluster.create(claim("c", "u", "5Gi", cls=""))
        cluster.create(volume("small", "1Gi"))
        assert cluster.get("PersistentVolumeClaim", NS, "c").status.phase == "Pending"
        cluster.create(volume("big", "10Gi"))
        got = cluster.get("PersistentVolumeClaim", NS, "c")
        assert (got.spec.volume_name, got.status.phase) == ("big", "Bound")
        # the FailedBinding event is not repeated while nothing changes
        assert claim_events(cluster, "c") == [("Normal", "FailedBinding")]


async def test_a_storage_class_created_after_its_claim_provisions_it() -> None:
    async with FakeCluster() as cluster:
        cluster.create(claim("c", "u", "5Gi", cls="fast"))
        assert [(e.reason, e.message) for e in cluster.events] == [
            ("ProvisioningFailed", 'storageclass.storage.k8s.io "fast" not found')
        ]
        cluster.create(storage_class("fast"))
        got = cluster.get("PersistentVolumeClaim", NS, "c")
        assert (got.spec.volume_name, got.status.phase) == ("pvc-u", "Bound")


async def test_the_default_storage_class_is_assigned_at_creation() -> None:
    """The DefaultStorageClass admission plugin: a claim naming no class gets the default; ""
    stays ""."""
    async with FakeCluster() as cluster:
        cluster.create(storage_class("std", annotations={"storageclass.kubernetes.io/is-default-class": "true"}))
        cluster.create(claim("c1", "u1", "1Gi", cls=None))
        cluster.create(claim("c2", "u2", "1Gi", cls=""))
        assert cluster.get("PersistentVolumeClaim", NS, "c1").spec.storage_class_name == "std"
        assert cluster.get("PersistentVolumeClaim", NS, "c2").spec.storage_class_name == ""


# --- provisioning ----------------------------------------------------------------------------


async def test_immediate_provisioning_with_allowed_topologies() -> None:
    """provision_test.go "11-17 - external provisioner" (ExternalProvisioning), then the CSI
    external-provisioner's own events; the volume takes the class's allowedTopologies."""
    async with FakeCluster() as cluster:
        cluster.create(storage_class("zonal", topologies={"topology.kubernetes.io/zone": ["a", "b"]}, reclaim="Retain"))
        cluster.create(claim("data", "uid-1", "5Gi", cls="zonal", modes=("ReadWriteOnce",)))
        pv = cluster.get("PersistentVolume", "", "pvc-uid-1")
        assert pv is not None
        assert pv.spec.capacity == {"storage": "5Gi"}
        assert pv.spec.access_modes == ["ReadWriteOnce"]
        assert pv.spec.persistent_volume_reclaim_policy == "Retain"
        assert pv.spec.storage_class_name == "zonal"
        assert pv.spec.csi is not None and pv.spec.csi.driver == DRIVER
        assert pv.metadata.annotations == {"pv.kubernetes.io/provisioned-by": DRIVER}
        assert affinity(pv) == [[("topology.kubernetes.io/zone", "In", ["a", "b"])]]
        assert pv.status.phase == "Bound"
        got = cluster.get("PersistentVolumeClaim", NS, "data")
        assert got.spec.volume_name == "pvc-uid-1"
        assert got.status.phase == "Bound" and got.status.capacity == {"storage": "5Gi"}
        assert got.metadata.annotations == {
            "volume.kubernetes.io/storage-provisioner": DRIVER,
            "volume.beta.kubernetes.io/storage-provisioner": DRIVER,
            BOUND_BY: "yes",
            COMPLETED: "yes",
        }
        assert [(e.type, e.reason, e.message, e.source) for e in cluster.events] == [
            ("Normal", "ExternalProvisioning",
             f"Waiting for a volume to be created either by the external provisioner '{DRIVER}' or manually by the "
             "system administrator. If volume creation is delayed, please verify that the provisioner is running "
             "and correctly registered.", "persistentvolume-controller"),
            ("Normal", "Provisioning", 'External provisioner is provisioning volume for claim "default/data"', DRIVER),
            ("Normal", "ProvisioningSucceeded", "Successfully provisioned volume pvc-uid-1", DRIVER),
        ]  # fmt: skip


async def test_wait_for_first_consumer_provisions_in_the_selected_nodes_zone() -> None:
    """WaitForFirstConsumer: nothing until the scheduler's PreBind sets selected-node; then a
    volume in that node's zone."""
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").label("topology.kubernetes.io/zone", "z1").label("kubernetes.io/hostname", "n1").obj())
        cluster.create(storage_class("wffc", mode="WaitForFirstConsumer"))
        cluster.create(claim("data", "uid-w", "1Gi", cls="wffc"))
        assert cluster.get("PersistentVolume", "", "pvc-uid-w") is None
        assert [(e.reason, e.message) for e in cluster.events] == [
            ("WaitForFirstConsumer", "waiting for first consumer to be created before binding")
        ]
        pvc = cluster.get("PersistentVolumeClaim", NS, "data")
        ann = {**pvc.metadata.annotations, ANN_SELECTED_NODE: "n1"}
        await cluster.update_persistent_volume_claim(replace(pvc, metadata=replace(pvc.metadata, annotations=ann)))
        pv = cluster.get("PersistentVolume", "", "pvc-uid-w")
        assert affinity(pv) == [[("topology.kubernetes.io/zone", "In", ["z1"])]]
        got = cluster.get("PersistentVolumeClaim", NS, "data")
        assert (got.spec.volume_name, got.status.phase) == ("pvc-uid-w", "Bound")
        assert [e.reason for e in cluster.events][1:] == ["ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"]


@pytest.mark.parametrize(
    ("class_topology", "csi_keys", "labels", "want"),
    [
        pytest.param({"rack": ["r1", "r2"]}, [], {"rack": "r1", "topology.kubernetes.io/zone": "z"}, [("rack", "In", ["r1"])],
                     id="the class's allowedTopologies keys"),
        pytest.param(None, ["topology.example.com/zone"], {"topology.example.com/zone": "e1", "topology.kubernetes.io/zone": "z"},
                     [("topology.example.com/zone", "In", ["e1"])], id="the driver's CSINode topologyKeys"),
        pytest.param(None, [], {"kubernetes.io/hostname": "n1"}, [("kubernetes.io/hostname", "In", ["n1"])],
                     id="the hostname when there is no zone"),
    ],
)  # fmt: skip
async def test_wait_for_first_consumer_topology(
    class_topology: dict[str, list[str]] | None, csi_keys: list[str], labels: dict[str, str], want: list[Any]
) -> None:
    from kubesched.api._objects import CSINode, CSINodeDriver, CSINodeSpec

    async with FakeCluster() as cluster:
        node = make_node("n1")
        for k, v in labels.items():
            node = node.label(k, v)
        cluster.create(node.obj())
        if csi_keys:
            cluster.create(CSINode(metadata=ObjectMeta(name="n1"), spec=CSINodeSpec(
                drivers=[CSINodeDriver(name=DRIVER, node_id="n1", topology_keys=csi_keys)])))  # fmt: skip
        cluster.create(storage_class("wffc", mode="WaitForFirstConsumer", topologies=class_topology))
        pvc = claim("data", "uid-t", "1Gi", "", "Pending", ANN_SELECTED_NODE, cls="wffc")
        pvc.metadata.annotations[ANN_SELECTED_NODE] = "n1"
        cluster.create(pvc)
        assert affinity(cluster.get("PersistentVolume", "", "pvc-uid-t")) == [want]


async def test_provisioning_delay_in_virtual_time() -> None:
    """FakeCluster(provisioning_delay=...) and a class's kubesched.io/provisioning-delay, which
    wins; the volume appears when the delay is over, the claim is bound then."""
    async with FakeCluster(provisioning_delay=10) as cluster:
        t0 = anyio.current_time()
        cluster.create(storage_class("slow", annotations={"kubesched.io/provisioning-delay": "30s"}))
        cluster.create(storage_class("default-delay"))
        cluster.create(claim("a", "ua", "1Gi", cls="slow"))
        cluster.create(claim("b", "ub", "1Gi", cls="default-delay"))
        assert cluster.volumes.pending_provisionings() == 2
        assert cluster.volumes.next_due() == pytest.approx(t0 + 10)
        assert cluster.get("PersistentVolume", "", "pvc-ua") is None
        await anyio.sleep(10.5)  # (past the deadline: the controller's timer task has run)
        assert cluster.get("PersistentVolume", "", "pvc-ub") is not None
        assert cluster.get("PersistentVolume", "", "pvc-ua") is None
        await anyio.sleep(20)
        assert cluster.get("PersistentVolumeClaim", NS, "a").status.phase == "Bound"
        succeeded = [(round(e.time, 6), e.object) for e in cluster.events if e.reason == "ProvisioningSucceeded"]
        assert succeeded == [(10.0, "default/b"), (30.0, "default/a")]
        assert cluster.volumes.pending_provisionings() == 0


async def test_provisioning_delay_without_timers_runs_from_run_due() -> None:
    """A deterministic simulation drives the delays itself (next_due / run_due)."""
    async with FakeCluster(kubelet_timers=False, provisioning_delay=5) as cluster:
        cluster.create(storage_class("c"))
        cluster.create(claim("a", "ua", "1Gi", cls="c"))
        due = cluster.volumes.next_due()
        assert due is not None
        await anyio.sleep_until(due)
        assert cluster.get("PersistentVolume", "", "pvc-ua") is None
        cluster.volumes.run_due()
        assert cluster.get("PersistentVolumeClaim", NS, "a").status.phase == "Bound"


async def test_no_provisioner_and_unknown_in_tree_names_fail() -> None:
    async with FakeCluster() as cluster:
        cluster.create(storage_class("local", provisioner="kubernetes.io/no-provisioner"))
        cluster.create(claim("c", "u", "1Gi", cls="local"))
        assert [(e.type, e.reason, e.message) for e in cluster.events] == [
            ("Warning", "ProvisioningFailed", "no volume plugin matched name: kubernetes.io/no-provisioner")
        ]


async def test_a_migrated_in_tree_provisioner_uses_its_csi_driver() -> None:
    async with FakeCluster() as cluster:
        cluster.create(storage_class("gp2", provisioner="kubernetes.io/aws-ebs"))
        cluster.create(claim("c", "u", "1Gi", cls="gp2"))
        pv = cluster.get("PersistentVolume", "", "pvc-u")
        assert pv.spec.aws_elastic_block_store is not None and pv.spec.csi is None
        assert {e.source for e in cluster.events if e.reason.startswith("Provisioning")} == {"ebs.csi.aws.com"}


# --- reclaiming -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "gone"),
    [pytest.param("Delete", True, id="Delete removes the volume"), pytest.param("Retain", False, id="Retain keeps it Released")],
)
async def test_reclaim_policy_when_the_claim_is_deleted(policy: str, gone: bool) -> None:
    async with FakeCluster() as cluster:
        cluster.create(storage_class("c", reclaim=policy))
        cluster.create(claim("data", "u", "1Gi", cls="c"))
        assert cluster.get("PersistentVolume", "", "pvc-u").status.phase == "Bound"
        cluster.delete_object("PersistentVolumeClaim", NS, "data")
        pv = cluster.get("PersistentVolume", "", "pvc-u")
        if gone:
            assert pv is None
        else:
            assert pv.status.phase == "Released"
            assert pv.spec.claim_ref is not None and pv.spec.claim_ref.uid == "u"


async def test_a_static_volume_without_a_deleter_fails_its_delete_policy() -> None:
    """reclaimVolume, Delete, no deleter plugin: Failed and a VolumeFailedDelete warning."""
    async with FakeCluster() as cluster:
        cluster.create(volume("v", "1Gi", policy="Delete"))
        cluster.create(claim("c", "u", "1Gi", cls=""))
        cluster.delete_object("PersistentVolumeClaim", NS, "c")
        pv = cluster.get("PersistentVolume", "", "v")
        msg = 'error getting deleter volume plugin for volume "v": no deletable volume plugin matched'
        assert (pv.status.phase, pv.status.message) == ("Failed", msg)
        assert [(e.object, e.type, e.reason, e.message) for e in cluster.events] == [("v", "Warning", "VolumeFailedDelete", msg)]


async def test_a_deleted_volume_leaves_its_claim_lost() -> None:
    async with FakeCluster() as cluster:
        cluster.create(volume("v", "1Gi", csi=True))
        cluster.create(claim("c", "u", "1Gi", cls=""))
        cluster.delete_object("PersistentVolume", "", "v")
        assert cluster.get("PersistentVolumeClaim", NS, "c").status.phase == "Lost"


# --- the scheduler's writes (VolumeBinding PreBind) ----------------------------------------------


async def test_a_volume_pre_bound_by_the_scheduler_is_completed() -> None:
    """PreBind sets claimRef (and bound-by-controller) on the volume it chose for a
    WaitForFirstConsumer claim; the controller completes the binding."""
    async with FakeCluster() as cluster:
        cluster.create(storage_class("local", provisioner="kubernetes.io/no-provisioner", mode="WaitForFirstConsumer"))
        cluster.create(volume("v1", "10Gi", cls="local"))
        cluster.create(claim("c", "u", "1Gi", cls="local"))
        assert cluster.get("PersistentVolumeClaim", NS, "c").status.phase == "Pending"  # not bound by the controller
        pv = cluster.get("PersistentVolume", "", "v1")
        ref = ObjectReference(kind="PersistentVolumeClaim", namespace=NS, name="c", uid="u")
        ann = {**pv.metadata.annotations, BOUND_BY: "yes"}
        stored = await cluster.update_persistent_volume(
            replace(pv, metadata=replace(pv.metadata, annotations=ann), spec=replace(pv.spec, claim_ref=ref))
        )
        assert stored.spec.claim_ref == ref
        got = cluster.get("PersistentVolumeClaim", NS, "c")
        assert got.spec.volume_name == "v1" and got.status.phase == "Bound"
        assert got.metadata.annotations == {BOUND_BY: "yes", COMPLETED: "yes"}
        assert got.status.capacity == {"storage": "10Gi"}
        assert cluster.get("PersistentVolume", "", "v1").status.phase == "Bound"


async def test_update_verbs_conflict_not_found_and_keep_status() -> None:
    async with FakeCluster() as cluster:
        cluster.create(volume("v", "1Gi"))
        old = cluster.get("PersistentVolume", "", "v")
        cluster.create(claim("other", "uo", "1Gi", cls=""))  # binds v: a newer resourceVersion
        with pytest.raises(ConflictError) as err:
            await cluster.update_persistent_volume(old)
        assert str(err.value) == (
            'Operation cannot be fulfilled on persistentvolumes "v": the object has been modified; please apply '
            "your changes to the latest version and try again"
        )
        with pytest.raises(NotFoundError, match='persistentvolumeclaims "nope" not found'):
            await cluster.update_persistent_volume_claim(claim("nope", "x", "1Gi"))
        # a PUT does not write the status (the status subresource does)
        pvc = cluster.get("PersistentVolumeClaim", NS, "other")
        stored = await cluster.update_persistent_volume_claim(
            replace(pvc, metadata=replace(pvc.metadata, labels={"x": "y"}), status=PersistentVolumeClaimStatus(phase="Lost"))
        )
        assert stored.status.phase == "Bound" and stored.metadata.labels == {"x": "y"}


async def test_faults_can_be_injected_into_the_update_verbs() -> None:
    async with FakeCluster() as cluster:
        cluster.create(volume("v", "1Gi"))
        cluster.faults.fail_next("update_persistent_volume", ConflictError)
        pv = cluster.get("PersistentVolume", "", "v")
        with pytest.raises(ConflictError, match="injected update_persistent_volume failure"):
            await cluster.update_persistent_volume(pv)
        cluster.faults.delay("update_persistent_volume_claim", 2)
        cluster.create(claim("c", "u", "1Gi", cls=""))
        t0 = anyio.current_time()
        await cluster.update_persistent_volume_claim(cluster.get("PersistentVolumeClaim", NS, "c"))
        assert anyio.current_time() - t0 == pytest.approx(2)


async def test_the_listing_holds_storage_objects_before_pods() -> None:
    from kubesched.testing import make_pod

    async with FakeCluster() as cluster:
        cluster.create(make_pod("p").obj())
        cluster.create(claim("c", "u", "1Gi", cls=""))
        cluster.create(storage_class("sc"))
        cluster.create(volume("v", "1Gi"))
        watch = cluster.watch()
        kinds = []
        while (ev := watch.get_nowait()) is not None and ev.type != "SYNCED":
            kinds.append(ev.obj.kind)
        assert kinds == ["StorageClass", "PersistentVolume", "PersistentVolumeClaim", "Pod"]


@pytest.mark.parametrize(("vac", "want"), [(True, "gold"), (False, None), (None, None)], ids=["on", "off", "1.30"])
async def test_a_provisioned_volume_takes_its_claims_class_of_attributes(vac: bool | None, want: str | None) -> None:
    """external-provisioner sets the new volume's ``volumeAttributesClassName`` from its claim
    with VolumeAttributesClass on; the claim binds it (FindMatchingVolume matches the class)."""
    async with FakeCluster(volume_attributes_class=vac) as cluster:
        cluster.create(storage_class("fast"))
        c = claim("data", "uid-1", "5Gi", cls="fast")
        if vac is not False:  # with the gate off the API server would have dropped it
            c = replace(c, spec=replace(c.spec, volume_attributes_class_name="gold"))
        cluster.create(c)
        pv = cluster.get("PersistentVolume", "", "pvc-uid-1")
        assert pv is not None and pv.spec.volume_attributes_class_name == want
        got = cluster.get("PersistentVolumeClaim", NS, "data")
        assert (got.spec.volume_name, got.status.phase) == ("pvc-uid-1", "Bound")
