"""The fake cluster's StatefulSet controller: ordered and parallel creation, claims per replica,
scale down from the highest ordinal, deletion, the claim retention policy.  Both backends.

Messages are upstream's ``recordPodEvent`` / ``recordClaimEvent``
(``pkg/controller/statefulset/stateful_pod_control.go``); the cases follow
``stateful_set_control_test.go`` (``TestStatefulSetControl``: CreatesPods, ScalesUp,
ScalesDown, ..., and ``TestStatefulSetControlWithStartOrdinal``)."""

from __future__ import annotations

import anyio
import pytest
from msgspec.structs import replace

from kubesched.api._objects import (
    Binding,
    LabelSelector,
    ObjectMeta,
    ObjectReference,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PodTemplateSpec,
    StatefulSet,
    StatefulSetOrdinals,
    StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetSpec,
    VolumeResourceRequirements,
)
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

NS = "default"


def statefulset(
    name: str = "web", replicas: int = 3, *, policy: str = "OrderedReady", claims: tuple[str, ...] = ("data",),
    retention: tuple[str, str] | None = None, start: int | None = None,
) -> StatefulSet:  # fmt: skip
    """``newStatefulSet``: pods labelled app=<name>, one claim template per name in ``claims``;
    ``retention``: (whenDeleted, whenScaled)."""
    template = make_pod("x").label("app", name).req(cpu="100m").obj()
    return StatefulSet(
        metadata=ObjectMeta(name=name, namespace=NS),
        spec=StatefulSetSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels={"app": name}),
            template=PodTemplateSpec(metadata=ObjectMeta(labels={"app": name}), spec=template.spec),
            volume_claim_templates=[
                PersistentVolumeClaim(
                    metadata=ObjectMeta(name=c, labels={"tier": "db"}),
                    spec=PersistentVolumeClaimSpec(
                        access_modes=["ReadWriteOnce"], storage_class_name="",
                        resources=VolumeResourceRequirements(requests={"storage": "1Gi"}),
                    ),
                )
                for c in claims
            ],
            service_name=name,
            pod_management_policy=policy,
            persistent_volume_claim_retention_policy=(
                StatefulSetPersistentVolumeClaimRetentionPolicy(when_deleted=retention[0], when_scaled=retention[1])
                if retention else None
            ),
            ordinals=StatefulSetOrdinals(start=start) if start is not None else None,
        ),
    )  # fmt: skip


def pods(cluster: FakeCluster) -> list[str]:
    return sorted(p.metadata.name for p in cluster.pods())


def claims(cluster: FakeCluster) -> list[str]:
    return sorted(c.metadata.name for c in cluster.list("PersistentVolumeClaim"))


def set_events(cluster: FakeCluster, name: str = "web") -> list[str]:
    return [e.message for e in cluster.events if e.object == f"{NS}/{name}"]


async def bind(cluster: FakeCluster, *names: str) -> None:
    for name in names:
        await cluster.bind(
            Binding(metadata=ObjectMeta(name=name, namespace=NS), target=ObjectReference(kind="Node", name="n1"))
        )


def scale(cluster: FakeCluster, replicas: int, name: str = "web") -> None:
    ss = cluster.get("StatefulSet", NS, name)
    cluster.update(replace(ss, metadata=replace(ss.metadata, resource_version=""), spec=replace(ss.spec, replicas=replicas)))


async def test_ordered_ready_creates_one_pod_at_a_time_and_waits_for_running() -> None:
    """TestStatefulSetControl/CreatesPods: ordinal i only once 0..i-1 are Running and Ready;
    each pod's claims first."""
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        cluster.create(statefulset())
        assert pods(cluster) == ["web-0"] and claims(cluster) == ["data-web-0"]
        assert set_events(cluster) == [
            "create Claim data-web-0 Pod web-0 in StatefulSet web success",
            "create Pod web-0 in StatefulSet web successful",
        ]
        assert {(e.reason, e.source) for e in cluster.events if e.object == "default/web"} == {
            ("SuccessfulCreate", "statefulset-controller")
        }
        await bind(cluster, "web-0")
        assert pods(cluster) == ["web-0", "web-1"]
        await bind(cluster, "web-1")
        assert pods(cluster) == ["web-0", "web-1", "web-2"]
        assert claims(cluster) == ["data-web-0", "data-web-1", "data-web-2"]
        ss = cluster.get("StatefulSet", NS, "web")
        assert (ss.status.replicas, ss.status.ready_replicas, ss.status.current_replicas) == (3, 2, 3)
        await bind(cluster, "web-2")
        ss = cluster.get("StatefulSet", NS, "web")
        assert (ss.status.replicas, ss.status.ready_replicas, ss.status.available_replicas) == (3, 3, 3)
        assert ss.status.observed_generation == ss.metadata.generation


async def test_the_pod_and_its_claim() -> None:
    """newStatefulSetPod / getPersistentVolumeClaims: identity, storage, owner."""
    async with FakeCluster() as cluster:
        cluster.create(statefulset(replicas=1))
        ss = cluster.get("StatefulSet", NS, "web")
        pod = cluster.get_pod(NS, "web-0")
        assert pod.metadata.labels["app"] == "web"
        assert pod.metadata.labels["statefulset.kubernetes.io/pod-name"] == "web-0"
        assert pod.metadata.labels["apps.kubernetes.io/pod-index"] == "0"
        assert pod.metadata.labels["controller-revision-hash"].startswith("web-")
        assert pod.spec.hostname == "web-0"
        assert [(v.name, v.persistent_volume_claim.claim_name) for v in pod.spec.volumes] == [("data", "data-web-0")]
        [ref] = pod.metadata.owner_references
        assert (ref.kind, ref.name, ref.uid, ref.controller) == ("StatefulSet", "web", ss.metadata.uid, True)
        claim = cluster.get("PersistentVolumeClaim", NS, "data-web-0")
        assert claim.metadata.labels == {"tier": "db", "app": "web"}
        assert claim.metadata.owner_references == []  # the default retention policy: Retain
        assert claim.spec.resources.requests == {"storage": "1Gi"}


async def test_parallel_creates_every_pod_at_once() -> None:
    """TestStatefulSetControl/CreatesPods, Parallel pod management."""
    async with FakeCluster() as cluster:
        cluster.create(statefulset(policy="Parallel", claims=("data", "logs")))
        assert pods(cluster) == ["web-0", "web-1", "web-2"]
        assert set_events(cluster) == [
            m
            for i in range(3)
            for m in (
                f"create Claim data-web-{i} Pod web-{i} in StatefulSet web success",
                f"create Claim logs-web-{i} Pod web-{i} in StatefulSet web success",
                f"create Pod web-{i} in StatefulSet web successful",
            )
        ]


async def test_start_ordinal() -> None:
    """TestStatefulSetControlWithStartOrdinal: ordinals from spec.ordinals.start."""
    async with FakeCluster() as cluster:
        cluster.create(statefulset(replicas=2, policy="Parallel", start=3))
        assert pods(cluster) == ["web-3", "web-4"] and claims(cluster) == ["data-web-3", "data-web-4"]


async def test_scale_down_deletes_the_highest_ordinal_first_and_waits_for_it() -> None:
    """TestStatefulSetControl/ScalesDown: one condemned pod at a time, highest first, each
    after the previous one is gone; the claims stay."""
    async with FakeCluster(default_grace_seconds=30) as cluster:
        cluster.create(statefulset(policy="Parallel"))
        await bind(cluster, "web-0", "web-1", "web-2")
        ss = cluster.get("StatefulSet", NS, "web")
        cluster.update(replace(ss, metadata=replace(ss.metadata, resource_version=""), spec=replace(ss.spec, pod_management_policy="OrderedReady")))
        scale(cluster, 1)
        assert cluster.get_pod(NS, "web-2").metadata.deletion_timestamp is not None
        assert cluster.get_pod(NS, "web-1").metadata.deletion_timestamp is None
        assert set_events(cluster)[-1] == "delete Pod web-2 in StatefulSet web successful"
        await anyio.sleep(31)
        assert pods(cluster) == ["web-0", "web-1"]
        assert cluster.get_pod(NS, "web-1").metadata.deletion_timestamp is not None
        await anyio.sleep(31)
        assert pods(cluster) == ["web-0"]
        assert claims(cluster) == ["data-web-0", "data-web-1", "data-web-2"]
        ss = cluster.get("StatefulSet", NS, "web")
        assert (ss.status.replicas, ss.status.ready_replicas) == (1, 1)
        # scaling up again reuses the surviving claims: no claim event
        scale(cluster, 2)
        assert pods(cluster) == ["web-0", "web-1"]
        assert set_events(cluster)[-1] == "create Pod web-1 in StatefulSet web successful"
        assert "create Claim data-web-1" not in set_events(cluster)[-2]


async def test_parallel_scale_down_deletes_every_condemned_pod_at_once() -> None:
    async with FakeCluster() as cluster:
        cluster.create(statefulset(policy="Parallel"))
        await bind(cluster, "web-0", "web-1", "web-2")
        scale(cluster, 0)
        assert all(p.metadata.deletion_timestamp for p in cluster.pods())
        assert set_events(cluster)[-3:] == [f"delete Pod web-{i} in StatefulSet web successful" for i in (2, 1, 0)]


async def test_ordered_scale_down_waits_for_an_unready_replica() -> None:
    """OrderedReady: condemned pods are deleted only once every replica is Running and Ready."""
    async with FakeCluster() as cluster:
        cluster.create(statefulset(policy="Parallel"))
        await bind(cluster, "web-1", "web-2")  # web-0 never runs
        ss = cluster.get("StatefulSet", NS, "web")
        spec = replace(ss.spec, pod_management_policy="OrderedReady", replicas=1)
        cluster.update(replace(ss, metadata=replace(ss.metadata, resource_version=""), spec=spec))
        assert not any(p.metadata.deletion_timestamp for p in cluster.pods())
        await bind(cluster, "web-0")
        assert cluster.get_pod(NS, "web-2").metadata.deletion_timestamp is not None
        assert cluster.get_pod(NS, "web-1").metadata.deletion_timestamp is None


async def test_a_deleted_pod_is_made_again_with_a_new_uid() -> None:
    """A pod preempted or deleted by hand comes back under its name, with its claims."""
    async with FakeCluster() as cluster:
        cluster.create(statefulset(replicas=1))
        await bind(cluster, "web-0")
        old = cluster.get_pod(NS, "web-0").metadata.uid
        await cluster.delete_pod(NS, "web-0")
        assert cluster.get_pod(NS, "web-0").metadata.deletion_timestamp is not None
        await anyio.sleep(31)
        pod = cluster.get_pod(NS, "web-0")
        assert pod is not None and pod.metadata.uid != old and pod.status.phase == "Pending"
        assert claims(cluster) == ["data-web-0"]


async def test_a_finished_pod_is_deleted_and_made_again() -> None:
    """processReplica: a Succeeded (or Failed) replica is deleted and recreated."""
    async with FakeCluster() as cluster:
        cluster.create(statefulset(replicas=1))
        await bind(cluster, "web-0")
        pod = cluster.get_pod(NS, "web-0")
        cluster.set_pod_phase(pod, "Succeeded")
        new = cluster.get_pod(NS, "web-0")
        assert new.metadata.uid != pod.metadata.uid and new.status.phase == "Pending"
        assert set_events(cluster)[-2:] == [
            "delete Pod web-0 in StatefulSet web successful",
            "create Pod web-0 in StatefulSet web successful",
        ]


async def test_deleting_the_set_deletes_its_pods_and_keeps_the_claims() -> None:
    async with FakeCluster() as cluster:
        cluster.create(statefulset(policy="Parallel"))
        await bind(cluster, "web-0", "web-1", "web-2")
        cluster.delete_object("StatefulSet", NS, "web")
        assert all(p.metadata.deletion_timestamp for p in cluster.pods())
        await anyio.sleep(31)
        assert pods(cluster) == []
        assert claims(cluster) == ["data-web-0", "data-web-1", "data-web-2"]


async def test_retention_when_deleted_delete() -> None:
    """whenDeleted: Delete: the claims are owned by the set and go once their pods are gone."""
    async with FakeCluster() as cluster:
        cluster.create(statefulset(policy="Parallel", retention=("Delete", "Retain")))
        ss = cluster.get("StatefulSet", NS, "web")
        claim = cluster.get("PersistentVolumeClaim", NS, "data-web-0")
        assert [(r.kind, r.name, r.uid) for r in claim.metadata.owner_references] == [("StatefulSet", "web", ss.metadata.uid)]
        await bind(cluster, "web-0", "web-1")  # web-2 stays pending: deleted at once
        cluster.delete_object("StatefulSet", NS, "web")
        assert claims(cluster) == ["data-web-0", "data-web-1"]  # still in use by terminating pods
        await anyio.sleep(31)
        assert pods(cluster) == [] and claims(cluster) == []


async def test_retention_when_scaled_delete() -> None:
    """whenScaled: Delete: a condemned pod's claims get it as their owner and go with it."""
    async with FakeCluster() as cluster:
        cluster.create(statefulset(policy="Parallel", retention=("Retain", "Delete")))
        await bind(cluster, "web-0", "web-1", "web-2")
        assert cluster.get("PersistentVolumeClaim", NS, "data-web-2").metadata.owner_references == []
        scale(cluster, 2)
        pod = cluster.get_pod(NS, "web-2")
        claim = cluster.get("PersistentVolumeClaim", NS, "data-web-2")
        assert [(r.kind, r.name, r.uid) for r in claim.metadata.owner_references] == [("Pod", "web-2", pod.metadata.uid)]
        await anyio.sleep(31)
        assert pods(cluster) == ["web-0", "web-1"]
        assert claims(cluster) == ["data-web-0", "data-web-1"]


async def test_max_pods_refuses_a_stateful_pod() -> None:
    async with FakeCluster(max_pods=2) as cluster:
        cluster.create(statefulset(policy="Parallel"))
        assert pods(cluster) == ["web-0", "web-1"]
        assert cluster.controllers.refused_creates >= 1  # (each sync tries again)
        warning = next(e for e in cluster.events if e.type == "Warning")
        assert (warning.reason, warning.message) == (
            "FailedCreate",
            'create Pod web-2 in StatefulSet web failed error: pods "web-2" is forbidden: the cluster already '
            "holds the most pods it may (2; --max-pods sets it)",
        )


async def test_simulate_reports_stateful_pods_and_the_set_as_a_workload() -> None:
    """``simulate``'s JSON: pods[].owner ``StatefulSet/ns/name`` and a ``workloads`` entry."""
    from kubesched.scenario import Manifest
    from kubesched.simulation import simulate

    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj()
    objs = [(node, "Node"), (statefulset(replicas=2, claims=()), "StatefulSet")]
    manifests = [Manifest(obj, kind, "in.yaml", i + 1, 0.0, i) for i, (obj, kind) in enumerate(objs)]
    result = await simulate(manifests)
    out = result.to_json_obj()
    assert [(p["name"], p["owner"], p["nodeName"]) for p in out["pods"]] == [
        ("web-0", "StatefulSet/default/web", "n1"),
        ("web-1", "StatefulSet/default/web", "n1"),
    ]
    assert out["workloads"] == [
        {"kind": "StatefulSet", "namespace": "default", "name": "web", "createdAt": 0.0, "completedAt": None, "pods": 2}
    ]
