"""Workload-aware preemption (issue 36 step 4, KEP-5710, gate WorkloadAwarePreemption):
moreImportantVictim's order, PDB violators first, and whole runs — one decision for the whole
group over the whole cluster, a PodGroup of disruptionMode PodGroup evicted as a unit, the
victims spared by importance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.api._objects import ObjectMeta, Pod, PodStatus
from kubesched.api._workload import SchedulingPodGroup
from kubesched.preemption.podgroup import (
    Victim,
    more_important_victim,
    sort_victims,
    split_by_pdb_violation,
)
from kubesched.testing import make_pod

DATA = Path(__file__).parent / "data"
GATES = "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true"


def _pod(name: str, start: str | None = None, labels: dict[str, str] | None = None) -> Pod:
    b = make_pod(name).uid(name)
    for k, v in (labels or {}).items():
        b = b.label(k, v)
    p = b.obj()
    import msgspec

    return msgspec.structs.replace(p, status=PodStatus(phase="Running", start_time=start))


def _group(name: str) -> SchedulingPodGroup:
    return SchedulingPodGroup(metadata=ObjectMeta(name=name, namespace="default"))


T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(Victim([_pod("a", T1)], 10), Victim([_pod("b", T0)], 5), True, id="moreImportantVictim__higher priority first"),
        pytest.param(Victim([_pod("a", T1)], 5, _group("g")), Victim([_pod("b", T0)], 5), True,
                     id="moreImportantVictim__a PodGroup before a pod of the same priority"),
        pytest.param(Victim([_pod("a", T0)], 5), Victim([_pod("b", T1)], 5), True, id="moreImportantVictim__the older pod first"),
        pytest.param(Victim([_pod("a", T2), _pod("a2", T2)], 5, _group("g")), Victim([_pod("b", T0)], 5, _group("h")), True,
                     id="moreImportantVictim__the larger PodGroup first"),
        pytest.param(Victim([_pod("a", T1)], 5, _group("g")), Victim([_pod("b", T0)], 5, _group("h")), False,
                     id="moreImportantVictim__equal sizes: the group that started first"),
    ],
)
def test_podgrouppreemption__moreImportantVictim(a: Victim, b: Victim, want: bool) -> None:
    assert more_important_victim(a, b) is want
    assert more_important_victim(b, a) is (not want)


def test_sort_victims_is_most_important_first() -> None:
    low, mid, grp = Victim([_pod("l", T0)], 1), Victim([_pod("m", T0)], 5), Victim([_pod("g", T0)], 5, _group("g"))
    assert sort_victims([low, mid, grp]) == [grp, mid, low]


def test_pdb_violators_are_told_apart_by_any_of_their_pods() -> None:
    from kubesched.api._objects import (
        LabelSelector,
        PodDisruptionBudget,
        PodDisruptionBudgetSpec,
        PodDisruptionBudgetStatus,
    )

    pdb = PodDisruptionBudget(
        metadata=ObjectMeta(name="pdb", namespace="default"),
        spec=PodDisruptionBudgetSpec(selector=LabelSelector(match_labels={"app": "db"})),
        status=PodDisruptionBudgetStatus(disruptions_allowed=0),
    )
    guarded = Victim([_pod("x", T0), _pod("y", T0, {"app": "db"})], 1, _group("g"))
    free = Victim([_pod("z", T0)], 1)
    assert split_by_pdb_violation([guarded, free], [pdb]) == ([guarded], [free])


def _run(text: str, backend: str, gates: str = GATES, until: float | None = None) -> tuple[str, dict[str, Any]]:
    from kubesched.scenario import load_manifests, simulation_config
    from kubesched.simulation import Simulation

    sim = Simulation(load_manifests(["s.yaml"], {"s.yaml": text}), simulation_config("", gates, None), until=until)
    out = sim.run_in_virtual_time(backend).to_json()
    return out, json.loads(out)


def test_the_group_preempts_both_batch_pods_in_one_decision_and_spares_the_small_one() -> None:
    text = (DATA / "wap-two-batch-pods.yaml").read_text()
    runs = {b: _run(text, b) for b in ("asyncio", "trio")}
    assert runs["asyncio"][0] == runs["trio"][0]
    doc = runs["trio"][1]
    pods = {p["name"]: p for p in doc["pods"]}
    assert pods["batch-a"]["deleted"] and pods["batch-b"]["deleted"] and not pods["small"]["deleted"]
    assert pods["batch-a"]["conditions"][-1] == {
        "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority podgroup",
    }  # fmt: skip
    preempted = [e for e in doc["events"] if e["reason"] == "Preempted"]
    assert [e["object"] for e in preempted] == ["default/batch-a", "default/batch-b"]
    assert all(e["message"].startswith("Preempted by podgroup ") and e["message"].endswith(" on node cluster") for e in preempted)
    waiting = {e["message"] for e in doc["events"] if e["reason"] == "FailedScheduling" and e["time"] == 10.0}
    assert waiting == {"pod group is waiting for preemption to complete"}
    starts = {pods[f"train-{i}"]["scheduledAt"] for i in range(4)}
    assert len(starts) == 1 and None not in starts


def _victim_group_scenario(mode: str) -> str:
    nodes = "".join(
        f'---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{allocatable: {{cpu: "2", memory: 8Gi, pods: "10"}}}}\n'
        for i in (1, 2)
    )
    low = (
        f"---\napiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {{name: low}}\n"
        f"spec:\n  priority: 0\n  disruptionMode: {mode}\n  schedulingPolicy: {{gang: {{minCount: 2}}}}\n"
        + "".join(
            f'---\napiVersion: v1\nkind: Pod\nmetadata: {{name: low-{i}}}\nspec:\n  nodeName: n{i}\n'
            f'  schedulingGroup: {{podGroupName: low}}\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "2"}}}}}}]\n'
            for i in (1, 2)
        )
    )
    high = (
        "---\napiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: high, annotations: {kubesched.io/arrival: 5s}}\n"
        "spec:\n  priority: 100\n  schedulingPolicy: {gang: {minCount: 1}}\n"
        '---\napiVersion: v1\nkind: Pod\nmetadata: {name: high-0, annotations: {kubesched.io/arrival: 5s}}\nspec:\n'
        '  priority: 100\n  schedulingGroup: {podGroupName: high}\n  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]\n'
    )
    return nodes + low + high


@pytest.mark.parametrize(("mode", "evicted"), [("PodGroup", 2), ("Pod", 1)])
def test_a_podgroup_of_disruption_mode_podgroup_goes_as_a_unit(mode: str, evicted: int) -> None:
    # high-0 needs one node: a group of disruptionMode PodGroup loses both pods, one of mode Pod
    # only the pod on the node high-0 takes
    _, doc = _run(_victim_group_scenario(mode), "trio")
    deleted = {p["name"] for p in doc["pods"] if p["deleted"]}
    assert len(deleted) == evicted and deleted <= {"low-1", "low-2"}
    assert next(p for p in doc["pods"] if p["name"] == "high-0")["nodeName"]
    low = next(g for g in doc["podGroups"] if g["name"] == "low")
    marked = [c for c in low["conditions"] if c["type"] == "DisruptionTarget"]
    assert bool(marked) == (mode == "PodGroup")


def test_without_lower_priority_victims_the_group_is_unresolvable() -> None:
    text = _victim_group_scenario("Pod").replace("priority: 0\n", "priority: 500\n")
    _, doc = _run(text, "trio", until=20.0)
    assert not any(p["deleted"] for p in doc["pods"])
    high = next(g for g in doc["podGroups"] if g["name"] == "high")
    assert high["conditions"][0]["reason"] == "Unschedulable"
    assert "No preemption victims found for incoming preemptor" in high["conditions"][0]["message"]
