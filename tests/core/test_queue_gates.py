"""The queue's feature gates: ``SchedulerQueueingHints=false`` and ``SchedulerPopFromBackoffQ``.

Hints off is upstream's legacy path (``addUnschedulableWithoutQueueingHint``, hint functions
replaced by ``defaultQueueingHintFn``, ``isPodUpdated``); PopFromBackoffQ is KEP-5142's windowed
backoffQ.  Ids name the upstream test and case where one exists (``backoff_queue_test.go``);
"adapted" marks a case whose scenario is upstream's but whose assertion differs (said why).
Time is a fake clock injected with ``now=``; T0 is a whole second, as upstream aligns its clock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from kubesched.api._objects import Pod
from kubesched.config._config import parse_config
from kubesched.queue._scheduling_queue import (
    BackoffQueue,
    QueuedPodInfo,
    SchedulingQueue,
    align_to_window,
    is_pod_updated,
)
from kubesched.runtime._events import ActionType, ClusterEvent, QueueingHint, Resource
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import Code, Status
from kubesched.scenario import load_manifests
from kubesched.simulation import simulate
from kubesched.testing import make_pod

HintFn = Callable[[Any, Any, Any], QueueingHint]
PreEnqueueFn = Callable[[Pod], Status | None]

T0 = 1_000_000.0
FIT = "NodeResourcesFit"
NODE_LABEL = ClusterEvent(Resource.NODE, ActionType.UPDATE_NODE_LABEL)


def skip(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


class FakeClock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def step(self, d: float) -> None:
        self.t += d


class Profile:
    """PrioritySort, PreEnqueue plugins by name (each call counted), registered events."""

    def __init__(
        self,
        pre_enqueue: dict[str, PreEnqueueFn] | None = None,
        events: Sequence[tuple[str, ClusterEvent, HintFn | None]] = (),
    ) -> None:
        self.pre_enqueue = dict(pre_enqueue or {})
        self.events = list(events)
        self.pre_enqueue_calls = 0

    def queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        if a.priority != b.priority:
            return a.priority > b.priority
        return a.timestamp < b.timestamp

    def run_pre_enqueue_plugins(self, pod: Pod, first: str = "") -> Status | None:
        self.pre_enqueue_calls += 1
        for name in sorted(self.pre_enqueue, key=lambda n: n != first):
            st = self.pre_enqueue[name](pod)
            if st is not None and not st.is_success():
                st.plugin = name
                return st
        return None

    def cluster_events(self) -> list[tuple[str, ClusterEvent, HintFn | None]]:
        return self.events


def gate_unless_labelled(pod: Pod) -> Status | None:
    if "ok" in pod.metadata.labels:
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "not allowed")


def new_queue(
    clock: FakeClock,
    profile: Profile | None = None,
    **kw: Any,
) -> tuple[SchedulingQueue, Profile]:
    prof = profile or Profile(events=[(FIT, NODE_LABEL, skip)])
    return SchedulingQueue({"default-scheduler": prof}, now=clock, **kw), prof


def pod(name: str, prio: int = 0, **labels: str) -> Pod:
    b = make_pod(name).uid(name).priority(prio)
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


def fail(q: SchedulingQueue, p: Pod, *plugins: str, cycle: int | None = None) -> QueuedPodInfo:
    """Add, pop (in flight), and return the pod through the failure path, rejected by ``plugins``."""
    q.add(p)
    info = q.pop_nowait()
    assert info is not None and info.uid == p.metadata.uid
    info.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle if cycle is None else cycle)
    return info


# --- SchedulerQueueingHints=false ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("plugins", "move_between", "want"),
    [
        pytest.param(
            (FIT,), False, "unschedulable", id="rejected, no move request: unschedulablePods"
        ),
        pytest.param((FIT,), True, "backoff", id="move request during the cycle: backoffQ"),
        pytest.param((), False, "backoff", id="no rejector plugin (error): backoffQ"),
    ],
)
def test_hints_off_add_unschedulable(
    plugins: tuple[str, ...], move_between: bool, want: str
) -> None:
    clock = FakeClock()
    q, _ = new_queue(clock, queueing_hints=False)
    p = pod("p")
    q.add(p)
    info = q.pop_nowait()
    assert info is not None
    if move_between:  # an event some plugin registered, while the pod is in flight
        q.move_all_to_active_or_backoff(NODE_LABEL)
        assert q.move_request_cycle == q.scheduling_cycle
    info.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where("p") == want
    assert q.in_flight_events() == []  # nothing recorded without hints


def test_hints_off_old_move_request_does_not_count() -> None:
    """``moveRequestCycle >= podSchedulingCycle``: a move before the pod's cycle is no reason."""
    clock = FakeClock()
    q, _ = new_queue(clock, queueing_hints=False)
    q.move_all_to_active_or_backoff(NODE_LABEL)  # cycle 0
    fail(q, pod("p"), FIT)  # cycle 1
    assert q.where("p") == "unschedulable"


def test_hints_on_same_scenario_uses_the_hint() -> None:
    """The default path for contrast: the in-flight event's hint (Skip) keeps the pod out."""
    clock = FakeClock()
    q, _ = new_queue(clock)
    p = pod("p")
    q.add(p)
    info = q.pop_nowait()
    assert info is not None
    q.move_all_to_active_or_backoff(NODE_LABEL)
    info.unschedulable_plugins = {FIT}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where("p") == "unschedulable"


@pytest.mark.parametrize(
    ("hints", "step", "want"),
    [
        pytest.param(
            False, 0.5, "backoff", id="hints off: hint ignored, still backing off: backoffQ"
        ),
        pytest.param(False, 1.5, "active", id="hints off: hint ignored, backoff over: activeQ"),
        pytest.param(True, 1.5, "unschedulable", id="hints on: hint says Skip: stays"),
    ],
)
def test_move_all_hint_ignored_without_hints(hints: bool, step: float, want: str) -> None:
    clock = FakeClock()
    q, _ = new_queue(clock, queueing_hints=hints)
    fail(q, pod("p"), FIT)
    assert q.where("p") == "unschedulable"
    clock.step(step)
    q.move_all_to_active_or_backoff(NODE_LABEL)
    assert q.where("p") == want


def test_hints_off_event_not_registered_by_rejector_keeps_pod() -> None:
    clock = FakeClock()
    q, _ = new_queue(clock, queueing_hints=False)
    fail(q, pod("p"), "NodeAffinity")
    clock.step(2)
    q.move_all_to_active_or_backoff(NODE_LABEL)  # of interest (FIT), but not to NodeAffinity
    assert q.where("p") == "unschedulable"


@pytest.mark.parametrize(
    ("change", "step", "want"),
    [
        pytest.param("label", 0.5, "backoff", id="labels changed, backing off: backoffQ"),
        pytest.param("label", 1.5, "active", id="labels changed, backoff over: activeQ"),
        pytest.param("status", 1.5, "unschedulable", id="status only: stays"),
        pytest.param("resourceVersion", 1.5, "unschedulable", id="resourceVersion only: stays"),
    ],
)
def test_hints_off_update_of_unschedulable_pod(change: str, step: float, want: str) -> None:
    clock = FakeClock()
    q, _ = new_queue(clock, queueing_hints=False)
    old = pod("p")
    fail(q, old, FIT)
    clock.step(step)
    new = make_pod("p").uid("p").priority(0).obj()
    if change == "label":
        new.metadata.labels = {"x": "y"}
    elif change == "status":
        new.status.phase = "Pending"
    else:
        new.metadata.resource_version = "42"
    q.update(old, new)
    assert q.where("p") == want


def test_is_pod_updated() -> None:
    a = make_pod("p").uid("p").obj()
    b = make_pod("p").uid("p").obj()
    b.status.nominated_node_name = "n1"
    b.metadata.resource_version = "7"
    b.metadata.generation = 3
    assert not is_pod_updated(a, b)
    b.metadata.annotations = {"k": "v"}
    assert is_pod_updated(a, b)


def test_hints_off_update_in_flight_adds_to_active() -> None:
    """Without hints there is no in-flight record: the update finds the pod in no queue."""
    clock = FakeClock()
    q, _ = new_queue(clock, queueing_hints=False)
    old = pod("p")
    q.add(old)
    assert q.pop_nowait() is not None
    q.update(old, pod("p", x="y"))
    assert q.where("p") == "active"
    assert q.in_flight_events() == []


def test_hints_off_activate_in_flight_sets_move_request_cycle() -> None:
    clock = FakeClock()
    q, _ = new_queue(clock, queueing_hints=False)
    p = pod("p")
    q.add(p)
    info = q.pop_nowait()
    assert info is not None
    q.activate([p])
    assert q.in_flight_events() == []
    assert q.move_request_cycle == q.scheduling_cycle
    info.unschedulable_plugins = {FIT}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where("p") == "backoff"


# --- SchedulerPopFromBackoffQ ------------------------------------------------------------------


def backoff_info(
    seq: int, name: str, ts: float, *plugins: str, prio: int = 0, attempts: int = 1
) -> QueuedPodInfo:
    info = QueuedPodInfo(PodInfo(pod(name, prio)), timestamp=ts, attempts=attempts, seq=seq)
    info.unschedulable_plugins = set(plugins)
    return info


POP_ALL = {
    "pod0": (-2.0, ("plugin",)),
    "pod1": (1.0, ("plugin",)),
    "pod2": (-2.0, ()),
    "pod3": (1.0, ()),
}


@pytest.mark.parametrize(
    "windowed", [True, False], ids=["popFromBackoffQEnabled(true)", "popFromBackoffQEnabled(false)"]
)
@pytest.mark.parametrize(
    ("in_backoff", "want"),
    [
        pytest.param([], [], id="TestBackoffQueue_popAllBackoffCompleted: Both queues empty"),
        pytest.param(
            ["pod0", "pod1"],
            ["pod0"],
            id="TestBackoffQueue_popAllBackoffCompleted: Pods only in backoffQ",
        ),
        pytest.param(
            ["pod2", "pod3"],
            ["pod2"],
            id="TestBackoffQueue_popAllBackoffCompleted: Pods only in errorBackoffQ",
        ),
        pytest.param(
            ["pod0", "pod1", "pod2", "pod3"],
            ["pod0", "pod2"],
            id="TestBackoffQueue_popAllBackoffCompleted: some moved",
        ),
        pytest.param(
            ["pod0", "pod2"],
            ["pod0", "pod2"],
            id="TestBackoffQueue_popAllBackoffCompleted: all moved",
        ),
        pytest.param(
            ["pod1", "pod3"], [], id="TestBackoffQueue_popAllBackoffCompleted: none moved"
        ),
    ],
)
def test_pop_all_backoff_completed(windowed: bool, in_backoff: list[str], want: list[str]) -> None:
    clock = FakeClock()
    bq = BackoffQueue(
        clock, 1.0, 10.0, pop_from_backoff_q=windowed, active_less=Profile().queue_sort_less
    )
    for i, name in enumerate(in_backoff):
        ts, plugins = POP_ALL[name]
        bq.add(backoff_info(i, name, T0 + ts, *plugins))
    got = [i.pod.metadata.name for i in bq.pop_each_backoff_completed()]
    assert got == want
    assert len(bq) == len(in_backoff) - len(want)


ORDERING = [  # TestBackoffQueueOrdering: (name, priority, timestamp - now), all attempts=1
    ("pod0", 1, 0.0),
    ("pod1", 1, -1.0),
    ("pod2", 2, -2.0 + 0.001),
    ("pod3", 1, -2.0),
    ("pod4", 2, -2.0),
    ("pod5", 1, -3.0),
]


@pytest.mark.parametrize(
    ("windowed", "want"),
    [
        pytest.param(
            True,
            ["pod5", "pod4", "pod2", "pod3"],
            id="TestBackoffQueueOrdering: same window ordered by priority if PopFromBackoffQ is enabled",
        ),
        # adapted: upstream's newer disabled queue backs off while !expiry.Before(now); the
        # non-windowed queue here keeps the older expiry.After(now), so pod1 (expiry == now) is done
        pytest.param(
            False,
            ["pod5", "pod3", "pod4", "pod2", "pod1"],
            id="TestBackoffQueueOrdering: priority doesn't matter if PopFromBackoffQ is disabled (adapted)",
        ),
    ],
)
def test_backoff_queue_ordering(windowed: bool, want: list[str]) -> None:
    clock = FakeClock()
    bq = BackoffQueue(
        clock, 1.0, 10.0, pop_from_backoff_q=windowed, active_less=Profile().queue_sort_less
    )
    for i, (name, prio, dt) in enumerate(ORDERING):
        bq.add(backoff_info(i, name, T0 + dt, "plugin", prio=prio))
    assert [i.pod.metadata.name for i in bq.pop_each_backoff_completed()] == want


@pytest.mark.parametrize(
    ("ts", "step", "want"),
    [
        pytest.param(0.3, 1.0, True, id="expiry 1.3 in the window [1, 2) at now=1.0: backing off"),
        pytest.param(0.3, 1.99, True, id="expiry 1.3, now 1.99: same window, backing off"),
        pytest.param(0.3, 2.0, False, id="expiry 1.3, now 2.0: next window, done"),
        pytest.param(0.0, 0.5, True, id="expiry 1.0, now 0.5: backing off"),
        pytest.param(0.0, 1.0, True, id="expiry 1.0 at now 1.0: equal window still backs off"),
        pytest.param(0.0, 2.0, False, id="expiry 1.0, now 2.0: done"),
    ],
)
def test_windowed_is_backing_off(ts: float, step: float, want: bool) -> None:
    clock = FakeClock()
    bq = BackoffQueue(clock, 1.0, 10.0, pop_from_backoff_q=True)
    info = backoff_info(0, "p", T0 + ts, "plugin")
    clock.step(step)
    assert bq.is_backing_off(info) is want
    assert bq.expiry(info) == align_to_window(T0 + ts + 1.0)


def test_windowed_never_attempted_pod_never_backs_off() -> None:
    clock = FakeClock()
    bq = BackoffQueue(clock, 1.0, 10.0, pop_from_backoff_q=True)
    info = backoff_info(0, "p", T0 + 5, "plugin", attempts=0)
    assert not bq.is_backing_off(info)
    assert info.backoff_expiration is None  # the zero time is not cached


def test_pop_takes_backoff_head_when_active_is_empty() -> None:
    """The pop is counted ``scheduler_queue_incoming_pods_total{queue="active",
    event="PopFromBackoffQ"}``, as v1.33+ ``activeQueue.unlockedPop`` counts it."""
    from kubesched.metrics._metrics import MetricsRecorder

    clock = FakeClock()
    q, _ = new_queue(clock, queueing_hints=False, pop_from_backoff_q=True)
    rec = MetricsRecorder()
    q.metrics_recorder = rec
    p = pod("p")
    q.add(p)
    info = q.pop_nowait()
    assert info is not None
    q.move_all_to_active_or_backoff(NODE_LABEL)
    info.unschedulable_plugins = {FIT}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where("p") == "backoff" and q.is_backing_off(info)
    assert ("active", "PopFromBackoffQ") not in rec.incoming  # the first pop was activeQ's
    again = q.pop_nowait()  # activeQ empty: the backoffQ head, backing off or not
    assert again is info and again.attempts == 2
    assert rec.incoming[("active", "PopFromBackoffQ")] == 1


def test_pop_prefers_active_and_never_takes_error_backoff() -> None:
    clock = FakeClock()
    q, _ = new_queue(clock, pop_from_backoff_q=True)
    fail(q, pod("err"))  # no rejector: the error heap
    assert q.where("err") == "backoff"
    assert q.pop_nowait() is None
    q.add(pod("a"))
    got = q.pop_nowait()
    assert got is not None and got.pod.metadata.name == "a"


def test_without_gate_pop_ignores_backoff() -> None:
    clock = FakeClock()
    q, _ = new_queue(clock, queueing_hints=False)
    p = pod("p")
    q.add(p)
    info = q.pop_nowait()
    assert info is not None
    q.move_all_to_active_or_backoff(NODE_LABEL)
    info.unschedulable_plugins = {FIT}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where("p") == "backoff"
    assert q.pop_nowait() is None


@pytest.mark.parametrize(("gate", "want"), [(True, "unschedulable"), (False, "backoff")])
def test_move_to_backoff_runs_pre_enqueue_with_gate(gate: bool, want: str) -> None:
    """A pod that PreEnqueue now rejects: with the gate it is held in unschedulablePods on its way
    to backoffQ; without it, it reaches backoffQ (and is gated only on the way to activeQ)."""
    clock = FakeClock()
    allowed = {"yes"}

    def gate_fn(p: Pod) -> Status | None:
        if allowed:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "closed")

    prof = Profile(pre_enqueue={"Gate": gate_fn}, events=[(FIT, NODE_LABEL, None)])
    q, _ = new_queue(clock, prof, pop_from_backoff_q=gate)
    fail(q, pod("p"), FIT)
    assert q.where("p") == "unschedulable"
    allowed.clear()
    clock.step(0.2)
    q.move_all_to_active_or_backoff(NODE_LABEL)  # Queue, still backing off
    assert q.where("p") == want
    info = q.get("p")
    assert info is not None and info.gated is gate


@pytest.mark.parametrize(("gate", "want_calls"), [(True, 0), (False, 1)])
def test_backoff_to_active_skips_pre_enqueue_with_gate(gate: bool, want_calls: int) -> None:
    clock = FakeClock()
    prof = Profile(events=[(FIT, NODE_LABEL, None)])
    q, _ = new_queue(clock, prof, pop_from_backoff_q=gate)
    fail(q, pod("p"), FIT)
    clock.step(0.2)
    q.move_all_to_active_or_backoff(NODE_LABEL)
    assert q.where("p") == "backoff"
    prof.pre_enqueue_calls = 0
    clock.step(3)
    q.flush_backoff_completed()
    assert q.where("p") == "active"
    assert prof.pre_enqueue_calls == want_calls


@pytest.mark.parametrize(
    ("gate", "start", "want"),
    [
        pytest.param(True, T0 + 0.3, [T0 + 1, T0 + 2], id="gate on: ticks on whole seconds"),
        pytest.param(True, T0, [T0 + 1, T0 + 2], id="gate on: started on a whole second"),
        pytest.param(False, T0 + 0.3, [T0 + 1.3, T0 + 2.3], id="gate off: every second from start"),
    ],
)
def test_backoff_flush_ticks(gate: bool, start: float, want: list[float]) -> None:
    clock = FakeClock(start)
    q, _ = new_queue(clock, pop_from_backoff_q=gate)
    q.start_ticks()
    got = []
    for _ in want:
        tick = q.next_tick(backoff_only=True)
        assert tick is not None
        got.append(tick)
        clock.t = tick
        q.run_due_flushes()
    assert got == pytest.approx(want)


def test_windowed_backoff_flush_releases_whole_window() -> None:
    """Two pods whose expiries fall in the same window are flushed together, by priority."""
    clock = FakeClock()
    q, _ = new_queue(clock, Profile(events=[(FIT, NODE_LABEL, None)]), pop_from_backoff_q=True)
    fail(q, pod("low", 1), FIT)
    clock.step(0.5)
    fail(q, pod("high", 9), FIT)
    clock.step(0.1)
    q.move_all_to_active_or_backoff(NODE_LABEL)
    assert q.where("low") == q.where("high") == "backoff"
    clock.t = T0 + 1.0  # low expires at 1.0, high at 1.5: one window, both still backing off
    assert q.flush_backoff_completed() == []
    clock.t = T0 + 2.0
    assert [i.pod.metadata.name for i in q.flush_backoff_completed()] == ["high", "low"]


# --- end to end ----------------------------------------------------------------------------------

NODES = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata:
  name: n2
  labels: {kubernetes.io/hostname: n2}
  annotations: {kubesched.io/arrival: 10s}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: db}}
        topologyKey: zone
"""


@pytest.mark.anyio
@pytest.mark.parametrize(("hints", "want_attempts"), [("true", 1), ("false", 2)])
async def test_e2e_node_without_topology_key_retries_only_without_hints(
    hints: str, want_attempts: int
) -> None:
    """A pod rejected by InterPodAffinity (no pod matches its required term) and a new node
    without the term's topology key: InterPodAffinity's hint says QueueSkip, so with hints the
    pod is not retried; without hints the Node/Add it registered counts as Queue and the pod is
    retried (and fails again).  Upstream's preCheckForNode would pass this node too (it fits,
    no taints, no node affinity), so the legacy retry is upstream's."""
    manifests = load_manifests(["m.yaml"], texts={"m.yaml": NODES})
    cfg = parse_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    )
    cfg.feature_gates["SchedulerQueueingHints"] = hints == "true"
    result = await simulate(manifests, cfg, until=60)
    assert result.summary["attempts"] == want_attempts
    assert result.summary["pending"] == 1
    failed = [e for e in result.events if e["reason"] == "FailedScheduling"]
    assert len(failed) == want_attempts


@pytest.mark.parametrize("pop_from_backoff_q", [False, True], ids=["pop off", "pop on"])
@pytest.mark.parametrize("hints", [True, False], ids=["hints on", "hints off"])
def test_gates_keep_asyncio_and_trio_identical(hints: bool, pop_from_backoff_q: bool) -> None:
    """The deterministic loop stays byte-for-byte the same on both backends in every gate state."""
    from kubesched.transports.fake.virtual_time import run

    manifests = load_manifests(["m.yaml"], texts={"m.yaml": NODES})

    async def go() -> str:
        cfg = parse_config(
            {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
        )
        cfg.feature_gates["SchedulerQueueingHints"] = hints
        cfg.feature_gates["SchedulerPopFromBackoffQ"] = pop_from_backoff_q
        return (await simulate(manifests, cfg, until=60)).to_json()

    assert run(go, backend="asyncio") == run(go, backend="trio")


def test_flush_ticks_run_due_sees_ticks_changed_from_outside() -> None:
    """``run_due`` skips its loop while the ticks are those of its last look and none is due;
    ticks changed from outside since (in place, as the quiet-period replay shifts them, or
    replaced) are looked at again."""
    from kubesched.queue._ticks import FlushTicks

    clock = FakeClock(T0)
    flushed: list[str] = []
    ticks = FlushTicks(
        lambda: clock.t,
        aligned=False,
        flush_backoff=lambda: flushed.append("backoff"),
        flush_leftover=lambda: flushed.append("leftover"),
        backoff_busy=lambda: False,
        unschedulable_busy=lambda: False,
    )
    ticks.start()
    clock.t = T0 + 0.5
    ticks.run_due()
    ticks.run_due()
    assert flushed == []
    ticks.ticks[0] = (T0 - 1.0, 1.0, 1)  # due now, changed in place
    ticks.run_due()
    assert flushed == ["backoff"] and ticks.ticks[0] == (T0 - 1.0, 1.0, 2)
    ticks.ticks = [(T0, 1.0, 1), (T0 - 30.0, 30.0, 1)]  # replaced
    ticks.run_due()
    assert flushed == ["backoff", "leftover"]
    clock.t = T0 + 1.0
    ticks.run_due()
    assert flushed == ["backoff", "leftover", "backoff"]
    ticks.run_due()
    assert flushed == ["backoff", "leftover", "backoff"]
