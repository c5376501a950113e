"""Storage end to end through ``simulate`` with the default profile: zones, node affinity, attach limits, ReadWriteOncePod.

- A StatefulSet of 3 over three zones with a WaitForFirstConsumer class: kube-scheduler spreads
  the set's pods over the zones (PodTopologySpread's default constraints take the set's selector)
  and the PV controller provisions each claim in its pod's zone.
- A pod whose bound PV lives in zone-a never lands in zone-b, even when zone-a is full.
- A node at its CSI attach limit is skipped, with upstream's message when nothing else fits.
- Two pods with one ReadWriteOncePod claim: one runs, the other stays pending.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from kubesched.scenario import load_manifests
from kubesched.simulation import simulate

pytestmark = pytest.mark.anyio

ZONE = "topology.kubernetes.io/zone"
DRIVER = "disk.csi.example.com"


def node(name: str, zone: str = "", cpu: str = "8") -> str:
    labels = f"kubernetes.io/hostname: {name}" + (f", {ZONE}: {zone}" if zone else "")
    return f"""
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{{labels}}}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 32Gi, pods: "110"}}}}
"""


def csinode(name: str, count: int) -> str:
    return f"""
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {{name: {name}}}
spec: {{drivers: [{{name: {DRIVER}, nodeID: {name}, topologyKeys: [{ZONE}], allocatable: {{count: {count}}}}}]}}
"""


def storage_class(name: str, mode: str) -> str:
    return f"""
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {name}}}
provisioner: {DRIVER}
volumeBindingMode: {mode}
"""


def claim(name: str, cls: str, mode: str = "ReadWriteOnce", volume: str = "") -> str:
    bound = f", volumeName: {volume}" if volume else ""
    return f"""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}}}
spec: {{accessModes: [{mode}], storageClassName: "{cls}"{bound}, resources: {{requests: {{storage: 1Gi}}}}}}
"""


def pod(name: str, claim_name: str, cpu: str = "1", extra: str = "", annotations: str = "{}") -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {annotations}}}
spec:
  {extra or "priority: 0"}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
  volumes: [{{name: d, persistentVolumeClaim: {{claimName: {claim_name}}}}}]
"""


async def run(*docs: str, seed: int = 1) -> dict[str, Any]:
    manifests = load_manifests(["storage.yaml"], texts={"storage.yaml": "---".join(docs)})
    result = await simulate(manifests, seed=seed, until=3600)
    return result.to_json_obj()


def placed(out: dict[str, Any]) -> dict[str, str | None]:
    return {p["name"]: p["nodeName"] for p in out["pods"]}


def failed(out: dict[str, Any], name: str) -> list[str]:
    return [e["message"] for e in out["events"] if e["reason"] == "FailedScheduling" and e["object"] == f"default/{name}"]


STATEFUL_SET = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], storageClassName: zonal, resources: {requests: {storage: 10Gi}}}
"""


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
async def test_a_stateful_set_over_three_zones_with_wait_for_first_consumer_volumes(seed: int) -> None:
    zones = {f"{z}{i}": f"zone-{z}" for z in "abc" for i in (1, 2)}
    out = await run(
        *(node(n, z) for n, z in zones.items()),
        *(csinode(n, 16) for n in zones),
        storage_class("zonal", "WaitForFirstConsumer"),
        STATEFUL_SET,
        seed=seed,
    )
    where = placed(out)
    assert sorted(where) == ["web-0", "web-1", "web-2"] and None not in where.values()
    # the set's selector makes the system default constraints apply (zone maxSkew 5, hostname
    # maxSkew 3, ScheduleAnyway): every replica in its own zone
    assert Counter(zones[n] for n in where.values() if n) == {"zone-a": 1, "zone-b": 1, "zone-c": 1}
    # OrderedReady: each pod is created once the one before it runs; claims before pods
    creates = [e["message"] for e in out["events"] if e["reason"] == "SuccessfulCreate"]
    assert creates == [
        msg
        for i in range(3)
        for msg in (
            f"create Claim data-web-{i} Pod web-{i} in StatefulSet web success",
            f"create Pod web-{i} in StatefulSet web successful",
        )
    ]
    # each volume was provisioned after the scheduler picked the node (PreBind's selected-node
    # annotation), and the pod bound at PreBind's next poll, one second later
    provisioned = {e["object"]: e["time"] for e in out["events"] if e["reason"] == "ProvisioningSucceeded"}
    scheduled = {e["object"]: e["time"] for e in out["events"] if e["reason"] == "Scheduled"}
    for i in range(3):
        assert scheduled[f"default/web-{i}"] == provisioned[f"default/data-web-{i}"] + 1.0


BOUND_IN_ZONE_A = f"""
apiVersion: v1
kind: PersistentVolume
metadata: {{name: pv-a}}
spec:
  capacity: {{storage: 1Gi}}
  accessModes: [ReadWriteOnce]
  csi: {{driver: {DRIVER}, volumeHandle: h-a}}
  claimRef: {{namespace: default, name: data}}
  nodeAffinity: {{required: {{nodeSelectorTerms: [{{matchExpressions: [{{key: {ZONE}, operator: In, values: [zone-a]}}]}}]}}}}
"""


async def test_a_pod_whose_volume_is_in_zone_a_never_lands_in_zone_b() -> None:
    out = await run(
        node("a1", "zone-a", cpu="2"),
        node("b1", "zone-b", cpu="8"),
        BOUND_IN_ZONE_A,
        claim("data", "", volume="pv-a"),
        pod("small", "data", cpu="1"),
        pod("big", "data", cpu="3"),
    )
    assert placed(out) == {"small": "a1", "big": None}
    assert failed(out, "big") == [
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match PersistentVolume's node affinity. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    ]


async def test_a_node_at_its_csi_attach_limit_is_skipped() -> None:
    docs = (
        node("n1"),
        node("n2", cpu="1"),
        csinode("n1", 1),
        csinode("n2", 4),
        storage_class("fast", "WaitForFirstConsumer"),
        claim("c1", "fast"),
        claim("c2", "fast"),
        claim("c3", "fast"),
        pod("first", "c1", extra="nodeName: n1"),
    )
    # n1 has room for the pod and would win on resources, but its one attachment is taken
    out = await run(*docs, pod("second", "c2", annotations="{kubesched.io/arrival: 10s}"))
    assert placed(out) == {"first": "n1", "second": "n2"}
    # forced onto n1: pending with upstream's reason
    out = await run(*docs, pod("third", "c3", extra="nodeSelector: {kubernetes.io/hostname: n1}"))
    assert placed(out)["third"] is None
    assert failed(out, "third") == [
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) exceed max volume count. preemption: 0/2 nodes are available: "
        "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    ]


async def test_two_pods_with_one_read_write_once_pod_claim() -> None:
    out = await run(
        node("n1"),
        node("n2"),
        storage_class("fast", "Immediate"),
        claim("solo", "fast", mode="ReadWriteOncePod"),
        pod("writer-1", "solo", cpu="100m"),
        pod("writer-2", "solo", cpu="100m"),
    )
    where = placed(out)
    assert where["writer-1"] is not None and where["writer-2"] is None
    assert failed(out, "writer-2") == [
        "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with "
        "ReadWriteOncePod access mode already in-use by another pod. preemption: 0/2 nodes are "
        "available: 2 No preemption victims found for incoming pod."
    ]
