"""NodeResourcesFit with DRAExtendedResource: an extended resource a DeviceClass maps and the
node's allocatable lacks is left to DynamicResources (``shouldDelegateResourceToDRA``).

Ported from kubernetes ``pkg/scheduler/framework/plugins/noderesources/fit_test.go`` as read
after v1.36.0 (TestEnoughRequests' DRA rows, TestEventsToRegister's DRAExtendedResource rows,
the DeviceClass queueing hint), each test id naming the upstream test and case.
"""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from kubesched import CycleState, NodeBatch, Status
from kubesched.framework import ActionType, EventResource, QueueingHint
from kubesched.plugins.noderesources import Fit, new_fit
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod
from kubesched.testing_dra import make_device_class

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
EXT_DRA = "extended.resource.dra.io/something"
# fit_test.go deviceClassWithExtendResourceName
DRA_CLASS = make_device_class("device-class-name", extended_resource_name=EXT_DRA)


def fit(gate: bool, *classes: Any) -> Fit:
    # KubeschedSourceExact: the source's UnschedulableAndUnresolvable above allocatable
    # (kubernetes#131345), as upstream's test expects it (docs/versions.md)
    gates = {"DynamicResourceAllocation": True, "DRAExtendedResource": gate, "KubeschedSourceExact": True}
    handle = FakeHandle(feature_gates=gates)
    for c in classes:
        handle.cluster.device_classes[c.metadata.name] = c
    return new_fit(None, handle)


def enough_node() -> Any:
    """TestEnoughRequests' node: cpu 10m, memory 20, pods 32, aaa 5, ephemeral 20, hugepages 5."""
    node = make_node("machine").capacity_list(
        {"cpu": "10m", "memory": 20, "pods": 32, EXT_A: 5, "ephemeral-storage": 20, "hugepages-2Mi": 5}
    ).obj()
    return make_node_info(node, make_pod("existing").obj())


def run_filter(plugin: Fit, pod: Any) -> Status | None:
    state = CycleState()
    assert plugin.kubesched_pre_filter(state, pod, []) is None
    ni = enough_node()
    batch = (plugin.kubesched_filter(state, pod, NodeBatch.of([ni])) or {}).get(0)
    # the single-node path (preemption's dry run) and the columns answer alike
    many = plugin.kubesched_filter(state, pod, NodeBatch.of([ni, enough_node()])) or {}
    assert (None if 0 not in many else (many[0].code, many[0].reasons)) == (
        None if batch is None else (batch.code, batch.reasons)
    )
    return batch


def pod_req(**req: Any) -> Any:
    return make_pod("p").req(**req).obj()


@pytest.mark.parametrize(
    ("gate", "requests", "want"),
    [
        pytest.param(True, {EXT_A: 1}, None, id="TestEnoughRequests: extended resource backed by device plugin"),
        pytest.param(True, {"cpu": "1m", "memory": 1, EXT_DRA: 1}, None,
                     id="TestEnoughRequests: extended resource backed by DRA"),
        pytest.param(False, {"cpu": "1m", "memory": 1, EXT_DRA: 1},
                     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"Insufficient {EXT_DRA}",)),
                     id="TestEnoughRequests: extended resource backed by DRA not enabled"),
        pytest.param(True, {"cpu": "1m", "memory": 1, EXT_B: 1},
                     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"Insufficient {EXT_B}",)),
                     id="TestEnoughRequests: extended resource NOT backed by DRA"),
        pytest.param(True, {EXT_DRA: 1}, None,
                     id="TestEnoughRequests: extended resource was backed by Device Plugin (Allocatable: 0)"),
        pytest.param(True, {EXT_A: 1}, None,
                     id="TestEnoughRequests: extended resource was backed by Device Plugin (Allocatable: 0), global cache"),
    ],
)  # fmt: skip
def test_enough_requests_dra(gate: bool, requests: dict[str, Any], want: Any) -> None:
    st = run_filter(fit(gate, DRA_CLASS), pod_req(**requests))
    assert (None if st is None else (st.code, st.reasons)) == want


def test_a_node_advertising_the_resource_is_checked_by_fit() -> None:
    # shouldDelegateResourceToDRA: allocatable > 0 → the device plugin's, checked here
    cls = make_device_class("aaa-class", extended_resource_name=EXT_A)
    st = run_filter(fit(True, cls), pod_req(**{EXT_A: 6}))
    assert st is not None and (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"Insufficient {EXT_A}",))


def test_the_implicit_class_resource_is_delegated() -> None:
    # deviceclass.resource.kubernetes.io/<class>: every class maps its implicit name
    cls = make_device_class("gpu")
    assert run_filter(fit(True, cls), pod_req(**{"deviceclass.resource.kubernetes.io/gpu": 2})) is None
    st = run_filter(fit(True), pod_req(**{"deviceclass.resource.kubernetes.io/gpu": 2}))
    assert st is not None and st.reasons == ("Insufficient deviceclass.resource.kubernetes.io/gpu",)


def test_a_class_added_later_is_seen() -> None:
    plugin = fit(True)
    pod = pod_req(**{EXT_DRA: 1})
    assert run_filter(plugin, pod) is not None
    plugin.handle.cluster.device_classes[DRA_CLASS.metadata.name] = DRA_CLASS
    assert run_filter(plugin, pod) is None
    del plugin.handle.cluster.device_classes[DRA_CLASS.metadata.name]
    assert run_filter(plugin, pod) is not None


@pytest.mark.parametrize(
    ("gate", "device_class_event"),
    [
        pytest.param(True, True, id="TestEventsToRegister: Register events with DRAExtendedResource feature enabled"),
        pytest.param(False, False, id="TestEventsToRegister: Register events with DRAExtendedResource feature disabled"),
    ],
)
def test_events_to_register(gate: bool, device_class_event: bool) -> None:
    events = fit(gate).kubesched_events_to_register()
    dc = [e for e in events if e.event.resource == EventResource.DEVICE_CLASS]
    assert bool(dc) == device_class_event
    if dc:
        assert dc[0].event.action == ActionType.ADD | ActionType.UPDATE


ADDED = "<added>"


@pytest.mark.parametrize(
    ("old_name", "new_name", "class_name", "wanted", "want"),
    [
        pytest.param(ADDED, EXT_DRA, "c", EXT_DRA, QueueingHint.QUEUE, id="added, naming the pod's resource"),
        pytest.param(ADDED, None, "gpu", "deviceclass.resource.kubernetes.io/gpu", QueueingHint.QUEUE,
                     id="added, its implicit name is the pod's resource"),
        pytest.param(ADDED, EXT_B, "c", EXT_DRA, QueueingHint.QUEUE_SKIP, id="added, naming another resource"),
        pytest.param(EXT_DRA, EXT_DRA, "c", EXT_DRA, QueueingHint.QUEUE_SKIP, id="updated, same extended resource name"),
        pytest.param(EXT_B, EXT_DRA, "c", EXT_DRA, QueueingHint.QUEUE, id="updated to name the pod's resource"),
        pytest.param(EXT_DRA, None, "c", EXT_DRA, QueueingHint.QUEUE_SKIP, id="updated to name none"),
        pytest.param(None, None, "gpu", "deviceclass.resource.kubernetes.io/gpu", QueueingHint.QUEUE_SKIP,
                     id="updated, the implicit name only counts when added"),
    ],
)  # fmt: skip
def test_is_schedulable_after_device_class_event(
    old_name: Any, new_name: Any, class_name: str, wanted: str, want: QueueingHint
) -> None:
    # fit.go isSchedulableAfterDeviceClassEvent (after v1.36.0)
    new = make_device_class(class_name, extended_resource_name=new_name)
    old = None if old_name == ADDED else replace(new, spec=replace(new.spec, extended_resource_name=old_name))
    assert fit(True).is_schedulable_after_device_class_event(pod_req(**{wanted: 1}), old, new) == want


def test_node_hint_with_a_delegated_resource() -> None:
    # isSchedulableAfterNodeChange: isFit and haveAnyRequestedResourcesIncreased see the
    # resource as DRA's on a node without it
    plugin = fit(True, DRA_CLASS)
    pod = pod_req(cpu="1", **{EXT_DRA: 1})
    small = make_node("n").capacity_list({"cpu": "2", "memory": "1Gi", "pods": 10}).obj()
    assert plugin.is_schedulable_after_node_change(pod, None, small) == QueueingHint.QUEUE
    assert plugin.is_schedulable_after_node_change(pod, small, small) == QueueingHint.QUEUE
    off = fit(False, DRA_CLASS)
    assert off.is_schedulable_after_node_change(pod, None, small) == QueueingHint.QUEUE_SKIP
