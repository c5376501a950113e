"""VolumeZone (k/k ``plugins/volumezone/volume_zone_test.go``: TestSingleZone, TestMultiZone,
TestWithBinding, TestIsSchedulableAfterPersistentVolumeClaimAdded,
TestIsSchedulableAfterStorageClassAdded, TestIsSchedulableAfterPersistentVolumeChange), plus
a batch of many nodes and EventsToRegister.

Upstream's unit tests read fake listers whose NotFound messages name the plural resource
(``storageclasses.storage.k8s.io "Class_0" not found``); the scheduler reads informer listers,
which name the singular one, and so does kubesched (``storageclass.storage.k8s.io ...``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from kubesched import CycleState, NodeBatch
from kubesched.api._objects import (
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource,
    Pod,
    StorageClass,
    Volume,
)
from kubesched.cache._clusterstate import ClusterState
from kubesched.plugins import volumezone as vz
from kubesched.runtime._events import ActionType as A
from kubesched.runtime._events import QueueingHint
from kubesched.runtime._events import Resource as R
from kubesched.runtime._status import Code, Status
from kubesched.testing import FakeHandle, framework_for, make_node, make_node_info, make_pod

BETA_ZONE, BETA_REGION = vz.LABEL_FAILURE_DOMAIN_BETA_ZONE, vz.LABEL_FAILURE_DOMAIN_BETA_REGION
ZONE, REGION = vz.LABEL_TOPOLOGY_ZONE, vz.LABEL_TOPOLOGY_REGION
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, vz.ERR_REASON_CONFLICT)
SKIP = Status(Code.SKIP)


def create_pod_with_volume(pod: str, claim: str) -> Pod:
    """``createPodWithVolume``."""
    p = make_pod(pod).obj()
    p.spec.volumes = [
        Volume(
            name=claim, persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=claim)
        )
    ]
    return p


def pv(name: str, **labels: str) -> PersistentVolume:
    return PersistentVolume(metadata=ObjectMeta(name=name, labels=dict(labels)))


def pvc(name: str, volume: str = "", cls: str | None = None) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=PersistentVolumeClaimSpec(volume_name=volume, storage_class_name=cls),
    )


def node(labels: dict[str, str]) -> Any:
    n = make_node("host1").obj()
    n.metadata.labels = dict(labels)
    return n


def plugin(
    pvs: Sequence[PersistentVolume],
    pvcs: Sequence[PersistentVolumeClaim],
    classes: Sequence[StorageClass] = (),
) -> Any:
    cluster = ClusterState()
    for v in pvs:
        cluster.pvs[v.metadata.name] = v
    for c in pvcs:
        cluster.pvcs[(c.metadata.namespace, c.metadata.name)] = c
    for sc in classes:
        cluster.storage_classes[sc.metadata.name] = sc
    return vz.new(None, FakeHandle(cluster=cluster))


def run(pl: Any, pod: Pod, n: Any) -> tuple[Status | None, Status | None]:
    """PreFilter then Filter, as upstream's tests run them (Filter even after a failed
    PreFilter: it then computes the topologies itself)."""
    state = CycleState()
    pre = pl.kubesched_pre_filter(state, pod, [])
    out = pl.kubesched_filter(state, pod, NodeBatch.of([make_node_info(n)]))
    return pre, (out or {}).get(0)


def _same(got: Status | None, want: Status | None) -> bool:
    if want is None or got is None:
        return got == want
    return got.code == want.code and got.reasons == want.reasons


SINGLE_PVS = [
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", **{BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", **{BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", **{ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", **{REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", **{ZONE: "us-west1-a", REGION: "us-west1-a"}),
]
SINGLE_PVCS = [
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_2", "Vol_2"),
    pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"),
    pvc("PVC_Stable_2", "Vol_Stable_2"),
    pvc("PVC_Stable_3", "Vol_Stable_3"),
]
_S = "TestSingleZone/"
SINGLE_CASES = [
    pytest.param(
        make_pod("pod_1").obj(), {BETA_ZONE: "us-west1-a"}, SKIP, None, id=_S + "pod without volume"
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_1"), {}, None, None, id=_S + "node without labels"
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_1"),
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        None,
        None,
        id=_S + "beta zone label matched",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_2"),
        {BETA_REGION: "us-west1", "uselessLabel": "none"},
        None,
        None,
        id=_S + "beta region label matched",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_2"),
        {BETA_REGION: "no_us-west1", "uselessLabel": "none"},
        None,
        CONFLICT,
        id=_S + "beta region label doesn't match",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_1"),
        {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"},
        None,
        CONFLICT,
        id=_S + "beta zone label doesn't match",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_Stable_1"),
        {ZONE: "us-west1-a", "uselessLabel": "none"},
        None,
        None,
        id=_S + "zone label matched",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_Stable_2"),
        {REGION: "us-west1", "uselessLabel": "none"},
        None,
        None,
        id=_S + "region label matched",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_Stable_2"),
        {REGION: "no_us-west1", "uselessLabel": "none"},
        None,
        CONFLICT,
        id=_S + "region label doesn't match",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_Stable_1"),
        {ZONE: "no_us-west1-a", "uselessLabel": "none"},
        None,
        CONFLICT,
        id=_S + "zone label doesn't match",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_Stable_3"),
        {ZONE: "us-west1-a"},
        None,
        CONFLICT,
        id=_S + "pv with zone and region, node with only zone",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_Stable_1"),
        {BETA_ZONE: "us-west1-a"},
        None,
        CONFLICT,
        id=_S + "pv with zone,node with beta zone",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_1"),
        {ZONE: "us-west1-a"},
        None,
        None,
        id=_S + "pv with beta label,node with ga label, matched",
    ),
    pytest.param(
        create_pod_with_volume("pod_1", "PVC_1"),
        {ZONE: "us-west1-b"},
        None,
        CONFLICT,
        id=_S + "pv with beta label,node with ga label, don't match",
    ),
]


@pytest.mark.parametrize(("pod", "labels", "want_pre", "want"), SINGLE_CASES)
def test_single_zone(
    pod: Pod, labels: dict[str, str], want_pre: Status | None, want: Status | None
) -> None:
    pre, got = run(plugin(SINGLE_PVS, SINGLE_PVCS), pod, node(labels))
    assert _same(pre, want_pre)
    assert _same(got, want)


@pytest.mark.parametrize(
    "pod",
    [
        create_pod_with_volume("pod_1", c)
        for c in ("PVC_1", "PVC_2", "PVC_Stable_1", "PVC_Stable_2", "PVC_Stable_3")
    ],
)
def test_a_batch_of_nodes_matches_each_node_alone(pod: Pod) -> None:
    """Filter over one batch of every TestSingleZone node gives each node its own verdict."""
    pl = plugin(SINGLE_PVS, SINGLE_PVCS)
    nodes = [node(p.values[1]) for p in SINGLE_CASES]
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    batch = pl.kubesched_filter(state, pod, NodeBatch.of([make_node_info(n) for n in nodes])) or {}
    for i, n in enumerate(nodes):
        alone = pl.kubesched_filter(state, pod, NodeBatch.of([make_node_info(n)])) or {}
        assert _same(batch.get(i), alone.get(0))
    # the same nodes as rows of a snapshot (the snapshot's cached label codes)
    for i, n in enumerate(nodes):
        n.metadata.name = f"host{i}"
    snap = framework_for({"filter": [vz.NAME]}, nodes).snapshot
    rows = np.array([snap.index[n.metadata.name] for n in nodes])
    over_rows = pl.kubesched_filter(state, pod, NodeBatch(snapshot=snap, indices=rows)) or {}
    assert {i: st.message for i, st in over_rows.items()} == {
        i: st.message for i, st in batch.items()
    }


MULTI_PVS = [
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", **{BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", **{BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", **{ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", **{ZONE: "us-west1-c__us-west1-a"}),
]
MULTI_PVCS = [
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_2", "Vol_2"),
    pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"),
    pvc("PVC_Stable_2", "Vol_Stable_2"),
]
_M = "TestMultiZone/"


@pytest.mark.parametrize(
    ("claim", "labels", "want"),
    [
        pytest.param("PVC_3", {}, None, id=_M + "node without labels"),
        pytest.param(
            "PVC_3",
            {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
            None,
            id=_M + "beta zone label matched",
        ),
        pytest.param(
            "PVC_1",
            {BETA_ZONE: "us-west1-b", "uselessLabel": "none"},
            CONFLICT,
            id=_M + "beta zone label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_2",
            {ZONE: "us-west1-a", "uselessLabel": "none"},
            None,
            id=_M + "zone label matched",
        ),
        pytest.param(
            "PVC_Stable_1",
            {ZONE: "us-west1-b", "uselessLabel": "none"},
            CONFLICT,
            id=_M + "zone label doesn't match",
        ),
        # kubesched: a claim whose PV is missing (PVC_4 is in upstream's lister, never used)
        pytest.param(
            "PVC_4",
            {ZONE: "us-west1-a"},
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolume "Vol_not_exist" not found'
            ),
            id="pv not found",
        ),
        pytest.param(
            "PVC_9",
            {ZONE: "us-west1-a"},
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "PVC_9" not found'),
            id="pvc not found",
        ),
    ],
)
def test_multi_zone(claim: str, labels: dict[str, str], want: Status | None) -> None:
    pre, got = run(
        plugin(MULTI_PVS, MULTI_PVCS), create_pod_with_volume("pod_1", claim), node(labels)
    )
    assert _same(got, want)
    # a missing claim or PV already rejects the pod in PreFilter; a zone conflict only in Filter
    assert _same(pre, None if want is None or want.reasons == CONFLICT.reasons else want)


def _classes() -> list[StorageClass]:
    immediate = StorageClass(metadata=ObjectMeta(name="Class_Immediate"))
    immediate.volume_binding_mode = None  # upstream's case: the mode is not set
    wait = StorageClass(
        metadata=ObjectMeta(name="Class_Wait"), volume_binding_mode="WaitForFirstConsumer"
    )
    defaulted = StorageClass(
        metadata=ObjectMeta(name="Class_Defaulted"), volume_binding_mode="Immediate"
    )
    return [immediate, wait, defaulted]


_B = "TestWithBinding/"


@pytest.mark.parametrize(
    ("claim", "want_pre", "want"),
    [
        pytest.param("PVC_1", None, None, id=_B + "label zone failure domain matched"),
        pytest.param(
            "PVC_EmptySC",
            "PersistentVolumeClaim had no pv name and storageClass name",
            "PersistentVolumeClaim had no pv name and storageClass name",
            id=_B + "unbound volume empty storage class",
        ),
        pytest.param(
            "PVC_NoSC",
            'storageclass.storage.k8s.io "Class_0" not found',
            'storageclass.storage.k8s.io "Class_0" not found',
            id=_B + "unbound volume no storage class",
        ),
        pytest.param(
            "PVC_ImmediateSC",
            'VolumeBindingMode not set for StorageClass "Class_Immediate"',
            'VolumeBindingMode not set for StorageClass "Class_Immediate"',
            id=_B + "unbound volume immediate binding mode",
        ),
        pytest.param("PVC_WaitSC", "skip", None, id=_B + "unbound volume wait binding mode"),
        # kubesched: the API server defaults volumeBindingMode to Immediate
        pytest.param(
            "PVC_DefaultedSC",
            "PersistentVolume had no name",
            "PersistentVolume had no name",
            id="unbound volume defaulted immediate binding mode",
        ),
        pytest.param(
            "PVC_BetaAnnotation",
            "skip",
            None,
            id="the beta storage-class annotation goes before storageClassName",
        ),
    ],
)
def test_with_binding(claim: str, want_pre: str | None, want: str | None) -> None:
    beta = pvc("PVC_BetaAnnotation", cls="Class_0")
    beta.metadata.annotations = {"volume.beta.kubernetes.io/storage-class": "Class_Wait"}
    pl = plugin(
        [pv("Vol_1", **{BETA_ZONE: "us-west1-a"})],
        [
            pvc("PVC_1", "Vol_1"),
            pvc("PVC_NoSC", cls="Class_0"),
            pvc("PVC_EmptySC"),
            pvc("PVC_WaitSC", cls="Class_Wait"),
            pvc("PVC_ImmediateSC", cls="Class_Immediate"),
            pvc("PVC_DefaultedSC", cls="Class_Defaulted"),
            beta,
        ],
        _classes(),
    )
    pre, got = run(
        pl,
        create_pod_with_volume("pod_1", claim),
        node({BETA_ZONE: "us-west1-a", "uselessLabel": "none"}),
    )
    if want_pre == "skip":
        assert pre == SKIP
    elif want_pre is None:
        assert pre is None
    else:
        assert (
            pre is not None
            and pre.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            and pre.message == want_pre
        )
    if want is None:
        assert got is None
    else:
        assert (
            got is not None
            and got.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            and got.message == want
        )


def test_a_malformed_pv_label_is_ignored() -> None:
    """``LabelZonesToSet`` rejects an empty element: the label is skipped, not matched."""
    pl = plugin([pv("Vol_1", **{ZONE: "us-west1-a__"})], [pvc("PVC_1", "Vol_1")])
    pre, got = run(pl, create_pod_with_volume("pod_1", "PVC_1"), node({ZONE: "elsewhere"}))
    assert pre == SKIP and got is None
    assert vz.label_zones_to_set("a__ b") == frozenset({"a", "b"})


# --- queueing hints ---------------------------------------------------------------------------

_H = "TestIsSchedulableAfterPersistentVolumeClaimAdded/"


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            make_pod("pod_1").obj(),
            None,
            pvc("PVC_1", "Vol_1"),
            QueueingHint.QUEUE_SKIP,
            id=_H + "pvc-was-added-but-pod-refers-no-pvc",
        ),
        pytest.param(
            create_pod_with_volume("pod_1", "PVC_2"),
            None,
            pvc("PVC_1", "Vol_1"),
            QueueingHint.QUEUE_SKIP,
            id=_H + "pvc-was-added-and-pod-was-bound-to-different-pvc",
        ),
        pytest.param(
            create_pod_with_volume("pod_1", "PVC_1"),
            None,
            PersistentVolumeClaim(
                metadata=ObjectMeta(name="PVC_1", namespace="ns1"),
                spec=PersistentVolumeClaimSpec(volume_name="Vol_1"),
            ),
            QueueingHint.QUEUE_SKIP,
            id=_H + "pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns",
        ),
        pytest.param(
            create_pod_with_volume("pod_1", "PVC_1"),
            None,
            pvc("PVC_1", "Vol_1"),
            QueueingHint.QUEUE,
            id=_H + "pvc-was-added-and-pod-was-bound-to-the-pvc",
        ),
        pytest.param(
            create_pod_with_volume("pod_1", "PVC_1"),
            pvc("PVC_1"),
            pvc("PVC_1", "Vol_1"),
            QueueingHint.QUEUE,
            id=_H + "pvc-was-updated-and-pod-was-bound-to-the-pvc",
        ),
        pytest.param(
            make_pod("pod_1").obj(),
            pvc("PVC_1"),
            pvc("PVC_1", "Vol_1"),
            QueueingHint.QUEUE_SKIP,
            id=_H + "pvc-was-updated-but-pod-refers-no-pvc",
        ),
    ],
)
def test_is_schedulable_after_pvc_change(pod: Pod, old: Any, new: Any, want: QueueingHint) -> None:
    assert plugin([], []).is_schedulable_after_pvc_change(pod, old, new) == want


@pytest.mark.parametrize(
    ("hint", "old", "new"),
    [
        pytest.param(
            "is_schedulable_after_pvc_change", None, "not-a-pvc", id=_H + "error-wrong-new-object"
        ),
        pytest.param(
            "is_schedulable_after_storage_class_added",
            None,
            "not-a-storageclass",
            id="TestIsSchedulableAfterStorageClassAdded/error-wrong-new-object",
        ),
        pytest.param(
            "is_schedulable_after_pv_change",
            pv("Vol_1"),
            "not-a-pv",
            id="TestIsSchedulableAfterPersistentVolumeChange/error-wrong-new-object",
        ),
        pytest.param(
            "is_schedulable_after_pv_change",
            "not-a-pv",
            pv("Vol_1"),
            id="TestIsSchedulableAfterPersistentVolumeChange/error-wrong-old-object",
        ),
    ],
)
def test_a_hint_given_the_wrong_object_fails_and_the_queue_queues(
    hint: str, old: Any, new: Any
) -> None:
    """Upstream returns (Queue, err); a kubesched hint raises, which the queue takes as Queue."""
    with pytest.raises(AttributeError):
        getattr(plugin([], []), hint)(create_pod_with_volume("pod_1", "PVC_1"), old, new)


@pytest.mark.parametrize(
    ("mode", "want"),
    [
        pytest.param(
            None,
            QueueingHint.QUEUE_SKIP,
            id="TestIsSchedulableAfterStorageClassAdded/sc-doesn't-have-volume-binding-mode",
        ),
        pytest.param("Immediate", QueueingHint.QUEUE_SKIP, id="an Immediate class"),
        pytest.param(
            "WaitForFirstConsumer",
            QueueingHint.QUEUE,
            id="TestIsSchedulableAfterStorageClassAdded/new-sc-is-wait-for-first-consumer-mode",
        ),
    ],
)
def test_is_schedulable_after_storage_class_added(mode: str | None, want: QueueingHint) -> None:
    sc = StorageClass(metadata=ObjectMeta(name="SC_1"))
    sc.volume_binding_mode = mode
    assert (
        plugin([], []).is_schedulable_after_storage_class_added(
            create_pod_with_volume("pod_1", "PVC_1"), None, sc
        )
        == want
    )


_P = "TestIsSchedulableAfterPersistentVolumeChange/"


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None,
            pv("Vol_1", **{BETA_ZONE: "us-west1-b"}),
            QueueingHint.QUEUE,
            id=_P + "new-pv-was-added",
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-b"}),
            QueueingHint.QUEUE,
            id=_P + "pv-was-updated-and-changed-topology",
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            QueueingHint.QUEUE,
            id=_P + "pv-was-updated-and-added-topology-label",
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            QueueingHint.QUEUE_SKIP,
            id=_P + "pv-was-updated-but-no-topology-is-changed",
        ),
    ],
)
def test_is_schedulable_after_pv_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert (
        plugin([], []).is_schedulable_after_pv_change(
            create_pod_with_volume("pod_1", "PVC_1"), old, new
        )
        == want
    )


@pytest.mark.parametrize("hints", [True, False], ids=["hints on", "hints off"])
def test_events_to_register(hints: bool) -> None:
    pl = vz.new(None, FakeHandle(feature_gates={"SchedulerQueueingHints": hints}))
    got = {
        (e.event.resource, e.event.action): e.hint is not None
        for e in pl.kubesched_events_to_register()
    }
    node_actions = (
        A.ADD | A.UPDATE_NODE_LABEL if hints else A.ADD | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT
    )
    assert got == {
        (R.STORAGE_CLASS, A.ADD): True,
        (R.NODE, node_actions): False,
        (R.PERSISTENT_VOLUME_CLAIM, A.ADD | A.UPDATE): True,
        (R.PERSISTENT_VOLUME, A.ADD | A.UPDATE): True,
    }
