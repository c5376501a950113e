"""``SchedulerQueueingHints=false``: the legacy events plugins register, and ``preCheckForNode``.

Without hints upstream filters node add / update moves through ``preCheckForNode``
(``eventhandlers.go``), so a Node/Add may be missed; every plugin registering Node/Add then
also registers ``UpdateNodeTaint | UpdateNodeLabel`` (kubernetes#109437), and plugins drop the
Pod/Update events that only hints can use (an update of an unschedulable pod retries it anyway).
Expected sets are upstream's ``EventsToRegister`` (``enableSchedulingQueueHint`` branches).
"""

from __future__ import annotations

from typing import Any

import pytest

import kubesched
from kubesched.config._config import ProfileConfig, SchedulerConfig
from kubesched.plugins import IN_TREE
from kubesched.runtime._events import ActionType as A
from kubesched.runtime._events import Resource as R
from kubesched.scheduler._scheduler import Scheduler
from kubesched.testing import FakeHandle, make_node, make_pod
from kubesched.transports.fake import FakeCluster

ADD, DELETE = A.ADD, A.DELETE
LABEL, TAINT, ALLOC = A.UPDATE_NODE_LABEL, A.UPDATE_NODE_TAINT, A.UPDATE_NODE_ALLOCATABLE
POD_LABEL, POD_TOL = A.UPDATE_POD_LABEL, A.UPDATE_POD_TOLERATION
POD_SCALE_DOWN = A.UPDATE_POD_SCALE_DOWN

# plugin -> (hints on, hints off): {(resource, action), ...}
CASES: dict[str, tuple[set[tuple[Any, Any]], set[tuple[Any, Any]]]] = {
    "NodeAffinity": ({(R.NODE, ADD | LABEL)}, {(R.NODE, ADD | LABEL | TAINT)}),
    "NodePorts": (
        {(R.POD, DELETE), (R.NODE, ADD)},
        {(R.POD, DELETE), (R.NODE, ADD | TAINT | LABEL)},
    ),
    "NodeName": ({(R.NODE, ADD)}, {(R.NODE, ADD | TAINT | LABEL)}),
    "TaintToleration": (
        {(R.NODE, ADD | TAINT), (R.POD, POD_TOL)},
        {(R.NODE, ADD | TAINT | LABEL)},
    ),
    "NodeUnschedulable": (
        {(R.NODE, ADD | TAINT), (R.POD, POD_TOL)},
        {(R.NODE, ADD | TAINT | LABEL)},
    ),
    "PodTopologySpread": (
        {(R.POD, ADD | POD_LABEL | POD_TOL | DELETE), (R.NODE, ADD | DELETE | LABEL | TAINT)},
        {(R.POD, ADD | POD_LABEL | DELETE), (R.NODE, ADD | DELETE | LABEL | TAINT)},
    ),
    "InterPodAffinity": (
        {(R.ASSIGNED_POD, ADD | POD_LABEL | DELETE), (R.NODE, ADD | LABEL)},
        {(R.ASSIGNED_POD, ADD | POD_LABEL | DELETE), (R.NODE, ADD | LABEL | TAINT)},
    ),
    "NodeResourcesFit": (
        {(R.POD, DELETE | POD_SCALE_DOWN), (R.NODE, ADD | ALLOC)},
        {(R.POD, DELETE | POD_SCALE_DOWN), (R.NODE, ADD | ALLOC | TAINT | LABEL)},
    ),
}


def _events(name: str, hints: bool | None) -> set[tuple[Any, Any]]:
    gates = {} if hints is None else {"SchedulerQueueingHints": hints}
    handle = FakeHandle(feature_gates=gates)
    plugin = IN_TREE[name](None, handle)
    return {(e.event.resource, e.event.action) for e in plugin.kubesched_events_to_register()}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("hints", [True, False, None], ids=["hints on", "hints off", "no gates"])
def test_events_to_register_follow_the_gate(name: str, hints: bool | None) -> None:
    on, off = CASES[name]
    assert _events(name, hints) == (off if hints is False else on)


# --- preCheckForNode ---------------------------------------------------------------------------


def _scheduler(hints: bool) -> Scheduler:
    prof = ProfileConfig(multi_point=list(kubesched.config._config.default_multi_point()))
    cfg = SchedulerConfig(profiles=[prof])
    cfg.feature_gates["SchedulerQueueingHints"] = hints
    return Scheduler(FakeCluster(), cfg)


def _rejected(sched: Scheduler, pod: kubesched.Pod, plugin: str) -> None:
    """Add, pop, and fail the pod (rejected by ``plugin``): it lands in unschedulablePods."""
    q = sched.queue
    q.add(pod)
    info = q.pop_nowait()
    assert info is not None
    info.unschedulable_plugins = {plugin}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where(pod.metadata.uid) == "unschedulable"


def _pod() -> kubesched.Pod:
    return make_pod("p").uid("p").req(cpu="2").obj()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("node", "moved"),
    [
        pytest.param(make_node("small").capacity(cpu="1", memory="1Gi").obj(), False, id="does not fit"),
        pytest.param(
            make_node("tainted").capacity(cpu="4", memory="8Gi").taint("k", "v").obj(),
            False,
            id="untolerated NoSchedule taint",
        ),
        pytest.param(
            make_node("big").capacity(cpu="4", memory="8Gi").obj(),
            True,
            id="fits",
        ),
    ],
)
async def test_pre_check_for_node_add_with_hints_off(node: kubesched.Node, moved: bool) -> None:
    sched = _scheduler(hints=False)
    _rejected(sched, _pod(), "NodeResourcesFit")
    sched.handlers.on_node("ADDED", node)
    assert (sched.queue.where("p") != "unschedulable") is moved


@pytest.mark.anyio
async def test_pre_check_for_node_update_with_hints_off() -> None:
    sched = _scheduler(hints=False)
    _rejected(sched, _pod(), "NodeResourcesFit")
    small = make_node("n").capacity(cpu="1", memory="1Gi").obj()
    sched.handlers.on_node("ADDED", small)
    sched.handlers.on_node("MODIFIED", make_node("n").capacity(cpu="1", memory="1Gi").label("a", "b").obj())
    assert sched.queue.where("p") == "unschedulable"
    sched.handlers.on_node("MODIFIED", make_node("n").capacity(cpu="4", memory="1Gi").label("a", "b").obj())
    assert sched.queue.where("p") != "unschedulable"


@pytest.mark.anyio
async def test_pre_check_for_node_counts_the_cached_pods_with_hints_off() -> None:
    """The check runs on the cache's NodeInfo: pods already bound there use up the room."""
    sched = _scheduler(hints=False)
    _rejected(sched, _pod(), "NodeResourcesFit")
    sched.handlers.on_pod("ADDED", make_pod("bound").uid("bound").req(cpu="3").node("n").obj())
    sched.handlers.on_node("ADDED", make_node("n").capacity(cpu="4", memory="8Gi").obj())
    assert sched.queue.where("p") == "unschedulable"


@pytest.mark.anyio
async def test_no_pre_check_with_hints_on() -> None:
    """Hints on: no preCheck; Fit's hint (the node fits) queues the pod despite the taint."""
    sched = _scheduler(hints=True)
    _rejected(sched, _pod(), "NodeResourcesFit")
    sched.handlers.on_node("ADDED", make_node("n").capacity(cpu="4", memory="8Gi").taint("k", "v").obj())
    assert sched.queue.where("p") != "unschedulable"
