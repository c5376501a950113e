"""NodeResourcesBalancedAllocation (k/k ``noderesources/balanced_allocation_test.go``, cases E1–E7).

The ported expectations are the balance with the pod, as every release to 1.35 scores it; from
1.36 (kubernetes#135573) the score is the change the pod makes, ``50 + (50 + with - without) // 2``
(the 1.36 column, worked by hand for E2 and E3 in :func:`test_score_1_36`)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched import ConfigError, CycleState, NodeBatch
from kubesched.plugins.noderesources import new_balanced_allocation
from kubesched.plugins.noderesources._args import ResourceSpec
from kubesched.plugins.noderesources._resource_allocation import (
    NEWEST_RULES,
    pod_resource_request_list,
)
from kubesched.runtime._infos import PodInfo
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod

GPU = "nvidia.com/gpu"
CM = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})
CO = ({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})
CM_GPU = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: 3})
THREE = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 1}]}

_n = iter(range(10**9))


def pod(*containers: dict[str, Any]):
    b = make_pod(f"p{next(_n)}")
    for c in containers:
        b.req_list(c)
    return b.obj()


def node(name: str, cpu_m: int, mem: int, *pods, gpu: int | None = None):
    rl: dict[str, Any] = {"cpu": f"{cpu_m}m", "memory": mem}
    if gpu is not None:
        rl[GPU] = gpu
    return make_node_info(make_node(name).capacity_list(rl).obj(), *pods)


CASES = [
    pytest.param(None, pod(*CM), lambda: [node("n1", 4000, 10000), node("n2", 6000, 10000)], [87, 100],
                 id="E2 TestNodeResourcesBalancedAllocation › nothing scheduled, resources requested, differently sized nodes"),
    pytest.param(None, pod(*CM), lambda: [node("n1", 10000, 20000, pod(*CO)), node("n2", 10000, 20000, pod(*CM))], [82, 95],
                 id="E3 TestNodeResourcesBalancedAllocation › resources requested, pods scheduled with resources"),
    pytest.param(None, pod(*CM), lambda: [node("n1", 10000, 20000, pod(*CO)), node("n2", 10000, 50000, pod(*CM))], [82, 80],
                 id="E4 TestNodeResourcesBalancedAllocation › resources requested, pods scheduled with resources, differently sized nodes"),
    pytest.param(None, pod(*CO), lambda: [node("n1", 6000, 10000, pod(*CO)), node("n2", 6000, 10000, pod(*CM))], [50, 75],
                 id="E5 TestNodeResourcesBalancedAllocation › requested resources at node capacity"),
    pytest.param(THREE, pod({"memory": "0", GPU: 1}),
                 lambda: [node("n1", 3500, 40000, pod(*CM_GPU), gpu=8), node("n2", 3500, 40000, pod(*CM), gpu=8)], [70, 65],
                 id="E6 TestNodeResourcesBalancedAllocation › include scalar resource on a node for balanced resource allocation"),
    pytest.param(THREE, pod(*CM), lambda: [node("n1", 3500, 40000, gpu=8), node("n2", 3500, 40000)], [63, 63],
                 id="E7 TestNodeResourcesBalancedAllocation › node without the scalar resource should skip the scalar resource"),
]


@pytest.mark.parametrize(("args", "incoming", "nodes", "want"), CASES)
def test_score(args, incoming, nodes, want) -> None:
    plugin = new_balanced_allocation(args, FakeHandle(emulated_version="1.35"))
    state = CycleState()
    batch = NodeBatch.of(nodes())
    assert plugin.kubesched_pre_score(state, incoming, batch) is None
    assert plugin.kubesched_score(state, incoming, batch).tolist() == want


def test_best_effort_pod_skips() -> None:
    """E1 TestNodeResourcesBalancedAllocation › nothing scheduled, nothing requested, skip in PreScore."""
    plugin = new_balanced_allocation(None, FakeHandle())
    batch = NodeBatch.of([node("n1", 4000, 10000), node("n2", 4000, 10000)])
    st = plugin.kubesched_pre_score(CycleState(), make_pod("p").obj(), batch)
    assert st is not None and st.code == Code.SKIP


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        pytest.param({"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight", "Invalid value: 2: must be 1",
                     id="weight must be 1"),
        pytest.param({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, "resources[1].name", 'Duplicate value: "cpu"',
                     id="duplicate resource"),
    ],
)
def test_args_validation(args, field, message) -> None:
    with pytest.raises(ConfigError) as ei:
        new_balanced_allocation(args, FakeHandle())
    assert (ei.value.field, ei.value.message) == (field, message)


# 1.36: E2 n1 with the pod (cpu 3/4, memory 1/2) 87, without (0, 0) 100: 50 + (50 + 87 - 100) // 2 = 68;
# n2 100 with and without: 75.  E3 n1 with (0.6, 0.25) 82, without (0.3, 0) 85: 73; n2 with (0.6, 0.5)
# 95, without (0.3, 0.25) 97: 74.
V1_36 = {"E2": [68, 75], "E3": [73, 74], "E4": [73, 70], "E5": [62, 62], "E6": [75, 76], "E7": [56, 56]}


@pytest.mark.parametrize(("args", "incoming", "nodes", "want"), CASES)
def test_score_1_36(args, incoming, nodes, want, request: pytest.FixtureRequest) -> None:
    plugin = new_balanced_allocation(args, FakeHandle(emulated_version="1.36"))
    state = CycleState()
    batch = NodeBatch.of(nodes())
    assert plugin.kubesched_pre_score(state, incoming, batch) is None
    case = request.node.callspec.id[:2]
    assert plugin.kubesched_score(state, incoming, batch).tolist() == V1_36[case]
    # the score is the change: a pod that keeps a node's balance gets 75 there
    assert all(50 <= s <= 100 for s in V1_36[case])


def test_default_resources() -> None:
    plugin = new_balanced_allocation({"resources": [{"name": "cpu", "weight": 0}]}, None)
    assert [(r.name, r.weight) for r in plugin.resources] == [("cpu", 1)]
    assert [(r.name, r.weight) for r in new_balanced_allocation(None, FakeHandle()).resources] == [("cpu", 1), ("memory", 1)]


@pytest.mark.parametrize("which", ["NodeResourcesFit", "NodeResourcesBalancedAllocation"])
def test_scores_kept_per_snapshot_row_follow_every_change(which: str) -> None:
    """The scores a plugin keeps per snapshot row for a pod request it has seen (the pods of
    one template) are the batch's own scores after every change: pods bound and removed on
    the nodes (their rows recounted), a node added (a new node set)."""
    import random

    import numpy as np

    from kubesched.cache._cache import Cache, Snapshot
    from kubesched.plugins.noderesources import new_fit

    def plugin() -> Any:
        return new_fit(None, FakeHandle()) if which == "NodeResourcesFit" else new_balanced_allocation(None, FakeHandle())

    rng = random.Random(7)
    cache = Cache()
    names = [f"n{i}" for i in range(30)]
    for i, name in enumerate(names):
        cache.add_node(make_node(name).capacity(cpu=str(2 + i % 5), memory=f"{4 + i % 3}Gi", pods="110").obj())
    snap = Snapshot()
    kept = plugin()
    incoming = [make_pod("a").req(cpu="300m", memory="1Gi").obj(), make_pod("b").req(cpu="1", memory="200Mi").obj()]
    bound: list[str] = []
    for step in range(80):
        if step == 40:
            names.append("late")
            cache.add_node(make_node("late").capacity(cpu="3", memory="5Gi", pods="110").obj())
        elif bound and rng.random() < 0.3:
            cache.remove_pod(bound.pop(rng.randrange(len(bound))))
        else:
            cpu, mem = rng.randint(1, 900), rng.randint(1, 900)
            p = make_pod(f"p{step}").req(cpu=f"{cpu}m", memory=f"{mem}Mi").node(rng.choice(names)).obj()
            cache.add_pod(p)
            bound.append(p.metadata.uid)
        snap.update(cache)
        pod = incoming[step % 2]
        rows = np.array(sorted(rng.sample(range(len(snap)), 12)), dtype=np.int64)
        got, want = [], []
        for p, out in ((kept, got), (plugin(), want)):  # a new plugin: the batch's own scores
            batch = NodeBatch(snapshot=snap, indices=rows)
            state = CycleState()
            p.kubesched_pre_score(state, pod, batch)
            out.extend(p.kubesched_score(state, pod, batch).tolist())
        assert got == want, step
    assert any(e.scores is not None for e in kept._row_scores._entries.values())  # the kept path ran



@pytest.mark.parametrize("use_requested", [True, False])
def test_request_list_of_cpu_and_memory_read_off_the_pod_info(use_requested: bool) -> None:
    """``pod_resource_request_list(cpu_memory=True)`` (Fit's and BalancedAllocation's PreScore
    with the default resources) gives what the loop over the resources gives."""
    resources = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
    rng = random.Random(7)
    for i in range(50):
        b = make_pod(f"p{i}")
        if rng.random() < 0.5:
            b = b.req(cpu=f"{rng.randrange(0, 3000)}m")
        if rng.random() < 0.5:
            b = b.req(memory=f"{rng.randrange(0, 900)}Mi")
        pod = b.obj()
        state = CycleState()
        state.pod_info = PodInfo(pod)
        assert state.pod_info.rules == NEWEST_RULES  # (the PodInfo's requests are read)
        want = pod_resource_request_list(pod, resources, use_requested, NEWEST_RULES)
        assert pod_resource_request_list(pod, resources, use_requested, NEWEST_RULES, state) == want
        assert pod_resource_request_list(pod, resources, use_requested, NEWEST_RULES, state, cpu_memory=True) == want
