"""PodLevelResources (KEP-2837) per emulated version: a pod's ``spec.resources`` in the request
computation of NodeResourcesFit, NodeResourcesBalancedAllocation and the cache, the API
server's defaulting of a left-out pod-level request, and the field's validation.

Ported: component-helpers resource/helpers_test.go ``TestPodLevelResourceRequests`` and the
pod-level cases of pkg/scheduler/framework/plugins/noderesources/fit_test.go
``TestEnoughRequests`` (kubernetes#128407, 1.32; the hugepages cases kubernetes#130577, 1.33).
The gate: alpha off in 1.32 and 1.33, beta on from 1.34; 1.30 and 1.31 have neither the gate
nor the field's meaning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kubesched import CycleState, NodeBatch, Status
from kubesched.api._objects import Pod, ResourceRequirements
from kubesched.api._resources import (
    POD_LEVEL,
    POD_LEVEL_OFF,
    POD_LEVEL_V1_32,
    RequestRules,
    pod_requests,
    request_rules,
)
from kubesched.cli import main
from kubesched.config._versions import (
    FEATURE_GATES,
    Version,
    default_feature_gates,
    parse_feature_gates,
)
from kubesched.plugins.noderesources import BalancedAllocation, new_fit
from kubesched.runtime._infos import PodInfo
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod

HUGE_A = "hugepages-2Mi"
EXT_A = "example.com/aaa"


def _pod(pod_requests_: dict[str, Any] | None = None, containers: tuple[dict[str, Any], ...] = (),
         init: tuple[tuple[dict[str, Any], bool], ...] = (), pod_limits: dict[str, Any] | None = None) -> Pod:  # fmt: skip
    b = make_pod("p")
    for c in containers:
        b.req_list(c)
    for c, sidecar in init:
        b.init_req(c, sidecar=sidecar)
    pod = b.obj()
    if pod_requests_ is not None or pod_limits is not None:
        res = ResourceRequirements(requests=pod_requests_, limits=pod_limits)
        pod.spec = msgspec.structs.replace(pod.spec, resources=res)
    return pod


def _as_list(pod: Pod, mode: int) -> dict[str, int]:
    r = pod_requests(pod, rules=RequestRules(pod_level=mode))
    out = {"cpu": r.milli_cpu, "memory": r.memory, **r.scalar}
    return {k: v for k, v in out.items() if v}


MI = 1024 * 1024

# helpers_test.go TestPodLevelResourceRequests (cpu in millicores, memory in bytes)
POD_LEVEL_REQUESTS = [
    pytest.param(None, (), (), POD_LEVEL, {}, id="nil"),
    pytest.param({"memory": "2Mi"}, (), (), POD_LEVEL_OFF, {},
                 id="pod level memory resource with SkipPodLevelResources true"),
    pytest.param({"memory": "2Mi"}, (), (), POD_LEVEL, {"memory": 2 * MI},
                 id="pod level memory resource with SkipPodLevelResources false"),
    pytest.param({"memory": "2Mi"}, ({"cpu": "2m"},), (), POD_LEVEL, {"memory": 2 * MI, "cpu": 2},
                 id="pod level memory and container level cpu resources with SkipPodLevelResources false"),
    pytest.param({"storage": "2Mi"}, ({"storage": "3Mi"},), (), POD_LEVEL, {"storage": 3 * MI},
                 id="pod level unsupported resources set at both pod-level and container-level with "
                    "SkipPodLevelResources false"),
    pytest.param({"storage": "2Mi"}, ({"memory": "3Mi"},), (), POD_LEVEL, {"memory": 3 * MI},
                 id="pod level unsupported resources set at pod-level with SkipPodLevelResources false"),
    pytest.param(None, ({"memory": "3Mi", "cpu": "2m"},), (), POD_LEVEL, {"memory": 3 * MI, "cpu": 2},
                 id="only container level resources set with SkipPodLevelResources false"),
    pytest.param({"memory": "6Mi", "cpu": "8m"}, ({"memory": "3Mi", "cpu": "2m"},), (), POD_LEVEL,
                 {"memory": 6 * MI, "cpu": 8},
                 id="both container-level and pod-level resources set with SkipPodLevelResources false"),
    pytest.param(None, ({"memory": "3Mi", "cpu": "2m"},), (({"memory": "5Mi", "cpu": "4m"}, False),), POD_LEVEL,
                 {"memory": 5 * MI, "cpu": 4},
                 id="container-level resources and init container set with SkipPodLevelResources false"),
    pytest.param(None, ({"memory": "3Mi", "cpu": "2m"},), (({"memory": "5Mi", "cpu": "4m"}, False),),
                 POD_LEVEL_OFF, {"memory": 5 * MI, "cpu": 4},
                 id="container-level resources and init container set with SkipPodLevelResources true"),
    pytest.param(None, ({"memory": "3Mi", "cpu": "2m"},), (({"memory": "5Mi", "cpu": "4m"}, True),), POD_LEVEL,
                 {"memory": 8 * MI, "cpu": 6},
                 id="container-level resources and sidecar container set with SkipPodLevelResources false"),
    pytest.param(None, ({"memory": "3Mi", "cpu": "2m"},),
                 (({"memory": "5Mi", "cpu": "4m"}, True), ({"memory": "6Mi", "cpu": "8m"}, False)), POD_LEVEL,
                 {"memory": 11 * MI, "cpu": 12},
                 id="container-level resources, init and sidecar container set with SkipPodLevelResources false"),
    pytest.param({"memory": "15Mi", "cpu": "18m"}, ({"memory": "3Mi", "cpu": "2m"},),
                 (({"memory": "5Mi", "cpu": "4m"}, True), ({"memory": "6Mi", "cpu": "8m"}, False)), POD_LEVEL,
                 {"memory": 15 * MI, "cpu": 18},
                 id="pod-level resources, container-level resources, init and sidecar container set with "
                    "SkipPodLevelResources false"),
]  # fmt: skip


@pytest.mark.parametrize(("pod_reqs", "containers", "init", "mode", "want"), POD_LEVEL_REQUESTS)
def test_resource_helpers__TestPodLevelResourceRequests(pod_reqs: dict[str, Any] | None,
                                                        containers: tuple[dict[str, Any], ...],
                                                        init: tuple[tuple[dict[str, Any], bool], ...], mode: int,
                                                        want: dict[str, int]) -> None:  # fmt: skip
    assert _as_list(_pod(pod_reqs, containers, init), mode) == want


def test_pod_level_resources_with_overhead_and_non_zero_defaults() -> None:
    """Overhead is added after the pod-level requests replace the aggregate; the scoring defaults
    (100m / 200Mi) fill only what neither level sets."""
    pod = _pod({"cpu": "500m"}, ({},))
    pod.spec = msgspec.structs.replace(pod.spec, overhead={"cpu": "100m", "memory": "10Mi"})
    r = pod_requests(pod, non_zero=True)
    assert (r.milli_cpu, r.memory) == (600, 200 * MI + 10 * MI)
    off = pod_requests(pod, non_zero=True, rules=RequestRules(pod_level=POD_LEVEL_OFF))
    assert (off.milli_cpu, off.memory) == (200, 200 * MI + 10 * MI)


# pkg/apis/core/v1/defaults.go defaultPodRequests: a request left out while pod-level limits are set
@pytest.mark.parametrize(
    ("mode", "want"),
    [
        # kubernetes#128407 (1.32): the containers' aggregate first, then the pod-level limit
        pytest.param(POD_LEVEL_V1_32, {"cpu": 1000, "memory": 2048 * MI}, id="1.32 (the containers' aggregate)"),
        # kubernetes#130577 (1.33): only hugepages from the aggregate; cpu / memory from the limit
        pytest.param(POD_LEVEL, {"cpu": 4000, "memory": 2048 * MI}, id="1.33 and later (the pod-level limit)"),
    ],
)
def test_defaulting_of_a_left_out_pod_level_request(mode: int, want: dict[str, int]) -> None:
    pod = _pod(None, ({"cpu": "1"},), pod_limits={"cpu": "4", "memory": "2Gi"})
    assert _as_list(pod, mode) == want


def test_hugepages_are_a_pod_level_resource_from_1_33() -> None:
    pod = _pod({"cpu": "1", HUGE_A: "4Mi"}, ({"cpu": "1", HUGE_A: "2Mi"},), pod_limits={HUGE_A: "4Mi"})
    assert _as_list(pod, POD_LEVEL)[HUGE_A] == 4 * MI
    assert _as_list(pod, POD_LEVEL_V1_32)[HUGE_A] == 2 * MI  # 1.32: cpu and memory only


@pytest.mark.parametrize(
    ("version", "gate", "want"),
    [
        ("1.30", None, POD_LEVEL_OFF),
        ("1.31", None, POD_LEVEL_OFF),
        ("1.32", None, POD_LEVEL_OFF),
        ("1.32", True, POD_LEVEL_V1_32),
        ("1.33", None, POD_LEVEL_OFF),
        ("1.33", True, POD_LEVEL),
        ("1.34", None, POD_LEVEL),
        ("1.34", False, POD_LEVEL_OFF),
        ("1.36", None, POD_LEVEL),
    ],
)
def test_the_gate_per_version(version: str, gate: bool | None, want: int) -> None:
    """Upstream's VersionedSpecs: absent before 1.32, Alpha off 1.32-1.33, Beta on from 1.34."""
    v = Version(*map(int, version.split(".")))
    gates = default_feature_gates(v)
    if gate is not None:
        gates = parse_feature_gates(f"PodLevelResources={str(gate).lower()}", gates, v)
    assert request_rules(v, gates).pod_level == want
    assert (FEATURE_GATES["PodLevelResources"].spec_at(v) is None) == (v < (1, 32))


# --- NodeResourcesFit: fit_test.go TestEnoughRequests, its pod-level cases ----------------------------


def _enough_node(cpu: int, mem: int, **scalars: int) -> Any:
    """TestEnoughRequests' node (cpu 10m, memory 20, pods 32, aaa 5, ephemeral 20, hugepages 5)
    with one pod using ``cpu`` millicores and ``mem`` bytes."""
    node = make_node("machine").capacity_list(
        {"cpu": "10m", "memory": 20, "pods": 32, EXT_A: 5, "ephemeral-storage": 20, HUGE_A: 5}
    ).obj()
    used = {"cpu": f"{cpu}m", "memory": mem, **{HUGE_A if k == "huge" else k: v for k, v in scalars.items()}}
    return make_node_info(node, make_pod("used").req_list(used).obj())


def _filter(version: str, pod: Pod, ni: Any) -> Status | None:
    plugin = new_fit(None, FakeHandle(emulated_version=version))
    state = CycleState()
    assert plugin.kubesched_pre_filter(state, pod, []) is None
    return (plugin.kubesched_filter(state, pod, NodeBatch.of([ni])) or {}).get(0)


ENOUGH = [
    pytest.param({"cpu": "1m", "memory": 2}, ({"cpu": "1m", "memory": 1},), (5, 5), None,
                 id="both pod-level and container-level resources fit"),
    pytest.param({"cpu": "7m", "memory": 2}, ({"cpu": "1m", "memory": 1},), (5, 5), "Insufficient cpu",
                 id="pod-level cpu resource not fit"),
    pytest.param({"cpu": "3m", "memory": 2}, ({"cpu": "1m", "memory": 1},), (5, 19), "Insufficient memory",
                 id="pod-level memory resource not fit"),
    pytest.param({"cpu": "3m", "memory": 2, HUGE_A: 5}, ({},), (0, 0), None, id="pod-level hugepages resource fit"),
    pytest.param({"cpu": "3m", "memory": 2, HUGE_A: 5}, ({"cpu": "1m", "memory": 1, HUGE_A: 3},), (0, 0), None,
                 id="both pod-level and container-level hugepages resource fit"),
    pytest.param({"cpu": "3m", "memory": 2, HUGE_A: 10}, ({},), (0, 0), f"Insufficient {HUGE_A}",
                 id="pod-level hugepages resource not fit"),
]  # fmt: skip


@pytest.mark.parametrize(("pod_reqs", "containers", "used", "want"), ENOUGH)
def test_fit__TestEnoughRequests_pod_level(pod_reqs: dict[str, Any], containers: tuple[dict[str, Any], ...],
                                           used: tuple[int, int], want: str | None) -> None:  # fmt: skip
    pod = _pod(pod_reqs, containers)
    got = _filter("1.34", pod, _enough_node(*used))
    assert (tuple(got.reasons) if got is not None else None) == ((want,) if want else None)


def test_fit__TestEnoughRequests_one_pod_level_cpu_resource_fits_and_all_init_and_non_init_containers_resources_fit() -> None:  # noqa: E501
    pod = _pod({"cpu": "3m", "memory": 2}, ({"cpu": "1m", "memory": 1},), (({"cpu": "1m", "memory": 1}, False),))
    got = _filter("1.34", pod, _enough_node(5, 19))
    assert got is not None and tuple(got.reasons) == ("Insufficient memory",)


def test_fit_reads_the_gate_of_its_version() -> None:
    """A pod-level request above the node: rejected where the gate is on, fits on its
    containers' requests where it is off (1.31, 1.33 by default, 1.34 turned off)."""
    pod = _pod({"cpu": "7m"}, ({"cpu": "1m"},))
    assert _filter("1.34", pod, _enough_node(5, 5)) is not None
    assert _filter("1.31", pod, _enough_node(5, 5)) is None
    assert _filter("1.33", pod, _enough_node(5, 5)) is None
    off = new_fit(None, FakeHandle(emulated_version="1.34", feature_gates={"PodLevelResources": False}))
    state = CycleState()
    off.kubesched_pre_filter(state, pod, [])
    assert not off.kubesched_filter(state, pod, NodeBatch.of([_enough_node(5, 5)]))
    on = new_fit(None, FakeHandle(emulated_version="1.33", feature_gates={"PodLevelResources": True}))
    state = CycleState()
    on.kubesched_pre_filter(state, pod, [])
    assert on.kubesched_filter(state, pod, NodeBatch.of([_enough_node(5, 5)]))


def test_balanced_allocation_scores_the_pod_level_requests() -> None:
    """resourceAllocationScorer's SkipPodLevelResources: the pod-level cpu request moves the
    balance on the node; without the gate the containers' requests do."""
    node = make_node("n").capacity_list({"cpu": "4", "memory": "4Gi", "pods": 10}).obj()
    ni = make_node_info(node)
    pod = _pod({"cpu": "2", "memory": "1Gi"}, ({"cpu": "1", "memory": "1Gi"},))

    def score(version: str) -> int:
        plugin = BalancedAllocation(None, FakeHandle(emulated_version=version))
        state = CycleState()
        assert plugin.kubesched_pre_score(state, pod, NodeBatch.of([ni])) is None
        return int(plugin.kubesched_score(state, pod, NodeBatch.of([ni]))[0])

    # cpu 2/4 vs memory 1/4: std 0.125 -> 87; containers' cpu 1/4 vs 1/4: 100
    assert (score("1.34"), score("1.33")) == (87, 100)


def test_the_cache_counts_pod_level_requests_by_the_rules_it_is_given() -> None:
    pod = _pod({"cpu": "3", "memory": "1Gi"}, ({"cpu": "1"},))
    assert PodInfo(pod).requests.milli_cpu == 3000
    off = RequestRules(pod_level=POD_LEVEL_OFF)
    assert PodInfo(pod, off).requests.milli_cpu == 1000
    assert PodInfo(pod, off).update(pod).requests.milli_cpu == 1000


# --- end to end: simulate per version ---------------------------------------------------------------

SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  resources: {requests: {cpu: "3"}, limits: {cpu: "3"}}
  containers: [{name: c, image: pause, resources: {requests: {cpu: 500m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: second}
spec:
  resources: {limits: {cpu: "2"}}
  containers: [{name: c, image: pause}]
"""


@pytest.mark.parametrize(
    ("flags", "second", "cpu_used"),
    [
        pytest.param(("--emulated-version", "1.31"), "n1", 500, id="1.31 (no gate)"),
        pytest.param(("--emulated-version", "1.33"), "n1", 500, id="1.33 (alpha off)"),
        pytest.param(("--emulated-version", "1.33", "--feature-gates", "PodLevelResources=true"), None, 3000,
                     id="1.33 with the gate"),
        pytest.param(("--emulated-version", "1.34"), None, 3000, id="1.34 (beta on)"),
        pytest.param(("--emulated-version", "1.34", "--feature-gates", "PodLevelResources=false"), "n1", 500,
                     id="1.34 with the gate off"),
        pytest.param((), None, 3000, id="the default, 1.36"),
    ],
)  # fmt: skip
def test_simulate_per_version(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...],
                              second: str | None, cpu_used: int) -> None:  # fmt: skip
    """``big`` asks 3 CPUs at pod level (500m in its container); ``second`` only a 2-CPU pod-level
    limit, which the API server defaults its request to: it fits beside ``big`` only where
    pod-level resources are not counted."""
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert main(["simulate", str(path), *flags]) == 0
    result = json.loads(capsys.readouterr().out)
    placed = {p["name"]: p["nodeName"] for p in result["pods"]}
    assert placed == {"big": "n1", "second": second}
    if second is None:
        (pending,) = [p for p in result["pods"] if p["name"] == "second"]
        assert pending["conditions"][0]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    (node,) = result["nodes"]
    assert node["allocated"]["cpu"] == cpu_used


def test_a_gate_the_version_does_not_have(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert main(["simulate", str(path), "--emulated-version", "1.31", "--feature-gates", "PodLevelResources=true"]) == 2
    assert capsys.readouterr().err == "kubesched: error: --feature-gates: unrecognized feature gate: PodLevelResources\n"


# --- validation (validatePodResources) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("resources", "containers", "error"),
    [
        pytest.param('{requests: {cpu: "1", memory: 576Mi}}',
                     "[{name: a, image: x, resources: {requests: {cpu: 500m, memory: 2Gi}}}, "
                     "{name: b, image: x, resources: {requests: {cpu: '1', memory: 4Gi}}}]",
                     'spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate '
                     "container requests of 1500m", id="requests below the containers' (cpu)"),
        pytest.param('{requests: {cpu: "2", memory: 576Mi}}',
                     "[{name: a, image: x, resources: {requests: {cpu: 500m, memory: 2Gi}}}, "
                     "{name: b, image: x, resources: {requests: {cpu: '1', memory: 4Gi}}}]",
                     'spec.resources.requests[memory]: Invalid value: "576Mi": must be greater than or equal to '
                     "aggregate container requests of 6Gi", id="requests below the containers' (memory)"),
        pytest.param('{requests: {nvidia.com/gpu: "1"}}', "[{name: a, image: x}]",
                     'spec.resources.requests[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu": supported '
                     'values: "cpu", "hugepages-", "memory"', id="an unsupported resource"),
        pytest.param('{requests: {cpu: "2"}, limits: {cpu: "1"}}', "[{name: a, image: x}]",
                     'spec.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
                     id="request above limit"),
        pytest.param('{limits: {cpu: "1"}}', "[{name: a, image: x, resources: {limits: {cpu: '2'}}}]",
                     'spec.resources.containers[0][cpu].limits: Invalid value: "2": must be less than or equal to '
                     "pod limits of 1", id="a container's limit above the pod's"),
        pytest.param('{requests: {cpu: "-1"}}', "[{name: a, image: x}]",
                     'spec.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
                     id="negative"),
    ],
)  # fmt: skip
def test_validation__validatePodResources(tmp_path: Path, capsys: pytest.CaptureFixture[str], resources: str,
                                          containers: str, error: str) -> None:  # fmt: skip
    path = tmp_path / "p.yaml"
    path.write_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  resources: {resources}\n"
                    f"  containers: {containers}\n")  # fmt: skip
    assert main(["simulate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"kubesched: error: {path}: document 1 (Pod p), {error}\n"

