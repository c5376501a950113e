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
