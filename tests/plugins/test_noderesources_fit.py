"""NodeResourcesFit: Filter (fitsRequest) and the three scoring strategies.

Ported from k/k ``pkg/scheduler/framework/plugins/noderesources``: fit_test.go (TestEnoughRequests,
TestNotEnoughRequests), least_allocated_test.go, most_allocated_test.go,
requested_to_capacity_ratio_test.go (cases D1–D19 of upstream-cases.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched import ConfigError, CycleState, Framework, NodeBatch, Status
from kubesched.plugins import IN_TREE
from kubesched.plugins._helper import build_broken_linear_function
from kubesched.plugins.noderesources import (
    FIT_NAME,
    Fit,
    InsufficientResource,
    fits_request,
    new_fit,
    parse_fit_args,
)
from kubesched.plugins.noderesources._args import (
    FitArgs,
    ResourceSpec,
    ScoringStrategy,
    validate_fit_args,
)
from kubesched.runtime._events import ActionType
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
SOURCE_EXACT = {"KubeschedSourceExact": True}  # the v1.34.7 source's codes (docs/versions.md)

_COUNTER = iter(range(10**9))


def _usage(cpu: int = 0, mem: int = 0, **scalars: int) -> dict[str, Any]:
    rl: dict[str, Any] = {"cpu": f"{cpu}m", "memory": mem}
    for k, v in scalars.items():
        rl[{"ext_a": EXT_A, "ext_b": EXT_B, "k8s_a": K8S_IO_A, "k8s_b": K8S_IO_B, "huge": HUGE_A, "eph": "ephemeral-storage"}[k]] = v
    return rl


def res_pod(*usages: dict[str, Any], init: tuple[dict[str, Any], ...] = (), overhead: dict[str, Any] | None = None):
    b = make_pod(f"p{next(_COUNTER)}")
    for u in usages:
        b.req_list(u)
    for u in init:
        b.init_req(u)
    if overhead:
        b.overhead(overhead)
    return b.obj()


def enough_node(*pods):
    """TestEnoughRequests' node: cpu 10m, memory 20, pods 32, aaa 5, ephemeral 20, hugepages 5."""
    node = make_node("machine").capacity_list(
        {"cpu": "10m", "memory": 20, "pods": 32, EXT_A: 5, "ephemeral-storage": 20, HUGE_A: 5}
    ).obj()
    return make_node_info(node, *pods)


def run_filter(plugin: Fit, pod, ni) -> Status | None:
    state = CycleState()
    assert plugin.kubesched_pre_filter(state, pod, []) is None
    out = plugin.kubesched_filter(state, pod, NodeBatch.of([ni]))
    return (out or {}).get(0)


U = Status.unschedulable
UU = Status.unresolvable
E = _usage

ENOUGH_REQUESTS = [
    pytest.param(res_pod(), [E(10, 20)], None, None, id="TestEnoughRequests › no resources requested always fits"),
    pytest.param(res_pod(E(1, 1)), [E(10, 20)], None, U("Insufficient cpu", "Insufficient memory"),
                 id="TestEnoughRequests › too many resources fails"),
    pytest.param(res_pod(E(1, 1), init=(E(3, 1),)), [E(8, 19)], None, U("Insufficient cpu"),
                 id="TestEnoughRequests › too many resources fails due to init container cpu"),
    pytest.param(res_pod(E(1, 1), init=(E(3, 1), E(2, 1))), [E(8, 19)], None, U("Insufficient cpu"),
                 id="TestEnoughRequests › too many resources fails due to highest init container cpu"),
    pytest.param(res_pod(E(1, 1), init=(E(1, 3),)), [E(9, 19)], None, U("Insufficient memory"),
                 id="TestEnoughRequests › too many resources fails due to init container memory"),
    pytest.param(res_pod(E(1, 1), init=(E(1, 3), E(1, 2))), [E(9, 19)], None, U("Insufficient memory"),
                 id="TestEnoughRequests › too many resources fails due to highest init container memory"),
    pytest.param(res_pod(E(1, 1), init=(E(1, 1),)), [E(9, 19)], None, None,
                 id="TestEnoughRequests › init container fits because it's the max, not sum, of containers and init containers"),
    pytest.param(res_pod(E(1, 1), init=(E(1, 1), E(1, 1))), [E(9, 19)], None, None,
                 id="TestEnoughRequests › multiple init containers fit because it's the max, not sum, of containers and init containers"),
    pytest.param(res_pod(E(1, 1)), [E(5, 5)], None, None, id="TestEnoughRequests › both resources fit"),
    pytest.param(res_pod(E(2, 1)), [E(9, 5)], None, U("Insufficient cpu"), id="TestEnoughRequests › one resource memory fits"),
    pytest.param(res_pod(E(1, 2)), [E(5, 19)], None, U("Insufficient memory"), id="TestEnoughRequests › one resource cpu fits"),
    pytest.param(res_pod(E(5, 1)), [E(5, 19)], None, None, id="TestEnoughRequests › equal edge case"),
    pytest.param(res_pod(E(4, 1), init=(E(5, 1),)), [E(5, 19)], None, None,
                 id="TestEnoughRequests › equal edge case for init container"),
    pytest.param(res_pod({EXT_A: 1}), [E()], None, None, id="TestEnoughRequests › extended resource fits"),
    pytest.param(res_pod(init=({EXT_A: 1},)), [E()], None, None,
                 id="TestEnoughRequests › extended resource fits for init container"),
    pytest.param(res_pod(E(1, 1, ext_a=10)), [E(0, 0, ext_a=0)], None, UU(f"Insufficient {EXT_A}"),
                 id="TestEnoughRequests › extended resource capacity enforced"),
    pytest.param(res_pod(init=(E(1, 1, ext_a=10),)), [E(0, 0, ext_a=0)], None, UU(f"Insufficient {EXT_A}"),
                 id="TestEnoughRequests › extended resource capacity enforced for init container"),
    pytest.param(res_pod(E(1, 1, ext_a=1)), [E(0, 0, ext_a=5)], None, U(f"Insufficient {EXT_A}"),
                 id="TestEnoughRequests › extended resource allocatable enforced"),
    pytest.param(res_pod(init=(E(1, 1, ext_a=1),)), [E(0, 0, ext_a=5)], None, U(f"Insufficient {EXT_A}"),
                 id="TestEnoughRequests › extended resource allocatable enforced for init container"),
    pytest.param(res_pod(E(1, 1, ext_a=3), E(1, 1, ext_a=3)), [E(0, 0, ext_a=2)], None, UU(f"Insufficient {EXT_A}"),
                 id="TestEnoughRequests › extended resource allocatable enforced for multiple containers"),
    pytest.param(res_pod(init=(E(1, 1, ext_a=3), E(1, 1, ext_a=3))), [E(0, 0, ext_a=2)], None, None,
                 id="TestEnoughRequests › extended resource allocatable admits multiple init containers"),
    pytest.param(res_pod(init=(E(1, 1, ext_a=6), E(1, 1, ext_a=3))), [E(0, 0, ext_a=2)], None, UU(f"Insufficient {EXT_A}"),
                 id="TestEnoughRequests › extended resource allocatable enforced for multiple init containers"),
    pytest.param(res_pod(E(1, 1, ext_b=1)), [E(0, 0)], None, UU(f"Insufficient {EXT_B}"),
                 id="TestEnoughRequests › extended resource allocatable enforced for unknown resource"),
    pytest.param(res_pod(init=(E(1, 1, ext_b=1),)), [E(0, 0)], None, UU(f"Insufficient {EXT_B}"),
                 id="TestEnoughRequests › extended resource allocatable enforced for unknown resource for init container"),
    pytest.param(res_pod(E(1, 1, k8s_a=10)), [E(0, 0)], None, UU(f"Insufficient {K8S_IO_A}"),
                 id="TestEnoughRequests › kubernetes.io resource capacity enforced"),
    pytest.param(res_pod(init=(E(1, 1, k8s_b=10),)), [E(0, 0)], None, UU(f"Insufficient {K8S_IO_B}"),
                 id="TestEnoughRequests › kubernetes.io resource capacity enforced for init container"),
    pytest.param(res_pod(E(1, 1, huge=10)), [E(0, 0, huge=0)], None, UU(f"Insufficient {HUGE_A}"),
                 id="TestEnoughRequests › hugepages resource capacity enforced"),
    pytest.param(res_pod(init=(E(1, 1, huge=10),)), [E(0, 0, huge=0)], None, UU(f"Insufficient {HUGE_A}"),
                 id="TestEnoughRequests › hugepages resource capacity enforced for init container"),
    pytest.param(res_pod(E(1, 1, huge=3), E(1, 1, huge=3)), [E(0, 0, huge=2)], None, UU(f"Insufficient {HUGE_A}"),
                 id="TestEnoughRequests › hugepages resource allocatable enforced for multiple containers"),
    pytest.param(res_pod(E(1, 1, ext_b=1)), [E(0, 0)], {"ignoredResources": [EXT_B]}, None,
                 id="TestEnoughRequests › skip checking ignored extended resource"),
    pytest.param(res_pod(E(1, 1), overhead={"cpu": "3m", "memory": "13"}), [E(5, 5)], None, None,
                 id="TestEnoughRequests › resources + pod overhead fits"),
    pytest.param(res_pod(E(1, 1), overhead={"cpu": "1m", "memory": "15"}), [E(5, 5)], None, U("Insufficient memory"),
                 id="TestEnoughRequests › requests + overhead does not fit for memory"),
    pytest.param(res_pod(E(1, 1, ext_b=1, k8s_a=1)), [E(0, 0)], {"ignoredResourceGroups": ["example.com"]},
                 UU(f"Insufficient {K8S_IO_A}"),
                 id="TestEnoughRequests › skip checking ignored extended resource via resource groups"),
    pytest.param(res_pod(E(1, 1, ext_a=0)), [E(0, 0, ext_a=6)], None, None,
                 id="TestEnoughRequests › skip checking extended resource request with quantity zero via resource groups"),
]


@pytest.mark.parametrize(("pod", "existing", "args", "want"), ENOUGH_REQUESTS)
def test_enough_requests(pod, existing, args, want) -> None:
    """v1.34.7 fit_test.go: the source's codes, which KubeschedSourceExact gives (without it a
    request above allocatable is Unschedulable, as issue 34 expects: see the per-version test)."""
    ni = enough_node(*(res_pod(u) for u in existing))
    got = run_filter(new_fit(args, FakeHandle(feature_gates=SOURCE_EXACT)), pod, ni)
    if want is None:
        assert got is None
    else:
        assert got is not None
        assert (got.code, got.reasons) == (want.code, want.reasons)


def test_fits_request_details() -> None:
    """TestEnoughRequests › wantInsufficientResources of two cases (requested / used / capacity)."""
    ni = enough_node(res_pod(E(10, 20)))
    plugin = new_fit(None, FakeHandle())
    got = fits_request(plugin_req(res_pod(E(1, 1))), ni, plugin.ignored)
    assert got == [
        InsufficientResource("cpu", "Insufficient cpu", 1, 10, 10),
        InsufficientResource("memory", "Insufficient memory", 1, 20, 20),
    ]
    ni = enough_node(res_pod(E(0, 0, ext_a=2)))
    got = fits_request(plugin_req(res_pod(E(1, 1, ext_a=3), E(1, 1, ext_a=3))), ni, plugin.ignored)
    assert got == [InsufficientResource(EXT_A, f"Insufficient {EXT_A}", 6, 2, 5, True)]


def plugin_req(pod):
    from kubesched import pod_requests

    return pod_requests(pod)


def _one_pod_node(*pods):
    node = make_node("machine").capacity_list({"cpu": "10m", "memory": 20, "pods": 1}).obj()
    return make_node_info(node, *pods)


NOT_ENOUGH = [
    pytest.param(res_pod(), E(10, 20),
                 id="TestNotEnoughRequests › even without specified resources, predicate fails when there's no space for additional pod"),
    pytest.param(res_pod(E(1, 1)), E(5, 5),
                 id="TestNotEnoughRequests › even if both resources fit, predicate fails when there's no space for additional pod"),
    pytest.param(res_pod(E(5, 1)), E(5, 19),
                 id="TestNotEnoughRequests › even for equal edge case, predicate fails when there's no space for additional pod"),
    pytest.param(res_pod(E(5, 1), init=(E(5, 1),)), E(5, 19),
                 id="TestNotEnoughRequests › even for equal edge case, predicate fails when there's no space for additional pod due to init container"),
]


@pytest.mark.parametrize(("pod", "existing"), NOT_ENOUGH)
def test_not_enough_requests(pod, existing) -> None:
    """Allocatable pods 1 and one pod already there: only "Too many pods", Unschedulable."""
    got = run_filter(new_fit(None, FakeHandle()), pod, _one_pod_node(res_pod(existing)))
    assert got is not None
    assert (got.code, got.reasons) == (Code.UNSCHEDULABLE, ("Too many pods",))


def test_filter_batch_statuses_per_node() -> None:
    """A batch gets one status per failing node, each with that node's reasons and code."""
    nodes = [
        make_node_info(make_node("a").capacity(cpu="1", memory="1Gi").obj()),
        make_node_info(make_node("b").capacity(cpu="4", memory="1Gi").obj(), make_pod("x").req(cpu="3500m").obj()),
        make_node_info(make_node("c").capacity(cpu="4", memory="8Gi").obj()),
        make_node_info(make_node("d").capacity(cpu="4", memory="512Mi").obj()),
    ]
    pod = make_pod("p").req(cpu="2", memory="1Gi").obj()
    plugin = new_fit(None, FakeHandle(feature_gates=SOURCE_EXACT))
    state = CycleState()
    plugin.kubesched_pre_filter(state, pod, [])
    out = plugin.kubesched_filter(state, pod, NodeBatch.of(nodes))
    assert sorted(out) == [0, 1, 3]
    assert (out[0].code, out[0].reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Insufficient cpu",))
    assert (out[1].code, out[1].reasons) == (Code.UNSCHEDULABLE, ("Insufficient cpu",))
    assert (out[3].code, out[3].reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Insufficient memory",))


def test_filter_without_prefilter_is_error() -> None:
    plugin = new_fit(None, FakeHandle())
    out = plugin.kubesched_filter(CycleState(), make_pod("p").obj(), NodeBatch.of([enough_node()]))
    assert out[0].code == Code.ERROR
    # upstream fit.go getPreFilterState: fmt.Errorf("error reading %q from cycleState: %w", ..., ErrNotFound)
    assert out[0].message == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'


# --- scoring ---------------------------------------------------------------------------------

P2 = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})


def _pod(*containers: dict[str, Any], name: str = "incoming"):
    b = make_pod(name)
    for c in containers:
        b.req_list(c)
    return b.obj()


def e0(i: int = 0):
    return _pod({"cpu": "3000m", "memory": "0"}, name=f"e0-{i}")


def e5(i: int = 0):
    return _pod({"cpu": "3000m", "memory": "5000"}, name=f"e5-{i}")


def empty(i: int = 0):
    return make_pod(f"empty-{i}").obj()


def node(name: str, cpu_m: int | None, mem: int | None, *pods, **scalars: int):
    rl: dict[str, Any] = {}
    if cpu_m is not None:
        rl["cpu"] = f"{cpu_m}m"
    if mem is not None:
        rl["memory"] = mem
    rl.update({k.replace("_", "/").replace("intel/com", "intel.com"): v for k, v in scalars.items()})
    return make_node_info(make_node(name).capacity_list(rl).obj(), *pods)


def score(args: dict[str, Any] | None, pod, nodes) -> list[int]:
    plugin = new_fit(args, FakeHandle())
    state = CycleState()
    batch = NodeBatch.of(nodes)
    assert plugin.kubesched_pre_score(state, pod, batch) is None
    return plugin.kubesched_score(state, pod, batch).tolist()


def strategy(type_: str, resources: list[tuple[str, int]] | None = None, shape=None) -> dict[str, Any]:
    ss: dict[str, Any] = {"type": type_}
    if resources is not None:
        ss["resources"] = [{"name": n, "weight": w} for n, w in resources]
    if shape is not None:
        ss["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    return {"scoringStrategy": ss}


LEAST = strategy("LeastAllocated", [("cpu", 1), ("memory", 1)])
MOST = strategy("MostAllocated", [("cpu", 1), ("memory", 1)])

SCORE_CASES = [
    pytest.param(LEAST, make_pod("p").obj(), lambda: [node("n1", 4000, 10000), node("n2", 4000, 10000)], [100, 100],
                 id="D1 TestLeastAllocatedScoringStrategy › nothing scheduled, nothing requested"),
    pytest.param(MOST, make_pod("p").obj(), lambda: [node("n1", 4000, 10000), node("n2", 4000, 10000)], [0, 0],
                 id="D1 TestMostAllocatedScoringStrategy › nothing scheduled, nothing requested"),
    pytest.param(LEAST, _pod(*P2), lambda: [node("n1", 4000, 10000), node("n2", 6000, 10000)], [37, 50],
                 id="D2 TestLeastAllocatedScoringStrategy › nothing scheduled, resources requested, differently sized nodes"),
    pytest.param(MOST, _pod(*P2), lambda: [node("n1", 4000, 10000), node("n2", 6000, 10000)], [62, 50],
                 id="D2 TestMostAllocatedScoringStrategy › nothing scheduled, resources requested, differently sized nodes"),
    pytest.param(LEAST, make_pod("p").obj(),
                 lambda: [node("n1", 4000, 10000, empty(1), empty(2)), node("n2", 4000, 10000, empty(3), empty(4))],
                 [100, 100], id="D3 TestLeastAllocatedScoringStrategy › no resources requested, pods scheduled"),
    pytest.param(LEAST, make_pod("p").obj(),
                 lambda: [node("n1", 10000, 20000, e0(1), e0(2)), node("n2", 10000, 20000, e0(3), e5(4))],
                 [70, 57], id="D4 TestLeastAllocatedScoringStrategy › no resources requested, pods scheduled with resources"),
    pytest.param(MOST, make_pod("p").obj(),
                 lambda: [node("n1", 10000, 20000, e0(1), e0(2)), node("n2", 10000, 20000, e0(3), e5(4))],
                 [30, 42], id="D4 TestMostAllocatedScoringStrategy › no resources requested, pods scheduled with resources"),
    pytest.param(LEAST, _pod(*P2), lambda: [node("n1", 10000, 20000, e0()), node("n2", 10000, 20000, e5())], [57, 45],
                 id="D5 TestLeastAllocatedScoringStrategy › resources requested, pods scheduled with resources"),
    pytest.param(MOST, _pod(*P2), lambda: [node("n1", 10000, 20000, e0()), node("n2", 10000, 20000, e5())], [42, 55],
                 id="D5 TestMostAllocatedScoringStrategy › resources requested, pods scheduled with resources"),
    pytest.param(LEAST, _pod(*P2), lambda: [node("n1", 10000, 20000, e0()), node("n2", 10000, 50000, e5())], [57, 60],
                 id="D6 TestLeastAllocatedScoringStrategy › resources requested, pods scheduled with resources, differently sized nodes"),
    pytest.param(LEAST, _pod({"cpu": "3000m", "memory": "0"}),
                 lambda: [node("n1", 4000, 10000, e0()), node("n2", 4000, 10000, e5())], [50, 25],
                 id="D7 TestLeastAllocatedScoringStrategy › requested resources exceed node capacity"),
    pytest.param(LEAST, make_pod("p").obj(), lambda: [node("n1", None, None, e0()), node("n2", None, None, e5())], [0, 0],
                 id="D8 TestLeastAllocatedScoringStrategy › zero node resources, pods scheduled with resources"),
    pytest.param(strategy("LeastAllocated", [("memory", 2), ("cpu", 1)]), _pod(*P2),
                 lambda: [node("n1", 4000, 10000), node("n2", 6000, 10000)], [41, 50],
                 id="D9 TestLeastAllocatedScoringStrategy › nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes"),
    pytest.param(strategy("MostAllocated", [("memory", 2), ("cpu", 1)]), _pod(*P2),
                 lambda: [node("n1", 4000, 10000), node("n2", 6000, 10000)], [58, 50],
                 id="D9 TestMostAllocatedScoringStrategy › nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes"),
    pytest.param(MOST, _pod({"cpu": "2000m", "memory": "4000"}, {"cpu": "3000m", "memory": "5000"}),
                 lambda: [node("n1", 5000, 10000), node("n2", 10000, 9000)], [95, 75],
                 id="D10 TestMostAllocatedScoringStrategy › resources requested equal node capacity"),
    pytest.param(MOST, make_pod("p").container().obj(),
                 lambda: [
                     make_node_info(make_node("n1").capacity(cpu="250m", memory="1000Mi").obj(),
                                    make_pod("a").container().obj(), make_pod("b").container().obj()),
                     make_node_info(make_node("n2").capacity(cpu="250m", memory="1000Mi").obj()),
                 ],
                 [80, 30], id="D11 TestMostAllocatedScoringStrategy › no resources requested, pods scheduled, nonzero request for resource"),
    pytest.param(strategy("MostAllocated", [("cpu", 1), ("memory", 1), ("intel.com/foo", 1)]),
                 _pod({"cpu": "3000m", "memory": "5000", "intel.com/foo": 2}),
                 lambda: [node("n1", 6000, 10000, intel_com_foo=4), node("n2", 6000, 10000, intel_com_foo=10)], [50, 40],
                 id="D12 TestMostAllocatedScoringStrategy › honor extended resource if the pod request"),
    pytest.param(strategy("MostAllocated", [("intel.com/foo", 2), ("cpu", 1), ("memory", 1)]),
                 _pod({"cpu": "3000m", "memory": "4000"}),
                 lambda: [node("n1", 6000, 10000), node("n2", 6000, 10000, intel_com_foo=4)], [45, 45],
                 id="D13 TestMostAllocatedScoringStrategy › if the node doesn't have a resource"),
    pytest.param(strategy("RequestedToCapacityRatio", [("cpu", 1), ("memory", 1)], [(0, 10), (100, 0)]), _pod(*P2),
                 lambda: [node("n1", 4000, 10000, empty(1), empty(2)), node("n2", 6000, 10000, empty(3), empty(4))],
                 [38, 50], id="D15 TestRequestedToCapacityRatioScoringStrategy › nothing scheduled, resources requested, differently sized nodes"),
    pytest.param(strategy("RequestedToCapacityRatio", [("cpu", 1), ("memory", 1)], [(0, 10), (100, 0)]),
                 make_pod("p").obj(),
                 lambda: [node("n1", 4000, 10000, e5(1)), node("n2", 6000, 10000, e5(2))],
                 [38, 50], id="D16 TestRequestedToCapacityRatioScoringStrategy › no resources requested, pods scheduled with resources"),
    pytest.param(strategy("RequestedToCapacityRatio", [("intel.com/foo", 1)], [(0, 0), (100, 1)]),
                 _pod({"intel.com/foo": 2}),
                 lambda: [node("n1", 4000, 10000, intel_com_foo=8), node("n2", 4000, 10000, intel_com_foo=4)],
                 [2, 5], id="D19 TestResourceBinPackingSingleExtended › nothing scheduled, resources requested"),
    pytest.param(strategy("RequestedToCapacityRatio", [("intel.com/foo", 1)], [(0, 0), (100, 1)]),
                 _pod({"intel.com/foo": 2}),
                 lambda: [node("n1", 4000, 10000, intel_com_foo=8),
                          node("n2", 4000, 10000, _pod({"intel.com/foo": 2}, name="x"), intel_com_foo=4)],
                 [2, 10], id="D19 TestResourceBinPackingSingleExtended › resources requested, pods scheduled with resources"),
]


@pytest.mark.parametrize(("args", "pod", "nodes", "want"), SCORE_CASES)
def test_score(args, pod, nodes, want) -> None:
    assert score(args, pod, nodes()) == want


@pytest.mark.parametrize(
    ("strategy_type", "weight"),
    [
        pytest.param(t, w, id=f"D14 Test{t}ScoringStrategy › resource with {label} weight")
        for t in ("LeastAllocated", "MostAllocated")
        for w, label in ((-1, "negative"), (0, "zero"), (101, "greater than 100"))
    ],
)
def test_invalid_weight(strategy_type: str, weight: int) -> None:
    """D14: validation on the (internal, already defaulted) args, as the upstream test does."""
    args = FitArgs(scoring_strategy=ScoringStrategy(strategy_type, [ResourceSpec("cpu", weight), ResourceSpec("memory", 1)]))
    with pytest.raises(ConfigError) as ei:
        validate_fit_args(args)
    assert ei.value.field == "scoringStrategy.resources[0].weight"
    assert str(ei.value) == (
        f"scoringStrategy.resources[0].weight: Invalid value: {weight}: "
        "resource weight of cpu not in valid range (0, 100]"
    )


@pytest.mark.parametrize("weight", [-1, 101])
def test_invalid_weight_from_config(weight: int) -> None:
    with pytest.raises(ConfigError) as ei:
        new_fit(strategy("MostAllocated", [("memory", 1), ("cpu", weight)]), FakeHandle())
    assert ei.value.field == "scoringStrategy.resources[1].weight"


def test_v1_defaulting() -> None:
    """v1 defaults: no args → LeastAllocated cpu:1 memory:1; a YAML weight of 0 becomes 1."""
    args = parse_fit_args(None)
    assert args.scoring_strategy.type == "LeastAllocated"
    assert [(r.name, r.weight) for r in args.scoring_strategy.resources] == [("cpu", 1), ("memory", 1)]
    args = parse_fit_args(strategy("MostAllocated", [("cpu", 0)]))
    assert [(r.name, r.weight) for r in args.scoring_strategy.resources] == [("cpu", 1)]
    args = parse_fit_args({"scoringStrategy": {"type": "MostAllocated"}})
    assert [(r.name, r.weight) for r in args.scoring_strategy.resources] == [("cpu", 1), ("memory", 1)]


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        pytest.param({"scoringStrategy": {"type": "Foo"}}, "scoringStrategy.type",
                     'Unsupported value: "Foo": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
                     id="unsupported strategy"),
        pytest.param(strategy("RequestedToCapacityRatio", None, [(60, 10), (50, 0)]), "scoringStrategy.shape[1].utilization",
                     "Invalid value: 50: values must be sorted in increasing order", id="shape not sorted"),
        pytest.param(strategy("RequestedToCapacityRatio", None, [(0, 11)]), "scoringStrategy.shape[0].score",
                     "Invalid value: 11: not in valid range [0, 10]", id="shape score out of range"),
        pytest.param(strategy("RequestedToCapacityRatio", None, [(101, 1)]), "scoringStrategy.shape[0].utilization",
                     "Invalid value: 101: not in valid range [0, 100]", id="shape utilization out of range"),
        pytest.param(strategy("RequestedToCapacityRatio", None, []), "scoringStrategy.shape",
                     "Required value: at least one point must be specified", id="empty shape"),
        pytest.param({"ignoredResourceGroups": ["example.com/aaa"]}, "ignoredResourceGroups[0]",
                     "Invalid value: \"example.com/aaa\": resource group name can't contain '/'", id="group with slash"),
    ],
)
def test_args_validation(args, field, message) -> None:
    with pytest.raises(ConfigError) as ei:
        new_fit(args, FakeHandle())
    assert (ei.value.field, ei.value.message) == (field, message)


@pytest.mark.parametrize(
    ("points", "values"),
    [
        pytest.param([(10, 1), (90, 9)],
                     {-10: 1, 0: 1, 9: 1, 10: 1, 15: 1, 19: 1, 20: 2, 89: 8, 90: 9, 99: 9, 100: 9, 110: 9},
                     id="D17 TestBrokenLinearFunction › two points"),
        pytest.param([(0, 2), (40, 10), (100, 0)],
                     {-10: 2, 0: 2, 20: 6, 30: 8, 40: 10, 70: 5, 100: 0, 110: 0},
                     id="D18 TestBrokenLinearFunction › three points"),
    ],
)
def test_broken_linear_function(points, values) -> None:
    f = build_broken_linear_function(points)
    for p, want in values.items():
        assert f(p) == want, p
    arr = np.array(list(values), dtype=np.int64)
    assert f(arr).tolist() == list(values.values())


def test_events_and_hints() -> None:
    plugin = new_fit(None, FakeHandle())
    evs = plugin.kubesched_events_to_register()
    assert evs[0].event.action & ActionType.DELETE
    assert evs[1].event.action == ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
    pod = make_pod("p").req(cpu="2").obj()
    assigned = make_pod("a").node("n1").obj()
    unassigned = make_pod("u").obj()
    assert evs[0].hint(pod, assigned, None) == 1
    assert evs[0].hint(pod, unassigned, None) == 0
    small = make_node("n").capacity(cpu="1").obj()
    big = make_node("n").capacity(cpu="4").obj()
    assert evs[1].hint(pod, None, small) == 0
    assert evs[1].hint(pod, None, big) == 1
    assert evs[1].hint(pod, big, big) == 0
    assert evs[1].hint(pod, small, big) == 1


def test_framework_integration() -> None:
    """Through the runtime: Filter reasons and weighted Score with the default profile weights."""
    fw = Framework(
        "default-scheduler",
        {
            "queueSort": [("PrioritySort", 1)],
            "preFilter": [(FIT_NAME, 1)],
            "filter": [(FIT_NAME, 1)],
            "preScore": [(FIT_NAME, 1)],
            "score": [(FIT_NAME, 1)],
            "bind": [("DefaultBinder", 1)],
        },
        IN_TREE,
    )
    nodes = NodeBatch.of([node("n1", 4000, 10000), node("n2", 6000, 10000), node("n3", 2000, 10000)])
    pod = _pod(*P2)
    state = CycleState()
    _, st, _ = fw.run_pre_filter_plugins(state, pod, list(nodes))
    assert st is None
    failed = fw.run_filter_plugins(state, pod, nodes)
    assert list(failed) == [2]
    assert failed[2].plugin == FIT_NAME and failed[2].reasons == ("Insufficient cpu",)
    ok = nodes.subset(np.array([0, 1]))
    assert fw.run_pre_score_plugins(state, pod, ok) is None
    total, _, err = fw.run_score_plugins(state, pod, ok)
    assert err is None and total.tolist() == [37, 50]


def test_cycle_state_errors_read_as_upstream() -> None:
    """The plugins' errors when their PreFilter / PreScore did not run: upstream's texts
    (``framework.ErrNotFound`` is "not found"), checked whole."""
    import pytest

    from kubesched.plugins.interpodaffinity import InterPodAffinity
    from kubesched.plugins.nodeports import NodePorts
    from kubesched.plugins.tainttoleration import TaintToleration

    pod = make_pod("p").host_port(8080).obj()
    out = NodePorts(None, FakeHandle()).kubesched_filter(CycleState(), pod, NodeBatch.of([enough_node()]))
    assert out is not None
    assert out[0].message == 'reading "PreFilterNodePorts" from cycleState: not found'
    with pytest.raises(ValueError) as raised:
        TaintToleration(None, FakeHandle()).kubesched_score(CycleState(), pod, NodeBatch.of([enough_node()]))
    assert str(raised.value) == 'failed to read "PreScoreTaintToleration" from cycleState: not found'
    with pytest.raises(ValueError) as raised:
        InterPodAffinity(None, FakeHandle()).kubesched_score(CycleState(), pod, NodeBatch.of([enough_node()]))
    assert str(raised.value) == 'failed to read "PreScoreInterPodAffinity" from cycleState: not found'


def test_the_float_fast_paths_equal_the_integer_strategies() -> None:
    """LeastAllocated and BalancedAllocation over cpu and memory take a float path (exact below
    EXACT_LIMIT): the same scores as the integer arithmetic, on random nodes up to the limit."""
    from kubesched.plugins.noderesources._resource_allocation import (
        EXACT_LIMIT,
        balanced_change_fast,
        balanced_change_one,
        balanced_change_two,
        balanced_fast,
        balanced_one,
        balanced_resource_scorer,
        balanced_two,
        least_requested_fast,
        least_requested_one,
        least_requested_one_of,
        least_requested_two_of,
        least_resource_scorer,
    )

    rng = np.random.default_rng(1)
    for trial in range(400):
        k, n = int(rng.integers(1, 3)), int(rng.integers(1, 40))
        top = [10, 4000, 2**35, EXACT_LIMIT - 1][trial % 4]
        alloc = rng.integers(1, top + 1, size=(k, n), dtype=np.int64)
        req = rng.integers(0, 2 * top + 2, size=(k, n), dtype=np.int64)
        if trial % 3 == 0:
            req = np.minimum(req, alloc)
        specs = [ResourceSpec(["cpu", "memory"][i], int(rng.integers(1, 101)) if trial % 2 else 1) for i in range(k)]
        want = least_resource_scorer(specs)(list(req), list(alloc))
        assert least_requested_fast(specs, req, alloc).tolist() == want.tolist()
        fast = balanced_fast(req, alloc)
        assert fast is not None
        assert fast.tolist() == balanced_resource_scorer(list(req), list(alloc)).tolist()
        # RowScores recounts a few changed rows one by one: the same scores node by node
        for j in range(n):
            r, c = req[:, j].tolist(), alloc[:, j].tolist()
            assert least_requested_one(specs, r, c) == want[j]
            assert least_requested_one_of(specs)(r, c) == want[j]
            assert balanced_one(r, c) == fast[j]
            two = least_requested_two_of(specs)
            if k == 2:  # (RowScores' compute_two: the four ints one by one)
                assert two is not None and two(*r, *c, (0, 0)) == want[j]
                assert balanced_two(*r, *c, (0, 0)) == fast[j]
            else:
                assert two is None
        # 1.36's change in balance: ``50 + (50 + with - without) // 2``, arrays and one by one
        pod = np.minimum(rng.integers(0, top + 1, size=(k, 1), dtype=np.int64), req.min(axis=1, keepdims=True))
        change = balanced_change_fast(req, alloc, pod)
        assert change is not None
        without = balanced_resource_scorer(list(req - pod), list(alloc))
        assert change.tolist() == (50 + (50 + fast - without) // 2).tolist()
        for j in range(n):
            r, c = req[:, j].tolist(), alloc[:, j].tolist()
            assert balanced_change_one(r, c, tuple(pod[:, 0].tolist())) == change[j]
            if k == 2:
                assert balanced_change_two(*r, *c, tuple(pod[:, 0].tolist())) == change[j]


def _fit_at(version: str, args: Any = None, source_exact: bool = False) -> Fit:
    from kubesched.testing import framework_for

    fw = framework_for({"preFilter": [FIT_NAME], "filter": [FIT_NAME]}, plugin_args={FIT_NAME: args or {}},
                       emulated_version=version, feature_gates=SOURCE_EXACT if source_exact else None)  # fmt: skip
    plugin: Fit = fw.plugin(FIT_NAME)
    return plugin


@pytest.mark.parametrize(
    ("version", "source_exact"),
    [*((v, False) for v in ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36")),
     *((v, True) for v in ("1.34", "1.35", "1.36"))],
)  # fmt: skip
@pytest.mark.parametrize(("pod", "existing", "args", "want"), ENOUGH_REQUESTS)
def test_enough_requests_per_version(version: str, source_exact: bool, pod, existing, args, want) -> None:
    """TestEnoughRequests at each version: a request above the node's allocatable is
    Unschedulable (v1.30.6 … v1.33.3 fit.go: fitsRequest has no Unresolvable), at 1.34-1.36 too
    as issue 34 expects; with KubeschedSourceExact it is UnschedulableAndUnresolvable, as the
    v1.34.7 and v1.35.4 sources have it (fit.go, kubernetes#131345)."""
    ni = enough_node(*(res_pod(u) for u in existing))
    got = run_filter(_fit_at(version, args, source_exact), pod, ni)
    if want is None:
        assert got is None
        return
    code = want.code if source_exact else Code.UNSCHEDULABLE
    assert got is not None
    assert (got.code, got.reasons) == (code, want.reasons)


@pytest.mark.parametrize(
    ("version", "source_exact", "code"),
    [("1.33", False, Code.UNSCHEDULABLE), ("1.34", False, Code.UNSCHEDULABLE), ("1.36", False, Code.UNSCHEDULABLE),
     ("1.34", True, Code.UNSCHEDULABLE_AND_UNRESOLVABLE), ("1.36", True, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)],
)  # fmt: skip
def test_filter_batch_above_allocatable_per_version(version: str, source_exact: bool, code: Code) -> None:
    """The batch path (several nodes) answers as the one-node path at each version."""
    nodes = [make_node_info(make_node(n).capacity(cpu="1", memory="1Gi").obj()) for n in ("a", "b")]
    pod = make_pod("p").req(cpu="2").obj()
    plugin = _fit_at(version, source_exact=source_exact)
    state = CycleState()
    plugin.kubesched_pre_filter(state, pod, [])
    out = plugin.kubesched_filter(state, pod, NodeBatch.of(nodes))
    assert {i: (s.code, s.reasons) for i, s in out.items()} == {i: (code, ("Insufficient cpu",)) for i in (0, 1)}


def test_room_kept_per_snapshot_row_follows_every_change() -> None:
    """The room the Filter keeps per snapshot row for a request it has seen (RowFits: the pods
    of one template) answers as the batch's own columns do after every change: pods bound and
    removed (a few rows, or many at once), a node added (a new node set), nodes filling up so
    that some are short (then the batch's columns give the reasons)."""
    import random

    from kubesched.cache._cache import Cache, Snapshot

    def verdicts(plugin: Fit, pod: Any, batch: NodeBatch) -> dict[int, tuple[Code, tuple[str, ...]]]:
        state = CycleState()
        plugin.kubesched_pre_filter(state, pod, batch)
        out = plugin.kubesched_filter(state, pod, batch)
        return {} if out is None else {int(i): (st.code, st.reasons) for i, st in out.items()}

    rng = random.Random(11)
    cache = Cache()
    names = [f"n{i}" for i in range(30)]
    for i, name in enumerate(names):
        cache.add_node(make_node(name).capacity(cpu=str(2 + i % 3), memory=f"{3 + i % 2}Gi", pods="12").obj())
    snap = Snapshot()
    kept = new_fit(None, FakeHandle())
    incoming = [make_pod("a").req(cpu="300m", memory="512Mi").obj(), make_pod("b").req(cpu="1", memory="200Mi").obj()]
    bound: list[str] = []
    kept_path = short_seen = 0
    for step in range(160):
        if step == 60:
            names.append("late")
            cache.add_node(make_node("late").capacity(cpu="3", memory="5Gi", pods="12").obj())
        for _ in range(12 if step % 17 == 0 else 1):  # sometimes many rows change between looks
            if bound and rng.random() < 0.25:
                cache.remove_pod(bound.pop(rng.randrange(len(bound))))
            else:
                cpu, mem = rng.randint(1, 700), rng.randint(1, 700)
                p = make_pod(f"p{step}-{len(bound)}").req(cpu=f"{cpu}m", memory=f"{mem}Mi").node(rng.choice(names)).obj()
                cache.add_pod(p)
                bound.append(p.metadata.uid)
        snap.update(cache)
        pod = incoming[step % 2]
        rows = np.array(sorted(rng.sample(range(len(snap)), 12)), dtype=np.int64)
        got = verdicts(kept, pod, NodeBatch(snapshot=snap, indices=rows))
        want = verdicts(new_fit(None, FakeHandle()), pod, NodeBatch(snapshot=snap, indices=rows))
        assert got == want, step
        for plan in kept._plans.values():
            row_fits = plan[-1]
            if row_fits.ok is not None:  # the count of short rows that lets a batch skip the gather
                kept_path += 1
                assert row_fits.short == len(row_fits.ok) - int(np.count_nonzero(row_fits.ok)), step
        short_seen += bool(want)
    assert kept_path > 100 and short_seen > 10  # the kept path ran, and some nodes were short
