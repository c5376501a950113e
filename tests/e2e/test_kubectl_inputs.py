"""Real inputs through kubectl against the fake API server: strict field validation
as kubectl asks for it, explicit nulls, and a round trip — ``kubectl get ... -o yaml`` of a
served scenario, fed back to ``simulate``, places the pending pods as the scenario does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_kubectl import Kubectl, kubectl, served

from kubesched import cli
from kubesched.transports.apiserver import APIServer

__all__ = ["kubectl", "served"]  # the fixtures, shared with test_kubectl

TYPO = """\
apiVersion: v1
kind: Pod
metadata: {name: typo}
spec:
  nodeSelecter: {disk: ssd}
  containers: [{name: c, image: x, resources: {request: {cpu: "8"}}}]
"""

NULLS = """\
apiVersion: v1
kind: Pod
metadata:
  name: templated
  labels:
  annotations:
spec:
  nodeSelector:
  containers:
  - name: c
    image: x
    resources:
"""


def test_kubectl_create_with_an_unknown_field(kubectl: Kubectl, tmp_path: Path) -> None:
    """kubectl asks for fieldValidation=Strict: the API server's 400, every unknown field named;
    --validate=warn: created, one Warning per field (the server's Warning headers)."""
    path = tmp_path / "typo.yaml"
    path.write_text(TYPO)
    proc = kubectl("create", "-f", str(path), check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f'Error from server (BadRequest): error when creating "{path}": Pod in version "v1" cannot be '
        'handled as a Pod: strict decoding error: unknown field "spec.containers[0].resources.request", '
        'unknown field "spec.nodeSelecter"'
    )
    proc = kubectl("create", "-f", str(path), "--validate=warn")
    assert proc.stdout.strip() == "pod/typo created"
    assert proc.stderr.splitlines() == [
        'Warning: unknown field "spec.containers[0].resources.request"',
        'Warning: unknown field "spec.nodeSelecter"',
    ]
    kubectl("delete", "pod", "typo", "--wait=false")


def test_kubectl_create_with_explicit_nulls(kubectl: Kubectl, tmp_path: Path) -> None:
    path = tmp_path / "nulls.yaml"
    path.write_text(NULLS)
    assert kubectl("create", "-f", str(path)).stdout.strip() == "pod/templated created"
    pod = json.loads(kubectl("get", "pod", "templated", "-o", "json").stdout)
    assert "labels" not in pod["metadata"] and pod["spec"]["containers"][0]["resources"] == {}
    kubectl("delete", "pod", "templated", "--wait=false")


SCENARIO = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: rt-n1, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: rt-n2, labels: {topology.kubernetes.io/zone: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: rt-web, namespace: rt}
spec: {minAvailable: 1, selector: {matchLabels: {app: rt-web}}}
---
apiVersion: v1
kind: Pod
metadata: {name: rt-a-web, namespace: rt, labels: {app: rt-web}}
spec: {nodeName: rt-n1, priorityClassName: low, containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: rt-b-batch, namespace: rt}
spec: {nodeName: rt-n2, priorityClassName: low, containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: rt-c-pending, namespace: rt}
spec: {priorityClassName: low, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: rt-d-spread, namespace: rt, labels: {app: spread}}
spec:
  priorityClassName: low
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: spread}}}
  containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: rt-e-urgent, namespace: rt}
spec: {priorityClassName: high, containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}
"""


def _placements(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str | None]:
    capsys.readouterr()
    assert cli.main(["simulate", str(path), "--output", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    return {p["name"]: p["nodeName"] for p in out["pods"] if p["namespace"] == "rt" and not p["deleted"]}


def test_round_trip_of_a_kubectl_export(
    kubectl: Kubectl, served: APIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The scenario served (no scheduler runs: the pending pods stay pending), exported with
    ``kubectl get nodes,pods,pdb,priorityclasses -A -o yaml`` (status, uids, resourceVersions,
    managedFields, defaults and all), simulated: the same placements, preemption included."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    kubectl("create", "namespace", "rt")
    kubectl("create", "-f", str(scenario))
    export = tmp_path / "export.yaml"
    export.write_text(kubectl("get", "nodes,pods,pdb,priorityclasses", "-A", "-o", "yaml").stdout)
    assert export.read_text().startswith("apiVersion: v1\nitems:\n")
    nodes = json.loads(kubectl("get", "nodes", "-o", "json").stdout)["items"]
    names = {n["metadata"]["name"] for n in nodes}
    # the served cluster holds the other tests' objects too: compare the scenario's pods
    original = _placements(scenario, capsys)
    assert original["rt-e-urgent"] is not None  # it preempted
    exported = _placements(export, capsys)
    assert {"rt-n1", "rt-n2"} <= names
    assert exported == original
    kubectl("delete", "namespace", "rt", "--wait=false", check=False)
