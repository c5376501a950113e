"""The scheduling queue, ported from k/k ``pkg/scheduler/backend/queue`` tests.

Why one file: upstream's scheduling_queue_test.go and backoff_queue_test.go tables, one row per
case, in upstream's order.

Ids name the upstream test and case (``scheduling_queue_test.go``, ``backoff_queue_test.go``);
cases marked "adapted" keep the upstream scenario but assert through this queue's API.  Time is a
fake clock (seconds as floats) injected with ``now=``; the queueing-hints path is the one
implemented (the ``SchedulerQueueingHints`` default), without ``SchedulerPopFromBackoffQ``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anyio
import pytest

from kubesched.api._objects import Pod
from kubesched.queue._nominator import Nominator
from kubesched.queue._scheduling_queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    BackoffQueue,
    QueuedPodInfo,
    SchedulingQueue,
    calculate_backoff_duration,
)
from kubesched.runtime._events import (
    ASSIGNED_POD_ADD,
    NODE_ADD,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    QueueingHint,
    Resource,
)
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import Code, Status
from kubesched.testing import FakeHandle, make_pod

HintFn = Callable[[Any, Any, Any], QueueingHint]
PreEnqueueFn = Callable[[Pod], Status | None]

UNSCHEDULED_POD_UPDATE = ClusterEvent(Resource.UNSCHEDULED_POD, ActionType.UPDATE)
SCHEDULING_GATES = "SchedulingGates"
T0 = 1_000_000.0


def queue_hint_return_queue(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


def queue_hint_return_skip(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


class FakeClock:
    """``testingclock.FakeClock``: ``now()`` and ``step(d)``."""

    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def step(self, d: float) -> None:
        self.t += d


class Profile:
    """A tiny QueueProfile: PrioritySort, PreEnqueue plugins by name, registered events."""

    def __init__(
        self,
        pre_enqueue: dict[str, PreEnqueueFn] | None = None,
        events: Sequence[tuple[str, ClusterEvent, HintFn | None]] = (),
    ) -> None:
        self.pre_enqueue = dict(pre_enqueue or {})
        self.events = list(events)

    def queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """PrioritySort: higher priority first, then the earlier timestamp."""
        if a.priority != b.priority:
            return a.priority > b.priority
        return a.timestamp < b.timestamp

    def run_pre_enqueue_plugins(self, pod: Pod, first: str = "") -> Status | None:
        names = sorted(self.pre_enqueue, key=lambda n: n != first)
        for name in names:
            st = self.pre_enqueue[name](pod)
            if st is not None and not st.is_success():
                st.plugin = name
                return st
        return None

    def cluster_events(self) -> list[tuple[str, ClusterEvent, HintFn | None]]:
        return self.events


def scheduling_gates(pod: Pod) -> Status | None:
    """The SchedulingGates PreEnqueue plugin."""
    if pod.spec.scheduling_gates:
        names = " ".join(g.name for g in pod.spec.scheduling_gates)
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{names}]"
        )
    return None


def allowlist(*labels: str) -> PreEnqueueFn:
    """Upstream's test ``preEnqueuePlugin{allowlists}``: pass if the pod has one of the labels."""

    def fn(pod: Pod) -> Status | None:
        if any(k in labels for k in pod.metadata.labels):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod name not in allowlists")

    return fn


def new_queue(
    clock: FakeClock | None = None,
    *,
    pre_enqueue: dict[str, PreEnqueueFn] | None = None,
    events: Sequence[tuple[str, ClusterEvent, HintFn | None]] = (),
    **kw: Any,
) -> SchedulingQueue:
    return SchedulingQueue(
        {"default-scheduler": Profile(pre_enqueue, events)}, now=clock or FakeClock(), **kw
    )


def qpi(
    q: SchedulingQueue,
    pod: Pod,
    *plugins: str,
    attempts: int = 0,
    pending: Sequence[str] = (),
) -> QueuedPodInfo:
    """``q.newQueuedPodInfo(pod, plugins...)`` (``attemptQueuedPodInfo`` with attempts=1)."""
    info = q.new_queued_pod_info(pod)
    info.unschedulable_plugins = set(plugins)
    info.pending_plugins = set(pending)
    info.attempts = attempts
    return info


def gated(info: QueuedPodInfo, plugin: str, events: list[ClusterEvent]) -> QueuedPodInfo:
    """``setQueuedPodInfoGated``."""
    info.gating_plugin = plugin
    info.gating_plugin_events = events
    info.unschedulable_plugins.add(plugin)
    return info


def fail(q: SchedulingQueue, info: QueuedPodInfo) -> None:
    """Pop the pod (making it in flight), then return ``info`` through the failure path."""
    q.add(info.pod)
    popped = q.pop_nowait()
    assert popped is not None and popped.uid == info.uid
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)


def names(infos: Sequence[QueuedPodInfo]) -> list[str]:
    return [i.pod.metadata.name for i in infos]


def pop_all(q: SchedulingQueue) -> list[str]:
    out = []
    while (p := q.pop_nowait()) is not None:
        out.append(p.pod.metadata.name)
    return out


# upstream's fixtures (scheduling_queue_test.go)
HIGH, MID, LOW = 1000, 100, 0


def high_priority_pod() -> Pod:
    return make_pod("hpp").namespace("ns1").uid("hppns1").priority(HIGH).obj()


def high_pri_nominated_pod() -> Pod:
    return (
        make_pod("hpp").namespace("ns1").uid("hppns1").priority(HIGH).nominated_node("node1").obj()
    )


def med_priority_pod() -> Pod:
    return (
        (make_pod("mpp").namespace("ns2").uid("mppns2").priority(MID).annotation("annot2", "val2"))
        .nominated_node("node1")
        .obj()
    )


def unschedulable_pod() -> Pod:
    return (
        (make_pod("up").namespace("ns1").uid("upns1").priority(LOW).annotation("annot2", "val2"))
        .nominated_node("node1")
        .obj()
    )


def clone_pod(pod: Pod, name: str) -> Pod:
    b = make_pod(name).namespace(pod.metadata.namespace).uid(name)
    if pod.spec.priority is not None:
        b.priority(pod.spec.priority)
    return b.obj()


# --- A1–A5: backoff --------------------------------------------------------------------------


BACKOFF_FLOW = [1, 2, 4, 8, 10, 10, 10]


@pytest.mark.parametrize(
    ("step", "want_backoff"),
    [pytest.param(i, b, id=f"TestBackOffFlow › step {i}") for i, b in enumerate(BACKOFF_FLOW)],
)
def test_backoff_flow(step: int, want_backoff: float) -> None:
    cl = FakeClock()
    q = new_queue(cl)
    pod = make_pod("test-pod").namespace("test-ns").uid("test-uid").obj()
    q.add(pod)
    for i in range(step + 1):
        timestamp = cl()
        info = q.pop_nowait()
        assert info is not None
        assert info.attempts == i + 1
        q.add_unschedulable_if_not_present(info, i)
        # An event happens.
        q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
        assert info.uid in q.backoff
        backoff = q.backoff_expiry(info) - timestamp
        if i == step:
            assert backoff == want_backoff
        # Simulate the routine that continuously flushes the backoff queue.
        cl.step(0.001)
        q.flush_backoff_completed()
        assert info.uid in q.backoff, "still in the backoff queue after an early flush"
        cl.step(backoff)
        q.flush_backoff_completed()
        assert info.uid not in q.backoff, "moved out of the backoff queue after the timeout"


@pytest.mark.parametrize(
    ("initial", "maximum", "attempts", "want"),
    [
        pytest.param(1, 32, 0, 0, id="TestBackoffQueue_calculateBackoffDuration › no backoff"),
        pytest.param(1, 32, 16, 32, id="TestBackoffQueue_calculateBackoffDuration › normal"),
        pytest.param(
            1,
            2**31 - 1,
            32,
            2**31 - 1,
            id="TestBackoffQueue_calculateBackoffDuration › overflow_32bit",
        ),
        pytest.param(
            1,
            2**63 - 1,
            64,
            2**63 - 1,
            id="TestBackoffQueue_calculateBackoffDuration › overflow_64bit",
        ),
    ],
)
def test_calculate_backoff_duration(initial: int, maximum: int, attempts: int, want: int) -> None:
    """Integer nanoseconds, as upstream's ``time.Duration``."""
    got = calculate_backoff_duration(attempts, initial, maximum)
    assert got == want
    assert type(got) is int


def test_calculate_backoff_duration_defaults() -> None:
    """With 1 s / 10 s: attempts 1..7 give 1, 2, 4, 8, 10, 10, 10 s (cases file A1)."""
    got = [calculate_backoff_duration(a, 1.0, 10.0) for a in range(1, 8)]
    assert got == BACKOFF_FLOW


_POP_EACH = "TestBackoffQueue_popEachBackoffCompleted"


@pytest.mark.parametrize(
    ("in_backoff", "want"),
    [
        pytest.param([], [], id=f"{_POP_EACH} › Both queues empty, no pods moved to activeQ"),
        pytest.param(
            ["pod0", "pod1"],
            ["pod0"],
            id=f"{_POP_EACH} › Pods only in backoffQ, some pods moved to activeQ",
        ),
        pytest.param(
            ["pod2", "pod3"],
            ["pod2"],
            id=f"{_POP_EACH} › Pods only in errorBackoffQ, some pods moved to activeQ",
        ),
        pytest.param(
            ["pod0", "pod1", "pod2", "pod3"],
            ["pod0", "pod2"],
            id=f"{_POP_EACH} › Pods in both queues, some pods moved to activeQ",
        ),
        pytest.param(
            ["pod0", "pod2"],
            ["pod0", "pod2"],
            id=f"{_POP_EACH} › Pods in both queues, all pods moved to activeQ",
        ),
        pytest.param(
            ["pod1", "pod3"], [], id=f"{_POP_EACH} › Pods in both queues, no pods moved to activeQ"
        ),
    ],
)
def test_pop_each_backoff_completed(in_backoff: list[str], want: list[str]) -> None:
    cl = FakeClock()
    spec = {
        "pod0": (-1.0, {"plugin"}),
        "pod1": (1.0, {"plugin"}),
        "pod2": (-1.0, set()),
        "pod3": (1.0, set()),
    }
    bq = BackoffQueue(cl, DEFAULT_POD_INITIAL_BACKOFF, DEFAULT_POD_MAX_BACKOFF)
    infos = {
        name: QueuedPodInfo(
            PodInfo(make_pod(name).obj()),
            timestamp=cl() + dt,
            attempts=1,
            unschedulable_plugins=set(plugins),
        )
        for name, (dt, plugins) in spec.items()
    }
    # the error pods are added first: the plugin heap must still be drained first
    for name in sorted(in_backoff, key=lambda n: bool(spec[n][1])):
        bq.add(infos[name])
    got: list[str] = []
    bq.pop_each_backoff_completed(lambda p: got.append(p.pod.metadata.name))
    assert got == want
    assert len(bq) == len(in_backoff) - len(want)


def test_backoff_queue_add_keeps_pod_in_one_heap() -> None:
    """backoffQueue.add: a pod moves between the heaps, never sits in both."""
    bq = BackoffQueue(FakeClock(), 1.0, 10.0)
    info = QueuedPodInfo(PodInfo(make_pod("p").obj()), attempts=1)
    bq.add(info)
    assert info.uid in bq.pod_error_backoff_q
    info.unschedulable_plugins.add("plugin")
    bq.add(info)
    assert info.uid in bq.pod_backoff_q and info.uid not in bq.pod_error_backoff_q
    assert len(bq) == 1


# --- Add / Pop ---------------------------------------------------------------------------------


def test_add_pop_order_and_nominator() -> None:
    """TestPriorityQueue_Add: pops in PrioritySort order; nominated pods are recorded."""
    q = new_queue()
    q.add(med_priority_pod())
    q.add(unschedulable_pod())
    q.add(high_priority_pod())
    assert sorted(q.nominator.pod_to_node) == ["mppns2", "upns1"]
    assert names(q.nominator.for_node("node1")) == ["mpp", "up"]
    assert pop_all(q) == ["hpp", "mpp", "up"]
    assert q.scheduling_cycle == 3


def test_pop_equal_priority_is_fifo_by_timestamp() -> None:
    """PrioritySort Less: at equal priority the earlier Timestamp first."""
    cl = FakeClock()
    q = new_queue(cl)
    for n in ("a", "b", "c"):
        q.add(make_pod(n).priority(MID).obj())
        cl.step(1)
    q.add(make_pod("d").priority(HIGH).obj())
    assert pop_all(q) == ["d", "a", "b", "c"]


def test_pop_counts_attempts_and_sets_initial_attempt_timestamp() -> None:
    """TestPerPodSchedulingMetrics (adapted): attempts count pops; InitialAttemptTimestamp is set once."""
    cl = FakeClock()
    q = new_queue(cl)
    q.add(make_pod("p").obj())
    info = q.pop_nowait()
    assert info is not None
    assert (info.attempts, info.initial_attempt_timestamp) == (1, T0)
    assert info.uid in q.in_flight
    cl.step(5)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)  # no plugin: error backoff
    assert info.uid not in q.in_flight
    cl.step(DEFAULT_POD_MAX_BACKOFF)
    q.flush_backoff_completed()
    again = q.pop_nowait()
    assert again is info
    assert (again.attempts, again.initial_attempt_timestamp) == (2, T0)


# --- PreEnqueue and gating ----------------------------------------------------------------------


_ADD_TO_ACTIVE = "TestPriorityQueue_addToActiveQ"


@pytest.mark.parametrize(
    ("plugins", "pod_label", "want_success"),
    [
        pytest.param({}, "p", True, id=f"{_ADD_TO_ACTIVE} › no plugins registered"),
        pytest.param(
            {"pe1": allowlist(), "pe2": allowlist()},
            "p",
            False,
            id=f"{_ADD_TO_ACTIVE} › preEnqueue plugin registered, pod name not in allowlists",
        ),
        pytest.param(
            {"pe1": allowlist("foo", "bar"), "pe2": allowlist("foo")},
            "bar",
            False,
            id=f"{_ADD_TO_ACTIVE} › preEnqueue plugin registered, pod failed one preEnqueue plugin",
        ),
        pytest.param(
            {"pe1": allowlist("foo", "bar"), "pe2": allowlist("bar")},
            "bar",
            True,
            id=f"{_ADD_TO_ACTIVE} › preEnqueue plugin registered, pod passed all preEnqueue plugins",
        ),
    ],
)
def test_add_to_active_q(
    plugins: dict[str, PreEnqueueFn], pod_label: str, want_success: bool
) -> None:
    q = new_queue(pre_enqueue=plugins, pod_initial_backoff=30, pod_max_backoff=60)
    pod = make_pod("p").label(pod_label, "").obj()
    q.add(pod)
    assert (pod.metadata.uid in q.active_q) is want_success
    assert len(q.unschedulable) == (0 if want_success else 1)
    # Simulate an update event: a gated pod stays in unschedulablePods.
    clone = make_pod("p").label(pod_label, "").annotation("foo", "").obj()
    q.update(pod, clone)
    assert len(q.unschedulable) == (0 if want_success else 1)


def test_gated_pod_records_gating_plugin_and_its_events() -> None:
    """runPreEnqueuePlugin: the plugin joins UnschedulablePlugins, becomes GatingPlugin with its events."""
    gates_eliminated = ClusterEvent(Resource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    q = new_queue(
        pre_enqueue={SCHEDULING_GATES: scheduling_gates},
        events=[(SCHEDULING_GATES, gates_eliminated, None), ("NodeAffinity", NODE_ADD, None)],
    )
    pod = make_pod("p").scheduling_gates("g1").obj()
    q.add(pod)
    info = q.unschedulable[pod.metadata.uid]
    assert info.gated and info.gating_plugin == SCHEDULING_GATES
    assert info.unschedulable_plugins == {SCHEDULING_GATES}
    assert info.gating_plugin_events == [gates_eliminated]
    assert q.pop_nowait() is None
    # NodeAdd is of interest (NodeAffinity registered it) but not to the gating plugin.
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert pod.metadata.uid in q.unschedulable
    # Removing the gate: the update event releases the pod and PreEnqueue passes.
    ungated = make_pod("p").obj()
    q.update(pod, ungated)
    assert q.where(pod.metadata.uid) == "active"
    assert not q.active_q.get(pod.metadata.uid).gated  # type: ignore[union-attr]


def test_gating_plugin_runs_first() -> None:
    """runPreEnqueuePlugins: the current GatingPlugin runs before the others."""
    calls: list[str] = []

    def rec(name: str, ok: bool) -> PreEnqueueFn:
        def fn(pod: Pod) -> Status | None:
            calls.append(name)
            return None if ok else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, name)

        return fn

    q = new_queue(
        pre_enqueue={"a": rec("a", True), "b": rec("b", False)}, events=[("b", NODE_ADD, None)]
    )
    pod = make_pod("p").obj()
    q.add(pod)
    assert calls == ["a", "b"]
    calls.clear()
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert calls == ["b"]  # gating plugin first; it still rejects, so "a" does not run
    assert q.where(pod.metadata.uid) == "unschedulable"


_MOVE_HINT = "TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint"


def _hint_error(pod: Any, old: Any, new: Any) -> QueueingHint:
    raise AssertionError("QueueingHintFn should not be called as pod is gated")


@pytest.mark.parametrize(
    ("make_info", "hint", "duration", "want_q"),
    [
        pytest.param(
            lambda q, p: qpi(q, p, pending=["foo"]),
            queue_hint_return_queue,
            0.0,
            "active",
            id=f"{_MOVE_HINT} › Queue queues pod to activeQ",
        ),
        pytest.param(
            lambda q, p: qpi(q, p, "foo", attempts=1),
            queue_hint_return_queue,
            0.0,
            "backoff",
            id=f"{_MOVE_HINT} › Queue queues pod to backoffQ if Pod is backing off",
        ),
        pytest.param(
            lambda q, p: qpi(q, p, "foo"),
            queue_hint_return_queue,
            DEFAULT_POD_INITIAL_BACKOFF,
            "active",
            id=f"{_MOVE_HINT} › Queue queues pod to activeQ if Pod is not backing off",
        ),
        pytest.param(
            lambda q, p: qpi(q, p, "foo"),
            queue_hint_return_skip,
            0.0,
            "unschedulable",
            id=f"{_MOVE_HINT} › Skip queues pod to unschedulablePods",
        ),
        pytest.param(
            lambda q, p: gated(qpi(q, p), SCHEDULING_GATES, [UNSCHEDULED_POD_UPDATE]),
            _hint_error,
            0.0,
            "unschedulable",
            id=f"{_MOVE_HINT} › QueueHintFunction is not called when Pod is gated by the plugin that isn't interested in the event",
        ),
        pytest.param(
            lambda q, p: gated(qpi(q, p), "foo", [NODE_ADD]),
            queue_hint_return_queue,
            0.0,
            "active",
            id=f"{_MOVE_HINT} › QueueHintFunction is called when Pod is gated by the plugin that is interested in the event",
        ),
        pytest.param(
            lambda q, p: gated(qpi(q, p, attempts=1), "foo", [NODE_ADD]),
            queue_hint_return_queue,
            0.0,
            "backoff",
            id=f"{_MOVE_HINT} › Pod that experienced a scheduling failure before should be queued to backoffQ after un-gated",
        ),
    ],
)
def test_move_all_with_queueing_hint(
    make_info: Callable[[SchedulingQueue, Pod], QueuedPodInfo],
    hint: HintFn,
    duration: float,
    want_q: str,
) -> None:
    cl = FakeClock()
    q = new_queue(
        cl,
        pre_enqueue={SCHEDULING_GATES: scheduling_gates, "foo": allowlist("foo")},
        events=[
            ("foo", NODE_ADD, hint),
            (SCHEDULING_GATES, UNSCHEDULED_POD_UPDATE, queue_hint_return_queue),
        ],
    )
    pod = make_pod("pod1").namespace("ns1").uid("1").label("foo", "bar").obj()
    info = make_info(q, pod)
    fail(q, info)
    assert q.where(info.uid) == "unschedulable"
    cl.step(duration)
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(info.uid) == want_q


# --- MoveAllToActiveOrBackoffQueue --------------------------------------------------------------


def test_move_all_to_active_or_backoff_queue() -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue (queueing hints on)."""
    c = FakeClock()
    q = new_queue(c, events=[("fooPlugin", NODE_ADD, queue_hint_return_queue)])
    up, hp, mp = unschedulable_pod(), high_priority_pod(), med_priority_pod()
    hpp1, hpp2 = clone_pod(hp, "hpp1"), clone_pod(hp, "hpp2")

    q.add(up)
    assert names([q.pop_nowait()]) == ["up"]  # type: ignore[list-item]
    q.add(hp)
    assert names([q.pop_nowait()]) == ["hpp"]  # type: ignore[list-item]
    assert set(q.in_flight) == {up.metadata.uid, hp.metadata.uid}
    q.add_unschedulable_if_not_present(qpi(q, up, "fooPlugin", attempts=1), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(qpi(q, hp, "fooPlugin", attempts=1), q.scheduling_cycle)
    assert not q.in_flight
    # a pod whose failure is associated with no plugin goes to backoffQ
    q.add(hpp1)
    assert q.pop_nowait().pod is hpp1  # type: ignore[union-attr]
    q.add_unschedulable_if_not_present(qpi(q, hpp1, attempts=1), q.scheduling_cycle)
    # a pod rejected by "barPlugin" goes to the unschedulable pool
    q.add(hpp2)
    assert q.pop_nowait().pod is hpp2  # type: ignore[union-attr]
    q.add_unschedulable_if_not_present(qpi(q, hpp2, "barPlugin", attempts=1), q.scheduling_cycle)
    assert not q.in_flight

    # NodeAdd moves up and hpp (fooPlugin's hint says Queue) to backoffQ; hpp2 stays.
    q.move_all_to_active_or_backoff(NODE_ADD)
    q.add(mp)
    assert len(q.active_q) == 1
    assert q.pop_nowait().pod is mp  # type: ignore[union-attr]
    assert len(q.backoff) == 3
    assert set(q.in_flight) == {mp.metadata.uid}

    # pop the pods out of backoffQ (this does not make them in flight)
    c.step(DEFAULT_POD_MAX_BACKOFF)
    q.backoff.pop_each_backoff_completed()
    assert set(q.in_flight) == {mp.metadata.uid}

    for p in (up, hp, hpp1):
        q.add(p)
        assert q.pop_nowait().pod is p  # type: ignore[union-attr]
    assert set(q.in_flight) == {
        mp.metadata.uid,
        up.metadata.uid,
        hp.metadata.uid,
        hpp1.metadata.uid,
    }
    hpp1_info = qpi(q, hpp1, attempts=1)
    q.add_unschedulable_if_not_present(qpi(q, up, "fooPlugin", attempts=1), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(qpi(q, hp, "fooPlugin", attempts=1), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(hpp1_info, q.scheduling_cycle)
    assert set(q.in_flight) == {mp.metadata.uid}
    q.add(mp)
    for p in (up, hp, hpp2):
        assert q.where(p.metadata.uid) == "unschedulable"
    assert hpp1_info.uid in q.backoff

    # after the max backoff, the flush moves hpp1 and NodeAdd moves up and hpp to activeQ
    c.step(DEFAULT_POD_MAX_BACKOFF)
    q.flush_backoff_completed()
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert len(q.active_q) == 4
    assert len(q.backoff) == 0
    assert set(q.in_flight) == {mp.metadata.uid}
    assert list(q.unschedulable) == [hpp2.metadata.uid]  # hpp2 is never moved


def test_move_all_ignores_events_no_plugin_registered() -> None:
    """isEventOfInterest: an unregistered event returns early and leaves moveRequestCycle alone."""
    q = new_queue(events=[("fooPlugin", NODE_ADD, None)])
    info = qpi(q, make_pod("p").obj(), "fooPlugin")
    fail(q, info)
    q.move_all_to_active_or_backoff(ASSIGNED_POD_ADD)
    assert q.where(info.uid) == "unschedulable"
    assert q.move_request_cycle == -1
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(info.uid) == "active"  # attempts 0: not backing off
    assert q.move_request_cycle == q.scheduling_cycle


_PRE_CHECKS = "TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks"


@pytest.mark.parametrize(
    ("pre_check", "want"),
    [
        pytest.param(
            None, ["p4", "p3", "p2", "p1", "p0"], id=f"{_PRE_CHECKS} › nil PreEnqueueCheck"
        ),
        pytest.param(
            lambda p: p.spec.priority >= 2,
            ["p4", "p3", "p2"],
            id=f"{_PRE_CHECKS} › move Pods with priority greater than 2",
        ),
        pytest.param(
            lambda p: p.spec.priority % 2 == 0 and p.spec.priority >= 2,
            ["p4", "p2"],
            id=f"{_PRE_CHECKS} › move Pods with even priority and greater than 2",
        ),
        pytest.param(
            lambda p: p.spec.priority % 2 == 0 and p.spec.priority < 0,
            [],
            id=f"{_PRE_CHECKS} › move Pods with even and negative priority",
        ),
    ],
)
def test_move_all_pre_enqueue_checks(
    pre_check: Callable[[Pod], bool] | None, want: list[str]
) -> None:
    """(adapted) pods rejected by a plugin, all backing off: the moved ones land in backoffQ."""
    q = new_queue(events=[("fooPlugin", NODE_ADD, None)])
    for i in range(5):
        fail(q, qpi(q, make_pod(f"p{i}").priority(i).obj(), "fooPlugin", attempts=1))
    q.move_all_to_active_or_backoff(NODE_ADD, pre_check=pre_check)
    assert sorted(names(q.backoff.values()), reverse=True) == want


def test_pending_plugin_queue_hint_goes_straight_to_active() -> None:
    """isPodWorthRequeuing: Queue from a PendingPlugin is queueImmediately, even while backing off."""
    q = new_queue(
        events=[
            ("foo", NODE_ADD, queue_hint_return_queue),
            ("bar", NODE_ADD, queue_hint_return_queue),
        ]
    )
    pending = qpi(q, make_pod("pending").obj(), attempts=3, pending=["foo"])
    rejected = qpi(q, make_pod("rejected").obj(), "bar", attempts=3)
    fail(q, pending)
    fail(q, rejected)
    assert q.is_backing_off(pending) and q.is_backing_off(rejected)
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(pending.uid) == "active"
    assert q.where(rejected.uid) == "backoff"


def test_hint_error_counts_as_queue() -> None:
    """isPodWorthRequeuing: a QueueingHintFn error is treated as Queue."""

    def boom(pod: Any, old: Any, new: Any) -> QueueingHint:
        raise RuntimeError("boom")

    q = new_queue(events=[("foo", NODE_ADD, boom)])
    info = qpi(q, make_pod("p").obj(), "foo")
    fail(q, info)
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(info.uid) == "active"


def test_registered_wildcard_resource_matches_any_resource() -> None:
    """ClusterEvent.Match: a registered ``*`` resource with an action matches that action anywhere."""
    reg = ClusterEvent(Resource.WILDCARD, ActionType.ADD)
    assert reg.matches(NODE_ADD)
    assert reg.matches(ASSIGNED_POD_ADD)
    assert not reg.matches(ClusterEvent(Resource.NODE, ActionType.DELETE))
    # an incoming wildcard event is matched only by a registered wildcard event
    assert not ClusterEvent(Resource.NODE, ActionType.ALL).matches(UNSCHEDULABLE_TIMEOUT)
    assert ClusterEvent(Resource.WILDCARD, ActionType.ALL).matches(UNSCHEDULABLE_TIMEOUT)
    assert ClusterEvent(Resource.POD, ActionType.ADD).matches(ASSIGNED_POD_ADD)


# --- UnschedulableTimeout flush ----------------------------------------------------------------


def test_flush_unschedulable_leftover_is_strict() -> None:
    """TestHighPriorityFlushUnschedulablePodsLeftover (adapted): > 5 min, not >=; then priority order."""
    cl = FakeClock()
    q = new_queue(cl, events=[("fooPlugin", NODE_ADD, None)])
    mid = qpi(q, make_pod("mid").priority(MID).obj(), "fooPlugin")
    high = qpi(q, make_pod("high").priority(HIGH).obj(), "fooPlugin")
    fail(q, mid)
    fail(q, high)
    cl.step(300)
    q.flush_unschedulable_leftover()
    assert len(q.unschedulable) == 2
    cl.step(0.001)
    q.flush_unschedulable_leftover()
    assert not q.unschedulable
    assert pop_all(q) == ["high", "mid"]


def test_flush_unschedulable_leftover_never_ungates() -> None:
    """UnschedulableTimeout is a wildcard event: it matches no gating plugin's specific events."""
    cl = FakeClock()
    gates_eliminated = ClusterEvent(Resource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    q = new_queue(
        cl,
        pre_enqueue={SCHEDULING_GATES: scheduling_gates},
        events=[(SCHEDULING_GATES, gates_eliminated, None), ("fooPlugin", NODE_ADD, None)],
    )
    gated_pod = make_pod("gated").scheduling_gates("g").obj()
    q.add(gated_pod)
    rejected = qpi(q, make_pod("rejected").obj(), "fooPlugin")
    fail(q, rejected)
    cl.step(301)
    q.flush_unschedulable_leftover()
    assert q.where(gated_pod.metadata.uid) == "unschedulable"
    assert q.where(rejected.uid) == "active"


def test_flush_releases_pod_gated_by_plugin_registering_wildcard() -> None:
    """MatchAnyClusterEvent: a gating plugin that registered the wildcard event hears the timeout;
    PreEnqueue then runs again (here it passes)."""
    cl = FakeClock()
    allowed = {"open": False}

    def gate(pod: Pod) -> Status | None:
        return None if allowed["open"] else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "closed")

    wildcard = ClusterEvent(Resource.WILDCARD, ActionType.ALL)
    q = new_queue(cl, pre_enqueue={"gate": gate}, events=[("gate", wildcard, None)])
    pod = make_pod("p").obj()
    q.add(pod)
    cl.step(301)
    q.flush_unschedulable_leftover()
    assert q.where(pod.metadata.uid) == "unschedulable"  # re-gated
    allowed["open"] = True
    cl.step(301)
    q.flush_unschedulable_leftover()
    assert q.where(pod.metadata.uid) == "active"


# --- in-flight events and AddUnschedulableIfNotPresent ------------------------------------------


@pytest.mark.parametrize(
    ("plugins", "pending", "events", "hint", "want_q"),
    [
        pytest.param(
            ["foo"], [], [], queue_hint_return_queue, "unschedulable", id="no event while in flight"
        ),
        pytest.param(
            ["foo"],
            [],
            [NODE_ADD],
            queue_hint_return_queue,
            "backoff",
            id="registered event, hint Queue: backoffQ",
        ),
        pytest.param(
            ["foo"],
            [],
            [NODE_ADD],
            queue_hint_return_skip,
            "unschedulable",
            id="registered event, hint QueueSkip",
        ),
        pytest.param(
            [],
            ["foo"],
            [NODE_ADD],
            queue_hint_return_queue,
            "active",
            id="pending plugin, hint Queue: activeQ",
        ),
        pytest.param(
            ["foo"],
            [],
            [ASSIGNED_POD_ADD],
            queue_hint_return_queue,
            "unschedulable",
            id="event nobody registered is not recorded",
        ),
        pytest.param(
            ["foo"],
            [],
            [UNSCHEDULABLE_TIMEOUT],
            queue_hint_return_skip,
            "backoff",
            id="wildcard event: queueAfterBackoff",
        ),
        pytest.param([], [], [], None, "backoff", id="no rejector plugins: error backoff"),
    ],
)
def test_in_flight_events_decide_requeue(
    plugins: list[str],
    pending: list[str],
    events: list[ClusterEvent],
    hint: HintFn | None,
    want_q: str,
) -> None:
    """TestPriorityQueue_AddUnschedulableIfNotPresent / determineSchedulingHintForInFlightPod (adapted)."""
    q = new_queue(events=[("foo", NODE_ADD, hint)])
    pod = make_pod("p").obj()
    q.add(pod)
    info = q.pop_nowait()
    assert info is not None
    for e in events:
        q.move_all_to_active_or_backoff(e)
    info.unschedulable_plugins = set(plugins)
    info.pending_plugins = set(pending)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where(info.uid) == want_q
    if not plugins and not pending:
        assert info.uid in q.error_backoff_q
        assert info.consecutive_errors_count == 1
    else:
        assert (info.unschedulable_count, info.consecutive_errors_count) == (1, 0)
    assert not q.in_flight and not q.in_flight_events()


def test_events_before_pop_do_not_count() -> None:
    """Only events after the pod's entry in inFlightEvents are considered."""
    q = new_queue(events=[("foo", NODE_ADD, None)])
    other = make_pod("other").obj()
    q.add(other)
    q.pop_nowait()  # keeps the event log alive
    q.move_all_to_active_or_backoff(NODE_ADD)
    pod = make_pod("p").obj()
    q.add(pod)
    info = q.pop_nowait()
    assert info is not None and info.pod is pod
    assert len(q.in_flight_events()) == 1
    info.unschedulable_plugins = {"foo"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where(info.uid) == "unschedulable"
    q.done(other.metadata.uid)
    assert not q.in_flight_events()


def test_add_unschedulable_if_present_errors_and_calls_done() -> None:
    """AddUnschedulableIfNotPresent: an already-queued pod is an error; Done runs anyway."""
    q = new_queue()
    pod = make_pod("p").obj()
    q.add(pod)
    info = q.pop_nowait()
    assert info is not None
    q.add(pod)
    with pytest.raises(ValueError, match="already present in the active queue"):
        q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert not q.in_flight


def test_update_in_flight_is_recorded() -> None:
    """TestPriorityQueue_Update › when updating a pod which is in flightPods, the pod will not be added to any queue."""
    hint_calls: list[Any] = []

    def hint(pod: Any, old: Any, new: Any) -> QueueingHint:
        hint_calls.append(new)
        return QueueingHint.QUEUE

    q = new_queue(events=[("foo", ClusterEvent(Resource.POD, ActionType.UPDATE_POD_LABEL), hint)])
    pod = make_pod("p").obj()
    q.add(pod)
    info = q.pop_nowait()
    assert info is not None
    updated = make_pod("p").label("a", "b").obj()
    q.update(pod, updated)
    assert q.where(info.uid) is None
    assert [e.action for e, _, _ in q.in_flight_events()] == [ActionType.UPDATE_POD_LABEL]
    info.unschedulable_plugins = {"foo"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert hint_calls == [updated]
    assert q.where(info.uid) == "backoff"


# --- Update / Delete / Activate ----------------------------------------------------------------

_UPDATE = "TestPriorityQueue_Update"


def test_update_not_in_queue_adds_to_active() -> None:
    """TestPriorityQueue_Update › add highPriorityPodInfo to activeQ / Update pod that didn't exist in the queue."""
    q = new_queue()
    q.update(None, high_priority_pod())
    mp = med_priority_pod()
    updated = (
        make_pod("mpp").namespace("ns2").uid("mppns2").priority(MID).annotation("foo", "test").obj()
    )
    q.update(mp, updated)
    assert q.where("hppns1") == "active"
    assert q.active_q.get("mppns2").pod is updated  # type: ignore[union-attr]


def test_update_adds_nominated_node() -> None:
    """TestPriorityQueue_Update › Update highPriorityPodInfo and add a nominatedNodeName to it."""
    q = new_queue()
    q.update(high_priority_pod(), high_pri_nominated_pod())
    assert q.where("hppns1") == "active"
    assert q.nominator.pod_to_node == {"hppns1": "node1"}


def test_update_in_active_q_stays() -> None:
    """TestPriorityQueue_Update › When updating a pod that is already in activeQ, the pod should remain in activeQ after Update()."""
    q = new_queue()
    hp = high_priority_pod()
    q.update(None, hp)
    updated = make_pod("hpp").namespace("ns1").uid("hppns1").priority(HIGH).label("x", "y").obj()
    q.update(hp, updated)
    assert q.where("hppns1") == "active"
    assert q.active_q.get("hppns1").pod is updated  # type: ignore[union-attr]
    assert len(q.active_q) == 1


def test_update_in_active_q_reorders_by_priority() -> None:
    """The activeQ heap is re-placed on update (AddOrUpdate)."""
    q = new_queue()
    a, b = make_pod("a").priority(LOW).obj(), make_pod("b").priority(MID).obj()
    q.add(a)
    q.add(b)
    q.update(a, make_pod("a").priority(HIGH).obj())
    assert pop_all(q) == ["a", "b"]


def test_update_in_backoff_q_stays() -> None:
    """TestPriorityQueue_Update › When updating a pod that is in backoff queue and is still backing off, it will be updated in backoff queue."""
    q = new_queue()
    mp = med_priority_pod()
    fail(q, qpi(q, mp, attempts=1))  # error backoff
    updated = (
        make_pod("mpp").namespace("ns2").uid("mppns2").priority(MID).annotation("foo", "x").obj()
    )
    q.update(mp, updated)
    assert q.where("mppns2") == "backoff"
    assert q.backoff.get("mppns2").pod is updated  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("step", "want_q"),
    [
        pytest.param(
            0.0,
            "backoff",
            id=f"{_UPDATE} › when updating a pod which is in unschedulable queue and is backing off, it will be moved to backoff queue",
        ),
        pytest.param(
            DEFAULT_POD_INITIAL_BACKOFF,
            "active",
            id=f"{_UPDATE} › when updating a pod which is in unschedulable queue and is not backing off, it will be moved to active queue",
        ),
    ],
)
def test_update_in_unschedulable_with_hint(step: float, want_q: str) -> None:
    """With hints on, the update's events go through the rejecting plugin's hint (Queue here)."""
    c = FakeClock()
    q = new_queue(
        c,
        events=[("plugin", ClusterEvent(Resource.POD, ActionType.UPDATE), queue_hint_return_queue)],
    )
    mp = med_priority_pod()
    fail(q, qpi(q, mp, "plugin", attempts=1))
    updated = (
        make_pod("mpp").namespace("ns2").uid("mppns2").priority(MID).annotation("foo", "test").obj()
    )
    c.step(step)
    q.update(mp, updated)
    assert q.where("mppns2") == want_q
    assert q.get("mppns2").pod is updated  # type: ignore[union-attr]


def test_update_in_unschedulable_hint_skip_keeps_pod() -> None:
    """No rejecting plugin's hint says Queue: the pod stays, with the new object."""
    q = new_queue(
        events=[("plugin", ClusterEvent(Resource.POD, ActionType.UPDATE), queue_hint_return_skip)]
    )
    mp = med_priority_pod()
    fail(q, qpi(q, mp, "plugin"))
    updated = make_pod("mpp").namespace("ns2").uid("mppns2").priority(MID).label("foo", "x").obj()
    q.update(mp, updated)
    assert q.where("mppns2") == "unschedulable"
    assert q.unschedulable["mppns2"].pod is updated


def test_delete() -> None:
    """TestPriorityQueue_Delete."""
    q = new_queue()
    q.update(high_priority_pod(), high_pri_nominated_pod())
    q.add(unschedulable_pod())
    q.delete(high_pri_nominated_pod())
    assert q.where("upns1") == "active"
    assert q.where("hppns1") is None
    assert list(q.nominator.nominated_pods) == ["node1"]
    assert names(q.nominator.for_node("node1")) == ["up"]
    q.delete(unschedulable_pod())
    assert not q.nominator.nominated_pods


@pytest.mark.parametrize("where", ["unschedulable", "backoff"])
def test_delete_from_each_sub_queue(where: str) -> None:
    q = new_queue()
    pod = make_pod("p").obj()
    fail(q, qpi(q, pod, *(["foo"] if where == "unschedulable" else []), attempts=1))
    assert q.where(pod.metadata.uid) == where
    q.delete(pod)
    assert q.where(pod.metadata.uid) is None


_ACTIVATE = "TestPriorityQueue_Activate"


@pytest.mark.parametrize(
    ("where", "want_active"),
    [
        pytest.param("active", 1, id=f"{_ACTIVATE} › pod already in activeQ"),
        pytest.param(None, 0, id=f"{_ACTIVATE} › pod not in unschedulablePods/podBackoffQ"),
        pytest.param("unschedulable", 1, id=f"{_ACTIVATE} › pod in unschedulablePods"),
        pytest.param("backoff", 1, id=f"{_ACTIVATE} › pod in backoffQ"),
    ],
)
def test_activate(where: str | None, want_active: int) -> None:
    q = new_queue()
    pod = high_pri_nominated_pod()
    if where == "active":
        q.add(pod)
    elif where == "unschedulable":
        fail(q, qpi(q, pod, "foo", attempts=1))
    elif where == "backoff":
        fail(q, qpi(q, pod, attempts=1))
    assert q.where(pod.metadata.uid) == where
    q.activate([pod])
    assert len(q.active_q) == want_active
    if want_active:
        assert q.where(pod.metadata.uid) == "active"


def test_activate_runs_pre_enqueue_again() -> None:
    """Activate calls moveToActiveQ: a still-gated pod stays in unschedulablePods."""
    q = new_queue(pre_enqueue={SCHEDULING_GATES: scheduling_gates})
    pod = make_pod("p").scheduling_gates("g").obj()
    q.add(pod)
    q.activate([pod])
    assert q.where(pod.metadata.uid) == "unschedulable"


def test_activate_in_flight_pod() -> None:
    """TestPriorityQueue_Activate (in-flight): a ForceActivate event targeted at the pod is recorded,
    so it comes back to the queues (queueAfterBackoff) even though no hint says Queue; another
    in-flight pod is not affected (the wildcard event carries the target pod)."""
    q = new_queue(events=[("foo", NODE_ADD, None)])
    target, other = make_pod("target").obj(), make_pod("other").obj()
    q.add(target)
    q.add(other)
    t_info, o_info = q.pop_nowait(), q.pop_nowait()
    assert t_info is not None and o_info is not None
    q.activate([target])
    assert q.move_request_cycle == q.scheduling_cycle
    assert [e.label for e, _, _ in q.in_flight_events()] == ["ForceActivate"]
    for info in (t_info, o_info):
        info.unschedulable_plugins = {"foo"}
        q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where(t_info.uid) == "backoff"
    assert q.where(o_info.uid) == "unschedulable"


def test_pop_discards_pod_already_in_flight() -> None:
    """unlockedPop: a pod tracked in flight twice is discarded and the next pod popped."""
    q = new_queue()
    p, other = make_pod("p").priority(HIGH).obj(), make_pod("other").obj()
    q.add(p)
    assert q.pop_nowait() is not None
    q.add(p)
    q.add(other)
    nxt = q.pop_nowait()
    assert nxt is not None and nxt.pod is other
    assert q.pop_nowait() is None


# --- AssignedPodAdded / AssignedPodUpdated ------------------------------------------------------


@pytest.mark.parametrize(
    ("spread", "active", "unschedulable"),
    [
        # v1.31.8 … v1.35.4 scheduling_queue.go getUnschedulablePodsWithCrossTopologyTerm (kubernetes#122627)
        pytest.param(True, ["affinity", "spread"], ["fit", "spread2"], id="1.31+"),
        # v1.30.6 scheduling_queue.go getUnschedulablePodsWithMatchingAffinityTerm
        pytest.param(False, ["affinity"], ["fit", "spread", "spread2"], id="1.30"),
    ],
)
def test_assigned_pod_added_moves_only_cross_topology_pods(
    spread: bool, active: list[str], unschedulable: list[str]
) -> None:
    """TestPriorityQueue_AssignedPodAdded_ (adapted): only pods whose required pod affinity matches
    the new pod, or (from 1.31) rejected by PodTopologySpread in its namespace, are considered."""
    c = FakeClock()
    q = new_queue(
        c,
        requeue_spread_on_assigned_pod=spread,
        events=[
            ("InterPodAffinity", ClusterEvent(Resource.POD, ActionType.ALL), None),
            ("PodTopologySpread", ClusterEvent(Resource.POD, ActionType.ALL), None),
            ("NodeResourcesFit", ClusterEvent(Resource.POD, ActionType.ALL), None),
        ],
    )
    affinity = make_pod("affinity").pod_affinity("service", ["securityscan"], "zone").obj()
    spread = make_pod("spread").obj()
    spread_other_ns = make_pod("spread2").namespace("other").obj()
    fit = make_pod("fit").obj()
    fail(q, qpi(q, affinity, "InterPodAffinity"))
    fail(q, qpi(q, spread, "PodTopologySpread"))
    fail(q, qpi(q, spread_other_ns, "PodTopologySpread"))
    fail(q, qpi(q, fit, "NodeResourcesFit"))
    c.step(DEFAULT_POD_MAX_BACKOFF)
    bound = make_pod("bound").label("service", "securityscan").node("node1").obj()
    q.assigned_pod_added(bound)
    assert sorted(names(q.pending_pods()["active"])) == active
    assert sorted(names(q.pending_pods()["unschedulable"])) == unschedulable


def test_assigned_pod_scale_down_moves_all() -> None:
    """AssignedPodUpdated: a scale-down is offered to every unschedulable pod."""
    q = new_queue(
        events=[
            ("NodeResourcesFit", ClusterEvent(Resource.POD, ActionType.UPDATE_POD_SCALE_DOWN), None)
        ]
    )
    fit = make_pod("fit").obj()
    fail(q, qpi(q, fit, "NodeResourcesFit"))
    old = make_pod("bound").req(cpu="2").node("n").obj()
    new = make_pod("bound").req(cpu="1").node("n").obj()
    events = [ClusterEvent(Resource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)]
    q.assigned_pod_updated(old, new, events)
    assert q.where(fit.metadata.uid) == "active"


# --- Nominator ---------------------------------------------------------------------------------


def test_nominator_add_modes() -> None:
    """addNominatedPod: Noop uses .status.nominatedNodeName; Override uses the given node; '' clears."""
    q = new_queue()
    pod = make_pod("p").nominated_node("node1").obj()
    pi = PodInfo(pod)
    q.nominator.add(pi)  # ModeNoop
    assert q.nominator.pod_to_node == {pi.uid: "node1"}
    q.nominator.add(pi, "node2")  # ModeOverride
    assert q.nominator.pod_to_node == {pi.uid: "node2"}
    assert list(q.nominator.nominated_pods) == ["node2"]
    q.nominator.add(pi, "node2")  # no duplicates
    assert len(q.nominator.for_node("node2")) == 1
    q.nominator.add(pi, "")  # Override with an empty name clears
    assert not q.nominator.pod_to_node and not q.nominator.nominated_pods


def test_update_nominated_pod_keeps_stored_nomination() -> None:
    """TestPriorityQueue_UpdateNominatedPodForNode (adapted): an update mentioning no nominated node
    keeps the nomination made in memory; one that sets or changes it wins."""
    q = new_queue()
    pod = make_pod("p").obj()
    q.add(pod)
    q.nominator.add(q.active_q.get(pod.metadata.uid).pod_info, "node5")  # type: ignore[union-attr]
    updated = make_pod("p").label("a", "b").obj()
    q.update(pod, updated)
    assert q.nominator.node_of(pod.metadata.uid) == "node5"
    assert q.nominator.for_node("node5")[0].pod is updated
    renominated = make_pod("p").label("a", "b").nominated_node("node1").obj()
    q.update(updated, renominated)
    assert q.nominator.node_of(pod.metadata.uid) == "node1"
    cleared = make_pod("p").label("a", "b").obj()
    q.update(renominated, cleared)  # the nomination was removed on the object
    assert q.nominator.node_of(pod.metadata.uid) == ""


def test_nominator_delete_and_for_node() -> None:
    """TestPriorityQueue_NominatedPodsForNode (adapted)."""
    q = new_queue()
    mp, up, hp = med_priority_pod(), unschedulable_pod(), high_priority_pod()
    for p in (mp, up, hp):
        q.add(p)
    assert names(q.nominator.for_node("node1")) == ["mpp", "up"]
    assert q.nominator.for_node("node2") == []
    q.nominator.delete(mp.metadata.uid)
    assert names(q.nominator.for_node("node1")) == ["up"]


@pytest.mark.parametrize(
    ("lister_pod", "want"),
    [
        pytest.param("exists", "node1", id="TestPriorityQueue_NominatedPodDeleted › pod exists"),
        pytest.param("deleted", "", id="TestPriorityQueue_NominatedPodDeleted › pod is deleted"),
        pytest.param("bound", "", id="TestPriorityQueue_NominatedPodDeleted › pod is bound"),
    ],
)
def test_nominator_checks_lister(lister_pod: str, want: str) -> None:
    """addNominatedPod: not added if the lister says the pod is gone or already bound."""
    pod = make_pod("p").nominated_node("node1").obj()
    current = {
        "exists": pod,
        "deleted": None,
        "bound": make_pod("p").node("node2").nominated_node("node1").obj(),
    }[lister_pod]
    q = new_queue(nominator=Nominator(pod_lister=lambda p: current))
    q.nominator.add(PodInfo(pod))
    assert q.nominator.node_of(pod.metadata.uid) == want


def test_gated_pod_is_not_nominated() -> None:
    """moveToActiveQ adds to the nominator only for a pod that entered activeQ."""
    q = new_queue(pre_enqueue={SCHEDULING_GATES: scheduling_gates})
    pod = make_pod("p").scheduling_gates("g").nominated_node("node1").obj()
    q.add(pod)
    assert q.nominator.node_of(pod.metadata.uid) == ""


# --- pop() waits ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_pop_blocks_until_add() -> None:
    """TestPriorityQueue_Pop: Pop waits on an empty activeQ and returns the pod once added."""
    q = SchedulingQueue({"default-scheduler": Profile()})
    got: list[QueuedPodInfo] = []

    async def popper() -> None:
        got.append(await q.pop())

    async with anyio.create_task_group() as tg:
        tg.start_soon(popper)
        await anyio.wait_all_tasks_blocked()
        assert got == []
        q.add(med_priority_pod())
    assert names(got) == ["mpp"]
    assert got[0].attempts == 1


@pytest.mark.anyio
async def test_two_poppers_both_woken() -> None:
    q = SchedulingQueue({"default-scheduler": Profile()})
    got: list[str] = []

    async def popper() -> None:
        got.append((await q.pop()).pod.metadata.name)

    async with anyio.create_task_group() as tg:
        tg.start_soon(popper)
        tg.start_soon(popper)
        await anyio.wait_all_tasks_blocked()
        q.add(make_pod("a").obj())
        await anyio.wait_all_tasks_blocked()
        q.add(make_pod("b").obj())
    assert sorted(got) == ["a", "b"]


@pytest.mark.anyio
async def test_close_ends_pop() -> None:
    """TestSchedulingQueue_Close: a waiting Pop returns (EndOfStream) once the queue is closed."""
    q = SchedulingQueue({"default-scheduler": Profile()})
    ended: list[bool] = []

    async def popper() -> None:
        with pytest.raises(anyio.EndOfStream):
            await q.pop()
        ended.append(True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(popper)
        await anyio.wait_all_tasks_blocked()
        q.close()
    assert ended == [True]


@pytest.mark.anyio
async def test_run_flushes_backoff_in_virtual_time() -> None:
    """Run: the 1 s backoff flush moves a pod to activeQ once its backoff completes."""
    q = SchedulingQueue({"default-scheduler": Profile()})
    q.add(make_pod("p").obj())
    info = await q.pop()
    start = anyio.current_time()
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)  # error: 1 s backoff
    async with anyio.create_task_group() as tg:
        tg.start_soon(q.run)
        again = await q.pop()
        tg.cancel_scope.cancel()
    assert again is info
    assert 1.0 <= anyio.current_time() - start <= 2.0


@pytest.mark.parametrize("windowed", [False, True])
def test_keyed_heaps_pop_in_the_order_of_the_less_functions(windowed: bool) -> None:
    """The heaps compare ``(key, seq)`` tuples when the QueueSort has a key (PrioritySort) and
    for backoff expiries: the same pops, ties included, as comparing with the less functions."""
    import random

    from kubesched.plugins.queuesort import PrioritySort
    from kubesched.queue._scheduling_queue import BackoffQueue, QueuedPodInfo, _Heap
    from kubesched.runtime._nodeinfo import PodInfo

    sort = PrioritySort(None, FakeHandle())
    rng = random.Random(7)
    for _ in range(30):
        pods = [
            QueuedPodInfo(
                PodInfo(make_pod(f"p{i}").priority(rng.choice([0, 5, 10])).obj()),
                timestamp=rng.choice([0.0, 0.5, 1.0, 1.25]),
                attempts=rng.choice([0, 1, 2, 3]),
                seq=rng.randrange(5),
            )
            for i in range(40)
        ]
        plain = BackoffQueue(lambda: 0.0, 1.0, 10.0, pop_from_backoff_q=windowed, active_less=sort.kubesched_queue_sort_less)
        keyed = BackoffQueue(
            lambda: 0.0, 1.0, 10.0, pop_from_backoff_q=windowed,
            active_less=sort.kubesched_queue_sort_less, active_sort_key=sort.queue_sort_key,
        )
        heaps = [
            (_Heap(sort.kubesched_queue_sort_less), _Heap(sort.kubesched_queue_sort_less, sort.queue_sort_key)),
            (plain.pod_backoff_q, keyed.pod_backoff_q),
        ]
        for a, b in heaps:
            for q in pods:
                a.push(q)
                b.push(q)
            for q in rng.sample(pods, 10):  # removals and re-placements
                a.remove(q.uid)
                b.remove(q.uid)
                if rng.random() < 0.5:
                    a.push(q)
                    b.push(q)
            order_a = [a.pop() for _ in range(len(a))]
            order_b = [b.pop() for _ in range(len(b))]
            assert [q.uid for q in order_a if q] == [q.uid for q in order_b if q]
            assert a.pop() is None and b.pop() is None


def test_keyed_heap_pops_in_order_with_pushes_and_pops_interleaved() -> None:
    """A keyed heap keeps the items pushed in increasing order in a FIFO of their own: pushes
    in order and out of order, pops, peeks, removals and re-placements mixed (past the
    compaction threshold) still pop the smallest (key, seq, push order) every time."""
    import random

    rng = random.Random(11)
    for _ in range(20):
        _interleave_pushes_and_pops(rng)


def _interleave_pushes_and_pops(rng: Any) -> None:
    import itertools

    from kubesched.plugins.queuesort import PrioritySort
    from kubesched.queue._scheduling_queue import QueuedPodInfo, _Heap
    from kubesched.runtime._nodeinfo import PodInfo

    sort = PrioritySort(None, FakeHandle())
    heap = _Heap(sort.kubesched_queue_sort_less, sort.queue_sort_key)
    model: dict[str, tuple[Any, ...]] = {}  # uid -> its order when pushed
    pushes = itertools.count()
    pods: list[QueuedPodInfo] = []
    clock = 0.0

    def push(q: QueuedPodInfo) -> None:
        heap.push(q)
        model[q.uid] = (sort.queue_sort_key(q), q.seq, next(pushes))

    def smallest() -> str | None:
        return min(model, key=model.__getitem__) if model else None

    for i in range(400):
        op = rng.random()
        if op < 0.5 or not pods:
            clock += rng.choice([0.0, 0.0, 0.5, 1.0])  # mostly in order, sometimes equal
            q = QueuedPodInfo(
                PodInfo(make_pod(f"p{i}").priority(rng.choice([0, 0, 0, 5])).obj()),
                timestamp=clock if rng.random() < 0.8 else rng.uniform(0.0, clock),  # out of order
                seq=rng.randrange(50),
            )
            pods.append(q)
            push(q)
        elif op < 0.7:
            want = smallest()
            got = heap.pop()
            assert (got.uid if got else None) == want
            model.pop(want or "", None)
        elif op < 0.8:
            got = heap.peek()
            assert (got.uid if got else None) == smallest()
        else:
            q = rng.choice(pods)
            heap.remove(q.uid)
            model.pop(q.uid, None)
            if rng.random() < 0.5:
                q.timestamp = clock
                push(q)
        assert len(heap) == len(model)
