"""Gang scheduling end to end, through ``simulate``: the gang design's two logged scenarios, a gang that cannot
fit, two gangs competing, and the all-or-nothing invariant as a property."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.config._config import parse_config
from kubesched.config._versions import Version, default_feature_gates
from kubesched.plugins import gang
from kubesched.scenario import load_manifests
from kubesched.simulation import SimulationResult, simulate

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
        },
        # written for 1.32 (no DynamicResources reason, backoffs not on 1 s windows) with async preemption
        version=Version(1, 32),
        feature_gates={**default_feature_gates(Version(1, 32)), "SchedulerAsyncPreemption": True},
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
    # every occurrence: these tests follow each retry
    return await simulate(manifests, config(wait), until=until, registry=registry, events="all")


def placements(result: SimulationResult) -> dict[str, str | None]:
    return {r.pod.metadata.name: r.pod.spec.node_name or None for r in result.pods}


def events(result: SimulationResult, reason: str) -> list[dict[str, Any]]:
    return [e for e in result.events if e["reason"] == reason]


def scheduled(result: SimulationResult) -> set[str]:
    return {e["object"].split("/", 1)[1] for e in events(result, "Scheduled")}


# --- the gang design's two logged runs -------------------------------------------------------
#
# The design's runs were on kind: a tainted control-plane node and three workers ("0/4 nodes").  Its
# Deployment's ReplicaSet created the pods in slow-start batches (1, then 2, then the rest);
# the first pod was scheduled before the others existed.  Here the batches arrive 8 ms apart,
# as in the log's timestamps.

KIND_NODES = ["kind-control-plane", "kind-worker", "kind-worker2", "kind-worker3"]
SEED_LABELS = {"app": "unicore-gang-test"}


def kind_cluster() -> list[dict[str, Any]]:
    docs = [node(n, cpu="8") for n in KIND_NODES]
    docs[0]["spec"] = {
        "taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    }
    return docs


def design_pod(name: str, count: int, arrival: str | None, anti_affinity: bool = False) -> dict[str, Any]:
    """A pod of the design's Deployment (nginx, no requests), gang ``test``."""
    doc = pod(name, "test", count, arrival=arrival)
    doc["metadata"]["labels"].update(SEED_LABELS)
    del doc["spec"]["containers"][0]["resources"]
    doc["spec"]["containers"][0]["image"] = "nginx:1.25"
    if anti_affinity:
        doc["spec"]["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": SEED_LABELS}, "topologyKey": HOSTNAME}
                ]
            }
        }
    return doc


# the log's line: schedule_one.go "Unable to schedule pod; no fit; waiting" err=...
SEED_PREFILTER_MESSAGE = (
    "0/4 nodes are available: not enough available pod for gang test. preemption: "
    "0/4 nodes are available: 4 No preemption victims found for incoming pod."
)


async def test_gang_design_run_one_three_replicas_available_count_two_all_bound() -> None:
    """Seed 002, first test run: replicas 3, available-count 2.  lwqgd comes first and is
    turned away at PreFilter ("0 running + 1 pending < 2"), with the log's exact message;
    rcv2h waits at Permit ("0 waiting + 0 permitted + 0 running + 1 < 2"), 9lzm6 lets both
    through; lwqgd, back from its backoff (its own status update requeued it: the design's
    plugin registers every event), passes on the two permitted members.  All three bind."""
    docs = kind_cluster()
    docs += [
        design_pod("unicore-gang-test-f6567d6fb-lwqgd", 2, None),
        design_pod("unicore-gang-test-f6567d6fb-rcv2h", 2, "8ms"),
        design_pod("unicore-gang-test-f6567d6fb-9lzm6", 2, "8ms"),
    ]
    result = await run(docs)
    where = placements(result)
    assert [(e["time"], e["reason"], e["object"], e["message"]) for e in result.events] == [
        (0.0, "FailedScheduling", "default/unicore-gang-test-f6567d6fb-lwqgd", SEED_PREFILTER_MESSAGE),
        *(
            (t, "Scheduled", f"default/{n}", f"Successfully assigned default/{n} to {where[n]}")
            for t, n in [
                (0.008, "unicore-gang-test-f6567d6fb-rcv2h"),
                (0.008, "unicore-gang-test-f6567d6fb-9lzm6"),
                (1.0, "unicore-gang-test-f6567d6fb-lwqgd"),
            ]
        ),
    ]
    assert sorted(where.values()) == KIND_NODES[1:]  # spread over the workers
    out = json.loads(result.to_json())
    assert [(p["name"][-5:], p["attempts"], p["waitingOnPermit"]) for p in out["pods"]] == [
        ("lwqgd", 2, None),
        ("rcv2h", 1, None),
        ("9lzm6", 1, None),
    ]


async def test_gang_design_run_two_four_replicas_with_anti_affinity_none_bound() -> None:
    """Seed 002, second test run: replicas 4, available-count 4, one per host, three workers.
    The first pod is turned away at PreFilter with the log's message; three pods reserve a
    worker each and wait ("2 waiting + 0 permitted + 0 running + 1 < 4" for the third); the
    fourth fits nowhere.  All stay Pending: at 30 s three wait on Permit; at the wait's end
    (1m) the first to time out unreserves and rejects the others, and the gang is marked
    rejected."""
    docs = kind_cluster()
    docs += [
        design_pod(f"unicore-gang-test-5d95486756-{n}", 4, arrival, anti_affinity=True)
        for n, arrival in [("6rxmr", None), ("gkmbj", "8ms"), ("gvfpk", "8ms"), ("mgwg5", "16ms")]
    ]
    at_30 = json.loads((await run(docs, until=30.0)).to_json())
    assert [p["nodeName"] for p in at_30["pods"]] == [None] * 4
    waiting = {p["name"][-5:]: p["waitingOnPermit"] for p in at_30["pods"]}
    assert waiting == {"6rxmr": ["Gang"], "gkmbj": ["Gang"], "gvfpk": None, "mgwg5": ["Gang"]}

    result = await run(docs, until=61.0)
    assert placements(result) == dict.fromkeys(placements(result))  # none bound
    rejected = (
        "0/4 nodes are available: gang test has been rejected. preemption: "
        "0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    fits_nowhere = (
        "0/4 nodes are available: 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }, 3 node(s) didn't match pod anti-affinity "
        "rules. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, "
        "3 No preemption victims found for incoming pod."
    )
    unreserved = (
        "0/1 nodes are available: 1 gang's pod unicore-gang-test-5d95486756-mgwg5 is unreserved."
    )
    timeout = "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin Gang."
    assert [(e["time"], e["object"][-5:], e["message"]) for e in result.events] == [
        (0.0, "6rxmr", SEED_PREFILTER_MESSAGE),
        (0.008, "gkmbj", SEED_PREFILTER_MESSAGE),
        (0.008, "gvfpk", SEED_PREFILTER_MESSAGE),
        (2.0, "gvfpk", fits_nowhere),
        (60.016, "mgwg5", timeout),
        (60.016, "6rxmr", unreserved),
        (60.016, "gkmbj", unreserved),
        (60.016, "gvfpk", rejected),
    ]


# --- the gang design's rules, end to end ------------------------------------------------------------


def gang_config(args: dict[str, Any]) -> Any:
    cfg = config()
    cfg.profiles[0].plugin_args["Gang"] = args
    return cfg


async def test_queue_sort_by_creation_time_alone() -> None:
    """Seed QueueSort: the older pod goes first whatever the priorities.  ``low`` (priority 0,
    created at 1 s) and ``high`` (priority 1000, created at 2 s, preemptionPolicy Never) wait
    for the CPU a running pod frees at 5 s: ``low`` gets it.  With the ``prioritySort``
    departure, ``high`` does."""
    blocker = pod("blocker", cpu="1")
    blocker["spec"]["nodeName"] = "n1"
    blocker["metadata"]["annotations"] = {"kubesched.io/duration": "5s"}
    docs = [
        node("n1", cpu="1"),
        blocker,
        pod("low", cpu="1", arrival="1s"),
        pod("high", cpu="1", priority=1000, arrival="2s", preempt=False),
    ]
    text = "\n---\n".join(json.dumps(d) for d in docs)
    manifests = load_manifests(["s.yaml"], texts={"s.yaml": text})
    design_order = await simulate(manifests, config(), until=60)
    assert placements(design_order) == {"blocker": "n1", "low": "n1", "high": None}
    assert [(e["time"], e["object"]) for e in events(design_order, "Scheduled")] == [(5.0, "default/low")]
    by_priority = await simulate(manifests, gang_config({"prioritySort": True}), until=60)
    assert placements(by_priority) == {"blocker": "n1", "low": None, "high": "n1"}


async def test_rejected_gang_stays_rejected_until_its_state_expires() -> None:
    """Three members, two 1-CPU nodes, Permit wait 5 s, expiration 20 s.  The two that fit
    wait from 0 s, time out at 5 s and mark the gang rejected: every member is turned away
    ("gang big has been rejected") although the third node arrives at 12 s.  The design's
    CleanUp forgets the gang at its first pass after 0 + 20 s (t=21 s); a node arriving at 30 s
    requeues the members and the gang binds whole."""
    late = node("n3", cpu="1")
    late["metadata"]["annotations"] = {"kubesched.io/arrival": "12s"}
    later = node("n4", cpu="1")
    later["metadata"]["annotations"] = {"kubesched.io/arrival": "30s"}
    docs = [node("n1", cpu="1"), node("n2", cpu="1"), late, later]
    docs += [pod(f"m-{i}", "big", 3) for i in range(3)]
    text = "\n---\n".join(json.dumps(d) for d in docs)
    manifests = load_manifests(["s.yaml"], texts={"s.yaml": text})
    cfg = gang_config({"permitWaitingTimeSeconds": 5, "gangExpirationSeconds": 20})
    result = await simulate(manifests, cfg, until=120, events="all")  # each retry
    def rejected(n: int) -> str:
        return (
            f"0/{n} nodes are available: gang big has been rejected. preemption: "
            f"0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
        )

    timeout = "0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin Gang."
    assert [(e["time"], e["object"][-3:], e["message"]) for e in result.events] == [
        (
            0.0,
            "m-2",
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
            "2 No preemption victims found for incoming pod.",
        ),
        (5.0, "m-0", timeout),
        (5.0, "m-1", timeout),
        (5.0, "m-2", rejected(2)),
        (6.0, "m-0", rejected(2)),
        (6.0, "m-1", rejected(2)),
        (7.0, "m-2", rejected(2)),
        (8.0, "m-0", rejected(2)),
        (8.0, "m-1", rejected(2)),
        # the third node requeues everyone: still rejected, then the retries of the new text
        (12.0, "m-0", rejected(3)),
        (12.0, "m-1", rejected(3)),
        (12.0, "m-2", rejected(3)),
        (20.0, "m-0", rejected(3)),
        (20.0, "m-1", rejected(3)),
        (20.0, "m-2", rejected(3)),
        # forgotten at 21 s; the fourth node at 30 s requeues them: a fresh gang binds whole
        *((30.0, f"m-{i}", f"Successfully assigned default/m-{i} to {placements(result)[f'm-{i}']}") for i in range(3)),
    ]


async def test_a_count_that_is_not_an_integer_is_a_scheduler_error_retried_with_backoff() -> None:
    """PreFilter returns Error with strconv.Atoi's text: reason SchedulerError, and the pod is
    retried after 1, 2, 4, 8, then 10 s of backoff (on the queue's 1 s flush)."""
    bad = pod("bad", "train", 1)
    bad["metadata"]["labels"][COUNT] = "abc"
    result = await run([node("n1"), bad], until=40.0)
    msg = 'running PreFilter plugin "Gang": strconv.Atoi: parsing "abc": invalid syntax'
    failed = events(result, "FailedScheduling")
    assert [(e["time"], e["message"]) for e in failed] == [
        (t, msg) for t in (0.0, 1.0, 3.0, 7.0, 15.0, 25.0, 35.0)
    ]
    (rec,) = result.pods
    assert [(c.type, c.status, c.reason, c.message) for c in rec.pod.status.conditions] == [
        ("PodScheduled", "False", "SchedulerError", msg)
    ]


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
    no_victims = (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    never = (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never."
    )
    assert failed[0]["message"] == no_victims
    assert failed[1]["message"] == never
    # m-0 times out first and unreserves: m-1 is rejected by its Unreserve (the design's text)
    assert [(e["time"], e["object"], e["message"]) for e in failed if e["time"] == 10.0][:2] == [
        (10.0, "default/m-0", "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Gang."),
        (10.0, "default/m-1", "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Gang."),
    ]
    # what the gang reserved is free again: the urgent pod binds as soon as it is released
    (urgent,) = events(result, "Scheduled")
    assert urgent["object"] == "default/urgent" and 10.0 <= urgent["time"] <= 12.0
    where = placements(result)
    assert where["m-0"] is None and where["m-1"] is None and where["m-2"] is None
    assert result.summary["scheduled"] == 1


async def test_a_late_member_waits_alone_the_seeds_limitation() -> None:
    """Members that exist before the gang is complete are turned away at PreFilter
    ("not enough available pod", Unschedulable: preemption runs and finds no victims) and wait
    in the unschedulable pods; a pod Add moves no other pod (upstream's queue), so the last
    member, arriving at 30 s, waits at Permit alone, times out at 90 s and marks the gang
    rejected -- the deadlock-by-timeout the design describes as its limitation."""
    docs = [node("n1"), node("n2")]
    docs += [pod("a-0", "a", 3), pod("a-1", "a", 3), pod("a-2", "a", 3, arrival="30s")]
    result = await run(docs, until=200)
    assert scheduled(result) == set()
    failed = [(e["time"], e["object"], e["message"]) for e in events(result, "FailedScheduling")]
    short = (
        "0/2 nodes are available: not enough available pod for gang a. preemption: "
        "0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert failed[:4] == [
        (0.0, "default/a-0", short),
        (0.0, "default/a-1", short),
        (1.0, "default/a-0", short),
        (1.0, "default/a-1", short),
    ]
    assert failed[4] == (
        90.0,
        "default/a-2",
        "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin Gang.",
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
