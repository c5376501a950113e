"""The DRA informers (upstream ``eventhandlers.go`` ``addAllEventHandlers``, v1.36): while
DynamicResourceAllocation is on, each ResourceClaim, ResourceSlice and DeviceClass event keeps
the scheduler's ClusterState table (the listers the DynamicResources plugin reads through
``handle.cluster``) and moves the unschedulable pods a plugin that registered it rejected, with
upstream's labels (``resource.k8s.io/ResourceClaimAdd``...); DeviceTaintRules are kept for the
plugin's slice tracker; a re-list reconciles the tables.  End to end on the fake cluster, in
virtual time, on both backends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

import kubesched
from kubesched import Status, hookimpl, per_node_filter
from kubesched.api import (
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    DeviceTaint,
    DeviceTaintRule,
    DeviceTaintRuleSpec,
    ExactDeviceRequest,
    ObjectMeta,
    ResourceClaim,
    ResourceClaimSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from kubesched.config._config import ProfileConfig, SchedulerConfig
from kubesched.runtime._events import (
    DRA_EVENTS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Resource,
)
from kubesched.scheduler._scheduler import Scheduler
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("resource", "watch", "label"),
    [
        (Resource.RESOURCE_CLAIM, "ADDED", "resource.k8s.io/ResourceClaimAdd"),
        (Resource.RESOURCE_SLICE, "MODIFIED", "resource.k8s.io/ResourceSliceUpdate"),
        (Resource.DEVICE_CLASS, "DELETED", "resource.k8s.io/DeviceClassDelete"),
    ],
)
def test_event_labels_are_upstreams(resource: Resource, watch: str, label: str) -> None:
    event = DRA_EVENTS[(resource, watch)]
    assert (event.resource, str(event)) == (resource, label)


class ClaimGate:
    """Rejects a pod labelled ``claim`` until the informer has claim ``c``; registered for
    claim adds (as DynamicResources registers ResourceClaim events)."""

    name = "ClaimGate"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.ADD)),
                ClusterEventWithHint(ClusterEvent(Resource.DEVICE_CLASS, ActionType.ADD))]

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: Any, pod: kubesched.Pod, node_info: Any) -> Status | None:
        cluster = self.handle.cluster
        if "claim" in pod.metadata.labels and cluster.get_resource_claim("default", "c") is None:
            return Status.unschedulable("claim not found")
        if "class" in pod.metadata.labels and cluster.get_device_class("gpu") is None:
            return Status.unschedulable("class not found")
        return None


def _config(dra: bool = True) -> SchedulerConfig:
    config = SchedulerConfig(profiles=[ProfileConfig(multi_point=[("PrioritySort", 0), ("DefaultBinder", 0), ("ClaimGate", 0)])])
    config.feature_gates["DynamicResourceAllocation"] = dra
    return config


@asynccontextmanager
async def running(objs: list[Any], config: SchedulerConfig) -> AsyncIterator[tuple[FakeCluster, Scheduler]]:
    async with FakeCluster() as cluster:
        for o in objs:
            cluster.create(o)
        sched = Scheduler(cluster, config, registry={"ClaimGate": ClaimGate})
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)
            yield cluster, sched
            tg.cancel_scope.cancel()


async def settle(sched: Scheduler) -> None:
    with anyio.fail_after(600):
        await anyio.sleep(1)
        while not sched.is_idle():
            await anyio.sleep(1)


def _claim() -> ResourceClaim:
    return ResourceClaim(
        metadata=ObjectMeta(name="c", namespace="default"),
        spec=ResourceClaimSpec(devices=DeviceClaim(requests=[DeviceRequest(name="r", exactly=ExactDeviceRequest(device_class_name="gpu"))])),
    )


def _objects() -> list[Any]:
    return [
        make_node("n1").capacity(cpu="4", memory="8Gi").obj(),
        DeviceClass(metadata=ObjectMeta(name="gpu")),
        ResourceSlice(metadata=ObjectMeta(name="s"), spec=ResourceSliceSpec(driver="d.example.com", node_name="n1",
                      pool=ResourcePool(name="n1", generation=1, resource_slice_count=1))),
        DeviceTaintRule(metadata=ObjectMeta(name="r"), spec=DeviceTaintRuleSpec(taint=DeviceTaint(key="k", effect="NoSchedule"))),
        _claim(),
    ]


async def test_the_informer_keeps_every_dra_table() -> None:
    async with running(_objects(), _config()) as (cluster, sched):
        await settle(sched)
        state = sched.cluster
        assert [c.metadata.name for c in state.list_resource_claims()] == ["c"]
        assert state.get_resource_claim("default", "c") is not None
        assert [s.metadata.name for s in state.list_resource_slices()] == ["s"]
        assert state.get_device_class("gpu") is not None and len(state.list_device_classes()) == 1
        assert [r.metadata.name for r in state.list_device_taint_rules()] == ["r"]
        cluster.delete_object("ResourceSlice", "", "s")
        cluster.delete_object("DeviceTaintRule", "", "r")
        await settle(sched)
        assert state.list_resource_slices() == [] and state.list_device_taint_rules() == []


async def test_gate_off_nothing_is_watched() -> None:
    async with running(_objects(), _config(dra=False)) as (_, sched):
        await settle(sched)
        state = sched.cluster
        assert not (state.resource_claims or state.resource_slices or state.device_classes or state.device_taint_rules)


async def test_a_claim_add_moves_the_pod_it_rejected() -> None:
    objs = [make_node("n1").capacity(cpu="4", memory="8Gi").obj()]
    async with running(objs, _config()) as (cluster, sched):
        cluster.create(make_pod("p").label("claim", "1").obj())
        cluster.create(make_pod("q").label("class", "1").obj())
        await settle(sched)
        assert {q.pod.metadata.name for q in sched.queue.unschedulable.values()} == {"p", "q"}
        cluster.create(_claim())
        await settle(sched)
        assert cluster.get_pod("default", "p").spec.node_name == "n1"  # type: ignore[union-attr]
        cluster.create(DeviceClass(metadata=ObjectMeta(name="gpu")))
        await settle(sched)
        assert cluster.get_pod("default", "q").spec.node_name == "n1"  # type: ignore[union-attr]
