"""Same input, same seed: the same output byte for byte, on asyncio and on trio.

Random scenarios mix gangs (Permit waits and timeouts), priorities (preemption), late arrivals
and tight capacity — the situations where many things happen at one virtual instant.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched import Code, Status, hookimpl
from kubesched.config._config import parse_config
from kubesched.config._versions import Version, default_feature_gates
from kubesched.plugins import IN_TREE
from kubesched.scenario import load_manifests
from kubesched.scheduler._instant import ATTEMPTS_PER_INSTANT
from kubesched.simulation import simulate
from kubesched.transports.fake.virtual_time import run

GANG_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "plugins": {
                "multiPoint": {"enabled": [{"name": "Gang"}]},
                "queueSort": {"enabled": [{"name": "Gang"}], "disabled": [{"name": "PrioritySort"}]},
            },
            "pluginConfig": [{"name": "Gang", "args": {"permitWaitingTimeSeconds": 3}}],
        }
    ],
}


def scenario(seed: int) -> str:
    r = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(r.randint(1, 4)):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
                "status": {"allocatable": {"cpu": str(r.randint(1, 4)), "memory": "8Gi", "pods": "110"}},
            }
        )
    for g in range(r.randint(0, 3)):
        size = r.randint(1, 4)
        for i in range(size):
            meta: dict[str, Any] = {
                "name": f"g{g}-{i}",
                "labels": {"gang.kubesched.io/name": f"g{g}", "gang.kubesched.io/available-count": str(size)},
            }
            if r.random() < 0.3:
                meta["annotations"] = {"kubesched.io/arrival": f"{r.randint(1, 20)}s"}
            docs.append(_pod(meta, r))
    for i in range(r.randint(0, 5)):
        meta = {"name": f"p{i}"}
        if r.random() < 0.5:
            meta["annotations"] = {"kubesched.io/arrival": f"{r.randint(0, 40)}s"}
        docs.append(_pod(meta, r))
    return "\n---\n".join(json.dumps(d) for d in docs)


def _pod(meta: dict[str, Any], r: random.Random) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "priority": r.choice([0, 10, 100, 1000]),
            "containers": [{"name": "c", "resources": {"requests": {"cpu": str(r.randint(1, 2))}}}],
        },
    }


def _simulate(text: str, backend: str, async_preemption: bool = True) -> str:
    manifests = load_manifests(["s.yaml"], texts={"s.yaml": text})
    cfg = parse_config(GANG_CONFIG, version=Version(1, 32))  # written for 1.32's queue (no 1 s backoff windows)
    cfg.feature_gates["SchedulerAsyncPreemption"] = async_preemption

    async def go() -> str:
        result = await simulate(manifests, cfg, seed=3, until=120.0)
        return result.to_json()

    return run(go, backend=backend)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), async_preemption=st.booleans())
def test_asyncio_and_trio_agree_byte_for_byte(seed: int, async_preemption: bool) -> None:
    text = scenario(seed)
    assert _simulate(text, "asyncio", async_preemption) == _simulate(text, "trio", async_preemption)


@pytest.mark.parametrize(
    ("seed", "async_preemption"),
    [(3, True), (17, True), (21, True), (94, True), (19, False), (23, False), (34, False), (47, False)],
)
def test_known_hard_scenarios_agree(seed: int, async_preemption: bool) -> None:
    """Scenarios that once diverged: same-instant Permit timeouts, preemption of waiting pods,
    and sync preemption of a gang member waiting at Permit, where the waiting
    pod's FailedScheduling and the preemptor's came in either order.  A task made runnable during
    a scheduling cycle now takes its turn after the cycle ends."""
    text = scenario(seed)
    assert _simulate(text, "asyncio", async_preemption) == _simulate(text, "trio", async_preemption)


def test_a_preempted_waiting_pod_fails_after_its_preemptor() -> None:
    """Sync preemption of a gang member at Permit (seed 19): the preemptor's cycle records its
    own FailedScheduling before the rejected member's binding cycle records "preempted"."""
    events = json.loads(_simulate(scenario(19), "trio", False))["events"]
    at_zero = [(e["reason"], e["object"], e["message"]) for e in events if e["time"] == 0.0][-3:]
    assert at_zero == [
        ("Preempted", "default/g0-0", at_zero[0][2]),
        ("FailedScheduling", "default/p2", "0/1 nodes are available: 1 Insufficient cpu."),
        ("FailedScheduling", "default/g0-0", "0/1 nodes are available: 1 preempted."),
    ]


class Spinner:
    """Turns every pod away at PreFilter and activates the other pods it has turned away:
    activation bypasses backoff (upstream's Activate), so two such pods take turns in the
    active queue at one instant, for ever."""

    name = "Spinner"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle
        self.seen: dict[str, Any] = {}

    @hookimpl
    def kubesched_pre_filter(self, state: Any, pod: Any, nodes: Any) -> Status:
        self.handle.activate([p for uid, p in self.seen.items() if uid != pod.metadata.uid])
        self.seen[pod.metadata.uid] = pod
        return Status(Code.UNSCHEDULABLE, "spinning")


REGISTRY = {**IN_TREE, "Spinner": Spinner}
SPIN_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"plugins": {"preFilter": {"enabled": [{"name": "Spinner"}]}}}],
}


def test_retries_at_one_instant_wait_out_their_backoff_in_virtual_time() -> None:
    """A plugin that activates the pods it turned away keeps two of them in the active queue
    at one virtual instant (t=5s, when the second arrives).  Upstream would spin in real time;
    here each pod, after ATTEMPTS_PER_INSTANT attempts at one instant, waits out its backoff in
    virtual time (kubesched.scheduler._instant): the run reaches ``--until`` with no livelock,
    time advancing in backoff steps, and both backends agree."""
    text = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '4', memory: 4Gi, pods: '110'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: spin-a}\n"
        "spec: {containers: [{name: c, image: pause}]}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: spin-b, annotations: {kubesched.io/arrival: 5s}}\n"
        "spec: {containers: [{name: c, image: pause}]}\n"
    )
    manifests = load_manifests(["s.yaml"], texts={"s.yaml": text})
    outputs = {}
    for backend in ("asyncio", "trio"):

        async def go() -> tuple[str, list[str], list[int]]:
            result = await simulate(
                manifests, parse_config(SPIN_CONFIG, registry=REGISTRY), seed=3, until=120.0,
                registry=REGISTRY,
            )
            return result.to_json(), result.warnings, [r.attempts for r in result.pods]

        outputs[backend] = run(go, backend=backend)
    assert outputs["asyncio"] == outputs["trio"]
    out, warnings, attempts = outputs["trio"]
    assert not any(w.startswith("livelock") for w in warnings)
    # at most ATTEMPTS_PER_INSTANT + 1 attempts an instant, instants 1 s .. 10 s apart: bounded,
    # and more than one instant's worth
    assert all(ATTEMPTS_PER_INSTANT < n < 2 * (ATTEMPTS_PER_INSTANT + 1) * 120 for n in attempts)


# --- preemptions with several victims ---------------------------------------------------------


def preemption_scenario(seed: int) -> str:
    """Small pods of low priority fill the nodes; later, big high-priority pods each need
    several of them gone, so one preemption evicts several victims at one instant."""
    r = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(r.randint(1, 3)):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
                "status": {"allocatable": {"cpu": str(r.randint(2, 4)), "memory": "8Gi", "pods": "110"}},
            }
        )
    for i in range(r.randint(2, 12)):
        docs.append(_sized_pod(f"low{i}", r.choice([0, 1, 5]), f"{r.choice([250, 500, 750])}m", r, 0))
    for i in range(r.randint(1, 4)):
        docs.append(_sized_pod(f"high{i}", r.choice([100, 1000]), str(r.randint(1, 3)), r, r.randint(1, 10)))
    return "\n---\n".join(json.dumps(d) for d in docs)


def _sized_pod(name: str, prio: int, cpu: str, r: random.Random, arrival: int) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if arrival:
        meta["annotations"] = {"kubesched.io/arrival": f"{arrival}s"}
    spec: dict[str, Any] = {
        "priority": prio,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
    }
    if r.random() < 0.5:
        spec["terminationGracePeriodSeconds"] = r.choice([0, 5])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _simulate_default(text: str, backend: str, async_preemption: bool) -> str:
    manifests = load_manifests(["s.yaml"], texts={"s.yaml": text})
    cfg = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    cfg.feature_gates["SchedulerAsyncPreemption"] = async_preemption

    async def go() -> str:
        result = await simulate(manifests, cfg, seed=5, until=120.0)
        return result.to_json()

    return run(go, backend=backend)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), async_preemption=st.booleans())
def test_preemptions_with_several_victims_agree_byte_for_byte(seed: int, async_preemption: bool) -> None:
    text = preemption_scenario(seed)
    assert _simulate_default(text, "asyncio", async_preemption) == _simulate_default(
        text, "trio", async_preemption
    )


def test_preemption_scenarios_evict_several_victims_at_once() -> None:
    """The generator does produce what the property is about: one preemption, several victims."""
    found = 0
    for seed in range(30):
        out = json.loads(_simulate_default(preemption_scenario(seed), "asyncio", False))
        text = json.dumps(out)
        if text.count('"Preempted"') >= 2:
            found += 1
    assert found >= 5


@pytest.mark.parametrize(
    ("version", "message"),
    [
        pytest.param("1.35", "0/1 nodes are available: 1 preempted.", id="1.35: Reject, unschedulable"),
        # 1.36 (kubernetes#135719): waitingPod.Preempt, an Error (v1.35.4 framework.go WaitOnPermit
        # wraps it), and the victim goes to the backoff queue
        pytest.param("1.36", "waiting on permit for pod: preempted", id="1.36: Preempt, backoffQ"),
    ],
)
def test_a_preempted_waiting_pod_per_version(version: str, message: str) -> None:
    """Seed 19's gang member preempted at Permit, without the 1 s backoff windows (to compare
    only the victim's way out)."""
    v = Version(*map(int, version.split(".")))
    gates = {**default_feature_gates(v), "SchedulerPopFromBackoffQ": False, "SchedulerAsyncPreemption": False}
    cfg = parse_config(GANG_CONFIG, version=v, feature_gates=gates)
    manifests = load_manifests(["s.yaml"], texts={"s.yaml": scenario(19)})

    async def go() -> str:
        return (await simulate(manifests, cfg, seed=3, until=120.0)).to_json()

    events = json.loads(run(go, backend="trio"))["events"]
    mine = [(e["reason"], e["message"]) for e in events if e["object"] == "default/g0-0" and e["time"] == 0.0]
    assert mine[-2][0] == "Preempted"
    assert mine[-1] == ("FailedScheduling", message)
