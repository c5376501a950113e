"""The fake API server's table of resources: discovery comes from the rows, and a kind with no
simulation behaviour is served by adding one row (here ConfigMap, Deployment and StorageClass,
added for the test only)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from kubesched.transports.apiserver import APIServer
from kubesched.transports.apiserver import _registry as registry
from kubesched.transports.apiserver._registry import STATUS, ResourceSpec
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

GENERIC = [
    ResourceSpec("", "v1", "configmaps", "ConfigMap", namespaced=True, short_names=("cm",)),
    ResourceSpec(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        namespaced=True,
        short_names=("deploy",),
        categories=("all",),
        subresources=STATUS,
    ),
    ResourceSpec(
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "StorageClass",
        namespaced=False,
        short_names=("sc",),
    ),
]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def generic_rows() -> Iterator[None]:
    registry.RESOURCES.extend(GENERIC)
    registry.reindex()
    try:
        yield
    finally:
        for row in GENERIC:
            registry.RESOURCES.remove(row)
        registry.reindex()


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with (
        FakeCluster(epoch=epoch, default_grace_seconds=0) as cluster,
        APIServer(cluster) as server,
        httpx.AsyncClient(base_url=server.url, timeout=10) as c,
    ):
        yield c


def _prefix(row: ResourceSpec) -> str:
    return f"/apis/{row.group}/{row.version}" if row.group else f"/api/{row.version}"


async def test_discovery_and_openapi_list_every_row(client: httpx.AsyncClient) -> None:
    aggregated: dict[str, Any] = {}
    for path in ("/api", "/apis"):
        doc = (await client.get(path, headers={"accept": AGGREGATED})).json()
        for item in doc["items"]:
            for version in item["versions"]:
                for r in version["resources"]:
                    group = item["metadata"].get("name", "")
                    aggregated[(group, version["version"], r["resource"])] = r
    for row in registry.RESOURCES:
        listed = (await client.get(_prefix(row))).json()["resources"]
        entry = next(r for r in listed if r["name"] == row.plural)
        assert (entry["kind"], entry["namespaced"], entry["singularName"]) == (
            row.kind,
            row.namespaced,
            row.singular,
        )
        assert entry["verbs"] == list(row.verbs)
        assert entry.get("shortNames", []) == list(row.short_names)
        subs = {r["name"] for r in listed if r["name"].startswith(f"{row.plural}/")}
        assert subs == {f"{row.plural}/{s}" for s in row.subresources}
        agg = aggregated[(row.group, row.version, row.plural)]
        assert agg["scope"] == ("Namespaced" if row.namespaced else "Cluster")
        key = f"api/{row.version}" if not row.group else f"apis/{row.group}/{row.version}"
        index = (await client.get("/openapi/v3")).json()["paths"]
        doc = (await client.get(index[key]["serverRelativeURL"])).json()
        assert any(p.endswith(f"/{row.plural}") for p in doc["paths"])


@pytest.mark.usefixtures("generic_rows")
async def test_a_kind_without_behaviour_is_one_row(client: httpx.AsyncClient) -> None:
    groups = {g["name"] for g in (await client.get("/apis")).json()["groups"]}
    assert {"apps", "storage.k8s.io"} <= groups
    core = {r["name"] for r in (await client.get("/api/v1")).json()["resources"]}
    assert "configmaps" in core

    cms = "/api/v1/namespaces/default/configmaps"
    r = await client.post(cms, json={"metadata": {"name": "cfg"}, "data": {"a": "1"}})
    assert r.status_code == 201, r.text
    cm = r.json()
    assert (cm["kind"], cm["apiVersion"], cm["data"]) == ("ConfigMap", "v1", {"a": "1"})
    assert cm["metadata"]["uid"] and cm["metadata"]["creationTimestamp"]
    assert (await client.post(cms, json={"metadata": {"name": "cfg"}})).status_code == 409
    r = await client.patch(
        f"{cms}/cfg",
        content=b'{"data":{"b":"2"}}',
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.json()["data"] == {"a": "1", "b": "2"}
    listed = await client.get("/api/v1/configmaps", params={"fieldSelector": "metadata.name=cfg"})
    assert [i["metadata"]["name"] for i in listed.json()["items"]] == ["cfg"]
    table = (await client.get(cms, headers={"accept": TABLE})).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"][0]["cells"][0] == "cfg"

    deps = "/apis/apps/v1/namespaces/default/deployments"
    rv = (await client.get(deps)).json()["metadata"]["resourceVersion"]
    dep = {"metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {"replicas": 2}}
    assert (await client.post(deps, json=dep)).status_code == 201
    got = (await client.get(f"{deps}/web")).json()
    got["spec"]["replicas"] = 3
    got["status"] = {"replicas": 9}  # ignored: the status subresource owns it
    r = await client.put(f"{deps}/web", json=got)
    assert r.json()["spec"]["replicas"] == 3 and "status" not in r.json()
    r = await client.patch(
        f"{deps}/web/status",
        content=b'{"status":{"readyReplicas":3}}',
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.json()["status"] == {"readyReplicas": 3} and r.json()["spec"]["replicas"] == 3
    params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"}
    async with client.stream("GET", deps, params=params) as stream:
        events = [json.loads(line) async for line in stream.aiter_lines() if line.strip()]
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "MODIFIED"]

    scs = "/apis/storage.k8s.io/v1/storageclasses"
    r = await client.post(scs, json={"metadata": {"name": "fast"}, "provisioner": "x.io/csi"})
    assert r.status_code == 201 and "namespace" not in r.json()["metadata"]
    assert (await client.delete(f"{scs}/fast")).json()["status"] == "Success"
    assert (await client.get(f"{scs}/fast")).status_code == 404

    # a namespace's objects of every kind go with it
    ns = {"metadata": {"name": "team"}}
    assert (await client.post("/api/v1/namespaces", json=ns)).status_code == 201
    assert (
        await client.post("/api/v1/namespaces/team/configmaps", json={"metadata": {"name": "c"}})
    ).status_code == 201
    assert (await client.delete("/api/v1/namespaces/team")).status_code == 200
    assert (await client.get("/api/v1/configmaps")).json()["items"][0]["metadata"]["name"] == "cfg"
    assert len((await client.get("/api/v1/configmaps")).json()["items"]) == 1
