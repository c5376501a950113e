"""PodDisruptionConditions per emulated version: beta on in 1.30 (settable), GA and locked in 1.31
and 1.32, removed from 1.33 (always on).  With it, a preemption victim gets the DisruptionTarget
condition (reason PreemptionByScheduler) before it is deleted (v1.30.6
``framework/preemption/preemption.go`` ``prepareCandidate``); off, it is deleted without one, and
``podTerminatingByPreemption`` counts any terminating pod (v1.30.6 ``default_preemption.go``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.api._objects import ObjectMeta, Pod, PodCondition, PodStatus
from kubesched.cli import main
from kubesched.preemption import pod_terminating_by_preemption

SCENARIO = """\
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
DISRUPTION_TARGET = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                     "message": "default-scheduler: preempting to accommodate a higher priority pod"}  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "condition"),
    [
        pytest.param(("--emulated-version", "1.30"), True, id="1.30 (beta on)"),
        pytest.param(("--emulated-version", "1.30", "--feature-gates", "PodDisruptionConditions=false"), False,
                     id="1.30 with the gate off"),
        pytest.param(("--emulated-version", "1.32"), True, id="1.32 (GA, locked)"),
        pytest.param((), True, id="the default, 1.36 (no gate: always)"),
    ],
)  # fmt: skip
def test_a_victim_gets_disruption_target_per_version(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     flags: tuple[str, ...], condition: bool) -> None:  # fmt: skip
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert main(["simulate", str(path), *flags]) == 0
    pods = {p["name"]: p for p in json.loads(capsys.readouterr().out)["pods"]}
    assert pods["low"]["deleted"] is True
    assert pods["high"]["nodeName"] == "n1"
    assert (DISRUPTION_TARGET in pods["low"]["conditions"]) is condition
    assert all(c["type"] != "DisruptionTarget" for c in pods["low"]["conditions"]) is not condition


@pytest.mark.parametrize(
    ("version", "text", "error"),
    [
        pytest.param("1.31", "PodDisruptionConditions=false",
                     "cannot set feature gate PodDisruptionConditions to false, feature is locked to true", id="1.31"),
        pytest.param("1.33", "PodDisruptionConditions=true", "unrecognized feature gate: PodDisruptionConditions",
                     id="1.33 (removed)"),
    ],
)  # fmt: skip
def test_the_gate_per_version(tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, text: str,
                              error: str) -> None:  # fmt: skip
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert main(["simulate", str(path), "--emulated-version", version, "--feature-gates", text]) == 2
    assert capsys.readouterr().err == f"kubesched: error: --feature-gates: {error}\n"


def test_default_preemption__podTerminatingByPreemption_without_the_gate() -> None:
    """v1.30.6: without PodDisruptionConditions a terminating pod counts whatever its conditions."""
    terminating = Pod(metadata=ObjectMeta(name="v", deletion_timestamp="2026-01-01T00:00:00Z"))
    assert pod_terminating_by_preemption(terminating, False)
    assert not pod_terminating_by_preemption(terminating, True)
    marked = Pod(metadata=terminating.metadata, status=PodStatus(conditions=[
        PodCondition(type="DisruptionTarget", status="True", reason="PreemptionByScheduler")]))  # fmt: skip
    assert pod_terminating_by_preemption(marked, True)
    assert not pod_terminating_by_preemption(Pod(metadata=ObjectMeta(name="running")), False)
