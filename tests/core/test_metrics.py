"""``kubesched.reporting`` (the numbers): every number of the report and of compare, on hand-computed results."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kubesched import reporting as metrics
from kubesched._errors import ConfigError
from kubesched.reporting import compute, percentile, side_by_side, stdev


def pod(name: str, created: float | None, bound: float | None, *, node: str | None = None, **kw: Any) -> dict[str, Any]:
    p = {"namespace": "default", "name": name, "uid": f"uid-{name}", "priority": 0, "nodeName": node,
         "phase": "Running" if node else "Pending", "deleted": False, "nominatedNodeName": None, "conditions": [],
         "createdAt": created, "scheduledAt": bound, "finishedAt": None, "owner": None}
    p.update(kw)
    return p


def tl(t: float, pending: int, running: int, cpu: int, cap: int = 4000) -> dict[str, Any]:
    return {"time": t, "pending": pending, "running": running,
            "allocated": {"cpu": cpu, "memory": cpu * 1024, "pods": running},
            "capacity": {"cpu": cap, "memory": cap * 1024, "pods": 20}}


# A run worked out by hand:
#   cpu allocated 0 → 1000 (t=10) → 3000 (t=20) → 2000 (t=40), capacity 4000, end at t=50:
#   fractions 0, .25, .75, .5 held 10, 10, 20, 10 s: mean (0 + 2.5 + 15 + 5) / 50 = .45, peak .75
#   latencies 10, 20, 0 (p50 10; p90 at rank 1.8: 10 + .8*10 = 18; p99 at rank 1.98: 19.8)
#   final nodes: n1 full (2000/2000), n2 empty: fractions 1, 0 → std .5, one node used
#   Jobs: a in 100 s, b in 20 s, c not done: p50 60, p99 20 + .99*80 = 99.2
RESULT: dict[str, Any] = {
    "pods": [
        pod("a", 0, 10, node="n1"),
        pod("b", 0, 20, node="n1"),
        pod("c", 5, 5, node="n1", deleted=True),
        pod("d", 30, None),
    ],
    "events": [
        {"time": 31.0, "type": "Warning", "reason": "FailedScheduling", "object": "default/d",
         "message": "0/2 nodes are available: 2 Insufficient cpu."},
        {"time": 35.0, "type": "Normal", "reason": "Preempted", "object": "default/c",
         "message": "Preempted by pod uid-b on node n1"},
        {"time": 35.0, "type": "Normal", "reason": "Preempted", "object": "default/x",
         "message": "Preempted by pod uid-b on node n1"},
        {"time": 42.0, "type": "Warning", "reason": "FailedScheduling", "object": "default/d",
         "message": "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable."},
    ],
    "summary": {"pods": 4, "scheduled": 2, "pending": 1, "deleted": 1, "succeeded": 0, "preemptions": 1,
                "attempts": 6, "virtualSeconds": 50.0},
    "timeline": [tl(0, 2, 0, 0), tl(10, 1, 1, 1000), tl(20, 0, 2, 3000), tl(40, 0, 1, 2000)],
    "workloads": [
        {"kind": "Job", "namespace": "default", "name": "a", "createdAt": 0.0, "completedAt": 100.0, "pods": 3},
        {"kind": "Job", "namespace": "default", "name": "b", "createdAt": 10.0, "completedAt": 30.0, "pods": 1},
        {"kind": "Job", "namespace": "default", "name": "c", "createdAt": 10.0, "completedAt": None, "pods": 1},
        {"kind": "Deployment", "namespace": "default", "name": "web", "createdAt": 0.0, "completedAt": None, "pods": 2},
    ],
    "nodes": [
        {"name": "n1", "capacity": {"cpu": 2000, "memory": 2048000, "pods": 10},
         "allocated": {"cpu": 2000, "memory": 2048000, "pods": 2}},
        {"name": "n2", "capacity": {"cpu": 2000, "memory": 2048000, "pods": 10},
         "allocated": {"cpu": 0, "memory": 0, "pods": 0}},
    ],
}


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        pytest.param([1, 2, 3, 4], 50, 2.5, id="even count: midway"),
        pytest.param([0, 10, 20], 90, 18.0, id="between ranks"),
        pytest.param([7], 99, 7.0, id="one value"),
        pytest.param([3, 1, 2], 0, 1.0, id="unsorted input, p0 is the min"),
        pytest.param([3, 1, 2], 100, 3.0, id="p100 is the max"),
        pytest.param([], 50, None, id="no values"),
    ],
)
def test_percentile(values: list[float], q: float, expected: float | None) -> None:
    assert percentile(values, q) == (pytest.approx(expected) if expected is not None else None)


def test_stdev_is_the_population_deviation() -> None:
    assert stdev([1.0, 0.0]) == 0.5
    assert stdev([2, 4, 4, 4, 5, 5, 7, 9]) == 2.0
    assert stdev([]) is None


def test_counts_latency_and_preemptions() -> None:
    m = compute(RESULT)
    assert (m.pods, m.scheduled, m.pending, m.deleted, m.preemptions, m.attempts) == (4, 2, 1, 1, 1, 6)
    assert m.latencies == [10, 20, 0]
    assert m.latency == {"p50": 10.0, "p90": pytest.approx(18.0), "p99": pytest.approx(19.8)}
    assert m.victims == 2
    [pre] = m.preemption_list
    assert (pre.time, pre.preemptor_name, pre.node, pre.victims) == (35.0, "default/b", "n1", ["default/c", "default/x"])
    assert m.missing == []


def test_allocation_over_time_is_time_weighted() -> None:
    m = compute(RESULT)
    assert m.resources == ["cpu", "memory", "pods"]
    assert m.allocation_mean["cpu"] == pytest.approx(0.45)
    assert m.allocation_peak["cpu"] == 0.75
    # pods: running 0, 1, 2, 1 of 20 for 10, 10, 20, 10 s → (0 + 10 + 40 + 10) / 20 / 50
    assert m.allocation_mean["pods"] == pytest.approx(0.06)
    assert m.peak_pending == 2
    assert m.times == [0, 10, 20, 40]
    assert m.pending_series == [2, 1, 0, 0]
    assert m.running_series == [0, 1, 2, 1]


def test_a_run_that_spans_no_time_has_the_mean_of_its_instant() -> None:
    obj = copy.deepcopy(RESULT)
    obj["timeline"] = [tl(0, 0, 1, 1000)]
    obj["summary"]["virtualSeconds"] = 0.0
    assert compute(obj).allocation_mean["cpu"] == 0.25


def test_node_balance_and_nodes_used() -> None:
    m = compute(RESULT)
    assert m.node_fractions["cpu"] == [1.0, 0.0]
    assert m.node_balance["cpu"] == 0.5
    assert m.node_balance["pods"] == pytest.approx(0.1)  # 2/10 and 0: std .1
    assert m.nodes_used == 1


def test_jobs_completion() -> None:
    m = compute(RESULT)
    assert m.jobs == [("default/a", 100.0), ("default/b", 20.0)]
    assert m.jobs_incomplete == 1
    assert m.job_completion == {"p50": 60.0, "p99": pytest.approx(99.2)}


def test_why_pending_is_the_last_failed_scheduling_message() -> None:
    rows = {r.name: r for r in compute(RESULT).pod_rows}
    assert rows["default/d"].why_pending == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable."
    assert rows["default/a"].why_pending == ""
    assert rows["default/c"].state == "Deleted"


def test_absent_sections_are_reported_not_guessed() -> None:
    obj = {k: copy.deepcopy(RESULT[k]) for k in ("pods", "events", "summary")}
    for p in obj["pods"]:
        for k in ("createdAt", "scheduledAt", "finishedAt", "owner"):
            del p[k]
    m = compute(obj)
    assert m.missing == ["pods[].createdAt", "timeline", "nodes", "workloads"]
    assert m.latency == {"p50": None, "p90": None, "p99": None}
    assert m.nodes_used is None and m.times == [] and m.jobs == []
    row = m.table()
    assert row["latencyP50"] is None and row["timeToDrain"] == 50.0
    text = side_by_side(["x", "y"], [row, {**row, "latencyP50": 3.0}])
    assert "latency p50" in text and "n/a" in text  # known for one variant: shown, n/a for the other
    assert "latency p99" not in text  # known for none: left out


def test_table_and_side_by_side_text() -> None:
    row = compute(RESULT).table()
    assert row["nodeBalance.cpu"] == 0.5
    assert row["allocationMean.cpu"] == pytest.approx(0.45)
    text = side_by_side(["a.yaml", "b.yaml"], [row, row])
    lines = text.splitlines()
    assert lines[0].split() == ["metric", "a.yaml", "b.yaml"]
    assert any(line.split()[-2:] == ["45.0%", "45.0%"] and line.startswith("mean allocation cpu") for line in lines)
    assert any(line.startswith("latency p99") and line.endswith("19.8s") for line in lines)
    assert any(line.startswith("node balance (std) cpu") and line.endswith("0.500") for line in lines)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("not json", "r.json: not a kubesched result: not JSON", id="not JSON"),
        pytest.param("[1, 2]", "r.json: not a kubesched result: expected a JSON object", id="a list"),
        pytest.param('{"pods": [], "events": []}', "r.json, summary: not a kubesched result: no 'summary' section",
                     id="no summary"),
        pytest.param('{"pods": {}, "events": [], "summary": {}}', "r.json, pods: not a kubesched result: expected a list",
                     id="pods not a list"),
        pytest.param('{"pods": [{}], "events": [], "summary": {}}',
                     "r.json, pods[0].name: not a kubesched result: a pod needs a name", id="nameless pod"),
        pytest.param('{"pods": [], "events": [], "summary": {}, "timeline": 3}',
                     "r.json, timeline: not a kubesched result: expected a list", id="timeline not a list"),
    ],
)
def test_load_result_rejects_what_is_no_result(tmp_path: Path, content: str, message: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("r.json").write_text(content)
    with pytest.raises(ConfigError) as e:
        metrics.load_result("r.json")
    assert str(e.value).startswith(message)


def test_load_result_accepts_a_result(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(RESULT))
    assert metrics.load_result(str(path)) == RESULT
