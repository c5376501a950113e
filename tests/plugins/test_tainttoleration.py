"""TaintToleration (k/k ``plugins/tainttoleration/taint_toleration_test.go``; cases F1–F3)."""

from __future__ import annotations

import pytest

from kubesched import CycleState, NodeBatch
from kubesched.api._objects import Taint, Toleration
from kubesched.framework import toleration_tolerates_taint
from kubesched.plugins import tainttoleration
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod


def pod_with(*tols: tuple[str, str, str, str]):
    b = make_pod("pod1")
    for key, op, value, effect in tols:
        b.toleration(key, value, effect, op)
    return b.obj()


def node_with(name: str, *taints: tuple[str, str, str]):
    b = make_node(name)
    for key, value, effect in taints:
        b.taint(key, value, effect)
    return make_node_info(b.obj())


FILTER_CASES = [
    pytest.param(pod_with(), [("dedicated", "user1", "NoSchedule")], "node(s) had untolerated taint {dedicated: user1}",
                 id="TestTaintTolerationFilter › A pod having no tolerations can't be scheduled onto a node with nonempty taints"),
    pytest.param(pod_with(("dedicated", "Equal", "user1", "NoSchedule")), [("dedicated", "user1", "NoSchedule")], None,
                 id="TestTaintTolerationFilter › A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule"),
    pytest.param(pod_with(("dedicated", "Equal", "user2", "NoSchedule")), [("dedicated", "user1", "NoSchedule")],
                 "node(s) had untolerated taint {dedicated: user1}",
                 id="TestTaintTolerationFilter › A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule"),
    pytest.param(pod_with(("foo", "Exists", "", "NoSchedule")), [("foo", "bar", "NoSchedule")], None,
                 id="TestTaintTolerationFilter › A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node"),
    pytest.param(pod_with(("dedicated", "Equal", "user2", "NoSchedule"), ("foo", "Exists", "", "NoSchedule")),
                 [("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")], None,
                 id="TestTaintTolerationFilter › A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled onto the node"),
    pytest.param(pod_with(("foo", "Equal", "bar", "PreferNoSchedule")), [("foo", "bar", "NoSchedule")],
                 "node(s) had untolerated taint {foo: bar}",
                 id="TestTaintTolerationFilter › A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, can't be scheduled onto the node"),
    pytest.param(pod_with(("foo", "Equal", "bar", "")), [("foo", "bar", "NoSchedule")], None,
                 id="TestTaintTolerationFilter › The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node"),
    pytest.param(pod_with(("dedicated", "Equal", "user2", "NoSchedule")), [("dedicated", "user1", "PreferNoSchedule")], None,
                 id="TestTaintTolerationFilter › The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node"),
    pytest.param(pod_with(), [("dedicated", "user1", "PreferNoSchedule")], None,
                 id="TestTaintTolerationFilter › The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node"),
    pytest.param(pod_with(("", "Exists", "", "")), [("dedicated", "user1", "NoExecute"), ("foo", "bar", "NoSchedule")], None,
                 id="empty key with Exists tolerates every taint"),
    pytest.param(pod_with(("dedicated", "Exists", "", "NoSchedule")), [("dedicated", "user1", "NoSchedule"), ("gpu", "", "NoExecute")],
                 "node(s) had untolerated taint {gpu: }", id="the first untolerated NoExecute taint is reported"),
]


@pytest.mark.parametrize(("pod", "taints", "want"), FILTER_CASES)
def test_filter(pod, taints, want) -> None:
    plugin = tainttoleration.new(None, FakeHandle())
    out = plugin.kubesched_filter(CycleState(), pod, NodeBatch.of([node_with("nodeA", *taints)]))
    if want is None:
        assert out is None
    else:
        assert out is not None
        assert (out[0].code, out[0].reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))


SCORE_CASES = [
    pytest.param(pod_with(("foo", "Equal", "bar", "PreferNoSchedule")),
                 [("nodeA", [("foo", "bar", "PreferNoSchedule")]), ("nodeB", [("foo", "blah", "PreferNoSchedule")])],
                 [100, 0],
                 id="F1 TestTaintTolerationScore › node with taints tolerated by the pod, gets a higher score than those node with intolerable taints"),
    pytest.param(pod_with(("foo", "Equal", "bar", "PreferNoSchedule")),
                 [("nodeA", []), ("nodeB", [("cpu-type", "arm64", "PreferNoSchedule")]),
                  ("nodeC", [("cpu-type", "arm64", "PreferNoSchedule"), ("disk-type", "ssd", "PreferNoSchedule")])],
                 [100, 50, 0],
                 id="F2 TestTaintTolerationScore › the more intolerable taints a node has, the lower score it gets."),
    pytest.param(pod_with(("cpu-type", "Equal", "arm64", "NoSchedule"), ("disk-type", "Equal", "ssd", "NoSchedule")),
                 [("nodeA", []), ("nodeB", [("cpu-type", "arm64", "NoSchedule")]),
                  ("nodeC", [("cpu-type", "arm64", "PreferNoSchedule"), ("disk-type", "ssd", "PreferNoSchedule")])],
                 [100, 100, 0],
                 id="F3 TestTaintTolerationScore › only taints and tolerations that have effect PreferNoSchedule are checked by prioritizeNodes function"),
    pytest.param(pod_with(("foo", "Equal", "bar", "")),
                 [("nodeA", [("foo", "bar", "PreferNoSchedule")]), ("nodeB", [("foo", "bar", "PreferNoSchedule")])],
                 [100, 100], id="TestTaintTolerationScore › Default behaviour No taints and tolerations, lands on node with no taints"),
]


@pytest.mark.parametrize(("pod", "nodes", "want"), SCORE_CASES)
def test_score(pod, nodes, want) -> None:
    plugin = tainttoleration.new(None, FakeHandle())
    batch = NodeBatch.of([node_with(name, *taints) for name, taints in nodes])
    state = CycleState()
    assert plugin.kubesched_pre_score(state, pod, batch) is None
    scores = plugin.kubesched_score(state, pod, batch)
    plugin.kubesched_normalize_score(state, pod, scores)
    assert scores.tolist() == want


@pytest.mark.parametrize(
    ("tol", "taint", "want"),
    [
        pytest.param(Toleration(key="foo", operator="Exists"), Taint(key="foo", value="x", effect="NoExecute"), True,
                     id="Exists with empty effect matches every effect"),
        pytest.param(Toleration(operator="Exists"), Taint(key="any", effect="NoSchedule"), True, id="empty key with Exists"),
        pytest.param(Toleration(value="v"), Taint(key="any", value="v", effect="NoSchedule"), True,
                     id="empty key and operator means Equal on the value"),
        pytest.param(Toleration(key="foo", operator="Equal", value="a"), Taint(key="foo", value="b"), False, id="Equal value mismatch"),
        pytest.param(Toleration(key="foo", operator="Gt", value="1"), Taint(key="foo", value="2"), False, id="unknown operator"),
        pytest.param(Toleration(key="foo", operator="Exists", effect="NoSchedule"), Taint(key="foo", effect="NoExecute"), False,
                     id="effect mismatch"),
    ],
)
def test_toleration_matching(tol, taint, want) -> None:
    assert toleration_tolerates_taint(tol, taint) is want


def test_node_change_hint() -> None:
    plugin = tainttoleration.new(None, FakeHandle())
    ev = plugin.kubesched_events_to_register()[0]
    pod = pod_with(("foo", "Exists", "", "NoSchedule"))
    tainted = make_node("n").taint("bar", "x", "NoSchedule").obj()
    tolerated = make_node("n").taint("foo", "x", "NoSchedule").obj()
    assert ev.hint(pod, None, tolerated) == 1
    assert ev.hint(pod, None, tainted) == 0
    assert ev.hint(pod, tainted, tolerated) == 1
    assert ev.hint(pod, tolerated, tolerated) == 0
