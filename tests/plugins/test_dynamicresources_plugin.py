"""DynamicResources with claims: upstream's TestPlugin cases (kubernetes
``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go``, the v1.35/v1.36
table with ``fwk`` statuses), each named ``test_plugin__TestPlugin_<case>``, plus the in-flight
allocation (two pods, one device) and the filter timeout.

Fixtures as upstream's: pod ``my-pod`` (uid 1234) with the pod claim ``my-resource``, claim
``my-pod-my-resource`` requesting ``req-1`` of class ``my-resource-class``, driver
``some-driver``, node ``worker`` with the slice of device ``instance-1``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import anyio
import numpy as np
import pytest
from msgspec.structs import replace

from kubesched import CycleState
from kubesched.api._dra import FINALIZER
from kubesched.api._objects import PodResourceClaim, PodResourceClaimStatus
from kubesched.plugins import dynamicresources as dra
from kubesched.runtime._events import QueueingHint
from kubesched.runtime._nodeinfo import NodeBatch
from kubesched.runtime._status import Code, Status
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod
from kubesched.testing_dra import make_claim, make_device_class, make_slice

POD, POD_UID, CLAIM, CLASS, DRIVER, NODE = (
    "my-pod",
    "1234",
    "my-pod-my-resource",
    "my-resource-class",
    "some-driver",
    "worker",
)
_UIDS = itertools.count()
GATES = {"DynamicResourceAllocation": True, "DRAPrioritizedList": True, "DRADeviceTaints": True}


async def post_filter(pl: Any, *args: Any) -> Any:
    """PostFilter's answer: plain, or awaited when it writes (as the runtime does)."""
    import inspect

    out = pl.kubesched_post_filter(*args)
    return await out if inspect.isawaitable(out) else out


def pod_with_claim_name() -> Any:
    pod = make_pod(POD).uid(POD_UID).obj()
    pod.spec.resource_claims = [PodResourceClaim(name="my-resource", resource_claim_name=CLAIM)]
    return pod


def pod_with_claim_template(in_status: bool = True) -> Any:
    pod = make_pod(POD).uid(POD_UID).obj()
    pod.spec.resource_claims = [
        PodResourceClaim(name="my-resource", resource_claim_template_name="my-template")
    ]
    if in_status:
        pod.status.resource_claim_statuses = [
            PodResourceClaimStatus(name="my-resource", resource_claim_name=CLAIM)
        ]
    return pod


def pending_claim(name: str = CLAIM, *selectors: str) -> Any:
    c = make_claim(name).request(CLASS, *selectors, name="req-1").obj()
    c.metadata.resource_version = "1"
    return c


def allocated_claim(name: str = CLAIM, node: str | None = NODE, device: str = "instance-1") -> Any:
    c = (
        make_claim(name)
        .request(CLASS, name="req-1")
        .finalizer()
        .allocation(("req-1", DRIVER, NODE, device), node=node)
        .obj()
    )
    c.metadata.resource_version = "1"
    return c


def worker_slice(node: str = NODE) -> Any:
    s = make_slice(node, DRIVER).device("instance-1", {"healthy": True}).obj()
    s.metadata.uid, s.metadata.resource_version = f"slice-{node}", "1"
    return s


@dataclass
class Case:
    pod: Any
    claims: list[Any] = field(default_factory=list)
    classes: list[Any] = field(default_factory=list)
    slices: list[Any] = field(default_factory=list)
    nodes: list[str] = field(default_factory=lambda: [NODE])
    gates: dict[str, bool] = field(default_factory=dict)
    version: str = "1.36"


def setup(case: Case) -> tuple[dra.DynamicResources, FakeHandle]:
    nodes = [make_node(n).obj() for n in case.nodes]
    handle = FakeHandle(nodes, feature_gates={**GATES, **case.gates}, emulated_version=case.version)
    for c in case.claims:
        handle.cluster.resource_claims[(c.metadata.namespace, c.metadata.name)] = c
    for k in case.classes:
        handle.cluster.device_classes[k.metadata.name] = k
    for s in case.slices:
        # a fresh uid: the allocator keeps outcomes under the slices' uids and versions
        s.metadata.uid = f"slice-{next(_UIDS)}"
        handle.cluster.resource_slices[s.metadata.name] = s
    return dra.new(None, handle), handle


def run_filter(
    pl: dra.DynamicResources, handle: FakeHandle, state: CycleState, pod: Any
) -> dict[str, Status]:
    nodes = list(handle.cluster.nodes.values()) if hasattr(handle.cluster, "nodes") else []
    infos = [make_node_info(n) for n in nodes]
    out = pl.kubesched_filter(state, pod, NodeBatch.of(infos)) or {}
    return {infos[i].node.metadata.name: st for i, st in out.items()}


def status(code: Code, *reasons: str) -> tuple[Code, tuple[str, ...]]:
    return (code, reasons)


def got(st: Status | None) -> tuple[Code, tuple[str, ...]] | None:
    return None if st is None else (st.code, st.reasons)


# --- PreEnqueue -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "pod", "claims", "want"),
    [
        ("missing-claim", pod_with_claim_template(in_status=False), [allocated_claim()],
         status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'pod "default/my-pod": ResourceClaim not created yet')),
        ("deleted-claim", pod_with_claim_template(), ["deleting"],
         status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'resourceclaim "my-pod-my-resource" is being deleted')),
        ("wrong-claim", pod_with_claim_template(), ["foreign"],
         status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod (Pod is not owner)")),
        ("claim-template", pod_with_claim_template(), ["owned"], None),
    ],
)  # fmt: skip
def test_plugin__TestPlugin_pre_enqueue(name: str, pod: Any, claims: list[Any], want: Any) -> None:
    """Cases missing-claim, deleted-claim, wrong-claim (v0.36.2 ``resourceclaim.IsForPod`` text)
    and claim-template: PreEnqueue holds the pod back, UnschedulableAndUnresolvable."""
    objs = []
    for c in claims:
        if c == "deleting":
            b = (
                make_claim(CLAIM)
                .request(CLASS, name="req-1")
                .owned_by(pod, "my-resource")
                .deleting()
            )
            objs.append(b.obj())
        elif c == "foreign":
            other = make_pod(POD).uid(POD_UID + "123").obj()
            objs.append(
                make_claim(CLAIM).request(CLASS, name="req-1").owned_by(other, "my-resource").obj()
            )
        elif c == "owned":
            objs.append(
                make_claim(CLAIM).request(CLASS, name="req-1").owned_by(pod, "my-resource").obj()
            )
        else:
            objs.append(c)
    pl, _ = setup(Case(pod, objs))
    assert got(pl.kubesched_pre_enqueue(pod)) == want


def test_plugin__TestPlugin_empty() -> None:
    pl, _ = setup(Case(make_pod("foo").obj()))
    pod = make_pod("foo").obj()
    assert pl.kubesched_pre_enqueue(pod) is None
    assert pl.kubesched_pre_filter(CycleState(), pod, []).code == Code.SKIP


# --- PreFilter / Filter / PostFilter ----------------------------------------------------------


@pytest.mark.anyio
async def test_plugin__TestPlugin_no_resources() -> None:
    pod = pod_with_claim_name()
    pl, _ = setup(Case(pod, [pending_claim()], [make_device_class(CLASS)]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert {k: got(v) for k, v in run_filter(pl, pl.handle, state, pod).items()} == {  # type: ignore[arg-type]
        NODE: status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
    }
    _, st = await post_filter(pl, state, pod, {})
    assert got(st) == status(Code.UNSCHEDULABLE, "still not schedulable")


@pytest.mark.anyio
async def test_plugin__TestPlugin_exhausted_resources() -> None:
    pod = pod_with_claim_name()
    other = allocated_claim("not-my-claim")
    pl, handle = setup(
        Case(pod, [pending_claim(), other], [make_device_class(CLASS)], [worker_slice()])
    )
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert {k: got(v) for k, v in run_filter(pl, handle, state, pod).items()} == {
        NODE: status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
    }
    _, st = await post_filter(pl, state, pod, {})
    assert got(st) == status(Code.UNSCHEDULABLE, "still not schedulable")


def test_plugin__TestPlugin_tainted_device_enabled() -> None:
    from kubesched.api._dra import DeviceTaint

    pod = pod_with_claim_name()
    sl = worker_slice()
    sl.spec.devices[0].taints = [
        DeviceTaint(key="taint-key", value="taint-value", effect="NoSchedule")
    ]
    pl, handle = setup(Case(pod, [pending_claim()], [make_device_class(CLASS)], [sl]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert {k: got(v) for k, v in run_filter(pl, handle, state, pod).items()} == {
        NODE: status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
    }


def test_plugin__TestPlugin_tainted_device_disabled() -> None:
    from kubesched.api._dra import DeviceTaint

    pod = pod_with_claim_name()
    sl = worker_slice()
    sl.spec.devices[0].taints = [
        DeviceTaint(key="taint-key", value="taint-value", effect="NoSchedule")
    ]
    pl, handle = setup(
        Case(
            pod,
            [pending_claim()],
            [make_device_class(CLASS)],
            [sl],
            gates={"DRADeviceTaints": False},
        )
    )
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}


def test_plugin__TestPlugin_class_parameters_CEL_runtime_error() -> None:
    """A CEL runtime error in the class is the pod's Error status (retried with backoff)."""
    pod = pod_with_claim_name()
    broken = make_device_class(CLASS, 'device.attributes["some-driver"]["no-such-attribute"]')
    pl, handle = setup(Case(pod, [pending_claim()], [broken], [worker_slice()]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    out = run_filter(pl, handle, state, pod)
    assert out[NODE].code == Code.ERROR
    assert (
        out[NODE]
        .reasons[0]
        .startswith("class my-resource-class: selector #0: CEL runtime error: no such key:")
    )


def test_plugin__TestPlugin_claim_parameters_CEL_runtime_error() -> None:
    pod = pod_with_claim_name()
    claim = pending_claim(CLAIM, 'device.attributes["some-driver"]["no-such-attribute"]')
    pl, handle = setup(Case(pod, [claim], [make_device_class(CLASS)], [worker_slice()]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    out = run_filter(pl, handle, state, pod)
    assert out[NODE].code == Code.ERROR
    assert (
        out[NODE]
        .reasons[0]
        .startswith(
            "claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key:"
        )
    )


@pytest.mark.anyio
async def test_plugin__TestPlugin_missing_class() -> None:
    pod = pod_with_claim_name()
    pl, _ = setup(Case(pod, [pending_claim()]))
    state = CycleState()
    assert got(pl.kubesched_pre_filter(state, pod, [])) == status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "request req-1: device class my-resource-class does not exist",
    )
    _, st = await post_filter(pl, state, pod, {})
    assert got(st) == status(Code.UNSCHEDULABLE, "no new claims to deallocate")


def test_plugin__TestPlugin_claim_with_prioritized_list_feature_disabled() -> None:
    pod = pod_with_claim_name()
    claim = make_claim(CLAIM).first_available("req-1", ("subreq-1", CLASS)).obj()
    pl, _ = setup(
        Case(pod, [claim], [make_device_class(CLASS)], gates={"DRAPrioritizedList": False})
    )
    assert got(pl.kubesched_pre_filter(CycleState(), pod, [])) == status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "resource claim default/my-pod-my-resource, request req-1: has subrequests, but the DRAPrioritizedList feature is disabled",
    )


def test_plugin__TestPlugin_claim_with_prioritized_list_unknown_device_class() -> None:
    pod = pod_with_claim_name()
    claim = make_claim(CLAIM).first_available("req-1", ("subreq-1", "does-not-exist")).obj()
    pl, _ = setup(Case(pod, [claim]))
    assert got(pl.kubesched_pre_filter(CycleState(), pod, [])) == status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "request req-1/subreq-1: device class does-not-exist does not exist",
    )


@pytest.mark.anyio
async def test_plugin__TestPlugin_wrong_topology() -> None:
    """An allocated claim whose node selector names another node: PostFilter deallocates it."""
    pod = pod_with_claim_name()
    claim = allocated_claim(node="other-node")
    pl, handle = setup(Case(pod, [claim]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert {k: got(v) for k, v in run_filter(pl, handle, state, pod).items()} == {
        NODE: status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim not available on the node")
    }
    _, st = await post_filter(pl, state, pod, {})
    assert got(st) == status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
    verb, written = handle.client.claims[-1]  # type: ignore[attr-defined]
    assert (
        verb == "status" and written.status.allocation is None and written.status.reserved_for == []
    )


@pytest.mark.anyio
async def test_plugin__TestPlugin_good_topology() -> None:
    """Allocated on this node: PreBind only adds the reservation."""
    pod = pod_with_claim_name()
    pl, handle = setup(Case(pod, [allocated_claim()]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}
    assert pl.kubesched_reserve(state, pod, NODE) is None
    assert await pl.kubesched_pre_bind(state, pod, NODE) is None
    writes = handle.client.claims  # type: ignore[attr-defined]
    assert [v for v, _ in writes] == ["status"]
    assert [(r.name, r.uid) for r in writes[0][1].status.reserved_for] == [(POD, POD_UID)]


@pytest.mark.anyio
async def test_plugin__TestPlugin_bind_failure() -> None:
    """Unreserve after a failed bind removes the pod from reservedFor."""
    pod = pod_with_claim_name()
    pl, handle = setup(Case(pod, [allocated_claim()]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert pl.kubesched_reserve(state, pod, NODE) is None
    assert await pl.kubesched_pre_bind(state, pod, NODE) is None
    await pl.kubesched_unreserve(state, pod, NODE)
    verb, written = handle.client.claims[-1]  # type: ignore[attr-defined]
    assert verb == "status" and written.status.reserved_for == []


@pytest.mark.anyio
async def test_plugin__TestPlugin_with_resources() -> None:
    """Reserve puts the allocation in flight; PreBind adds the finalizer (an update), then the
    allocation and reservation (a status update)."""
    pod = pod_with_claim_name()
    pl, handle = setup(Case(pod, [pending_claim()], [make_device_class(CLASS)], [worker_slice()]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}
    assert pl.kubesched_reserve(state, pod, NODE) is None
    in_flight = pl.in_flight[pending_claim().metadata.uid]
    assert in_flight.metadata.finalizers == [FINALIZER]
    assert [
        (r.request, r.driver, r.pool, r.device) for r in in_flight.status.allocation.devices.results
    ] == [("req-1", DRIVER, NODE, "instance-1")]
    assert await pl.kubesched_pre_bind(state, pod, NODE) is None
    writes = handle.client.claims  # type: ignore[attr-defined]
    assert [v for v, _ in writes] == ["update", "status"]
    assert writes[0][1].metadata.finalizers == [FINALIZER]
    final = writes[1][1]
    assert final.status.allocation == in_flight.status.allocation
    assert [(r.name, r.uid) for r in final.status.reserved_for] == [(POD, POD_UID)]
    assert pl.in_flight == {}
    assert pl.assumed[("default", CLAIM)] is final  # assumed until the cluster catches up


@pytest.mark.anyio
async def test_plugin__TestPlugin_with_resources_has_finalizer() -> None:
    pod = pod_with_claim_name()
    claim = pending_claim()
    claim.metadata.finalizers = [FINALIZER]
    pl, handle = setup(Case(pod, [claim], [make_device_class(CLASS)], [worker_slice()]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}
    assert pl.kubesched_reserve(state, pod, NODE) is None
    assert await pl.kubesched_pre_bind(state, pod, NODE) is None
    assert [v for v, _ in handle.client.claims] == ["status"]  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_plugin__TestPlugin_skip_bind() -> None:
    """Unreserve before PreBind: the in-flight allocation is dropped, nothing is written."""
    pod = pod_with_claim_name()
    pl, handle = setup(Case(pod, [pending_claim()], [make_device_class(CLASS)], [worker_slice()]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}
    assert pl.kubesched_reserve(state, pod, NODE) is None
    assert pl.in_flight
    await pl.kubesched_unreserve(state, pod, NODE)
    assert pl.in_flight == {}
    assert handle.client.claims == []  # type: ignore[attr-defined]


def test_plugin__TestPlugin_reserved_okay() -> None:
    pod = pod_with_claim_name()
    claim = (
        make_claim(CLAIM)
        .request(CLASS, name="req-1")
        .finalizer()
        .allocation(("req-1", DRIVER, NODE, "instance-1"), node=NODE)
        .reserved_for(pod)
        .obj()
    )
    pl, handle = setup(Case(pod, [claim]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}


@pytest.mark.anyio
async def test_plugin__TestPlugin_DRA_disabled() -> None:
    pod = pod_with_claim_name()
    pl, _ = setup(Case(pod, [allocated_claim()], gates={"DynamicResourceAllocation": False}))
    assert pl.kubesched_pre_filter(CycleState(), pod, []).code == Code.SKIP
    _, st = await post_filter(pl, CycleState(), pod, {})
    assert got(st) == status(Code.UNSCHEDULABLE, "plugin disabled")


@pytest.mark.anyio
async def test_plugin__TestPlugin_request_admin_access_with_DRAAdminAccess_featuregate() -> None:
    pod = pod_with_claim_name()
    claim = make_claim(CLAIM).request(CLASS, name="req-1", admin_access=True).obj()
    claim.metadata.resource_version = "1"
    pl, handle = setup(Case(pod, [claim, allocated_claim("not-my-claim")], [make_device_class(CLASS)], [worker_slice()],
                            gates={"DRAAdminAccess": True}))  # fmt: skip
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}


def test_plugin__TestPlugin_request_admin_access_without_DRAAdminAccess_featuregate() -> None:
    pod = pod_with_claim_name()
    claim = make_claim(CLAIM).request(CLASS, name="req-1", admin_access=True).obj()
    pl, handle = setup(Case(pod, [claim, allocated_claim("not-my-claim")], [make_device_class(CLASS)], [worker_slice()],
                            gates={"DRAAdminAccess": False}))  # fmt: skip
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    out = run_filter(pl, handle, state, pod)
    assert got(out[NODE]) in (
        status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "claim default/my-pod-my-resource, request req-1: admin access is requested, but the feature is disabled"),
        status(Code.ERROR, "claim default/my-pod-my-resource, request req-1: admin access is requested, but the feature is disabled"),
    )  # fmt: skip


@pytest.mark.anyio
async def test_plugin__TestPlugin_structured_ignore_allocated_admin_access() -> None:
    """The allocated claim uses admin access, so the device is still free for this one."""
    pod = pod_with_claim_name()
    other = allocated_claim("not-my-claim")
    other.spec.devices.requests[0].exactly.admin_access = True  # type: ignore[union-attr]
    other.status.allocation.devices.results[0].admin_access = True  # type: ignore[union-attr]
    pl, handle = setup(Case(pod, [pending_claim(), other], [make_device_class(CLASS)], [worker_slice()],
                            gates={"DRAAdminAccess": True}))  # fmt: skip
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}


# --- in-flight allocations, queueing hints, timeout ------------------------------------------


def test_in_flight_allocation_takes_the_device() -> None:
    """Two pods, one device: after pod A's Reserve, pod B's allocator sees the device taken
    (upstream's inFlightAllocations), and a pod sharing A's claim waits for it."""
    pod_a = pod_with_claim_name()
    pod_b = make_pod("pod-b").uid("uid-b").obj()
    pod_b.spec.resource_claims = [PodResourceClaim(name="r", resource_claim_name="claim-b")]
    pl, handle = setup(
        Case(
            pod_a,
            [pending_claim(), pending_claim("claim-b")],
            [make_device_class(CLASS)],
            [worker_slice()],
        )
    )
    sa = CycleState()
    assert pl.kubesched_pre_filter(sa, pod_a, []) is None
    assert run_filter(pl, handle, sa, pod_a) == {}
    assert pl.kubesched_reserve(sa, pod_a, NODE) is None
    sb = CycleState()
    assert pl.kubesched_pre_filter(sb, pod_b, []) is None
    assert {k: got(v) for k, v in run_filter(pl, handle, sb, pod_b).items()} == {
        NODE: status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
    }
    sharer = make_pod("sharer").uid("uid-s").obj()
    sharer.spec.resource_claims = [PodResourceClaim(name="my-resource", resource_claim_name=CLAIM)]
    assert got(pl.kubesched_pre_filter(CycleState(), sharer, [])) == status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "resource claim default/my-pod-my-resource is in the process of being allocated",
    )


def test_filter_timeout() -> None:
    """``filterTimeout`` on the transport's clock: a search past the deadline is
    ``timed out trying to allocate devices``."""
    pod = pod_with_claim_name()
    pl, handle = setup(Case(pod, [pending_claim()], [make_device_class(CLASS)], [worker_slice()]))
    ticks = iter(range(1000, 10**6, 100))
    pl.handle = replace_clock(handle, lambda: float(next(ticks)))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    stop = pl._stop()
    assert stop is not None
    assert stop() is None  # the first check starts the clock
    assert stop() == "context deadline exceeded"  # 100 s later


def replace_clock(handle: FakeHandle, clock: Any) -> Any:
    class _H:
        def __getattr__(self, name: str) -> Any:
            return getattr(handle, name)

        def wall_clock(self) -> float:
            return float(clock())

    return _H()


def test_filter_timeout_args() -> None:
    handle = FakeHandle([], feature_gates=GATES, emulated_version="1.36")
    assert dra.new(None, handle).filter_timeout == 10.0
    assert (
        dra.new({"filterTimeout": "2m30s", "bindingTimeout": "1m"}, handle).filter_timeout == 150.0
    )
    assert dra.new({"bindingTimeout": "1m"}, handle).binding_timeout == 60.0


def test_queueing_hints() -> None:
    """``isSchedulableAfterClaimChange`` / ``isSchedulableAfterPodChange``."""
    pod = pod_with_claim_name()
    pl, _ = setup(Case(pod, [pending_claim()]))
    claim = pending_claim()
    other = pending_claim("other")
    assert pl.is_schedulable_after_claim_change(pod, None, claim) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_claim_change(pod, None, other) == QueueingHint.QUEUE_SKIP
    assert pl.is_schedulable_after_claim_change(pod, claim, claim) == QueueingHint.QUEUE_SKIP
    alloc = allocated_claim("other")
    assert (
        pl.is_schedulable_after_claim_change(pod, alloc, other) == QueueingHint.QUEUE
    )  # deallocated
    changed = replace(
        claim,
        status=replace(
            claim.status,
            reserved_for=allocated_claim().status.reserved_for,
            allocation=allocated_claim().status.allocation,
        ),
    )
    assert pl.is_schedulable_after_claim_change(pod, claim, changed) == QueueingHint.QUEUE
    waiting = pod_with_claim_template(in_status=False)
    pl.handle.cluster.resource_claims[("default", CLAIM)] = (
        make_claim(CLAIM).owned_by(waiting, "my-resource").obj()
    )
    assert pl.is_schedulable_after_pod_change(waiting, waiting, waiting) == QueueingHint.QUEUE_SKIP
    assert (
        pl.is_schedulable_after_pod_change(waiting, None, pod_with_claim_template())
        == QueueingHint.QUEUE
    )


@pytest.mark.anyio
async def test_binding_conditions_wait_then_time_out() -> None:
    """PreBind with a device that has binding conditions: the BindingConditionsPending event,
    then a poll every 5 s until bindingTimeout → ``device binding timeout``."""
    gates = {"DRADeviceBindingConditions": True, "DRAResourceClaimDeviceStatus": True}
    pod = pod_with_claim_name()
    sl = worker_slice()
    sl.spec.devices[0] = replace(
        sl.spec.devices[0], binding_conditions=["attached"], binding_failure_conditions=["failed"]
    )
    pl, handle = setup(Case(pod, [pending_claim()], [make_device_class(CLASS)], [sl], gates=gates))
    pl.binding_timeout = pl.binding.binding_timeout = 20.0
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}
    assert pl.kubesched_reserve(state, pod, NODE) is None
    start = anyio.current_time()
    st = await pl.kubesched_pre_bind(state, pod, NODE)
    assert got(st) == status(Code.ERROR, "device binding timeout")
    assert anyio.current_time() - start == pytest.approx(20.0)
    assert [e[2] for e in handle.events] == ["BindingConditionsPending"]


def test_devices_in_use_follow_the_claims_table() -> None:
    """The devices in use are kept from the claims table's change log: an allocation added,
    one dropped, a claim deleted; the per-pool view given to the allocator is what it would
    work out itself; an in-flight allocation counts too."""
    from kubesched.dra._memo import PoolUse

    pod = pod_with_claim_name()
    pl, handle = setup(Case(pod, [allocated_claim("a", device="instance-1")]))
    table = handle.cluster.resource_claims

    def check(want: set[tuple[str, str, str]]) -> None:
        st = pl.allocated_state()
        assert st.devices == want
        assert st.pool_use is not None
        assert st.pool_use._use == PoolUse(st.devices, st.shared, st.capacity)._use

    check({(DRIVER, NODE, "instance-1")})
    table[("default", "b")] = allocated_claim("b", device="instance-2")
    check({(DRIVER, NODE, "instance-1"), (DRIVER, NODE, "instance-2")})
    table[("default", "a")] = pending_claim("a")  # deallocated
    check({(DRIVER, NODE, "instance-2")})
    del table[("default", "b")]
    check(set())
    pl.in_flight["x"] = allocated_claim("x", device="instance-3")
    check({(DRIVER, NODE, "instance-3")})


@pytest.mark.anyio
async def test_plugin__TestPlugin_claim_with_prioritized_list() -> None:
    """Allocated with the first subrequest that fits; Reserve puts it in flight, PreBind
    writes it.  Score (v1.35+ ``computeScore``): 8 minus the subrequest's index, normalized."""

    pod = pod_with_claim_name()
    claim = (
        make_claim(CLAIM).first_available("req-1", ("subreq-1", "big"), ("subreq-2", CLASS)).obj()
    )
    claim.metadata.resource_version = "1"
    big = make_device_class("big", 'device.attributes["some-driver"].big')
    s2 = make_slice("worker-2", DRIVER).device("instance-1", {"big": True}).obj()
    s2.metadata.resource_version = "1"
    s1 = worker_slice()
    s1.spec.devices[0].attributes.update(
        make_slice(None, DRIVER).device("x", {"big": False}).obj().spec.devices[0].attributes
    )
    pl, handle = setup(
        Case(pod, [claim], [make_device_class(CLASS), big], [s1, s2], nodes=[NODE, "worker-2"])
    )
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}
    infos = [make_node_info(n) for n in handle.cluster.nodes.values()]
    batch = NodeBatch.of(infos)
    scores = np.array(pl.kubesched_score(state, pod, batch), dtype=np.int64)
    assert dict(zip([i.node.metadata.name for i in infos], scores.tolist(), strict=True)) == {
        NODE: 7,
        "worker-2": 8,
    }
    pl.kubesched_normalize_score(state, pod, scores)
    assert scores.tolist() == [87, 100]
    assert pl.kubesched_reserve(state, pod, "worker-2") is None
    alloc = pl.in_flight[claim.metadata.uid].status.allocation
    assert [r.request for r in alloc.devices.results] == ["req-1/subreq-1"]


def test_score_per_version__no_prescore_and_zero_without_prioritized_lists() -> None:
    """v1.35.4 dynamicresources.go: no PreScore (``var _ fwk.ScorePlugin`` only), so Score runs
    for a pod whose claims have no prioritized list (0 on every node, ``computeScore`` adds
    nothing for ``exactly`` requests) and for a pod without claims (``state.claims.empty()``:
    0); v1.34.7's plugin is no Score plugin."""
    from kubesched import hookspecs

    pod = pod_with_claim_name()
    pl, handle = setup(Case(pod, [pending_claim()], [make_device_class(CLASS)], [worker_slice()]))
    assert not hookspecs.implements(pl, "kubesched_pre_score")
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}
    batch = NodeBatch.of([make_node_info(n) for n in handle.cluster.nodes.values()])
    scores = np.array(pl.kubesched_score(state, pod, batch), dtype=np.int64)
    assert scores.tolist() == [0]
    assert pl.kubesched_normalize_score(state, pod, scores) is None and scores.tolist() == [0]

    plain = make_pod("plain").obj()
    s2 = CycleState()
    assert pl.kubesched_pre_filter(s2, plain, []).code == Code.SKIP
    assert np.asarray(pl.kubesched_score(s2, plain, batch)).tolist() == [0]

    pl134, _ = setup(Case(pod, [pending_claim()], [make_device_class(CLASS)], [worker_slice()], version="1.34"))
    assert not any(hookspecs.implements(pl134, h) for h in ("kubesched_pre_score", "kubesched_score", "kubesched_normalize_score"))


@pytest.mark.parametrize("prioritized", [False, True], ids=["exactly", "firstAvailable"])
def test_score__computeScore_fewer_results_than_claims(prioritized: bool) -> None:
    """v1.35.4 ``computeScore`` indexes the node's results (one per claim to allocate) by each
    claim's position among all of the pod's claims: with an allocated claim beside one to
    allocate it fails ("number of allocations 1 is smaller than number of claims") on a node
    Filter allocated for, with or without a prioritized list (no Score runs on such pods
    upstream otherwise: Score is only reached with more than one feasible node)."""
    pod = pod_with_claim_name()
    pod.spec.resource_claims = [
        PodResourceClaim(name="a", resource_claim_name="done"),
        PodResourceClaim(name="b", resource_claim_name="todo"),
    ]
    done = allocated_claim("done", node=None)
    done.status.reserved_for = []
    todo = make_claim("todo").first_available("req-1", ("sub", CLASS)).obj() if prioritized else pending_claim("todo")
    todo.metadata.resource_version = "1"
    s = make_slice(NODE, DRIVER).device("instance-1").device("instance-2").obj()
    s.metadata.uid, s.metadata.resource_version = "slice-x", "1"
    pl, handle = setup(Case(pod, [done, todo], [make_device_class(CLASS)], [s]))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, handle, state, pod) == {}
    batch = NodeBatch.of([make_node_info(n) for n in handle.cluster.nodes.values()])
    with pytest.raises(Exception, match="number of allocations 1 is smaller than number of claims"):
        pl.kubesched_score(state, pod, batch)
    # a node Filter did not allocate for scores 0 (``nodeAllocations`` has no entry)
    other = NodeBatch.of([make_node_info(make_node("elsewhere").obj())])
    assert np.asarray(pl.kubesched_score(state, pod, other)).tolist() == [0]
