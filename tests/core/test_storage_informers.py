"""The storage objects' informers (upstream ``eventhandlers.go`` ``addAllEventHandlers``): each
PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver and CSIStorageCapacity
event keeps the scheduler's ClusterState table and moves exactly the unschedulable pods a plugin
that registered the event rejected (``buildEvtResHandler``), with upstream's event labels; a
re-list after a dropped watch reconciles the tables; UnrollWildCardResource covers the storage
resources.  End to end on the fake cluster, in virtual time, on both backends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

import kubesched
from kubesched import Status, hookimpl, per_node_filter
from kubesched.api._objects import (
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSINodeSpec,
    CSIStorageCapacity,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimVolumeSource,
    PersistentVolumeSpec,
    StorageClass,
    Volume,
)
from kubesched.config._config import ProfileConfig, SchedulerConfig
from kubesched.runtime._events import (
    STORAGE_EVENTS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Resource,
    unroll_wildcard_resource,
)
from kubesched.scheduler._scheduler import Scheduler
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio


# --- the events ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "watch", "label"),
    [
        (Resource.PERSISTENT_VOLUME, "ADDED", "PersistentVolumeAdd"),
        (Resource.PERSISTENT_VOLUME, "MODIFIED", "PersistentVolumeUpdate"),
        (Resource.PERSISTENT_VOLUME_CLAIM, "DELETED", "PersistentVolumeClaimDelete"),
        (Resource.STORAGE_CLASS, "ADDED", "storage.k8s.io/StorageClassAdd"),
        (Resource.CSI_NODE, "MODIFIED", "storage.k8s.io/CSINodeUpdate"),
        (Resource.CSI_DRIVER, "DELETED", "storage.k8s.io/CSIDriverDelete"),
        (Resource.CSI_STORAGE_CAPACITY, "MODIFIED", "storage.k8s.io/CSIStorageCapacityUpdate"),
    ],
)
def test_event_labels_are_upstreams(resource: Resource, watch: str, label: str) -> None:
    """``ClusterEvent.Label()``: resource then action (``fmt.Sprintf("%v%v", ...)``)."""
    event = STORAGE_EVENTS[(resource, watch)]
    assert (event.resource, str(event)) == (resource, label)
    assert event.action == {"ADDED": ActionType.ADD, "MODIFIED": ActionType.UPDATE, "DELETED": ActionType.DELETE}[watch]


def test_unroll_wildcard_resource_lists_the_storage_resources() -> None:
    """upstream ``UnrollWildCardResource``: every resource with ActionType All (the DRA ones
    last)."""
    events = unroll_wildcard_resource()
    assert [e.resource for e in events] == [
        Resource.POD,
        Resource.NODE,
        Resource.PERSISTENT_VOLUME,
        Resource.PERSISTENT_VOLUME_CLAIM,
        Resource.CSI_NODE,
        Resource.CSI_DRIVER,
        Resource.CSI_STORAGE_CAPACITY,
        Resource.STORAGE_CLASS,
        Resource.RESOURCE_CLAIM,
        Resource.DEVICE_CLASS,
    ]
    assert all(e.action == ActionType.ALL and not e.is_wildcard() for e in events)


# --- plugins that wait for storage objects ------------------------------------------------------


def _claims(pod: kubesched.Pod) -> list[str]:
    return [v.persistent_volume_claim.claim_name for v in pod.spec.volumes if v.persistent_volume_claim]


class ClaimGate:
    """Rejects a pod whose claim the informer has not seen; registered for claim adds."""

    name = "ClaimGate"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD))]

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: Any, pod: kubesched.Pod, node_info: Any) -> Status | None:
        ns = pod.metadata.namespace
        if any(self.handle.cluster.get_pvc(ns, c) is None for c in _claims(pod)):
            return Status.unschedulable("claim not found")
        return None


class CapacityGate:
    """Rejects a pod labelled ``capacity`` until capacity ``cap`` holds 10Gi; registered for
    capacity updates only."""

    name = "CapacityGate"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.CSI_STORAGE_CAPACITY, ActionType.UPDATE))]

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: Any, pod: kubesched.Pod, node_info: Any) -> Status | None:
        if "capacity" not in pod.metadata.labels:
            return None
        cap = self.handle.cluster.csi_storage_capacities.get(("default", "cap"))
        if cap is None or cap.capacity != "10Gi":
            return Status.unschedulable("not enough capacity")
        return None


class VolumeGate:
    """Rejects a pod labelled ``volume`` while PV ``block`` exists, or until PV ``pv1`` does;
    registered for volume adds and deletes."""

    name = "VolumeGate"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.DELETE))]

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: Any, pod: kubesched.Pod, node_info: Any) -> Status | None:
        pvs = self.handle.cluster.pvs
        if "volume" in pod.metadata.labels and ("block" in pvs or "pv1" not in pvs):
            return Status.unschedulable("volume")
        return None


class ClassGate:
    """Rejects a pod labelled ``class`` until a StorageClass exists; registered for class adds."""

    name = "ClassGate"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(Resource.STORAGE_CLASS, ActionType.ADD))]

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: Any, pod: kubesched.Pod, node_info: Any) -> Status | None:
        if "class" in pod.metadata.labels and not self.handle.cluster.storage_classes:
            return Status.unschedulable("no class")
        return None


class NoExtensions:
    """No EnqueueExtensions (registered for every resource): rejects a pod labelled ``driver``
    until a CSIDriver exists."""

    name = "NoExtensions"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: Any, pod: kubesched.Pod, node_info: Any) -> Status | None:
        if "driver" in pod.metadata.labels and not self.handle.cluster.csi_drivers:
            return Status.unschedulable("no driver")
        return None


REGISTRY: dict[str, Any] = {
    p.name: p for p in (ClaimGate, CapacityGate, VolumeGate, ClassGate, NoExtensions)
}
BASE = [("PrioritySort", 0), ("DefaultBinder", 0), ("NodeResourcesFit", 1)]


def _config(*plugins: str, hints: bool = True) -> SchedulerConfig:
    config = SchedulerConfig(profiles=[ProfileConfig(multi_point=[*BASE, *((p, 0) for p in plugins)])])
    config.feature_gates["SchedulerQueueingHints"] = hints
    return config


@asynccontextmanager
async def running(objs: list[Any], config: SchedulerConfig) -> AsyncIterator[tuple[FakeCluster, Scheduler]]:
    async with FakeCluster() as cluster:
        for o in objs:
            cluster.create(o)
        sched = Scheduler(cluster, config, registry=REGISTRY)
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)
            yield cluster, sched
            tg.cancel_scope.cancel()


async def settle(sched: Scheduler) -> None:
    with anyio.fail_after(600):
        await anyio.sleep(1)
        while not sched.is_idle():
            await anyio.sleep(1)


def _node() -> Any:
    return make_node("n1").capacity(cpu="4", memory="8Gi").obj()


def _pod(name: str, label: str = "", claim: str = "") -> kubesched.Pod:
    b = make_pod(name).req(cpu="100m")
    if label:
        b = b.label(label, "1")
    pod = b.obj()
    if claim:
        pod.spec.volumes = [Volume(name="data", persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=claim))]
    return pod


def _node_of(cluster: FakeCluster, name: str) -> str:
    pod = cluster.get_pod("default", name)
    assert pod is not None
    return pod.spec.node_name


def _unschedulable(sched: Scheduler) -> set[str]:
    return {q.pod.metadata.name for q in sched.queue.unschedulable.values()}


def _pv(name: str) -> PersistentVolume:
    return PersistentVolume(
        metadata=ObjectMeta(name=name),
        spec=PersistentVolumeSpec(capacity={"storage": "1Gi"}, access_modes=["ReadWriteOnce"], storage_class_name="none"),
    )


def _pvc(name: str) -> PersistentVolumeClaim:
    pvc = PersistentVolumeClaim(metadata=ObjectMeta(name=name, namespace="default"))
    pvc.spec.access_modes = ["ReadWriteOnce"]
    pvc.spec.resources.requests = {"storage": "1Gi"}
    pvc.spec.storage_class_name = "none"  # no class, no volume of it: the PV controller waits
    return pvc


def _capacity(size: str) -> CSIStorageCapacity:
    return CSIStorageCapacity(metadata=ObjectMeta(name="cap", namespace="default"), storage_class_name="fast", capacity=size)


# --- the tables ------------------------------------------------------------------------------------


async def test_the_informer_keeps_every_storage_table() -> None:
    csi_node = CSINode(metadata=ObjectMeta(name="n1"), spec=CSINodeSpec(drivers=[CSINodeDriver(name="d.example.com", node_id="n1")]))
    objs = [
        _node(), StorageClass(metadata=ObjectMeta(name="fast"), provisioner="d.example.com"),
        CSIDriver(metadata=ObjectMeta(name="d.example.com")), csi_node, _capacity("1Gi"), _pv("pv1"), _pvc("data"),
    ]  # fmt: skip
    async with running(objs, _config()) as (cluster, sched):
        await settle(sched)
        state = sched.cluster
        assert list(state.storage_classes) == ["fast"]
        assert state.get_storage_class("fast").volume_binding_mode == "Immediate"  # defaulted
        assert list(state.csi_drivers) == ["d.example.com"]
        assert state.get_csi_node("n1").spec.drivers[0].node_id == "n1"
        assert list(state.csi_storage_capacities) == [("default", "cap")]
        assert state.get_pv("pv1") is not None and state.get_pvc("default", "data") is not None
        cluster.update(_capacity("10Gi"))
        cluster.delete_object("StorageClass", "", "fast")
        cluster.delete_object("PersistentVolumeClaim", "default", "data")
        await settle(sched)
        assert state.csi_storage_capacities[("default", "cap")].capacity == "10Gi"
        assert state.storage_classes == {} and state.pvcs == {}


# --- moving unschedulable pods ------------------------------------------------------------------


async def test_an_update_moves_only_the_pods_of_a_plugin_that_registered_it() -> None:
    """CapacityGate registered CSIStorageCapacity/Update: its pod is moved and scheduled;
    VolumeGate's pod (PersistentVolume events only) stays unschedulable."""
    objs = [_node(), _capacity("1Gi"), _pod("needs-capacity", "capacity"), _pod("needs-volume", "volume")]
    async with running(objs, _config("CapacityGate", "VolumeGate")) as (cluster, sched):
        await settle(sched)
        assert _unschedulable(sched) == {"needs-capacity", "needs-volume"}
        cluster.update(_capacity("10Gi"))
        await settle(sched)
        assert _node_of(cluster, "needs-capacity") == "n1"
        assert _unschedulable(sched) == {"needs-volume"}


async def test_a_claim_added_moves_the_pod_waiting_for_it() -> None:
    objs = [_node(), _pod("p", claim="data")]
    async with running(objs, _config("ClaimGate")) as (cluster, sched):
        await settle(sched)
        assert _unschedulable(sched) == {"p"}
        cluster.create(_pvc("other"))  # a claim add: moved, still rejected (its claim is missing)
        await settle(sched)
        assert _unschedulable(sched) == {"p"}
        cluster.create(_pvc("data"))
        await settle(sched)
        assert _node_of(cluster, "p") == "n1"


@pytest.mark.parametrize(
    ("hints", "first_moves"),
    [pytest.param(True, True, id="hints on: every class add"),
     pytest.param(False, False, id="hints off: only a WaitForFirstConsumer class")],
)
async def test_a_storage_class_add_with_queueing_hints_off_moves_only_for_late_binding(
    hints: bool, first_moves: bool
) -> None:
    """``buildEvtResHandler``: with SchedulerQueueingHints off, a StorageClass add moves pods
    only when the class binds on first consumer (upstream's CheckVolumeBindingPred comment)."""
    objs = [_node(), _pod("p", "class")]
    async with running(objs, _config("ClassGate", hints=hints)) as (cluster, sched):
        await settle(sched)
        assert _unschedulable(sched) == {"p"}
        cluster.create(StorageClass(metadata=ObjectMeta(name="immediate"), provisioner="d.example.com"))
        await settle(sched)
        assert bool(_node_of(cluster, "p")) is first_moves
        late = StorageClass(metadata=ObjectMeta(name="late"), provisioner="d.example.com")
        late.volume_binding_mode = "WaitForFirstConsumer"
        cluster.create(late)
        await settle(sched)
        assert _node_of(cluster, "p") == "n1"


async def test_a_plugin_without_enqueue_extensions_is_moved_by_storage_events() -> None:
    """UnrollWildCardResource registers such a plugin for the storage resources too."""
    objs = [_node(), _pod("p", "driver")]
    async with running(objs, _config("NoExtensions")) as (cluster, sched):
        await settle(sched)
        assert _unschedulable(sched) == {"p"}
        cluster.create(CSIDriver(metadata=ObjectMeta(name="d.example.com")))
        await settle(sched)
        assert _node_of(cluster, "p") == "n1"


async def test_storage_events_no_plugin_registered_are_dropped() -> None:
    """Pods without volumes cost nothing: with no plugin interested, the queue drops the
    storage events before looking at any pod."""
    async with running([_node()], _config()) as (_, sched):
        await settle(sched)
        assert not any(sched.queue.is_event_of_interest(e) for e in STORAGE_EVENTS.values())


# --- the re-list -----------------------------------------------------------------------------------


async def test_a_relist_removes_the_storage_objects_deleted_meanwhile() -> None:
    """After a dropped watch the new listing is the truth (``_reconcile_relist``): a volume, a
    claim, a class deleted meanwhile leave the tables, and their Delete events are sent (the
    pod VolumeGate rejected while PV ``block`` existed is moved and scheduled)."""
    objs = [
        _node(), _pv("pv1"), _pv("block"), _pvc("data"),
        StorageClass(metadata=ObjectMeta(name="fast"), provisioner="d.example.com"), _pod("p", "volume"),
    ]  # fmt: skip
    async with running(objs, _config("VolumeGate")) as (cluster, sched):
        await settle(sched)
        assert _unschedulable(sched) == {"p"}
        cluster.faults.drop_watches()
        cluster.delete_object("PersistentVolume", "", "block")
        cluster.delete_object("PersistentVolumeClaim", "default", "data")
        cluster.delete_object("StorageClass", "", "fast")
        await settle(sched)
        state = sched.cluster
        assert list(state.pvs) == ["pv1"]
        assert state.pvcs == {} and state.storage_classes == {}
        assert _node_of(cluster, "p") == "n1"
