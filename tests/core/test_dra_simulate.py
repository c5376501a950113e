"""DRA objects through ``kubesched simulate``: manifests into the fake cluster, the
resourceclaim controller's claims, and the JSON report's ``claims`` (added to DESIGN §8's
contract only when a run has claims: a run without them writes the same bytes as before)."""

from __future__ import annotations

import json

import pytest

from kubesched.simulation import Simulation

MANIFESTS = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
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
  devices: [{name: gpu-0, attributes: {model: {string: A100}}}]
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
metadata: {name: shared}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]
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


def run(text: str, backend: str = "trio") -> dict[str, object]:
    sim = Simulation.load(["in.yaml"], texts={"in.yaml": text}, seed=1)
    return json.loads(sim.run_in_virtual_time(backend).to_json())  # type: ignore[no-any-return]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_claims_in_the_report(backend: str) -> None:
    out = run(MANIFESTS, backend)
    assert list(out)[-1] == "claims"
    claims = out["claims"]
    running = next(p for p in out["pods"] if p["name"] == "running")  # type: ignore[attr-defined]
    assert claims == [
        {"namespace": "default", "name": "shared",
         "allocation": {"devices": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}],
                        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
         # the controller reserves an allocated claim for a pod created on a node
         "reservedFor": [{"resource": "pods", "name": "running", "uid": running["uid"]}]},
        {"namespace": "default", "name": "train-gpu-" + claims[1]["name"][-5:], "allocation": None, "reservedFor": []},  # type: ignore[index]
    ]


def test_same_seed_same_claim_names() -> None:
    assert run(MANIFESTS)["claims"] == run(MANIFESTS, "asyncio")["claims"]


def test_no_claims_no_key() -> None:
    """A run without claims: the report ends with ``workloads`` as before."""
    out = run(MANIFESTS.split("---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass")[0])
    assert list(out) == ["pods", "events", "summary", "nodes", "timeline", "workloads"]
