"""Coscheduling (PodGroup): QueueSort, PreFilter, PostFilter, Permit, Unreserve.

Why one file: scheduler-plugins' coscheduling test tables, one row per upstream case, in
upstream's order.

Ported from kubernetes-sigs/scheduler-plugins ``pkg/coscheduling/core/core_test.go`` (CT:
TestPreFilter, TestPermit, TestCheckClusterResource, TestMarkAndClearPodGroupScheduleFailure) and
``pkg/coscheduling/coscheduling_test.go`` (PT: TestLess, TestPermit, TestPostFilter,
TestPodGroupBackoffTime): cases K1–K19 of upstream-cases.md, plus the rest of those tables.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubesched import ConfigError, CycleState, PodInfo, QueuedPodInfo
from kubesched.plugins import IN_TREE
from kubesched.plugins.coscheduling import (
    NAME,
    POD_GROUP_LABEL,
    Coscheduling,
    CoschedulingArgs,
    check_cluster_resource,
    new,
    parse_args,
)
from kubesched.runtime._events import ActionType, ClusterEvent, Resource
from kubesched.runtime._framework import PODS_TO_ACTIVATE_KEY, Framework
from kubesched.runtime._status import Code, Status
from kubesched.scheduler._scheduler import PodsToActivate
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod, make_pod_group

WALL_EPOCH = 1_700_000_000.0
"""The fake handle's wall clock at loop time 0 ("now" in the upstream tests)."""


def rfc3339(wall: float) -> str:
    return datetime.fromtimestamp(wall, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeWaitingPod:
    def __init__(self, pod: Any) -> None:
        self.pod = pod
        self.allowed_by: list[str] = []
        self.rejected: tuple[str, str] | None = None

    def allow(self, plugin: str) -> None:
        self.allowed_by.append(plugin)

    def reject(self, plugin: str, msg: str) -> None:
        self.rejected = (plugin, msg)


def fake_handle(pods: Any = (), pgs: Any = ()) -> FakeHandle:
    """A handle over ``pods`` and the pod groups ``pgs``, its clock at 0 (``handle.clock``)."""
    return FakeHandle(pods=pods, pod_groups=pgs, clock=0.0, wall_epoch=WALL_EPOCH)


def wait(handle: FakeHandle, pod: Any) -> FakeWaitingPod:
    """Make ``pod`` one of the handle's waiting pods (a FakeWaitingPod recording its fate)."""
    wp = handle.waiting.pods[pod.metadata.uid] = FakeWaitingPod(pod)
    return wp


def gpod(name: str, pg: str | None = None, ns: str = "ns") -> Any:
    b = make_pod(name, ns).uid(name)
    if pg is not None:
        b.label(POD_GROUP_LABEL, pg)
    return b


def pg_(name: str, min_member: int = 1, ns: str = "ns") -> Any:
    return make_pod_group(name, ns).min_member(min_member)


def plugin(handle: FakeHandle, **args: Any) -> Coscheduling:
    return Coscheduling(CoschedulingArgs(**args), handle)


def new_state() -> CycleState:
    state = CycleState()
    state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
    return state


def cpu_nodes(cpu: str, *names: str, pods: Any = ()) -> list[Any]:
    out = []
    for n in names:
        node = make_node(n).capacity(cpu=cpu).obj()
        out.append(make_node_info(node, *[p for p in pods if p.spec.node_name == n]))
    return out


# --- args ----------------------------------------------------------------------------------


def test_args_defaults() -> None:
    # sp apis/config/v1/defaults.go
    assert parse_args(None) == CoschedulingArgs(60, 0, 10)
    assert parse_args({}) == CoschedulingArgs(60, 0, 10)
    assert parse_args(
        {"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 5}
    ) == CoschedulingArgs(10, 5, 10)


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        pytest.param(
            {"permitWaitingTimeSeconds": -1},
            "permitWaitingTimeSeconds",
            "Invalid value: -1: must be greater than 0",
            id="negative permitWaitingTimeSeconds",
        ),
        pytest.param(
            {"podGroupBackoffSeconds": -1},
            "podGroupBackoffSeconds",
            "Invalid value: -1: must be greater than 0",
            id="negative podGroupBackoffSeconds",
        ),
        pytest.param(
            {"podGroupRejectPercentage": 101},
            "podGroupRejectPercentage",
            "Invalid value: 101: must be between 0 and 100",
            id="podGroupRejectPercentage above 100",
        ),
        pytest.param(
            {"podGroupRejectPercentage": -1},
            "podGroupRejectPercentage",
            "Invalid value: -1: must be between 0 and 100",
            id="negative podGroupRejectPercentage",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": "10"},
            "permitWaitingTimeSeconds",
            'Invalid value: "10": must be an integer',
            id="not an integer",
        ),
        pytest.param(
            {"kubeConfigPath": "x"},
            "",
            'strict decoding error: unknown field "kubeConfigPath"',
            id="unknown field",
        ),
    ],
)
def test_args_validation(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError) as ei:
        new(raw, fake_handle())
    assert ei.value.field == field
    assert ei.value.message == message


def test_in_tree_registry_and_events() -> None:
    assert IN_TREE[NAME] is new
    pl = plugin(fake_handle())
    events = [e.event for e in pl.kubesched_events_to_register()]
    assert events == [
        ClusterEvent(Resource.POD, ActionType.ADD),
        ClusterEvent(Resource.POD_GROUP, ActionType.ADD | ActionType.UPDATE),
    ]


# --- QueueSort -----------------------------------------------------------------------------

LOW, HIGH = 10, 100


def qpi(pod: Any, initial: float | None = None) -> QueuedPodInfo:
    return QueuedPodInfo(PodInfo(pod), initial_attempt_timestamp=initial)


def lpod(name: str, ns: str, prio: int, pg: str | None = None) -> Any:
    b = make_pod(name, ns).priority(prio)
    if pg is not None:
        b.label(POD_GROUP_LABEL, pg)
    return b.obj()


def tpg(name: str, ns: str, offset: float | None = None) -> Any:
    b = make_pod_group(name, ns)
    if offset is not None:
        b.creation_timestamp(rfc3339(WALL_EPOCH + offset))
    return b.obj()


# PT › TestLess: (p1, p1 initial attempt offset, p2, p2 offset, groups, want)
LESS_CASES = [
    pytest.param(
        lpod("p1", "ns1", LOW),
        None,
        lpod("p2", "ns2", HIGH),
        None,
        [],
        False,
        id="PT TestLess/p1.priority less than p2.priority",
    ),
    pytest.param(
        lpod("p1", "ns1", HIGH),
        None,
        lpod("p2", "ns2", LOW),
        None,
        [],
        True,
        id="PT TestLess/p1.priority greater than p2.priority",
    ),
    pytest.param(
        lpod("p1", "ns1", HIGH),
        1,
        lpod("p2", "ns2", HIGH),
        2,
        [],
        True,
        id="PT TestLess/equal priority. p1 is added to schedulingQ earlier than p2",
    ),
    pytest.param(
        lpod("p1", "ns1", HIGH),
        2,
        lpod("p2", "ns2", HIGH),
        1,
        [],
        False,
        id="PT TestLess/equal priority. p2 is added to schedulingQ earlier than p1",
    ),
    pytest.param(
        lpod("p1", "ns1", LOW, "pg1"),
        None,
        lpod("p2", "ns2", HIGH),
        None,
        [tpg("pg1", "ns1")],
        False,
        id="PT TestLess/p1.priority less than p2.priority, p1 belongs to pg1",
    ),
    pytest.param(
        lpod("p1", "ns1", HIGH, "pg1"),
        None,
        lpod("p2", "ns2", LOW),
        None,
        [tpg("pg1", "ns1")],
        True,
        id="PT TestLess/p1.priority greater than p2.priority, p1 belongs to pg1",
    ),
    pytest.param(
        lpod("p1", "ns1", HIGH, "pg1"),
        1,
        lpod("p2", "ns2", HIGH),
        2,
        [tpg("pg1", "ns1", 1)],
        True,
        id="PT TestLess/equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
    ),
    pytest.param(
        lpod("p1", "ns1", HIGH, "pg1"),
        2,
        lpod("p2", "ns2", HIGH),
        1,
        [tpg("pg1", "ns1", 2)],
        False,
        id="PT TestLess/equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
    ),
    pytest.param(
        lpod("p1", "ns1", LOW, "pg1"),
        None,
        lpod("p2", "ns2", HIGH, "pg2"),
        None,
        [tpg("pg1", "ns1", 1), tpg("pg2", "ns2", 2)],
        False,
        id="PT TestLess/p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
    ),
    pytest.param(
        lpod("p1", "ns1", HIGH, "pg1"),
        None,
        lpod("p2", "ns2", LOW, "pg1"),
        None,
        [tpg("pg1", "ns1", 1), tpg("pg2", "ns2", 2)],
        True,
        id="PT TestLess/p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
    ),
    pytest.param(
        lpod("p1", "ns1", HIGH, "pg1"),
        1,
        lpod("p2", "ns2", HIGH, "pg2"),
        2,
        [tpg("pg1", "ns1", 1), tpg("pg2", "ns2", 2)],
        True,
        id="PT TestLess/equal priority. p1 is added to schedulingQ earlier than p2, "
        "p1 belongs to pg1 and p2 belongs to pg2",
    ),
    pytest.param(
        lpod("p1", "ns", LOW, "pg2"),
        1,
        lpod("p2", "ns", HIGH, "pg1"),
        2,
        [tpg("pg1", "ns", 1), tpg("pg2", "ns", 2)],
        False,
        id="PT TestLess/equal priority. p2 is added to schedulingQ earlier than p1, "
        "p1 belongs to pg2 and p2 belongs to pg1",
    ),
    pytest.param(
        lpod("p1", "ns1", HIGH, "pg2"),
        1,
        lpod("p2", "ns2", HIGH, "pg2"),
        1,
        [tpg("pg1", "ns1", 1), tpg("pg2", "ns2", 2)],
        True,
        id="PT TestLess/equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
    ),
    pytest.param(
        lpod("p1", "ns1", HIGH),
        1,
        lpod("p2", "ns2", HIGH, "pg2"),
        1,
        [tpg("pg2", "ns2", 2)],
        True,
        id="PT TestLess/equal priority and creation time, and p2 belong to pg2",
    ),
]


@pytest.mark.parametrize(("p1", "t1", "p2", "t2", "pgs", "want"), LESS_CASES)
def test_less(
    p1: Any, t1: float | None, p2: Any, t2: float | None, pgs: list[Any], want: bool
) -> None:
    pl = plugin(fake_handle(pgs=pgs))
    assert pl.kubesched_queue_sort_less(qpi(p1, t1), qpi(p2, t2)) is want


def test_less_same_group_orders_by_name() -> None:
    # Members of one group share the group's time: "namespace/name" keeps them in a fixed order.
    pl = plugin(fake_handle(pgs=[tpg("pg1", "ns", 5)]))
    a, b = qpi(lpod("a", "ns", 0, "pg1"), 9), qpi(lpod("b", "ns", 0, "pg1"), 1)
    assert pl.kubesched_queue_sort_less(a, b)
    assert not pl.kubesched_queue_sort_less(b, a)


def test_mark_and_clear_pod_group_schedule_failure() -> None:
    # CT › TestMarkAndClearPodGroupScheduleFailure
    created = WALL_EPOCH - 10
    handle = fake_handle(
        pgs=[make_pod_group("pg1", "ns").min_member(3).creation_timestamp(rfc3339(created)).obj()]
    )
    pl = plugin(handle)
    q = qpi(gpod("p1", "pg1").obj(), 0.0)
    assert pl.creation_timestamp(q) == created
    handle.clock = 1.0
    pl.mark_failure("ns/pg1")
    assert pl.creation_timestamp(q) > created
    assert pl.creation_timestamp(q) == WALL_EPOCH + 1
    pl.clear_failure("ns/pg1")
    assert pl.creation_timestamp(q) == created


def test_failed_group_goes_behind_a_newer_group() -> None:
    # The head-of-line fix: after a failure, a group sorts by the failure time.
    handle = fake_handle(pgs=[tpg("old", "ns", 0), tpg("new", "ns", 5)])
    pl = plugin(handle)
    a, b = qpi(lpod("a", "ns", 0, "old"), 0), qpi(lpod("b", "ns", 0, "new"), 0)
    assert pl.kubesched_queue_sort_less(a, b)
    handle.clock = 10.0
    pl.mark_failure("ns/old")
    assert pl.kubesched_queue_sort_less(b, a)


# --- PreFilter -----------------------------------------------------------------------------

PREFILTER_CASES = [
    pytest.param(
        gpod("p").obj(),
        [gpod("p1", "pg1").obj(), gpod("p2", "pg2").obj()],
        [pg_("pg1", 1), pg_("pg2", 1)],
        True,
        id="K1 CT TestPreFilter/pod does not belong to any pg",
    ),
    pytest.param(
        gpod("p", "pg-non-existent").obj(),
        [],
        [pg_("pg1", 1)],
        True,
        id="K2 CT TestPreFilter/pod belongs to a non-existent pg",
    ),
    pytest.param(
        gpod("p", "pg1").obj(),
        [gpod("pg2-1", "pg2").obj()],
        [pg_("pg1", 2), pg_("pg2", 2)],
        False,
        id="K3 CT TestPreFilter/pod count less than minMember",
    ),
    pytest.param(
        gpod("p1a", "pg1").obj(),
        [gpod("p1b", "pg1").obj(), gpod("p1c", "pg1").obj()],
        [pg_("pg1", 2), pg_("pg2", 2)],
        True,
        id="K4 CT TestPreFilter/pod count equal minMember",
    ),
    pytest.param(
        gpod("p1a", "pg1").obj(),
        [gpod("p1b", "pg1").obj(), gpod("p1c", "pg1").obj()],
        [pg_("pg1", 2), pg_("pg2", 2)],
        True,
        id="K4 CT TestPreFilter/pod count more than minMember",
    ),
    pytest.param(
        gpod("p1a", "pg1").obj(),
        [gpod("p1b", "pg1").obj(), gpod("p1c", "pg1").scheduling_gates("example-gate").obj()],
        [pg_("pg1", 2)],
        True,
        id="K5 CT TestPreFilter/gated pods but still meeting quorum (minMember < replicas)",
    ),
    pytest.param(
        gpod("p1a", "pg1").obj(),
        [gpod("p1b", "pg1").scheduling_gates("example-gate").obj(), gpod("p1c", "pg1").obj()],
        [pg_("pg1", 3)],
        False,
        id="K6 CT TestPreFilter/gated pods push group below quorum",
    ),
    pytest.param(
        gpod("p1a", "pg1").obj(),
        [
            gpod("p1b", "pg1").scheduling_gates("example-gate").obj(),
            gpod("p1c", "pg1").scheduling_gates("example-gate").obj(),
        ],
        [pg_("pg1", 2)],
        False,
        id="K7 CT TestPreFilter/all sibling pods are gated",
    ),
    pytest.param(
        gpod("p1a", "pg1").obj(),
        [gpod("p1b", "pg1").obj(), gpod("p1c", "pg1").obj()],
        [pg_("pg1", 2).min_resources(cpu="6")],
        True,
        id="K8 CT TestPreFilter/cluster's resource satisfies minResource",
    ),
    pytest.param(
        gpod("p1a", "pg1").obj(),
        [gpod("p1b", "pg1").obj(), gpod("p1c", "pg1").obj()],
        [pg_("pg1", 2).min_resources(cpu="10")],
        False,
        id="K9 CT TestPreFilter/cluster's resource cannot satisfy minResource",
    ),
]


@pytest.mark.parametrize(("pod", "pending", "pgs", "ok"), PREFILTER_CASES)
def test_pre_filter(pod: Any, pending: list[Any], pgs: list[Any], ok: bool) -> None:
    handle = fake_handle([*pending, pod], [b.obj() for b in pgs])
    pl = plugin(handle, permit_waiting_time_seconds=10)
    st = pl.kubesched_pre_filter(new_state(), pod, cpu_nodes("4", "node-a", "node-b", pods=pending))
    if ok:
        assert st is None
    else:
        assert st is not None
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE  # no preemption for a gang failure


def test_pre_filter_messages() -> None:
    pod = gpod("p", "pg1").obj()
    pl = plugin(fake_handle([pod], [pg_("pg1", 2).obj()]))
    st = pl.kubesched_pre_filter(new_state(), pod, [])
    assert st == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 2",
    )
    pods = [gpod("p1a", "pg1").obj(), gpod("p1b", "pg1").obj()]
    pl = plugin(fake_handle(pods, [pg_("pg1", 2).min_resources(cpu="10").obj()]))
    st = pl.kubesched_pre_filter(new_state(), pods[0], cpu_nodes("4", "node-a", "node-b"))
    # the documented difference (module docstring, README): scheduler-plugins' %v prints the
    # quantity's Go struct, map[cpu:{{2 0} {<nil>}  DecimalSI}]; kubesched writes it as Kubernetes does
    assert st is not None and st.message == "resource gap: map[cpu:2]"


def test_pre_filter_counts_bound_members() -> None:
    bound = gpod("p1b", "pg1").node("node-a").obj()
    pod = gpod("p1a", "pg1").obj()
    pl = plugin(fake_handle([bound, pod], [pg_("pg1", 2).obj()]))
    assert pl.kubesched_pre_filter(new_state(), pod, cpu_nodes("4", "node-a", pods=[bound])) is None


def test_pre_filter_permitted_pg_cache() -> None:
    # A group that passed the minResources check is not checked again for the permit waiting time.
    pods = [gpod("p1a", "pg1").obj(), gpod("p1b", "pg1").obj()]
    handle = fake_handle(pods, [pg_("pg1", 2).min_resources(cpu="6").obj()])
    pl = plugin(handle, permit_waiting_time_seconds=10)
    assert pl.kubesched_pre_filter(new_state(), pods[0], cpu_nodes("4", "a", "b")) is None
    full = cpu_nodes("4", "a", "b", pods=[make_pod("x").node("a").req(cpu="4").obj()])
    assert pl.kubesched_pre_filter(new_state(), pods[1], full) is None
    handle.clock = 10.5
    assert pl.kubesched_pre_filter(new_state(), pods[1], full) is not None


# --- CheckClusterResource ------------------------------------------------------------------

CLUSTER_RESOURCE_CASES = [
    pytest.param(
        [gpod("p1").node("node-a").req(cpu="2").obj()],
        True,
        id="K10 CT TestCheckClusterResource/Cluster resource enough",
    ),
    pytest.param(
        [
            gpod("p1").node("node-a").req(cpu="2").obj(),
            gpod("p2").node("node-b").req(cpu="1").obj(),
        ],
        False,
        id="K11 CT TestCheckClusterResource/Cluster resource not enough",
    ),
    pytest.param(
        [
            gpod("p1", "pg1").node("node-a").req(cpu="2").obj(),
            gpod("p2").node("node-b").req(cpu="1").obj(),
        ],
        True,
        id="K12 CT TestCheckClusterResource/Cluster resource enough as p1's resource needs to be "
        "excluded from minResources",
    ),
]


@pytest.mark.parametrize(("existing", "want"), CLUSTER_RESOURCE_CASES)
def test_check_cluster_resource(existing: list[Any], want: bool) -> None:
    nodes = cpu_nodes("3", "node-a", "node-b", pods=existing)
    err = check_cluster_resource(nodes, {"cpu": 4000}, "ns/pg1")
    assert (err is None) is want


def test_check_cluster_resource_counts_pods() -> None:
    # minResources always carries pods: minMember; a full node offers no pod slot.
    node = make_node("n").capacity_list({"cpu": "8", "pods": 1}).obj()
    ni = make_node_info(node, make_pod("x").node("n").obj())
    assert (
        check_cluster_resource([ni], {"cpu": 1000, "pods": 1}, "ns/pg1")
        == "resource gap: map[pods:1]"
    )


# --- Permit --------------------------------------------------------------------------------

CORE_PERMIT_CASES = [
    pytest.param(gpod("p").obj(), [], None, id="K13 CT TestPermit/pod does not belong to any pg"),
    pytest.param(
        gpod("p", "pg-non-existent").obj(),
        [],
        Status(Code.UNSCHEDULABLE, "PodGroup not found"),
        id="K14 CT TestPermit/pod specifies a non-existent pg",
    ),
    pytest.param(
        gpod("p", "pg1").obj(),
        [],
        Code.WAIT,
        id="K15 CT TestPermit/pod belongs to a pg that doesn't have quorum",
    ),
    pytest.param(
        gpod("p1a", "pg1").obj(),
        [gpod("p1b", "pg1").node("node").obj()],
        None,
        id="K16 CT TestPermit/pod belongs to a pg that have quorum satisfied",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), CORE_PERMIT_CASES)
def test_permit_core(pod: Any, existing: list[Any], want: Any) -> None:
    pl = plugin(fake_handle([*existing, pod], [pg_("pg1", 2).obj()]), permit_waiting_time_seconds=10)
    out = pl.kubesched_permit(new_state(), pod, "node")
    if want is Code.WAIT:
        assert isinstance(out, tuple)
        assert out[0].code == Code.WAIT
        assert out[1] == 10
    else:
        assert out == want


PLUGIN_PERMIT_CASES = [
    pytest.param(
        gpod("p").obj(), Code.SUCCESS, id="K17 PT TestPermit/pods do not belong to any podGroup"
    ),
    pytest.param(
        gpod("p", "pg2").obj(),
        Code.WAIT,
        id="K17 PT TestPermit/pods belong to a pg1, but quorum not satisfied",
    ),
    pytest.param(
        gpod("p", "pg1").obj(),
        Code.SUCCESS,
        id="K17 PT TestPermit/pods belong to a podGroup, and quorum satisfied",
    ),
]


@pytest.mark.parametrize(("pod", "want"), PLUGIN_PERMIT_CASES)
def test_permit_plugin(pod: Any, want: Code) -> None:
    pl = plugin(
        fake_handle([pod], [pg_("pg1", 1).obj(), pg_("pg2", 2).obj()]),
        permit_waiting_time_seconds=10,
    )
    out = pl.kubesched_permit(new_state(), pod, "node")
    st = out[0] if isinstance(out, tuple) else out
    assert (st.code if st is not None else Code.SUCCESS) == want


@pytest.mark.parametrize(
    ("timeout", "permit_wait", "want"),
    [
        pytest.param(30, 10, 30.0, id="group scheduleTimeoutSeconds wins"),
        pytest.param(None, 10, 10.0, id="permitWaitingTimeSeconds"),
        pytest.param(None, 0, 60.0, id="both unset: DefaultWaitTime"),
    ],
)
def test_permit_wait_time(timeout: int | None, permit_wait: int, want: float) -> None:
    b = pg_("pg1", 2)
    if timeout is not None:
        b.schedule_timeout(timeout)
    pod = gpod("p", "pg1").obj()
    pl = plugin(fake_handle([pod], [b.obj()]), permit_waiting_time_seconds=permit_wait)
    out = pl.kubesched_permit(new_state(), pod, "node")
    assert isinstance(out, tuple) and out[1] == want


def test_permit_quorum_allows_waiting_members_and_clears_failure() -> None:
    pods = [gpod(f"p{i}", "pg1").obj() for i in range(3)]
    other = gpod("q", "pg2").obj()
    handle = fake_handle([*pods, other], [pg_("pg1", 3).obj(), pg_("pg2", 2).obj()])
    pl = plugin(handle)
    waiting = []
    for p in pods[:2]:
        out = pl.kubesched_permit(new_state(), p, "n")
        assert isinstance(out, tuple) and out[0].code == Code.WAIT
        waiting.append(wait(handle, p))
    w_other = wait(handle, other)
    pl.mark_failure("ns/pg1")
    assert pl.kubesched_permit(new_state(), pods[2], "n") is None
    assert [w.allowed_by for w in waiting] == [[NAME], [NAME]]
    assert w_other.allowed_by == []
    assert "ns/pg1" not in pl.last_failure


def test_permit_first_member_activates_siblings() -> None:
    # PT › TestPodGroupBackoffTime › "prevent pod falling into infinite scheduling loop"
    pods = [gpod(f"pod{i}", "pg1").obj() for i in (1, 2, 3)]
    handle = fake_handle(pods, [pg_("pg1", 3).obj()])
    pl = plugin(handle, permit_waiting_time_seconds=10, pod_group_backoff_seconds=1)
    state = new_state()
    out = pl.kubesched_permit(state, pods[0], "test")
    assert isinstance(out, tuple) and out[0].code == Code.WAIT
    activated = state.read(PODS_TO_ACTIVATE_KEY)
    assert sorted(p.key for p in activated.values()) == ["ns/pod2", "ns/pod3"]
    # A second member waits without activating anyone again.
    state2 = new_state()
    pl.kubesched_permit(state2, pods[1], "test")
    assert not state2.read(PODS_TO_ACTIVATE_KEY)

    pl.kubesched_post_filter(CycleState(), pods[1], {})
    st = pl.kubesched_pre_filter(CycleState(), pods[2], [])
    assert st == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "podGroup ns/pg1 failed recently")
    handle.clock = 1.5  # the backoff expired
    assert pl.kubesched_pre_filter(CycleState(), pods[2], []) is None


# --- PostFilter ----------------------------------------------------------------------------

POSTFILTER_CASES = [
    pytest.param(
        gpod("p").obj(),
        [],
        [pg_("pg1", 2)],
        Status(Code.UNSCHEDULABLE, "can not find pod group"),
        id="K18 PT TestPostFilter/pod does not belong to any pod group",
    ),
    pytest.param(
        gpod("p", "pg1").obj(),
        [gpod("p1", "pg1").node("node").obj()],
        [pg_("pg1", 1)],
        Status(Code.UNSCHEDULABLE),
        id="K19 PT TestPostFilter/enough pods assigned, do not reject all",
    ),
    pytest.param(
        gpod("p", "pg1").obj(),
        [gpod("p1", "pg1").node("node").obj()],
        [pg_("pg1", 2)],
        Status(
            Code.UNSCHEDULABLE,
            "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",
        ),
        id="PT TestPostFilter/pod failed at filter phase, reject all pods",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "pgs", "want"), POSTFILTER_CASES)
def test_post_filter(pod: Any, existing: list[Any], pgs: list[Any], want: Status) -> None:
    pl = plugin(
        fake_handle([*existing, pod], [b.obj() for b in pgs]), permit_waiting_time_seconds=10
    )
    result, st = pl.kubesched_post_filter(CycleState(), pod, {"node": Status(Code.SUCCESS)})
    assert st == want
    assert result.nominated_node_name is None


def test_post_filter_rejects_waiting_members_and_marks_failure() -> None:
    pods = [gpod(f"p{i}", "pg1").obj() for i in range(3)]
    handle = fake_handle(pods, [pg_("pg1", 3).obj()])
    pl = plugin(handle)
    pl.kubesched_permit(new_state(), pods[0], "n")
    w = wait(handle, pods[0])
    handle.clock = 7.0
    _, st = pl.kubesched_post_filter(CycleState(), pods[2], {})
    assert st.code == Code.UNSCHEDULABLE
    assert w.rejected == (NAME, "optimistic rejection in PostFilter")
    assert pl.last_failure["ns/pg1"] == WALL_EPOCH + 7
    assert not pl.backed_off_pg.get("ns/pg1")  # podGroupBackoffSeconds 0: no backoff


@pytest.mark.parametrize(
    ("pct", "rejects"),
    [
        pytest.param(10, False, id="gap of 1/10 within the default 10%"),
        pytest.param(9, True, id="gap of 1/10 above 9%"),
    ],
)
def test_post_filter_reject_percentage(pct: int, rejects: bool) -> None:
    pods = [gpod(f"p{i}", "pg1").obj() for i in range(10)]
    handle = fake_handle(pods, [pg_("pg1", 10).obj()])
    pl = plugin(handle, pod_group_reject_percentage=pct)
    for p in pods[:9]:
        pl.kubesched_permit(new_state(), p, "n")
        wait(handle, p)
    _, st = pl.kubesched_post_filter(CycleState(), pods[9], {})
    assert bool(st.reasons) is rejects
    assert all((w.rejected is not None) is rejects for w in handle.waiting.pods.values())


def test_post_filter_no_backoff_for_an_incomplete_group() -> None:
    # Backoff only when the group has at least minMember pods: more may still be coming.
    pods = [gpod("p0", "pg1").obj()]
    pl = plugin(fake_handle(pods, [pg_("pg1", 3).obj()]), pod_group_backoff_seconds=5)
    pl.kubesched_post_filter(CycleState(), pods[0], {})
    assert not pl.backed_off_pg.get("ns/pg1")


# --- Reserve / Unreserve -------------------------------------------------------------------


def test_unreserve_rejects_waiting_members_and_forgets_the_pod() -> None:
    pods = [gpod(f"p{i}", "pg1").obj() for i in range(3)]
    outsider = gpod("o", "pg1", ns="other").obj()
    handle = fake_handle([*pods, outsider], [pg_("pg1", 3).obj()])
    pl = plugin(handle)
    for p in pods[:2]:
        pl.kubesched_permit(new_state(), p, "n")
        wait(handle, p)
    w_out = wait(handle, outsider)
    pl.permitted_pg.add("ns/pg1", 60)
    assert pl.kubesched_reserve(CycleState(), pods[0], "n") is None
    handle.waiting.pods.pop(pods[0].metadata.uid)  # its own wait ended (timeout / reject)
    pl.kubesched_unreserve(CycleState(), pods[0], "n")
    assert pl.assigned_pods("ns/pg1") == {"p1"}
    assert handle.waiting.pods[pods[1].metadata.uid].rejected == (NAME, "rejection in Unreserve")
    assert w_out.rejected is None
    assert not pl.permitted_pg.get("ns/pg1")
    assert "ns/pg1" in pl.last_failure
    pl.kubesched_unreserve(CycleState(), pods[0], "n")  # idempotent
    assert pl.assigned_pods("ns/pg1") == {"p1"}


def test_assigned_pods_follow_the_cluster() -> None:
    # The informer's add handler counts pods that arrive bound; the delete handler forgets them.
    bound = gpod("b", "pg1").node("n").obj()
    pod = gpod("p", "pg1").obj()
    handle = fake_handle([bound, pod], [pg_("pg1", 3).obj()])
    pl = plugin(handle)
    pl.kubesched_permit(new_state(), pod, "n")
    assert pl.assigned_pods("ns/pg1") == {"b", "p"}
    handle.delete(bound)
    handle.delete(pod)
    assert pl.assigned_pods("ns/pg1") == set()
    assert pl.assigned == {}


# --- with the real framework ---------------------------------------------------------------


def _framework(**args: Any) -> Framework:
    fw = Framework(
        "default-scheduler",
        {"queueSort": [(NAME, 0)]},
        IN_TREE,
        {NAME: args},
        multi_point=[(NAME, 0), ("DefaultBinder", 0)],
        disabled={"queueSort": {"*"}},
        parts=FakeHandle(wall_epoch=WALL_EPOCH).parts,
    )
    return fw


def test_framework_profile_points() -> None:
    fw = _framework()
    points = fw.list_plugins()
    for point in ("queueSort", "preFilter", "postFilter", "reserve", "permit"):
        assert points[point] == [(NAME, 1)], point


@pytest.mark.anyio
async def test_framework_waiting_pods_released_at_quorum() -> None:
    import anyio

    fw = _framework(permitWaitingTimeSeconds=5)
    pods = [gpod(f"p{i}", "pg1").obj() for i in range(3)]
    for p in pods:
        fw.handle.cluster.pods[p.metadata.uid] = p
        fw.handle.cluster.pod_keys[(p.metadata.namespace, p.metadata.name)] = p.metadata.uid
    fw.handle.cluster.pod_groups[("ns", "pg1")] = pg_("pg1", 3).obj()
    results: dict[str, Status | None] = {}

    async def bind(p: Any) -> None:
        results[p.metadata.name] = await fw.wait_on_permit(p)

    async with anyio.create_task_group() as tg:
        for p in pods[:2]:
            st = fw.run_permit_plugins(new_state(), p, "n")
            assert st is not None and st.is_wait()
            tg.start_soon(bind, p)
        await anyio.sleep(1)
        assert results == {}
        assert fw.run_permit_plugins(new_state(), pods[2], "n") is None
    assert results == {"p0": None, "p1": None}


@pytest.mark.anyio
async def test_framework_waiting_pods_time_out() -> None:
    import anyio

    fw = _framework(permitWaitingTimeSeconds=5)
    p = gpod("p0", "pg1").obj()
    fw.handle.cluster.pods[p.metadata.uid] = p
    fw.handle.cluster.pod_keys[("ns", "p0")] = p.metadata.uid
    fw.handle.cluster.pod_groups[("ns", "pg1")] = pg_("pg1", 2).obj()
    start = anyio.current_time()
    assert fw.run_permit_plugins(new_state(), p, "n").is_wait()
    st = await fw.wait_on_permit(p)
    assert anyio.current_time() - start == pytest.approx(5)
    assert st == Status(
        Code.UNSCHEDULABLE, "rejected due to timeout after waiting 5s at plugin Coscheduling"
    )
