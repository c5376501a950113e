"""NodeName, NodeUnschedulable, SchedulingGates, PrioritySort and DefaultBinder."""

from __future__ import annotations

import pytest

from kubesched import Binding, CycleState, NodeBatch, QueuedPodInfo
from kubesched.plugins import (
    IN_TREE,
    defaultbinder,
    nodename,
    nodeunschedulable,
    queuesort,
    schedulinggates,
)
from kubesched.runtime._nodeinfo import NodeInfo, PodInfo
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod

# --- NodeName (nodename/node_name_test.go › TestNodeName) ---------------------------------------


@pytest.mark.parametrize(
    ("pod_node", "node", "fits"),
    [
        pytest.param("", "foo", True, id="TestNodeName › no host specified"),
        pytest.param("foo", "foo", True, id="TestNodeName › host matches"),
        pytest.param("bar", "foo", False, id="TestNodeName › host doesn't match"),
    ],
)
def test_node_name(pod_node: str, node: str, fits: bool) -> None:
    pod = make_pod("p").node(pod_node).obj() if pod_node else make_pod("p").obj()
    out = nodename.new(None, FakeHandle()).kubesched_filter(CycleState(), pod, NodeBatch.of([make_node_info(make_node(node).obj())]))
    if fits:
        assert out is None
    else:
        assert (out[0].code, out[0].reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (nodename.ERR_REASON,))


def test_node_name_add_hint() -> None:
    ev = nodename.new(None, FakeHandle()).kubesched_events_to_register()[0]
    pod = make_pod("p").node("foo").obj()
    assert ev.hint(pod, None, make_node("foo").obj()) == 1
    assert ev.hint(pod, None, make_node("bar").obj()) == 0


# --- NodeUnschedulable (node_unschedulable_test.go › TestNodeUnschedulable) ----------------------


def _tolerating_pod():
    return make_pod("p").toleration("node.kubernetes.io/unschedulable", "", "NoSchedule", "Exists").obj()


@pytest.mark.parametrize(
    ("pod", "unschedulable", "want"),
    [
        pytest.param(make_pod("p").obj(), True, nodeunschedulable.ERR_REASON_UNSCHEDULABLE,
                     id="TestNodeUnschedulable › Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)"),
        pytest.param(make_pod("p").obj(), False, None, id="TestNodeUnschedulable › Schedule pod to normal node"),
        pytest.param(_tolerating_pod(), True, None,
                     id="TestNodeUnschedulable › Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)"),
    ],
)
def test_node_unschedulable(pod, unschedulable, want) -> None:
    ni = make_node_info(make_node("n").unschedulable(unschedulable).obj())
    out = nodeunschedulable.new(None, FakeHandle()).kubesched_filter(CycleState(), pod, NodeBatch.of([ni]))
    if want is None:
        assert out is None
    else:
        assert (out[0].code, out[0].reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))


def test_node_unschedulable_without_node() -> None:
    out = nodeunschedulable.new(None, FakeHandle()).kubesched_filter(CycleState(), make_pod("p").obj(), NodeBatch.of([NodeInfo(name="x")]))
    assert out[0].reasons == ("node(s) had unknown conditions",)


def test_node_unschedulable_hints() -> None:
    node_ev, pod_ev = nodeunschedulable.new(None, FakeHandle()).kubesched_events_to_register()
    cordoned = make_node("n").unschedulable().obj()
    ready = make_node("n").obj()
    pod = make_pod("p").obj()
    assert node_ev.hint(pod, None, ready) == 1
    assert node_ev.hint(pod, None, cordoned) == 0
    assert node_ev.hint(pod, cordoned, ready) == 1
    assert node_ev.hint(pod, ready, cordoned) == 0
    assert pod_ev.hint(pod, pod, _tolerating_pod()) == 1
    assert pod_ev.hint(pod, pod, make_pod("other").obj()) == 0


# --- SchedulingGates ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gates", "want"),
    [
        pytest.param((), None, id="TestPreEnqueue › pod does not carry scheduling gates"),
        pytest.param(("foo", "bar"), "waiting for scheduling gates: [foo bar]", id="TestPreEnqueue › pod carries scheduling gates"),
    ],
)
def test_scheduling_gates(gates, want) -> None:
    st = schedulinggates.new(None, FakeHandle()).kubesched_pre_enqueue(make_pod("p").scheduling_gates(*gates).obj())
    if want is None:
        assert st is None
    else:
        assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))


def test_scheduling_gates_events() -> None:
    (ev,) = schedulinggates.new(None, FakeHandle()).kubesched_events_to_register()
    pod = make_pod("p").obj()
    assert ev.hint(pod, pod, pod) == 1
    assert ev.hint(pod, make_pod("q").obj(), make_pod("q").obj()) == 0


# --- PrioritySort (queuesort/priority_sort_test.go › TestLess) ------------------------------------


def _qpi(priority: int, ts: float) -> QueuedPodInfo:
    return QueuedPodInfo(PodInfo(make_pod(f"p{priority}-{ts}").priority(priority).obj()), timestamp=ts)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(_qpi(100, 1), _qpi(1, 1), True, id="TestLess › p1.priority greater than p2.priority"),
        pytest.param(_qpi(1, 1), _qpi(100, 1), False, id="TestLess › p1.priority less than p2.priority"),
        pytest.param(_qpi(100, 1), _qpi(100, 2), True, id="TestLess › equal priority. p1 is added to schedulingQ earlier than p2"),
        pytest.param(_qpi(100, 2), _qpi(100, 1), False, id="TestLess › equal priority. p2 is added to schedulingQ earlier than p1"),
    ],
)
def test_priority_sort(a, b, want) -> None:
    assert queuesort.new(None, FakeHandle()).kubesched_queue_sort_less(a, b) is want


# --- DefaultBinder (defaultbinder/default_binder_test.go › TestDefaultBinder) --------------------


class _Client:
    def __init__(self, err: Exception | None = None) -> None:
        self.err = err
        self.bindings: list[Binding] = []

    async def bind(self, binding: Binding) -> None:
        if self.err is not None:
            raise self.err
        self.bindings.append(binding)


@pytest.mark.anyio
async def test_default_binder_success() -> None:
    client = _Client()
    pod = make_pod("foo", "ns").obj()
    st = await defaultbinder.new(None, FakeHandle(client=client)).kubesched_bind(CycleState(), pod, "foohost.kubernetes.mydomain.com")
    assert st is None
    (b,) = client.bindings
    assert (b.metadata.namespace, b.metadata.name, b.metadata.uid) == ("ns", "foo", pod.metadata.uid)
    assert (b.target.kind, b.target.name) == ("Node", "foohost.kubernetes.mydomain.com")


@pytest.mark.anyio
async def test_default_binder_error() -> None:
    pod = make_pod("foo", "ns").obj()
    st = await defaultbinder.new(None, FakeHandle(client=_Client(RuntimeError("binding error")))).kubesched_bind(CycleState(), pod, "n")
    assert st is not None and st.code == Code.ERROR and st.message == "binding error"


def test_in_tree_registry() -> None:
    assert set(IN_TREE) == {
        "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodeResourcesFit", "NodeResourcesBalancedAllocation", "DefaultBinder",
        "DefaultPreemption", "DynamicResources", "NodeDeclaredFeatures",
        "Coscheduling",
        "Gang", "GangScheduling", "TopologyPlacement", "PodGroupPodsCount",
        "NodePorts", "PodTopologySpread", "ImageLocality",
        "InterPodAffinity",
        "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
    }
    for name, factory in IN_TREE.items():
        assert factory(None, FakeHandle()).name == name
