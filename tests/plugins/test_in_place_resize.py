"""InPlacePodVerticalScaling per emulated version: the scheduler's view of a resized pod (its
requests from its container statuses beside its spec), in the request computation that
NodeResourcesFit, NodeResourcesBalancedAllocation and the cache share.

Ported from component-helpers resource/helpers_test.go ``TestPodResourceRequests``, its resize
cases as each release has them: ``InPlacePodVerticalScalingEnabled`` with ``allocatedResources``
and ``status.resize`` (1.30, 1.31), ``UseStatusResources`` with ``status.resources`` (1.32),
``determineContainerReqs`` with the ``PodResizePending`` condition (1.33, 1.34), and the max of
the aggregates (1.35 on).  The gate: alpha off to 1.32, beta on 1.33-1.34, GA locked from 1.35.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kubesched.api._objects import ContainerStatus, PodCondition, ResourceRequirements
from kubesched.api._resources import (
    IN_PLACE,
    IN_PLACE_OFF,
    IN_PLACE_V1_30,
    IN_PLACE_V1_32,
    IN_PLACE_V1_33,
    RequestRules,
    pod_requests,
    request_rules,
)
from kubesched.cli import main
from kubesched.config._versions import Version, default_feature_gates, parse_feature_gates
from kubesched.runtime._infos import PodInfo
from kubesched.testing import make_pod

INFEASIBLE = [PodCondition(type="PodResizePending", status="True", reason="Infeasible")]


def _pod(containers: dict[str, dict[str, Any]], statuses: Sequence[ContainerStatus] = (), *,
         init: dict[str, dict[str, Any]] | None = None, init_statuses: Sequence[ContainerStatus] = (),
         conditions: Sequence[PodCondition] = (), resize: str = "") -> Any:  # fmt: skip
    b = make_pod("p")
    for _name, reqs in containers.items():
        b.req_list(reqs)
    for _name, reqs in (init or {}).items():
        b.init_req(reqs, sidecar=True)
    pod = b.obj()
    for c, name in zip(pod.spec.containers, containers, strict=True):
        c.name = name
    for c, name in zip(pod.spec.init_containers, init or {}, strict=True):
        c.name = name
    pod.status.container_statuses = list(statuses)
    pod.status.init_container_statuses = list(init_statuses)
    pod.status.conditions = list(conditions)
    pod.status.resize = resize
    return pod


def _actual(name: str, **requests: Any) -> ContainerStatus:
    return ContainerStatus(name=name, resources=ResourceRequirements(requests=dict(requests)))


def _allocated(name: str, **allocated: Any) -> ContainerStatus:
    return ContainerStatus(name=name, allocated_resources=dict(allocated))


def _cpu(pod: Any, mode: int) -> int:
    return pod_requests(pod, rules=RequestRules(in_place=mode)).milli_cpu


# --- TestPodResourceRequests, per release -----------------------------------------------------------


def test_resource_helpers__TestPodResourceRequests_resized_infeasible() -> None:
    # 1.30/1.31: status.resize Infeasible -> allocatedResources alone
    old = _pod({"container-1": {"cpu": "4"}}, [_allocated("container-1", cpu="2")], resize="Infeasible")
    assert _cpu(old, IN_PLACE_V1_30) == 2000
    # 1.32: status.resize Infeasible -> status.resources.requests alone
    v132 = _pod({"container-1": {"cpu": "4"}}, [_actual("container-1", cpu="2")], resize="Infeasible")
    assert _cpu(v132, IN_PLACE_V1_32) == 2000
    # 1.33 on: the PodResizePending condition, reason Infeasible
    new = _pod({"container-1": {"cpu": "4"}}, [_actual("container-1", cpu="2")], conditions=INFEASIBLE)
    assert _cpu(new, IN_PLACE_V1_33) == _cpu(new, IN_PLACE) == 2000
    # each release reads only its own signal: 1.33's condition means nothing to 1.32, and back
    assert _cpu(new, IN_PLACE_V1_32) == 4000
    assert _cpu(v132, IN_PLACE) == 4000


def test_resource_helpers__TestPodResourceRequests_resized_no_resize_status() -> None:
    for mode, status in ((IN_PLACE_V1_30, _allocated("container-1", cpu="2")),
                         (IN_PLACE_V1_32, _actual("container-1", cpu="2")),
                         (IN_PLACE_V1_33, _actual("container-1", cpu="2")),
                         (IN_PLACE, _actual("container-1", cpu="2"))):  # fmt: skip
        assert _cpu(_pod({"container-1": {"cpu": "4"}}, [status]), mode) == 4000


def test_resource_helpers__TestPodResourceRequests_resized_infeasible_but_dont_use_status() -> None:
    pod = _pod({"container-1": {"cpu": "4"}}, [_actual("container-1", cpu="2")], conditions=INFEASIBLE)
    assert _cpu(pod, IN_PLACE_OFF) == 4000


def test_resource_helpers__TestPodResourceRequests_resized_per_resource_3_way_maximum() -> None:
    status = ContainerStatus(
        name="container-1",
        allocated_resources={"cpu": "20m", "memory": "10M", "ephemeral-storage": "30G"},
        resources=ResourceRequirements(requests={"cpu": "10m", "memory": "30M", "ephemeral-storage": "20G"}),
    )
    pod = _pod({"container-1": {"cpu": "30m", "memory": "20M", "ephemeral-storage": "10G"}}, [status])
    for mode in (IN_PLACE_V1_33, IN_PLACE):
        r = pod_requests(pod, rules=RequestRules(in_place=mode))
        assert (r.milli_cpu, r.memory, r.ephemeral_storage) == (30, 30 * 10**6, 30 * 10**9)


def test_resource_helpers__TestPodResourceRequests_aggregate_request_resolves_max_of_sums() -> None:
    """1.35 on: max(spec sum, actuated sum, allocated sum); 1.33's per-container maxima sum higher."""
    pod = _pod({"c1": {"cpu": "1"}, "c2": {"cpu": "2"}}, [_actual("c1", cpu="2"), _actual("c2", cpu="1")])
    assert _cpu(pod, IN_PLACE) == 3000
    assert _cpu(pod, IN_PLACE_V1_33) == 4000


def test_resource_helpers__TestPodResourceRequests_resized_restartable_init_container() -> None:
    """1.35 on: a sidecar's status counts (infeasible: 2, else max(4, 2)); before, init
    containers are read from their spec only."""
    infeasible = _pod({}, init={"restartable-init-1": {"cpu": "4"}},
                      init_statuses=[_actual("restartable-init-1", cpu="2")], conditions=INFEASIBLE)  # fmt: skip
    assert _cpu(infeasible, IN_PLACE) == 2000
    assert _cpu(infeasible, IN_PLACE_V1_33) == 4000
    plain = _pod({}, init={"restartable-init-1": {"cpu": "4"}}, init_statuses=[_actual("restartable-init-1", cpu="2")])
    assert _cpu(plain, IN_PLACE) == 4000


@pytest.mark.parametrize(
    ("version", "gate", "want"),
    [
        ("1.30", None, IN_PLACE_OFF),
        ("1.31", True, IN_PLACE_V1_30),
        ("1.32", None, IN_PLACE_OFF),
        ("1.32", True, IN_PLACE_V1_32),
        ("1.33", None, IN_PLACE_V1_33),
        ("1.34", False, IN_PLACE_OFF),
        ("1.35", None, IN_PLACE),
        ("1.36", None, IN_PLACE),
    ],
)
def test_the_gate_per_version(version: str, gate: bool | None, want: int) -> None:
    v = Version(*map(int, version.split(".")))
    gates = default_feature_gates(v)
    if gate is not None:
        gates = parse_feature_gates(f"InPlacePodVerticalScaling={str(gate).lower()}", gates, v)
    assert request_rules(v, gates).in_place == want


def test_the_gate_is_locked_from_1_35(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '1'}}\n")
    assert main(["simulate", str(path), "--emulated-version", "1.35", "--feature-gates",
                 "InPlacePodVerticalScaling=false"]) == 2  # fmt: skip
    assert capsys.readouterr().err == ("kubesched: error: --feature-gates: cannot set feature gate "
                                       "InPlacePodVerticalScaling to false, feature is locked to true\n")  # fmt: skip


def test_the_cache_recomputes_a_resized_pod_whose_spec_did_not_change() -> None:
    """A status-only update (the kubelet actuating a resize) changes the requests the cache
    holds for the pod, where the gate is on."""
    from kubesched.cache._cache import Cache
    from kubesched.testing import make_node

    cache = Cache()
    cache.add_node(make_node("n").capacity_list({"cpu": "8", "pods": 10}).obj())
    pod = _pod({"c": {"cpu": "1"}})
    pod.spec.node_name = "n"
    cache.add_pod(pod)
    assert cache.node_infos["n"].requested.milli_cpu == 1000
    resized = _pod({"c": {"cpu": "1"}}, [_actual("c", cpu="3")])
    resized.spec = pod.spec
    cache.update_pod(resized)
    assert cache.node_infos["n"].requested.milli_cpu == 3000
    assert PodInfo(resized, RequestRules(in_place=IN_PLACE_OFF)).requests.milli_cpu == 1000


# --- end to end: a running pod resized above its spec -------------------------------------------------

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
  containers: [{name: app, image: pause, resources: {requests: {cpu: "1"}}}]
status:
  phase: Running
  containerStatuses:
  - {name: app, image: pause, imageID: "", ready: true, restartCount: 0, allocatedResources: {cpu: "3"},
     resources: {requests: {cpu: "3"}}}
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
        pytest.param(("--emulated-version", "1.32"), "n1", id="1.32 (alpha off): the spec's 1 CPU"),
        pytest.param(("--emulated-version", "1.33"), None, id="1.33 (beta on): the resized 3 CPUs"),
        pytest.param(("--emulated-version", "1.34", "--feature-gates", "InPlacePodVerticalScaling=false"), "n1",
                     id="1.34 with the gate off"),
        pytest.param((), None, id="the default, 1.36"),
    ],
)  # fmt: skip
def test_simulate_per_version(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...],
                              placed: str | None) -> None:  # fmt: skip
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert main(["simulate", str(path), *flags]) == 0
    result = json.loads(capsys.readouterr().out)
    (new,) = [p for p in result["pods"] if p["name"] == "new"]
    assert new["nodeName"] == placed
