"""Gang scheduling end to end, through ``simulate``: the seed's two scenarios, a gang that cannot
fit, two gangs competing, and the all-or-nothing invariant as a property (issue 3, items 4-5)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched._config import parse_config
from kubesched.cli.manifests import load_manifests
from kubesched.cli.simulate import SimulationResult, simulate
from kubesched.plugins import gang

pytestmark = pytest.mark.anyio

GANG = gang.DEFAULT_GROUP_NAME_LABEL
COUNT = gang.DEFAULT_AVAILABLE_COUNT_LABEL
HOSTNAME = "kubernetes.io/hostname"


# --- inputs ----------------------------------------------------------------------------------


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod(
    name: str,
    group: str | None = None,
    count: int | None = None,
    *,
    cpu: str = "1",
    ns: str = "default",
    priority: int | None = None,
    arrival: str | None = None,
    anti_affinity: bool = False,
    preempt: bool = True,
) -> dict[str, Any]:
    labels = {}
    if group is not None:
        labels = {GANG: group, COUNT: str(count)}
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels}
    if arrival:
        meta["annotations"] = {"kubesched.io/arrival": arrival}
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]
    }
    if priority is not None:
        spec["priority"] = priority
    if not preempt:
        spec["preemptionPolicy"] = "Never"
    if anti_affinity:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {GANG: group}}, "topologyKey": HOSTNAME}
                ]
            }
        }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def config(wait: float | None = None) -> Any:
    """A profile with Gang on, as the demo does: multiPoint, and the queueSort plugin."""
    prof: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {
            "multiPoint": {"enabled": [{"name": "Gang"}]},
            "queueSort": {"enabled": [{"name": "Gang"}], "disabled": [{"name": "PrioritySort"}]},
        },
    }
    if wait is not None:
        prof["pluginConfig"] = [{"name": "Gang", "args": {"permitWaitingTimeSeconds": wait}}]
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [prof],
        }
    )


async def run(
    docs: list[dict[str, Any]],
    *,
    wait: float | None = None,
    until: float = 3600.0,
    registry: Any = None,
) -> SimulationResult:
    text = "\n---\n".join(json.dumps(d) for d in docs)
    manifests = load_manifests(["gang.yaml"], texts={"gang.yaml": text})
    return await simulate(manifests, config(wait), until=until, registry=registry)


def placements(result: SimulationResult) -> dict[str, str | None]:
    return {r.pod.metadata.name: r.pod.spec.node_name or None for r in result.pods}


def events(result: SimulationResult, reason: str) -> list[dict[str, Any]]:
    return [e for e in result.events if e["reason"] == reason]


def scheduled(result: SimulationResult) -> set[str]:
    return {e["object"].split("/", 1)[1] for e in events(result, "Scheduled")}


# --- the seed's scenarios --------------------------------------------------------------------


async def test_seed_three_replicas_available_count_two_all_run() -> None:
    """Seed scenario 1: three replicas, available-count 2, three workers: all three run."""
    docs = [node("worker-1"), node("worker-2"), node("worker-3")]
    docs += [pod(f"job-{i}", "job", 2) for i in range(3)]
    result = await run(docs)
    where = placements(result)
    assert all(where[f"job-{i}"] for i in range(3)), where
    assert scheduled(result) == {"job-0", "job-1", "job-2"}
    assert {e["time"] for e in events(result, "Scheduled")} == {0.0}
    assert events(result, "FailedScheduling") == []
    assert all(r.pod.status.phase == "Running" for r in result.pods)


async def test_seed_four_replicas_with_hostname_anti_affinity_stay_pending() -> None:
    """Seed scenario 2: four replicas that must not share a host, three workers: none is bound.

    Real required pod anti-affinity (InterPodAffinity, in the default profile).  Three members
    reserve a node each and wait at Permit; the fourth fits nowhere.  After the Permit wait (1m)
    the waiting members are released and the cycle repeats: no member is ever bound.
    """
    docs = [node("worker-1"), node("worker-2"), node("worker-3")]
    docs += [pod(f"job-{i}", "job", 4, anti_affinity=True) for i in range(4)]
    result = await run(docs, until=200.0)
    assert placements(result) == {f"job-{i}": None for i in range(4)}
    assert events(result, "Scheduled") == []
    assert result.summary["scheduled"] == 0 and result.summary["pending"] == 4
    failures = events(result, "FailedScheduling")
    assert failures[0]["time"] == 0.0
    # Every member has priority 0: no victims.  framework.FitError.Error() (upstream
    # pkg/scheduler/framework/types.go, v1.28+) appends the PostFilter message with " %v".
    fits_nowhere = (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: "
        "0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )
    # a member rejected while waiting at Permit fails in its binding cycle: a FitError of one node
    timeout = (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin Gang."
    )
    assert failures[0]["message"] == fits_nowhere
    assert {e["message"] for e in failures} == {fits_nowhere, timeout}
    # the three waiting members time out together and are released together (whichever
    # timer the event loop runs first, each is told it timed out); one of them fails anew
    released = [(e["time"], e["object"]) for e in failures if e["message"] == timeout]
    assert released[:3] == [(60.0, f"default/job-{i}") for i in range(3)]
    assert {t for t, _ in released} == {60.0, 120.0, 180.0}


# --- a gang that cannot fully fit ------------------------------------------------------------


async def test_gang_that_cannot_fit_waits_times_out_and_releases_its_nodes() -> None:
    """Three 1-CPU members, two 1-CPU nodes: two members hold a node each at Permit for
    permitWaitingTimeSeconds (10 s), then time out and give both nodes back; a 1-CPU pod of
    higher priority that found no room at 5 s (and may not preempt) gets one of them at once."""
    docs = [node("n1", cpu="1"), node("n2", cpu="1")]
    docs += [pod(f"m-{i}", "big", 3) for i in range(3)]
    docs += [pod("urgent", priority=1000, arrival="5s", preempt=False)]
    result = await run(docs, wait=10, until=120)
    failed = events(result, "FailedScheduling")
    assert [(e["time"], e["object"]) for e in failed if e["time"] < 10] == [
        (0.0, "default/m-2"),
        (5.0, "default/urgent"),
    ]
    # FitError.Error() (upstream pkg/scheduler/framework/types.go, v1.28+) appends the
    # PostFilter message with " %v", no period of its own: DefaultPreemption's message is a
    # FitError text or PodEligibleToPreemptOthers' "not eligible due to preemptionPolicy=Never.",
    # each with its own one.
    no_victims = (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    never = (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never."
    )
    timeout = "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Gang."
    assert failed[0]["message"] == no_victims
    assert failed[1]["message"] == never
    assert {e["message"] for e in failed} == {no_victims, never, timeout}
    released = [(e["time"], e["object"]) for e in failed if e["message"] == timeout]
    assert released[:2] == [(10.0, "default/m-0"), (10.0, "default/m-1")]
    # what the gang reserved is free again: the urgent pod binds as soon as it is released
    (urgent,) = events(result, "Scheduled")
    assert urgent["object"] == "default/urgent" and 10.0 <= urgent["time"] <= 12.0
    where = placements(result)
    assert where["m-0"] is None and where["m-1"] is None and where["m-2"] is None
    assert result.summary["scheduled"] == 1


async def test_gang_members_arriving_late_are_waited_for() -> None:
    """Members that exist before the gang is complete are turned away at PreFilter (holding no
    node); the last member, arriving at 30 s, waits at Permit and activates them: all bind at 30 s."""
    docs = [node("n1"), node("n2")]
    docs += [pod("a-0", "a", 3), pod("a-1", "a", 3), pod("a-2", "a", 3, arrival="30s")]
    result = await run(docs)
    assert scheduled(result) == {"a-0", "a-1", "a-2"}
    assert {e["time"] for e in events(result, "Scheduled")} == {30.0}
    failed = events(result, "FailedScheduling")
    assert [(e["time"], e["object"]) for e in failed] == [
        (0.0, "default/a-0"),
        (0.0, "default/a-1"),
    ]
    assert failed[0]["message"] == (
        "0/2 nodes are available: gang default/a has 2 pending and 0 running member(s), "
        "fewer than its available-count 3. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )


# --- competing gangs -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wait", [pytest.param(None, id="default wait"), pytest.param(5, id="short wait")]
)
async def test_two_gangs_competing_for_the_same_nodes_never_both_partially_bound(
    wait: float | None,
) -> None:
    """Six 1-CPU slots, two gangs of four 1-CPU members: one gang runs whole, the other not at all."""
    docs = [node("n1", cpu="2"), node("n2", cpu="2"), node("n3", cpu="2")]
    docs += [pod(f"a-{i}", "a", 4) for i in range(4)]
    docs += [pod(f"b-{i}", "b", 4) for i in range(4)]
    result = await run(docs, wait=wait, until=300)
    bound = scheduled(result)
    a = {n for n in bound if n.startswith("a-")}
    b = {n for n in bound if n.startswith("b-")}
    assert (len(a), len(b)) in ((4, 0), (0, 4)), bound
    assert_all_or_nothing(result, {"a": 4, "b": 4})


async def test_interleaved_gangs_are_each_all_or_nothing() -> None:
    """Members of two gangs listed alternately: both fit, both run whole."""
    docs = [node("n1", cpu="3"), node("n2", cpu="3")]
    docs += [p for i in range(3) for p in (pod(f"a-{i}", "a", 3), pod(f"b-{i}", "b", 3))]
    result = await run(docs, until=300)
    assert scheduled(result) == {"a-0", "a-1", "a-2", "b-0", "b-1", "b-2"}
    assert events(result, "FailedScheduling") == []
    assert_all_or_nothing(result, {"a": 3, "b": 3}, {"a": 3, "b": 3})


# --- the invariant ---------------------------------------------------------------------------


def assert_all_or_nothing(
    result: SimulationResult, counts: dict[str, int], sizes: dict[str, int] | None = None
) -> None:
    """At every instant of the event log, each gang has 0 or at least available-count members
    bound, and no member was ever deleted; a gang whose count is its size ends all-or-nothing."""
    gang_of = {
        r.pod.metadata.name: r.pod.metadata.labels[GANG]
        for r in result.pods
        if GANG in r.pod.metadata.labels
    }
    by_time: dict[float, list[str]] = defaultdict(list)
    for e in events(result, "Scheduled"):
        name = e["object"].split("/", 1)[1]
        if name in gang_of:
            by_time[e["time"]].append(name)
    bound: dict[str, int] = defaultdict(int)
    for t in sorted(by_time):
        for name in by_time[t]:
            bound[gang_of[name]] += 1
        for g, n in bound.items():
            assert n == 0 or n >= counts[g], f"at {t}s gang {g} has {n} of {counts[g]} bound"
    assert not any(r.deleted for r in result.pods)
    final: dict[str, int] = defaultdict(int)
    for r in result.pods:
        if r.pod.metadata.name in gang_of and r.pod.spec.node_name:
            final[gang_of[r.pod.metadata.name]] += 1
    for g, n in final.items():
        assert n == bound[g]  # every bound member has its Scheduled event
        if sizes is not None and counts[g] == sizes[g]:
            assert n in (0, sizes[g]), f"gang {g}: {n} of {sizes[g]} bound"


_gang = st.tuples(
    st.integers(1, 4), st.integers(0, 3), st.integers(1, 2), st.sampled_from([None, "7s"])
)
"""(size, count slack, cpu per member, arrival of the last member)."""


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    gangs=st.lists(_gang, min_size=1, max_size=3),
    nodes=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    plain=st.integers(0, 2),
    wait=st.sampled_from([3, 10]),
)
async def test_property_a_gang_is_all_or_nothing(
    gangs: list[tuple[int, int, int, str | None]], nodes: list[int], plain: int, wait: int
) -> None:
    docs = [node(f"n{i}", cpu=str(c)) for i, c in enumerate(nodes)]
    counts: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for gi, (size, slack, cpu, late) in enumerate(gangs):
        g = f"g{gi}"
        count = max(1, size - slack) if slack < 2 else size  # mostly count == size
        counts[g], sizes[g] = count, size
        for i in range(size):
            arrival = late if i == size - 1 else None
            docs.append(pod(f"{g}-{i}", g, count, cpu=str(cpu), arrival=arrival))
    docs += [pod(f"plain-{i}", cpu="1", arrival="2s") for i in range(plain)]
    result = await run(docs, wait=wait, until=90)
    assert_all_or_nothing(result, counts, sizes)
