"""examples/scenarios/gang-upstream.yaml (issue 36 item 6): a PodGroup of 4 preempts two batch
pods and starts all 4 at one instant, the same bytes on asyncio and trio."""

from __future__ import annotations

import json
from pathlib import Path

from kubesched.simulation import Simulation

EXAMPLE = Path(__file__).parents[2] / "examples" / "scenarios" / "gang-upstream.yaml"
GATES = "GenericWorkload=true,GangScheduling=true"


def test_the_training_podgroup_preempts_both_batch_pods_and_starts_at_one_instant() -> None:
    out = {b: Simulation.load([str(EXAMPLE)], feature_gates=GATES).run_in_virtual_time(b).to_json() for b in ("asyncio", "trio")}
    assert out["asyncio"] == out["trio"]
    doc = json.loads(out["trio"])
    pods = {p["name"]: p for p in doc["pods"]}
    assert pods["batch-a"]["deleted"] and pods["batch-b"]["deleted"]
    starts = {pods[f"train-{i}"]["scheduledAt"] for i in range(4)}
    assert len(starts) == 1 and None not in starts
    victims = {e["object"] for e in doc["events"] if e["reason"] == "Preempted"}
    assert victims == {"default/batch-a", "default/batch-b"}
    assert {e["time"] for e in doc["events"] if e["reason"] == "Preempted"} == {10.0}  # both in one cycle
    assert doc["podGroups"][0]["conditions"] == [
        {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled", "message": ""}
    ]


def test_explain_shows_the_groups_decision(tmp_path: Path) -> None:
    from kubesched.reporting import explain

    result = Simulation.load([str(EXAMPLE)], feature_gates=GATES, explain=True).run_in_virtual_time("trio")
    doc = json.loads(result.to_json())
    rows = {p["name"]: p for p in doc["pods"]}
    assert rows["train-1"]["podGroup"] == "train" and "podGroup" not in rows["batch-a"]
    out = tmp_path / "r.json"
    out.write_text(result.to_json())
    text = explain(str(out), "train-1")
    assert "Permit: GangScheduling wait (timeout 5m0s)" in text  # the attempts inside the PodGroup cycle are recorded
    assert text.endswith(
        "PodGroup default/train (gang, minCount 4), scheduled together in the PodGroup cycle:\n"
        "  PodGroupScheduled True Scheduled\n"
    )
