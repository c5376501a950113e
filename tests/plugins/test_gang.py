"""Gang: the label-based gang plugin, hook by hook (args, QueueSort, PreFilter, Reserve/Unreserve,
Permit, PostBind, events, expiry)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched import ConfigError, CycleState, QueuedPodInfo, QueueingHint
from kubesched._config import ProfileConfig
from kubesched._framework import PODS_TO_ACTIVATE_KEY, Framework, build_framework
from kubesched._nodeinfo import PodInfo
from kubesched._scheduler import ClusterState, PodsToActivate
from kubesched._status import Code
from kubesched.plugins import IN_TREE, gang
from kubesched.testing import make_pod

GANG = gang.DEFAULT_GROUP_NAME_LABEL
COUNT = gang.DEFAULT_AVAILABLE_COUNT_LABEL


def member(name: str, group: str = "train", count: int | str = 3, ns: str = "default") -> Any:
    """A pod builder for a member of gang ``group`` with available-count ``count``."""
    return make_pod(name, ns).label(GANG, group).label(COUNT, str(count)).req(cpu="1")


def framework(args: dict[str, Any] | None = None) -> tuple[Framework, gang.Gang]:
    """A profile with Gang on (multiPoint + queueSort) over an empty informer cache."""
    prof = ProfileConfig(
        enabled={"queueSort": [("Gang", 0)], "bind": [("DefaultBinder", 0)]},
        disabled={"queueSort": {"PrioritySort"}},
        plugin_args={"Gang": args} if args is not None else {},
    )
    prof.multi_point = [("Gang", 0)]
    fw = build_framework(prof, IN_TREE)
    fw.cluster = ClusterState()
    return fw, fw.plugin("Gang")


def add(fw: Framework, *pods: Any) -> list[Any]:
    """Put pods (or builders) into the informer cache; return the Pod objects."""
    out = []
    for p in pods:
        pod = p.obj() if hasattr(p, "obj") else p
        fw.cluster.pods[pod.metadata.uid] = pod
        fw.cluster.pod_keys[(pod.metadata.namespace, pod.metadata.name)] = pod.metadata.uid
        out.append(pod)
    return out


def cycle_state() -> CycleState:
    s = CycleState()
    s.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
    return s


# --- args ------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    assert gang.parse_args(None) == gang.GangArgs(
        "gang.kubesched.io/name", "gang.kubesched.io/available-count", 60
    )
    assert gang.parse_args({"apiVersion": "x", "kind": "GangArgs"}) == gang.GangArgs()


def test_args_custom() -> None:
    args = gang.parse_args(
        {
            "groupNameLabel": "example.com/gang",
            "availableCountLabel": "example.com/min",
            "permitWaitingTimeSeconds": 5,
        }
    )
    assert args == gang.GangArgs("example.com/gang", "example.com/min", 5)


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        pytest.param(
            {"permitWaitingTimeSeconds": 0},
            "permitWaitingTimeSeconds",
            "Invalid value: 0: must be greater than 0",
            id="zero wait",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": -3},
            "permitWaitingTimeSeconds",
            "Invalid value: -3: must be greater than 0",
            id="negative wait",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": "60"},
            "permitWaitingTimeSeconds",
            'Invalid value: "60": must be a number of seconds',
            id="string wait",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": True},
            "permitWaitingTimeSeconds",
            'Invalid value: "True": must be a number of seconds',
            id="bool wait",
        ),
        pytest.param(
            {"groupNameLabel": ""},
            "groupNameLabel",
            'Invalid value: "": name part must be non-empty',
            id="empty group label",
        ),
        pytest.param(
            {"availableCountLabel": "a/b/c"}, "availableCountLabel", None, id="bad count label"
        ),
        pytest.param(
            {"groupNameLabel": 3},
            "groupNameLabel",
            'Invalid value: "3": must be a string',
            id="label not a string",
        ),
        pytest.param(
            {"groupNameLabel": "x", "availableCountLabel": "x"},
            "availableCountLabel",
            'Invalid value: "x": must differ from groupNameLabel',
            id="same labels",
        ),
        pytest.param(
            {"minAvailable": 2},
            "",
            'strict decoding error: unknown field "minAvailable"',
            id="unknown field",
        ),
    ],
)
def test_args_invalid(raw: dict[str, Any], field: str, message: str | None) -> None:
    with pytest.raises(ConfigError) as info:
        gang.parse_args(raw)
    assert info.value.field == field
    if message is not None:
        assert info.value.message == message


def test_args_error_names_the_config_field() -> None:
    from kubesched._config import parse_config

    cfg = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": "Gang"}]},
                        "queueSort": {
                            "enabled": [{"name": "Gang"}],
                            "disabled": [{"name": "PrioritySort"}],
                        },
                    },
                    "pluginConfig": [{"name": "Gang", "args": {"permitWaitingTimeSeconds": 0}}],
                }
            ],
        }
    )
    with pytest.raises(ConfigError) as info:
        build_framework(cfg.profiles[0], IN_TREE)
    assert info.value.field == "profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds"


def test_profile_turns_gang_on_like_coscheduling() -> None:
    fw, _ = framework()
    points = fw.list_plugins()
    assert points["queueSort"] == [("Gang", 1)]
    for point in ("preFilter", "reserve", "permit", "postBind"):
        assert ("Gang", 1) in points[point], point


# --- QueueSort -------------------------------------------------------------------------------


def qpi(
    fw: Framework, pod: Any, t: float, prio: int = 0, first: float | None = None
) -> QueuedPodInfo:
    """A queued pod (also put into the informer cache, as every queued pod is)."""
    (p,) = add(fw, pod.priority(prio))
    return QueuedPodInfo(
        PodInfo(p), timestamp=t, initial_attempt_timestamp=first if first is not None else t
    )


def test_sort_priority_first() -> None:
    fw, g = framework()
    hi = qpi(fw, make_pod("plain"), 10, prio=10)
    lo = qpi(fw, member("a1"), 0, prio=0)
    assert g.kubesched_queue_sort_less(hi, lo)
    assert not g.kubesched_queue_sort_less(lo, hi)


def test_sort_gang_kept_together_by_first_members_time() -> None:
    """A later member of an earlier gang goes before a plain pod queued in between."""
    fw, g = framework()
    a1 = qpi(fw, member("a1", "a"), 1)
    plain = qpi(fw, make_pod("plain"), 2)
    a2 = qpi(fw, member("a2", "a"), 3)
    assert g.kubesched_queue_sort_less(a1, plain)
    assert g.kubesched_queue_sort_less(a2, plain)
    assert not g.kubesched_queue_sort_less(plain, a2)
    # members of one gang go by name
    assert g.kubesched_queue_sort_less(a1, a2)
    assert not g.kubesched_queue_sort_less(a2, a1)
    assert g.gangs["default/a"].sort_time == 1


def test_sort_gang_time_is_the_earlier_of_two_members_first_compared() -> None:
    fw, g = framework()
    a2 = qpi(fw, member("a2", "a"), 7)
    a1 = qpi(fw, member("a1", "a"), 4)
    g.kubesched_queue_sort_less(a2, a1)
    assert g.gangs["default/a"].sort_time == 4


def test_sort_uses_first_attempt_time_not_requeue_time() -> None:
    fw, g = framework()
    a1 = qpi(fw, member("a1", "a"), 50, first=1)  # requeued at 50, first queued at 1
    b1 = qpi(fw, member("b1", "b"), 2)
    assert g.kubesched_queue_sort_less(a1, b1)


def test_sort_ties_between_gangs_by_name_and_plain_pods_first() -> None:
    fw, g = framework()
    b = qpi(fw, member("b1", "b"), 5)
    a = qpi(fw, member("a1", "a"), 5)
    plain = qpi(fw, make_pod("plain"), 5)
    assert g.kubesched_queue_sort_less(a, b)
    assert not g.kubesched_queue_sort_less(b, a)
    assert g.kubesched_queue_sort_less(plain, a)
    # gangs in different namespaces: "namespace/name"
    x = qpi(fw, member("x1", "z", ns="aaa"), 5)
    assert g.kubesched_queue_sort_less(x, a)


def test_sort_plain_pods_as_priority_sort() -> None:
    fw, g = framework()
    p1 = qpi(fw, make_pod("p1"), 1)
    p2 = qpi(fw, make_pod("p2"), 2)
    assert g.kubesched_queue_sort_less(p1, p2)
    assert not g.kubesched_queue_sort_less(p2, p1)
    same = qpi(fw, make_pod("p3"), 1)
    assert not g.kubesched_queue_sort_less(p1, same) and not g.kubesched_queue_sort_less(same, p1)


def test_queue_pops_gang_by_gang() -> None:
    """In the scheduling queue: members queued alternately leave it gang by gang (and plain pods
    at the same time first, in their own order)."""
    from kubesched._queue import SchedulingQueue

    fw, _ = framework()
    q = SchedulingQueue({"default-scheduler": fw}, now=lambda: 0.0)
    pods = add(
        fw,
        *(b for i in range(3) for b in (member(f"b-{i}", "b"), member(f"a-{i}", "a"))),
        make_pod("z-plain"),
        make_pod("plain"),
    )
    for p in pods:
        q.add(p)
    order = []
    while (x := q.pop_nowait()) is not None:
        order.append(x.pod.metadata.name)
    assert order == ["z-plain", "plain", "a-0", "a-1", "a-2", "b-0", "b-1", "b-2"]


_pods = st.lists(
    st.tuples(
        st.sampled_from(["", "a", "b", "c"]),  # gang ("" = none)
        st.integers(0, 2),  # priority
        st.integers(0, 3),  # timestamp
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=25, deadline=None)
@given(_pods)
def test_sort_is_a_strict_weak_order(specs: list[tuple[str, int, int]]) -> None:
    """Irreflexive, transitive, and incomparability is transitive (over all triples)."""
    fw, g = framework()
    items = []
    for i, (group, prio, t) in enumerate(specs):
        b = member(f"p{i}", group) if group else make_pod(f"p{i}")
        items.append(qpi(fw, b, float(t), prio=prio))
    less = g.kubesched_queue_sort_less
    # fix every gang's time first (as the queue does on its first comparisons)
    for x in items:
        for y in items:
            less(x, y)
    for x in items:
        assert not less(x, x)
        for y in items:
            assert not (less(x, y) and less(y, x))
            for z in items:
                if less(x, y) and less(y, z):
                    assert less(x, z)
                eq_xy = not less(x, y) and not less(y, x)
                eq_yz = not less(y, z) and not less(z, y)
                if eq_xy and eq_yz:
                    assert not less(x, z) and not less(z, x)


# --- PreFilter -------------------------------------------------------------------------------


def test_pre_filter_ignores_plain_pods() -> None:
    fw, g = framework()
    (p,) = add(fw, make_pod("plain"))
    assert g.kubesched_pre_filter(CycleState(), p, []) is None


@pytest.mark.parametrize(
    ("others", "want"),
    [
        pytest.param(
            [],
            "gang default/train has 1 pending and 0 running member(s), fewer than its available-count 3",
            id="alone",
        ),
        pytest.param(
            [member("t2")],
            "gang default/train has 2 pending and 0 running member(s), fewer than its "
            "available-count 3",
            id="two of three",
        ),
        pytest.param([member("t2"), member("t3")], None, id="three pending"),
        pytest.param(
            [member("t2").node("n1").phase("Running"), member("t3")], None, id="one running counts"
        ),
        pytest.param(
            [member("t2").node("n1").phase("Succeeded"), member("t3")],
            "gang default/train has 2 pending and 0 running member(s), fewer than its available-count 3",
            id="a finished member does not count",
        ),
        pytest.param(
            [member("t2").terminating(), member("t3")],
            "gang default/train has 2 pending and 0 running member(s), fewer than its available-count 3",
            id="a terminating member does not count",
        ),
        pytest.param(
            [member("t2", ns="other"), member("t3")],
            "gang default/train has 2 pending and 0 running member(s), fewer than its available-count 3",
            id="same name in another namespace is another gang",
        ),
        pytest.param(
            [member("t2", group="other"), member("t3")],
            "gang default/train has 2 pending and 0 running member(s), fewer than its available-count 3",
            id="another gang",
        ),
    ],
)
def test_pre_filter_counts_pending_and_running(others: list[Any], want: str | None) -> None:
    fw, g = framework()
    (pod, *_) = add(fw, member("t1"), *others)
    st_ = g.kubesched_pre_filter(CycleState(), pod, [])
    if want is None:
        assert st_ is None
    else:
        assert st_ is not None and st_.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st_.message == want


@pytest.mark.parametrize(
    ("count", "want"),
    [
        pytest.param(
            None,
            'gang default/train: gang member must have the label "gang.kubesched.io/available-count"',
            id="missing",
        ),
        pytest.param(
            "two",
            'gang default/train: label "gang.kubesched.io/available-count" must be a positive '
            'integer, got "two"',
            id="not a number",
        ),
        pytest.param(
            "0",
            'gang default/train: label "gang.kubesched.io/available-count" must be a positive '
            'integer, got "0"',
            id="zero",
        ),
    ],
)
def test_pre_filter_rejects_a_bad_count_label(count: str | None, want: str) -> None:
    fw, g = framework()
    b = make_pod("t1").label(GANG, "train")
    if count is not None:
        b = b.label(COUNT, count)
    (pod,) = add(fw, b)
    st_ = g.kubesched_pre_filter(CycleState(), pod, [])
    assert st_ is not None and st_.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st_.message == want


def test_custom_label_keys() -> None:
    fw, g = framework(
        {"groupNameLabel": "example.com/job", "availableCountLabel": "example.com/min"}
    )
    pods = add(
        fw,
        *(
            make_pod(f"t{i}").label("example.com/job", "j").label("example.com/min", "2")
            for i in (1, 2)
        ),
    )
    assert g.kubesched_pre_filter(CycleState(), pods[0], []) is None
    (lonely,) = add(fw, make_pod("x").label("example.com/job", "k").label("example.com/min", "2"))
    st_ = g.kubesched_pre_filter(CycleState(), lonely, [])
    assert st_ is not None and st_.message == (
        "gang default/k has 1 pending and 0 running member(s), fewer than its available-count 2"
    )
    # the default keys mean nothing here
    (plain,) = add(fw, member("d1", count=5))
    assert g.kubesched_pre_filter(CycleState(), plain, []) is None


# --- Permit, Reserve, Unreserve --------------------------------------------------------------


def reserve_and_permit(
    fw: Framework, pod: Any, node: str = "n1", state: CycleState | None = None
) -> Any:
    """What the scheduling cycle does after choosing ``node``: Reserve, then Permit."""
    state = state or cycle_state()
    assert fw.run_reserve_plugins_reserve(state, pod, node) is None
    return fw.run_permit_plugins(state, pod, node)


@pytest.mark.anyio
async def test_permit_waits_then_allows_the_whole_gang() -> None:
    fw, g = framework({"permitWaitingTimeSeconds": 30})
    t1, t2, t3 = add(fw, member("t1"), member("t2"), member("t3"))
    state = cycle_state()
    out = g.kubesched_permit(state, t1, "n1")
    assert isinstance(out, tuple)
    st_, timeout = out
    assert st_.code == Code.WAIT and timeout == 30
    assert set(state.read(PODS_TO_ACTIVATE_KEY)) == {t2.metadata.uid, t3.metadata.uid}

    assert reserve_and_permit(fw, t1).code == Code.WAIT
    assert reserve_and_permit(fw, t2, "n2").code == Code.WAIT
    assert set(fw.waiting_pods) == {t1.metadata.uid, t2.metadata.uid}
    assert reserve_and_permit(fw, t3, "n3") is None  # the third completes the gang
    results = [await fw.wait_on_permit(p) for p in (t1, t2)]
    assert results == [None, None]
    assert fw.waiting_pods == {}
    assert g.gangs["default/train"].permitted == {t1.metadata.uid, t2.metadata.uid, t3.metadata.uid}


@pytest.mark.anyio
async def test_permit_counts_running_and_permitted_members() -> None:
    """available-count 2 of 3: once two run, a third member passes at once."""
    fw, g = framework()
    t1, t2, t3 = add(fw, member("t1", count=2), member("t2", count=2), member("t3", count=2))
    assert reserve_and_permit(fw, t1).code == Code.WAIT
    assert reserve_and_permit(fw, t2) is None
    assert await fw.wait_on_permit(t1) is None
    # t1 and t2 are permitted but not yet bound: they count
    assert g.kubesched_permit(cycle_state(), t3, "n3") is None
    # ... and so do running members, once bound
    fw2, g2 = framework()
    add(fw2, member("r1", count=2).node("n1").phase("Running"))
    (p,) = add(fw2, member("r2", count=2))
    assert g2.kubesched_permit(cycle_state(), p, "n2") is None


@pytest.mark.anyio
async def test_permit_does_not_count_a_member_rejected_by_someone_else() -> None:
    """A waiting member rejected elsewhere (deleted, preempted) is not placed any more."""
    fw, g = framework()
    t1, t2, t3 = add(fw, member("t1"), member("t2"), member("t3"))
    assert reserve_and_permit(fw, t1).code == Code.WAIT
    assert reserve_and_permit(fw, t2).code == Code.WAIT
    fw.reject_waiting_pod(t1.metadata.uid)  # its Unreserve has not run yet
    out = reserve_and_permit(fw, t3)
    assert out is not None and out.code == Code.WAIT
    st1 = await fw.wait_on_permit(t1)
    assert st1 is not None and st1.message == "removed"
    assert fw.get_waiting_pod(t2.metadata.uid) is not None


@pytest.mark.anyio
async def test_permit_timeout_is_the_configured_wait() -> None:
    fw, g = framework({"permitWaitingTimeSeconds": 5})
    t1, _, _ = add(fw, member("t1"), member("t2"), member("t3"))
    assert reserve_and_permit(fw, t1).code == Code.WAIT
    start = anyio.current_time()
    st_ = await fw.wait_on_permit(t1)
    assert anyio.current_time() - start == pytest.approx(5)
    assert st_ is not None and st_.code == Code.UNSCHEDULABLE and st_.plugin == "Gang"
    assert st_.message == "rejected due to timeout after waiting 5s at plugin Gang"


@pytest.mark.anyio
async def test_unreserve_rejects_waiting_members_and_marks_the_gang() -> None:
    fw, g = framework()
    t1, t2, t3, t4 = add(
        fw,
        member("t1", count=4),
        member("t2", count=4),
        member("t3", count=4),
        member("t4", count=4),
    )
    for p in (t1, t2, t3):
        assert reserve_and_permit(fw, p).code == Code.WAIT
    # t1 times out first: its binding cycle unreserves it
    fw.waiting_pods.pop(t1.metadata.uid).reject("Gang", "timeout")
    await fw.run_reserve_plugins_unreserve(cycle_state(), t1, "n1")
    for p in (t2, t3):
        st_ = await fw.wait_on_permit(p)
        assert st_ is not None and st_.code == Code.UNSCHEDULABLE and st_.plugin == "Gang"
        assert st_.message == "rejected in Unreserve: gang default/train lost member t1"
    # while t2 and t3 still hold their reservations, the gang is rejected
    st_ = g.kubesched_pre_filter(cycle_state(), t4, [])
    assert st_ is not None and st_.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert (
        st_.message
        == "gang default/train was rejected (member t1 failed) and still holds 2 reservation(s)"
    )
    await fw.run_reserve_plugins_unreserve(cycle_state(), t2, "n1")
    await fw.run_reserve_plugins_unreserve(cycle_state(), t2, "n1")  # idempotent
    assert g.kubesched_pre_filter(cycle_state(), t4, []) is not None
    await fw.run_reserve_plugins_unreserve(cycle_state(), t3, "n1")
    # every reservation released: the gang starts over
    assert g.kubesched_pre_filter(cycle_state(), t4, []) is None
    assert g.gangs["default/train"].reserved == set()
    assert g.gangs["default/train"].permitted == set()


@pytest.mark.anyio
async def test_unreserve_leaves_other_gangs_alone() -> None:
    fw, g = framework()
    a1, _ = add(fw, member("a1", "a", 2), member("a2", "a", 2))
    b1, _ = add(fw, member("b1", "b", 2), member("b2", "b", 2))
    assert reserve_and_permit(fw, a1).code == Code.WAIT
    assert reserve_and_permit(fw, b1).code == Code.WAIT
    await fw.run_reserve_plugins_unreserve(cycle_state(), a1, "n1")
    wp = fw.get_waiting_pod(b1.metadata.uid)
    assert wp is not None and wp.get_pending_plugins() == ["Gang"]
    assert g.gangs.get("default/a") is not None and not g.gangs["default/a"].rejected


@pytest.mark.anyio
async def test_reservation_of_a_deleted_member_does_not_hold_the_mark() -> None:
    fw, g = framework()
    t1, t2, t3 = add(fw, member("t1"), member("t2"), member("t3"))
    for p in (t1, t2):
        assert reserve_and_permit(fw, p).code == Code.WAIT
    await fw.run_reserve_plugins_unreserve(cycle_state(), t1, "n1")
    assert g.kubesched_pre_filter(cycle_state(), t3, []) is not None
    del fw.cluster.pods[t2.metadata.uid]  # t2 vanished before its Unreserve
    fw.cluster.pods[t2.metadata.uid + "x"] = member("t2b").obj()
    assert g.kubesched_pre_filter(cycle_state(), t3, []) is None


def test_post_bind_releases_the_reservation() -> None:
    fw, g = framework()
    (t1,) = add(fw, member("t1", count=1))
    state = cycle_state()
    assert fw.run_reserve_plugins_reserve(state, t1, "n1") is None
    assert g.gangs["default/train"].reserved == {t1.metadata.uid}
    g.kubesched_post_bind(state, t1, "n1")
    assert g.gangs["default/train"].reserved == set()


# --- expiry ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_expired_gang_starts_fresh() -> None:
    """Once every member is gone, a new gang with the same name has a new time and no mark."""
    fw, g = framework()
    old1, old2 = add(fw, member("old1", count=2), member("old2", count=2))
    g.kubesched_queue_sort_less(
        qpi(fw, member("old1", count=2), 1), qpi(fw, member("old2", count=2), 1)
    )
    assert reserve_and_permit(fw, old1).code == Code.WAIT
    await fw.run_reserve_plugins_unreserve(cycle_state(), old1, "n1")
    g.gangs["default/train"].rejected = "member old1 failed"
    g.gangs["default/train"].reserved.add(old2.metadata.uid)
    # the old members go away
    fw.cluster.pods.clear()
    new1, new2 = add(fw, member("new1", count=2), member("new2", count=2))
    assert g.kubesched_pre_filter(cycle_state(), new1, []) is None
    state = g.gangs["default/train"]
    assert state.sort_time is None and state.rejected == "" and state.members == {new1.metadata.uid}
    a = qpi(fw, member("new1", count=2), 100)
    assert g.sort_key(a) == (0, 100, "default/train", "new1")


def test_finished_gang_expires_and_the_table_is_swept() -> None:
    fw, g = framework()
    for i in range(70):
        (p,) = add(fw, member(f"p{i}", group=f"g{i}", count=1).node("n1").phase("Succeeded"))
        g.kubesched_pre_filter(cycle_state(), p, [])
    # sweeping happens as the table grows: the finished gangs are forgotten
    assert len(g.gangs) < 70
    (live,) = add(fw, member("live", group="keep", count=1))
    g.kubesched_pre_filter(cycle_state(), live, [])
    g.sweep()
    assert list(g.gangs) == ["default/keep"]


# --- events ----------------------------------------------------------------------------------


def test_events_to_register_and_hints() -> None:
    _, g = framework()
    regs = {
        str(e.event.resource) + ":" + e.event.action.name: e.hint
        for e in g.kubesched_events_to_register()
    }
    assert set(regs) == {"Pod:ADD", "Pod:UPDATE_POD_LABEL", "AssignedPod:DELETE"}
    pod = member("t1").obj()
    sibling = member("t2").obj()
    stranger = member("x", group="other").obj()
    elsewhere = member("t2", ns="other").obj()
    add_hint = regs["Pod:ADD"]
    assert add_hint(pod, None, sibling) == QueueingHint.QUEUE
    assert add_hint(pod, None, stranger) == QueueingHint.QUEUE_SKIP
    assert add_hint(pod, None, elsewhere) == QueueingHint.QUEUE_SKIP
    assert add_hint(pod, None, pod) == QueueingHint.QUEUE_SKIP
    label_hint = regs["Pod:UPDATE_POD_LABEL"]
    unlabelled = make_pod("t2").obj()
    assert label_hint(pod, unlabelled, sibling) == QueueingHint.QUEUE
    assert label_hint(pod, sibling, sibling) == QueueingHint.QUEUE_SKIP
    del_hint = regs["AssignedPod:DELETE"]
    assert del_hint(pod, sibling, None) == QueueingHint.QUEUE
    assert del_hint(pod, stranger, None) == QueueingHint.QUEUE_SKIP
