"""The placement plugins of TopologyAwareWorkloadScheduling (1.36): PodGroupPodsCount (upstream's
podgroup_pods_count_test.go TestScorePlacement and TestNormalizePlacementScore, every case),
TopologyPlacement (one placement per domain of the PodGroup's topology key; the scheduled
members' domain only) and NodeResourcesFit's PlacementScore (MostAllocated over the placement)."""

from __future__ import annotations

import msgspec
import pytest

from kubesched.api import PodSchedulingGroup, SchedulingPodGroup, SchedulingPodGroupSpec
from kubesched.api._objects import ObjectMeta, Pod
from kubesched.api._workload import (
    GangSchedulingPolicy,
    PodGroupPolicy,
    PodGroupSchedulingConstraints,
    TopologyConstraint,
)
from kubesched.cache._clusterstate import ClusterState
from kubesched.cache._workloadmanager import group_key
from kubesched.framework import (
    Code,
    CycleState,
    Placement,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
    ProposedAssignment,
    Status,
)
from kubesched.plugins import noderesources, podgrouppodscount, topologyplacement
from kubesched.testing import FakeHandle, make_node, make_pod

NS = "default"


def member(name: str, node: str = "", group: str = "pg1") -> Pod:
    p = make_pod(name, NS).uid(name).obj()
    spec = msgspec.structs.replace(p.spec, scheduling_group=PodSchedulingGroup(pod_group_name=group), node_name=node)
    return msgspec.structs.replace(p, spec=spec)


def pod_group(name: str = "pg1", key: str | None = None) -> SchedulingPodGroup:
    constraints = PodGroupSchedulingConstraints(topology=[TopologyConstraint(key=key)]) if key else None
    return SchedulingPodGroup(
        metadata=ObjectMeta(name=name, namespace=NS),
        spec=SchedulingPodGroupSpec(scheduling_policy=PodGroupPolicy(gang=GangSchedulingPolicy(min_count=2)),
                                    scheduling_constraints=constraints),
    )  # fmt: skip


def _cluster(assigned: list[Pod], assumed: list[Pod], others: list[Pod], *groups: SchedulingPodGroup) -> ClusterState:
    cluster = ClusterState()
    for g in groups:
        cluster.scheduling_pod_groups[(NS, g.metadata.name)] = g
    wm = cluster.workload_manager
    for p in (*assigned, *assumed, *others):
        key = group_key(p)
        assert key is not None
        wm.add_pod(key, p)
    for p in assumed:
        key = group_key(p)
        assert key is not None
        wm.state(key).assume(p.metadata.uid)
    return cluster


# --- PodGroupPodsCount ------------------------------------------------------------------------------

PROPOSED = [ProposedAssignment(member("proposed-pod-1"), "node1"), ProposedAssignment(member("proposed-pod-2"), "node2")]


@pytest.mark.parametrize(
    ("assigned", "assumed", "want"),
    [
        pytest.param([member("p2", "node2"), member("p3", "node3")], [member("p1")], 5,
                     id="TestScorePlacement__existing assigned and assumed pods"),
        pytest.param([member("p1", "node1")], [], 3, id="TestScorePlacement__no assumed pods"),
        pytest.param([], [member("p1")], 3, id="TestScorePlacement__no assigned pods"),
        pytest.param([], [], 2, id="TestScorePlacement__no assigned pods, no assumed pods"),
    ],
)  # fmt: skip
def test_podgrouppodscount__TestScorePlacement(assigned: list[Pod], assumed: list[Pod], want: int) -> None:
    cluster = _cluster(assigned, assumed, [a.pod for a in PROPOSED])
    pl = podgrouppodscount.new(None, FakeHandle(cluster=cluster))
    assignments = PodGroupAssignments(Placement("p", []), PROPOSED)
    assert pl.kubesched_placement_score(CycleState(), PodGroupInfo(NS, "pg1"), assignments) == want


@pytest.mark.parametrize(
    ("scores", "want"),
    [
        pytest.param([10, 50, 110], [9, 45, 100], id="TestNormalizePlacementScore__distinct scores"),
        pytest.param([50, 50], [100, 100], id="TestNormalizePlacementScore__equal scores"),
        pytest.param([50], [100], id="TestNormalizePlacementScore__single score"),
        pytest.param([11, 100, 101, 102], [10, 98, 99, 100], id="TestNormalizePlacementScore__some minimal score that is far "
                     "from a group of scores located closely"),
        pytest.param([0, 0], podgrouppodscount.MSG_NO_PODS_ASSIGNED, id="TestNormalizePlacementScore__zero scores"),
    ],
)  # fmt: skip
def test_podgrouppodscount__TestNormalizePlacementScore(scores: list[int], want: list[int] | str) -> None:
    pl = podgrouppodscount.new(None, FakeHandle())
    rows = [PlacementScore(Placement(str(i), []), s) for i, s in enumerate(scores)]
    st = pl.kubesched_normalize_placement_score(CycleState(), PodGroupInfo(NS, "pg1"), rows)
    if isinstance(want, str):
        assert st is not None and st.code == Code.ERROR and st.message == want
    else:
        assert st is None and [r.score for r in rows] == want


# --- TopologyPlacement -----------------------------------------------------------------------------

NODES = [
    make_node("a1").label("rack", "a").obj(), make_node("b1").label("rack", "b").obj(),
    make_node("a2").label("rack", "a").obj(), make_node("x").obj(),
]  # fmt: skip


def _generate(group: SchedulingPodGroup, pods: list[Pod] = (), assumed: list[Pod] = ()) -> list[Placement] | Status:  # type: ignore[assignment]
    bound = [p for p in pods if p.spec.node_name]
    cluster = _cluster(bound, list(assumed), [p for p in pods if not p.spec.node_name], group)
    handle = FakeHandle(nodes=NODES, pods=[*bound], cluster=cluster)
    pl = topologyplacement.new(None, handle)
    parent = Placement("", list(handle.snapshot.node_infos))
    return pl.kubesched_placement_generate(CycleState(), PodGroupInfo(NS, group.metadata.name), parent)


def _names(got: list[Placement] | Status) -> list[tuple[str, list[str]]]:
    assert isinstance(got, list), got
    return [(p.name, [ni.node.metadata.name for ni in p.nodes if ni.node is not None]) for p in got]


def test_topologyplacement_without_a_constraint_gives_the_parent_back() -> None:
    assert _names(_generate(pod_group())) == [("", ["a1", "b1", "a2", "x"])]


def test_topologyplacement_one_placement_per_domain_of_the_key() -> None:
    """Nodes without the label are in no placement; placements by domain name."""
    assert _names(_generate(pod_group(key="rack"))) == [("a", ["a1", "a2"]), ("b", ["b1"])]
    assert _names(_generate(pod_group(key="zone"))) == []


def test_topologyplacement_keeps_the_scheduled_members_domain() -> None:
    assert _names(_generate(pod_group(key="rack"), [member("m1", "b1"), member("m2")])) == [("b", ["b1"])]


def test_topologyplacement_members_in_two_domains_are_an_error() -> None:
    got = _generate(pod_group(key="rack"), [member("m1", "b1"), member("m2", "a1")])
    assert isinstance(got, Status) and got.code == Code.ERROR
    assert got.message == "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: b, a"
    got = _generate(pod_group(key="rack"), [member("m1", "x")])
    assert isinstance(got, Status) and got.message == (
        "cannot determine domain for already scheduled pods: no topology domain found for pod default/m1"
    )


# --- NodeResourcesFit's PlacementScore ---------------------------------------------------------------


def test_noderesources_fit_scores_a_placement_mostallocated_over_its_nodes() -> None:
    """(1 cpu already on n1 + 2 proposed) of 4 cpus: 75; memory (non-zero 200Mi each: 600Mi of 8Gi)
    7; weighted average (1, 1): 41; the scoring strategy's type (LeastAllocated) plays no part."""
    n1 = make_node("n1").capacity(cpu="2", memory="4Gi", pods="10").obj()
    n2 = make_node("n2").capacity(cpu="2", memory="4Gi", pods="10").obj()
    busy = make_pod("busy").uid("busy").req(cpu="1").node("n1").obj()
    handle = FakeHandle(nodes=[n1, n2], pods=[busy])
    fit = noderesources.new_fit(None, handle)
    placement = Placement("rack", list(handle.snapshot.node_infos))
    proposed = [ProposedAssignment(make_pod(f"m{i}").uid(f"m{i}").req(cpu="1").obj(), "n2") for i in range(2)]
    got = fit.kubesched_placement_score(CycleState(), PodGroupInfo(NS, "pg"), PodGroupAssignments(placement, proposed))
    cpu = 3000 * 100 // 4000
    memory = (200 * 3) * (1 << 20) * 100 // (8 << 30)
    assert got == (cpu + memory) // 2 == 41
    # a fuller placement scores higher (bin packing)
    fuller = [*proposed, ProposedAssignment(make_pod("m2").uid("m2").req(cpu="1").obj(), "n1")]
    assert fit.kubesched_placement_score(CycleState(), PodGroupInfo(NS, "pg"), PodGroupAssignments(placement, fuller)) > got
