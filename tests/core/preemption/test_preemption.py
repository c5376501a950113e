"""The preemption Evaluator: dry run (DryRunPreemption), eligibility (PodEligibleToPreemptOthers), node choice, Preempt.

Why one file: upstream's default_preemption_test.go tables, one row per case, in upstream's
order.

Ids name the upstream test (``DP`` = default_preemption_test.go) and case.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anyio
import pytest

from kubesched import CycleState, NodeInfo, Pod, Status, hookimpl, per_node_filter
from kubesched.api._objects import copy
from kubesched.plugins import IN_TREE
from kubesched.preemption import (
    Candidate,
    calculate_num_candidates,
    filter_pods_with_pdb_violation,
    more_important_pod,
    pick_one_node_for_preemption,
)
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, framework_for, make_node, make_pdb, make_pod

NEG, LOW, MID, HIGH, VHIGH = -100, 0, 100, 1000, 10000
S = {"cpu": "100m", "memory": "100"}
M = {"cpu": "200m", "memory": "200"}
L = {"cpu": "300m", "memory": "300"}
VL = {"cpu": "500m", "memory": "500"}
FIT = "NodeResourcesFit"


def t(n: int) -> str:
    """Unix(0, n): n nanoseconds after the epoch."""
    return f"1970-01-01T00:00:00.{n:09d}Z"


def pod(
    name: str,
    prio: int | None = None,
    req: dict[str, str] | None = None,
    node: str = "",
    *,
    start: int | None = None,
    labels: dict[str, str] | None = None,
) -> Pod:
    b = make_pod(name)
    if prio is not None:
        b.priority(prio)
    if req:
        b.req(**req)
    if node:
        b.node(node)
    if start is not None:
        b.start_time(t(start))
    if labels:
        b.labels(labels)
    return b.obj()


def node(spec: str, capacity: dict[str, Any] | None = None) -> Any:
    """A node; "a/z" is node "a" with labels hostname=a, zone=z (upstream's naming trick)."""
    parts = spec.split("/")
    b = make_node(parts[0]).capacity_list(dict(capacity if capacity is not None else VL))
    for key, value in zip(("hostname", "zone", "region"), parts, strict=False):
        b.label(key, value)
    return b.obj()


class CountingFilter:
    """Upstream's FakeFilterPlugin: counts Filter calls; per-node return codes."""

    name = "FakeFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.calls = 0
        self.codes: dict[str, Code] = dict((args or {}).get("codes", {}))

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        code = self.codes.get(node_info.name, Code.SUCCESS)
        return None if code == Code.SUCCESS else Status(code)


class MatchFilter:
    """tf.MatchFilterPlugin: a node passes only if its name equals the pod's name."""

    name = "MatchFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None if pod.metadata.name == node_info.name else Status(Code.UNSCHEDULABLE)


class FalseFilter(MatchFilter):
    name = "FalseFilter"

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status(Code.UNSCHEDULABLE)


class TrueFilter(MatchFilter):
    name = "TrueFilter"

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


REGISTRY = {
    **IN_TREE,
    "FakeFilter": CountingFilter,
    "MatchFilter": MatchFilter,
    "FalseFilter": FalseFilter,
    "TrueFilter": TrueFilter,
}


def _framework(
    filters: Sequence[str],
    nodes: list[Any],
    pods: list[Pod],
    *,
    pre: Sequence[str] = (),
    codes: dict[str, Code] | None = None,
    args: dict[str, Any] | None = None,
    pdbs: Sequence[Any] = (),
    **kw: Any,
) -> Any:
    enabled: dict[str, list[str]] = {
        "filter": ["FakeFilter", *filters],
        "postFilter": ["DefaultPreemption"],
    }
    if pre:
        enabled["preFilter"] = list(pre)
    plugin_args = {"FakeFilter": {"codes": codes or {}}}
    if args is not None:
        plugin_args["DefaultPreemption"] = args
    return framework_for(
        enabled, nodes, pods, registry=REGISTRY, plugin_args=plugin_args, pdbs=list(pdbs), **kw
    )


def _offsets(*values: int) -> Callable[[int], int]:
    it = iter(values)
    return lambda n: next(it)


def _state(fw: Any, p: Pod) -> CycleState:
    state = CycleState()
    _, st, _ = fw.run_pre_filter_plugins(state, p, fw.snapshot.node_infos)
    assert st is None or st.is_success()
    return state


def _as_dict(candidates: Sequence[Candidate]) -> dict[str, tuple[list[str], int]]:
    return {
        c.name: (sorted(v.metadata.name for v in c.victims), c.num_pdb_violations)
        for c in candidates
    }


# --- DryRunPreemption ----------------------------------------------------------------------------

FOO = {"app": "foo"}

G_CASES = [
    pytest.param(
        dict(
            filters=["FalseFilter"],
            nodes=["node1", "node2"],
            incoming=[pod("p", HIGH)],
            init=[pod("p1", MID, node="node1"), pod("p2", MID, node="node2")],
            expected=[{}],
            calls=[2],
        ),
        id="DP/TestDryRunPreemption/a pod that does not fit on any node",
    ),
    pytest.param(
        dict(
            filters=["TrueFilter"],
            nodes=["node1", "node2"],
            incoming=[pod("p", HIGH)],
            init=[pod("p1", MID, node="node1"), pod("p2", MID, node="node2")],
            codes={"node1": Code.UNSCHEDULABLE, "node2": Code.UNSCHEDULABLE},
            expected=[{}],
            calls=[2],
        ),
        id="DP/TestDryRunPreemption/a pod that fits with no preemption",
    ),
    pytest.param(
        dict(
            filters=["MatchFilter"],
            nodes=["node1", "node2"],
            incoming=[pod("node1", HIGH)],
            init=[pod("p1", MID, node="node1"), pod("p2", MID, node="node2")],
            codes={"node1": Code.UNSCHEDULABLE, "node2": Code.UNSCHEDULABLE},
            expected=[{}],
            calls=[2],
        ),
        id="DP/TestDryRunPreemption/a pod that fits on one node with no preemption",
    ),
    pytest.param(
        dict(
            nodes=["node1", "node2"],
            incoming=[pod("p", HIGH, L)],
            init=[pod("p1", MID, L, "node1"), pod("p2", MID, L, "node2")],
            expected=[{"node1": (["p1"], 0), "node2": (["p2"], 0)}],
            calls=[4],
        ),
        id="G1 DP/TestDryRunPreemption/a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        dict(
            nodes=["node1", "node2"],
            incoming=[pod("p", LOW, L)],
            init=[pod("p1", MID, L, "node1"), pod("p2", MID, L, "node2")],
            expected=[{}],
            calls=[0],
        ),
        id="G2 DP/TestDryRunPreemption/a pod that would fit on the nodes, but other pods running are higher priority",
    ),
    pytest.param(
        dict(
            nodes=["node1", "node2"],
            incoming=[pod("p", HIGH, L)],
            init=[
                pod("p1.1", LOW, S, "node1"),
                pod("p1.2", MID, L, "node1"),
                pod("p2", MID, L, "node2"),
            ],
            expected=[{"node1": (["p1.2"], 0), "node2": (["p2"], 0)}],
            calls=[None],
        ),
        id="G3 DP/TestDryRunPreemption/medium priority pod is preempted, but lower priority one stays as it is small",
    ),
    pytest.param(
        dict(
            nodes=["node1", "node2"],
            incoming=[pod("p", HIGH, L)],
            init=[
                pod("p1.1", MID, S, "node1"),
                pod("p1.2", LOW, S, "node1"),
                pod("p1.3", MID, M, "node1"),
                pod("p1.4", HIGH, S, "node1"),
                pod("p2", HIGH, L, "node2"),
            ],
            expected=[{"node1": (["p1.2", "p1.3"], 0)}],
            calls=[None],
        ),
        id="G4 DP/TestDryRunPreemption/mixed priority pods are preempted",
    ),
    pytest.param(
        dict(
            nodes=["node1", "node2"],
            incoming=[pod("p", HIGH, L)],
            init=[
                pod("p1.1", LOW, S, "node1", start=5),
                pod("p1.2", LOW, S, "node1", start=4),
                pod("p1.3", MID, M, "node1", start=3),
                pod("p1.4", HIGH, S, "node1", start=2),
                pod("p2", HIGH, L, "node2", start=1),
            ],
            expected=[{"node1": (["p1.1", "p1.3"], 0)}],
            calls=[None],
        ),
        id="G5 DP/TestDryRunPreemption/mixed priority pods are preempted, pick later StartTime one when priorities are equal",
    ),
    pytest.param(
        dict(
            nodes=["node1"],
            incoming=[pod("p", HIGH, VL)],
            init=[
                pod("p1.1", MID, M, "node1", labels=FOO),
                pod("p1.2", MID, M, "node1", labels=FOO),
            ],
            pdbs=[make_pdb("pdb", match_labels=FOO, disruptions_allowed=1)],
            expected=[{"node1": (["p1.1", "p1.2"], 1)}],
            calls=[None],
        ),
        id="G8 DP/TestDryRunPreemption/preemption with violation of same pdb",
    ),
    pytest.param(
        dict(
            nodes=["node1"],
            incoming=[pod("p", HIGH, VL)],
            init=[
                pod("p1.1", MID, M, "node1", labels=FOO),
                pod("p1.2", MID, M, "node1", labels=FOO),
            ],
            pdbs=[
                make_pdb(
                    "pdb", match_labels=FOO, disruptions_allowed=1, disrupted_pods={"p2": t(0)}
                )
            ],
            expected=[{"node1": (["p1.1", "p1.2"], 1)}],
            calls=[None],
        ),
        id="G9 DP/TestDryRunPreemption/preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to DisruptedPods",
    ),
    pytest.param(
        dict(
            nodes=["node1"],
            incoming=[pod("p", HIGH, VL)],
            init=[
                pod("p1.1", MID, M, "node1", labels=FOO),
                pod("p1.2", MID, M, "node1", labels=FOO),
            ],
            pdbs=[
                make_pdb(
                    "pdb", match_labels=FOO, disruptions_allowed=1, disrupted_pods={"p1.2": t(0)}
                )
            ],
            expected=[{"node1": (["p1.1", "p1.2"], 0)}],
            calls=[None],
        ),
        id="G10 DP/TestDryRunPreemption/preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to DisruptedPods",
    ),
    pytest.param(
        dict(
            nodes=["node1"],
            incoming=[pod("p", HIGH, VL)],
            init=[
                pod("p1.1", MID, M, "node1", labels=FOO),
                pod("p1.2", MID, M, "node1", labels=FOO),
                pod("p1.3", MID, M, "node1", labels=FOO),
            ],
            pdbs=[
                make_pdb(
                    "pdb", match_labels=FOO, disruptions_allowed=1, disrupted_pods={"p1.3": t(0)}
                )
            ],
            expected=[{"node1": (["p1.1", "p1.2", "p1.3"], 1)}],
            calls=[None],
        ),
        id="G11 DP/TestDryRunPreemption/preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to DisruptedPods is treated as 'nonViolating'",
    ),
    pytest.param(
        dict(
            nodes=[f"node{i}" for i in range(1, 6)],
            incoming=[pod("p", HIGH, L)],
            init=[pod(f"p{i}", MID, L, f"node{i}") for i in range(1, 6)],
            args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
            offsets=[4],
            expected=[{"node5": (["p5"], 0), "node1": (["p1"], 0)}],
            calls=[4],
        ),
        id="G12 DP/TestDryRunPreemption/all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
    ),
    pytest.param(
        dict(
            nodes=[f"node{i}" for i in range(1, 6)],
            incoming=[pod("p", HIGH, L)],
            init=[pod(f"p{i}", VHIGH if i in (2, 5) else MID, L, f"node{i}") for i in range(1, 6)],
            args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
            offsets=[4],
            expected=[{"node1": (["p1"], 0), "node3": (["p3"], 0)}],
            calls=[4],
        ),
        id="G13 DP/TestDryRunPreemption/some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
    ),
    pytest.param(
        dict(
            nodes=[f"node{i}" for i in range(1, 6)],
            incoming=[pod("tp1", HIGH, L), pod("tp2", HIGH, L), pod("tp3", HIGH, L)],
            init=[pod(f"p{i}", MID, L, f"node{i}") for i in range(1, 6)],
            args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
            offsets=[4, 1, 3],
            expected=[
                {"node5": (["p5"], 0), "node1": (["p1"], 0)},
                {"node2": (["p2"], 0), "node3": (["p3"], 0)},
                {"node4": (["p4"], 0), "node5": (["p5"], 0)},
            ],
            calls=[4, 4, 4],
        ),
        id="G14 DP/TestDryRunPreemption/preemption offset across multiple scheduling cycles and wrap around",
    ),
    pytest.param(
        dict(
            nodes=[f"node{i}" for i in range(1, 6)],
            incoming=[pod("p", HIGH, L)],
            init=[
                pod(f"p{i}", MID, L, f"node{i}", labels=FOO if i in (1, 2, 5) else None)
                for i in range(1, 6)
            ],
            pdbs=[make_pdb("pdb", match_labels=FOO, disruptions_allowed=0)],
            args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
            offsets=[4],
            expected=[{"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}],
            calls=[8],
        ),
        id="G15 DP/TestDryRunPreemption/preemption looks past numCandidates until a non-PDB violating node is found",
    ),
]


@pytest.mark.parametrize("case", G_CASES)
def test_dry_run_preemption(case: dict[str, Any]) -> None:
    nodes = [node(n) for n in case["nodes"]]
    filters = case.get("filters", [FIT])
    pre = [FIT] if FIT in filters else []
    fw = _framework(
        filters,
        nodes,
        case["init"],
        pre=pre,
        codes=case.get("codes"),
        args=case.get("args"),
        pdbs=case.get("pdbs", ()),
    )
    ev = fw.plugin("DefaultPreemption").evaluator
    ev.offset_source = _offsets(*case.get("offsets", [0] * len(case["incoming"])))
    counter = fw.plugin("FakeFilter")
    for cycle, p in enumerate(case["incoming"]):
        state = _state(fw, p)
        offset, num = ev.get_offset_and_num_candidates(len(nodes))
        before = counter.calls
        got, _, _ = ev.dry_run_preemption(
            state, p, fw.snapshot.node_infos, fw.handle.cluster.list_pdbs(), offset, num
        )
        assert _as_dict(got) == case["expected"][cycle], f"cycle {cycle}"
        if case["calls"][cycle] is not None:
            assert counter.calls - before == case["calls"][cycle], f"cycle {cycle}"


def test_dry_run_order_non_violating_first() -> None:
    """G15: the non-violating candidate comes first, then the violating ones in visit order."""
    case = G_CASES[-1].values[0]
    fw = _framework(
        [FIT],
        [node(n) for n in case["nodes"]],
        case["init"],
        pre=[FIT],
        args=case["args"],
        pdbs=case["pdbs"],
    )
    ev = fw.plugin("DefaultPreemption").evaluator
    p = case["incoming"][0]
    got, _, _ = ev.dry_run_preemption(
        _state(fw, p), p, fw.snapshot.node_infos, fw.handle.cluster.list_pdbs(), 4, 2
    )
    assert [c.name for c in got] == ["node3", "node5", "node1"]


@pytest.mark.parametrize(
    ("n", "pct", "absolute", "want"),
    [
        pytest.param(5, 40, 1, 2, id="G16 calculateNumCandidates N=5 40% abs 1"),
        pytest.param(3, 10, 100, 3, id="G17 default args N=3"),
        pytest.param(500, 10, 100, 100, id="G17 default args N=500"),
        pytest.param(1000, 10, 100, 100, id="G17 default args N=1000"),
        pytest.param(2000, 10, 100, 200, id="G17 default args N=2000"),
    ],
)
def test_calculate_num_candidates(n: int, pct: int, absolute: int, want: int) -> None:
    assert calculate_num_candidates(n, pct, absolute) == want
    fw = _framework(
        [FIT],
        [],
        [],
        args={"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute},
    )
    assert fw.plugin("DefaultPreemption").evaluator.calculate_num_candidates(n) == want


def test_offset_comes_from_the_scheduler_rng() -> None:
    fw = _framework([FIT], [], [], seed=7)
    ev = fw.plugin("DefaultPreemption").evaluator
    import random

    rng = random.Random(7)
    assert [ev.get_offset_and_num_candidates(5)[0] for _ in range(5)] == [
        rng.randrange(5) for _ in range(5)
    ]


# --- PodEligibleToPreemptOthers -----------------------------------------------------------------

J_CASES = [
    pytest.param(
        make_pod("p_with_nominated_node").uid("p").priority(HIGH).nominated_node("node1").obj(),
        [make_pod("p1").uid("p1").priority(LOW).node("node1").terminating().obj()],
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint"),
        True,
        id="J1 DP/TestPodEligibleToPreemptOthers/Pod with nominated node",
    ),
    pytest.param(
        make_pod("p_without_nominated_node").uid("p").priority(HIGH).obj(),
        [],
        None,
        True,
        id="J2 DP/TestPodEligibleToPreemptOthers/Pod without nominated node",
    ),
    pytest.param(
        make_pod("p_with_preempt_never_policy")
        .uid("p")
        .priority(HIGH)
        .preemption_policy("Never")
        .obj(),
        [],
        None,
        False,
        id="J3 DP/TestPodEligibleToPreemptOthers/Pod with 'PreemptNever' preemption policy",
    ),
    pytest.param(
        make_pod("p_with_nominated_node").uid("p").priority(HIGH).nominated_node("node1").obj(),
        [
            make_pod("p1")
            .uid("p1")
            .priority(LOW)
            .node("node1")
            .terminating()
            .condition("DisruptionTarget", "True", "PreemptionByScheduler")
            .obj()
        ],
        None,
        False,
        id="J4 DP/TestPodEligibleToPreemptOthers/preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
    ),
    pytest.param(
        make_pod("p_with_nominated_node").uid("p").priority(HIGH).nominated_node("node1").obj(),
        [make_pod("p1").uid("p1").priority(LOW).node("node1").terminating().obj()],
        None,
        True,
        id="J5 DP/TestPodEligibleToPreemptOthers/non-victim Pods terminating",
    ),
]


@pytest.mark.parametrize(("preemptor", "pods", "nominated_status", "expected"), J_CASES)
def test_pod_eligible_to_preempt_others(
    preemptor: Pod, pods: list[Pod], nominated_status: Status | None, expected: bool
) -> None:
    nodes = [make_node("node1").obj()] if pods else []
    fw = _framework([], nodes, [preemptor, *pods])
    ok, msg = fw.plugin("DefaultPreemption").evaluator.pod_eligible_to_preempt_others(
        preemptor, nominated_status
    )
    assert ok is expected
    if not ok:
        assert msg in (
            "not eligible due to preemptionPolicy=Never.",
            "not eligible due to a terminating pod on the nominated node.",
        )


# --- SelectVictimsOnNode details -----------------------------------------------------------------


def test_more_important_pod() -> None:
    assert more_important_pod(pod("a", HIGH), pod("b", LOW))
    assert more_important_pod(pod("a", LOW, start=1), pod("b", LOW, start=2))
    assert not more_important_pod(pod("a", LOW, start=2), pod("b", LOW, start=1))
    assert more_important_pod(pod("a", LOW, start=2), pod("b", LOW))  # no StartTime counts as now


def test_filter_pods_with_pdb_violation_is_stable_and_skips_other_namespaces() -> None:
    pods = [pod(f"p{i}", labels=FOO) for i in range(4)]
    other = make_pod("x", "other").labels(FOO).obj()
    pdbs = [
        make_pdb("pdb", match_labels=FOO, disruptions_allowed=2),
        make_pdb("pdb", "other", match_labels=FOO, disruptions_allowed=0),
    ]
    violating, non = filter_pods_with_pdb_violation([*pods, other], pdbs, pod=lambda p: p)
    assert [p.metadata.name for p in non] == ["p0", "p1"]
    assert [p.metadata.name for p in violating] == ["p2", "p3", "x"]
    empty = make_pdb("empty", match_labels={})
    assert filter_pods_with_pdb_violation(pods, [empty], pod=lambda p: p)[0] == []


# --- TestSelectBestCandidate / pickOneNodeForPreemption ------------------------------------------

SB_CASES = [
    pytest.param(
        ["node1", "node2"],
        pod("p", HIGH, L),
        [pod("p1", MID, L, "node1", start=0), pod("p2", MID, L, "node2", start=0)],
        {"node1", "node2"},
        id="DP/TestSelectBestCandidate/a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VL),
        [
            pod("p1.1", MID, M, "node1", start=0),
            pod("p1.2", MID, L, "node1", start=0),
            pod("p2.1", MID, M, "node2", start=0),
            pod("p2.2", LOW, M, "node2", start=0),
            pod("p3.1", LOW, M, "node3", start=0),
            pod("p3.2", LOW, M, "node3", start=0),
        ],
        {"node3"},
        id="DP/TestSelectBestCandidate/node with min highest priority pod is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VL),
        [
            pod("p1.1", MID, M, "node1", start=0),
            pod("p1.2", MID, L, "node1", start=0),
            pod("p2.1", MID, L, "node2", start=0),
            pod("p2.2", LOW, M, "node2", start=0),
            pod("p3.1", MID, M, "node3", start=0),
            pod("p3.2", MID, M, "node3", start=0),
        ],
        {"node2"},
        id="DP/TestSelectBestCandidate/when highest priorities are the same, minimum sum of priorities is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VL),
        [
            pod("p1.1", MID, S, "node1", start=0),
            pod("p1.2", NEG, S, "node1", start=0),
            pod("p1.3", MID, S, "node1", start=0),
            pod("p1.4", NEG, S, "node1", start=0),
            pod("p2.1", MID, L, "node2", start=0),
            pod("p2.2", NEG, M, "node2", start=0),
            pod("p3.1", MID, M, "node3", start=0),
            pod("p3.2", NEG, S, "node3", start=0),
            pod("p3.3", LOW, S, "node3", start=0),
        ],
        {"node2"},
        id="DP/TestSelectBestCandidate/when highest priority and sum are the same, minimum number of pods is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VL),
        [
            pod("p1.1", MID, S, "node1", start=0),
            pod("p1.2", NEG, S, "node1", start=0),
            pod("p1.3", NEG, S, "node1", start=0),
            pod("p2.1", MID, L, "node2", start=0),
            pod("p2.2", NEG, M, "node2", start=0),
            pod("p3.1", MID, M, "node3", start=0),
            pod("p3.2", NEG, S, "node3", start=0),
            pod("p3.3", LOW, S, "node3", start=0),
        ],
        {"node2"},
        id="DP/TestSelectBestCandidate/sum of adjusted priorities is considered",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4"],
        pod("p", VHIGH, VL),
        [
            pod("p1.1", MID, S, "node1", start=0),
            pod("p1.2", LOW, S, "node1", start=0),
            pod("p1.3", LOW, S, "node1", start=0),
            pod("p2.1", HIGH, L, "node2", start=0),
            pod("p3.1", MID, M, "node3", start=0),
            pod("p3.2", LOW, S, "node3", start=0),
            pod("p3.3", LOW, S, "node3", start=0),
            pod("p3.4", LOW, M, "node3", start=0),
            pod("p4.1", MID, M, "node4", start=0),
            pod("p4.2", MID, S, "node4", start=0),
            pod("p4.3", MID, S, "node4", start=0),
            pod("p4.4", NEG, S, "node4", start=0),
        ],
        {"node1"},
        id="DP/TestSelectBestCandidate/non-overlapping lowest high priority, sum priorities, and number of pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VL),
        [
            pod("p1.1", MID, M, "node1", start=2),
            pod("p1.2", MID, M, "node1", start=2),
            pod("p2.1", MID, M, "node2", start=3),
            pod("p2.2", MID, M, "node2", start=3),
            pod("p3.1", MID, M, "node3", start=1),
            pod("p3.2", MID, M, "node3", start=1),
        ],
        {"node2"},
        id="DP/TestSelectBestCandidate/same priority, same number of victims, different start time for each node's pod",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VL),
        [
            pod("p1.1", MID, M, "node1", start=4),
            pod("p1.2", MID, M, "node1", start=2),
            pod("p2.1", MID, M, "node2", start=5),
            pod("p2.2", MID, M, "node2", start=1),
            pod("p3.1", MID, M, "node3", start=3),
            pod("p3.2", MID, M, "node3", start=6),
        ],
        {"node3"},
        id="DP/TestSelectBestCandidate/same priority, same number of victims, different start time for all pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VL),
        [
            pod("p1.1", LOW, M, "node1", start=4),
            pod("p1.2", MID, M, "node1", start=2),
            pod("p2.1", MID, M, "node2", start=6),
            pod("p2.2", LOW, M, "node2", start=1),
            pod("p3.1", LOW, M, "node3", start=3),
            pod("p3.2", MID, M, "node3", start=5),
        ],
        {"node2"},
        id="DP/TestSelectBestCandidate/different priority, same number of victims, different start time for all pods",
    ),
]


@pytest.mark.parametrize(("node_names", "preemptor", "pods", "expected"), SB_CASES)
@pytest.mark.parametrize("offset", [0, 1, 2])
def test_select_best_candidate(
    node_names: list[str], preemptor: Pod, pods: list[Pod], expected: set[str], offset: int
) -> None:
    fw = _framework([FIT], [node(n) for n in node_names], pods, pre=[FIT])
    ev = fw.plugin("DefaultPreemption").evaluator
    ev.offset_source = lambda n: offset % n
    state = _state(fw, preemptor)
    off, num = ev.get_offset_and_num_candidates(len(node_names))
    candidates, _, _ = ev.dry_run_preemption(state, preemptor, fw.snapshot.node_infos, [], off, num)
    best = ev.select_candidate(candidates)
    assert best is not None and best.name in expected


def test_pick_one_node_rules_in_order() -> None:
    c = {
        "a": Candidate("a", [pod("x", LOW)], 1),
        "b": Candidate("b", [pod("y", MID)], 0),
        "c": Candidate("c", [pod("z", LOW)], 0),
    }
    assert pick_one_node_for_preemption(c) == "c"  # fewest PDB violations, then lowest top priority
    assert pick_one_node_for_preemption({}) == ""
    tie = {
        "n1": Candidate("n1", [pod("x", LOW, start=1)]),
        "n2": Candidate("n2", [pod("y", LOW, start=1)]),
    }
    assert pick_one_node_for_preemption(tie) == "n1"  # the first remaining candidate
    custom = pick_one_node_for_preemption(c, [lambda n: {"a": 5, "b": 1, "c": 1}[n]])
    assert custom == "a"


# --- TestCustomSelection / TestCustomOrdering (IsEligiblePod, MoreImportantPod) -------------------


def test_custom_is_eligible_pod() -> None:
    """DP/TestCustomSelection/filter for matching pod label: high priority."""
    pods = [
        pod("v1", MID, L, "node1", start=0, labels={"preemptible": "no"}),
        pod("v2", MID, L, "node2", start=0, labels={"preemptible": "yes"}),
        pod("v3", LOW, L, "node3", start=0, labels={"preemptible": "yes"}),
        pod("v4", LOW, L, "node4", start=0),
    ]
    fw = _framework([FIT], [node(f"node{i}") for i in range(1, 5)], pods, pre=[FIT])
    ev = fw.plugin("DefaultPreemption").evaluator
    ev.is_eligible_pod = lambda ni, victim, preemptor: (
        victim.pod.metadata.labels.get("preemptible") == "yes"
    )
    p = pod("p1", HIGH, L)
    got, _, _ = ev.dry_run_preemption(_state(fw, p), p, fw.snapshot.node_infos, [], 0, 4)
    assert _as_dict(got) == {"node2": (["v2"], 0), "node3": (["v3"], 0)}


def test_custom_more_important_pod() -> None:
    """DP/TestCustomOrdering/select alphabetically-last pods."""
    pods = [
        pod("foo", LOW, M, "node1", start=0),
        pod("bar", LOW, M, "node1", start=0),
        pod("baz", MID, M, "node1", start=0),
    ]
    fw = _framework([FIT], [node("node1")], pods, pre=[FIT])
    ev = fw.plugin("DefaultPreemption").evaluator
    ev.more_important_pod = lambda a, b: a.metadata.name < b.metadata.name
    p = pod("p2", HIGH, L)
    got, _, _ = ev.dry_run_preemption(_state(fw, p), p, fw.snapshot.node_infos, [], 0, 1)
    assert [v.metadata.name for v in got[0].victims] == ["baz", "foo"]


# --- TestPreempt ------------------------------------------------------------------------------------


class FakeExtender:
    """tf.FakeExtender's preemption side: keep the candidate nodes its predicate accepts."""

    def __init__(
        self,
        name: str,
        predicate: Callable[[str], bool],
        *,
        ignorable: bool = False,
        interested: bool = True,
    ) -> None:
        self.name = name
        self.predicate = predicate
        self.ignorable = ignorable
        self.interested = interested

    def supports_preemption(self) -> bool:
        return True

    def is_interested(self, pod: Pod) -> bool:
        return self.interested

    def is_ignorable(self) -> bool:
        return self.ignorable

    def process_preemption(
        self, pod: Pod, victims: dict[str, Candidate], snapshot: Any
    ) -> dict[str, Candidate]:
        return {n: c for n, c in victims.items() if self.predicate(n)}


def _error(n: str) -> bool:
    raise RuntimeError("some error")


BASIC_PODS = [
    pod("p1.1", LOW, S, "node1"),
    pod("p1.2", LOW, S, "node1"),
    pod("p2.1", HIGH, L, "node2"),
    pod("p3.1", MID, M, "node3"),
]
EXT_PODS = [
    pod("p1.1", MID, S, "node1"),
    pod("p1.2", LOW, S, "node1"),
    pod("p2.1", MID, L, "node2"),
]

PREEMPT_CASES = [
    pytest.param(
        make_pod("p").priority(HIGH).req(**VL).preemption_policy("PreemptLowerPriority").obj(),
        BASIC_PODS,
        ["node1", "node2", "node3"],
        [],
        "node1",
        ["p1.1", "p1.2"],
        id="DP/TestPreempt/basic preemption logic",
    ),
    pytest.param(
        make_pod("p").priority(HIGH).req(**VL).obj(),
        BASIC_PODS,
        ["node1", "node2", "node3"],
        [],
        "node1",
        ["p1.1", "p1.2"],
        id="DP/TestPreempt/PreemptionPolicy is nil",
    ),
    pytest.param(
        make_pod("p").priority(HIGH).req(**VL).preemption_policy("Never").obj(),
        BASIC_PODS,
        ["node1", "node2", "node3"],
        [],
        None,
        [],
        id="DP/TestPreempt/no preempting in pod",
    ),
    pytest.param(
        make_pod("p").priority(HIGH).req(**VL).obj(),
        [*EXT_PODS[:2], pod("p2.1", MID, L, "node3")],
        ["node1", "node2", "node3"],
        [
            FakeExtender("FakeExtender1", lambda n: True),
            FakeExtender("FakeExtender2", lambda n: n == "node1"),
        ],
        "node1",
        ["p1.1", "p1.2"],
        id="DP/TestPreempt/Scheduler extenders allow only node1, otherwise node3 would have been chosen",
    ),
    pytest.param(
        make_pod("p").priority(HIGH).req(**VL).obj(),
        EXT_PODS,
        ["node1", "node2", "node3"],
        [FakeExtender("FakeExtender1", lambda n: False)],
        None,
        [],
        id="DP/TestPreempt/Scheduler extenders do not allow any preemption",
    ),
    pytest.param(
        make_pod("p").priority(HIGH).req(**VL).obj(),
        EXT_PODS,
        ["node1", "node2", "node3"],
        [
            FakeExtender("FakeExtender1", _error, ignorable=True),
            FakeExtender("FakeExtender2", lambda n: n == "node1"),
        ],
        "node1",
        ["p1.1", "p1.2"],
        id="DP/TestPreempt/One scheduler extender allows only node1, the other returns error but ignorable. Only node1 would be chosen",
    ),
    pytest.param(
        make_pod("p").priority(HIGH).req(**VL).obj(),
        EXT_PODS,
        ["node1", "node2"],
        [
            FakeExtender("FakeExtender1", lambda n: n == "node1", interested=False),
            FakeExtender("FakeExtender2", lambda n: True),
        ],
        "node2",
        ["p2.1"],
        id="DP/TestPreempt/One scheduler extender allows only node1, but it is not interested in given pod, otherwise node1 would have been chosen",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize(
    ("preemptor", "pods", "node_names", "extenders", "want", "expected"), PREEMPT_CASES
)
async def test_preempt(
    preemptor: Pod,
    pods: list[Pod],
    node_names: list[str],
    extenders: list[Any],
    want: str | None,
    expected: list[str],
    async_preemption: bool,
) -> None:
    preemptor, pods = copy(preemptor), [copy(p) for p in pods]  # the rows are shared
    async with anyio.create_task_group() as tg:
        nodes = [node(n) for n in node_names]
        fh = FakeHandle(
            nodes,
            [preemptor, *pods],
            feature_gates={"SchedulerAsyncPreemption": async_preemption},
            extenders=extenders,
            task_group=tg,
        )
        fw = _framework([FIT], nodes, [preemptor, *pods], pre=[FIT], handle=fh)
        ev = fw.plugin("DefaultPreemption").evaluator
        statuses = {n: Status(Code.UNSCHEDULABLE) for n in node_names}
        res, st = await ev.preempt(_state(fw, preemptor), preemptor, statuses)
        assert st.is_success() or st.is_rejected()
        assert (res.nominated_node_name if res is not None else None) == want
    client = fw.handle.client
    deleted = sorted(name for _, name, _ in client.deleted)
    assert deleted == sorted(expected)
    patched = sorted(name for _, name, cond, _ in client.patched if cond is not None)
    assert patched == deleted
    for _, _, cond, _ in client.patched:
        assert (cond.type, cond.status, cond.reason, cond.message) == (
            "DisruptionTarget",
            "True",
            "PreemptionByScheduler",
            "default-scheduler: preempting to accommodate a higher priority pod",
        )
    assert sorted(e[0] for e in fh.events) == [f"default/{n}" for n in deleted]
    for _key, type_, reason, msg in fh.events:
        assert (type_, reason, msg) == (
            "Normal",
            "Preempted",
            f"Preempted by pod {preemptor.metadata.uid} on node {want}",
        )
    if want:
        assert fw.handle.metrics.preemptions == 1
        assert fw.handle.metrics.preemption_victims == [len(expected)]
    assert not ev.executor.preempting

    # The victims are terminating now: preempting again deletes nothing more.
    for p in pods:
        if p.metadata.name in expected:
            p.metadata.deletion_timestamp = t(1)
    if res is not None:
        preemptor.status.nominated_node_name = res.nominated_node_name
    client.deleted.clear()
    async with anyio.create_task_group() as tg:
        fh.task_group = tg
        res2, _ = await ev.preempt(_state(fw, preemptor), preemptor, {})
    assert client.deleted == []
    assert res2 is None or not res2.nominated_node_name


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("version", "code"),
    [
        # v1.35.4 framework/preemption/preemption.go: waitingPod.Reject → Unschedulable
        pytest.param("1.35", Code.UNSCHEDULABLE, id="1.35: rejected"),
        # 1.36 (kubernetes#135719): waitingPod.Preempt → Error, the victim goes to backoffQ
        pytest.param("1.36", Code.ERROR, id="1.36: preempted"),
    ],
)
async def test_preempt_rejects_a_waiting_victim(version: str, code: Code) -> None:
    """PreemptPod: a victim waiting on Permit is released, not deleted; the event is recorded."""
    from kubesched.runtime._framework import WaitingPod

    victim = pod("v", LOW, L, "node1")
    preemptor = pod("p", HIGH, L)
    nodes = [node("node1", {"cpu": "400m", "memory": "400"})]
    fh = FakeHandle(nodes, [victim, preemptor], emulated_version=version)
    fw = _framework([FIT], nodes, [victim, preemptor], pre=[FIT], handle=fh)
    wp = WaitingPod(victim, {"Gang": 60.0}, anyio.current_time())
    fw.waiting_pods[victim.metadata.uid] = wp
    res, st = await fw.plugin("DefaultPreemption").evaluator.preempt(
        _state(fw, preemptor), preemptor, {"node1": Status(Code.UNSCHEDULABLE)}
    )
    assert st.is_success() and res is not None and res.nominated_node_name == "node1"
    assert fw.handle.client.deleted == [] and fw.handle.client.patched == []
    out = await wp.wait()
    assert (
        out.code == code
        and out.reasons == ("preempted",)
        and out.plugin == "DefaultPreemption"
    )
    assert [e[2] for e in fh.events] == ["Preempted"]


@pytest.mark.anyio
async def test_sync_preemption_clears_lower_priority_nominations() -> None:
    from kubesched.runtime._nodeinfo import PodInfo

    victim = pod("v", LOW, L, "node1")
    preemptor = pod("p", HIGH, L)
    lower = make_pod("n").priority(MID).nominated_node("node1").obj()
    higher = make_pod("h").priority(VHIGH).nominated_node("node1").req(cpu="1m").obj()
    fw = _framework(
        [FIT],
        [node("node1", {"cpu": "400m", "memory": "400"})],
        [victim, preemptor, lower, higher],
        pre=[FIT],
    )
    fw.nominator.add(PodInfo(lower))
    fw.nominator.add(PodInfo(higher))
    res, st = await fw.plugin("DefaultPreemption").evaluator.preempt(
        _state(fw, preemptor), preemptor, {"node1": Status(Code.UNSCHEDULABLE)}
    )
    assert st.is_success()
    assert ("default", "n", None, "") in fw.handle.client.patched
    assert [pi.pod.metadata.name for pi in fw.nominator.for_node("node1")] == ["h"]


@pytest.mark.anyio
@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
async def test_lower_nominations_cleared_when_every_victim_is_terminating(
    async_preemption: bool,
) -> None:
    """Seed 000 ``prepareCandidateAsync``: the background task clears the nominatedNodeName of
    the lower-priority pods nominated to the chosen node first thing, before it looks at the
    victims; ``prepareCandidate`` clears them after its deletions.  So when the only victim is
    already terminating, both paths delete nothing and still clear the lower nomination (the
    higher one stays), and the async path leaves ``preempting`` again."""
    from kubesched.runtime._nodeinfo import PodInfo

    victim = pod("v", LOW, L, "node1")
    victim.metadata.deletion_timestamp = t(1)
    preemptor = pod("p", HIGH, L)
    lower = make_pod("n").priority(MID).nominated_node("node1").obj()
    higher = make_pod("h").priority(VHIGH).nominated_node("node1").req(cpu="1m").obj()
    async with anyio.create_task_group() as tg:
        nodes = [node("node1", {"cpu": "400m", "memory": "400"})]
        fh = FakeHandle(
            nodes,
            [victim, preemptor, lower, higher],
            feature_gates={"SchedulerAsyncPreemption": async_preemption},
            task_group=tg,
        )
        fw = _framework([FIT], nodes, [victim, preemptor, lower, higher], pre=[FIT], handle=fh)
        fw.nominator.add(PodInfo(lower))
        fw.nominator.add(PodInfo(higher))
        ev = fw.plugin("DefaultPreemption").evaluator
        res, st = await ev.preempt(
            _state(fw, preemptor), preemptor, {"node1": Status(Code.UNSCHEDULABLE)}
        )
        assert st.is_success() and res is not None and res.nominated_node_name == "node1"
    assert fw.handle.client.deleted == []
    assert [p for p in fw.handle.client.patched if p[2] is not None] == []  # no DisruptionTarget
    assert ("default", "n", None, "") in fw.handle.client.patched
    assert [pi.pod.metadata.name for pi in fw.nominator.for_node("node1")] == ["h"]
    assert not ev.executor.preempting
    assert fh.activated == []


@pytest.mark.anyio
async def test_async_preemption_failure_activates_the_preemptor() -> None:
    victims = [pod("v1", LOW, S, "node1"), pod("v2", LOW, S, "node1"), pod("v3", LOW, S, "node1")]
    preemptor = pod("p", HIGH, VL)
    async with anyio.create_task_group() as tg:
        fh = FakeHandle(
            [node("node1")],
            [*victims, preemptor],
            feature_gates={"SchedulerAsyncPreemption": True},
            task_group=tg,
        )
        fw = _framework([FIT], [node("node1")], [*victims, preemptor], pre=[FIT], handle=fh)
        fw.handle.client.fail["delete"] = {"v1"}
        ev = fw.plugin("DefaultPreemption").evaluator
        res, st = await ev.preempt(
            _state(fw, preemptor), preemptor, {"node1": Status(Code.UNSCHEDULABLE)}
        )
        assert st.is_success() and res is not None and res.nominated_node_name == "node1"
        assert ev.executor.preempting == {preemptor.metadata.uid}
    assert not ev.executor.preempting
    assert fh.activated == ["default/p"]
    # the first two failed (one of them errored), so the last victim was skipped
    assert "v3" not in [name for _, name, _ in fw.handle.client.deleted]


@pytest.mark.anyio
async def test_sync_preemption_error_is_returned() -> None:
    victim = pod("v", LOW, L, "node1")
    preemptor = pod("p", HIGH, L)
    fw = _framework(
        [FIT], [node("node1", {"cpu": "400m", "memory": "400"})], [victim, preemptor], pre=[FIT]
    )
    fw.handle.client.fail["delete"] = {"v"}
    res, st = await fw.plugin("DefaultPreemption").evaluator.preempt(
        _state(fw, preemptor), preemptor, {"node1": Status(Code.UNSCHEDULABLE)}
    )
    # prepareCandidate: framework.AsStatus(err), err being the client's own error
    assert res is None and st.code == Code.ERROR and st.message == "delete of default/v failed"
    assert fw.handle.metrics.preemptions == 0


def test_g7_preemption_to_resolve_pod_topology_spread() -> None:
    """G7 DP/TestDryRunPreemption/preemption to resolve pod topology spread filter failure."""
    from kubesched.api._objects import LabelSelector, LabelSelectorRequirement

    sel = LabelSelector(match_expressions=[LabelSelectorRequirement(key="foo", operator="Exists")])
    p = (
        make_pod("p")
        .priority(HIGH)
        .label("foo", "")
        .spread(1, "zone", "DoNotSchedule", sel)
        .spread(1, "hostname", "DoNotSchedule", sel)
        .obj()
    )
    init = [
        pod("pod-a1", MID, None, "node-a", labels={"foo": ""}),
        pod("pod-a2", LOW, None, "node-a", labels={"foo": ""}),
        pod("pod-b1", LOW, None, "node-b", labels={"foo": ""}),
        pod("pod-x1", HIGH, None, "node-x", labels={"foo": ""}),
        pod("pod-x2", HIGH, None, "node-x", labels={"foo": ""}),
    ]
    nodes = [node("node-a/zone1"), node("node-b/zone1"), node("node-x/zone2")]
    fw = _framework(["PodTopologySpread"], nodes, init, pre=["PodTopologySpread"])
    ev = fw.plugin("DefaultPreemption").evaluator
    counter = fw.plugin("FakeFilter")
    got, _, _ = ev.dry_run_preemption(_state(fw, p), p, fw.snapshot.node_infos, [], 0, 3)
    assert _as_dict(got) == {"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)}
    assert counter.calls == 5


def test_g6_pod_with_anti_affinity_is_preempted() -> None:
    """G6 DP/TestDryRunPreemption/pod with anti-affinity is preempted (plus InterPodAffinity)."""
    incoming = pod("p", HIGH, S, labels={"foo": ""})
    victim = make_pod("p1.1").priority(LOW).req(**S).node("node1").label("foo", "")
    victim.pod_anti_affinity("foo", None, "hostname", op="Exists")
    init = [
        victim.obj(),
        pod("p1.2", MID, S, "node1"),
        pod("p1.3", HIGH, S, "node1"),
        pod("p2", HIGH, S, "node2"),
    ]
    nodes = [node("node1/zone1"), node("node2/zone1")]
    fw = _framework([FIT, "InterPodAffinity"], nodes, init, pre=[FIT, "InterPodAffinity"])
    ev = fw.plugin("DefaultPreemption").evaluator
    got, _, _ = ev.dry_run_preemption(_state(fw, incoming), incoming, fw.snapshot.node_infos, [], 0, 2)
    assert _as_dict(got) == {"node1": (["p1.1"], 0)}


def test_fit_error_appends_the_post_filter_message_without_a_period() -> None:
    """Upstream pkg/scheduler/framework/types.go, FitError.Error() (v1.28 and later,
    kubernetes#117588): the PreFilter message or the histogram goes through SeparatorFormat
    " %v.", the PostFilterMsg through " %v" with no period of its own.  DefaultPreemption's
    message (itself a FitError text) ends in one ".", as kube-scheduler v1.28+ logs it
    ("... 4 No preemption victims found for incoming pod."); Coscheduling's "... even after
    PostFilter" ends in none."""
    from kubesched.runtime._status import Diagnosis, FitError

    d = Diagnosis(
        node_to_status={"n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu")},
        post_filter_msg="preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.",
    )
    assert str(FitError("default/p", 1, d)) == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod."
    )
    d = Diagnosis(
        pre_filter_msg="pre-filter pod w0 cannot find enough sibling pods",
        post_filter_msg="PodGroup default/gang gets rejected due to Pod w0 is unschedulable "
        "even after PostFilter",
    )
    assert str(FitError("default/w0", 2, d)) == (
        "0/2 nodes are available: pre-filter pod w0 cannot find enough sibling pods. "
        "PodGroup default/gang gets rejected due to Pod w0 is unschedulable even after PostFilter"
    )
