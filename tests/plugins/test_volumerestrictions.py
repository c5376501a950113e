"""VolumeRestrictions (k/k ``plugins/volumerestrictions/volume_restrictions_test.go``:
TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts,
TestAccessModeConflicts, Test_isSchedulableAfterPodDeleted,
Test_isSchedulableAfterPersistentVolumeClaimChange), plus the PreFilterExtensions, the snapshot
batch path and EventsToRegister."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from msgspec.structs import replace

from kubesched import CycleState, NodeBatch
from kubesched.api._objects import (
    AWSElasticBlockStoreVolumeSource,
    GCEPersistentDiskVolumeSource,
    ISCSIVolumeSource,
    ObjectMeta,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource,
    Pod,
    RBDVolumeSource,
    Volume,
)
from kubesched.cache._clusterstate import ClusterState
from kubesched.plugins import volumerestrictions as vr
from kubesched.runtime._events import ActionType as A
from kubesched.runtime._events import QueueingHint
from kubesched.runtime._events import Resource as R
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import Code, Status
from kubesched.testing import FakeHandle, framework_for, make_node, make_node_info, make_pod

DISK = Status(Code.UNSCHEDULABLE, vr.ERR_REASON_DISK_CONFLICT)
RWOP = Status(Code.UNSCHEDULABLE, vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
SKIP = Status(Code.SKIP)

_seq = iter(range(1_000_000))


def pod_with(
    *volumes: Volume,
    name: str = "",
    ns: str = "default",
    node: str = "",
    pvcs: tuple[str, ...] = (),
) -> Pod:
    """``st.MakePod().Volume(...).PVC(...).Node(...)``: a pod with those volumes."""
    b = make_pod(name or f"p{next(_seq)}", ns)
    if node:
        b.node(node)
    p = b.obj()
    p.spec.volumes = [
        *volumes,
        *(
            Volume(name=c, persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=c))
            for c in pvcs
        ),
    ]
    return p


def gce(pd: str, ro: bool = False) -> Volume:
    return Volume(gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name=pd, read_only=ro))


def ebs(vid: str) -> Volume:
    return Volume(aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id=vid))


def rbd(*monitors: str) -> Volume:
    return Volume(
        rbd=RBDVolumeSource(monitors=list(monitors), pool="foo", image="bar", fs_type="ext4")
    )


def iscsi(iqn: str) -> Volume:
    return Volume(
        iscsi=ISCSIVolumeSource(target_portal="127.0.0.1:3260", iqn=iqn, fs_type="ext4", lun=0)
    )


def pvc(name: str, *modes: str, ns: str = "default") -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace=ns),
        spec=PersistentVolumeClaimSpec(access_modes=list(modes)),
    )


def plugin(
    pods: Sequence[Pod] = (),
    nodes: Sequence[Any] = (),
    pvcs: Sequence[PersistentVolumeClaim] = (),
    emulated_version: str | None = None,
) -> Any:
    """``newPluginWithListers``: the plugin over a snapshot of ``nodes`` and bound ``pods``."""
    fw = framework_for(
        {"preFilter": [vr.NAME], "filter": [vr.NAME]}, list(nodes), list(pods), emulated_version=emulated_version
    )
    for c in pvcs:
        fw.handle.cluster.pvcs[(c.metadata.namespace, c.metadata.name)] = c
    return fw.plugin(vr.NAME), fw


def run(pl: Any, fw: Any, pod: Pod, node_info: Any) -> tuple[Status | None, Status | None]:
    """PreFilter over the snapshot, then (when it succeeds) Filter on ``node_info``."""
    state = CycleState()
    pre = pl.kubesched_pre_filter(state, pod, fw.snapshot.node_infos)
    if pre is not None:
        return pre, None
    out = pl.kubesched_filter(state, pod, NodeBatch.of([node_info]))
    return None, (out or {}).get(0)


def _node_info(*pods: Pod) -> Any:
    """``framework.NewNodeInfo(pods...)``."""
    return make_node_info(make_node("node-1").obj(), *pods)


def _disk_cases(test: str, state1: Volume, state2: Volume) -> list[Any]:
    return [
        pytest.param(pod_with(), _node_info(), SKIP, None, id=f"{test}/nothing"),
        pytest.param(pod_with(), _node_info(pod_with(state1)), SKIP, None, id=f"{test}/one state"),
        pytest.param(
            pod_with(state1), _node_info(pod_with(state1)), None, DISK, id=f"{test}/same state"
        ),
        pytest.param(
            pod_with(state2), _node_info(pod_with(state1)), None, None, id=f"{test}/different state"
        ),
    ]


DISK_CASES = [
    *_disk_cases("TestGCEDiskConflicts", gce("foo"), gce("bar")),
    pytest.param(
        pod_with(Volume(name="volume with no restriction")),
        _node_info(),
        SKIP,
        None,
        id="TestGCEDiskConflicts/pod with a volume that doesn't have restrictions",
    ),
    *_disk_cases("TestAWSDiskConflicts", ebs("foo"), ebs("bar")),
    *_disk_cases("TestRBDDiskConflicts", rbd("a", "b"), rbd("c", "d")),
    *_disk_cases(
        "TestISCSIDiskConflicts",
        iscsi("iqn.2016-12.server:storage.target01"),
        iscsi("iqn.2017-12.server:storage.target01"),
    ),
    # kubesched: the read-only rules of isVolumeConflict
    pytest.param(
        pod_with(gce("foo", True)),
        _node_info(pod_with(gce("foo", True))),
        None,
        None,
        id="gce both read-only",
    ),
    pytest.param(
        pod_with(gce("foo", True)),
        _node_info(pod_with(gce("foo"))),
        None,
        DISK,
        id="gce one read-write",
    ),
    pytest.param(
        pod_with(rbd("a")),
        _node_info(pod_with(rbd("b", "a"))),
        None,
        DISK,
        id="rbd one common monitor",
    ),
]


@pytest.mark.parametrize(("pod", "node_info", "want_pre", "want"), DISK_CASES)
def test_disk_conflicts(
    pod: Pod, node_info: Any, want_pre: Status | None, want: Status | None
) -> None:
    pl, fw = plugin()
    pre, got = run(pl, fw, pod, node_info)
    assert pre == want_pre
    assert pre is not None or got == want
    if want is not None:
        assert got is not None and got.reasons == want.reasons


@pytest.mark.parametrize(("pod", "node_info", "want_pre", "want"), DISK_CASES)
def test_disk_conflicts_over_a_snapshot_batch(
    pod: Pod, node_info: Any, want_pre: Status | None, want: Status | None
) -> None:
    """The same cases with the node's pods in the snapshot (the pod-index path) and a second,
    empty node that always passes."""
    pods = [replace(pi.pod, spec=replace(pi.pod.spec, node_name="node-1")) for pi in node_info.pods]
    pl, fw = plugin(pods, [make_node("node-1").obj(), make_node("node-2").obj()])
    state = CycleState()
    if pl.kubesched_pre_filter(state, pod, fw.snapshot.node_infos) is not None:
        return
    batch = NodeBatch(snapshot=fw.snapshot, indices=np.arange(2))
    got = pl.kubesched_filter(state, pod, batch) or {}
    row = fw.snapshot.index["node-1"]
    assert got.get(row) == want
    assert 1 - row not in got


PVC1, PVC2 = "claim-with-rwop-1", "claim-with-rwop-2"
RWOP_CLAIMS = [
    pvc(PVC1, "ReadWriteOncePod"),
    pvc(PVC2, "ReadWriteOncePod"),
    pvc("claim-with-rwx", "ReadWriteMany"),
]


def _access_mode_cases() -> list[Any]:
    one = pod_with(name="pod-with-one-pvc", node="node-1", pvcs=(PVC1,))
    two = pod_with(name="pod-with-two-pvcs", node="node-1", pvcs=(PVC1, PVC2))
    one_conflict = pod_with(name="pod-with-one-conflict", node="node-1", pvcs=(PVC1,))
    two_conflicts = pod_with(name="pod-with-two-conflicts", node="node-1", pvcs=(PVC1, PVC2))
    rwx = pod_with(name="pod-with-rwx", node="node-1", pvcs=("claim-with-rwx",))
    node = make_node("node-1").obj()
    t = "TestAccessModeConflicts/"
    return [
        pytest.param(pod_with(), [], [], [], SKIP, None, id=t + "nothing"),
        pytest.param(
            one,
            [],
            [],
            [],
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                'persistentvolumeclaim "claim-with-rwop-1" not found',
            ),
            None,
            id=t + "failed to get PVC",
        ),
        pytest.param(
            one,
            [rwx],
            [node],
            [RWOP_CLAIMS[0], RWOP_CLAIMS[2]],
            SKIP,
            None,
            id=t + "no access mode conflict",
        ),
        pytest.param(
            one_conflict,
            [one, rwx],
            [node],
            [RWOP_CLAIMS[0], RWOP_CLAIMS[2]],
            None,
            RWOP,
            id=t + "access mode conflict, unschedulable",
        ),
        pytest.param(
            two_conflicts,
            [two, rwx],
            [node],
            RWOP_CLAIMS,
            None,
            RWOP,
            id=t + "two conflicts, unschedulable",
        ),
    ]


@pytest.mark.parametrize(
    ("pod", "existing", "nodes", "claims", "want_pre", "want"), _access_mode_cases()
)
def test_access_mode_conflicts(
    pod: Pod,
    existing: list[Pod],
    nodes: list[Any],
    claims: list[Any],
    want_pre: Status | None,
    want: Status | None,
) -> None:
    pl, fw = plugin(existing, nodes, claims)
    pre, got = run(pl, fw, pod, _node_info(*existing))
    assert pre == want_pre
    if pre is not None:
        assert want_pre is not None and pre.reasons == want_pre.reasons
    else:
        assert got == want
        if want is not None:
            assert got is not None and got.reasons == want.reasons


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        # v1.30.6, v1.31.8 volume_restrictions.go: ErrReasonReadWriteOncePodConflict
        pytest.param("1.30", vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_BEFORE_1_33, id="1.30 (v1.30.6)"),
        pytest.param("1.32", vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_BEFORE_1_33, id="1.32"),
        # kubernetes#129145 as the versions issue dates it (v1.33.3's file still has the old text)
        pytest.param("1.33", vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT, id="1.33 (kubernetes#129145)"),
        # v1.34.7, v1.35.4 volume_restrictions.go
        pytest.param("1.34", vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT, id="1.34 (v1.34.7)"),
        pytest.param("1.36", vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT, id="1.36"),
    ],
)
def test_access_mode_conflict_text_per_version(version: str, reason: str) -> None:
    """TestAccessModeConflicts/"access mode conflict, unschedulable" at each version's tag."""
    holder = pod_with(name="pod-with-one-pvc", node="node-1", pvcs=(PVC1,))
    pl, fw = plugin([holder], [make_node("node-1").obj()], RWOP_CLAIMS, emulated_version=version)
    pre, got = run(pl, fw, pod_with(name="pod-with-one-conflict", pvcs=(PVC1,)), _node_info(holder))
    assert pre is None
    assert got is not None and got.code == Code.UNSCHEDULABLE and got.reasons == (reason,)


def test_read_write_once_pod_prefilter_extensions_follow_preemption() -> None:
    """AddPod / RemovePod (preemption's dry run): removing the pod that holds the claim lifts the
    rejection, adding it back restores it; the state clones independently."""
    holder = pod_with(name="holder", node="node-1", pvcs=(PVC1,))
    pl, fw = plugin([holder], [make_node("node-1").obj()], RWOP_CLAIMS)
    pod = pod_with(name="new", pvcs=(PVC1,))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, fw.snapshot.node_infos) is None
    ni = fw.snapshot.node_infos[0]
    batch = NodeBatch.of([ni])
    assert pl.kubesched_filter(state, pod, batch) == {0: RWOP}
    dry = state.clone()
    assert pl.kubesched_pre_filter_remove_pod(dry, pod, PodInfo(holder), ni) is None
    assert pl.kubesched_filter(dry, pod, batch) is None
    assert pl.kubesched_filter(state, pod, batch) == {0: RWOP}  # the original is untouched
    assert pl.kubesched_pre_filter_add_pod(dry, pod, PodInfo(holder), ni) is None
    assert pl.kubesched_filter(dry, pod, batch) == {0: RWOP}


def test_filter_and_extensions_without_prefilter_state_are_errors() -> None:
    pl, _ = plugin()
    pod = pod_with(gce("foo"))
    ni = _node_info()
    err = f'cannot read "{vr.PRE_FILTER_STATE_KEY}" from cycleState'
    got = pl.kubesched_filter(CycleState(), pod, NodeBatch.of([ni]))
    assert got is not None and got[0].code == Code.ERROR and got[0].message == err
    # a disk conflict is reported before the missing state, as upstream's Filter checks it first
    got = pl.kubesched_filter(CycleState(), pod, NodeBatch.of([_node_info(pod_with(gce("foo")))]))
    assert got == {0: DISK}
    st = pl.kubesched_pre_filter_add_pod(CycleState(), pod, PodInfo(pod), ni)
    assert st is not None and st.code == Code.ERROR and st.message == err


def test_a_pod_without_volumes_costs_nothing() -> None:
    """PreFilter skips a pod without volumes without looking at any node or claim."""
    pl = vr.new(None, FakeHandle())
    assert pl.kubesched_pre_filter(CycleState(), pod_with(), None) == SKIP


# --- queueing hints ---------------------------------------------------------------------------


def _pod_deleted_cases() -> list[Any]:
    t = "Test_isSchedulableAfterPodDeleted/"
    pairs = [
        ("gcedisk", gce("foo"), gce("bar")),
        ("awsdisk", ebs("foo"), ebs("bar")),
        ("rbddisk", rbd("a", "b"), rbd("c", "d")),
        (
            "iscsidisk",
            iscsi("iqn.2016-12.server:storage.target01"),
            iscsi("iqn.2017-12.server:storage.target01"),
        ),
    ]
    out = []
    for kind, v1, v2 in pairs:
        out.append(
            pytest.param(
                pod_with(v1),
                pod_with(v1),
                QueueingHint.QUEUE,
                id=f"{t}queue-new-object-{kind}-conflict",
            )
        )
        out.append(
            pytest.param(
                pod_with(v1),
                pod_with(v2),
                QueueingHint.QUEUE_SKIP,
                id=f"{t}skip-new-object-{kind}-no-conflict",
            )
        )
    out += [
        pytest.param(
            pod_with(name="pod1", pvcs=("claim-rwop",)),
            pod_with(name="pod2", pvcs=("claim-rwop",)),
            QueueingHint.QUEUE,
            id=t + "queue-has-same-claim",
        ),
        pytest.param(
            pod_with(name="pod1", pvcs=("claim-1-rwop",)),
            pod_with(name="pod2", pvcs=("claim-2-rwop",)),
            QueueingHint.QUEUE_SKIP,
            id=t + "skip-no-same-claim",
        ),
        # kubesched: a pod of another namespace never makes this one schedulable
        pytest.param(
            pod_with(gce("foo")),
            pod_with(gce("foo"), ns="other"),
            QueueingHint.QUEUE_SKIP,
            id="other namespace",
        ),
    ]
    return out


@pytest.mark.parametrize(("pod", "deleted", "want"), _pod_deleted_cases())
def test_is_schedulable_after_pod_deleted(pod: Pod, deleted: Pod, want: QueueingHint) -> None:
    pl, _ = plugin()
    assert pl.is_schedulable_after_pod_deleted(pod, deleted, None) == want


def _pvc_added_cases() -> list[Any]:
    t = "Test_isSchedulableAfterPersistentVolumeClaimChange/"
    one = pod_with(name="pod-with-one-pvc", node="node-1", pvcs=("claim-with-rwx-1",))
    two = pod_with(
        name="pod-with-two-pvcs", node="node-1", pvcs=("claim-with-rwx-1", "claim-with-rwx-2")
    )
    other_ns = pod_with(
        name="pod-with-one-pvc",
        ns="kube-system",
        node="claim-with-rwx-2",
        pvcs=("claim-with-rwx-1",),
    )
    c1, c2 = pvc("claim-with-rwx-1", "ReadWriteMany"), pvc("claim-with-rwx-2", "ReadWriteMany")
    return [
        pytest.param(two, c1, QueueingHint.QUEUE, id=t + "queue-new-object-pvc-belong-pod"),
        pytest.param(one, c2, QueueingHint.QUEUE_SKIP, id=t + "skip-new-object-unused"),
        pytest.param(one, c2, QueueingHint.QUEUE_SKIP, id=t + "skip-nil-old-object"),
        pytest.param(one, c2, QueueingHint.QUEUE_SKIP, id=t + "skip-new-object-not-belong-pod"),
        pytest.param(
            other_ns, c1, QueueingHint.QUEUE_SKIP, id=t + "skip-new-object-namespace-not-equal-pod"
        ),
    ]


@pytest.mark.parametrize(("pod", "added", "want"), _pvc_added_cases())
def test_is_schedulable_after_pvc_added(
    pod: Pod, added: PersistentVolumeClaim, want: QueueingHint
) -> None:
    pl, _ = plugin()
    assert pl.is_schedulable_after_pvc_added(pod, None, added) == want


@pytest.mark.parametrize("hints", [True, False], ids=["hints on", "hints off"])
def test_events_to_register(hints: bool) -> None:
    pl = vr.new(None, FakeHandle(feature_gates={"SchedulerQueueingHints": hints}))
    got = {
        (e.event.resource, e.event.action): e.hint is not None
        for e in pl.kubesched_events_to_register()
    }
    node = A.ADD if hints else A.ADD | A.UPDATE_NODE_TAINT | A.UPDATE_NODE_LABEL
    assert got == {
        (R.POD, A.DELETE): True,
        (R.NODE, node): False,
        (R.PERSISTENT_VOLUME_CLAIM, A.ADD): True,
    }


def test_used_claims_outside_the_snapshot_read_the_given_nodes() -> None:
    """PreFilter given node infos that are not the snapshot's counts their pods' claims."""
    cluster = ClusterState()
    cluster.pvcs[("default", PVC1)] = RWOP_CLAIMS[0]
    pl = vr.new(None, FakeHandle(cluster=cluster))
    state = CycleState()
    holder = pod_with(name="holder", node="node-1", pvcs=(PVC1,))
    assert pl.kubesched_pre_filter(state, pod_with(pvcs=(PVC1,)), [_node_info(holder)]) is None
    assert state.read(vr.PRE_FILTER_STATE_KEY).conflicting == 1
    assert pl.kubesched_pre_filter(CycleState(), pod_with(pvcs=(PVC1,)), [_node_info()]) == SKIP


def test_claims_in_use_follow_the_snapshot_row_by_row() -> None:
    """The counts of claims in use track pods bound to and removed from the snapshot's rows."""
    from kubesched.cache._cache import Cache, Snapshot

    cluster = ClusterState()
    cluster.pvcs[("default", PVC1)] = RWOP_CLAIMS[0]
    cache, snap = Cache(), Snapshot()
    for n in ("node-1", "node-2"):
        cache.add_node(make_node(n).obj())
    snap.update(cache)
    pl = vr.new(None, FakeHandle(cluster=cluster, snapshot=snap))
    pod = pod_with(name="new", pvcs=(PVC1,))

    def conflicting() -> int:
        state = CycleState()
        if pl.kubesched_pre_filter(state, pod, snap.node_infos) is not None:
            return 0
        return int(state.read(vr.PRE_FILTER_STATE_KEY).conflicting)

    assert conflicting() == 0
    holder = pod_with(name="holder", node="node-2", pvcs=(PVC1,))
    cache.add_pod(holder)
    snap.update(cache)
    assert conflicting() == 1
    cache.remove_pod(holder.metadata.uid)
    snap.update(cache)
    assert conflicting() == 0
    cache.add_pod(replace(holder, spec=replace(holder.spec, node_name="node-1")))
    snap.update(cache)
    assert conflicting() == 1
