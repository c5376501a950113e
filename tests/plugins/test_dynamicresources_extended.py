"""DynamicResources with DRAExtendedResource: the special claim of a pod's extended resources
backed by DRA.  Upstream's TestPlugin cases on extended resources (kubernetes
``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go`` as read after
v1.36.0), each named ``test_plugin__TestPlugin_<case>``, with kubesched's fixtures (node
``worker``, driver ``some-driver``, devices ``instance-*``).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from kubesched import CycleState
from kubesched.api import FINALIZER
from kubesched.plugins import dynamicresources as dra
from kubesched.plugins._dra_extended import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    SPECIAL_CLAIM_IN_MEM_NAME,
)
from kubesched.runtime._nodeinfo import NodeBatch
from kubesched.runtime._status import Code, Status
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod
from kubesched.testing_dra import make_claim, make_device_class, make_slice

NODE, DRIVER, POD, POD_UID = "worker", "some-driver", "my-pod", "1234"
EXT = "example.com/gpu"  # upstream's extendedResourceName
EXT2 = "example.com/gpu2"
CLASS = make_device_class("my-resource-class", extended_resource_name=EXT)
CLASS2 = make_device_class("my-resource-class-2", extended_resource_name=EXT2)
PLAIN_CLASS = make_device_class("my-resource-class")
GATES = {"DynamicResourceAllocation": True, "DRAExtendedResource": True}
_UIDS = itertools.count()


def pod_with(**requests: Any) -> Any:
    return make_pod(POD).uid(POD_UID).req_list(requests).obj()


def worker_slice(devices: int = 1) -> Any:
    b = make_slice(NODE, DRIVER)
    for i in range(devices):
        b = b.device(f"instance-{i + 1}")
    s = b.obj()
    s.metadata.uid, s.metadata.resource_version = f"slice-{next(_UIDS)}", "1"
    return s


def setup(classes: list[Any], slices: list[Any] = (), claims: list[Any] = (), allocatable: dict[str, Any] | None = None, gates: dict[str, bool] | None = None) -> tuple[dra.DynamicResources, FakeHandle, Any]:  # type: ignore[assignment]  # fmt: skip
    node = make_node(NODE).capacity_list({"cpu": "8", "memory": "8Gi", "pods": 110, **(allocatable or {})}).obj()
    handle = FakeHandle([node], feature_gates=gates or GATES)
    for k in classes:
        handle.cluster.device_classes[k.metadata.name] = k
    for s in slices:
        handle.cluster.resource_slices[s.metadata.name] = s
    for c in claims:
        handle.cluster.resource_claims[(c.metadata.namespace, c.metadata.name)] = c
    return dra.new(None, handle), handle, make_node_info(node)


def run_filter(pl: dra.DynamicResources, state: CycleState, pod: Any, info: Any) -> Status | None:
    return (pl.kubesched_filter(state, pod, NodeBatch.of([info])) or {}).get(0)


def got(st: Status | None) -> tuple[Code, tuple[str, ...]] | None:
    return None if st is None else (st.code, st.reasons)


async def post_filter(pl: Any, *args: Any) -> Any:
    import inspect

    out = pl.kubesched_post_filter(*args)
    return await out if inspect.isawaitable(out) else out


async def schedule(pl: dra.DynamicResources, pod: Any, info: Any) -> CycleState:
    """PreFilter, Filter, Reserve and PreBind on the worker, each passing."""
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, state, pod, info) is None
    assert pl.kubesched_reserve(state, pod, NODE) is None
    return state


@pytest.mark.anyio
async def test_plugin__TestPlugin_empty_with_extended_resources_enabled() -> None:
    """The source's "no new claims to deallocate" with KubeschedSourceExact; without it no
    reason (kubernetes#129823 as issue 34 states it, docs/versions.md)."""
    for gates, want in (({**GATES, "KubeschedSourceExact": True}, (dra.MSG_NO_NEW_CLAIMS,)), (GATES, ())):
        pl, _, _ = setup([CLASS], gates=gates)
        pod = make_pod("foo").obj()
        state = CycleState()
        assert pl.kubesched_pre_filter(state, pod, []).code == Code.SKIP
        _, st = await post_filter(pl, state, pod, {})
        assert got(st) == (Code.UNSCHEDULABLE, want)


@pytest.mark.anyio
async def test_plugin__TestPlugin_extended_resource_name_with_resources() -> None:
    pl, handle, info = setup([CLASS], [worker_slice()])
    pod = pod_with(**{EXT: 1})
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, state, pod, info) is None
    assert pl.kubesched_reserve(state, pod, NODE) is None
    # reserve: the node's copy of the special claim, allocated, in flight under its temporary uid
    (in_flight,) = pl.in_flight.values()
    assert in_flight.metadata.name == SPECIAL_CLAIM_IN_MEM_NAME
    assert in_flight.metadata.generate_name == f"{POD}-extended-resources-"
    assert in_flight.metadata.annotations == {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    assert [(r.name, r.exactly.device_class_name, r.exactly.count) for r in in_flight.spec.devices.requests] == [
        ("container-0-request-0", CLASS.metadata.name, 1)
    ]
    assert in_flight.status.allocation is not None and FINALIZER in in_flight.metadata.finalizers
    assert await pl.kubesched_pre_bind(state, pod, NODE) is None
    assert not pl.in_flight
    client = handle.client
    kinds = [k for k, _ in client.claims]  # type: ignore[attr-defined]
    assert kinds == ["create", "update", "status"]
    created = client.claims[0][1]  # type: ignore[attr-defined]
    assert created.metadata.name == f"{POD}-extended-resources-xxxxx"
    ref = created.metadata.owner_references[0]
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller) == ("v1", "Pod", POD, POD_UID, True)
    assert created.status.allocation is None  # created without; written by the status update
    final = client.claims[2][1]  # type: ignore[attr-defined]
    assert [(d.pool, d.device) for d in final.status.allocation.devices.results] == [(NODE, "instance-1")]
    assert [r.uid for r in final.status.reserved_for] == [POD_UID]
    ((ns, name, status),) = client.extended_statuses  # type: ignore[attr-defined]
    assert (ns, name, status.resource_claim_name) == ("default", POD, created.metadata.name)
    assert [(m.container_name, m.resource_name, m.request_name) for m in status.request_mappings] == [
        ("c0", EXT, "container-0-request-0")
    ]


@pytest.mark.anyio
async def test_plugin__TestPlugin_implicit_extended_resource_name_with_resources() -> None:
    implicit = "deviceclass.resource.kubernetes.io/my-resource-class"
    pl, handle, info = setup([CLASS], [worker_slice(4)])
    pod = pod_with(**{implicit: 2})
    state = await schedule(pl, pod, info)
    assert await pl.kubesched_pre_bind(state, pod, NODE) is None
    final = handle.client.claims[-1][1]  # type: ignore[attr-defined]
    assert len(final.status.allocation.devices.results) == 2
    ((_, _, status),) = handle.client.extended_statuses  # type: ignore[attr-defined]
    assert [m.resource_name for m in status.request_mappings] == [implicit]


@pytest.mark.anyio
async def test_plugin__TestPlugin_implicit_extended_resource_name_two_containers_with_resources() -> None:
    implicit = "deviceclass.resource.kubernetes.io/my-resource-class"
    pl, handle, info = setup([CLASS], [worker_slice(4)])
    pod = make_pod(POD).uid(POD_UID).req_list({implicit: 1}).req_list({implicit: 2}).obj()
    state = await schedule(pl, pod, info)
    (in_flight,) = pl.in_flight.values()
    assert [(r.name, r.exactly.count) for r in in_flight.spec.devices.requests] == [
        ("container-0-request-0", 1), ("container-1-request-0", 2)
    ]  # fmt: skip
    assert await pl.kubesched_pre_bind(state, pod, NODE) is None
    assert len(handle.client.claims[-1][1].status.allocation.devices.results) == 3  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_plugin__TestPlugin_extended_resource_name_with_zero_allocatable() -> None:
    # the node advertises the resource at 0: DRA serves it
    pl, handle, info = setup([CLASS], [worker_slice()], allocatable={EXT: 0})
    pod = pod_with(**{EXT: 1})
    state = await schedule(pl, pod, info)
    assert await pl.kubesched_pre_bind(state, pod, NODE) is None
    assert [k for k, _ in handle.client.claims] == ["create", "update", "status"]  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_plugin__TestPlugin_extended_resource_one_device_plugin_one_dra() -> None:
    # EXT from the device plugin (allocatable 1), EXT2 from DRA: the claim asks for EXT2 only
    pl, handle, info = setup([CLASS, CLASS2], [worker_slice()], allocatable={EXT: 1})
    pod = pod_with(**{EXT2: 1})
    pod.spec.containers[0].resources.requests[EXT] = "1"
    state = await schedule(pl, pod, info)
    (in_flight,) = pl.in_flight.values()
    assert [(r.name, r.exactly.device_class_name) for r in in_flight.spec.devices.requests] == [
        ("container-0-request-1", CLASS2.metadata.name)
    ]
    assert await pl.kubesched_pre_bind(state, pod, NODE) is None
    ((_, _, status),) = handle.client.extended_statuses  # type: ignore[attr-defined]
    assert [m.resource_name for m in status.request_mappings] == [EXT2]


def test_plugin__TestPlugin_non_DRA_extended_resource_name_with_zero_allocatable() -> None:
    # no class maps the resource: the plugin has nothing to do
    pl, _, _ = setup([PLAIN_CLASS], [worker_slice()], allocatable={EXT: 0})
    assert pl.kubesched_pre_filter(CycleState(), pod_with(**{EXT: 1}), []).code == Code.SKIP


@pytest.mark.anyio
async def test_plugin__TestPlugin_extended_resource_name_no_resource() -> None:
    pl, _, info = setup([CLASS])
    pod = pod_with(**{EXT: 1})
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert got(run_filter(pl, state, pod, info)) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (dra.MSG_CANNOT_ALLOCATE,))
    _, st = await post_filter(pl, state, pod, {})
    assert got(st) == (Code.UNSCHEDULABLE, (dra.MSG_STILL_NOT_SCHEDULABLE,))


def special_claim(pod: Any, name: str = f"{POD}-extended-resources-abcde") -> Any:
    c = make_claim(name).request(CLASS.metadata.name, name="container-0-request-0").finalizer().obj()
    c.metadata.annotations = {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    from kubesched.api import OwnerReference

    md = pod.metadata
    c.metadata.owner_references = [OwnerReference(api_version="v1", kind="Pod", name=md.name, uid=md.uid, controller=True)]
    c.metadata.resource_version = "1"
    return c


@pytest.mark.anyio
async def test_plugin__TestPlugin_extended_resource_name_with_resources_has_claim() -> None:
    # an earlier cycle's claim: rejected everywhere, then deleted by PostFilter
    pod = pod_with(**{EXT: 1})
    stale = special_claim(pod)
    pl, handle, info = setup([CLASS], [worker_slice()], [stale])
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert got(run_filter(pl, state, pod, info)) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot schedule extended resource claim",))
    _, st = await post_filter(pl, state, pod, {})
    assert got(st) == (Code.UNSCHEDULABLE, ("deletion of ResourceClaim completed",))
    client = handle.client
    ((verb, updated),) = client.claims  # type: ignore[attr-defined]
    assert verb == "update"
    assert FINALIZER not in updated.metadata.finalizers  # removed first
    assert client.deleted_claims == [("default", stale.metadata.name, None)]  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_plugin__TestPlugin_extended_resource_name_with_resources_fail_patch() -> None:
    pl, handle, info = setup([CLASS], [worker_slice()])
    pod = pod_with(**{EXT: 1})
    handle.client.fail["patch_extended"] = {POD}  # type: ignore[attr-defined]
    state = await schedule(pl, pod, info)
    st = await pl.kubesched_pre_bind(state, pod, NODE)
    assert st is not None and st.code == Code.ERROR
    assert st.reasons[0].startswith(f"update pod default/{POD} ExtendedResourceClaimStatus: ")
    assert [k for k, _ in handle.client.claims] == ["create", "update", "status"]  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_plugin__TestPlugin_extended_resource_name_bind_failure() -> None:
    # PreBind wrote the claim; a later failure's Unreserve deletes it
    pl, handle, info = setup([CLASS], [worker_slice()])
    pod = pod_with(**{EXT: 1})
    state = await schedule(pl, pod, info)
    assert await pl.kubesched_pre_bind(state, pod, NODE) is None
    created = handle.client.claims[0][1]  # type: ignore[attr-defined]
    await pl.kubesched_unreserve(state, pod, NODE)
    assert handle.client.deleted_claims == [("default", created.metadata.name, None)]  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_plugin__TestPlugin_extended_resource_name_skip_bind() -> None:
    # Unreserve before PreBind: out of flight, nothing written
    pl, handle, info = setup([CLASS], [worker_slice()])
    pod = pod_with(**{EXT: 1})
    state = await schedule(pl, pod, info)
    await pl.kubesched_unreserve(state, pod, NODE)
    assert not pl.in_flight
    assert handle.client.claims == [] and handle.client.deleted_claims == []  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_plugin__TestPlugin_extended_resource_name_claim_creation_failure() -> None:
    pl, handle, info = setup([CLASS], [worker_slice()])
    pod = pod_with(**{EXT: 1})
    handle.client.fail["create_claim"] = {f"{POD}-extended-resources-xxxxx"}  # type: ignore[attr-defined]
    state = await schedule(pl, pod, info)
    st = await pl.kubesched_pre_bind(state, pod, NODE)
    assert st is not None and st.code == Code.ERROR
    assert st.reasons[0].startswith("create claim for extended resources default/: ")
    assert not pl.in_flight
    await pl.kubesched_unreserve(state, pod, NODE)
    assert handle.client.deleted_claims == []  # type: ignore[attr-defined]


def test_satisfied_by_the_device_plugin() -> None:
    # filterExtendedResources: the node advertises the resource, no user claim: nothing to do;
    # Reserve and PreBind write nothing
    pl, _, info = setup([CLASS], [worker_slice()], allocatable={EXT: 2})
    pod = pod_with(**{EXT: 1})
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert run_filter(pl, state, pod, info) is None
    assert pl.kubesched_reserve(state, pod, NODE) is None
    assert not pl.in_flight


def test_cannot_fit_an_unmapped_resource_the_node_lacks() -> None:
    # filterExtendedResources: "cannot fit resource" for a requested extended resource neither
    # the node nor a class provides, beside one DRA serves
    pl, _, info = setup([CLASS], [worker_slice()])
    pod = pod_with(**{EXT: 1, "example.com/other": 1})
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []) is None
    assert got(run_filter(pl, state, pod, info)) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot fit resource",))


def test_gate_off_the_plugin_skips_the_pod() -> None:
    pl, _, _ = setup([CLASS], [worker_slice()], gates={"DynamicResourceAllocation": True, "DRAExtendedResource": False})
    assert pl.kubesched_pre_filter(CycleState(), pod_with(**{EXT: 1}), []).code == Code.SKIP
