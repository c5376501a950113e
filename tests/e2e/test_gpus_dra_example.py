"""examples/scenarios/gpus-dra.yaml: GPUs through DRA end to end (fake cluster, resourceclaim
controller, DynamicResources, the structured allocator, CEL on capacity)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched import cli

EXAMPLE = Path(__file__).parents[2] / "examples" / "scenarios" / "gpus-dra.yaml"


def run(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert cli.main(["simulate", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    result: dict[str, Any] = json.loads(out)
    return result


def test_gpus_dra_example(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys)
    placed = {p["name"]: p["nodeName"] for p in result["pods"]}
    assert placed == {
        "train": "gpu-h",
        "train-sidecar": "gpu-h",
        "eval-1": "gpu-a",
        "eval-2": "gpu-a",
        "big": None,
    }
    big = next(p for p in result["pods"] if p["name"] == "big")
    assert big["conditions"][0]["message"] == (
        "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    claims = {c["name"]: c for c in result["claims"]}
    shared = claims["train-gpu"]
    assert [r["name"] for r in shared["reservedFor"]] == ["train", "train-sidecar"]
    assert [(d["pool"], d["device"]) for d in shared["allocation"]["devices"]] == [
        ("gpu-h", "gpu-0")
    ]
    assert claims["big-gpus"]["allocation"] is None
    generated = [c for name, c in claims.items() if name.startswith("eval-")]
    assert sorted(d["pool"] for c in generated for d in c["allocation"]["devices"]) == [
        "gpu-a",
        "gpu-a",
    ]
    devices = {(d["pool"], d["device"]) for c in generated for d in c["allocation"]["devices"]}
    assert len(devices) == 2  # never the same device twice


def test_gpus_dra_example_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    first = run(capsys)
    second = run(capsys)
    assert first["claims"] == second["claims"]


def test_explain_shows_the_allocator_verdict_per_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["simulate", str(EXAMPLE), "--explain"]) == 0
    (tmp_path / "r.json").write_text(capsys.readouterr().out)
    assert cli.main(["explain", str(tmp_path / "r.json"), "default/big"]) == 0
    out = capsys.readouterr().out
    assert out.endswith(
        "Devices (DynamicResources' allocator, per node, at the last attempt that asked it):\n"
        "  cannot allocate all claims: 3 nodes: cpu-1, gpu-a, gpu-h\n"
    )
    assert cli.main(["explain", str(tmp_path / "r.json"), "default/train-sidecar"]) == 0
    out = capsys.readouterr().out
    assert out.endswith(
        "Devices (DynamicResources' allocator, per node, at the last attempt that asked it):\n"
        "  the claims can be allocated on 1 node: gpu-h\n"
        "  resourceclaim not available on the node: 2 nodes: cpu-1, gpu-a\n"
        "ResourceClaims reserved for the pod at the end of the run:\n"
        "  train-gpu: gpu.example.com/gpu-h/gpu-0 (request gpu); reserved for train, train-sidecar\n"
    )
