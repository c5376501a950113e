"""The scheduling cycle: node sampling (numFeasibleNodesToFind), selectHost, failure handling."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

import kubesched
from kubesched import Status, hookimpl, per_node_filter
from kubesched.config._config import ProfileConfig, SchedulerConfig
from kubesched.config._versions import Version, default_feature_gates
from kubesched.plugins import IN_TREE
from kubesched.runtime._framework import CycleState
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.scheduler._scheduler import Scheduler, num_feasible_nodes_to_find, select_host
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster


class TrueFilter:
    """Counts Filter calls; every node passes (upstream's st.TrueFilter / the call counter)."""

    name = "TrueFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.calls = 0
        self.reject: set[str] = set((args or {}).get("reject", ()))
        self.error: set[str] = set()

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: CycleState, pod: kubesched.Pod, node_info: kubesched.NodeInfo) -> Status | None:
        self.calls += 1
        if node_info.name in self.error:
            return Status(kubesched.Code.ERROR, "broken")
        if node_info.name in self.reject:
            return Status.unschedulable("rejected by TrueFilter")
        return None


class EqualPrioritizer:
    name = "EqualPrioritizer"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: kubesched.Pod, nodes: kubesched.NodeBatch) -> np.ndarray:
        return np.ones(len(nodes), dtype=np.int64)


def _scheduler(nodes: list[kubesched.Node], *, pct: int | None = None, reject: tuple[str, ...] = ()) -> Scheduler:
    registry = {**IN_TREE, "TrueFilter": TrueFilter, "EqualPrioritizer": EqualPrioritizer}
    prof = ProfileConfig(
        enabled={
            "queueSort": [("PrioritySort", 0)],
            "filter": [("TrueFilter", 0)],
            "score": [("EqualPrioritizer", 1)],
            "bind": [("DefaultBinder", 0)],
        },
        plugin_args={"TrueFilter": {"reject": list(reject)}},
        percentage_of_nodes_to_score=pct,
    )
    sched = Scheduler(FakeCluster(), SchedulerConfig(profiles=[prof]), registry=registry)
    for n in nodes:
        sched.handlers.on_node("ADDED", n)
    sched.snapshot.update(sched.cache)
    return sched


@pytest.mark.parametrize(
    ("pct", "nodes", "want"),
    [
        pytest.param(0, 10, 10, id="TestNumFeasibleNodesToFind › not set percentageOfNodesToScore and nodes number not more than 50 (B1)"),
        pytest.param(40, 10, 10, id="TestNumFeasibleNodesToFind › set percentageOfNodesToScore and nodes number not more than 50 (B2)"),
        pytest.param(0, 1000, 420, id="TestNumFeasibleNodesToFind › not set percentageOfNodesToScore and nodes number more than 50 (B3)"),
        pytest.param(40, 1000, 400, id="TestNumFeasibleNodesToFind › set percentageOfNodesToScore and nodes number more than 50 (B4)"),
        pytest.param(0, 6000, 300, id="TestNumFeasibleNodesToFind › not set percentageOfNodesToScore and nodes number more than 50*125 (B5)"),
        pytest.param(40, 6000, 2400, id="TestNumFeasibleNodesToFind › set percentageOfNodesToScore and nodes number more than 50*125 (B6)"),
    ],
)
def test_num_feasible_nodes_to_find(pct: int, nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(None, pct, nodes) == want
    # a profile's percentage overrides the global one
    assert num_feasible_nodes_to_find(pct, 17, nodes) == want


@pytest.mark.anyio
async def test_fair_evaluation_for_nodes() -> None:
    """S1 › TestFairEvaluationForNodes (B7): 500 nodes, 30 % → 150 per cycle, round robin."""
    nodes = [make_node(f"node-{i}").obj() for i in range(500)]
    sched = _scheduler(nodes, pct=30)
    fw = sched.profiles["default-scheduler"]
    pi = PodInfo(make_pod("p").obj())
    for i in range(2 * (500 // 150 + 1)):
        feasible, _ = await sched.scheduling.find_nodes_that_fit_pod(fw, CycleState(), pi)
        assert len(feasible) == 150
        assert sched.scheduling.next_start_node_index == (i + 1) * 150 % 500


@pytest.mark.anyio
async def test_filter_errors_count_only_where_a_sequential_evaluation_reaches() -> None:
    """Chunks may filter nodes past the one where enough feasible nodes are found (the first
    chunk is sized by the last pass rate): an error there is left out, as upstream evaluating
    node after node never gets to it; an error before it fails the cycle."""
    from kubesched.scheduler._schedule_one import _CycleError

    nodes = [make_node(f"node-{i}").obj() for i in range(500)]
    sched = _scheduler(nodes, pct=30)  # 150 feasible nodes to find
    fw = sched.profiles["default-scheduler"]
    true_filter = fw.plugin("TrueFilter")
    pi = PodInfo(make_pod("p").obj())
    true_filter.reject = {f"node-{i}" for i in range(499)}  # a pass rate of 1 in 500 ...
    await sched.scheduling.find_nodes_that_fit_pod(fw, CycleState(), pi)
    assert sched.scheduling.next_start_node_index == 0  # every node evaluated
    true_filter.reject = set()  # ... so the next attempt filters every node in one chunk
    true_filter.error = {"node-400"}
    true_filter.calls = 0
    feasible, _ = await sched.scheduling.find_nodes_that_fit_pod(fw, CycleState(), pi)
    assert true_filter.calls == 500
    assert feasible.names == [f"node-{i}" for i in range(150)]
    assert sched.scheduling.next_start_node_index == 150
    true_filter.error = {"node-160"}  # 10 nodes after the start: reached
    with pytest.raises(_CycleError, match="broken"):
        await sched.scheduling.find_nodes_that_fit_pod(fw, CycleState(), pi)


@pytest.mark.parametrize(
    ("nominated", "reject", "want_calls"),
    [
        pytest.param("node1", (), 1, id="TestPreferNominatedNodeFilterCallCounts › pod has the nominated node set, filter is called only once (B8)"),
        pytest.param("", (), 3, id="TestPreferNominatedNodeFilterCallCounts › pod without the nominated pod, filter is called for each node (B9)"),
        pytest.param("node1", ("node1",), 4, id="TestPreferNominatedNodeFilterCallCounts › nominated pod cannot pass the filter, filter is called for each node (B10)"),
    ],
)
@pytest.mark.anyio
async def test_prefer_nominated_node_filter_call_counts(nominated: str, reject: tuple[str, ...], want_calls: int) -> None:
    nodes = [make_node(f"node{i}").obj() for i in (1, 2, 3)]
    sched = _scheduler(nodes, reject=reject)
    fw = sched.profiles["default-scheduler"]
    pod = make_pod("p").priority(1000).nominated_node(nominated).obj()
    feasible, _ = await sched.scheduling.find_nodes_that_fit_pod(fw, CycleState(), PodInfo(pod))
    assert fw.plugins["TrueFilter"].calls == want_calls
    if nominated and not reject:
        assert feasible.names == ["node1"]


@pytest.mark.parametrize(
    ("scores", "acceptable"),
    [
        pytest.param({"m1.1": 1, "m2.1": 2}, {"m2.1"}, id="TestSelectHost › unique properly ordered scores (C1)"),
        pytest.param({"m1.1": 1, "m1.2": 2, "m1.3": 2, "m2.1": 2}, {"m1.2", "m1.3", "m2.1"}, id="TestSelectHost › equal scores (C2)"),
        pytest.param({"m1.1": 3, "m1.2": 3, "m2.1": 2, "m3.1": 1, "m1.3": 3}, {"m1.1", "m1.2", "m1.3"}, id="TestSelectHost › out of order scores (C3)"),
    ],
)
def test_select_host(scores: dict[str, int], acceptable: set[str]) -> None:
    names = list(scores)
    arr = np.array(list(scores.values()), dtype=np.int64)
    rng = random.Random(1)
    seen = Counter(select_host(names, arr, rng) for _ in range(3000))
    assert set(seen) == acceptable
    for name in acceptable:  # reservoir sampling: each tied node equally likely
        assert abs(seen[name] / 3000 - 1 / len(acceptable)) < 0.05


def test_select_host_empty() -> None:
    """TestSelectHost › empty priority list (C4)."""
    with pytest.raises(ValueError, match="empty priorityList"):
        select_host([], np.array([], dtype=np.int64), random.Random(0))


@pytest.mark.anyio
async def test_fit_error_message_counts_every_node() -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="1", memory="1Gi").obj() for i in range(3)]
    nodes.append(make_node("tainted").capacity(cpu="8", memory="8Gi").taint("dedicated", "gpu").obj())
    v = Version(1, 33)  # the taint named in the reason: v1.33.3 taint_toleration.go
    mp = kubesched.config._config.default_multi_point(None, v)
    prof = ProfileConfig(multi_point=[(n, w) for n, w in mp if n != "DefaultPreemption"])
    cfg = SchedulerConfig(profiles=[prof], emulated_version=v, feature_gates=default_feature_gates(v))
    sched = Scheduler(FakeCluster(), cfg)
    for n in nodes:
        sched.handlers.on_node("ADDED", n)
    fw = sched.profiles["default-scheduler"]
    pod = make_pod("big").req(cpu="2").obj()
    with pytest.raises(kubesched.FitError) as err:
        await sched.scheduling.schedule_pod(fw, CycleState(), PodInfo(pod))
    assert str(err.value) == (
        "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient cpu."
    )
