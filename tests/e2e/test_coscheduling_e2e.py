"""Coscheduling end to end: PodGroup manifests through ``simulate`` with a Coscheduling profile.

A group whose members all fit binds them all; a group whose members cannot all fit binds none
(the members that fit wait on Permit and are rejected when a sibling fits nowhere).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config._config import parse_config
from kubesched.scenario import load_manifests
from kubesched.simulation import simulate

pytestmark = pytest.mark.anyio

CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
            },
            "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}],
        }
    ],
}


def node(name: str, cpu: str) -> str:
    return f"""
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status:
  allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}
"""


def pod_group(name: str, min_member: int) -> str:
    return f"""
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: {name}}}
spec: {{minMember: {min_member}}}
"""


def member(name: str, group: str, cpu: str) -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{scheduling.x-k8s.io/pod-group: {group}}}
spec:
  containers:
  - name: c
    image: pause
    resources: {{requests: {{cpu: "{cpu}"}}}}
"""


async def run(*docs: str) -> dict[str, Any]:
    text = "---".join(docs)
    manifests = load_manifests(["gang.yaml"], texts={"gang.yaml": text})
    result = await simulate(manifests, parse_config(CONFIG), until=600)
    return result.to_json_obj()


def placements(out: dict[str, Any]) -> dict[str, str | None]:
    return {p["name"]: p["nodeName"] for p in out["pods"]}


async def test_group_that_fits_binds_every_member() -> None:
    out = await run(
        node("n1", "2"),
        node("n2", "2"),
        pod_group("gang", 3),
        member("w0", "gang", "1"),
        member("w1", "gang", "1"),
        member("w2", "gang", "1"),
    )
    placed = placements(out)
    assert set(placed) == {"w0", "w1", "w2"}
    assert all(placed.values()), placed
    assert out["summary"]["scheduled"] == 3
    scheduled = [e for e in out["events"] if e["reason"] == "Scheduled"]
    assert {e["object"] for e in scheduled} == {"default/w0", "default/w1", "default/w2"}
    # All three bind together, once the third one completes the quorum.
    assert len({e["time"] for e in scheduled}) == 1


async def test_group_that_cannot_fit_binds_none() -> None:
    out = await run(
        node("n1", "1"),
        node("n2", "1"),
        pod_group("gang", 3),
        member("w0", "gang", "1"),
        member("w1", "gang", "1"),
        member("w2", "gang", "1"),
    )
    placed = placements(out)
    assert placed == {"w0": None, "w1": None, "w2": None}
    assert out["summary"]["scheduled"] == 0
    messages = {e["message"] for e in out["events"] if e["reason"] == "FailedScheduling"}
    # Both PostFilter plugins fail: RunPostFilterPlugins joins their reasons with ", "; then
    # framework.FitError.Error() (upstream pkg/scheduler/framework/types.go, v1.28+) appends the
    # whole PostFilter message with " %v": Coscheduling's "... even after PostFilter" ends in no
    # period, DefaultPreemption's (a FitError text) keeps its own before the ", ".
    optimistic = "0/1 nodes are available: 1 optimistic rejection in PostFilter."
    assert messages == {
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod., PodGroup default/gang gets rejected "
        f"due to Pod {w} is unschedulable even after PostFilter"
        for w in ("w1", "w2")
    } | {optimistic}
    # the member waiting at Permit, rejected by the group's PostFilter: a FitError of one node
    assert optimistic in messages, messages


async def test_group_missing_members_waits_in_pre_filter() -> None:
    out = await run(node("n1", "4"), pod_group("gang", 3), member("w0", "gang", "1"))
    assert placements(out) == {"w0": None}
    messages = [e["message"] for e in out["events"] if e["reason"] == "FailedScheduling"]
    # PreFilter fails (UnschedulableAndUnresolvable: no preemption); PostFilter still rejects
    # the group, which then waits for a new member (Pod Add) or a PodGroup change.
    assert messages == [
        "0/1 nodes are available: pre-filter pod w0 cannot find enough sibling pods, "
        "current pods number: 1, minMember of group: 3. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling., "
        "PodGroup default/gang gets rejected due to Pod w0 is unschedulable even after PostFilter"
    ]
