"""``kubesched snapshot`` of a cluster with DRA objects: DeviceClasses, ResourceSlices,
DeviceTaintRules, ResourceClaimTemplates and ResourceClaims are read (after the storage kinds,
before the workloads and pods), reduced, and ``simulate`` of the snapshot ends with the claims
as ``simulate`` of the original does (an allocated claim reserved for its running pod, the
claim generated for a pending pod kept with its owner and the pod's resourceClaimStatuses)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import pytest
import yaml

from kubesched import cli
from kubesched.scenario import load_manifests
from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {model: {string: A100}}
    taints: [{key: example.com/hot, effect: NoSchedule, timeAdded: "2024-01-01T00:00:00Z"}]
  - name: gpu-1
---
apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata: {name: maintenance}
spec:
  deviceSelector: {driver: gpu.example.com, device: gpu-1}
  taint: {key: example.com/maintenance, effect: NoSchedule}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, finalizers: [resource.kubernetes.io/delete-protection]}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]
---
apiVersion: v1
kind: Pod
metadata: {name: running}
spec:
  nodeName: n1
  resourceClaims: [{name: gpu, resourceClaimName: shared}]
  containers: [{name: c, resources: {claims: [{name: gpu}]}}]
---
apiVersion: v1
kind: Pod
metadata: {name: train}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: c, resources: {claims: [{name: gpu}]}}]
"""


@asynccontextmanager
async def serving(scenario: Path) -> AsyncIterator[APIServer]:
    manifests = load_manifests([str(scenario)])
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    async with FakeCluster(epoch=epoch) as cluster:
        for m in manifests:
            cluster.create(m.obj)
        async with APIServer(cluster) as server:
            yield server


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def claims(capsys: pytest.CaptureFixture[str], path: Path) -> list[dict[str, Any]]:
    code, out, err = run_cli(capsys, "simulate", str(path))
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)["claims"]
    for row in rows:
        row["name"] = re.sub(r"-[bcdfghjklmnpqrstvwxz2456789]{5}$", "-xxxxx", row["name"])
        for ref in row["reservedFor"]:
            ref.pop("uid")
    return rows


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_snapshot_keeps_the_dra_objects(backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    snap = tmp_path / "snap.yaml"
    with (
        anyio.from_thread.start_blocking_portal(backend) as portal,
        portal.wrap_async_context_manager(serving(scenario)) as server,
    ):
        code, out, err = run_cli(capsys, "snapshot", "--server", server.url, "-o", str(snap), "--backend", backend)
    assert code == 0, err
    assert err.splitlines() == [
        "kubesched: snapshot: wrote 1 Node, 2 Pods (1 pending), 1 DeviceClass, 1 ResourceSlice, 1 DeviceTaintRule, "
        f"1 ResourceClaimTemplate, 2 ResourceClaims to {snap}"
    ]
    docs = [d for d in yaml.safe_load_all(snap.read_text()) if d]
    assert [d["kind"] for d in docs] == ["Node", "DeviceClass", "ResourceSlice", "DeviceTaintRule",
                                         "ResourceClaimTemplate", "ResourceClaim", "ResourceClaim", "Pod", "Pod"]
    by_name = {d["metadata"]["name"]: d for d in docs}
    shared = by_name["shared"]
    assert shared["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert shared["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    assert "reservedFor" not in shared["status"]  # reserved again for "running" when it is created
    train = by_name["train"]
    generated = train["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    assert by_name[generated]["metadata"]["ownerReferences"][0]["uid"] == train["metadata"]["uid"]
    assert by_name["maintenance"].get("status") is None
    assert by_name["maintenance"]["spec"]["taint"]["timeAdded"] <= "2024-01-01T00:00:00Z"  # shifted: never later
    # the snapshot simulates to the same claims as the scenario it was served from
    assert claims(capsys, snap) == claims(capsys, scenario)


def test_device_taint_rules_of_a_1_35_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A cluster without DeviceTaintRule's first version (1.33-1.35 serve v1alpha3 only) has
    its rules read in v1alpha3: here the first version is one no server serves."""
    import dataclasses

    from kubesched.snapshot import _snapshot

    kinds = tuple(
        dataclasses.replace(k, api_version="resource.k8s.io/v1beta9") if k.kind == "DeviceTaintRule" else k
        for k in _snapshot.KINDS
    )
    assert any(k.kind == "DeviceTaintRule" and k.fallback == "resource.k8s.io/v1alpha3" for k in kinds)
    monkeypatch.setattr(_snapshot, "KINDS", kinds)
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    snap = tmp_path / "snap.yaml"
    with (
        anyio.from_thread.start_blocking_portal("asyncio") as portal,
        portal.wrap_async_context_manager(serving(scenario)) as server,
    ):
        code, _, err = run_cli(capsys, "snapshot", "--server", server.url, "-o", str(snap))
    assert code == 0, err
    assert "1 DeviceTaintRule" in err
    docs = [d for d in yaml.safe_load_all(snap.read_text()) if d]
    [rule] = [d for d in docs if d["kind"] == "DeviceTaintRule"]
    assert rule["metadata"]["name"] == "maintenance"
