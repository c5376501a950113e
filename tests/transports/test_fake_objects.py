"""What the fake cluster's writes hand out: a binding's new pod leaves the stored one as it was
(the kubelet starts the pod in the binding's own status), watch events and Event records are
the frozen dataclasses themselves.  Async tests run on both backends in virtual time."""

from __future__ import annotations

import dataclasses

import anyio
import pytest

from kubesched import Binding, Event, WatchEvent
from kubesched.api import copy
from kubesched.api._objects import ObjectMeta, ObjectReference
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import EventRecord, FakeCluster

pytestmark = pytest.mark.anyio


def binding(name: str, node: str) -> Binding:
    return Binding(metadata=ObjectMeta(namespace="default", name=name), target=ObjectReference(kind="Node", name=node))


@pytest.mark.parametrize("readiness", [True, False])
@pytest.mark.parametrize("conditions", [0, 1], ids=["no condition", "PodScheduled False"])
async def test_a_binding_leaves_the_pod_before_it_as_it_was(readiness: bool, conditions: int) -> None:
    """The pod before the binding (in the store until then, and in the watch events already
    delivered) is not changed by the binding or the kubelet's start of the pod."""
    async with FakeCluster(readiness=readiness) as cluster:
        cluster.create(make_node("n1").obj())
        pod = make_pod("p").nominated_node("n1")
        if conditions:
            pod = pod.condition("PodScheduled", "False", "Unschedulable")
        before = cluster.create(pod.obj())
        kept = copy(before)
        await anyio.sleep(1)
        await cluster.bind(binding("p", "n1"))
        after = cluster.get_pod("default", "p")
        assert before == kept
        assert after.status is not before.status
        assert after.status.conditions is not before.status.conditions
        assert after.spec is not before.spec and after.spec.node_name == "n1" and before.spec.node_name == ""
        assert after.status.phase == "Running" and after.status.start_time == "2024-01-01T00:00:01Z"
        want = ["PodScheduled"] + (["Initialized", "Ready", "ContainersReady"] if readiness else [])
        assert [c.type for c in after.status.conditions] == want


async def test_a_binding_copies_the_spec_as_it_is() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        before = cluster.create(make_pod("p").priority(7).req(cpu="1").obj())
        await cluster.bind(binding("p", "n1"))
        after = cluster.get_pod("default", "p")
        spec = copy(before.spec)
        spec.node_name = "n1"
        assert after.spec == spec
        assert after.spec.scheduler_name == "default-scheduler" and after.spec.restart_policy == "Always"


async def test_watch_events_and_records_are_the_frozen_dataclasses() -> None:
    async with FakeCluster() as cluster:
        watch = cluster.watch()
        while (await watch.__anext__()).type != "SYNCED":
            pass
        cluster.create(make_pod("p").obj())
        ev = watch.get_nowait()
        assert type(ev) is WatchEvent and ev == WatchEvent("ADDED", cluster.get_pod("default", "p"))
        with pytest.raises(dataclasses.FrozenInstanceError):
            ev.type = "MODIFIED"  # type: ignore[misc]
        regarding = ObjectReference(kind="Pod", namespace="default", name="p")
        await cluster.record_event(Event(reason="Scheduled", regarding=regarding, note="n", reporting_controller="s"))
        (rec,) = cluster.events
        assert type(rec) is EventRecord
        assert rec == EventRecord(0.0, "Normal", "Scheduled", "default/p", "n")
        assert (rec.regarding, rec.source, rec.timestamp, rec.core) == (regarding, "s", "2024-01-01T00:00:00Z", False)
        assert hash(rec) == hash(EventRecord(0.0, "Normal", "Scheduled", "default/p", "n"))
        with pytest.raises(dataclasses.FrozenInstanceError):
            rec.time = 1.0  # type: ignore[misc]
