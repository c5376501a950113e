"""The fake cluster over the Kubernetes REST API: raw HTTP (httpx) and the official Python client,
over real sockets on 127.0.0.1, in real time, on both backends.

Why one file: the fake API server's behaviour verb by verb over one shared server fixture.
"""

from __future__ import annotations

import json
import re
import ssl
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import anyio
import httpx
import pytest

from kubesched import ConflictError, UnavailableError
from kubesched.api._objects import Event, ObjectReference
from kubesched.testing import make_pod
from kubesched.transports.apiserver import APIServer, write_kubeconfig
from kubesched.transports.fake import EventRecord, FakeCluster

pytestmark = [
    pytest.mark.anyio,
    # httpx's aiter_lines() nests async generators (aiter_text, aiter_bytes, ...); closing the outer
    # one early leaves the inner ones to the garbage collector, which trio reports
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <async_generator object:pytest.PytestUnraisableExceptionWarning"
    ),
]

# The fake API server speaks plain HTTP: its clients share a TLS context that loads no CA bundle
# (httpx loads certifi's for every client it builds otherwise, some 40 ms each).
NO_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)

PODS = "/api/v1/namespaces/default/pods"
SMP = {"content-type": "application/strategic-merge-patch+json"}
MERGE = {"content-type": "application/merge-patch+json"}
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Real sockets and real time: the plain backends, not the virtual-time loop."""
    return str(request.param)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
async def server() -> AsyncIterator[APIServer]:
    async with (
        FakeCluster(epoch=_now(), default_grace_seconds=0) as cluster,
        APIServer(cluster, bookmark_interval=0.2) as srv,
    ):
        yield srv


@pytest.fixture
async def client(server: APIServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=10, verify=NO_TLS) as c:
        yield c


def pod(name: str, **spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", {})
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}
            ],
            **spec,
        },
    }
    return body


def node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": {"cpu": "4", "pods": "110"}},
    }


def binding(name: str, node_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name},
        "target": {"kind": "Node", "name": node_name},
    }


def assert_status(
    r: httpx.Response, code: int, reason: str, message: str | None = None
) -> dict[str, Any]:
    assert r.status_code == code, r.text
    body = r.json()
    assert body["kind"] == "Status" and body["apiVersion"] == "v1"
    assert body["status"] == "Failure" and body["code"] == code and body["reason"] == reason
    if message is not None:
        assert body["message"] == message
    return body


class WatchLines:
    """The lines of one streaming watch response, each with a deadline."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines

    @classmethod
    @asynccontextmanager
    async def of(
        cls, client: httpx.AsyncClient, url: str, params: dict[str, str]
    ) -> AsyncIterator[tuple[httpx.Response, WatchLines]]:
        """Open a watch; its line iterator is closed on exit (trio insists)."""
        async with (
            client.stream("GET", url, params=params) as r,
            aclosing(r.aiter_lines()) as lines,
        ):
            yield r, cls(lines)

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while True:
                line = await self._lines.__anext__()
                if line.strip():
                    return json.loads(line)  # type: ignore[no-any-return]

    async def next_not_bookmark(self, timeout: float = 5.0) -> dict[str, Any]:
        while True:
            ev = await self.next(timeout)
            if ev["type"] != "BOOKMARK":
                return ev


# --- discovery, version, openapi -----------------------------------------------------------------


async def test_version_health_and_discovery(client: httpx.AsyncClient) -> None:
    assert (await client.get("/version")).json()["gitVersion"].startswith("v1.32")
    r = await client.get("/healthz")
    assert r.status_code == 200 and r.text == "ok"
    assert (await client.get("/api")).json()["versions"] == ["v1"]
    core = (await client.get("/api/v1")).json()
    names = {r["name"]: r for r in core["resources"]}
    assert {
        "pods",
        "pods/binding",
        "pods/status",
        "nodes",
        "namespaces",
        "events",
        "bindings",
    } <= names.keys()
    assert names["pods"]["namespaced"] and not names["nodes"]["namespaced"]
    assert names["pods"]["shortNames"] == ["po"]
    groups = {g["name"] for g in (await client.get("/apis")).json()["groups"]}
    assert groups == {
        "apps",
        "batch",
        "coordination.k8s.io",
        "events.k8s.io",
        "policy",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "scheduling.x-k8s.io",
        "storage.k8s.io",
    }
    pg = (await client.get("/apis/scheduling.x-k8s.io/v1alpha1")).json()
    assert [r["kind"] for r in pg["resources"] if "/" not in r["name"]] == ["PodGroup"]
    assert (await client.get("/apis/nope.io/v1")).status_code == 404


async def test_aggregated_discovery(client: httpx.AsyncClient) -> None:
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    r = await client.get("/apis", headers={"accept": accept})
    assert (
        r.headers["content-type"]
        == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    )
    doc = r.json()
    assert doc["kind"] == "APIGroupDiscoveryList"
    policy = next(i for i in doc["items"] if i["metadata"]["name"] == "policy")
    pdb = policy["versions"][0]["resources"][0]
    assert pdb["resource"] == "poddisruptionbudgets" and pdb["scope"] == "Namespaced"
    core = (await client.get("/api", headers={"accept": accept})).json()
    pods = next(r for r in core["items"][0]["versions"][0]["resources"] if r["resource"] == "pods")
    assert {s["subresource"] for s in pods["subresources"]} == {"binding", "eviction", "status"}
    [eviction] = [s for s in pods["subresources"] if s["subresource"] == "eviction"]
    assert eviction["responseKind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    assert eviction["verbs"] == ["create"]


async def test_openapi_v3_declares_server_side_field_validation(client: httpx.AsyncClient) -> None:
    index = (await client.get("/openapi/v3")).json()["paths"]
    assert {"api/v1", "apis/policy/v1", "apis/scheduling.x-k8s.io/v1alpha1"} <= index.keys()
    doc = (await client.get(index["api/v1"]["serverRelativeURL"])).json()
    patch = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    assert (await client.get("/openapi/v2")).status_code == 404


# --- create, get, list, update ---------------------------------------------------------------


async def test_create_get_list_and_errors(server: APIServer, client: httpx.AsyncClient) -> None:
    r = await client.post(PODS, json=pod("p1", labels={"app": "web"}))
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["kind"] == "Pod" and created["apiVersion"] == "v1"
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    assert created["status"]["phase"] == "Pending"
    assert server.cluster.get_pod("default", "p1") is not None

    assert_status(
        await client.post(PODS, json=pod("p1")), 409, "AlreadyExists", 'pods "p1" already exists'
    )
    missing = assert_status(
        await client.get(f"{PODS}/nope"), 404, "NotFound", 'pods "nope" not found'
    )
    assert missing["details"] == {"name": "nope", "kind": "pods"}
    assert_status(
        await client.get("/apis/policy/v1/namespaces/default/poddisruptionbudgets/x"),
        404,
        "NotFound",
        'poddisruptionbudgets.policy "x" not found',
    )
    assert_status(
        await client.post(PODS, json={"kind": "Pod", "apiVersion": "v1", "metadata": {}}),
        422,
        "Invalid",
    )
    other_ns = pod("p9")
    other_ns["metadata"]["namespace"] = "elsewhere"
    assert_status(await client.post(PODS, json=other_ns), 400, "BadRequest")

    await client.post(PODS, json=pod("p2", labels={"app": "db"}))
    await client.post("/api/v1/nodes", json=node("n1"))
    lst = (await client.get(PODS)).json()
    assert lst["kind"] == "PodList" and [p["metadata"]["name"] for p in lst["items"]] == [
        "p1",
        "p2",
    ]
    assert lst["metadata"]["resourceVersion"] == server.resource_version
    sel = (await client.get("/api/v1/pods", params={"labelSelector": "app in (web,cache)"})).json()
    assert [p["metadata"]["name"] for p in sel["items"]] == ["p1"]
    await client.post(f"{PODS}/p2/binding", json=binding("p2", "n1"))
    unbound = (await client.get("/api/v1/pods", params={"fieldSelector": "spec.nodeName="})).json()
    assert [p["metadata"]["name"] for p in unbound["items"]] == ["p1"]
    assert_status(await client.get(PODS, params={"labelSelector": "a in b"}), 400, "BadRequest")

    page1 = (await client.get(PODS, params={"limit": 1})).json()
    assert [p["metadata"]["name"] for p in page1["items"]] == ["p1"] and page1["metadata"][
        "continue"
    ]
    page2 = (
        await client.get(PODS, params={"limit": 1, "continue": page1["metadata"]["continue"]})
    ).json()
    assert [p["metadata"]["name"] for p in page2["items"]] == ["p2"] and "continue" not in page2[
        "metadata"
    ]

    nodes = (await client.get("/api/v1/nodes")).json()["items"]
    ready = [c for c in nodes[0]["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True"  # the kubelet emulation reports Ready


async def test_update_conflicts_on_a_stale_resource_version(client: httpx.AsyncClient) -> None:
    await client.post("/api/v1/nodes", json=node("n1"))
    current = (await client.get("/api/v1/nodes/n1")).json()
    stale = json.loads(json.dumps(current))
    current["metadata"]["labels"] = {"zone": "a"}
    r = await client.put("/api/v1/nodes/n1", json=current)
    assert r.status_code == 200 and r.json()["metadata"]["labels"] == {"zone": "a"}
    stale["metadata"]["labels"] = {"zone": "b"}
    body = assert_status(await client.put("/api/v1/nodes/n1", json=stale), 409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on nodes "n1": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


async def test_unknown_priority_class_is_forbidden_by_admission(client: httpx.AsyncClient) -> None:
    body = assert_status(
        await client.post(PODS, json=pod("p", priorityClassName="gold")), 403, "Forbidden"
    )
    assert body["message"] == 'pods "p" is forbidden: no PriorityClass with name gold was found'
    pc = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "gold"},
        "value": 1000,
    }
    assert (
        await client.post("/apis/scheduling.k8s.io/v1/priorityclasses", json=pc)
    ).status_code == 201
    r = await client.post(PODS, json=pod("p", priorityClassName="gold"))
    assert r.status_code == 201 and r.json()["spec"]["priority"] == 1000


# --- PATCH ----------------------------------------------------------------------------------


async def test_patch_kinds(client: httpx.AsyncClient) -> None:
    await client.post(PODS, json=pod("p", labels={"a": "1"}))
    # strategic merge: containers merge by name, a null deletes
    r = await client.patch(
        f"{PODS}/p",
        headers=SMP,
        content=json.dumps(
            {
                "metadata": {"labels": {"a": None, "b": "2"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            }
        ),
    )
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["labels"] == {"b": "2"}
    assert r.json()["spec"]["containers"] == [
        {
            "name": "c",
            "image": "nginx",
            "resources": {"requests": {"cpu": "100m"}},
            # the API server's defaults, kept
            "imagePullPolicy": "Always",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }
    ]
    # JSON merge patch
    r = await client.patch(
        f"{PODS}/p", headers=MERGE, content=json.dumps({"metadata": {"annotations": {"x": "y"}}})
    )
    assert r.json()["metadata"]["annotations"] == {"x": "y"}
    # JSON patch, and a failed test operation
    ops = [
        {"op": "add", "path": "/metadata/labels/c", "value": "3"},
        {"op": "remove", "path": "/metadata/labels/b"},
    ]
    r = await client.patch(
        f"{PODS}/p",
        headers={"content-type": "application/json-patch+json"},
        content=json.dumps(ops),
    )
    assert r.json()["metadata"]["labels"] == {"c": "3"}
    bad = [{"op": "test", "path": "/metadata/labels/c", "value": "4"}]
    r = await client.patch(
        f"{PODS}/p",
        headers={"content-type": "application/json-patch+json"},
        content=json.dumps(bad),
    )
    assert_status(r, 422, "Invalid")
    # the pod spec is immutable but for images, tolerations and scheduling gates
    r = await client.patch(
        f"{PODS}/p", headers=SMP, content=json.dumps({"spec": {"nodeName": "n1"}})
    )
    assert_status(r, 422, "Invalid")
    assert r.json()["message"].startswith(
        'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields'
    )
    # a resourceVersion in a patch is a precondition
    r = await client.patch(
        f"{PODS}/p",
        headers=MERGE,
        content=json.dumps({"metadata": {"resourceVersion": "1", "labels": {"d": "4"}}}),
    )
    assert_status(r, 409, "Conflict")
    assert_status(await client.patch(f"{PODS}/nope", headers=MERGE, content="{}"), 404, "NotFound")
    r = await client.patch(f"{PODS}/p", headers={"content-type": "text/plain"}, content="{}")
    assert_status(r, 415, "UnsupportedMediaType")


async def test_scheduling_gates_can_only_be_removed(client: httpx.AsyncClient) -> None:
    await client.post(PODS, json=pod("p", schedulingGates=[{"name": "a"}, {"name": "b"}]))
    r = await client.patch(
        f"{PODS}/p",
        headers=SMP,
        content=json.dumps({"spec": {"schedulingGates": [{"name": "a", "$patch": "delete"}]}}),
    )
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["schedulingGates"] == [{"name": "b"}]
    r = await client.patch(
        f"{PODS}/p", headers=SMP, content=json.dumps({"spec": {"schedulingGates": [{"name": "c"}]}})
    )
    body = assert_status(r, 422, "Invalid")
    assert "only deletion is allowed, but found new scheduling gate 'c'" in body["message"]


async def test_status_patch_like_the_scheduler_sends(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    await client.post(PODS, json=pod("p"))
    uid = (await client.get(f"{PODS}/p")).json()["metadata"]["uid"]
    # util.PatchPodStatus: a two-way strategic merge patch with the uid as a precondition
    patch = {
        "metadata": {"uid": uid},
        "status": {
            "$setElementOrder/conditions": [{"type": "PodScheduled"}],
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/0 nodes are available.",
                    "lastProbeTime": None,
                    "lastTransitionTime": "2024-01-01T00:00:00Z",
                }
            ],
            "nominatedNodeName": "n1",
        },
        "spec": {"nodeName": "ignored-on-status"},
    }
    r = await client.patch(f"{PODS}/p/status", headers=SMP, content=json.dumps(patch))
    assert r.status_code == 200, r.text
    stored = server.cluster.get_pod("default", "p")
    assert stored is not None
    assert stored.spec.node_name == ""  # status writes never change the spec
    assert stored.status.nominated_node_name == "n1"
    assert [(c.type, c.status, c.reason) for c in stored.status.conditions] == [
        ("PodScheduled", "False", "Unschedulable")
    ]
    # and a status change through the main resource is ignored
    r = await client.patch(
        f"{PODS}/p", headers=MERGE, content=json.dumps({"status": {"nominatedNodeName": "n2"}})
    )
    assert r.json()["status"]["nominatedNodeName"] == "n1"
    patch["metadata"]["uid"] = "other"
    r = await client.patch(f"{PODS}/p/status", headers=SMP, content=json.dumps(patch))
    assert_status(
        r,
        409,
        "Conflict",
        f"Precondition failed: UID in precondition: other, UID in object meta: {uid}",
    )


async def test_server_side_apply_creates_then_merges(client: httpx.AsyncClient) -> None:
    url = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/g"
    applied = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: g\nspec:\n  minMember: 2\n"
    headers = {"content-type": "application/apply-patch+yaml"}
    r = await client.patch(
        url, params={"fieldManager": "kubectl", "force": "false"}, headers=headers, content=applied
    )
    assert r.status_code == 201, r.text
    r = await client.patch(
        url, params={"fieldManager": "kubectl"}, headers=headers, content=applied.replace("2", "3")
    )
    assert r.status_code == 200 and r.json()["spec"]["minMember"] == 3
    # a PodGroup is a custom resource: no strategic merge
    r = await client.patch(url, headers=SMP, content=json.dumps({"spec": {"minMember": 4}}))
    assert_status(r, 415, "UnsupportedMediaType")
    r = await client.patch(url, headers=MERGE, content=json.dumps({"spec": {"minMember": 4}}))
    assert r.json()["spec"]["minMember"] == 4


# --- binding and delete ---------------------------------------------------------------------------


async def test_binding_201_then_409(server: APIServer, client: httpx.AsyncClient) -> None:
    await client.post("/api/v1/nodes", json=node("n1"))
    await client.post(PODS, json=pod("p"))
    r = await client.post(f"{PODS}/p/binding", json=binding("p", "n1"))
    assert r.status_code == 201
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }
    stored = server.cluster.get_pod("default", "p")
    assert stored is not None and stored.spec.node_name == "n1" and stored.status.phase == "Running"
    assert_status(
        await client.post(f"{PODS}/p/binding", json=binding("p", "n2")),
        409,
        "Conflict",
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"',
    )
    assert_status(
        await client.post(f"{PODS}/nope/binding", json=binding("nope", "n1")), 404, "NotFound"
    )
    # the legacy bindings resource
    await client.post(PODS, json=pod("q"))
    r = await client.post("/api/v1/namespaces/default/bindings", json=binding("q", "n1"))
    assert r.status_code == 201
    assert (await client.get(f"{PODS}/q")).json()["spec"]["nodeName"] == "n1"


async def test_injected_bind_failures_become_500_and_503(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    await client.post(PODS, json=pod("p"))
    server.cluster.faults.fail_next("bind", RuntimeError("etcd is on fire"))
    assert_status(
        await client.post(f"{PODS}/p/binding", json=binding("p", "n1")), 500, "InternalError"
    )
    server.cluster.faults.fail_next("bind", UnavailableError)
    assert_status(
        await client.post(f"{PODS}/p/binding", json=binding("p", "n1")), 503, "ServiceUnavailable"
    )
    server.cluster.faults.fail_next("bind", ConflictError("injected"))
    assert_status(await client.post(f"{PODS}/p/binding", json=binding("p", "n1")), 409, "Conflict")
    assert (await client.post(f"{PODS}/p/binding", json=binding("p", "n1"))).status_code == 201


async def test_delete_with_uid_and_resource_version_preconditions(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    await client.post(PODS, json=pod("p"))
    live = (await client.get(f"{PODS}/p")).json()["metadata"]
    r = await client.request("DELETE", f"{PODS}/p", json={"preconditions": {"uid": "someone-else"}})
    assert_status(
        r,
        409,
        "Conflict",
        f"Precondition failed: UID in precondition: someone-else, UID in object meta: {live['uid']}",
    )
    r = await client.request(
        "DELETE", f"{PODS}/p", json={"preconditions": {"resourceVersion": "1"}}
    )
    assert_status(r, 409, "Conflict")
    r = await client.request("DELETE", f"{PODS}/p", json={"preconditions": {"uid": live["uid"]}})
    assert r.status_code == 200 and r.json()["kind"] == "Pod"
    assert server.cluster.get_pod("default", "p") is None
    assert_status(await client.delete(f"{PODS}/p"), 404, "NotFound")
    await client.post("/api/v1/nodes", json=node("n1"))
    r = await client.delete("/api/v1/nodes/n1")
    assert r.json()["status"] == "Success" and r.json()["details"]["name"] == "n1"
    assert_status(await client.delete("/api/v1/namespaces/default"), 403, "Forbidden")


# --- watch ----------------------------------------------------------------------------------------


async def test_watch_from_resource_version_with_bookmarks(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    await client.post("/api/v1/nodes", json=node("n1"))
    await client.post(PODS, json=pod("old"))
    rv = (await client.get(PODS)).json()["metadata"]["resourceVersion"]
    params = {
        "watch": "true",
        "resourceVersion": rv,
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "10",
    }
    async with WatchLines.of(client, "/api/v1/pods", params) as (r, lines):
        assert r.status_code == 200 and r.headers["transfer-encoding"] == "chunked"
        await client.post(PODS, json=pod("p"))
        ev = await lines.next_not_bookmark()
        assert (ev["type"], ev["object"]["metadata"]["name"]) == (
            "ADDED",
            "p",
        )  # not "old": it is before rv
        await client.post(f"{PODS}/p/binding", json=binding("p", "n1"))
        ev = await lines.next_not_bookmark()
        assert ev["type"] == "MODIFIED" and ev["object"]["spec"]["nodeName"] == "n1"
        modified_rv = int(ev["object"]["metadata"]["resourceVersion"])
        await client.request("DELETE", f"{PODS}/p", json={"gracePeriodSeconds": 0})
        ev = await lines.next_not_bookmark()
        assert (
            ev["type"] == "DELETED"
            and int(ev["object"]["metadata"]["resourceVersion"]) > modified_rv
        )
        bookmark = await lines.next()
        assert bookmark["type"] == "BOOKMARK"
        assert bookmark["object"]["kind"] == "Pod" and bookmark["object"]["apiVersion"] == "v1"
        assert int(bookmark["object"]["metadata"]["resourceVersion"]) >= modified_rv + 1


async def test_watch_with_selectors_sees_objects_enter_and_leave(client: httpx.AsyncClient) -> None:
    await client.post(PODS, json=pod("p", labels={"tier": "a"}))
    params = {"watch": "1", "labelSelector": "tier=b", "timeoutSeconds": "10"}
    async with WatchLines.of(client, PODS, params) as (r, lines):
        await client.patch(
            f"{PODS}/p", headers=MERGE, content=json.dumps({"metadata": {"labels": {"tier": "b"}}})
        )
        assert (await lines.next())["type"] == "ADDED"
        await client.patch(
            f"{PODS}/p", headers=MERGE, content=json.dumps({"metadata": {"labels": {"tier": "c"}}})
        )
        ev = await lines.next()
        assert ev["type"] == "DELETED" and ev["object"]["metadata"]["labels"] == {"tier": "b"}


async def test_watch_without_resource_version_starts_with_the_listing(
    client: httpx.AsyncClient,
) -> None:
    await client.post(PODS, json=pod("a"))
    await client.post(PODS, json=pod("b"))
    params = {
        "watch": "true",
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
    }
    async with WatchLines.of(client, PODS, params) as (r, lines):
        assert [(await lines.next())["object"]["metadata"]["name"] for _ in range(2)] == ["a", "b"]
        end = await lines.next()
        assert end["type"] == "BOOKMARK"
        assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_watch_from_a_compacted_version_is_410_gone(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    await client.post(PODS, json=pod("p"))
    rv = int(server.resource_version)
    await client.post(PODS, json=pod("q"))
    server.compact()
    async with WatchLines.of(client, PODS, {"watch": "true", "resourceVersion": str(rv)}) as (
        r,
        lines,
    ):
        assert r.status_code == 200
        ev = await lines.next()
        assert ev["type"] == "ERROR"
        status = ev["object"]
        assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
        assert status["message"] == f"too old resource version: {rv} ({server.resource_version})"
        with pytest.raises(StopAsyncIteration):
            await lines.next()


async def test_history_is_bounded() -> None:
    async with (
        FakeCluster(epoch=_now()) as cluster,
        APIServer(cluster, history_size=3) as srv,
        httpx.AsyncClient(base_url=srv.url, verify=NO_TLS) as c,
    ):
        first = (await c.post(PODS, json=pod("p0"))).json()["metadata"]["resourceVersion"]
        for i in range(1, 5):
            await c.post(PODS, json=pod(f"p{i}"))
        async with WatchLines.of(c, PODS, {"watch": "true", "resourceVersion": first}) as (
            r,
            lines,
        ):
            assert (await lines.next())["object"]["code"] == 410
        recent = str(int(srv.resource_version) - 1)
        async with WatchLines.of(
            c, PODS, {"watch": "true", "resourceVersion": recent, "timeoutSeconds": "1"}
        ) as (r, lines):
            ev = await lines.next()
            assert (ev["type"], ev["object"]["metadata"]["name"]) == ("ADDED", "p4")


async def test_watch_ends_on_timeout_and_on_drop(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    with anyio.fail_after(5):
        async with WatchLines.of(client, PODS, {"watch": "true", "timeoutSeconds": "0.2"}) as (
            r,
            lines,
        ):
            with pytest.raises(StopAsyncIteration):
                await lines.next()
    async with WatchLines.of(
        client, PODS, {"watch": "true", "resourceVersion": server.resource_version}
    ) as (r, lines):
        server.drop_watches()
        with pytest.raises(StopAsyncIteration):
            await lines.next()


async def test_aborted_watch_closes_its_connection_and_the_server_carries_on(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    params = {"watch": "true", "resourceVersion": server.resource_version}
    async with WatchLines.of(client, PODS, params) as (r, lines):
        server.drop_watches(abort=True)
        with pytest.raises(httpx.RemoteProtocolError):
            await lines.next()
    assert (await client.post(PODS, json=pod("p"))).status_code == 201


async def test_a_dropped_cluster_watch_ends_http_watches_and_old_versions_are_gone(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    rv = server.resource_version
    async with WatchLines.of(client, PODS, {"watch": "true", "resourceVersion": rv}) as (r, lines):
        server.cluster.faults.drop_watches()  # the server follows the cluster again...
        server.cluster.create(make_pod("missed").obj())  # ...after a change it never saw
        with pytest.raises(StopAsyncIteration):
            await lines.next()
    async with WatchLines.of(client, PODS, {"watch": "true", "resourceVersion": rv}) as (r, lines):
        assert (await lines.next())["object"]["code"] == 410
    fresh = {"watch": "true", "resourceVersion": server.resource_version, "timeoutSeconds": "5"}
    async with WatchLines.of(client, PODS, fresh) as (r, lines):
        await client.post(PODS, json=pod("q"))
        assert (await lines.next())["object"]["metadata"]["name"] == "q"


async def test_kubelet_and_disruption_controller_changes_reach_watchers(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    """Writes made on the cluster itself (the kubelet, the disruption controller, a test) are
    served too."""
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    await client.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", json=pdb)
    rv = server.resource_version
    params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "10"}
    async with WatchLines.of(client, "/apis/policy/v1/poddisruptionbudgets", params) as (r, lines):
        await client.post(PODS, json=pod("p", labels={"app": "web"}, nodeName="n1"))
        ev = await lines.next()
        assert ev["type"] == "MODIFIED" and ev["object"]["status"]["currentHealthy"] == 1


# --- events, leases, namespaces --------------------------------------------------------------------


async def test_events_are_stored_recorded_and_listed_in_both_groups(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    await client.post(PODS, json=pod("p"))
    uid = (await client.get(f"{PODS}/p")).json()["metadata"]["uid"]
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"generateName": "p."},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "kubesched",
        "reportingInstance": "kubesched-x",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "type": "Warning",
        "regarding": {
            "kind": "Pod",
            "apiVersion": "v1",
            "namespace": "default",
            "name": "p",
            "uid": uid,
        },
        "note": "0/0 nodes are available.",
    }
    r = await client.post("/apis/events.k8s.io/v1/namespaces/default/events", json=event)
    assert r.status_code == 201, r.text
    name = r.json()["metadata"]["name"]
    assert name.startswith("p.") and len(name) == 7
    assert [(e.reason, e.object, e.message) for e in server.cluster.events] == [
        ("FailedScheduling", "default/p", "0/0 nodes are available.")
    ]
    listed = (await client.get("/apis/events.k8s.io/v1/events")).json()
    assert (
        listed["kind"] == "EventList" and listed["items"][0]["note"] == "0/0 nodes are available."
    )
    # kubectl describe pod asks the core group, by involved object
    params = {
        "fieldSelector": f"involvedObject.name=p,involvedObject.namespace=default,involvedObject.uid={uid}"
    }
    core = (await client.get("/api/v1/namespaces/default/events", params=params)).json()
    assert [(e["reason"], e["message"], e["involvedObject"]["name"]) for e in core["items"]] == [
        ("FailedScheduling", "0/0 nodes are available.", "p")
    ]


async def test_events_the_cluster_records_are_served_as_a_core_recorder_writes_them(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    """The fake cluster's controllers record Events as kube-controller-manager's do (client-go's
    core/v1 recorder): first and last seen, count 1, their component as the source."""
    deps = "/apis/apps/v1/namespaces/default/deployments"
    dep = {"metadata": {"name": "web"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}  # fmt: skip
    created = (await client.post(deps, json=dep)).json()
    events = (await client.get("/api/v1/namespaces/default/events")).json()["items"]
    [rs] = server.cluster.list("ReplicaSet")
    by_reason = sorted((e["reason"], e["source"]["component"], e["message"]) for e in events)
    assert by_reason == sorted(
        [
            ("ScalingReplicaSet", "deployment-controller",
             f"Scaled up replica set {rs.metadata.name} to 2"),
            *[("SuccessfulCreate", "replicaset-controller", f"Created pod: {p.metadata.name}")
              for p in server.cluster.pods()],
        ]
    )  # fmt: skip
    scaling = next(e for e in events if e["reason"] == "ScalingReplicaSet")
    seen = scaling["lastTimestamp"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", seen)  # a metav1.Time
    assert scaling["metadata"]["name"].startswith("web.")
    # the event names the Deployment as the controller saw it, created; the answer to the
    # create comes after the controller wrote its status (Progressing NewReplicaSetCreated)
    seen_rv = scaling["involvedObject"]["resourceVersion"]
    assert int(seen_rv) < int(created["metadata"]["resourceVersion"])
    assert "Progressing" in [c["type"] for c in created["status"]["conditions"]]
    created["metadata"]["resourceVersion"] = seen_rv
    assert {k: v for k, v in scaling.items() if k != "metadata"} == {
        "involvedObject": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "namespace": "default",
            "name": "web",
            "uid": created["metadata"]["uid"],
            "resourceVersion": created["metadata"]["resourceVersion"],
        },
        "reason": "ScalingReplicaSet",
        "message": f"Scaled up replica set {rs.metadata.name} to 2",
        "source": {"component": "deployment-controller"},
        "firstTimestamp": seen,
        "lastTimestamp": seen,
        "count": 1,
        "type": "Normal",
        "eventTime": None,
        "reportingComponent": "deployment-controller",
        "reportingInstance": "",
    }
    # the same in events.k8s.io/v1: the core fields are its deprecated ones
    name = scaling["metadata"]["name"]
    new = (await client.get(f"/apis/events.k8s.io/v1/namespaces/default/events/{name}")).json()
    assert (new["deprecatedSource"], new["deprecatedCount"], new["reportingController"]) == (
        {"component": "deployment-controller"}, 1, "deployment-controller"
    )  # fmt: skip
    assert new["deprecatedFirstTimestamp"] == new["deprecatedLastTimestamp"] == seen
    assert new["eventTime"] is None and new["note"] == scaling["message"]

    # a scheduler sending its Events straight to the FakeCluster: its component is the source
    await server.cluster.record_event(
        Event(
            reporting_controller="default-scheduler",
            reporting_instance="kubesched",
            action="Scheduling",
            reason="FailedScheduling",
            type="Warning",
            note="0/0 nodes are available.",
            regarding=ObjectReference(api_version="v1", kind="Pod", namespace="default", name="p"),
        )
    )
    core = (await client.get("/api/v1/namespaces/default/events")).json()["items"]
    failed = [e for e in core if e["reason"] == "FailedScheduling"]
    assert [(e["source"], e["count"], e["message"]) for e in failed] == [
        ({"component": "default-scheduler"}, 1, "0/0 nodes are available.")
    ]
    # one posted through the API is stored as it was sent, once: null timestamps, no source
    # (events.k8s.io/v1 has none; Convert_v1_Event_To_core_Event derives none)
    posted = {
        "metadata": {"name": "p.1"},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "s-1",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "p"},
        "note": "Successfully assigned default/p to n1",
    }
    r = await client.post("/apis/events.k8s.io/v1/namespaces/default/events", json=posted)
    assert r.status_code == 201, r.text
    core = (await client.get("/api/v1/namespaces/default/events")).json()["items"]
    assert len(core) == len(events) + 2
    [scheduled] = [e for e in core if e["reason"] == "Scheduled"]
    assert {k: scheduled[k] for k in ("source", "firstTimestamp", "lastTimestamp", "eventTime",
                                      "reportingComponent", "reportingInstance")} == {
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingComponent": "default-scheduler",
        "reportingInstance": "s-1",
    }  # fmt: skip
    assert "count" not in scheduled


async def test_a_recorded_event_like_an_earlier_one_counts_on_it(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    """client-go's EventLogger: the same source, object, type, reason and message make one
    Event whose count grows and whose lastTimestamp moves; Events at the same instant (a
    virtual clock) still get names of their own."""
    failed = Event(
        reporting_controller="default-scheduler",
        reason="FailedScheduling",
        type="Warning",
        note="0/0 nodes are available.",
        regarding=ObjectReference(api_version="v1", kind="Pod", namespace="default", name="p"),
    )
    await server.cluster.record_event(failed)
    await server.cluster.record_event(failed)
    events = "/api/v1/namespaces/default/events"
    [event] = (await client.get(events)).json()["items"]
    assert (event["count"], event["reason"]) == (2, "FailedScheduling")
    assert event["firstTimestamp"] <= event["lastTimestamp"]
    ref = failed.regarding
    for reason in ("Pulling", "Pulled"):
        server.cluster.events.append(
            EventRecord(1.0, "Normal", reason, "default/p", reason.lower(), regarding=ref,
                        source="kubelet", timestamp="2024-01-01T00:00:01Z")
        )  # fmt: skip
    items = (await client.get(events)).json()["items"]
    names = {e["reason"]: e["metadata"]["name"] for e in items}
    assert names["Pulling"] == f"p.{1704067201 * 10**9:x}"
    assert names["Pulled"] == f"p.{1704067201 * 10**9 + 1:x}"


# --- the scale subresource ----------------------------------------------------------------------

RSS = "/apis/apps/v1/namespaces/default/replicasets"


def replica_set(name: str, replicas: int) -> dict[str, Any]:
    selector = {"matchLabels": {"app": name},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]},
                                     {"key": "canary", "operator": "DoesNotExist"}]}  # fmt: skip
    labels = {"app": name, "tier": "a"}
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": selector,
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "pause"}]},
            },
        },
    }


async def test_scale_subresource(server: APIServer, client: httpx.AsyncClient) -> None:
    """autoscaling/v1 Scale of a ReplicaSet (scaleFromReplicaSet, ValidateScale, and the
    update's preconditions): replicas, status replicas, the selector as a string."""
    created = (await client.post(RSS, json=replica_set("web", 2))).json()
    meta = created["metadata"]
    scale = (await client.get(f"{RSS}/web/scale")).json()
    rv = scale["metadata"]["resourceVersion"]
    assert scale == {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": meta["uid"],
            "resourceVersion": rv,
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": 2},
        "status": {"replicas": 2, "selector": "app=web,!canary,tier in (a,b)"},
    }
    assert rv == (await client.get(f"{RSS}/web")).json()["metadata"]["resourceVersion"]

    r = await client.patch(f"{RSS}/web/scale", headers=MERGE, content=b'{"spec":{"replicas":4}}')
    assert r.status_code == 200, r.text
    assert (r.json()["spec"], r.json()["status"]["replicas"]) == ({"replicas": 4}, 4)
    assert len(server.cluster.pods()) == 4  # the ReplicaSet controller made two more
    rs = (await client.get(f"{RSS}/web")).json()
    assert rs["spec"]["replicas"] == 4 and rs["metadata"]["generation"] == 2

    # PUT: the resourceVersion sent is a precondition, as the uid is
    stale = scale | {"spec": {"replicas": 1}}
    assert_status(
        await client.put(f"{RSS}/web/scale", json=stale),
        409,
        "Conflict",
        'Operation cannot be fulfilled on replicasets.apps "web": the object has been modified; '
        "please apply your changes to the latest version and try again",
    )
    other_uid = scale | {"metadata": scale["metadata"] | {"resourceVersion": "", "uid": "u"}}
    assert_status(
        await client.put(f"{RSS}/web/scale", json=other_uid),
        409,
        "Conflict",
        f'Operation cannot be fulfilled on replicasets/scale.apps "web": Precondition failed: '
        f"UID in precondition: u, UID in object meta: {meta['uid']}",
    )
    negative = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"},
                "spec": {"replicas": -1}}  # fmt: skip
    body = assert_status(
        await client.put(f"{RSS}/web/scale", json=negative),
        422,
        "Invalid",
        'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: '
        "must be greater than or equal to 0",
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: -1: must be greater than or equal to 0",
            "field": "spec.replicas",
        }
    ]
    undecodable = 'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal '
    for bad, message in (
        (negative | {"spec": {"replicas": "3"}},
         undecodable + "string into Go struct field ScaleSpec.spec.replicas of type int32"),
        (negative | {"spec": {"replicas": 2**31}},
         undecodable + "number 2147483648 into Go struct field ScaleSpec.spec.replicas of type int32"),
        (negative | {"spec": {"replicas": 1.5}},
         undecodable + "number 1.5 into Go struct field ScaleSpec.spec.replicas of type int32"),
        (negative | {"spec": [1]},
         undecodable + "array into Go struct field Scale.spec of type v1.ScaleSpec"),
        (negative | {"kind": "ReplicaSet"},
         "the kind in the data (ReplicaSet) does not match the expected kind (Scale)"),
        (negative | {"apiVersion": "apps/v1"},
         "the API version in the data (apps/v1) does not match the expected API version "
         "(autoscaling/v1)"),
        (negative | {"metadata": {"name": "other"}, "spec": {"replicas": 1}},
         "the name of the object does not match the name on the URL"),
    ):  # fmt: skip
        assert_status(await client.put(f"{RSS}/web/scale", json=bad), 400, "BadRequest", message)
    r = await client.put(f"{RSS}/web/scale", json=negative | {"spec": {"replicas": 1}})
    assert r.status_code == 200 and r.json()["spec"] == {"replicas": 1}, r.text
    assert len([p for p in server.cluster.pods() if not p.metadata.deletion_timestamp]) == 1
    r = await client.patch(f"{RSS}/web/scale", headers=MERGE, content=b'{"spec":{"replicas":0}}')
    assert r.json()["spec"] == {}  # replicas 0: omitted, as upstream's omitempty

    assert_status(await client.get(f"{RSS}/nope/scale"), 404, "NotFound",
                  'replicasets.apps "nope" not found')  # fmt: skip
    assert_status(await client.delete(f"{RSS}/web/scale"), 405, "MethodNotAllowed")
    assert_status(await client.post(f"{RSS}/web/scale", json=negative), 405, "MethodNotAllowed")
    # no Job has one (upstream removed it)
    jobs = "/apis/batch/v1/namespaces/default/jobs"
    job = {"metadata": {"name": "j"}, "spec": {"parallelism": 0, "template": {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "pause"}]}}}}  # fmt: skip
    assert (await client.post(jobs, json=job)).status_code == 201
    assert_status(await client.get(f"{jobs}/j/scale"), 404, "NotFound",
                  "the server could not find the requested resource")  # fmt: skip

    table = (await client.get(f"{RSS}/web/scale", headers={"accept": TABLE})).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Desired",
        "Available",
        "Age",
    ]
    assert table["rows"][0]["cells"][:3] == ["web", 0, 0]


async def test_scaling_a_deployment_scales_its_replica_set(
    server: APIServer, client: httpx.AsyncClient
) -> None:
    deps = "/apis/apps/v1/namespaces/default/deployments"
    dep = replica_set("web", 1)
    assert (await client.post(deps, json=dep)).status_code == 201
    r = await client.patch(f"{deps}/web/scale", headers=MERGE, content=b'{"spec":{"replicas":3}}')
    assert r.status_code == 200, r.text
    [rs] = server.cluster.list("ReplicaSet")
    assert rs.spec.replicas == 3 and len(server.cluster.pods()) == 3


async def test_discovery_lists_scale_as_autoscaling_v1(client: httpx.AsyncClient) -> None:
    apps = {r["name"]: r for r in (await client.get("/apis/apps/v1")).json()["resources"]}
    for name in ("deployments/scale", "replicasets/scale", "statefulsets/scale"):
        assert apps[name] == {
            "name": name,
            "singularName": "",
            "namespaced": True,
            "group": "autoscaling",
            "version": "v1",
            "kind": "Scale",
            "verbs": ["get", "patch", "update"],
        }
    assert (
        apps["deployments/status"]["kind"] == "Deployment"
        and "group" not in apps["deployments/status"]
    )
    batch = {r["name"] for r in (await client.get("/apis/batch/v1")).json()["resources"]}
    assert "jobs/scale" not in batch
    doc = (await client.get("/apis", headers={"accept": AGGREGATED})).json()
    [apps_group] = [i for i in doc["items"] if i["metadata"]["name"] == "apps"]
    [deployments] = [
        r for r in apps_group["versions"][0]["resources"] if r["resource"] == "deployments"
    ]
    assert {s["subresource"]: s["responseKind"] for s in deployments["subresources"]} == {
        "scale": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
        "status": {"group": "apps", "version": "v1", "kind": "Deployment"},
    }


async def test_lease_crud_for_leader_election(client: httpx.AsyncClient) -> None:
    url = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    lease = {
        "metadata": {"name": "kubesched"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
    }
    r = await client.post(url, json=lease)
    assert r.status_code == 201 and r.json()["kind"] == "Lease"
    got = (await client.get(f"{url}/kubesched")).json()
    got["spec"]["holderIdentity"] = "b"
    r = await client.put(f"{url}/kubesched", json=got)
    assert r.status_code == 200 and r.json()["spec"]["holderIdentity"] == "b"
    got["spec"]["holderIdentity"] = "c"  # a stale resourceVersion: someone else renewed first
    assert_status(await client.put(f"{url}/kubesched", json=got), 409, "Conflict")
    assert_status(await client.post(url, json=lease), 409, "AlreadyExists")
    assert (await client.delete(f"{url}/kubesched")).status_code == 200
    assert_status(
        await client.get(f"{url}/kubesched"),
        404,
        "NotFound",
        'leases.coordination.k8s.io "kubesched" not found',
    )


async def test_namespaces_follow_the_objects(client: httpx.AsyncClient) -> None:
    names = {
        n["metadata"]["name"] for n in (await client.get("/api/v1/namespaces")).json()["items"]
    }
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names
    p = pod("p")
    p["metadata"]["namespace"] = "team-a"
    assert (await client.post("/api/v1/namespaces/team-a/pods", json=p)).status_code == 201
    ns = (await client.get("/api/v1/namespaces/team-a")).json()
    assert ns["status"]["phase"] == "Active"
    assert [x["metadata"]["name"] for x in (await client.get("/api/v1/pods")).json()["items"]] == [
        "p"
    ]


async def test_table_output(client: httpx.AsyncClient) -> None:
    await client.post("/api/v1/nodes", json=node("n1"))
    await client.post(PODS, json=pod("p"))
    await client.post(f"{PODS}/p/binding", json=binding("p", "n1"))
    accept = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
    t = (await client.get(PODS, headers=accept)).json()
    assert t["kind"] == "Table"
    cols = [c["name"] for c in t["columnDefinitions"]]
    assert cols[:5] == ["Name", "Ready", "Status", "Restarts", "Age"] and "Node" in cols
    cells = dict(zip(cols, t["rows"][0]["cells"], strict=True))
    assert (cells["Name"], cells["Status"], cells["Node"], cells["Ready"]) == (
        "p",
        "Running",
        "n1",
        "1/1",
    )
    assert t["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    nodes = (await client.get("/api/v1/nodes", headers=accept)).json()
    assert nodes["rows"][0]["cells"][:2] == ["n1", "Ready"]


# --- the official Python client --------------------------------------------------------------------


def _official_client(kubeconfig: str) -> Any:
    kubernetes = pytest.importorskip("kubernetes")
    api_client = kubernetes.config.new_client_from_config(config_file=kubeconfig)
    return kubernetes, api_client


async def test_official_client_lists_and_watches(
    server: APIServer, client: httpx.AsyncClient, tmp_path: Any
) -> None:
    kubeconfig = str(write_kubeconfig(tmp_path / "kubeconfig", server.url))
    kubernetes, api_client = _official_client(kubeconfig)
    await client.post("/api/v1/nodes", json=node("n1"))
    await client.post(PODS, json=pod("p1"))

    def list_and_watch() -> tuple[list[str], list[str], list[tuple[str, str]], str]:
        with api_client:
            v1 = kubernetes.client.CoreV1Api(api_client)
            nodes = [n.metadata.name for n in v1.list_node().items]
            pods = v1.list_namespaced_pod("default")
            names = [p.metadata.name for p in pods.items]
            body = kubernetes.client.V1Pod(
                metadata=kubernetes.client.V1ObjectMeta(name="p2"),
                spec=kubernetes.client.V1PodSpec(
                    containers=[kubernetes.client.V1Container(name="c", image="pause")]
                ),
            )
            v1.create_namespaced_pod("default", body)
            seen = []
            w = kubernetes.watch.Watch()
            for ev in w.stream(
                v1.list_namespaced_pod,
                "default",
                resource_version=pods.metadata.resource_version,
                timeout_seconds=5,
            ):
                seen.append((ev["type"], ev["object"].metadata.name))
                if len(seen) == 1:
                    v1.delete_namespaced_pod("p1", "default")
                if len(seen) == 2:
                    w.stop()
            try:
                v1.read_namespaced_pod("p1", "default")
            except kubernetes.client.ApiException as e:
                reason = f"{e.status} {json.loads(e.body)['reason']}"
            return nodes, names, seen, reason

    nodes, names, seen, reason = await anyio.to_thread.run_sync(list_and_watch)
    assert nodes == ["n1"] and names == ["p1"]
    assert seen == [("ADDED", "p2"), ("DELETED", "p1")]
    assert reason == "404 NotFound"


async def test_official_client_sees_410(
    server: APIServer, client: httpx.AsyncClient, tmp_path: Any
) -> None:
    kubeconfig = str(write_kubeconfig(tmp_path / "kubeconfig", server.url))
    kubernetes, api_client = _official_client(kubeconfig)
    await client.post(PODS, json=pod("p"))
    rv = server.resource_version
    await client.post(PODS, json=pod("q"))
    server.compact()

    def watch_old() -> int:
        with api_client:
            v1 = kubernetes.client.CoreV1Api(api_client)
            try:
                for _ in kubernetes.watch.Watch().stream(
                    v1.list_pod_for_all_namespaces, resource_version=rv, timeout_seconds=5
                ):
                    pass
            except kubernetes.client.ApiException as e:
                return int(e.status)
        return 0

    assert await anyio.to_thread.run_sync(watch_old) == 410
