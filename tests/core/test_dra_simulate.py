"""DRA objects through ``kubesched simulate``: manifests into the fake cluster, the
resourceclaim controller's claims, and the JSON report's ``claims`` (added to DESIGN §8's
contract only when a run has claims: a run without them writes the same bytes as before)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched import cli
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


# --- a DeviceClass the input does not have ---------------------------------------------------------
# upstream's API server does not look the class up (pkg/apis/resource/validation/validation.go,
# v1.35.4): a scenario file naming one is refused by kubesched's input check alone

_CLAIM_DOCS = MANIFESTS.split("---\napiVersion: v1\nkind: Pod")[0]


@pytest.mark.parametrize(
    ("edit", "line"),
    [
        pytest.param(
            ("{name: gpu, exactly: {deviceClassName: gpu.example.com}}]\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim",
             "{name: gpu, exactly: {deviceClassName: tpu.example.com}}]\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim"),
            "in.yaml: document 4 (ResourceClaimTemplate one-gpu), spec.spec.devices.requests[0].exactly.deviceClassName: "
            'Not found: "tpu.example.com": no DeviceClass of this name in the input',
            id="template",
        ),
        pytest.param(
            ("metadata: {name: shared}\nspec:\n  devices:\n    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]",
             "metadata: {name: shared}\nspec:\n  devices:\n    requests: [{name: gpu, firstAvailable: "
             "[{name: a, deviceClassName: gpu.example.com}, {name: b, deviceClassName: nic}]}]"),
            "in.yaml: document 5 (ResourceClaim shared), spec.devices.requests[0].firstAvailable[1].deviceClassName: "
            'Not found: "nic": no DeviceClass of this name in the input',
            id="claim-firstAvailable",
        ),
    ],
)
def test_unknown_device_class_is_one_line_and_exit_2(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], edit: tuple[str, str], line: str
) -> None:
    text = _CLAIM_DOCS.replace(*edit)
    assert text != _CLAIM_DOCS
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.yaml").write_text(text)
    code = cli.main(["simulate", "in.yaml"])
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", f"kubesched: error: {line}\n")


def test_a_device_class_arriving_later_is_accepted() -> None:
    """A class created after the claim is a cluster's ordinary order (the pod waits for it): only
    a class named nowhere in the input is refused."""
    later = MANIFESTS.replace("metadata: {name: gpu.example.com}", "metadata: {name: gpu.example.com, annotations: {kubesched.io/arrival: 30s}}")
    out = run(later)
    # its one device is the shared claim's: train waits for the class, then for a device
    assert [(e["time"], e["message"].split(". ")[0]) for e in out["events"]] == [  # type: ignore[attr-defined]
        (0.0, "0/1 nodes are available: request gpu: device class gpu.example.com does not exist"),
        (30.0, "0/1 nodes are available: 1 cannot allocate all claims"),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_unknown_device_class_through_the_api_is_the_schedulers_reason() -> None:
    """The fake cluster (as the fake API server and the live transport) accepts a claim whose
    class does not exist, as upstream's API server; the scheduler's PreFilter then says so
    (dynamicresources.go v1.35.4: ``request %s: device class %s does not exist``)."""
    from kubesched.testing import make_node, make_pod, scheduler_for
    from kubesched.testing_dra import make_claim

    async with scheduler_for([make_node("n1").obj()]) as sim:
        sim.create(make_claim("c").request("missing", name="gpu").obj())
        sim.create(make_pod("p").resource_claim("gpu", claim="c").obj())
        await sim.settle()
        pod = sim.pod("p")
        assert pod is not None and not pod.spec.node_name
        [cond] = [c for c in pod.status.conditions if c.type == "PodScheduled"]
        assert cond.reason == "Unschedulable"
        assert "request gpu: device class missing does not exist" in cond.message


def test_two_runs_in_one_process_see_their_own_slices() -> None:
    """A slice of the same name gets the same uid and resourceVersion in every run; the second
    run's allocator must not answer with the first run's verdicts (CEL, kept outcomes)."""
    docs = MANIFESTS.split("---\n")
    keep = [d for d in docs if "name: shared" not in d and "name: running" not in d]
    text = "---\n".join(keep).replace(
        "selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]",
        "selectors: [{cel: {expression: \"device.attributes['gpu.example.com'].model == 'H100'\"}}]",
    )
    assert "H100" in text and "shared" not in text

    def node_of_train(t: str) -> object:
        return next(p for p in run(t)["pods"] if p["name"] == "train")["nodeName"]  # type: ignore[attr-defined]

    assert node_of_train(text) is None  # an A100: not selected
    assert node_of_train(text.replace("model: {string: A100}", "model: {string: H100}")) == "n1"


RULE_V1ALPHA3 = """\
---
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: maintenance}
spec:
  deviceSelector: {driver: gpu.example.com, pool: n1}
  taint: {key: example.com/maintenance, effect: NoSchedule}
"""


@pytest.mark.parametrize(
    ("gates", "placed"),
    [
        pytest.param("DRADeviceTaints=true,DRADeviceTaintRules=true", False, id="rules applied"),
        pytest.param("DRADeviceTaints=true", True, id="DRADeviceTaintRules off"),
    ],
)
def test_a_v1alpha3_device_taint_rule_at_1_35(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], gates: str, placed: bool
) -> None:
    """A scenario takes a DeviceTaintRule as 1.35 serves it (resource.k8s.io/v1alpha3); with
    DRADeviceTaintRules the tracker taints the pool's device and train cannot have it."""
    docs = [d for d in MANIFESTS.split("---\n") if "name: shared" not in d and "name: running" not in d]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.yaml").write_text("---\n".join(docs) + RULE_V1ALPHA3)
    code = cli.main(["simulate", "in.yaml", "--emulated-version", "1.35", "--feature-gates", gates])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    train = next(p for p in json.loads(out)["pods"] if p["name"] == "train")
    assert (train["nodeName"] == "n1") is placed
    if not placed:
        assert "cannot allocate all claims" in train["conditions"][0]["message"]
