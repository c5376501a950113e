"""Gang: the label-based gang plugin, hook by hook (args, QueueSort, PreFilter,
Permit, Unreserve, CleanUp), each checked against the design's code and log
(its specification is the plugin's docstring)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from kubesched import ConfigError, CycleState, QueuedPodInfo
from kubesched.config._config import ProfileConfig
from kubesched.plugins import IN_TREE, gang
from kubesched.runtime._framework import PODS_TO_ACTIVATE_KEY, Framework, build_framework
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import Code
from kubesched.scheduler._scheduler import PodsToActivate
from kubesched.testing import FakeHandle, make_pod

GANG = gang.DEFAULT_GROUP_NAME_LABEL
COUNT = gang.DEFAULT_AVAILABLE_COUNT_LABEL


def member(name: str, group: str = "train", count: int | str = 3, ns: str = "default") -> Any:
    """A pod builder for a member of gang ``group`` with available-count ``count``."""
    return make_pod(name, ns).label(GANG, group).label(COUNT, str(count)).req(cpu="1")


def framework(
    args: dict[str, Any] | None = None, handle: FakeHandle | None = None
) -> tuple[Framework, gang.Gang]:
    """A profile with Gang on (multiPoint + queueSort) over an empty informer cache, its clock
    at 0 (the plugin's CleanUp clock: give a ``handle`` to move its ``clock``)."""
    prof = ProfileConfig(
        enabled={"queueSort": [("Gang", 0)], "bind": [("DefaultBinder", 0)]},
        disabled={"queueSort": {"PrioritySort"}},
        plugin_args={"Gang": args} if args is not None else {},
    )
    prof.multi_point = [("Gang", 0)]
    fw = build_framework(prof, IN_TREE, parts=(handle or FakeHandle(clock=0.0)).parts)
    return fw, fw.plugin("Gang")


def add(fw: Framework, *pods: Any) -> list[Any]:
    """Put pods (or builders) into the informer cache; return the Pod objects."""
    out = []
    for p in pods:
        pod = p.obj() if hasattr(p, "obj") else p
        fw.handle.cluster.pods[pod.metadata.uid] = pod
        fw.handle.cluster.pod_keys[(pod.metadata.namespace, pod.metadata.name)] = pod.metadata.uid
        out.append(pod)
    return out


def cycle_state() -> CycleState:
    s = CycleState()
    s.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
    return s


# --- args ------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    assert gang.parse_args(None) == gang.GangArgs(
        "gang.kubesched.io/name", "gang.kubesched.io/available-count", 60, 300, False, False
    )
    assert gang.parse_args({"apiVersion": "x", "kind": "GangArgs"}) == gang.GangArgs()


def test_args_custom() -> None:
    args = gang.parse_args(
        {
            "groupNameLabel": "example.com/gang",
            "availableCountLabel": "example.com/min",
            "permitWaitingTimeSeconds": 5,
            "gangExpirationSeconds": 90,
            "prioritySort": True,
            "shortGangUnresolvable": True,
        }
    )
    assert args == gang.GangArgs("example.com/gang", "example.com/min", 5, 90, True, True)


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
            {"gangExpirationSeconds": 0},
            "gangExpirationSeconds",
            "Invalid value: 0: must be greater than 0",
            id="zero expiration",
        ),
        pytest.param(
            {"gangExpirationSeconds": float("inf")},
            "gangExpirationSeconds",
            "Invalid value: inf: must be at most 9223372036 seconds",
            id="infinite expiration",
        ),
        pytest.param(
            {"prioritySort": "yes"},
            "prioritySort",
            'Invalid value: "yes": must be a boolean',
            id="non-bool prioritySort",
        ),
        pytest.param(
            {"shortGangUnresolvable": 1},
            "shortGangUnresolvable",
            'Invalid value: "1": must be a boolean',
            id="non-bool shortGangUnresolvable",
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
    from kubesched.config._config import parse_config

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
    for point in ("preFilter", "reserve", "permit"):
        assert ("Gang", 1) in points[point], point
    assert ("Gang", 1) not in points.get("postBind", [])


def test_no_enqueue_extensions_so_every_pod_and_node_event_requeues() -> None:
    """The design implements no EnqueueExtensions: upstream registers such a plugin for every
    resource (UnrollWildCardResource), with no hint."""
    fw, g = framework()
    assert not hasattr(g, "kubesched_events_to_register")
    gang_events = [(str(e), hint) for name, e, hint in fw.cluster_events() if name == "Gang"]
    assert gang_events == [
        (label, None)
        for label in (
            "PodAll",
            "NodeAll",
            "PersistentVolumeAll",
            "PersistentVolumeClaimAll",
            "storage.k8s.io/CSINodeAll",
            "storage.k8s.io/CSIDriverAll",
            "storage.k8s.io/CSIStorageCapacityAll",
            "storage.k8s.io/StorageClassAll",
            "resource.k8s.io/ResourceClaimAll",
            "resource.k8s.io/DeviceClassAll",
        )
    ]


# --- QueueSort (the design's Less) ------------------------------------------------------------------


def ts(seconds: float) -> str:
    """An RFC 3339 creationTimestamp ``seconds`` after 2024-01-01T00:00:00Z."""
    from datetime import UTC, datetime, timedelta

    t = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)
    return (
        t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{t.microsecond:06d}" if t.microsecond else "") + "Z"
    )


def qpi(fw: Framework, pod: Any, created: float, prio: int = 0, t: float = 0.0) -> QueuedPodInfo:
    """A queued pod created at ``created`` (put into the informer cache too)."""
    (p,) = add(fw, pod.priority(prio).creation_timestamp(ts(created)))
    return QueuedPodInfo(PodInfo(p), timestamp=t, initial_attempt_timestamp=t)


def test_sort_by_creation_time_alone_priority_plays_no_part() -> None:
    fw, g = framework()
    early_low = qpi(fw, make_pod("early"), 1, prio=0, t=50)
    late_high = qpi(fw, make_pod("late"), 2, prio=1000, t=0)
    assert g.kubesched_queue_sort_less(early_low, late_high)
    assert not g.kubesched_queue_sort_less(late_high, early_low)


def test_sort_priority_first_with_the_prioritySort_departure() -> None:
    fw, g = framework({"prioritySort": True})
    early_low = qpi(fw, make_pod("early"), 1, prio=0)
    late_high = qpi(fw, make_pod("late"), 2, prio=1000)
    assert g.kubesched_queue_sort_less(late_high, early_low)
    assert not g.kubesched_queue_sort_less(early_low, late_high)
    # equal priority: the design's order
    assert g.kubesched_queue_sort_less(qpi(fw, make_pod("a"), 1), qpi(fw, make_pod("b"), 2))


def test_sort_gang_time_is_its_first_compared_members_creation_time() -> None:
    """firstGangPodCreatedAt: the first member the queue compares fixes the gang's time, so a
    member created later still goes before a plain pod created in between."""
    fw, g = framework()
    m1 = qpi(fw, member("m1"), 10)
    plain = qpi(fw, make_pod("plain"), 20)
    m2 = qpi(fw, member("m2"), 30)
    assert g.kubesched_queue_sort_less(m1, plain)  # fixes gang train at t=10
    assert g.kubesched_queue_sort_less(m2, plain)  # m2 has its gang's time, 10 < 20
    assert g.created_at == {"train": gang.creation_second(ts(10))}
    # in the same comparison the first argument's member is stored first (the design's order)
    fw2, g2 = framework()
    late, early = qpi(fw2, member("late", "x"), 30), qpi(fw2, member("early", "x"), 10)
    g2.kubesched_queue_sort_less(late, early)
    assert g2.created_at == {"x": gang.creation_second(ts(30))}


def test_sort_gangs_created_in_the_same_second_go_by_name() -> None:
    """creationTimestamp has second precision: gangs of one second go by name, whichever
    member compares."""
    fw, g = framework()
    b = qpi(fw, member("b-0", "b"), 5.2)
    a = qpi(fw, member("a-9", "a"), 5.7)
    assert g.kubesched_queue_sort_less(a, b)
    assert not g.kubesched_queue_sort_less(b, a)


def test_sort_equal_times_are_equal_unless_both_are_gangs() -> None:
    fw, g = framework()
    p1, p2 = qpi(fw, make_pod("p1"), 3), qpi(fw, make_pod("p2"), 3.5)
    m = qpi(fw, member("m"), 3)
    less = g.kubesched_queue_sort_less
    assert not less(p1, p2) and not less(p2, p1)
    assert not less(p1, m) and not less(m, p1)  # a plain pod and a gang of the same second
    no_time = QueuedPodInfo(PodInfo(add(fw, make_pod("none"))[0]), timestamp=0.0)
    assert less(no_time, p1)  # no creationTimestamp: Go's zero time, before everything


def test_queue_pops_gang_by_gang() -> None:
    """In the scheduling queue: members queued alternately leave it gang by gang; plain pods
    of the same second keep their arrival order (the queue's first-in, first-out tie)."""
    from kubesched.queue._scheduling_queue import SchedulingQueue

    fw, _ = framework()
    q = SchedulingQueue({"default-scheduler": fw}, now=lambda: 0.0)
    builders = [b for i in range(3) for b in (member(f"b-{i}", "b"), member(f"a-{i}", "a"))]
    builders += [make_pod("z-plain"), make_pod("plain")]
    pods = add(fw, *(b.creation_timestamp(ts(0)) for b in builders))
    later = add(fw, make_pod("later").creation_timestamp(ts(1)))
    for p in [*later, *pods]:
        q.add(p)
    order = []
    while (x := q.pop_nowait()) is not None:
        order.append(x.pod.metadata.name)
    assert order[-1] == "later"
    assert [n for n in order if n.startswith(("a-", "b-"))] == [
        "a-0",
        "a-1",
        "a-2",
        "b-0",
        "b-1",
        "b-2",
    ]
    assert order.index("z-plain") < order.index("plain")


# --- PreFilter -------------------------------------------------------------------------------


def test_pre_filter_ignores_pods_without_both_labels() -> None:
    fw, g = framework()
    plain, name_only, count_only = add(
        fw,
        make_pod("plain"),
        make_pod("n").label(GANG, "train"),
        make_pod("c").label(COUNT, "3"),
    )
    for p in (plain, name_only, count_only):
        assert g.kubesched_pre_filter(CycleState(), p, []) is None


@pytest.mark.parametrize(
    ("others", "want"),
    [
        pytest.param([], "short", id="alone"),
        pytest.param([member("t2"), member("t3")], None, id="three pending"),
        pytest.param(
            [member("t2").node("n1").phase("Running"), member("t3")], None, id="running counts"
        ),
        pytest.param([member("t2").node("n1"), member("t3")], None, id="bound, still Pending"),
        pytest.param(
            [member("t2").node("n1").phase("Succeeded"), member("t3")],
            "short",
            id="finished do not count",
        ),
        pytest.param(
            [member("t2").phase("Failed"), member("t3")], "short", id="failed do not count"
        ),
        pytest.param(
            [member("t2", ns="other"), member("t3", ns="other")], None, id="other namespace counts"
        ),
        pytest.param([member("t2", "else"), member("t3", "else")], "short", id="another gang"),
    ],
)
def test_pre_filter_counts_running_and_pending_by_phase(
    others: list[Any], want: str | None
) -> None:
    """``len(runningPods)+len(pendingPods) < availableCnt``: the gang's pods listed by label in
    every namespace, Running and Pending by phase (the pod itself is one of the pending)."""
    fw, g = framework()
    (t1,) = add(fw, member("t1"))
    add(fw, *others)
    st_ = g.kubesched_pre_filter(cycle_state(), t1, [])
    if want is None:
        assert st_ is None
    else:
        assert st_ is not None and st_.code == Code.UNSCHEDULABLE
        assert st_.message == "not enough available pod for gang train"


def test_pre_filter_short_gang_unresolvable_departure() -> None:
    fw, g = framework({"shortGangUnresolvable": True})
    (t1,) = add(fw, member("t1"))
    st_ = g.kubesched_pre_filter(cycle_state(), t1, [])
    assert st_ is not None and st_.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st_.message == "not enough available pod for gang train"


@pytest.mark.parametrize(
    ("count", "want"),
    [
        ("abc", 'strconv.Atoi: parsing "abc": invalid syntax'),
        ("1.5", 'strconv.Atoi: parsing "1.5": invalid syntax'),
        ("+", 'strconv.Atoi: parsing "+": invalid syntax'),
        ("3x", 'strconv.Atoi: parsing "3x": invalid syntax'),
        ("1_000", 'strconv.Atoi: parsing "1_000": invalid syntax'),
        (
            "99999999999999999999",
            'strconv.Atoi: parsing "99999999999999999999": value out of range',
        ),
        (
            "-9223372036854775809",
            'strconv.Atoi: parsing "-9223372036854775809": value out of range',
        ),
        ("+1", None),
        ("001", None),
        ("-4", None),
        ("0", None),
        ("9223372036854775807", "short"),
    ],
)
def test_pre_filter_parses_the_count_as_strconv_atoi(count: str, want: str | None) -> None:
    fw, g = framework()
    (t1,) = add(fw, member("t1", count=count))
    st_ = g.kubesched_pre_filter(cycle_state(), t1, [])
    if want is None:
        assert st_ is None
    elif want == "short":
        assert st_ is not None and st_.message == "not enough available pod for gang train"
    else:
        assert st_ is not None and st_.code == Code.ERROR and st_.message == want


def test_pre_filter_error_through_the_framework() -> None:
    """RunPreFilterPlugins wraps an Error: ``running PreFilter plugin "Gang": <err>``."""
    fw, _ = framework()
    (t1,) = add(fw, member("t1", count="abc"))
    _, st_, _ = fw.run_pre_filter_plugins(cycle_state(), t1, [])
    assert st_ is not None and st_.code == Code.ERROR
    assert (
        st_.message
        == 'running PreFilter plugin "Gang": strconv.Atoi: parsing "abc": invalid syntax'
    )


def test_custom_label_keys() -> None:
    fw, g = framework(
        {"groupNameLabel": "example.com/gang", "availableCountLabel": "example.com/min"}
    )
    (p,) = add(fw, make_pod("p").label("example.com/gang", "g").label("example.com/min", "2"))
    st_ = g.kubesched_pre_filter(cycle_state(), p, [])
    assert st_ is not None and st_.message == "not enough available pod for gang g"
    (q,) = add(fw, member("q"))  # the default keys mean nothing now
    assert g.kubesched_pre_filter(cycle_state(), q, []) is None


# --- Permit, Unreserve -----------------------------------------------------------------------


def reserve_and_permit(fw: Framework, pod: Any, node: str = "n1") -> Any:
    """What the scheduling cycle does after choosing ``node``: Reserve, then Permit."""
    state = cycle_state()
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
    assert st_.message == "waiting for pod count to reach availableCnt 3: 0 waiting, 0 running"
    assert dict(state.read(PODS_TO_ACTIVATE_KEY)) == {}  # the design activates no one

    assert reserve_and_permit(fw, t1).code == Code.WAIT
    assert reserve_and_permit(fw, t2, "n2").code == Code.WAIT
    assert set(fw.waiting_pods) == {t1.metadata.uid, t2.metadata.uid}
    assert reserve_and_permit(fw, t3, "n3") is None  # the third completes the gang
    assert [await fw.wait_on_permit(p) for p in (t1, t2)] == [None, None]
    assert fw.waiting_pods == {}
    assert g.permitted == {"train": {"default/t1", "default/t2", "default/t3"}}


@pytest.mark.anyio
async def test_permit_counts_as_the_design_logs() -> None:
    """Seed 002's first logged run, available-count 2 of 3: rcv2h waits ("0 waiting + 0
    permitted + 0 running + 1 < 2"), 9lzm6 allows both ("1 waiting + ... >= 2"), lwqgd passes
    on "0 waiting + 2 permitted + 0 running + 1"; then, once they run, on running alone."""
    fw, g = framework()
    rcv2h, nine, lwqgd = add(
        fw, member("rcv2h", count=2), member("9lzm6", count=2), member("lwqgd", count=2)
    )
    out = reserve_and_permit(fw, rcv2h)
    assert out.code == Code.WAIT
    assert reserve_and_permit(fw, nine, "n2") is None
    assert await fw.wait_on_permit(rcv2h) is None
    assert reserve_and_permit(fw, lwqgd, "n3") is None  # 2 permitted, not running
    # a permitted pod stays counted while it does not run, even when it is gone
    fw2, g2 = framework()
    a, b = add(fw2, member("a", count=3), member("b", count=3))
    g2.permitted["train"] = {"default/gone-1", "default/gone-2"}
    assert g2.kubesched_permit(cycle_state(), a, "n1") is None
    # running members count by phase
    fw3, g3 = framework()
    (c,) = add(fw3, member("c", count=3))
    add(
        fw3,
        member("r1", count=3).node("n1").phase("Running"),
        member("r2", count=3).node("n2").phase("Running"),
    )
    assert g3.kubesched_permit(cycle_state(), c, "n3") is None


@pytest.mark.anyio
async def test_permit_timeout_is_the_configured_wait() -> None:
    fw, _ = framework({"permitWaitingTimeSeconds": 5})
    t1, _, _ = add(fw, member("t1"), member("t2"), member("t3"))
    assert reserve_and_permit(fw, t1).code == Code.WAIT
    start = anyio.current_time()
    st_ = await fw.wait_on_permit(t1)
    assert anyio.current_time() - start == pytest.approx(5)
    assert st_ is not None and st_.code == Code.UNSCHEDULABLE and st_.plugin == "Gang"
    assert st_.message == "rejected due to timeout after waiting 5s at plugin Gang"


@pytest.mark.anyio
async def test_unreserve_rejects_waiting_members_and_marks_the_gang_rejected() -> None:
    fw, g = framework()
    t1, t2, t3, t4 = add(fw, *(member(f"t{i}", count=4) for i in range(1, 5)))
    for p in (t1, t2, t3):
        assert reserve_and_permit(fw, p).code == Code.WAIT
    # t1 times out first: its binding cycle unreserves it
    fw.waiting_pods.pop(t1.metadata.uid).reject("Gang", "timeout")
    await fw.run_reserve_plugins_unreserve(cycle_state(), t1, "n1")
    for p in (t2, t3):
        st_ = await fw.wait_on_permit(p)
        assert st_ is not None and st_.code == Code.UNSCHEDULABLE and st_.plugin == "Gang"
        assert st_.message == "gang's pod t1 is unreserved"
    assert g.rejected == {"train"}
    for hook in (g.kubesched_pre_filter, g.kubesched_permit):
        args = (
            (cycle_state(), t4, []) if hook == g.kubesched_pre_filter else (cycle_state(), t4, "n1")
        )
        st_ = hook(*args)  # type: ignore[operator]
        assert st_ is not None and st_.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st_.message == "gang train has been rejected"
    # the members unreserve in turn (idempotent), then go away: the mark stays
    for p in (t2, t3, t2):
        await fw.run_reserve_plugins_unreserve(cycle_state(), p, "n1")
    fw.handle.cluster.pods.clear()
    (t5,) = add(fw, member("t5", count=1))
    st_ = g.kubesched_pre_filter(cycle_state(), t5, [])
    assert st_ is not None and st_.message == "gang train has been rejected"


@pytest.mark.anyio
async def test_unreserve_leaves_other_gangs_alone() -> None:
    fw, g = framework()
    a1, _ = add(fw, member("a1", "a", 2), member("a2", "a", 2))
    b1, _ = add(fw, member("b1", "b", 2), member("b2", "b", 2))
    assert reserve_and_permit(fw, a1).code == Code.WAIT
    assert reserve_and_permit(fw, b1).code == Code.WAIT
    await fw.run_reserve_plugins_unreserve(cycle_state(), a1, "n1")
    wp = fw.get_waiting_pod(b1.metadata.uid)
    assert wp is not None and wp.get_pending_plugins() == ["Gang"] and not wp.released
    assert g.rejected == {"a"}


@pytest.mark.anyio
async def test_a_gang_is_its_name_in_every_namespace() -> None:
    """The design matches waiting pods by the label alone: a member in another namespace is
    allowed (and rejected) with the gang."""
    fw, g = framework()
    x, y = add(fw, member("x", count=2, ns="one"), member("y", count=2, ns="two"))
    assert reserve_and_permit(fw, x).code == Code.WAIT
    assert reserve_and_permit(fw, y, "n2") is None
    assert await fw.wait_on_permit(x) is None
    assert g.permitted == {"train": {"one/x", "two/y"}}


# --- CleanUp ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expiration", "first_permit", "cleared_at"),
    [(300, 0.0, 301.0), (300, 0.5, 301.0), (10, 2.0, 13.0)],
)
def test_clean_up_forgets_a_gang_at_the_first_pass_after_its_expiry(
    expiration: float, first_permit: float, cleared_at: float
) -> None:
    """CleanUp runs every second from the plugin's start (t=0 here) and drops a gang whose
    first member reached Permit more than gangExpirationSeconds before the pass: its rejection
    mark, its time and its permitted pods go; a new gang of the same name starts fresh."""
    clock = FakeHandle(clock=0.0)
    fw, g = framework({"gangExpirationSeconds": expiration}, clock)
    t1, t2, t3 = add(fw, member("t1"), member("t2"), member("t3"))
    g.kubesched_pre_filter(cycle_state(), t1, [])  # the plugin's clock starts (t=0)
    clock.clock = first_permit
    out = g.kubesched_permit(cycle_state(), t1, "n1")
    assert isinstance(out, tuple) and out[0].code == Code.WAIT
    g.kubesched_queue_sort_less(qpi(fw, member("t2"), 0), qpi(fw, make_pod("p"), 0))
    g.rejected.add("train")  # as Unreserve marks it
    g.permitted["train"] = {"default/t1"}
    clock.clock = cleared_at - 0.5
    st_ = g.kubesched_pre_filter(cycle_state(), t3, [])
    assert st_ is not None and st_.message == "gang train has been rejected"
    assert "train" in g.created_at
    clock.clock = cleared_at
    assert g.kubesched_pre_filter(cycle_state(), t3, []) is None
    assert g.rejected == set() and g.created_at == {} and g.permitted == {} and g.permitted_at == {}
    # the next member to reach Permit starts a new session
    clock.clock = cleared_at + 1
    g.kubesched_permit(cycle_state(), t2, "n2")
    assert g.permitted_at == {"train": cleared_at + 1}


def test_a_gang_rejected_before_any_permit_keeps_its_mark() -> None:
    """The design's CleanUp only looks at gangs with a first Permit time: a gang marked by an
    Unreserve before any member reached Permit stays rejected."""
    clock = FakeHandle(clock=0.0)
    fw, g = framework({"gangExpirationSeconds": 1}, clock)
    (t1,) = add(fw, member("t1", count=1))
    g.kubesched_unreserve(cycle_state(), t1, "n1")
    clock.clock = 1000
    st_ = g.kubesched_pre_filter(cycle_state(), t1, [])
    assert st_ is not None and st_.message == "gang train has been rejected"
