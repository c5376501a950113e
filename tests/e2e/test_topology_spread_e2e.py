"""PodTopologySpread end to end through ``simulate`` with the default profile.

Six pods with a zone constraint (maxSkew 1, DoNotSchedule) land 2/2/2 over three zones although
NodeResourcesFit alone would pile them on the biggest nodes; a pod that would break the skew stays
pending with upstream's message.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from kubesched.scenario import load_manifests
from kubesched.simulation import simulate

pytestmark = pytest.mark.anyio

ZONE = "topology.kubernetes.io/zone"


def node(name: str, zone: str, cpu: str) -> str:
    return f"""
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{kubernetes.io/hostname: {name}, {ZONE}: {zone}}}
status:
  allocatable: {{cpu: "{cpu}", memory: 64Gi, pods: "110"}}
"""


def spread_pod(name: str, cpu: str = "100m", when: str = "DoNotSchedule") -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: web}}
spec:
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: {ZONE}
    whenUnsatisfiable: {when}
    labelSelector: {{matchLabels: {{app: web}}}}
  containers:
  - name: c
    image: nginx
    resources: {{requests: {{cpu: "{cpu}"}}}}
"""


async def run(*docs: str) -> dict[str, Any]:
    text = "---".join(docs)
    manifests = load_manifests(["spread.yaml"], texts={"spread.yaml": text})
    result = await simulate(manifests, until=600)
    return result.to_json_obj()


def zones_of(out: dict[str, Any]) -> Counter[str]:
    return Counter(p["nodeName"].split("-")[0] for p in out["pods"] if p["nodeName"])


async def test_six_pods_spread_two_per_zone() -> None:
    nodes = [
        node("za-1", "za", "64"),
        node("za-2", "za", "64"),  # zone a is far bigger: LeastAllocated prefers it
        node("zb-1", "zb", "4"),
        node("zb-2", "zb", "4"),
        node("zc-1", "zc", "4"),
        node("zc-2", "zc", "4"),
    ]
    out = await run(*nodes, *(spread_pod(f"web-{i}") for i in range(6)))
    assert out["summary"]["scheduled"] == 6
    assert zones_of(out) == {"za": 2, "zb": 2, "zc": 2}


async def test_soft_constraint_yields_to_resources() -> None:
    """ScheduleAnyway only scores: with a zone that cannot host pods the others still place them."""
    nodes = [node("za-1", "za", "8"), node("zb-1", "zb", "8"), node("zc-1", "zc", "100m")]
    out = await run(
        *nodes, *(spread_pod(f"web-{i}", cpu="1", when="ScheduleAnyway") for i in range(4))
    )
    assert out["summary"]["scheduled"] == 4
    assert zones_of(out) == {"za": 2, "zb": 2}


async def test_skew_violation_stays_pending_with_upstream_message() -> None:
    # zone b can hold one pod only, so the third pod would make zone a 2 vs zone b 1 → fine,
    # the fourth would make 3 vs 1 → rejected by the spread constraint on za and by cpu on zb.
    nodes = [node("za-1", "za", "8"), node("zb-1", "zb", "1")]
    out = await run(*nodes, *(spread_pod(f"web-{i}", cpu="1") for i in range(4)))
    placed = {p["name"]: p["nodeName"] for p in out["pods"]}
    assert sorted(n for n in placed.values() if n) == ["za-1", "za-1", "zb-1"]
    pending = [name for name, n in placed.items() if n is None]
    assert len(pending) == 1
    messages = {
        e["message"]
        for e in out["events"]
        if e["reason"] == "FailedScheduling" and e["object"] == f"default/{pending[0]}"
    }
    # The pending pod has priority 0 like every pod in its way, and a skew violation is only
    # Unschedulable (upstream filtering.go): DefaultPreemption finds no victims on either node.
    # framework.FitError.Error() (upstream pkg/scheduler/framework/types.go, v1.28+) appends
    # DefaultPreemption's message with " %v": one period, its own.
    assert messages == {
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread "
        "constraints. preemption: 0/2 nodes are available: 2 No preemption victims found for "
        "incoming pod."
    }
