"""Extended resources backed by DRA end to end (DRAExtendedResource: beta on in 1.36, alpha off
in 1.35): examples/scenarios/gpus-dra-extended-resource.yaml through ``kubesched simulate``, and
the same objects on a fake cluster to read the pod's status and see the claim go with the pod."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched import cli
from kubesched.scenario import load_manifests
from kubesched.testing import scheduler_for

EXAMPLE = Path(__file__).parents[2] / "examples" / "scenarios" / "gpus-dra-extended-resource.yaml"
ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def simulate(capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, Any]:
    assert cli.main(["simulate", str(EXAMPLE), "--output", "json", *flags]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_1_36_places_the_pod_with_a_claim_dra_allocates(capsys: pytest.CaptureFixture[str]) -> None:
    out = simulate(capsys)
    (pod,) = out["pods"]
    assert (pod["name"], pod["nodeName"], pod["phase"]) == ("trainer", "gpu-1", "Running")
    assert [e["reason"] for e in out["events"]] == ["Scheduled"]
    (claim,) = out["claims"]
    assert claim["name"].startswith("trainer-extended-resources-") and len(claim["name"]) == len("trainer-extended-resources-") + 5
    assert [(d["request"], d["pool"], d["device"]) for d in claim["allocation"]["devices"]] == [
        ("container-0-request-1", "gpu-1", "gpu-0")
    ]
    assert [(r["name"], r["uid"]) for r in claim["reservedFor"]] == [("trainer", pod["uid"])]
    assert simulate(capsys)["claims"] == out["claims"]  # deterministic


def test_1_35_gate_off_the_pod_stays_pending(capsys: pytest.CaptureFixture[str]) -> None:
    out = simulate(capsys, "--emulated-version", "1.35")
    (pod,) = out["pods"]
    assert pod["nodeName"] is None
    message = (
        "0/2 nodes are available: 2 Insufficient example.com/gpu. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert pod["conditions"] == [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]
    assert "claims" not in out


def test_1_35_with_the_gate_on_as_1_36(capsys: pytest.CaptureFixture[str]) -> None:
    out = simulate(capsys, "--emulated-version", "1.35", "--feature-gates", "DRAExtendedResource=true")
    assert out["pods"][0]["nodeName"] == "gpu-1"
    assert len(out["claims"]) == 1


def test_1_36_no_device_left(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = EXAMPLE.read_text().replace('example.com/gpu: "1"}', 'example.com/gpu: "3"}')
    path = tmp_path / "three.yaml"
    path.write_text(text)
    assert cli.main(["simulate", str(path), "--output", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pods"][0]["conditions"][0]["message"] == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert "claims" not in out  # nothing written


@pytest.mark.anyio
async def test_pod_status_and_the_claim_going_with_the_pod() -> None:
    objs = [m.obj for m in load_manifests([str(EXAMPLE)])]
    async with scheduler_for(objs) as sim:
        await sim.settle()
        pod = sim.pod("trainer")
        assert pod is not None and pod.spec.node_name == "gpu-1"
        status = pod.status.extended_resource_claim_status
        assert status is not None
        claim = sim.cluster.get("ResourceClaim", "default", status.resource_claim_name)
        assert claim is not None
        assert claim.metadata.annotations == {ANNOTATION: "true"}
        assert claim.metadata.generate_name == "trainer-extended-resources-"
        ref = claim.metadata.owner_references[0]
        assert (ref.kind, ref.name, ref.uid, ref.controller) == ("Pod", "trainer", pod.metadata.uid, True)
        assert [(m.container_name, m.resource_name, m.request_name) for m in status.request_mappings] == [
            ("main", "example.com/gpu", "container-0-request-1")
        ]
        assert [(r.exactly.device_class_name, r.exactly.count) for r in claim.spec.devices.requests] == [("gpu.example.com", 1)]
        await sim.cluster.delete_pod("default", "trainer", grace_seconds=0)
        await sim.settle()
        assert sim.cluster.get("ResourceClaim", "default", status.resource_claim_name) is None


def test_the_claim_goes_when_the_pod_is_done(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the resourceclaim controller: a done pod's claim is unreserved, then deleted (the pod owns it)
    text = EXAMPLE.read_text().replace(
        "metadata: {name: trainer, namespace: default}",
        "metadata: {name: trainer, namespace: default, annotations: {kubesched.io/duration: 10s}}",
    )
    path = tmp_path / "done.yaml"
    path.write_text(text)
    assert cli.main(["simulate", str(path), "--output", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["pods"][0]["nodeName"], out["pods"][0]["phase"]) == ("gpu-1", "Succeeded")
    assert "claims" not in out
