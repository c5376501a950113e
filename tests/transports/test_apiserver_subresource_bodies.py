"""A subresource's body is checked against its own kind: a pod's binding takes a v1 Binding (the
body kube-scheduler's default binder sends), a ReplicaSet's scale an autoscaling/v1 Scale, a
status a whole object of the resource's kind — each with ``fieldValidation=Strict`` as the API
server's strict decoder answers it."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

PODS = "/api/v1/namespaces/default/pods"
RSS = "/apis/apps/v1/namespaces/default/replicasets"
STRICT = {"fieldValidation": "Strict"}
NO_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # plain HTTP: no CA bundle to load

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with (
        FakeCluster(epoch=epoch, default_grace_seconds=0) as cluster,
        APIServer(cluster) as srv,
        httpx.AsyncClient(base_url=srv.url, timeout=10, verify=NO_TLS) as c,
    ):
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                "status": {"capacity": {"cpu": "4", "pods": "110"}}}  # fmt: skip
        assert (await c.post("/api/v1/nodes", json=node)).status_code == 201
        yield c


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "pause"}]}}  # fmt: skip


def binding(created: httpx.Response, **extra: Any) -> dict[str, Any]:
    """k8s.io/api core/v1 Binding as the default binder builds it (defaultbinder.Bind: the pod's
    namespace, name and uid, the target node) for the pod ``created`` answered."""
    assert created.status_code == 201, created.text
    meta = created.json()["metadata"]
    return {"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": "default", "uid": meta["uid"]},
            "target": {"kind": "Node", "name": "n1"}, **extra}  # fmt: skip


async def test_upstream_binding_body_binds_strictly_and_without_warnings(client: httpx.AsyncClient) -> None:
    body = binding(await client.post(PODS, json=pod("p")))
    r = await client.post(f"{PODS}/p/binding", json=body, params=STRICT)
    assert r.status_code == 201, r.text
    assert "warning" not in r.headers
    r = await client.post(f"{PODS}/p/binding", json=body)  # Warn (the default): a conflict, no warning
    assert r.status_code == 409 and "warning" not in r.headers


async def test_a_binding_with_an_unknown_field_is_refused_as_a_binding(client: httpx.AsyncClient) -> None:
    body = binding(await client.post(PODS, json=pod("p")), spec={})
    r = await client.post(f"{PODS}/p/binding", json=body, params=STRICT)
    assert r.status_code == 400
    assert r.json()["message"] == (
        'Binding in version "v1" cannot be handled as a Binding: strict decoding error: unknown field "spec"'
    )
    r = await client.post(f"{PODS}/p/binding", json=body)
    assert r.status_code == 201
    assert r.headers["warning"] == '299 - "unknown field \\"spec\\""'


async def test_a_scale_is_checked_as_a_scale(client: httpx.AsyncClient) -> None:
    rs = {"metadata": {"name": "web"},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "c", "image": "pause"}]}}}}  # fmt: skip
    assert (await client.post(RSS, json=rs)).status_code == 201
    scale = (await client.get(f"{RSS}/web/scale")).json()
    scale["spec"] = {"replicas": 2}
    r = await client.put(f"{RSS}/web/scale", json=scale, params=STRICT)
    assert r.status_code == 200, r.text
    assert "warning" not in r.headers and r.json()["spec"] == {"replicas": 2}
    scale = r.json() | {"spec": {"replicas": 3, "paused": True}}
    r = await client.put(f"{RSS}/web/scale", json=scale, params=STRICT)
    assert r.status_code == 400
    assert r.json()["message"] == (
        'Scale in version "v1" cannot be handled as a Scale: strict decoding error: unknown field "spec.paused"'
    )


async def test_a_status_is_checked_as_its_resource(client: httpx.AsyncClient) -> None:
    created = (await client.post(PODS, json=pod("p"))).json()
    created["status"] = {"phase": "Running", "bogus": 1}
    r = await client.put(f"{PODS}/p/status", json=created, params=STRICT)
    assert r.status_code == 400
    assert r.json()["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "status.bogus"'
    )


# --- eviction: a policy/v1 Eviction, as kubectl drain and the eviction API send it -----------


def eviction(name: str, **delete_options: Any) -> dict[str, Any]:
    """k8s.io/api policy/v1 Eviction as kubectl drain builds it (drain.EvictPod: its name and
    namespace, its DeleteOptions), encoded as client-go encodes it."""
    return {"kind": "Eviction", "apiVersion": "policy/v1",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": None},
            "deleteOptions": delete_options}  # fmt: skip


async def running(client: httpx.AsyncClient, name: str, **labels: str) -> None:
    body = pod(name) | {"metadata": {"name": name, "labels": labels}}
    created = await client.post(PODS, json=body)
    r = await client.post(f"{PODS}/{name}/binding", json=binding(created), params=STRICT)
    assert r.status_code == 201, r.text


async def test_upstream_eviction_body_evicts_strictly(client: httpx.AsyncClient) -> None:
    await running(client, "p")
    r = await client.post(f"{PODS}/p/eviction", json=eviction("p", gracePeriodSeconds=30), params=STRICT)
    assert r.status_code == 201, r.text
    assert "warning" not in r.headers
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    gone = (await client.get(f"{PODS}/p")).json()
    assert gone["metadata"]["deletionGracePeriodSeconds"] == 30  # terminating, as the options say
    assert {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
            "message": "Eviction API: evicting"}.items() <= gone["status"]["conditions"][-1].items()  # fmt: skip


async def test_an_eviction_is_checked_as_an_eviction(client: httpx.AsyncClient) -> None:
    await running(client, "p")
    r = await client.post(f"{PODS}/p/eviction", json=eviction("p") | {"spec": {}}, params=STRICT)
    assert r.status_code == 400
    assert r.json()["message"] == (
        'Eviction in version "v1" cannot be handled as a Eviction: strict decoding error: unknown field "spec"'
    )
    r = await client.post(f"{PODS}/p/eviction", json=eviction("q"))
    assert (r.status_code, r.json()["message"]) == (400, "name in URL does not match name in Eviction object")
    r = await client.post(f"{PODS}/p/eviction", json=eviction("p"), params={"dryRun": "All"})
    assert r.status_code == 201
    assert "deletionTimestamp" not in (await client.get(f"{PODS}/p")).json()["metadata"]  # only checked
    r = await client.post(f"{PODS}/nope/eviction", json=eviction("nope"))
    assert (r.status_code, r.json()["message"]) == (404, 'pods "nope" not found')


async def test_an_eviction_respects_the_pods_disruption_budget(client: httpx.AsyncClient) -> None:
    """pkg/registry/core/pod/storage/eviction.go: one disruption allowed, then 429 with the
    budget's numbers; a Pending pod is evicted whatever its budget says."""
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}  # fmt: skip
    r = await client.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", json=pdb)
    assert r.status_code == 201, r.text
    for name in ("a", "b"):
        await running(client, name, app="web")
    r = await client.post(f"{PODS}/a/eviction", json=eviction("a"), params=STRICT)
    assert r.status_code == 201, r.text
    r = await client.post(f"{PODS}/b/eviction", json=eviction("b"), params=STRICT)
    assert r.status_code == 429
    assert r.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
        "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget",
                                "message": "The disruption budget web needs 1 healthy pods and has 1 currently"}]},
        "code": 429,
    }  # fmt: skip
    assert "deletionTimestamp" not in (await client.get(f"{PODS}/b")).json()["metadata"]
    created = await client.post(PODS, json=pod("c") | {"metadata": {"name": "c", "labels": {"app": "web"}}})
    assert created.status_code == 201
    r = await client.post(f"{PODS}/c/eviction", json=eviction("c"))  # Pending: no budget to check
    assert r.status_code == 201
    assert (await client.get(f"{PODS}/c")).status_code == 404


async def test_upstream_status_body_is_accepted_strictly(client: httpx.AsyncClient) -> None:
    """A Deployment's status as kube-controller-manager's UpdateStatus sends it: the whole
    object, its status with every field the controller writes; only the status is taken."""
    deps = "/apis/apps/v1/namespaces/default/deployments"
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "image": "pause"}]}}}}  # fmt: skip
    created = (await client.post(deps, json=dep)).json()
    now = created["metadata"]["creationTimestamp"]
    body = (await client.get(f"{deps}/web")).json()
    body["status"] = {
        "observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1,
        "unavailableReplicas": 0, "collisionCount": 0, "terminatingReplicas": 0,
        "conditions": [{"type": "Available", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
                        "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."}],
    }  # fmt: skip
    body["spec"]["replicas"] = 5  # not taken by a status write
    r = await client.put(f"{deps}/web/status", json=body, params=STRICT)
    assert r.status_code == 200, r.text
    assert "warning" not in r.headers
    out = r.json()
    assert out["spec"]["replicas"] == 1 and out["metadata"]["generation"] == 1
    assert int(out["metadata"]["resourceVersion"]) > int(body["metadata"]["resourceVersion"])


TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


async def test_deployments_and_statefulsets_print_ready_of_desired(client: httpx.AsyncClient) -> None:
    """``kubectl get deploy`` / ``get sts`` columns as printers.go's printDeployment and
    printStatefulSet: Ready is readyReplicas/replicas (``0/2`` before any pod is ready)."""
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}
    spec = {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template}
    apps = "/apis/apps/v1/namespaces/default"
    assert (await client.post(f"{apps}/deployments", json={"metadata": {"name": "web"}, "spec": spec})).status_code == 201
    sts = {"metadata": {"name": "db"}, "spec": {**spec, "serviceName": "db"}}
    assert (await client.post(f"{apps}/statefulsets", json=sts)).status_code == 201
    deploy = (await client.get(f"{apps}/deployments", headers={"accept": TABLE})).json()
    assert [c["name"] for c in deploy["columnDefinitions"]] == ["Name", "Ready", "Up-to-date", "Available", "Age"]
    name, ready, updated, available, _ = deploy["rows"][0]["cells"]
    assert (name, ready.split("/")[1]) == ("web", "2") and isinstance(updated, int) and isinstance(available, int)
    table = (await client.get(f"{apps}/statefulsets", headers={"accept": TABLE})).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Ready", "Age"]
    assert table["rows"][0]["cells"][:2][0] == "db" and table["rows"][0]["cells"][1].endswith("/2")
