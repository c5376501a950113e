"""InPlacePodLevelResourcesVerticalScaling (KEP-5419; alpha off 1.35, beta on 1.36): a pod-level
request of a pod whose status reports pod-level resources counts the max of the spec's, the
actuated (``status.resources.requests``) and the allocated (``status.allocatedResources``)
requests, of the last two alone where the kubelet found the resize infeasible: component-helpers
v0.35.4 and v0.36.0 ``resource/helpers.go`` ``PodRequests`` / ``determineEffectiveRequests`` with
``InPlacePodLevelResourcesVerticalScalingEnabled`` and ``UseStatusResources``.  No upstream test
case at those tags exercises the pod-level path, so the cases are the function's branches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.api._objects import PodCondition, ResourceRequirements
from kubesched.api._resources import pod_requests, request_rules
from kubesched.cache._cache import Cache
from kubesched.cli import main
from kubesched.config._versions import Version, default_feature_gates
from kubesched.testing import make_node, make_pod

INFEASIBLE = [PodCondition(type="PodResizePending", status="True", reason="Infeasible")]
NEWEST = request_rules(Version(1, 36), default_feature_gates(Version(1, 36)))


def _pod(spec: dict[str, Any], actuated: dict[str, Any] | None = None, allocated: dict[str, Any] | None = None,
         infeasible: bool = False) -> Any:  # fmt: skip
    pod = make_pod("p").req(cpu="100m").obj()
    pod.spec.resources = ResourceRequirements(requests=spec)
    if actuated is not None:
        pod.status.resources = ResourceRequirements(requests=actuated)
    pod.status.allocated_resources = allocated
    if infeasible:
        pod.status.conditions = list(INFEASIBLE)
    return pod


@pytest.mark.parametrize(
    ("pod", "cpu", "memory"),
    [
        pytest.param(_pod({"cpu": "1", "memory": "1Gi"}), 1000, 1 << 30, id="no pod-level status: the spec"),
        pytest.param(_pod({"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "512Mi"}, {"cpu": "1500m"}), 2000,
                     1 << 30, id="the max of spec, actuated and allocated, per resource"),
        pytest.param(_pod({"cpu": "4", "memory": "1Gi"}, {"cpu": "1"}, {"cpu": "2", "memory": "2Gi"}, infeasible=True),
                     2000, 2 << 30, id="infeasible: the actuated and the allocated only"),
        pytest.param(_pod({"cpu": "4", "memory": "1Gi"}, {"cpu": "1"}, None, infeasible=True), 1000, 0,
                     id="infeasible: a resource neither reports counts 0"),
        pytest.param(_pod({"cpu": "1"}, {"cpu": "1", "memory": "8Gi"}), 1000, 0,
                     id="only the spec's pod-level resources are replaced (memory: the containers' 0)"),
    ],
)  # fmt: skip
def test_pod_level_requests_of_a_resized_pod(pod: Any, cpu: int, memory: int) -> None:
    r = pod_requests(pod, rules=NEWEST)
    assert (r.milli_cpu, r.memory) == (cpu, memory)


@pytest.mark.parametrize(
    ("version", "gates", "want"),
    [
        pytest.param("1.34", {}, 1000, id="1.34: no such gate (the spec)"),
        pytest.param("1.35", {}, 1000, id="1.35: alpha, off"),
        pytest.param("1.35", {"InPlacePodLevelResourcesVerticalScaling": True}, 3000, id="1.35 turned on"),
        pytest.param("1.36", {}, 3000, id="1.36: beta, on"),
        pytest.param("1.36", {"InPlacePodLevelResourcesVerticalScaling": False}, 1000, id="1.36 turned off"),
        pytest.param("1.36", {"PodLevelResources": False}, 100, id="1.36 without PodLevelResources: the containers'"),
    ],
)  # fmt: skip
def test_the_gate_per_version(version: str, gates: dict[str, bool], want: int) -> None:
    v = Version(*map(int, version.split(".")))
    rules = request_rules(v, {**default_feature_gates(v), **gates})
    assert pod_requests(_pod({"cpu": "1"}, {"cpu": "3"}), rules=rules).milli_cpu == want


def test_the_cache_recomputes_a_pod_level_resize() -> None:
    """A status-only update (the kubelet actuating a pod-level resize) changes the node's
    requested resources."""
    cache = Cache()
    cache.add_node(make_node("n").capacity_list({"cpu": "8", "pods": 10}).obj())
    pod = _pod({"cpu": "1"})
    pod.spec.node_name = "n"
    cache.add_pod(pod)
    assert cache.node_infos["n"].requested.milli_cpu == 1000
    resized = _pod({"cpu": "1"}, {"cpu": "3"}, {"cpu": "3"})
    resized.spec = pod.spec
    cache.update_pod(resized)
    assert cache.node_infos["n"].requested.milli_cpu == 3000


SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: resized}
spec:
  nodeName: n1
  resources: {requests: {cpu: "1"}}
  containers: [{name: app, image: pause}]
status:
  phase: Running
  resources: {requests: {cpu: "3"}}
  allocatedResources: {cpu: "3"}
---
apiVersion: v1
kind: Pod
metadata: {name: new}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: "2"}}}]
"""


@pytest.mark.parametrize(
    ("flags", "placed"),
    [
        pytest.param(("--emulated-version", "1.35"), "n1", id="1.35 (alpha off): the spec's 1 CPU"),
        pytest.param((), None, id="1.36 (beta on): the resized 3 CPUs"),
    ],
)  # fmt: skip
def test_simulate_per_version(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...],
                              placed: str | None) -> None:  # fmt: skip
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert main(["simulate", str(path), *flags]) == 0
    out = json.loads(capsys.readouterr().out)
    (new,) = [p for p in out["pods"] if p["name"] == "new"]
    assert new["nodeName"] == placed
