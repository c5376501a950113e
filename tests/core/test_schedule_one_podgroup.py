"""The PodGroup scheduling cycle of 1.36 (issue 36 step 3): upstream's
schedule_one_podgroup_test.go TestPodGroupSchedulingDefaultAlgorithm cases over a fake plugin,
PopSpecificPod, and whole runs (one schedulerName, PodGroupScheduled, pods without a group)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kubesched.api import PodSchedulingGroup
from kubesched.framework import (
    Code,
    CycleState,
    Pod,
    PostFilterResult,
    Status,
    hookimpl,
    per_node_filter,
)
from kubesched.queue._scheduling_queue import pop_specific
from kubesched.testing import make_node, make_pod, scheduler_for

U, UU, W = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.WAIT
NOMINATE = "nominate"


class FakePodGroupPlugin:
    """Filter, PostFilter and Permit answering per pod name (upstream's fakePodGroupPlugin)."""

    name = "FakePodGroup"

    def __init__(self, filter_status: dict[str, Code | None], post_filter: dict[str, str | Code],
                 permit: dict[str, Code | None]) -> None:  # fmt: skip
        self.filter_status, self.post_filter, self.permit = filter_status, post_filter, permit

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: CycleState, pod: Pod, node_info: Any) -> Status | None:
        code = self.filter_status.get(pod.metadata.name)
        return None if code is None else Status(code, "fake filter")

    @hookimpl
    def kubesched_post_filter(self, state: CycleState, pod: Pod, node_statuses: Any) -> Any:
        what = self.post_filter.get(pod.metadata.name)
        if what == NOMINATE:
            return PostFilterResult(nominated_node_name="node1"), None
        return None, Status(U, "fake post filter")

    @hookimpl
    def kubesched_permit(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        code = self.permit.get(pod.metadata.name)
        if code is None:
            return None
        if code == W:
            return Status(W), 60.0
        return Status(code, "fake permit")


def _config() -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {
                "queueSort": {"enabled": [{"name": "PrioritySort"}], "disabled": [{"name": "*"}]},
                "multiPoint": {"enabled": [{"name": "FakePodGroup"}], "disabled": [{"name": "*"}]},
                "bind": {"enabled": [{"name": "DefaultBinder"}]},
            },
        }],
    }  # fmt: skip


def group_pod(name: str, group: str = "pg") -> Pod:
    p = make_pod(name).uid(name).obj()
    return msgspec.structs.replace(p, spec=msgspec.structs.replace(p.spec, scheduling_group=PodSchedulingGroup(pod_group_name=group)))


OK = None
CASES = [
    # (upstream case, filter, postFilter, permit, group outcome, pod codes, requires preemption)
    ("All pods feasible", {}, {}, {}, "feasible", [OK, OK, OK], [False] * 3),
    ("All pods feasible, two waiting", {}, {}, {"p1": W, "p2": W}, "feasible", [OK, OK, OK], [False] * 3),
    ("All pods feasible, but all waiting", {}, {}, {"p1": W, "p2": W, "p3": W}, "unschedulable", [OK, OK, OK], [False] * 3),
    ("All pods feasible, but last waiting", {}, {}, {"p3": W}, "feasible", [OK, OK, OK], [False] * 3),
    ("All pods feasible, one waiting, one unschedulable", {}, {}, {"p1": W, "p2": U}, "feasible", [OK, U, OK], [False] * 3),
    ("All pods require preemption", {"p1": U, "p2": U, "p3": U}, dict.fromkeys(("p1", "p2", "p3"), NOMINATE), {},
     "preemption", [U, U, U], [True] * 3),
    ("All pods require preemption, but waiting", {"p1": U, "p2": U, "p3": U}, dict.fromkeys(("p1", "p2", "p3"), NOMINATE),
     {"p1": W, "p2": W, "p3": W}, "unschedulable", [U, U, U], [True] * 3),
    ("One pod requires preemption, but waiting, two are feasible", {"p1": U}, {"p1": NOMINATE}, {"p1": W, "p2": W},
     "preemption", [U, OK, OK], [True, False, False]),
    ("One pod unschedulable, one requires preemption, one feasible", {"p1": U, "p2": U}, {"p1": NOMINATE, "p2": U}, {},
     "preemption", [U, U, OK], [True, False, False]),
    ("All pods unschedulable", {"p1": UU, "p2": U, "p3": U}, {}, {}, "unschedulable", [U, U, U], [False] * 3),
]  # fmt: skip


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("filters", "post_filters", "permits", "outcome", "codes", "preemption"),
    [pytest.param(*row[1:], id=f"TestPodGroupSchedulingDefaultAlgorithm__{row[0]}") for row in CASES],
)
async def test_schedule_one_podgroup__TestPodGroupSchedulingDefaultAlgorithm(
    filters: dict[str, Code], post_filters: dict[str, Any], permits: dict[str, Code], outcome: str,
    codes: list[Code | None], preemption: list[bool],
) -> None:  # fmt: skip
    plugin = FakePodGroupPlugin(filters, post_filters, permits)
    async with scheduler_for(
        [make_node("node1").obj()], plugins={"FakePodGroup": lambda args, handle: plugin}, config=_config(),
        feature_gates={"GenericWorkload": True}, emulated_version="1.36",
    ) as sim:  # fmt: skip
        sched = sim.scheduler
        pgc = sched.scheduling.pod_group_cycle
        assert pgc is not None
        fw = sched.profiles["default-scheduler"]
        qpis = [sched.queue.new_queued_pod_info(group_pod(n)) for n in ("p1", "p2", "p3")]
        result = await pgc.default_algorithm(fw, qpis)
        got = "feasible" if result.status is None else "preemption" if result.waiting_on_preemption else "unschedulable"
        assert got == outcome
        for pr, code, pre in zip(result.pod_results, codes, preemption, strict=True):
            name = pr.qpi.pod.metadata.name
            st = pr.status
            got_code = None if st is None or st.is_success() else (U if st.code == UU else st.code)
            assert got_code == code, name
            assert pr.requires_preemption == pre, name
            placed = st is None or st.is_success() or pr.requires_preemption
            assert (pr.result.suggested_host == "node1") == placed, name
            if placed:
                want_permit = permits.get(name)
                assert (pr.permit_status.code if pr.permit_status is not None else None) == want_permit, name
            else:
                assert pr.permit_status is None
        # the algorithm reverts what it assumed: nothing stays assumed in the cache
        assert not any(sched.cache.is_assumed(q.uid) for q in qpis)


@pytest.mark.anyio
async def test_pop_specific_takes_the_pod_from_any_sub_queue() -> None:
    async with scheduler_for([], feature_gates={"GenericWorkload": True}, emulated_version="1.36") as sim:
        q = sim.scheduler.queue
        qpi = q.new_queued_pod_info(make_pod("a").uid("a").obj())
        q.unschedulable[qpi.uid] = qpi
        got = pop_specific(q, "a")
        assert got is qpi and got.attempts == 1 and "a" in q.in_flight
        assert q.where("a") is None
        assert pop_specific(q, "a") is None  # in flight: not in the queue
        q.done("a")


# --- whole runs --------------------------------------------------------------------------------

GATES = "GenericWorkload=true,GangScheduling=true"


def _scenario(nodes: int, members: int, min_count: int, extra: str = "") -> str:
    out = [
        f'apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{allocatable: {{cpu: "1", memory: 1Gi, pods: "10"}}}}\n'
        for i in range(1, nodes + 1)
    ]
    out.append(f"apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {{name: pg}}\nspec:\n  schedulingPolicy: {{gang: {{minCount: {min_count}}}}}\n")
    out += [
        f'apiVersion: v1\nkind: Pod\nmetadata: {{name: m{i}}}\nspec:\n  schedulingGroup: {{podGroupName: pg}}\n'
        f'  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]\n'
        for i in range(members)
    ]
    return "---\n".join(out) + extra


def _run(text: str, backend: str = "trio", config: str = "", until: float | None = None) -> dict[str, Any]:
    import json

    from kubesched.scenario import load_manifests, simulation_config
    from kubesched.simulation import Simulation

    texts = {"s.yaml": text, **({"c.yaml": config} if config else {})}
    cfg = simulation_config("c.yaml" if config else "", GATES, texts.get("c.yaml"), emulated_version="1.36")
    sim = Simulation(load_manifests(["s.yaml"], texts), cfg, until=until)
    doc: dict[str, Any] = json.loads(sim.run_in_virtual_time(backend).to_json())
    return doc


def test_a_gang_of_4_with_min_count_3_on_3_nodes_binds_3_at_one_instant() -> None:
    doc = _run(_scenario(3, 4, 3), until=30.0)
    bound = {p["name"]: p["scheduledAt"] for p in doc["pods"] if p["nodeName"]}
    assert len(bound) == 3 and set(bound.values()) == {0.0}
    left = [p for p in doc["pods"] if not p["nodeName"]]
    assert len(left) == 1 and left[0]["conditions"][0]["reason"] == "Unschedulable"
    assert doc["podGroups"][0]["conditions"][0]["status"] == "True"


def test_pods_without_a_group_keep_their_own_cycle() -> None:
    extra = '---\napiVersion: v1\nkind: Pod\nmetadata: {name: solo}\nspec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]\n'
    doc = _run(_scenario(4, 3, 3, extra))
    assert all(p["nodeName"] for p in doc["pods"])
    assert doc["summary"]["attempts"] == 4


def test_all_members_must_share_one_scheduler_name() -> None:
    config = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: other
"""
    text = _scenario(3, 3, 3).replace("metadata: {name: m2}\nspec:\n", "metadata: {name: m2}\nspec:\n  schedulerName: other\n")
    doc = _run(text, config=config, until=5.0)
    assert not any(p["nodeName"] for p in doc["pods"])
    messages = {e["message"] for e in doc["events"] if e["reason"] == "FailedScheduling"}
    assert any(m.startswith("all pods in a single pod group should have the same .spec.schedulerName set, got: ")
               for m in messages), messages  # fmt: skip
    assert doc["podGroups"][0]["conditions"] == []  # the group never reached the algorithm


def test_asyncio_and_trio_agree_on_the_pod_group_cycle() -> None:
    text = _scenario(2, 3, 3)
    import json

    a = _run(text, "asyncio", until=120.0)
    b = _run(text, "trio", until=120.0)
    assert json.dumps(a) == json.dumps(b)
