"""The status the fake cluster's workload controllers write, as upstream's do: ReplicaSets'
(``calculateStatus``), Deployments' (``calculateStatus``, ``syncRolloutStatus``), Jobs' and
StatefulSets' — readiness from the kubelet's Ready condition, availability after
``minReadySeconds``, written through the status subresource (observedGeneration follows the
generation, which only spec changes bump).  Virtual time, both backends."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from msgspec.structs import replace

from kubesched.api import (
    Binding,
    Deployment,
    DeploymentSpec,
    Job,
    JobSpec,
    LabelSelector,
    ObjectMeta,
    ObjectReference,
    PodTemplateSpec,
    StatefulSet,
    StatefulSetSpec,
)
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

LABELS = {"app": "web"}


def template(**annotations: str) -> PodTemplateSpec:
    pod = make_pod("x").label("app", "web").obj()
    return PodTemplateSpec(metadata=ObjectMeta(labels=dict(LABELS), annotations=annotations), spec=pod.spec)


def deployment(replicas: int, **spec: Any) -> Deployment:
    return Deployment(
        metadata=ObjectMeta(name="web"),
        spec=DeploymentSpec(replicas=replicas, selector=LabelSelector(match_labels=dict(LABELS)), template=template(), **spec),
    )


async def bind_all(cluster: FakeCluster) -> None:
    for p in cluster.pods():
        if not p.spec.node_name:
            await cluster.bind(Binding(metadata=ObjectMeta(name=p.metadata.name, namespace=p.metadata.namespace),
                                       target=ObjectReference(kind="Node", name="n1")))  # fmt: skip


def conditions(obj: Any) -> list[tuple[str, str, str, str]]:
    return [(c.type, c.status, c.reason, c.message) for c in obj.status.conditions]


def condition(obj: Any, type_: str) -> tuple[str, str, str]:
    [c] = [c for c in obj.status.conditions if c.type == type_]
    return c.status, c.reason, c.message


async def test_deployment_status_follows_its_pods_to_available_and_progressed() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        cluster.create(deployment(2))
        [rs] = cluster.list("ReplicaSet")
        d = cluster.get("Deployment", "default", "web")
        name = rs.metadata.name
        assert (d.status.replicas, d.status.updated_replicas, d.status.ready_replicas, d.status.available_replicas) == (2, 2, 0, 0)
        assert d.status.unavailable_replicas == 2 and d.status.observed_generation == 1
        assert conditions(d) == [  # Progressing (NewReplicaSetCreated, then this) set last
            ("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
            ("Progressing", "True", "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.'),
        ]
        assert (rs.status.replicas, rs.status.fully_labeled_replicas, rs.status.ready_replicas) == (2, 2, 0)
        await anyio.sleep(5)
        await bind_all(cluster)
        rs = cluster.get("ReplicaSet", "default", name)
        assert (rs.status.replicas, rs.status.ready_replicas, rs.status.available_replicas, rs.status.observed_generation) == (2, 2, 2, 1)
        d = cluster.get("Deployment", "default", "web")
        assert (d.status.replicas, d.status.updated_replicas, d.status.ready_replicas, d.status.available_replicas) == (2, 2, 2, 2)
        assert conditions(d) == [
            ("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
            ("Progressing", "True", "NewReplicaSetAvailable", f'ReplicaSet "{name}" has successfully progressed.'),
        ]
        progressing = d.status.conditions[1]
        assert progressing.last_update_time == "2024-01-01T00:00:05Z"
        assert progressing.last_transition_time == "2024-01-01T00:00:00Z"  # True all along
        # a status write is no spec change: the generation stays; scaling is one
        assert d.metadata.generation == 1
        cluster.update(replace(d, metadata=replace(d.metadata, resource_version=""), spec=replace(d.spec, replicas=3)))
        d = cluster.get("Deployment", "default", "web")
        assert (d.metadata.generation, d.status.observed_generation, d.status.updated_replicas) == (2, 2, 3)
        # maxUnavailable 25% of 3 is 0: 2 available pods are not enough
        assert condition(d, "Available")[:2] == ("False", "MinimumReplicasUnavailable")
        # a scale is no rollout: with every replica at the new ReplicaSet, progress is not
        # estimated again (syncRolloutStatus's isCompleteDeployment)
        assert condition(d, "Progressing")[1] == "NewReplicaSetAvailable"
        await bind_all(cluster)
        d = cluster.get("Deployment", "default", "web")
        assert d.status.available_replicas == 3
        assert [c[2] for c in conditions(d)] == ["NewReplicaSetAvailable", "MinimumReplicasAvailable"]


async def test_pods_are_available_only_min_ready_seconds_after_ready() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        cluster.create(deployment(1, min_ready_seconds=10))
        await bind_all(cluster)
        [rs] = cluster.list("ReplicaSet")
        assert rs.spec.min_ready_seconds == 10
        assert (rs.status.ready_replicas, rs.status.available_replicas) == (1, 0)
        assert condition(cluster.get("Deployment", "default", "web"), "Available")[1] == "MinimumReplicasUnavailable"
        await anyio.sleep(9.9)
        assert cluster.get("ReplicaSet", "default", rs.metadata.name).status.available_replicas == 0
        await anyio.sleep(0.2)  # the ReplicaSet is synced again once the pod is available
        assert cluster.get("ReplicaSet", "default", rs.metadata.name).status.available_replicas == 1
        d = cluster.get("Deployment", "default", "web")
        assert [c[2] for c in conditions(d)] == ["MinimumReplicasAvailable", "NewReplicaSetAvailable"]


async def test_a_deployment_without_progress_times_out_at_its_deadline() -> None:
    async with FakeCluster() as cluster:  # no node: its pod is never bound
        cluster.create(deployment(1, progress_deadline_seconds=30))
        [rs] = cluster.list("ReplicaSet")
        await anyio.sleep(29)
        assert condition(cluster.get("Deployment", "default", "web"), "Progressing")[1] == "ReplicaSetUpdated"
        await anyio.sleep(2)
        assert condition(cluster.get("Deployment", "default", "web"), "Progressing") == (
            "False", "ProgressDeadlineExceeded", f'ReplicaSet "{rs.metadata.name}" has timed out progressing.',
        )  # fmt: skip


async def test_a_finished_pod_is_not_ready_and_the_job_completes_as_upstream_says() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        spec = JobSpec(completions=1, template=template(**{"kubesched.io/duration": "10s"}))
        cluster.create(Job(metadata=ObjectMeta(name="once"), spec=spec))
        await bind_all(cluster)
        job = cluster.get("Job", "default", "once")
        assert (job.status.active, job.status.ready, job.status.succeeded) == (1, 1, 0)
        [pod] = cluster.pods()
        await anyio.sleep(11)
        pod = cluster.get_pod("default", pod.metadata.name)
        assert pod.status.phase == "Succeeded"
        ready = {c.type: (c.status, c.reason) for c in pod.status.conditions}
        assert ready["Ready"] == ready["ContainersReady"] == ("False", "PodCompleted")
        job = cluster.get("Job", "default", "once")
        assert (job.status.active, job.status.ready, job.status.succeeded) == (0, 0, 1)
        assert job.status.completion_time == "2024-01-01T00:00:10Z" and job.metadata.generation == 1
        assert conditions(job) == [
            ("SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods"),
            ("Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods"),
        ]
        assert [(e.reason, e.message) for e in cluster.events if e.reason == "Completed"] == [("Completed", "Job completed")]


async def test_statefulset_status_names_its_revision() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        spec = StatefulSetSpec(replicas=2, selector=LabelSelector(match_labels=dict(LABELS)), template=template())
        cluster.create(StatefulSet(metadata=ObjectMeta(name="db"), spec=spec))
        for _ in range(2):  # OrderedReady: one pod at a time, each once the one before is Ready
            await bind_all(cluster)
        ss = cluster.get("StatefulSet", "default", "db")
        revision = cluster.get_pod("default", "db-0").metadata.labels["controller-revision-hash"]
        status = ss.status
        assert (status.replicas, status.ready_replicas, status.available_replicas) == (2, 2, 2)
        assert (status.current_replicas, status.updated_replicas, status.observed_generation) == (2, 2, 1)
        assert status.current_revision == status.update_revision == revision
