"""VolumeBinding, the plugin (k/k ``plugins/volumebinding/volume_binding_test.go``: TestVolumeBinding,
Test_PreBindPreFlight; and the plugin in a Framework: Skip, Reserve/Unreserve, PreBind's wait).
Hints, events and args are in ``test_volumebinding_hints.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from volumebinding_fixtures import (
    FakeHandle,
    add,
    capacity,
    csi_driver,
    fake_handle,
    make_pod,
    make_pv,
    make_pvc,
    node,
    node_labels,
    replace,
    storage_class,
)

from kubesched import CycleState, NodeBatch
from kubesched.api._objects import OwnerReference
from kubesched.framework import PreBindPreFlightResult
from kubesched.plugins import volumebinding
from kubesched.plugins.volumebinding import plugin as vbplugin
from kubesched.plugins.volumebinding.binder import PodVolumes
from kubesched.runtime._status import Code, Status
from kubesched.testing import framework_for, make_node_info

U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
GATE = "StorageCapacityScoring"
BIND = volumebinding.ERR_REASON_BIND_CONFLICT
NODE_CONFLICT = volumebinding.ERR_REASON_NODE_CONFLICT
PV_NOT_EXIST = volumebinding.ERR_REASON_PV_NOT_EXIST

IMMEDIATE_SC = storage_class("immediate-sc", mode="Immediate")
WAIT_SC = storage_class("wait-sc")
WAIT_HDD_SC = storage_class("wait-hdd-sc")
WAIT_SC_CAP = storage_class(
    "wait-sc-with-storage-capacity", provisioner="driver-with-storage-capacity"
)
DRIVER_CAP = csi_driver("driver-with-storage-capacity", True)


def pv_(name: str, sc: str, cap: str | None = None, **affinity: list[str]) -> Any:
    b = make_pv(name, sc).phase("Available")
    if cap:
        b.capacity(cap)
    if affinity:
        b.node_affinity({k.replace("__", "/").replace("_", "."): v for k, v in affinity.items()})
    return b.obj()


def local_pv(name: str, sc: str, cap: str, host: str) -> Any:
    return make_pv(name, sc).phase("Available").capacity(cap).node_affinity({HOST: [host]}).obj()


def zonal_pv(name: str, sc: str, cap: str, region: str, zone: str) -> Any:
    return (
        make_pv(name, sc)
        .phase("Available")
        .capacity(cap)
        .node_affinity({REGION: [region], ZONE: [zone]})
        .obj()
    )


def zone_nodes() -> list[Any]:
    return [
        node_labels(f"zone-{z}-node-{n}", {REGION: f"region-{z}", ZONE: f"zone-{z}"})
        for z in "abc"
        for n in "ab"
    ]


def cap_nodes() -> list[Any]:
    return [node(f"node-{n}", nodeKey=f"node-{n}") for n in "abc"]


def caps(*sizes: str) -> list[Any]:
    return [
        capacity(f"node-{n}", WAIT_SC_CAP.metadata.name, node(f"node-{n}", nodeKey=f"node-{n}"), s)
        for n, s in zip("abc", sizes, strict=False)
    ]


@dataclass
class Case:
    pod: Any
    nodes: list[Any]
    pvcs: list[Any] = field(default_factory=list)
    pvs: list[Any] = field(default_factory=list)
    capacities: list[Any] = field(default_factory=list)
    gate: bool = False
    shape: list[dict[str, int]] | None = None
    pre_filter: Status | None = None
    # the claims PreFilter keeps: bound, delayed, and the PVs per class (names)
    state: tuple[list[str], list[str], dict[str, list[str]]] | None = None
    filter: list[Status | None] = field(default_factory=list)
    pre_score: Status | None = None
    scores: list[int] = field(default_factory=list)


PVC_50_WAIT = make_pvc("pvc-a", "wait-sc").request("50Gi").obj()
LOCAL_PVS = [
    local_pv("pv-a-0", "wait-sc", "200Gi", "node-a"),
    local_pv("pv-a-1", "wait-sc", "200Gi", "node-a"),
    local_pv("pv-b-0", "wait-sc", "100Gi", "node-b"),
    local_pv("pv-b-1", "wait-sc", "100Gi", "node-b"),
]
ZONAL_PVS = [
    zonal_pv("pv-a-0", "wait-sc", "200Gi", "region-a", "zone-a"),
    zonal_pv("pv-a-1", "wait-sc", "200Gi", "region-a", "zone-a"),
    zonal_pv("pv-b-0", "wait-sc", "100Gi", "region-b", "zone-b"),
    zonal_pv("pv-b-1", "wait-sc", "100Gi", "region-b", "zone-b"),
]
NODES_ABC = [node("node-a"), node("node-b"), node("node-c")]
NOT_FOUND_STATUS = Status(U, BIND)
SKIP = Status.skip()

CASES = [
    pytest.param(
        Case(make_pod("pod-a").obj(), [node("node-a")], pre_filter=SKIP, pre_score=SKIP),
        id="TestVolumeBinding/pod has not pvcs",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            [node("node-a")],
            pvcs=[make_pvc("pvc-a", "wait-sc").bound_pv("pv-a").obj()],
            pvs=[pv_("pv-a", "wait-sc")],
            state=(["pvc-a"], [], {}),
            filter=[None],
            pre_score=SKIP,
        ),
        id="TestVolumeBinding/all bound",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            [node("node-a")],
            pre_filter=Status(U, 'persistentvolumeclaim "pvc-a" not found'),
        ),
        id="TestVolumeBinding/PVC does not exist",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").pvc_volume("pvc-b").obj(),
            [node("node-a")],
            pvcs=[make_pvc("pvc-a", "wait-sc").bound_pv("pv-a").obj()],
            pre_filter=Status(U, 'persistentvolumeclaim "pvc-b" not found'),
        ),
        id="TestVolumeBinding/Part of PVCs do not exist",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            [node("node-a")],
            pvcs=[make_pvc("pvc-a", "immediate-sc").obj()],
            pre_filter=Status(U, "pod has unbound immediate PersistentVolumeClaims"),
        ),
        id="TestVolumeBinding/immediate claims not bound",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            [node("node-a")],
            pvcs=[make_pvc("pvc-a", "wait-sc").obj()],
            state=([], ["pvc-a"], {"wait-sc": []}),
            filter=[Status(U, BIND)],
            pre_score=SKIP,
        ),
        id="TestVolumeBinding/unbound claims no matches",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").pvc_volume("pvc-b").obj(),
            [node("node-a", foo="barbar")],
            pvcs=[
                make_pvc("pvc-a", "wait-sc").bound_pv("pv-a").obj(),
                make_pvc("pvc-b", "wait-sc").obj(),
            ],
            pvs=[
                make_pv("pv-a", "wait-sc").phase("Available").node_affinity({"foo": ["bar"]}).obj()
            ],
            state=(["pvc-a"], ["pvc-b"], {"wait-sc": ["pv-a"]}),
            filter=[Status(U, NODE_CONFLICT, BIND)],
            pre_score=SKIP,
        ),
        id="TestVolumeBinding/bound and unbound unsatisfied",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            [node("node-a")],
            pre_filter=Status(U, 'persistentvolumeclaim "pvc-a" not found'),
        ),
        id="TestVolumeBinding/pvc not found",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            [node("node-a")],
            pvcs=[make_pvc("pvc-a", "wait-sc").bound_pv("pv-a").obj()],
            state=(["pvc-a"], [], {}),
            filter=[Status(U, PV_NOT_EXIST)],
            pre_score=SKIP,
        ),
        id="TestVolumeBinding/pv not found",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            [node("node-a")],
            pvcs=[make_pvc("pvc-a", "wait-sc").bound_pv("pv-a").phase("Lost").obj()],
            pre_filter=Status(
                U, 'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'
            ),
        ),
        id="TestVolumeBinding/pv not found claim lost",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            NODES_ABC,
            pvcs=[PVC_50_WAIT],
            pvs=LOCAL_PVS,
            gate=True,
            state=([], ["pvc-a"], {"wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]}),
            filter=[None, None, NOT_FOUND_STATUS],
            scores=[75, 50, 0],
        ),
        id="TestVolumeBinding/local volumes with close capacity are preferred",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            NODES_ABC,
            pvcs=[PVC_50_WAIT],
            pvs=LOCAL_PVS,
            state=([], ["pvc-a"], {"wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]}),
            filter=[None, None, NOT_FOUND_STATUS],
            pre_score=SKIP,
        ),
        id="TestVolumeBinding/local volumes with close capacity are preferred (StorageCapacityScoring disabled)",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-0").pvc_volume("pvc-1").obj(),
            NODES_ABC,
            pvcs=[
                make_pvc("pvc-0", "wait-sc").request("50Gi").obj(),
                make_pvc("pvc-1", "wait-hdd-sc").request("100Gi").obj(),
            ],
            pvs=[
                local_pv("pv-a-0", "wait-sc", "200Gi", "node-a"),
                local_pv("pv-a-1", "wait-sc", "200Gi", "node-a"),
                local_pv("pv-a-2", "wait-hdd-sc", "200Gi", "node-a"),
                local_pv("pv-a-3", "wait-hdd-sc", "200Gi", "node-a"),
                local_pv("pv-b-0", "wait-sc", "100Gi", "node-b"),
                local_pv("pv-b-1", "wait-sc", "100Gi", "node-b"),
                local_pv("pv-b-2", "wait-hdd-sc", "100Gi", "node-b"),
                local_pv("pv-b-3", "wait-hdd-sc", "100Gi", "node-b"),
            ],
            gate=True,
            state=(
                [],
                ["pvc-0", "pvc-1"],
                {
                    "wait-hdd-sc": ["pv-a-2", "pv-a-3", "pv-b-2", "pv-b-3"],
                    "wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"],
                },
            ),
            filter=[None, None, NOT_FOUND_STATUS],
            scores=[63, 25, 0],
        ),
        id="TestVolumeBinding/local volumes with close capacity are preferred (multiple pvcs)",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            zone_nodes(),
            pvcs=[PVC_50_WAIT],
            pvs=ZONAL_PVS,
            gate=True,
            state=([], ["pvc-a"], {"wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]}),
            filter=[None, None, None, None, NOT_FOUND_STATUS, NOT_FOUND_STATUS],
            scores=[75, 75, 50, 50, 0, 0],
        ),
        id="TestVolumeBinding/zonal volumes with close capacity are preferred",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            zone_nodes(),
            pvcs=[PVC_50_WAIT],
            pvs=ZONAL_PVS,
            state=([], ["pvc-a"], {"wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]}),
            filter=[None, None, None, None, NOT_FOUND_STATUS, NOT_FOUND_STATUS],
            pre_score=SKIP,
        ),
        id="TestVolumeBinding/zonal volumes with close capacity are preferred (StorageCapacityScoring disabled)",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-a").obj(),
            zone_nodes(),
            pvcs=[PVC_50_WAIT],
            pvs=ZONAL_PVS,
            gate=True,
            shape=[
                {"utilization": 0, "score": 0},
                {"utilization": 50, "score": 3},
                {"utilization": 100, "score": 5},
            ],
            state=([], ["pvc-a"], {"wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]}),
            filter=[None, None, None, None, NOT_FOUND_STATUS, NOT_FOUND_STATUS],
            scores=[15, 15, 30, 30, 0, 0],
        ),
        id="TestVolumeBinding/zonal volumes with close capacity are preferred (custom shape)",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-dynamic").obj(),
            cap_nodes(),
            pvcs=[make_pvc("pvc-dynamic", WAIT_SC_CAP.metadata.name).request("10Gi").obj()],
            capacities=caps("100Gi", "50Gi", "10Gi"),
            gate=True,
            state=([], ["pvc-dynamic"], {WAIT_SC_CAP.metadata.name: []}),
            filter=[None, None, None],
            scores=[90, 80, 0],
        ),
        id="TestVolumeBinding/storage capacity score",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-dynamic").pvc_volume("pvc-static").obj(),
            cap_nodes(),
            pvcs=[
                make_pvc("pvc-dynamic", WAIT_SC_CAP.metadata.name).request("10Gi").obj(),
                make_pvc("pvc-static", "wait-sc").request("50Gi").obj(),
            ],
            pvs=[local_pv(f"pv-static-{n}", "wait-sc", "100Gi", f"node-{n}") for n in "abc"],
            capacities=caps("100Gi", "50Gi", "10Gi"),
            gate=True,
            state=(
                [],
                ["pvc-dynamic", "pvc-static"],
                {
                    "wait-sc": ["pv-static-a", "pv-static-b", "pv-static-c"],
                    WAIT_SC_CAP.metadata.name: [],
                },
            ),
            filter=[None, None, None],
            scores=[50, 50, 50],
        ),
        id="TestVolumeBinding/storage capacity score with static binds",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-dynamic-0").pvc_volume("pvc-dynamic-1").obj(),
            [node("node-a", nodeKey="node-a")],
            pvcs=[
                make_pvc("pvc-dynamic-0", WAIT_SC_CAP.metadata.name).request("50Gi").obj(),
                make_pvc("pvc-dynamic-1", WAIT_SC_CAP.metadata.name).request("50Gi").obj(),
            ],
            capacities=caps("100Gi"),
            gate=True,
            state=([], ["pvc-dynamic-0", "pvc-dynamic-1"], {WAIT_SC_CAP.metadata.name: []}),
            filter=[None],
            scores=[0],
        ),
        id="TestVolumeBinding/dynamic provisioning with multiple PVCs of the same StorageClass",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-dynamic").obj(),
            cap_nodes(),
            pvcs=[make_pvc("pvc-dynamic", WAIT_SC_CAP.metadata.name).request("10Gi").obj()],
            capacities=caps("100Gi", "20Gi", "10Gi"),
            gate=True,
            shape=[{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
            state=([], ["pvc-dynamic"], {WAIT_SC_CAP.metadata.name: []}),
            filter=[None, None, None],
            scores=[10, 50, 100],
        ),
        id="TestVolumeBinding/prefer node with least allocatable",
    ),
    pytest.param(
        Case(
            make_pod("pod-a").pvc_volume("pvc-dynamic").obj(),
            cap_nodes(),
            pvcs=[make_pvc("pvc-dynamic", WAIT_SC_CAP.metadata.name).request("10Gi").obj()],
            capacities=caps("100Gi", "20Gi", "10Gi"),
            gate=True,
            shape=[{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
            state=([], ["pvc-dynamic"], {WAIT_SC_CAP.metadata.name: []}),
            filter=[None, None, None],
            scores=[90, 50, 0],
        ),
        id="TestVolumeBinding/prefer node with maximum allocatable",
    ),
]


def setup(case: Case) -> tuple[Any, FakeHandle]:
    handle = fake_handle({GATE: case.gate})
    add(handle, IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC, WAIT_SC_CAP, DRIVER_CAP)
    add(handle, *case.nodes, *case.pvcs, *case.pvs, *case.capacities)
    args: dict[str, Any] = {"bindTimeoutSeconds": 300}
    if case.shape is not None:
        args["shape"] = case.shape
    return volumebinding.new(args, handle), handle


@pytest.mark.parametrize("case", CASES)
def test_volume_binding(case: Case) -> None:
    pl, _ = setup(case)
    state = CycleState()
    infos = [make_node_info(n) for n in case.nodes]
    assert pl.kubesched_pre_filter(state, case.pod, infos) == case.pre_filter
    if case.pre_filter is not None and not case.pre_filter.is_skip():
        return  # the framework skips Filter after a PreFilter rejection
    if case.state is not None:
        s = state.read(volumebinding.STATE_KEY)
        claims = s.pod_volume_claims
        assert [p.metadata.name for p in claims.bound_claims] == case.state[0]
        assert [p.metadata.name for p in claims.unbound_claims_delay_binding] == case.state[1]
        assert claims.unbound_claims_immediate == []
        got = {
            k: sorted(pv.metadata.name for pv in v)
            for k, v in claims.unbound_volumes_delay_binding.items()
        }
        assert got == case.state[2]
        assert s.pod_volumes_by_node == {}
    batch = NodeBatch.of(infos)
    if case.pre_filter is None:
        out = pl.kubesched_filter(state, case.pod, batch) or {}
        assert [out.get(i) for i in range(len(infos))] == case.filter
    pre_score = pl.kubesched_pre_score(state, case.pod, batch)
    assert pre_score == case.pre_score
    if pre_score is not None:
        return
    assert pl.kubesched_score(state, case.pod, batch).tolist() == case.scores


# --- PreBindPreFlight (Test_PreBindPreFlight) ---------------------------------------------------


@pytest.mark.parametrize(
    ("data", "want"),
    [
        pytest.param("all-bound", Status.skip(), id="Test_PreBindPreFlight/all bound"),
        pytest.param({"node-a": PodVolumes()}, None, id="Test_PreBindPreFlight/volume to be bound"),
        pytest.param(
            None, Status(Code.ERROR, "not found"), id="Test_PreBindPreFlight/error: state is nil"
        ),
        pytest.param(
            {"node-b": PodVolumes()},
            Status(Code.ERROR, 'no pod volume found for node "node-a"'),
            id="Test_PreBindPreFlight/error: node is not found in podVolumesByNode",
        ),
    ],
)
def test_pre_bind_pre_flight(data: Any, want: Status | None) -> None:
    pl = volumebinding.new(None, fake_handle())
    state = CycleState()
    if data == "all-bound":
        s = vbplugin.StateData()
        s.all_bound = True
        state.write(volumebinding.STATE_KEY, s)
    elif data is not None:
        state.write(volumebinding.STATE_KEY, vbplugin.StateData(pod_volumes_by_node=data))
    # v1.36 (kubernetes#135393): VolumeBinding's PreBind may run in parallel with the others
    assert pl.pre_bind_pre_flight(state, make_pod("p").obj(), "node-a") == (PreBindPreFlightResult(True), want)


# --- in a Framework -----------------------------------------------------------------------------


def _framework(objs: list[Any], nodes: list[Any], pods: list[Any] = (), **kw: Any) -> Any:  # type: ignore[assignment]
    handle = add(fake_handle(nodes=nodes, pods=list(pods)), WAIT_SC, IMMEDIATE_SC, *objs)
    fw = framework_for(
        {
            "preFilter": ["VolumeBinding"],
            "filter": ["VolumeBinding"],
            "preScore": ["VolumeBinding"],
            "score": ["VolumeBinding"],
            "reserve": ["VolumeBinding"],
            "preBind": ["VolumeBinding"],
        },
        plugin_args={"VolumeBinding": kw or None},
        handle=handle,
    )
    return fw, handle


def _run_cycle(fw: Any, pod: Any) -> tuple[CycleState, Any, Any]:
    state = CycleState()
    infos = list(fw.snapshot.node_infos)
    _, st, _ = fw.run_pre_filter_plugins(state, pod, infos)
    rejected = (
        fw.run_filter_plugins(state, pod, NodeBatch.of(infos))
        if st is None or st.is_skip()
        else None
    )
    return state, st, rejected


def test_pod_without_volumes_costs_nothing() -> None:
    """PreFilter Skip: Filter never runs; Reserve marks everything bound; PreBind does nothing."""
    fw, handle = _framework([], [node("n1")])
    pod = make_pod("p").obj()
    state = CycleState()
    _, st, _ = fw.run_pre_filter_plugins(state, pod, list(fw.snapshot.node_infos))
    assert st is None
    assert "VolumeBinding" in state.skip_filter_plugins
    assert fw.filter_plugin_names(state) == []
    assert fw.run_reserve_plugins_reserve(state, pod, "n1") is None
    assert state.read(volumebinding.STATE_KEY).all_bound
    assert handle.client.updated == []


@pytest.mark.parametrize("volumes", ["none", "emptyDir"])
def test_a_pod_whose_pre_filter_skipped_gets_the_shared_pre_flight_skip(volumes: str) -> None:
    """``pre_flight_skips_pre_filter_skipped``: PreFilter Skip, then Reserve, then the pre-flight
    answers the shared Skip (RunPreBindPreFlights takes it without a call when every pre-flight
    plugin says so); a pod with a claim is not skipped at PreFilter."""
    from kubesched.plugins._helper import PRE_FLIGHT_SKIP

    fw, _ = _framework([], [node("n1")])
    b = make_pod("p")
    pod = (b.empty_dir() if volumes == "emptyDir" else b).obj()
    state = CycleState()
    fw.run_pre_filter_plugins(state, pod, list(fw.snapshot.node_infos))
    assert "VolumeBinding" in state.skip_filter_plugins
    assert fw.run_reserve_plugins_reserve(state, pod, "n1") is None
    pl = fw.plugins["VolumeBinding"]
    assert pl.pre_flight_skips_pre_filter_skipped is True
    assert pl.pre_bind_pre_flight(state, pod, "n1") is PRE_FLIGHT_SKIP
    assert fw.binding.plain_pre_flights == ("VolumeBinding",)
    fw, _ = _framework([make_pvc("data", "wait-sc").obj()], [node("n1")])
    state = CycleState()
    fw.run_pre_filter_plugins(state, make_pod("q").pvc_volume("data").obj(), list(fw.snapshot.node_infos))
    assert "VolumeBinding" not in state.skip_filter_plugins


def test_without_reserve_the_pre_flight_is_called() -> None:
    """The Skip needs VolumeBinding's Reserve (it marks the pod all bound): without it in the
    profile, every pre-flight runs."""
    fw = framework_for({"preFilter": ["VolumeBinding"], "preBind": ["VolumeBinding"]}, handle=fake_handle(nodes=[node("n1")]))
    assert fw.binding.plain_pre_flights == ()


def _bound_by_pv_controller(handle: FakeHandle, pvc_name: str, pv_name: str) -> None:
    """What the PV controller does to a claim it binds: volumeName and bind-completed."""
    key = ("default", pvc_name)
    pvc = handle.client.pvcs[key]
    meta = replace(
        pvc.metadata,
        annotations={**pvc.metadata.annotations, "pv.kubernetes.io/bind-completed": "yes"},
        resource_version=str(int(pvc.metadata.resource_version or "0") + 1),
    )
    handle.client.add_pvc(replace(pvc, metadata=meta, spec=replace(pvc.spec, volume_name=pv_name)))


@pytest.mark.anyio
async def test_reserve_then_pre_bind_static_binding() -> None:
    """Reserve assumes the PV (the next pod finds it taken); PreBind PUTs its claimRef with the
    bound-by-controller annotation and waits until the PV controller has bound the claim."""
    pvc_a = make_pvc("pvc-a", "wait-sc").request("1Gi").uid("uid-a").obj()
    pvc_b = make_pvc("pvc-b", "wait-sc").request("1Gi").uid("uid-b").obj()
    pv = local_pv("pv-1", "wait-sc", "5Gi", "n1")
    n1 = node_labels("n1", {HOST: "n1"})
    pod_a = make_pod("pod-a").uid("uid-pod-a").pvc_volume("pvc-a", "data").node_name("n1").obj()
    pod_b = make_pod("pod-b").pvc_volume("pvc-b", "data").obj()
    fw, handle = _framework([pvc_a, pvc_b, pv], [n1], [pod_a])
    state, st, rejected = _run_cycle(fw, pod_a)
    assert st is None and not rejected
    assert fw.run_reserve_plugins_reserve(state, pod_a, "n1") is None
    assumed = handle.cluster.pvs["pv-1"]  # the informer still has the unbound PV ...
    assert assumed.spec.claim_ref is None
    # ... but the next pod sees it taken
    _, st_b, rejected_b = _run_cycle(fw, pod_b)
    assert st_b is None
    assert rejected_b == {0: Status(U, BIND)}

    async with anyio.create_task_group() as tg:
        result: list[Any] = []

        async def pre_bind() -> None:
            result.append(await fw.run_pre_bind_plugins(state, pod_a, "n1"))

        start = anyio.current_time()
        tg.start_soon(pre_bind)
        await anyio.sleep(3.5)
        assert result == []
        _bound_by_pv_controller(handle, "pvc-a", "pv-1")
    assert result == [None]
    assert anyio.current_time() - start == pytest.approx(4)
    written = handle.client.pvs["pv-1"]
    assert written.spec.claim_ref is not None and written.spec.claim_ref.name == "pvc-a"
    assert written.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert handle.client.updated == [("PersistentVolume", "pv-1")]


@pytest.mark.anyio
async def test_pre_bind_provisioning_times_out() -> None:
    """Dynamic provisioning: the claim gets volume.kubernetes.io/selected-node; nobody binds it,
    so PreBind fails after bindTimeoutSeconds (an Error, wrapped by the framework)."""
    sc = storage_class("fast", provisioner="csi.example.com")
    pvc = make_pvc("pvc-a", "fast").request("1Gi").obj()
    n1 = node("n1")
    pod = make_pod("pod-a").uid("uid-pod-a").pvc_volume("pvc-a", "data").node_name("n1").obj()
    fw, handle = _framework([sc, pvc], [n1], [pod], bindTimeoutSeconds=30)
    state, st, rejected = _run_cycle(fw, pod)
    assert st is None and not rejected
    assert fw.run_reserve_plugins_reserve(state, pod, "n1") is None
    start = anyio.current_time()
    out = await fw.run_pre_bind_plugins(state, pod, "n1")
    assert anyio.current_time() - start == pytest.approx(30)
    assert out == Status(
        Code.ERROR,
        'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded',
    )
    assert handle.client.pvcs[("default", "pvc-a")].metadata.annotations == {
        "volume.kubernetes.io/selected-node": "n1"
    }
    await fw.run_reserve_plugins_unreserve(state, pod, "n1")


@pytest.mark.anyio
async def test_unreserve_reverts_the_assumed_volumes() -> None:
    pvc_a = make_pvc("pvc-a", "wait-sc").request("1Gi").obj()
    pv = local_pv("pv-1", "wait-sc", "5Gi", "n1")
    n1 = node_labels("n1", {HOST: "n1"})
    pod = make_pod("pod-a").pvc_volume("pvc-a").node_name("n1").obj()
    fw, _ = _framework([pvc_a, pv], [n1], [pod])
    state, _, _ = _run_cycle(fw, pod)
    pl = fw.plugin("VolumeBinding")
    assert fw.run_reserve_plugins_reserve(state, pod, "n1") is None
    assert pl.binder.pv_cache.get("pv-1").spec.claim_ref is not None
    await fw.run_reserve_plugins_unreserve(state, pod, "n1")
    assert pl.binder.pv_cache.get("pv-1").spec.claim_ref is None


def test_ephemeral_claim_not_owned_by_the_pod() -> None:
    pvc = make_pvc("pod-a-scratch", "wait-sc").obj()
    pvc = replace(
        pvc,
        metadata=replace(
            pvc.metadata, owner_references=[OwnerReference(uid="other", controller=True)]
        ),
    )
    pod = make_pod("pod-a").ephemeral("scratch").obj()
    pl, _ = setup(Case(pod, [node("n")], pvcs=[pvc]))
    st = pl.kubesched_pre_filter(CycleState(), pod, [])
    assert st == Status(
        U, "PVC default/pod-a-scratch was not created for pod default/pod-a (pod is not owner)"
    )
    missing = make_pod("pod-b").ephemeral("scratch").obj()
    assert pl.kubesched_pre_filter(CycleState(), missing, []) == Status(
        U,
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "pod-b-scratch"',
    )


def test_claim_being_deleted() -> None:
    pvc = make_pvc("pvc-a", "wait-sc").obj()
    pvc = replace(pvc, metadata=replace(pvc.metadata, deletion_timestamp="2024-01-01T00:00:00Z"))
    pod = make_pod("pod-a").pvc_volume("pvc-a").obj()
    pl, _ = setup(Case(pod, [node("n")], pvcs=[pvc]))
    assert pl.kubesched_pre_filter(CycleState(), pod, []) == Status(
        U, 'persistentvolumeclaim "pvc-a" is being deleted'
    )
