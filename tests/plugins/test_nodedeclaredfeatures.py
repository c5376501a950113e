"""NodeDeclaredFeatures per emulated version (KEP-5328: alpha off in 1.35, beta on in 1.36).

Ported from pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures_test.go
(``TestPreFilter``, ``TestFilter``, ``TestEnqueueExtensionsNodeUpdate``, ``TestEventsToRegister``)
with the release's feature registry in place of upstream's mock features, and end to end: the
plugin joins the default profile last where its gate is on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched import CycleState, NodeBatch
from kubesched.api._objects import ContainerRestartRule
from kubesched.cli import main
from kubesched.plugins.nodedeclaredfeatures import (
    ERR_REASON,
    PRE_FILTER_STATE_KEY,
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
    NodeDeclaredFeatures,
    required_features,
)
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod

FEATURE_A, FEATURE_B, FEATURE_C = "FeatureA", "FeatureB", "FeatureC"


def _plugin(version: str = "1.36", **gates: bool) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(None, FakeHandle(emulated_version=version, feature_gates=gates))


def _restart_all_pod() -> Any:
    pod = make_pod("test-pod").req_list({"cpu": "100m"}).obj()
    pod.spec.containers[0].restart_policy_rules = [ContainerRestartRule(action="RestartAllContainers")]
    return pod


def _node(name: str, declared: list[str] | None = None) -> Any:
    node = make_node(name).capacity_list({"cpu": "4", "pods": 10}).obj()
    node.status.declared_features = list(declared or [])
    return node


# --- TestPreFilter -------------------------------------------------------------------------------------


def test_nodedeclaredfeatures__TestPreFilter_plugin_disabled() -> None:
    state = CycleState()
    assert _plugin("1.35").kubesched_pre_filter(state, _restart_all_pod(), []).is_skip()  # alpha: off
    assert _plugin("1.36", NodeDeclaredFeatures=False).kubesched_pre_filter(state, _restart_all_pod(), []).is_skip()
    with pytest.raises(KeyError):
        state.read(PRE_FILTER_STATE_KEY)


def test_nodedeclaredfeatures__TestPreFilter_Pod_with_feature_requirements() -> None:
    state = CycleState()
    assert _plugin("1.36").kubesched_pre_filter(state, _restart_all_pod(), []) is None
    assert state.read(PRE_FILTER_STATE_KEY) == frozenset({RESTART_ALL_CONTAINERS})
    on_135 = CycleState()
    assert _plugin("1.35", NodeDeclaredFeatures=True).kubesched_pre_filter(on_135, _restart_all_pod(), []) is None


def test_nodedeclaredfeatures__TestPreFilter_Pod_with_multiple_feature_requirements() -> None:
    pod = _restart_all_pod()
    pod.spec.host_network = True
    pod.spec.host_users = False
    assert required_features(pod, (1, 36)) == {RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK}
    # 1.35's registry has no UserNamespacesHostNetworkSupport
    assert required_features(pod, (1, 35)) == {RESTART_ALL_CONTAINERS}


def test_nodedeclaredfeatures__TestPreFilter_Pod_with_no_requirements() -> None:
    pod = make_pod("test-pod").req_list({"cpu": "100m"}).obj()
    pod.spec.containers[0].restart_policy_rules = [ContainerRestartRule(action="Restart")]
    pod.spec.host_network = True  # hostUsers unset: no user namespace
    state = CycleState()
    assert _plugin("1.36").kubesched_pre_filter(state, pod, []).is_skip()


# --- TestFilter ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "reqs", "want"),
    [
        pytest.param([FEATURE_A, FEATURE_B], {FEATURE_A}, None, id="Node matches requirements"),
        pytest.param([FEATURE_B], {FEATURE_A}, ERR_REASON, id="Node does not match requirements"),
        pytest.param([FEATURE_A, FEATURE_B, FEATURE_C], {FEATURE_A, FEATURE_C}, None,
                     id="Node with multiple features, pod requires subset"),
        pytest.param(None, {FEATURE_A}, ERR_REASON, id="Node has no declared features"),
        pytest.param([FEATURE_A], {FEATURE_A, FEATURE_B}, ERR_REASON, id="Node with some but not all required features"),
    ],
)  # fmt: skip
def test_nodedeclaredfeatures__TestFilter(declared: list[str] | None, reqs: set[str], want: str | None) -> None:
    state = CycleState()
    state.write(PRE_FILTER_STATE_KEY, frozenset(reqs))
    got = _plugin().kubesched_filter(state, _restart_all_pod(), NodeBatch.of([make_node_info(_node("node-1", declared))]))
    if want is None:
        assert got is None
    else:
        assert got is not None
        assert (got[0].code, tuple(got[0].reasons)) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))


def test_nodedeclaredfeatures__TestFilter_plugin_disabled_and_missing_state() -> None:
    batch = NodeBatch.of([make_node_info(_node("node-1"))])
    assert _plugin("1.36", NodeDeclaredFeatures=False).kubesched_filter(CycleState(), _restart_all_pod(), batch) is None
    got = _plugin().kubesched_filter(CycleState(), _restart_all_pod(), batch)
    assert got is not None and got[0].code == Code.ERROR
    assert f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state' in got[0].message


# --- TestEnqueueExtensionsNodeUpdate, TestEventsToRegister ----------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, [FEATURE_A], True, id="Node Add with feature"),
        pytest.param([], [FEATURE_A], True, id="Node Update (Features Added)"),
        pytest.param([FEATURE_A], [FEATURE_A], False, id="Node Update (Features Unchanged)"),
    ],
)
def test_nodedeclaredfeatures__TestEnqueueExtensionsNodeUpdate(old: list[str] | None, new: list[str], want: bool) -> None:
    hint = _plugin().is_schedulable_after_node_change(
        _restart_all_pod(), None if old is None else _node("node-1", old), _node("node-1", new)
    )
    assert bool(hint) == want


def test_nodedeclaredfeatures__TestEventsToRegister() -> None:
    assert _plugin("1.36", NodeDeclaredFeatures=False).kubesched_events_to_register() == []
    assert len(_plugin("1.36").kubesched_events_to_register()) == 1  # upstream's TargetPod update: not registered


# --- end to end ------------------------------------------------------------------------------------------

SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: old, labels: {kubernetes.io/hostname: old}}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: new, labels: {kubernetes.io/hostname: new}}
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
  declaredFeatures: [RestartAllContainersOnContainerExits]
---
apiVersion: v1
kind: Pod
metadata: {name: needs}
spec:
  containers:
  - name: c
    image: pause
    resources: {requests: {cpu: 100m}}
    restartPolicyRules: [{action: RestartAllContainers, exitCodes: {operator: In, values: [42]}}]
"""


@pytest.mark.parametrize(
    ("flags", "node"),
    [
        pytest.param(("--emulated-version", "1.35"), "old", id="1.35 (alpha off): the emptier node"),
        pytest.param(("--emulated-version", "1.35", "--feature-gates", "NodeDeclaredFeatures=true"), "new",
                     id="1.35 with the gate"),
        pytest.param((), "new", id="the default, 1.36 (beta on)"),
    ],
)  # fmt: skip
def test_simulate_per_version(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...],
                              node: str) -> None:  # fmt: skip
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert main(["simulate", str(path), *flags]) == 0
    (pod,) = json.loads(capsys.readouterr().out)["pods"]
    assert pod["nodeName"] == node


def test_the_message_of_a_pod_no_node_declares_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.replace("declaredFeatures: [RestartAllContainersOnContainerExits]", "declaredFeatures: []"))
    assert main(["simulate", str(path)]) == 0
    (pod,) = json.loads(capsys.readouterr().out)["pods"]
    assert pod["conditions"][0]["message"] == (
        "0/2 nodes are available: 2 node(s) didn't match Pod's required features. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_the_gate_does_not_exist_before_1_35(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert main(["simulate", str(path), "--emulated-version", "1.34", "--feature-gates", "NodeDeclaredFeatures=true"]) == 2
    assert capsys.readouterr().err == "kubesched: error: --feature-gates: unrecognized feature gate: NodeDeclaredFeatures\n"

