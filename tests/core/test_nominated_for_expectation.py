"""NominatedNodeNameForExpectation (alpha 1.34, beta on 1.35) and ClearingNominatedNodeNameAfterBinding
(alpha 1.34, beta on 1.35), per emulated version.

With the first gate the binding cycle starts by writing the chosen node as the pod's
``status.nominatedNodeName`` when it will wait at Permit or a PreBind plugin will act
(PreBindPreFlight Success: here VolumeBinding with a WaitForFirstConsumer claim to bind); with
the second the API server clears it when it binds the pod.  Before 1.35 neither happens: the
binding cycle writes nothing, and a pod bound after a nomination (preemption) keeps it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.cli import main
from kubesched.runtime._cyclestate import CycleState
from kubesched.runtime._status import Code, Status
from kubesched.scheduler._expectation import run_pre_bind_pre_flights

DRIVER = "csi.example.com"
STORAGE = f"""\
apiVersion: v1
kind: Node
metadata: {{name: n1, labels: {{kubernetes.io/hostname: n1}}}}
status: {{allocatable: {{cpu: "8", memory: 32Gi, pods: "110"}}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: wffc}}
provisioner: {DRIVER}
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data}}
spec: {{accessModes: [ReadWriteOnce], storageClassName: wffc, resources: {{requests: {{storage: 1Gi}}}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]
  volumes: [{{name: d, persistentVolumeClaim: {{claimName: data}}}}]
"""


def _simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *flags: str) -> dict[str, Any]:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert main(["simulate", str(path), *flags]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.parametrize(
    ("flags", "nominated"),
    [
        pytest.param(("--emulated-version", "1.34"), None, id="1.34: neither gate"),
        pytest.param(("--emulated-version", "1.34", "--feature-gates", "NominatedNodeNameForExpectation=true"), "n1",
                     id="1.34, the scheduler writes it and nothing clears it"),
        pytest.param(("--emulated-version", "1.34", "--feature-gates",
                      "NominatedNodeNameForExpectation=true,ClearingNominatedNodeNameAfterBinding=true"), None,
                     id="1.34, both gates: written, then cleared at binding"),
        pytest.param((), None, id="the default, 1.36: written, then cleared at binding"),
    ],
)  # fmt: skip
def test_a_pod_whose_prebind_will_act_is_nominated_first(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         flags: tuple[str, ...], nominated: str | None) -> None:  # fmt: skip
    (pod,) = _simulate(tmp_path, capsys, STORAGE, *flags)["pods"]
    assert pod["nodeName"] == "n1"
    assert pod["nominatedNodeName"] == nominated


PREEMPTION = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: high, annotations: {kubesched.io/arrival: 5s}}
spec:
  priorityClassName: high
  containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]
"""


@pytest.mark.parametrize(("version", "kept"), [("1.32", "n1"), ("1.34", "n1"), ("1.35", None), ("1.36", None)])
def test_a_preemptor_keeps_its_nomination_after_binding_before_1_35(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, kept: str | None
) -> None:
    pods = {p["name"]: p for p in _simulate(tmp_path, capsys, PREEMPTION, "--emulated-version", version)["pods"]}
    assert pods["high"]["nodeName"] == "n1"
    assert pods["high"]["nominatedNodeName"] == kept


class _Plugin:
    def __init__(self, name: str, answer: Status | None) -> None:
        self.name, self.answer = name, answer

    def pre_bind_pre_flight(self, state: Any, pod: Any, node_name: str) -> Status | None:
        return self.answer


class _Entry:
    def __init__(self, plugin: _Plugin) -> None:
        self.name, self.plugin = plugin.name, plugin


class _Calls:
    @staticmethod
    def call(e: Any, what: str, fn: Any, *args: Any) -> Any:
        return fn(*args)


class _Framework:
    def __init__(self, *answers: Status | None) -> None:
        self.binding = type("B", (), {})()
        self.binding.pre_bind = [_Entry(_Plugin(f"P{i}", a)) for i, a in enumerate(answers)]
        self.binding.pre_flights = [(e, e.plugin.pre_bind_pre_flight) for e in self.binding.pre_bind]
        self.binding.calls = _Calls()


@pytest.mark.parametrize(
    ("answers", "want"),
    [
        pytest.param((), "skip", id="no PreBind plugin with a pre-flight: Skip"),
        pytest.param((Status.skip(), Status.skip()), "skip", id="all Skip"),
        pytest.param((Status.skip(), None), None, id="one Success: Success"),
        pytest.param((Status(Code.ERROR, "boom"),), 'running PreBindPreFlight "P0": boom', id="an Error"),
        pytest.param((Status.unschedulable("no"),), "which is unsupported", id="a rejection is an Error"),
    ],
)  # fmt: skip
def test_framework__RunPreBindPreFlights(answers: tuple[Status | None, ...], want: str | None) -> None:
    st = run_pre_bind_pre_flights(_Framework(*answers), CycleState(), None, "n1")  # type: ignore[arg-type]
    if want is None:
        assert st is None
    elif want == "skip":
        assert st is not None and st.is_skip()
    else:
        assert st is not None and st.code == Code.ERROR and want in st.message


CLAIM = """\
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
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
"""


@pytest.mark.parametrize(
    ("flags", "nominated"),
    [
        pytest.param(("--emulated-version", "1.34"), None, id="1.34: no pre-flight"),
        pytest.param(("--emulated-version", "1.34", "--feature-gates", "NominatedNodeNameForExpectation=true"), "n1",
                     id="1.34 with the gate: DynamicResources' pre-flight says its PreBind will act"),
    ],
)  # fmt: skip
def test_a_pod_with_a_claim_to_write_is_nominated_first(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       flags: tuple[str, ...], nominated: str | None) -> None:  # fmt: skip
    """DynamicResources' PreBindPreFlight (v1.34, kubernetes#132391): Success when the pod has
    claims (PreBind writes them), Skip without."""
    (pod,) = _simulate(tmp_path, capsys, CLAIM, *flags)["pods"]
    assert pod["nodeName"] == "n1"
    assert pod["nominatedNodeName"] == nominated
