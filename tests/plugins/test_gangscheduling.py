"""GangScheduling (issue 36 step 2): upstream's gangscheduling_test.go cases, per version — the
v1.35 tests over ``workloadRef`` and v1alpha1 Workloads, the v1.36 ones over ``schedulingGroup``
and v1alpha2 PodGroups — plus PlacementFeasible's three answers and the bar's scenarios."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kubesched.api import (
    GangSchedulingPolicy,
    PodGroupPolicy,
    PodSchedulingGroup,
    SchedulingPodGroup,
    SchedulingPodGroupSpec,
    Workload,
    WorkloadPodGroup,
    WorkloadReference,
    WorkloadSpec,
)
from kubesched.api._objects import ObjectMeta, Pod
from kubesched.api._workload import BasicSchedulingPolicy
from kubesched.cache._clusterstate import ClusterState
from kubesched.cache._workloadmanager import group_key as manager_group_key
from kubesched.framework import Code, QueueingHint
from kubesched.plugins import gangscheduling
from kubesched.plugins.gangscheduling import PlacementProgress
from kubesched.testing import FakeHandle, make_pod

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def pod(name: str, ns: str = "default", *, ref: tuple[str, str, str] | None = None, pg: str | None = None) -> Pod:
    p = make_pod(name, ns).uid(name).obj()
    spec = p.spec
    if ref is not None:
        spec = msgspec.structs.replace(spec, workload_ref=WorkloadReference(name=ref[0], pod_group=ref[1], pod_group_replica_key=ref[2]))
    if pg is not None:
        spec = msgspec.structs.replace(spec, scheduling_group=PodSchedulingGroup(pod_group_name=pg))
    return msgspec.structs.replace(p, spec=spec)


def wl_pod(name: str, wl: str, group: str, replica: str = "", ns: str = "default") -> Pod:
    return pod(name, ns, ref=(wl, group, replica))


def sg_pod(name: str, group: str, ns: str = "default") -> Pod:
    return pod(name, ns, pg=group)


def workload(name: str, ns: str = "default", **groups: int | None) -> Workload:
    """A v1alpha1 Workload with pod groups ``name=minCount`` (None: the basic policy)."""
    pgs = [
        WorkloadPodGroup(name=g, policy=PodGroupPolicy(basic=BasicSchedulingPolicy()) if n is None
                         else PodGroupPolicy(gang=GangSchedulingPolicy(min_count=n)))
        for g, n in groups.items()
    ]  # fmt: skip
    return Workload(api_version="scheduling.k8s.io/v1alpha1", metadata=ObjectMeta(name=name, namespace=ns), spec=WorkloadSpec(pod_groups=pgs))


def pod_group(name: str, min_count: int | None, ns: str = "default") -> SchedulingPodGroup:
    policy = PodGroupPolicy(basic=BasicSchedulingPolicy()) if min_count is None else PodGroupPolicy(gang=GangSchedulingPolicy(min_count=min_count))
    return SchedulingPodGroup(metadata=ObjectMeta(name=name, namespace=ns), spec=SchedulingPodGroupSpec(scheduling_policy=policy))


def plugin(version: str, *, workloads: tuple[Workload, ...] = (), pod_groups: tuple[SchedulingPodGroup, ...] = (),
           pods: tuple[Pod, ...] = ()) -> tuple[gangscheduling.GangScheduling, FakeHandle]:  # fmt: skip
    cluster = ClusterState()
    for w in workloads:
        cluster.workloads[(w.metadata.namespace, w.metadata.name)] = w
    for g in pod_groups:
        cluster.scheduling_pod_groups[(g.metadata.namespace, g.metadata.name)] = g
    for p in pods:  # the workload manager's AddPod
        key = manager_group_key(p)
        if key is not None:
            cluster.workload_manager.add_pod(key, p)
    handle = FakeHandle(cluster=cluster, clock=0.0, emulated_version=version)
    return gangscheduling.new(None, handle), handle


# --- v1.35 gangscheduling_test.go Test_isSchedulableAfterPodAdded ------------------------------


@pytest.mark.parametrize(
    ("target", "added", "want"),
    [
        pytest.param(wl_pod("p", "w1", "pg"), wl_pod("q", "w1", "pg"), Q,
                     id="Test_isSchedulableAfterPodAdded__add a newPod which matches the pod's workload and pod group"),
        pytest.param(wl_pod("p", "w1", "pg", "3"), wl_pod("q", "w1", "pg", "3"), Q,
                     id="Test_isSchedulableAfterPodAdded__add a newPod which matches the pod's workload, pod group and replica key"),
        pytest.param(wl_pod("p", "w1", "pg"), wl_pod("q", "w1", "pg", ns="foo"), SKIP,
                     id="Test_isSchedulableAfterPodAdded__add a newPod which doesn't match the pod's namespace"),
        pytest.param(wl_pod("p", "w1", "pg"), wl_pod("q", "w2", "pg"), SKIP,
                     id="Test_isSchedulableAfterPodAdded__add a newPod which doesn't match the pod's workload name"),
        pytest.param(wl_pod("p", "w1", "pg"), wl_pod("q", "w1", "pg2"), SKIP,
                     id="Test_isSchedulableAfterPodAdded__add a newPod which doesn't match the pod's pod group name"),
        pytest.param(wl_pod("p", "w1", "pg", "3"), wl_pod("q", "w1", "pg", "4"), SKIP,
                     id="Test_isSchedulableAfterPodAdded__add a newPod which doesn't match the pod's replica key"),
    ],
)
def test_v1_35_gangscheduling__Test_isSchedulableAfterPodAdded(target: Pod, added: Pod, want: QueueingHint) -> None:
    pl, _ = plugin("1.35")
    assert pl.is_schedulable_after_pod_added(target, None, added) == want


@pytest.mark.parametrize(
    ("target", "added", "want"),
    [
        pytest.param(wl_pod("p", "w1", "pg"), workload("w1", pg=1), Q,
                     id="Test_isSchedulableAfterWorkloadAdded__add a workload which matches the pod's workload name"),
        pytest.param(wl_pod("p", "w2", "pg"), workload("w1", pg=1), SKIP,
                     id="Test_isSchedulableAfterWorkloadAdded__add a workload which doesn't match the pod's workload name"),
        pytest.param(wl_pod("p", "w1", "pg", ns="ns1"), workload("w1", "ns2", pg=1), SKIP,
                     id="Test_isSchedulableAfterWorkloadAdded__add a workload which doesn't match the pod's workload namespace"),
    ],
)
def test_v1_35_gangscheduling__Test_isSchedulableAfterWorkloadAdded(target: Pod, added: Workload, want: QueueingHint) -> None:
    pl, _ = plugin("1.35")
    assert pl.is_schedulable_after_workload_added(target, None, added) == want


# --- v1.36 Test_isSchedulableAfterPodAdded / Test_isSchedulableAfterPodGroupAdded --------------


@pytest.mark.parametrize(
    ("target", "added", "want"),
    [
        pytest.param(sg_pod("p", "pg"), sg_pod("q", "pg"), Q,
                     id="Test_isSchedulableAfterPodAdded__add a newPod which matches the pod's scheduling group"),
        pytest.param(sg_pod("p", "pg"), sg_pod("q", "pg", ns="foo"), SKIP,
                     id="Test_isSchedulableAfterPodAdded__add a newPod which doesn't match the pod's namespace"),
        pytest.param(sg_pod("p", "pg1"), sg_pod("q", "pg2"), SKIP,
                     id="Test_isSchedulableAfterPodAdded__add a newPod which doesn't match the pod's pod group name"),
    ],
)
def test_v1_36_gangscheduling__Test_isSchedulableAfterPodAdded(target: Pod, added: Pod, want: QueueingHint) -> None:
    pl, _ = plugin("1.36")
    assert pl.is_schedulable_after_pod_added(target, None, added) == want


@pytest.mark.parametrize(
    ("target", "added", "want"),
    [
        pytest.param(sg_pod("p", "pg"), pod_group("pg", 1), Q,
                     id="Test_isSchedulableAfterPodGroupAdded__add a pod group which matches the pod's pod group name"),
        pytest.param(sg_pod("p", "pg1"), pod_group("pg2", 1), SKIP,
                     id="Test_isSchedulableAfterPodGroupAdded__add a pod group which doesn't match the pod's scheduling group name"),
        pytest.param(sg_pod("p", "pg", ns="ns1"), pod_group("pg", 1, ns="ns2"), SKIP,
                     id="Test_isSchedulableAfterPodGroupAdded__add a pod group which doesn't match the pod's scheduling group namespace"),
    ],
)
def test_v1_36_gangscheduling__Test_isSchedulableAfterPodGroupAdded(target: Pod, added: SchedulingPodGroup, want: QueueingHint) -> None:
    pl, _ = plugin("1.36")
    assert pl.is_schedulable_after_pod_group_added(target, None, added) == want


def test_v1_36_a_scheduler_plugins_pod_group_is_not_the_pods() -> None:
    from kubesched.testing import make_pod_group

    pl, _ = plugin("1.36")
    assert pl.is_schedulable_after_pod_group_added(sg_pod("p", "pg"), None, make_pod_group("pg").obj()) == SKIP


# --- TestGangSchedulingFlow (v1.35 over Workloads, v1.36 over PodGroups) -----------------------


def _flow(version: str) -> dict[str, Any]:
    if version == "1.35":
        p = {n: wl_pod(n, "gang-wl", "pg1", ns="ns1") for n in ("p1", "p2", "p3")}
        p["p4"] = wl_pod("p4", "gang-wl", "pg2", ns="ns1")
        p["p5"] = wl_pod("p5", "gang-wl", "pg1", "2", ns="ns1")  # another replica of pg1
        p["basic"] = wl_pod("basic-pod", "basic-wl", "pg1", ns="ns1")
        objs = {"workloads": (workload("gang-wl", "ns1", pg1=3, pg2=4), workload("basic-wl", "ns1", pg1=None))}
        missing = "waiting for pods's workload \"gang-wl\" to appear in scheduling queue"
        wait = gangscheduling.MSG_PERMIT_WAIT_1_35
    else:
        p = {n: sg_pod(n, "pg1", ns="ns1") for n in ("p1", "p2", "p3")}
        p["p4"] = sg_pod("p4", "pg2", ns="ns1")
        p["p5"] = sg_pod("p5", "pg2", ns="ns1")
        p["basic"] = sg_pod("basic-pod", "pg3", ns="ns1")
        objs = {"pod_groups": (pod_group("pg1", 3, "ns1"), pod_group("pg2", 4, "ns1"), pod_group("pg3", None, "ns1"))}
        missing = "waiting for pods's pod group \"pg1\" to appear in scheduling queue"
        wait = gangscheduling.MSG_PERMIT_WAIT_1_36
    p["non-gang"] = make_pod("non-gang", "ns1").uid("non-gang").obj()
    return {"pods": p, "objs": objs, "missing": missing, "wait": wait}


FLOW = [
    # (case, pod, initial pods, objects present, waiting on permit, PreEnqueue, Permit, activated, allowed)
    ("non-gang pod succeeds immediately", "non-gang", [], True, [], None, None, [], []),
    ("basic policy pod succeeds immediately", "basic", [], True, [], None, None, [], []),
    ("gang pod fails PreEnqueue when the object is not yet created", "p1", ["p2", "p3", "p4", "p5"], False, [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "missing"), None, [], []),
    ("gang pod fails PreEnqueue when quorum is not met", "p1", ["p2", "p4", "p5"], True, [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, gangscheduling.MSG_WAITING_FOR_MIN_COUNT), None, [], []),
    ("gang pod passes PreEnqueue, but waits at Permit", "p1", ["p2", "p3", "p4", "p5"], True, ["p2", "p4", "p5"],
     None, (Code.WAIT, "wait"), ["ns1/p3"], []),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", "p1", ["p2", "p3", "p4", "p5"], True,
     ["p2", "p3", "p4", "p5"], None, None, [], ["p2", "p3"]),
]  # fmt: skip


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["1.35", "1.36"])
@pytest.mark.parametrize(
    ("pod_name", "initial", "present", "waiting", "want_pre_enqueue", "want_permit", "want_activated", "want_allowed"),
    [pytest.param(*row[1:], id=f"TestGangSchedulingFlow__{row[0]}") for row in FLOW],
)
async def test_gangscheduling__TestGangSchedulingFlow(
    version: str, pod_name: str, initial: list[str], present: bool, waiting: list[str],
    want_pre_enqueue: tuple[Code, str] | None, want_permit: tuple[Code, str] | None,
    want_activated: list[str], want_allowed: list[str],
) -> None:  # fmt: skip
    flow = _flow(version)
    pods = flow["pods"]
    target = pods[pod_name]
    pl, handle = plugin(version, pods=(*(pods[n] for n in initial), target), **(flow["objs"] if present else {}))

    got = pl.kubesched_pre_enqueue(target)
    if want_pre_enqueue is None:
        assert got is None
    else:
        code, msg = want_pre_enqueue
        assert got is not None and (got.code, got.message) == (code, flow.get(msg, msg))
        return

    # the pods already waiting at Permit: Reserve then Permit (each must wait), as upstream
    for name in waiting:
        p = pods[name]
        assert pl.kubesched_reserve(None, p, "some-node") is None  # type: ignore[arg-type]
        result = pl.kubesched_permit(None, p, "some-node")  # type: ignore[arg-type]
        assert isinstance(result, tuple) and result[0].code == Code.WAIT, name
        handle.waiting.add(p, {gangscheduling.NAME: result[1]}, timed=False)

    assert pl.kubesched_reserve(None, target, "some-node") is None  # type: ignore[arg-type]
    handle.activated.clear()
    got_permit = pl.kubesched_permit(None, target, "some-node")  # type: ignore[arg-type]
    if want_permit is None:
        assert got_permit is None
    else:
        assert isinstance(got_permit, tuple)
        status, timeout = got_permit
        assert (status.code, status.message) == (want_permit[0], flow[want_permit[1]])
        assert timeout == 300.0  # 5 minutes: the group's deadline (1.35) / permitTimeoutDuration (1.36)
        assert handle.activated == want_activated
        pl.kubesched_unreserve(None, target, "some-node")  # type: ignore[arg-type]
        key = manager_group_key(target)
        assert key is not None and target.metadata.uid in handle.cluster.workload_manager.state(key).unscheduled
        return
    for name in waiting:
        wp = handle.get_waiting_pod(pods[name].metadata.uid)
        assert wp is not None
        allowed = not wp.get_pending_plugins()
        assert allowed == (name in want_allowed), f"{name}: allowed={allowed}"


def test_v1_35_a_pod_group_the_workload_lacks_stays_out_of_the_queue() -> None:
    pl, _ = plugin("1.35", workloads=(workload("w", pg=2),))
    got = pl.kubesched_pre_enqueue(wl_pod("p", "w", "other"))
    assert got is not None and got.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert got.message == 'pod group "other" doesn\'t exist for a workload "w"'


def test_permit_is_an_error_when_the_object_went_away() -> None:
    target = sg_pod("p", "pg")
    pl, _ = plugin("1.36", pods=(target,))
    got = pl.kubesched_permit(None, target, "n")  # type: ignore[arg-type]
    assert isinstance(got, type(pl.kubesched_pre_enqueue(target))) and got is not None
    assert got.code == Code.ERROR
    assert got.message == 'failed to get podGroup default/pg: podgroup.scheduling.k8s.io "pg" not found'


@pytest.mark.parametrize(
    ("min_count", "scheduled", "remaining", "want"),
    [
        pytest.param(3, 1, 1, (Code.UNSCHEDULABLE, "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"),
                     id="PlacementFeasible__not enough remaining pods"),
        pytest.param(3, 1, 2, (Code.WAIT, "minCount (3) is not yet satisfied: 1 scheduled, 2 remaining"),
                     id="PlacementFeasible__minCount not yet satisfied"),
        pytest.param(3, 3, 0, None, id="PlacementFeasible__minCount satisfied"),
    ],
)
def test_v1_36_gangscheduling__PlacementFeasible(min_count: int, scheduled: int, remaining: int, want: tuple[Code, str] | None) -> None:
    pl, _ = plugin("1.36")
    got = pl.placement_feasible(min_count, PlacementProgress(scheduled=scheduled, remaining=remaining))
    assert (None if got is None else (got.code, got.message)) == want


# --- the bar of issue 36: whole scenarios, on both backends ----------------------------------

DATA = __import__("pathlib").Path(__file__).parent / "data"
GATES = "GenericWorkload=true,GangScheduling=true"


def _run(name: str, backend: str, *, version: str = "1.36", until: float | None = None) -> tuple[str, dict[str, Any]]:
    import json

    from kubesched.scenario import load_manifests, simulation_config
    from kubesched.simulation import Simulation

    sim = Simulation(load_manifests([str(DATA / name)]), simulation_config("", GATES, None, emulated_version=version), until=until)
    text = sim.run_in_virtual_time(backend).to_json()
    return text, json.loads(text)


def _bound(doc: dict[str, Any], prefix: str) -> dict[str, float | None]:
    return {p["name"]: p["scheduledAt"] for p in doc["pods"] if p["name"].startswith(prefix)}


@pytest.mark.parametrize(("name", "version"), [("gang-upstream-3-on-3.yaml", "1.36"), ("gang-upstream-3-on-3-v1.35.yaml", "1.35")])
def test_a_gang_of_3_on_3_one_cpu_nodes_binds_all_3_at_one_instant(name: str, version: str) -> None:
    texts = {b: _run(name, b, version=version) for b in ("asyncio", "trio")}
    assert texts["asyncio"][0] == texts["trio"][0]  # byte-identical on both backends
    doc = texts["trio"][1]
    bound = _bound(doc, "train-")
    assert len(bound) == 3 and set(bound.values()) == {0.0}
    assert len({p["nodeName"] for p in doc["pods"]}) == 3


@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_a_gang_of_3_on_2_nodes_binds_none(version: str) -> None:
    name = "gang-upstream-3-on-2.yaml" if version == "1.36" else "gang-upstream-3-on-2-v1.35.yaml"
    texts = {b: _run(name, b, version=version, until=1200.0) for b in ("asyncio", "trio")}
    assert texts["asyncio"][0] == texts["trio"][0]
    doc = texts["trio"][1]
    assert all(p["nodeName"] is None for p in doc["pods"])
    messages = {e["message"] for e in doc["events"] if e["reason"] == "FailedScheduling"}
    if version == "1.35":
        # the first two wait at Permit for 5 minutes, time out, come back: no member ever binds
        assert "0/1 nodes are available: 1 rejected due to timeout after waiting 5m0s at plugin GangScheduling." in messages
    else:
        # the PodGroup cycle: the two placed pods are sent back with their Permit's message, the
        # group is Unschedulable, and the whole group backs off (no livelock: time advances)
        assert 'one or more plugins asked to wait and no plugin rejected pod "train-0"' in messages
        assert doc["podGroups"][0]["conditions"] == [
            {"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable", "message": ""}
        ]
        assert 20 < doc["summary"]["attempts"] < 1000


def test_a_high_priority_gang_of_3_preempts_three_low_priority_pods_and_binds() -> None:
    texts = {b: _run("gang-upstream-preempts.yaml", b) for b in ("asyncio", "trio")}
    assert texts["asyncio"][0] == texts["trio"][0]
    doc = texts["trio"][1]
    assert [p["deleted"] for p in doc["pods"] if p["name"].startswith("batch-")] == [True, True, True]
    bound = _bound(doc, "train-")
    assert len(set(bound.values())) == 1 and None not in bound.values()  # all 3 at one instant
    assert doc["summary"]["preemptions"] == 3
    assert doc["podGroups"][0]["conditions"] == [
        {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled", "message": ""}
    ]


@pytest.mark.parametrize(
    ("version", "gates", "has_it"),
    [
        pytest.param("1.36", {}, False, id="1.36 gate off"),
        pytest.param("1.36", {"GangScheduling": True}, True, id="1.36 gate on"),
        pytest.param("1.35", {"GangScheduling": True}, True, id="1.35 gate on"),
        pytest.param("1.34", {"GangScheduling": True}, False, id="1.34 has no such gate"),
    ],
)
def test_default_profile_appends_gangscheduling_where_the_gate_is_on(version: str, gates: dict[str, bool], has_it: bool) -> None:
    # default_plugins.go applyFeatureGates -> applyGangScheduling: last in multiPoint
    from kubesched.config._config import default_multi_point
    from kubesched.config._versions import default_feature_gates, parse_version

    v = parse_version(version)
    mp = default_multi_point(None, v, {**default_feature_gates(v), **gates})
    assert (mp[-1] == ("GangScheduling", 0)) == has_it
    assert sum(n == "GangScheduling" for n, _ in mp) == (1 if has_it else 0)
