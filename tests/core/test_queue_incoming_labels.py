"""``scheduler_queue_incoming_pods_total{queue,event}``: the ``event`` label upstream's queue
counts a pod entering activeQ, backoffQ or unschedulablePods under, per emulated minor.

v1.31 ``internal/queue/scheduling_queue.go`` and ``framework/events.go``: the queue's string
constants (``PodAdd``, ``PodUpdate``, ``BackoffComplete`` for an updated pod moved without hints,
``UnschedulablePodUpdate`` for every hinted update) and the events' own labels
(``NodeTaintChange``, ``PodLabelChange``); 1.30 as 1.31 without the smaller Pod update events
(kubernetes#122628, 1.31: every assigned pod's update is ``AssignedPodUpdate``); from 1.32 the
events' ``Label()`` (``UnschedulablePodAdd``, ``NodeUpdateNodeTaint``,
``UnschedulablePodUpdatePodLabel``; v1.34-era ``backend/queue/scheduling_queue.go``)."""

from __future__ import annotations

import msgspec
import pytest
from test_queue import FakeClock, fail, new_queue, qpi

from kubesched.metrics._metrics import MetricsRecorder
from kubesched.queue._scheduling_queue import SchedulingQueue
from kubesched.runtime import _events as ev
from kubesched.runtime._events import ActionType, ClusterEvent, QueueingHint, Resource
from kubesched.testing import make_pod

V130, V131, V132, V136 = (1, 30), (1, 31), (1, 32), (1, 36)
TAINT = ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_TAINT)
ASSIGNED_LABEL = ClusterEvent(Resource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL)
ASSIGNED_SCALE_DOWN = ClusterEvent(Resource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)
UNSCHEDULED_LABEL = ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL)
UNSCHEDULED_OTHER = ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.UPDATE_POD_OTHER)


@pytest.mark.parametrize(
    ("event", "v130", "v131", "v132"),
    [
        (ev.UNSCHEDULED_POD_ADD, "PodAdd", "PodAdd", "UnschedulablePodAdd"),
        (ev.UNSCHEDULED_POD_UPDATE, "PodUpdate", "PodUpdate", "UnschedulablePodUpdate"),
        (UNSCHEDULED_LABEL, "UnschedulablePodUpdate", "UnschedulablePodUpdate", "UnschedulablePodUpdatePodLabel"),
        (UNSCHEDULED_OTHER, "UnschedulablePodUpdate", "UnschedulablePodUpdate", "UnschedulablePodUpdate"),
        (ev.NODE_ADD, "NodeAdd", "NodeAdd", "NodeAdd"),
        (TAINT, "NodeTaintChange", "NodeTaintChange", "NodeUpdateNodeTaint"),
        (ev.ASSIGNED_POD_ADD, "AssignedPodAdd", "AssignedPodAdd", "AssignedPodAdd"),
        (ev.ASSIGNED_POD_DELETE, "AssignedPodDelete", "AssignedPodDelete", "AssignedPodDelete"),
        (ASSIGNED_LABEL, "AssignedPodUpdate", "PodLabelChange", "AssignedPodUpdatePodLabel"),
        (ASSIGNED_SCALE_DOWN, "AssignedPodUpdate", "AssignedPodUpdate", "AssignedPodUpdatePodScaleDown"),
        (ev.STORAGE_EVENTS[(Resource.PERSISTENT_VOLUME, "ADDED")], "PvAdd", "PvAdd", "PersistentVolumeAdd"),
        (ev.SCHEDULE_ATTEMPT_FAILURE, "ScheduleAttemptFailure", "ScheduleAttemptFailure", "ScheduleAttemptFailure"),
        (ev.BACKOFF_COMPLETE, "BackoffComplete", "BackoffComplete", "BackoffComplete"),
        (ev.FORCE_ACTIVATE, "ForceActivate", "ForceActivate", "ForceActivate"),
        (ev.UNSCHEDULABLE_TIMEOUT, "UnschedulableTimeout", "UnschedulableTimeout", "UnschedulableTimeout"),
    ],
)
def test_queue_label_by_version(event: ClusterEvent, v130: str, v131: str, v132: str) -> None:
    assert ev.queue_label(event, V130) == v130
    assert ev.queue_label(event, V131) == v131
    assert ev.queue_label(event, V132) == v132
    assert ev.queue_label(event, V136) == v132
    labels = ev.QueueLabels(V131)
    assert labels[event] == v131 and labels[event] == v131 and event in labels  # computed once


def _queue(version: tuple[int, int], **kw: object) -> tuple[SchedulingQueue, MetricsRecorder]:
    q = new_queue(FakeClock(), version=version, **kw)  # type: ignore[arg-type]
    rec = MetricsRecorder()
    q.metrics_recorder = rec
    return q, rec


@pytest.mark.parametrize(("version", "label"), [(V130, "PodAdd"), (V131, "PodAdd"), (V132, "UnschedulablePodAdd"), (V136, "UnschedulablePodAdd")])
def test_a_new_pod(version: tuple[int, int], label: str) -> None:
    q, rec = _queue(version)
    q.add(make_pod("p").obj())
    assert rec.incoming == {("active", label): 1}


@pytest.mark.parametrize(("version", "label"), [(V131, "PodUpdate"), (V132, "UnschedulablePodUpdate")])
def test_an_update_of_a_pod_in_no_queue(version: tuple[int, int], label: str) -> None:
    q, rec = _queue(version)
    q.update(None, make_pod("p").obj())
    assert rec.incoming == {("active", label): 1}


def _relabelled(pod: object) -> object:
    meta = msgspec.structs.replace(pod.metadata, labels={"k": "v"}, resource_version="2")  # type: ignore[attr-defined]
    return msgspec.structs.replace(pod, metadata=meta)  # type: ignore[type-var]


@pytest.mark.parametrize(
    ("version", "label"), [(V131, "UnschedulablePodUpdate"), (V132, "UnschedulablePodUpdatePodLabel")]
)
def test_a_hinted_update_of_an_unschedulable_pod(version: tuple[int, int], label: str) -> None:
    """v1.31 ``requeuePodViaQueueingHint(..., framework.UnscheduledPodUpdate.Label)`` for each
    event; from 1.32 ``requeuePodWithQueueingStrategy(..., evt.Label())``."""
    queue_on_labels = [("P", UNSCHEDULED_LABEL, lambda pod, old, new: QueueingHint.QUEUE)]
    q, rec = _queue(version, events=queue_on_labels)
    pod = make_pod("p").obj()
    fail(q, qpi(q, pod, "P"))
    q.update(pod, _relabelled(pod))  # type: ignore[arg-type]
    where = q.where(pod.metadata.uid)
    added = "PodAdd" if version < V132 else "UnschedulablePodAdd"
    assert where in ("active", "backoff") and rec.incoming == {
        ("active", added): 1,
        ("unschedulable", "ScheduleAttemptFailure"): 1,
        (where, label): 1,
    }


@pytest.mark.parametrize(("version", "label"), [(V131, "BackoffComplete"), (V132, "UnschedulablePodUpdate")])
def test_an_update_without_hints_after_the_backoff(version: tuple[int, int], label: str) -> None:
    """Hints off: v1.31 moves the updated pod to activeQ as ``BackoffComplete``; from 1.32 as
    ``EventUnscheduledPodUpdate``."""
    clock = FakeClock()
    q = new_queue(clock, version=version, queueing_hints=False)
    rec = MetricsRecorder()
    q.metrics_recorder = rec
    pod = make_pod("p").obj()
    fail(q, qpi(q, pod, "P"))
    clock.step(60)
    q.update(pod, _relabelled(pod))  # type: ignore[arg-type]
    assert q.where(pod.metadata.uid) == "active"
    assert rec.incoming[("active", label)] == 1


@pytest.mark.parametrize(("version", "label"), [(V130, "NodeTaintChange"), (V131, "NodeTaintChange"), (V132, "NodeUpdateNodeTaint")])
def test_a_node_event(version: tuple[int, int], label: str) -> None:
    queue_on_taints = [("P", TAINT, None)]
    q, rec = _queue(version, events=queue_on_taints)
    pod = make_pod("p").obj()
    fail(q, qpi(q, pod, "P"))
    q.move_all_to_active_or_backoff(TAINT)
    assert rec.incoming[(q.where(pod.metadata.uid), label)] == 1  # type: ignore[index]
