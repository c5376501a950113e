"""VolumeAttributesClass per version (alpha off 1.30, beta off 1.31-1.33, GA on 1.34, locked
1.36): a claim binds only a volume of its volumeAttributesClassName (component-helpers v0.31+
``FindMatchingVolume``, VolumeBinding's and the PV controller's), the field is checked where the
gate keeps it and dropped where it does not, and a provisioned volume takes its claim's class."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubesched.cli import main
from kubesched.config._versions import Version, default_feature_gates
from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
"""
PV_GOLD = """\
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-gold}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  volumeAttributesClassName: gold
  csi: {driver: disk.example.com, volumeHandle: gold}
  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]}}
"""
CLAIM_AND_POD = """\
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 1Gi}}%s}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: pause}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
"""
NO_VOLUME = ("0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind. preemption: 0/1 "
             "nodes are available: 1 Preemption is not helpful for scheduling.")  # fmt: skip


def simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *flags: str) -> dict[str, Any]:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert main(["simulate", str(path), *flags]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.parametrize(
    ("claim_vac", "flags", "placed"),
    [
        pytest.param("", (), False, id="1.36: a claim of no class does not take a gold volume"),
        pytest.param(", volumeAttributesClassName: gold", (), True, id="1.36: a gold claim takes it"),
        pytest.param(", volumeAttributesClassName: silver", (), False, id="1.36: a silver claim does not"),
        pytest.param(", volumeAttributesClassName: silver", ("--emulated-version", "1.34"), False, id="1.34 (GA, on)"),
        pytest.param(", volumeAttributesClassName: silver", ("--emulated-version", "1.33"), True,
                     id="1.33 (beta, off): both fields dropped on create"),
        pytest.param(", volumeAttributesClassName: silver",
                     ("--emulated-version", "1.33", "--feature-gates", "VolumeAttributesClass=true"), False,
                     id="1.33 turned on"),
        pytest.param(", volumeAttributesClassName: silver",
                     ("--emulated-version", "1.30", "--feature-gates", "VolumeAttributesClass=true"), True,
                     id="1.30 turned on: v0.30.6 FindMatchingVolume has no check"),
    ],
)  # fmt: skip
def test_a_claim_binds_a_volume_of_its_class(tmp_path: Path, capsys: pytest.CaptureFixture[str], claim_vac: str,
                                             flags: tuple[str, ...], placed: bool) -> None:  # fmt: skip
    result = simulate(tmp_path, capsys, NODE + PV_GOLD + CLAIM_AND_POD % claim_vac, *flags)
    (pod,) = result["pods"]
    assert pod["nodeName"] == ("n1" if placed else None)
    if not placed:
        assert pod["conditions"][0]["message"] == NO_VOLUME


@pytest.mark.parametrize(
    ("text", "error"),
    [
        pytest.param(NODE + PV_GOLD.replace("  csi: {driver: disk.example.com, volumeHandle: gold}\n", "  hostPath: {path: /d}\n"),
                     "document 3 (PersistentVolume pv-gold), spec.csi: Required value: has to be specified when using "
                     "volumeAttributesClassName", id="a volume of a class needs a CSI source"),
        pytest.param(NODE + PV_GOLD.replace("volumeAttributesClassName: gold", 'volumeAttributesClassName: ""'),
                     "document 3 (PersistentVolume pv-gold), spec.volumeAttributesClassName: Required value: an empty "
                     "string is disallowed", id="a volume's class is not empty"),
        pytest.param(NODE + CLAIM_AND_POD % ", volumeAttributesClassName: Gold_1",
                     'document 3 (PersistentVolumeClaim data), spec.volumeAttributesClassName: Invalid value: '
                     '"Gold_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' '
                     "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                     "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                     id="a claim's class is a name"),
    ],
)  # fmt: skip
def test_the_field_is_checked_where_the_gate_keeps_it(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                                      error: str) -> None:  # fmt: skip
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert main(["simulate", str(path)]) == 2
    assert capsys.readouterr().err == f"kubesched: error: {path}: {error}\n"
    # 1.33: the API server drops the field before it validates
    assert main(["simulate", str(path), "--emulated-version", "1.33"]) == 0


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.anyio
@pytest.mark.parametrize(("version", "kept"), [(Version(1, 33), False), (Version(1, 34), True)], ids=str)
async def test_the_api_server_drops_the_field_with_the_gate_off(version: Version, kept: bool) -> None:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                      "volumeAttributesClassName": "gold"}}  # fmt: skip
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"replicas": 0, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "pause"}]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": claim["spec"]}]}}  # fmt: skip
    async with (
        FakeCluster(epoch=epoch) as cluster,
        APIServer(cluster, emulated_version=version, feature_gates=default_feature_gates(version)) as server,
        httpx.AsyncClient(base_url=server.url, timeout=10) as c,
    ):
        r = await c.post("/api/v1/namespaces/default/persistentvolumeclaims", json=claim)
        assert r.status_code == 201, r.text
        assert ("volumeAttributesClassName" in r.json()["spec"]) is kept
        r = await c.post("/apis/apps/v1/namespaces/default/statefulsets", json=sts)
        assert r.status_code == 201, r.text
        (tmpl,) = r.json()["spec"]["volumeClaimTemplates"]
        assert ("volumeAttributesClassName" in tmpl["spec"]) is kept
