"""The placement algorithm of the 1.36 PodGroup cycle (TopologyAwareWorkloadScheduling): upstream's
schedule_one_podgroup_test.go TestPodGroupSchedulingPlacementAlgorithm and
TestPodGroupSchedulingPlacementAlgorithm_Scoring cases over a fake placement plugin; the snapshot
holds only a placement's nodes while the group is tried on it; whole runs where TopologyPlacement
puts a gang in one rack (the fullest it fits, by NodeResourcesFit's bin packing), binds none when
no rack holds it, and the gate off spreads it as before."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from kubesched.api import PodSchedulingGroup
from kubesched.framework import Code, CycleState, Placement, Pod, Status, hookimpl, per_node_filter
from kubesched.testing import make_node, make_pod, scheduler_for

GATES = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}


class FakePlacementPlugin:
    """Filter, PlacementGenerate and PlacementScore answering from tables (upstream's
    fakePlacementPlugin): placements by name → node names, scores and statuses by placement."""

    def __init__(self, name: str, *, filter_status: dict[str, Code] | None = None,
                 placements: dict[str, list[str]] | None = None, generate_status: Status | None = None,
                 scores: dict[str, int] | None = None, score_status: dict[str, Status] | None = None) -> None:  # fmt: skip
        self.name = name
        self.filter_status = filter_status or {}
        self.placements = placements or {}
        self.generate_status = generate_status
        self.scores = scores or {}
        self.score_status = score_status or {}
        self.seen_nodes: list[list[str]] = []

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: CycleState, pod: Pod, node_info: Any) -> Status | None:
        code = self.filter_status.get(node_info.node.metadata.name)
        return None if code is None else Status(code)

    @hookimpl
    def kubesched_placement_generate(self, state: CycleState, pod_group: Any, parent: Placement) -> Any:
        if self.generate_status is not None:
            return self.generate_status
        by_name = {ni.node.metadata.name: ni for ni in parent.nodes}
        return [Placement(n, [by_name[x] for x in nodes]) for n, nodes in self.placements.items()]

    @hookimpl
    def kubesched_placement_score(self, state: CycleState, pod_group: Any, assignments: Any) -> Any:
        name = assignments.placement.name
        return self.score_status.get(name) or self.scores.get(name, 0)


class ScoreOnly:
    def __init__(self, name: str, scores: dict[str, int]) -> None:
        self.name, self.scores = name, scores

    @hookimpl
    def kubesched_placement_score(self, state: CycleState, pod_group: Any, assignments: Any) -> int:
        return self.scores[assignments.placement.name]


def _config(generate: str, score: list[tuple[str, int]], filters: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"disabled": [{"name": "*"}]},
                "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                "filter": {"enabled": [{"name": n} for n in filters]},
                "placementGenerate": {"enabled": [{"name": generate}]},
                "placementScore": {"enabled": [{"name": n, "weight": w} for n, w in score]},
                "bind": {"enabled": [{"name": "DefaultBinder"}]},
            },
        }],
    }  # fmt: skip


def group_pod(name: str, group: str = "pg") -> Pod:
    p = make_pod(name).uid(name).obj()
    return msgspec.structs.replace(p, spec=msgspec.structs.replace(p.spec, scheduling_group=PodSchedulingGroup(pod_group_name=group)))


P12 = {"placement1": ["node1"], "placement2": ["node2"]}
SCORE_ERROR = Status(Code.ERROR, "error for test")
CASES = [
    # (upstream case, fake plugin, want host, want group status (code, message) or None)
    ("respects higher score of placement1", {"placements": P12, "scores": {"placement1": 2, "placement2": 1}}, "node1", None),
    ("respects higher score of placement2", {"placements": P12, "scores": {"placement1": 1, "placement2": 2}}, "node2", None),
    ("when no placements are generated, returns unschedulable", {"placements": {}}, None,
     (Code.UNSCHEDULABLE, "no feasible placements found")),
    ("when all placements are infeasible, returns unschedulable",
     {"placements": P12, "scores": {"placement1": 1, "placement2": 2},
      "filter_status": {"node1": Code.UNSCHEDULABLE, "node2": Code.UNSCHEDULABLE}}, None,
     (Code.UNSCHEDULABLE, "0/2 placements are available, first placement status: pod group is unschedulable")),
    ("filters out infeasible placements", {"placements": P12, "scores": {"placement1": 1},
                                           "filter_status": {"node2": Code.UNSCHEDULABLE}}, "node1", None),
    ("when generate plugin fails, returns error", {"generate_status": Status(Code.ERROR, "error for test")}, None,
     (Code.ERROR, "error for test")),
    ("when score plugin fails, returns error", {"placements": P12, "scores": {"placement1": 1},
                                                "score_status": {"placement2": SCORE_ERROR}}, None,
     (Code.ERROR, 'running PlacementScore plugins: plugin "FakePlacementPlugin" failed with: error for test')),
]  # fmt: skip


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("fake", "host", "status"),
    [pytest.param(*row[1:], id=f"TestPodGroupSchedulingPlacementAlgorithm__{row[0]}") for row in CASES],
)
async def test_schedule_one_podgroup__TestPodGroupSchedulingPlacementAlgorithm(
    fake: dict[str, Any], host: str | None, status: tuple[Code, str] | None
) -> None:
    plugin = FakePlacementPlugin("FakePlacementPlugin", **fake)
    name = plugin.name
    async with scheduler_for(
        [make_node("node1").obj(), make_node("node2").obj()], plugins={name: lambda args, handle: plugin},
        config=_config(name, [(name, 1)], [name]), feature_gates=GATES, emulated_version="1.36",
    ) as sim:  # fmt: skip
        sched = sim.scheduler
        pgc = sched.scheduling.pod_group_cycle
        assert pgc is not None
        fw = sched.profiles["default-scheduler"]
        qpis = [sched.queue.new_queued_pod_info(group_pod("foo"))]
        result = await pgc.algorithm(fw, qpis)
        if status is None:
            assert result.status is None
            assert [pr.result.suggested_host for pr in result.pod_results] == [host]
        else:
            assert result.status is not None and (result.status.code, result.status.message) == status
            if status[0] == Code.ERROR or "no feasible" in status[1]:
                assert result.pod_results == []
                assert result.status.plugin == name
            else:  # the first placement's result: the pod saw only that placement's node
                (pr,) = result.pod_results
                assert pr.status is not None and pr.status.message.startswith("0/1 nodes are available")
        assert len(sched.snapshot) == 2  # every node again once the algorithm is done
        assert not sched.cache.is_assumed("foo")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("scores", "want"),
    [
        pytest.param([(1, {"placement1": 50, "placement2": 75}), (2, {"placement1": 25, "placement2": 10})], "node1",
                     id="TestPodGroupSchedulingPlacementAlgorithm_Scoring__respects higher score of placement1"),
        pytest.param([(1, {"placement1": 75, "placement2": 50}), (2, {"placement1": 10, "placement2": 25})], "node2",
                     id="TestPodGroupSchedulingPlacementAlgorithm_Scoring__respects higher score of placement2"),
    ],
)  # fmt: skip
async def test_schedule_one_podgroup__TestPodGroupSchedulingPlacementAlgorithm_Scoring(
    scores: list[tuple[int, dict[str, int]]], want: str
) -> None:
    gen = FakePlacementPlugin("FakeGeneratorPlugin", placements=P12)
    plugins: dict[str, Any] = {gen.name: lambda args, handle: gen}
    for i, (_, table) in enumerate(scores):
        scorer = ScoreOnly(f"FakeScorePlugin{i}", table)
        plugins[scorer.name] = lambda args, handle, s=scorer: s
    config = _config(gen.name, [(f"FakeScorePlugin{i}", w) for i, (w, _) in enumerate(scores)], [gen.name])
    async with scheduler_for(
        [make_node("node1").obj(), make_node("node2").obj()], plugins=plugins, config=config, feature_gates=GATES,
        emulated_version="1.36",
    ) as sim:  # fmt: skip
        sched = sim.scheduler
        pgc = sched.scheduling.pod_group_cycle
        assert pgc is not None
        result = await pgc.algorithm(sched.profiles["default-scheduler"], [sched.queue.new_queued_pod_info(group_pod("foo"))])
        assert result.status is None and result.pod_results[0].result.suggested_host == want


# --- whole runs ----------------------------------------------------------------------------------


def _scenario(node_cpu: str = "2", busy_on: str = "n0") -> str:
    docs = [
        f'apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{rack: {rack}}}}}\n'
        f'status: {{allocatable: {{cpu: "{node_cpu}", memory: 8Gi, pods: "10"}}}}\n'
        for i, rack in enumerate(["r1", "r1", "r2", "r2", "r3"])
    ]
    docs.append(f'apiVersion: v1\nkind: Pod\nmetadata: {{name: busy}}\nspec:\n  nodeName: {busy_on}\n'
                '  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]\n')  # fmt: skip
    docs.append("apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: train}\nspec:\n"
                "  schedulingPolicy: {gang: {minCount: 3}}\n  schedulingConstraints: {topology: [{key: rack}]}\n")  # fmt: skip
    docs += [
        f'apiVersion: v1\nkind: Pod\nmetadata: {{name: w{i}}}\nspec:\n  schedulingGroup: {{podGroupName: train}}\n'
        '  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]\n'
        for i in range(3)
    ]
    return "---\n".join(docs)


def _run(text: str, gates: str, backend: str = "trio", until: float | None = None) -> dict[str, Any]:
    from kubesched.scenario import load_manifests
    from kubesched.scenario._config import load_config_file
    from kubesched.simulation import Simulation

    cfg = load_config_file("", gates)
    sim = Simulation(load_manifests(["s.yaml"], {"s.yaml": text}), cfg, until=until)
    doc: dict[str, Any] = json.loads(sim.run_in_virtual_time(backend).to_json())
    return doc


TAS = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"


def test_a_gang_lands_in_one_rack_the_fullest_it_fits() -> None:
    """r1 (one cpu taken) and r2 both hold the gang of 3, r3 does not: NodeResourcesFit's
    MostAllocated prefers r1 (4 of 4 cpus), PodGroupPodsCount scores both 100."""
    doc = _run(_scenario(), TAS)
    nodes = {p["name"]: p["nodeName"] for p in doc["pods"]}
    assert {nodes["w0"], nodes["w1"], nodes["w2"]} <= {"n0", "n1"}
    assert {p["scheduledAt"] for p in doc["pods"] if p["name"].startswith("w")} == {0.0}
    assert doc["podGroups"][0]["conditions"][0]["status"] == "True"
    # without the gate, the same gang spreads over racks
    spread = {p["nodeName"] for p in _run(_scenario(), "GenericWorkload=true,GangScheduling=true")["pods"]
              if p["name"].startswith("w")}  # fmt: skip
    assert len({"r1" if n in ("n0", "n1") else "r2" if n in ("n2", "n3") else "r3" for n in spread}) > 1


def test_a_gang_no_rack_holds_binds_none() -> None:
    doc = _run(_scenario(node_cpu="1", busy_on="n4"), TAS, until=5.0)
    assert not any(p["nodeName"] for p in doc["pods"] if p["name"].startswith("w"))
    cond = doc["podGroups"][0]["conditions"][0]
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"] == "0/3 placements are available, first placement status: pod group is unschedulable"


def test_asyncio_and_trio_agree_on_the_placement_algorithm() -> None:
    text = _scenario()
    assert json.dumps(_run(text, TAS, "asyncio")) == json.dumps(_run(text, TAS, "trio"))


def test_the_gang_topology_example_puts_each_job_in_one_rack() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[2] / "examples" / "scenarios" / "gang-topology.yaml").read_text()
    doc = _run(text, TAS)
    racks: dict[str, set[str]] = {}
    for p in doc["pods"]:
        if p["name"].startswith("train"):
            assert p["nodeName"], p["name"]
            racks.setdefault(p["name"][:7], set()).add(p["nodeName"][0])
    assert racks["train-1"] != racks["train-2"] and all(len(v) == 1 and v != {"a"} for v in racks.values())
    spread = _run(text, "GenericWorkload=true,GangScheduling=true")
    assert len({p["nodeName"][0] for p in spread["pods"] if p["name"].startswith("train-1")}) > 1


def test_without_the_gate_a_pod_groups_topology_constraint_is_dropped() -> None:
    """dropDisabledPodGroupFields: schedulingConstraints exist only with
    TopologyAwareWorkloadScheduling; without it workload-aware preemption is not refused for them."""
    from kubesched.config._versions import Version
    from kubesched.scenario import load_manifests
    from kubesched.scenario._workloadapi import check_workload_api

    for gates, kept in (({"GenericWorkload": True}, False), ({**GATES}, True)):
        ms = load_manifests(["s.yaml"], {"s.yaml": _scenario()})
        check_workload_api(ms, Version(1, 36), gates)
        pg = next(m.obj for m in ms if m.kind == "SchedulingPodGroup")
        assert (pg.spec.scheduling_constraints is not None) == kept
