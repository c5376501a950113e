"""The in-memory fake cluster: store, watch fan-out, admission, kubelet and disruption-controller
emulation, fault injection.  Every test runs on both backends in virtual time."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import kubesched.transports
import kubesched.transports.fake
from kubesched import (
    Binding,
    ConfigError,
    ConflictError,
    Event,
    Node,
    NotFoundError,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
    UnavailableError,
    WatchEvent,
)
from kubesched.api._objects import (
    LabelSelector,
    LabelSelectorRequirement,
    ObjectMeta,
    ObjectReference,
    PodCondition,
    PodDisruptionBudgetStatus,
)
from kubesched.testing import make_node, make_pdb, make_pod, uid_for
from kubesched.transports.fake import EventRecord, FakeCluster, match_label_selector

pytestmark = pytest.mark.anyio


# --- helpers ---------------------------------------------------------------------------------


def binding(name: str, node: str, namespace: str = "default", uid: str = "") -> Binding:
    return Binding(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid),
        target=ObjectReference(kind="Node", name=node),
    )


def priority_class(
    name: str, value: int, *, global_default: bool = False, policy: str | None = None
) -> PriorityClass:
    return PriorityClass(
        metadata=ObjectMeta(name=name),
        value=value,
        global_default=global_default,
        preemption_policy=policy,
    )


async def next_event(watch: Any) -> WatchEvent:
    with anyio.fail_after(3600):
        ev: WatchEvent = await watch.__anext__()
    return ev


async def until_synced(watch: Any) -> list[WatchEvent]:
    out = []
    while (ev := await next_event(watch)).type != "SYNCED":
        out.append(ev)
    return out


def describe(ev: WatchEvent) -> tuple[str, str, str]:
    return ev.type, ev.obj.kind, ev.obj.metadata.name


async def bound_pod(cluster: FakeCluster, name: str, node: str = "n1", **kw: Any) -> Pod:
    pod = make_pod(name).req(cpu="100m").obj()
    for k, v in kw.items():
        setattr(pod.spec, k, v)
    cluster.create(pod)
    await cluster.bind(binding(name, node))
    got = cluster.get_pod("default", name)
    assert got is not None
    return got


# --- public face -----------------------------------------------------------------------------


def test_public_api() -> None:
    assert kubesched.transports.fake.__all__ == [
        "EventRecord",
        "FakeCluster",
        "Faults",
        "match_label_selector",
    ]
    assert kubesched.transports.__all__ == ["EventRecord", "FakeCluster", "Faults"]
    assert kubesched.transports.FakeCluster is FakeCluster


# --- time ------------------------------------------------------------------------------------


async def test_timestamps_follow_virtual_time() -> None:
    async with FakeCluster(epoch="2024-03-01T12:00:00Z") as cluster:
        assert cluster.elapsed() == 0.0
        assert cluster.timestamp() == "2024-03-01T12:00:00Z"
        await anyio.sleep(90.5)
        assert cluster.elapsed() == pytest.approx(90.5)
        assert cluster.timestamp() == "2024-03-01T12:01:30.500000Z"
        assert cluster.timestamp(29.5) == "2024-03-01T12:02:00Z"


def test_bad_epoch() -> None:
    with pytest.raises(ConfigError, match="epoch: invalid RFC 3339 time 'yesterday'"):
        FakeCluster(epoch="yesterday")


# --- store and watch -------------------------------------------------------------------------


async def test_watch_lists_by_kind_then_synced_then_changes() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("p1").obj())
        cluster.create(make_node("n1").obj())
        cluster.create(PodGroup(metadata=ObjectMeta(name="g")))
        cluster.create(make_pdb("pdb", match_labels={"app": "a"}, min_available=1))
        cluster.create(priority_class("high", 1000))
        cluster.create(make_node("n0").obj())
        watch = cluster.watch()
        listed = await until_synced(watch)
        assert [describe(ev) for ev in listed] == [
            ("ADDED", "PriorityClass", "high"),
            ("ADDED", "Node", "n1"),
            ("ADDED", "Node", "n0"),
            ("ADDED", "PodDisruptionBudget", "pdb"),
            ("ADDED", "PodGroup", "g"),
            ("ADDED", "Pod", "p1"),
        ]
        cluster.create(make_pod("p2").obj())
        node = make_node("n1").label("zone", "a").obj()
        cluster.update(node)
        cluster.delete_object(Node, "", "n0")
        assert describe(await next_event(watch)) == ("ADDED", "Pod", "p2")
        ev = await next_event(watch)
        assert describe(ev) == ("MODIFIED", "Node", "n1")
        assert ev.obj.metadata.labels["zone"] == "a"
        assert describe(await next_event(watch)) == ("DELETED", "Node", "n0")
        assert [n.metadata.name for n in cluster.nodes()] == ["n1"]
        assert [p.metadata.name for p in cluster.pods()] == ["p1", "p2"]
        assert [g.metadata.name for g in cluster.list("PodGroup")] == ["g"]


async def test_watch_fans_out_to_every_watcher() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        w1, w2 = cluster.watch(), cluster.watch()
        cluster.create(make_pod("p1").obj())
        await cluster.bind(binding("p1", "n1"))
        for w in (w1, w2):
            assert [describe(ev) for ev in await until_synced(w)] == [("ADDED", "Node", "n1")]
            assert describe(await next_event(w)) == ("ADDED", "Pod", "p1")
            assert describe(await next_event(w)) == ("MODIFIED", "Pod", "p1")
        # a late watcher lists the current state
        w3 = cluster.watch()
        listed = await until_synced(w3)
        assert [describe(ev) for ev in listed] == [("ADDED", "Node", "n1"), ("ADDED", "Pod", "p1")]
        assert listed[1].obj.spec.node_name == "n1"


async def test_abandoned_watch_is_forgotten() -> None:
    async with FakeCluster() as cluster:
        watch = cluster.watch()
        await watch.aclose()
        cluster.create(make_node("n1").obj())
        assert cluster._watchers == []
        cluster.watch()  # dropped on the floor: collected
        cluster.create(make_node("n2").obj())
        assert cluster._watchers == []


async def test_resource_version_is_monotonic() -> None:
    async with FakeCluster() as cluster:
        watch = cluster.watch()
        cluster.create(make_node("n1").obj())
        cluster.create(make_pod("p").obj())
        await cluster.patch_pod_status("default", "p", nominated_node_name="n1")
        await cluster.bind(binding("p", "n1"))
        await cluster.delete_pod("default", "p")
        await until_synced(watch)
        versions = []
        for _ in range(6):  # ADDED, ADDED, MODIFIED ×3, DELETED
            versions.append(int((await next_event(watch)).obj.metadata.resource_version))
        assert versions == sorted(versions)
        assert len(set(versions)) == 6
        assert cluster.resource_version == str(versions[-1])


async def test_create_conflict_update_not_found_and_stale_update() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        with pytest.raises(ConflictError, match='nodes "n1" already exists'):
            cluster.create(make_node("n1").obj())
        with pytest.raises(NotFoundError, match='nodes "n2" not found'):
            cluster.update(make_node("n2").obj())
        with pytest.raises(NotFoundError, match='pods "p" not found'):
            cluster.delete_object("Pod", "default", "p")
        stored = cluster.get(Node, "", "n1")
        stale = make_node("n1").obj()
        stale.metadata.resource_version = "0"
        with pytest.raises(ConflictError, match="the object has been modified"):
            cluster.update(stale)
        fresh = make_node("n1").label("x", "y").obj()
        fresh.metadata.resource_version = stored.metadata.resource_version
        assert cluster.update(fresh).metadata.labels["x"] == "y"


async def test_stored_objects_are_copies() -> None:
    async with FakeCluster() as cluster:
        pod = make_pod("p").obj()
        stored = cluster.create(pod)
        pod.metadata.labels = {"changed": "yes"}
        assert stored is not pod
        assert cluster.get_pod("default", "p").metadata.labels == {}


# --- pod admission ---------------------------------------------------------------------------


async def test_pod_admission_defaults() -> None:
    async with FakeCluster() as cluster:
        await anyio.sleep(5)
        pod = make_pod("p", namespace="").uid("").obj()
        stored = cluster.create(pod)
        assert stored.metadata.namespace == "default"
        assert stored.metadata.uid == uid_for("default", "p")
        assert stored.metadata.creation_timestamp == "2024-01-01T00:00:05Z"
        assert stored.spec.priority == 0
        assert stored.spec.preemption_policy == "PreemptLowerPriority"
        assert stored.status.phase == "Pending"
        assert stored.status.start_time is None


@pytest.mark.parametrize(
    ("classes", "class_name", "explicit", "priority", "policy", "class_after"),
    [
        pytest.param([], "", None, 0, "PreemptLowerPriority", "", id="no class: 0"),
        pytest.param(
            [("high", 1000, False, "Never")], "high", None, 1000, "Never", "high", id="named class"
        ),
        pytest.param(
            [("low", 5, False, None), ("default", 50, True, None)],
            "",
            None,
            50,
            "PreemptLowerPriority",
            "default",
            id="globalDefault class",
        ),
        pytest.param(
            [("default", 50, True, None), ("high", 1000, False, None)],
            "high",
            None,
            1000,
            "PreemptLowerPriority",
            "high",
            id="named class wins over globalDefault",
        ),
        pytest.param(
            [("high", 1000, False, None)],
            "high",
            1000,
            1000,
            "PreemptLowerPriority",
            "high",
            # one that disagrees is refused (plugin/pkg/admission/priority; tests/core/test_validation_round2.py)
            id="explicit spec.priority agreeing with its class kept",
        ),
        pytest.param(
            [], "system-node-critical", None, 2000001000, "PreemptLowerPriority",
            "system-node-critical", id="built-in system class",
        ),
    ],
)  # fmt: skip
async def test_priority_admission(
    classes: list[tuple[str, int, bool, str | None]],
    class_name: str,
    explicit: int | None,
    priority: int,
    policy: str,
    class_after: str,
) -> None:
    async with FakeCluster() as cluster:
        for name, value, default, pc_policy in classes:
            cluster.create(priority_class(name, value, global_default=default, policy=pc_policy))
        pod = make_pod("p").obj()
        pod.spec.priority_class_name = class_name
        pod.spec.priority = explicit
        stored = cluster.create(pod)
        assert stored.spec.priority == priority
        assert stored.spec.preemption_policy == policy
        assert stored.spec.priority_class_name == class_after


async def test_unknown_priority_class_is_an_error() -> None:
    async with FakeCluster() as cluster:
        pod = make_pod("p").obj()
        pod.spec.priority_class_name = "missing"
        with pytest.raises(ConfigError) as info:
            cluster.create(pod)
        assert (
            str(info.value)
            == "spec.priorityClassName: no PriorityClass with name missing was found"
        )
        assert info.value.field == "spec.priorityClassName"
        assert cluster.pods() == []


async def test_pod_created_on_a_node_is_running() -> None:
    async with FakeCluster() as cluster:
        await anyio.sleep(10)
        a = cluster.create(make_pod("a").node("n1").obj())
        b = cluster.create(make_pod("b").node("n1").start_time("2023-12-31T23:00:00Z").obj())
        assert a.status.phase == "Running"
        assert a.status.start_time == "2024-01-01T00:00:10Z"
        assert [(c.type, c.status) for c in a.status.conditions] == [
            ("PodScheduled", "True"), ("Initialized", "True"), ("Ready", "True"), ("ContainersReady", "True")
        ]  # the kubelet started it: no readiness probe, Ready at once
        assert b.status.start_time == "2023-12-31T23:00:00Z"


# --- bind ------------------------------------------------------------------------------------


async def test_bind_starts_the_pod_in_one_event() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        cluster.create(
            make_pod("p")
            .nominated_node("n1")
            .condition("PodScheduled", "False", "Unschedulable")
            .obj()
        )
        watch = cluster.watch()
        await until_synced(watch)
        await anyio.sleep(3)
        await cluster.bind(binding("p", "n1", uid=uid_for("default", "p")))
        ev = await next_event(watch)
        pod = ev.obj
        assert ev.type == "MODIFIED"
        assert pod.spec.node_name == "n1"
        assert pod.status.phase == "Running"
        assert pod.status.start_time == "2024-01-01T00:00:03Z"
        assert pod.status.nominated_node_name == ""
        assert pod.status.conditions == [
            PodCondition(type=t, status="True", last_transition_time="2024-01-01T00:00:03Z")
            for t in ("PodScheduled", "Initialized", "Ready", "ContainersReady")
        ]
        assert cluster.get_pod("default", "p") is pod
        with anyio.move_on_after(1):  # nothing else was emitted
            await next_event(watch)
            pytest.fail("more than one event for a bind")


async def test_bind_keeps_nomination_without_the_feature_gate() -> None:
    async with FakeCluster(clear_nominated_node_name_on_binding=False) as cluster:
        cluster.create(make_pod("p").nominated_node("n1").obj())
        await cluster.bind(binding("p", "n1"))
        assert cluster.get_pod("default", "p").status.nominated_node_name == "n1"


async def test_bind_errors() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("p").obj())
        with pytest.raises(NotFoundError, match='pods "q" not found'):
            await cluster.bind(binding("q", "n1"))
        with pytest.raises(ConflictError, match="Precondition failed: UID in precondition: other"):
            await cluster.bind(binding("p", "n1", uid="other"))
        await cluster.bind(binding("p", "n1"))
        with pytest.raises(ConflictError) as info:
            await cluster.bind(binding("p", "n2"))
        assert str(info.value) == 'pod p is already assigned to node "n1"'
        assert cluster.get_pod("default", "p").spec.node_name == "n1"


# --- patch status ----------------------------------------------------------------------------


async def test_patch_pod_status_merges_conditions_by_type() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("p").condition("Ready", "False").obj())
        watch = cluster.watch()
        await until_synced(watch)
        unsched = PodCondition(
            type="PodScheduled", status="False", reason="Unschedulable", message="0/1"
        )
        await cluster.patch_pod_status("default", "p", condition=unsched, nominated_node_name="n1")
        pod = (await next_event(watch)).obj
        assert pod.status.nominated_node_name == "n1"
        assert [(c.type, c.status, c.last_transition_time) for c in pod.status.conditions] == [
            ("Ready", "False", None),
            ("PodScheduled", "False", "2024-01-01T00:00:00Z"),
        ]
        # same status, new message: replaced, lastTransitionTime kept
        await anyio.sleep(10)
        unsched2 = PodCondition(
            type="PodScheduled", status="False", reason="Unschedulable", message="0/2"
        )
        await cluster.patch_pod_status("default", "p", condition=unsched2)
        cond = (await next_event(watch)).obj.status.conditions[1]
        assert (cond.message, cond.last_transition_time) == ("0/2", "2024-01-01T00:00:00Z")
        # a status change moves lastTransitionTime
        await anyio.sleep(10)
        target = PodCondition(
            type="DisruptionTarget", status="True", reason="PreemptionByScheduler"
        )
        await cluster.patch_pod_status("default", "p", condition=target, nominated_node_name="")
        pod = (await next_event(watch)).obj
        assert pod.status.nominated_node_name == ""
        assert pod.status.conditions[2].last_transition_time == "2024-01-01T00:00:20Z"
        # a patch that changes nothing writes nothing
        rv = cluster.resource_version
        await cluster.patch_pod_status("default", "p", condition=target)
        assert cluster.resource_version == rv
        with pytest.raises(NotFoundError):
            await cluster.patch_pod_status("default", "missing", nominated_node_name="")


# --- delete ----------------------------------------------------------------------------------


async def test_bound_pod_terminates_after_its_grace_period() -> None:
    async with FakeCluster() as cluster:
        await bound_pod(cluster, "p")
        watch = cluster.watch()
        await until_synced(watch)
        await anyio.sleep(5)
        await cluster.delete_pod("default", "p", uid=uid_for("default", "p"))
        ev = await next_event(watch)
        assert ev.type == "MODIFIED"
        assert ev.obj.metadata.deletion_timestamp == "2024-01-01T00:00:35Z"
        assert ev.obj.metadata.deletion_grace_period_seconds == 30
        assert cluster.pending_terminations() == 1
        assert cluster.next_termination_time() == pytest.approx(anyio.current_time() + 30)
        # deleting again does nothing
        await cluster.delete_pod("default", "p")
        t0 = cluster.elapsed()
        ev = await next_event(watch)
        assert describe(ev) == ("DELETED", "Pod", "p")
        assert cluster.elapsed() - t0 == pytest.approx(30)
        assert cluster.get_pod("default", "p") is None
        assert cluster.pending_terminations() == 0
        assert cluster.next_termination_time() is None


async def test_terminations_end_in_deadline_order() -> None:
    async with FakeCluster(default_grace_seconds=20) as cluster:
        await bound_pod(cluster, "a")
        await bound_pod(cluster, "b", termination_grace_period_seconds=5)
        await bound_pod(cluster, "c")
        watch = cluster.watch()
        await until_synced(watch)
        for name in ("a", "b", "c"):
            await cluster.delete_pod("default", name)
        for _ in range(3):
            assert (await next_event(watch)).type == "MODIFIED"
        assert cluster.pending_terminations() == 3
        gone = []
        for _ in range(3):
            ev = await next_event(watch)
            gone.append((ev.type, ev.obj.metadata.name, cluster.elapsed()))
        assert gone == [("DELETED", "b", 5.0), ("DELETED", "a", 20.0), ("DELETED", "c", 20.0)]


async def test_unbound_pod_and_zero_grace_are_deleted_at_once() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("pending").obj())
        await bound_pod(cluster, "quick", termination_grace_period_seconds=0)
        watch = cluster.watch()
        await until_synced(watch)
        await cluster.delete_pod("default", "pending")
        await cluster.delete_pod("default", "quick")
        assert describe(await next_event(watch)) == ("DELETED", "Pod", "pending")
        assert describe(await next_event(watch)) == ("DELETED", "Pod", "quick")
        assert cluster.elapsed() == 0
        assert cluster.pods() == []


async def test_delete_errors() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("p").obj())
        with pytest.raises(NotFoundError, match='pods "q" not found'):
            await cluster.delete_pod("default", "q")
        with pytest.raises(ConflictError, match="Precondition failed: UID in precondition: stale"):
            await cluster.delete_pod("default", "p", uid="stale")
        assert cluster.get_pod("default", "p") is not None


async def test_forced_deletion_cancels_the_termination() -> None:
    async with FakeCluster() as cluster:
        await bound_pod(cluster, "p")
        await cluster.delete_pod("default", "p")
        cluster.delete_object("Pod", "default", "p")
        assert cluster.pending_terminations() == 0
        cluster.create(make_pod("p").node("n1").obj())  # a new pod with the same name
        await anyio.sleep(60)
        assert cluster.get_pod("default", "p") is not None


# --- events ----------------------------------------------------------------------------------


async def test_record_event_keeps_time_and_order() -> None:
    async with FakeCluster() as cluster:
        ev = Event(
            reason="Scheduled",
            regarding=ObjectReference(kind="Pod", namespace="default", name="p"),
            note="Successfully assigned default/p to n1",
        )
        await cluster.record_event(ev)
        await anyio.sleep(2.5)
        await cluster.record_event(
            Event(
                type="Warning",
                reason="FailedScheduling",
                regarding=ObjectReference(kind="Pod", namespace="ns", name="q"),
                note="0/1 nodes are available: 1 Insufficient cpu.",
            )
        )
        assert cluster.events == [
            EventRecord(
                0.0, "Normal", "Scheduled", "default/p", "Successfully assigned default/p to n1"
            ),
            EventRecord(
                2.5,
                "Warning",
                "FailedScheduling",
                "ns/q",
                "0/1 nodes are available: 1 Insufficient cpu.",
            ),
        ]


# --- PDB status (disruption controller) ------------------------------------------------------


def pdb_numbers(status: PodDisruptionBudgetStatus | None) -> tuple[int, int, int, int]:
    assert status is not None
    return (
        status.expected_pods,
        status.current_healthy,
        status.desired_healthy,
        status.disruptions_allowed,
    )


@pytest.mark.parametrize(
    ("min_available", "max_unavailable", "expected"),
    [
        # 4 matching pods, 3 running (1 pending), 1 terminating (not counted), 1 other label
        pytest.param(2, None, (4, 3, 2, 1), id="minAvailable int"),
        pytest.param(5, None, (4, 3, 5, 0), id="minAvailable above healthy: 0 allowed"),
        pytest.param("50%", None, (4, 3, 2, 1), id="minAvailable percent"),
        pytest.param("30%", None, (4, 3, 2, 1), id="minAvailable percent rounds up"),
        pytest.param(None, 1, (4, 3, 3, 0), id="maxUnavailable int"),
        pytest.param(None, "50%", (4, 3, 2, 1), id="maxUnavailable percent"),
        pytest.param(None, "10%", (4, 3, 3, 0), id="maxUnavailable percent rounds up"),
        pytest.param(None, 9, (4, 3, 0, 3), id="maxUnavailable above expected"),
        pytest.param("two", None, (4, 3, 0, 0), id="invalid value: fail safe"),
    ],
)
async def test_pdb_status_is_computed(
    min_available: int | str | None, max_unavailable: int | str | None, expected: tuple[int, ...]
) -> None:
    async with FakeCluster() as cluster:
        for name in ("r1", "r2", "r3", "gone"):
            cluster.create(make_pod(name).label("app", "web").node("n1").obj())
        cluster.create(make_pod("pending").label("app", "web").obj())
        cluster.create(make_pod("other").label("app", "db").node("n1").obj())
        cluster.create(make_pod("elsewhere", namespace="ns2").label("app", "web").node("n1").obj())
        await cluster.delete_pod("default", "gone")
        pdb = make_pdb(
            "pdb",
            match_labels={"app": "web"},
            min_available=min_available,
            max_unavailable=max_unavailable,
        )
        stored = cluster.create(pdb)
        assert pdb_numbers(stored.status) == expected
        assert stored.status.disrupted_pods == {}
        assert stored.status.observed_generation == 1


async def test_pdb_status_follows_pods() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pdb("pdb", match_labels={"app": "web"}, min_available=1))
        watch = cluster.watch()
        await until_synced(watch)

        async def changes() -> list[tuple[str, str, str, tuple[int, ...] | None]]:
            out = []
            with anyio.move_on_after(1):
                while True:
                    ev = await next_event(watch)
                    numbers = (
                        pdb_numbers(ev.obj.status) if ev.obj.kind == "PodDisruptionBudget" else None
                    )
                    out.append((*describe(ev), numbers))
            return out

        cluster.create(make_pod("a").label("app", "web").obj())
        cluster.create(make_pod("b").label("app", "web").obj())
        assert await changes() == [
            ("ADDED", "Pod", "a", None),
            ("MODIFIED", "PodDisruptionBudget", "pdb", (1, 0, 1, 0)),
            ("ADDED", "Pod", "b", None),
            ("MODIFIED", "PodDisruptionBudget", "pdb", (2, 0, 1, 0)),
        ]
        await cluster.bind(binding("a", "n1"))
        await cluster.bind(binding("b", "n1"))
        assert await changes() == [
            ("MODIFIED", "Pod", "a", None),
            ("MODIFIED", "PodDisruptionBudget", "pdb", (2, 1, 1, 0)),
            ("MODIFIED", "Pod", "b", None),
            ("MODIFIED", "PodDisruptionBudget", "pdb", (2, 2, 1, 1)),
        ]
        # an unrelated pod changes nothing; a terminating pod stops counting at once
        cluster.create(make_pod("c").label("app", "db").obj())
        await cluster.delete_pod("default", "b")
        assert await changes() == [
            ("ADDED", "Pod", "c", None),
            ("MODIFIED", "Pod", "b", None),
            ("MODIFIED", "PodDisruptionBudget", "pdb", (1, 1, 1, 0)),
        ]
        await anyio.sleep(30)
        assert await changes() == [("DELETED", "Pod", "b", None)]


async def test_pdb_given_status_is_kept() -> None:
    async with FakeCluster() as cluster:
        pdb = make_pdb("pdb", match_labels={"app": "web"}, min_available=0, disruptions_allowed=0)
        cluster.create(pdb)
        cluster.create(make_pod("a").label("app", "web").node("n1").obj())
        stored = cluster.get(PodDisruptionBudget, "default", "pdb")
        assert pdb_numbers(stored.status) == (0, 0, 0, 0)


async def test_pdb_update_recomputes() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("a").label("app", "web").node("n1").obj())
        cluster.create(make_pdb("pdb", match_labels={"app": "web"}, min_available=1))
        updated = cluster.update(make_pdb("pdb", match_labels={"app": "web"}, min_available=0))
        assert pdb_numbers(updated.status) == (1, 1, 0, 1)
        assert updated.metadata.generation == 2
        assert updated.status.observed_generation == 2


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        pytest.param(None, {"a": "1"}, False, id="nil selector matches nothing"),
        pytest.param(LabelSelector(), {"a": "1"}, True, id="empty selector matches all"),
        pytest.param(LabelSelector(match_labels={"a": "1"}), {"a": "1", "b": "2"}, True, id="matchLabels"),
        pytest.param(LabelSelector(match_labels={"a": "1"}), {"a": "2"}, False, id="matchLabels value"),
        pytest.param(LabelSelector(match_expressions=[LabelSelectorRequirement(key="a", operator="In", values=["1", "2"])]), {"a": "2"}, True, id="In"),
        pytest.param(LabelSelector(match_expressions=[LabelSelectorRequirement(key="a", operator="In", values=["1"])]), {}, False, id="In, key missing"),
        pytest.param(LabelSelector(match_expressions=[LabelSelectorRequirement(key="a", operator="NotIn", values=["1"])]), {}, True, id="NotIn, key missing"),
        pytest.param(LabelSelector(match_expressions=[LabelSelectorRequirement(key="a", operator="NotIn", values=["1"])]), {"a": "1"}, False, id="NotIn"),
        pytest.param(LabelSelector(match_expressions=[LabelSelectorRequirement(key="a", operator="Exists")]), {"a": ""}, True, id="Exists"),
        pytest.param(LabelSelector(match_expressions=[LabelSelectorRequirement(key="a", operator="DoesNotExist")]), {"a": ""}, False, id="DoesNotExist"),
        pytest.param(LabelSelector(match_labels={"b": "2"}, match_expressions=[LabelSelectorRequirement(key="a", operator="Exists")]), {"a": "1"}, False, id="labels and expressions ANDed"),
        pytest.param(LabelSelector(match_expressions=[LabelSelectorRequirement(key="a", operator="Gt", values=["1"])]), {"a": "2"}, False, id="unknown operator"),
    ],
)  # fmt: skip
def test_match_label_selector(
    selector: LabelSelector | None, labels: dict[str, str], matches: bool
) -> None:
    assert match_label_selector(selector, labels) is matches


# --- fault injection -------------------------------------------------------------------------


async def test_fail_next() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("p").obj())
        cluster.faults.fail_next("bind", UnavailableError("apiserver down"), times=2)
        cluster.faults.fail_next("record_event", ConflictError)
        for _ in range(2):
            with pytest.raises(UnavailableError, match="apiserver down"):
                await cluster.bind(binding("p", "n1"))
        assert cluster.get_pod("default", "p").spec.node_name == ""
        await cluster.bind(binding("p", "n1"))
        assert cluster.get_pod("default", "p").spec.node_name == "n1"
        with pytest.raises(ConflictError, match="injected record_event failure"):
            await cluster.record_event(Event(reason="x"))
        assert cluster.events == []
        with pytest.raises(ValueError, match="unknown verb 'create'"):
            cluster.faults.fail_next("create", ConflictError)


async def test_delay() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("p").obj())
        cluster.create(make_pod("q").obj())
        cluster.faults.delay("bind", 2.5)
        watch = cluster.watch()
        await until_synced(watch)
        async with anyio.create_task_group() as tg:
            tg.start_soon(cluster.bind, binding("p", "n1"))
            tg.start_soon(cluster.bind, binding("q", "n1"))
            await anyio.sleep(1)
            assert cluster.get_pod("default", "p").spec.node_name == ""
        assert cluster.elapsed() == pytest.approx(2.5)
        assert {p.spec.node_name for p in cluster.pods()} == {"n1"}
        cluster.faults.delay("bind", 0)
        cluster.create(make_pod("r").obj())
        await cluster.bind(binding("r", "n1"))
        assert cluster.elapsed() == pytest.approx(2.5)


async def test_delayed_failure_fails_after_the_delay() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("p").node("n1").obj())
        cluster.faults.delay("delete_pod", 4)
        cluster.faults.fail_next("delete_pod", UnavailableError("timeout"))
        with pytest.raises(UnavailableError):
            await cluster.delete_pod("default", "p")
        assert cluster.elapsed() == pytest.approx(4)
        cluster.faults.clear()
        await cluster.delete_pod("default", "p")
        assert cluster.elapsed() == pytest.approx(4)


async def test_drop_watches_forces_a_relist() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        w1, w2 = cluster.watch(), cluster.watch()
        await until_synced(w1)
        cluster.create(make_pod("p").obj())
        cluster.faults.drop_watches()
        cluster.create(make_pod("q").obj())
        for w in (w1, w2):
            with pytest.raises(UnavailableError, match="watch connection dropped"):
                await next_event(w)
        again = cluster.watch()
        listed = await until_synced(again)
        assert [describe(ev) for ev in listed] == [
            ("ADDED", "Node", "n1"),
            ("ADDED", "Pod", "p"),
            ("ADDED", "Pod", "q"),
        ]
        cluster.create(make_pod("r").obj())
        assert describe(await next_event(again)) == ("ADDED", "Pod", "r")


# --- closing ---------------------------------------------------------------------------------


async def test_closing_ends_watches_and_writes() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("p").obj())
        watch = cluster.watch()
        received = []

        async def consume() -> None:
            async for ev in watch:
                received.append(ev.type)

        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await anyio.sleep(1)
            await cluster.aclose()
        assert received == ["ADDED", "SYNCED"]
        with pytest.raises(UnavailableError, match="the fake cluster is closed"):
            await cluster.bind(binding("p", "n1"))
        assert [ev.type async for ev in cluster.watch()] == ["ADDED", "SYNCED"]


async def test_leaving_the_context_cancels_pending_terminations() -> None:
    async with FakeCluster() as cluster:
        await bound_pod(cluster, "p")
        await cluster.delete_pod("default", "p")
    assert cluster.elapsed() == 0
    assert cluster.pending_terminations() == 1


async def test_is_a_transport() -> None:
    from kubesched import Transport

    async with FakeCluster() as cluster:
        assert isinstance(cluster, Transport)
        assert isinstance(cluster.get(PriorityClass, "", "none"), type(None))
