"""The fake API server refuses the list, watch, delete, patch and binding options upstream refuses,
with upstream's codes and messages.

Each row names the upstream function that decides it.  Where upstream's watch cache answers a
client's bad resourceVersion or a Binding to a non-Node with a 500 (kubernetes/kubernetes#101350,
#139485), this server answers the 4xx upstream's etcd3 store and ``NewInvalid`` give, with the
same field error, as the fuzz suite requires of a client's error.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import anyio
import httpx
import pytest

from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

# The fake API server speaks plain HTTP: its clients share a TLS context that loads no CA bundle
# (httpx loads certifi's for every client it builds otherwise, some 40 ms each).
NO_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)

PODS = "/api/v1/namespaces/default/pods"
APPLY = {"content-type": "application/apply-patch+yaml"}
MERGE = {"content-type": "application/merge-patch+json"}
LIST_OPTIONS = 'ListOptions.meta.k8s.io "" is invalid: '
APPLIED = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: b}}\n"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Real sockets and real time: the plain backends, not the virtual-time loop."""
    return str(request.param)


@pytest.fixture
async def server() -> AsyncIterator[APIServer]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with (
        FakeCluster(epoch=epoch, default_grace_seconds=0) as cluster,
        APIServer(cluster) as srv,
    ):
        yield srv


@pytest.fixture
async def client(server: APIServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=10, verify=NO_TLS) as c:
        await c.post("/api/v1/nodes", json=node("n1"))
        await c.post(PODS, json=pod("p"))
        yield c


def pod(name: str, **spec: Any) -> dict[str, Any]:
    containers = [{"name": "c", "image": "pause"}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": containers, **spec},
    }


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def assert_status(r: httpx.Response, code: int, reason: str, message: str) -> dict[str, Any]:
    assert r.status_code == code, r.text
    body = r.json()
    assert (body["kind"], body["status"], body["code"]) == ("Status", "Failure", code)
    assert body.get("reason", "") == reason
    assert body["message"] == message
    return body  # type: ignore[no-any-return]


def parse_uint(value: str, why: str = "invalid syntax") -> str:
    """The etcd3 store's 400 for a resourceVersion that is not a uint64."""
    return (
        f'invalid resource version: resourceVersion: Invalid value: "{value}": '
        f'strconv.ParseUint: parsing "{value}": {why}'
    )


GET_CASES = [
    # APIObjectVersioner.ParseResourceVersion, as the etcd3 store answers it (storage/etcd3)
    pytest.param(PODS, {"resourceVersion": "abc"}, 400, "BadRequest", parse_uint("abc"), id="list resourceVersion=abc"),
    pytest.param(PODS, {"resourceVersion": "-1"}, 400, "BadRequest", parse_uint("-1"), id="list resourceVersion=-1"),
    pytest.param(
        PODS, {"resourceVersion": "99999999999999999999"}, 400, "BadRequest",
        parse_uint("99999999999999999999", "value out of range"), id="list resourceVersion past uint64",
    ),
    pytest.param(
        PODS, {"watch": "true", "resourceVersion": "abc"}, 400, "BadRequest", parse_uint("abc"),
        id="watch resourceVersion=abc",
    ),
    pytest.param(f"{PODS}/p", {"resourceVersion": "1x"}, 400, "BadRequest", parse_uint("1x"), id="get resourceVersion=1x"),
    # the parameter codec (runtime.Convert_Slice_string_To_Pointer_int64)
    pytest.param(
        PODS, {"timeoutSeconds": "abc"}, 400, "BadRequest",
        'timeoutSeconds: Invalid value: "abc": strconv.ParseInt: parsing "abc": invalid syntax',
        id="list timeoutSeconds=abc",
    ),
    pytest.param(
        PODS, {"watch": "1", "timeoutSeconds": "abc"}, 400, "BadRequest",
        'timeoutSeconds: Invalid value: "abc": strconv.ParseInt: parsing "abc": invalid syntax',
        id="watch timeoutSeconds=abc",
    ),
    # ValidateListOptions (apimachinery/pkg/apis/meta/internalversion/validation), a list
    pytest.param(
        PODS, {"resourceVersion": "0", "resourceVersionMatch": "Bogus"}, 422, "Invalid",
        LIST_OPTIONS + 'resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""',
        id="list resourceVersionMatch=Bogus",
    ),
    pytest.param(
        PODS, {"resourceVersionMatch": "NotOlderThan"}, 422, "Invalid",
        LIST_OPTIONS + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        id="list resourceVersionMatch without resourceVersion",
    ),
    pytest.param(
        PODS, {"resourceVersion": "0", "resourceVersionMatch": "Exact"}, 422, "Invalid",
        LIST_OPTIONS + 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        id="list resourceVersionMatch=Exact at 0",
    ),
    pytest.param(
        PODS, {"sendInitialEvents": "true"}, 422, "Invalid",
        LIST_OPTIONS + "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        id="list sendInitialEvents",
    ),
    pytest.param(
        PODS, {"resourceVersionMatch": "Bogus"}, 422, "Invalid",
        LIST_OPTIONS + "[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion "
        'is provided, resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""]',
        id="list: every error, aggregated",
    ),
    # ValidateListOptions, a watch (the WatchList feature on)
    pytest.param(
        PODS, {"watch": "true", "resourceVersionMatch": "NotOlderThan"}, 422, "Invalid",
        LIST_OPTIONS + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
        "sendInitialEvents is provided",
        id="watch resourceVersionMatch without sendInitialEvents",
    ),
    pytest.param(
        PODS, {"watch": "true", "sendInitialEvents": "true"}, 422, "Invalid",
        LIST_OPTIONS + "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch "
        "to NotOlderThan",
        id="watch sendInitialEvents without resourceVersionMatch",
    ),
    pytest.param(
        PODS, {"watch": "true", "sendInitialEvents": "true", "resourceVersionMatch": "Exact"}, 422, "Invalid",
        LIST_OPTIONS + "[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch "
        'to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
        id="watch resourceVersionMatch=Exact",
    ),
    # field labels: each kind's conversion function (pkg/apis/<group>/<version>/conversion.go)
    pytest.param(
        PODS, {"fieldSelector": "spec.foo=x"}, 400, "BadRequest", "field label not supported: spec.foo",
        id="pods fieldSelector spec.foo",
    ),
    pytest.param(
        PODS, {"watch": "true", "fieldSelector": "status.phase=Running,spec.priority=1"}, 400, "BadRequest",
        "field label not supported: spec.priority", id="pods watch fieldSelector spec.priority",
    ),
    pytest.param(
        "/api/v1/nodes", {"fieldSelector": "metadata.namespace=default"}, 400, "BadRequest",
        "field label not supported: metadata.namespace", id="nodes fieldSelector metadata.namespace",
    ),
    pytest.param(
        "/apis/batch/v1/jobs", {"fieldSelector": "status.active=1"}, 400, "BadRequest",
        'field label "status.active" not supported for batchv1.Job', id="jobs fieldSelector status.active",
    ),
    pytest.param(
        "/apis/coordination.k8s.io/v1/leases", {"fieldSelector": "spec.holderIdentity=a"}, 400, "BadRequest",
        '"spec.holderIdentity" is not a known field selector: only "metadata.name", "metadata.namespace"',
        id="leases: DefaultMetaV1FieldSelectorConversion",
    ),
    pytest.param(
        "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", {"fieldSelector": "spec.minMember=2"}, 400, "BadRequest",
        "field label not supported: spec.minMember", id="podgroups: a custom resource's converter",
    ),
    pytest.param(
        "/apis/resource.k8s.io/v1/resourceslices", {"fieldSelector": "spec.pool.name=a"}, 400, "BadRequest",
        "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool.name",
        id="resourceslices fieldSelector spec.pool.name",
    ),
    # the order upstream checks them in: decoding, ValidateListOptions, field labels, resourceVersion
    pytest.param(
        PODS, {"fieldSelector": "spec.foo=x", "resourceVersion": "abc", "sendInitialEvents": "1"}, 422, "Invalid",
        LIST_OPTIONS + "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        id="ListOptions before field labels before resourceVersion",
    ),
    pytest.param(
        PODS, {"fieldSelector": "spec.foo=x", "resourceVersion": "abc"}, 400, "BadRequest",
        "field label not supported: spec.foo", id="field labels before resourceVersion",
    ),
]


@pytest.mark.parametrize(("url", "params", "code", "reason", "message"), GET_CASES)
async def test_list_watch_and_get_options(
    client: httpx.AsyncClient, url: str, params: dict[str, str], code: int, reason: str, message: str
) -> None:
    assert_status(await client.get(url, params=params), code, reason, message)


async def test_a_list_options_error_names_its_fields(client: httpx.AsyncClient) -> None:
    r = await client.get(PODS, params={"resourceVersion": "0", "resourceVersionMatch": "Bogus"})
    assert r.json()["details"] == {
        "group": "meta.k8s.io",
        "kind": "ListOptions",
        "causes": [
            {
                "reason": "FieldValueNotSupported",
                "message": 'Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""',
                "field": "resourceVersionMatch",
            }
        ],
    }


async def test_served_field_labels_select_as_upstream(client: httpx.AsyncClient) -> None:
    """spec.host is old clients' spec.nodeName; a bool an object leaves out reads "false"."""
    await client.post(PODS, json=pod("q", nodeName="n1"))
    await client.post("/api/v1/nodes", json=node("n2"))

    async def names(url: str, selector: str) -> list[str]:
        r = await client.get(url, params={"fieldSelector": selector})
        assert r.status_code == 200, r.text
        return [o["metadata"]["name"] for o in r.json()["items"]]

    assert await names(PODS, "spec.host=n1") == ["q"]
    assert await names(PODS, "spec.hostNetwork=false") == ["p", "q"]
    assert await names(PODS, "status.podIPs=") == ["p", "q"]
    assert await names("/api/v1/nodes", "spec.unschedulable=false") == ["n1", "n2"]
    assert await names("/api/v1/nodes", "spec.unschedulable!=false") == []
    assert await names("/api/v1/nodes", "metadata.name=n2") == ["n2"]
    assert await names("/apis/batch/v1/namespaces/default/jobs", "status.successful=0") == []


async def test_watch_parameters_are_go_bools_and_a_negative_timeout_has_passed(
    client: httpx.AsyncClient,
) -> None:
    """runtime.Convert_Slice_string_To_bool: only absent, "0" and "false" are false (so
    watch=yes watches); timeoutSeconds=-1 is a deadline already past: 200, and the stream ends."""
    with anyio.fail_after(5):
        async with client.stream(
            "GET", PODS, params={"watch": "yes", "timeoutSeconds": "-1", "resourceVersion": "1"}
        ) as r:
            assert r.status_code == 200
            assert r.headers["transfer-encoding"] == "chunked"
            lines = [line async for line in r.aiter_lines() if line]
    assert all(json.loads(line)["type"] == "ADDED" for line in lines)
    listed = await client.get(PODS, params={"watch": "false"})
    assert listed.json()["kind"] == "PodList"


# --- delete, patch, binding --------------------------------------------------------------------

DELETE_OPTIONS = 'DeleteOptions.meta.k8s.io "" is invalid: '


@pytest.mark.parametrize(
    ("params", "body", "message"),
    [
        # ValidateDeleteOptions (apimachinery/pkg/apis/meta/v1/validation)
        pytest.param(
            {}, {"propagationPolicy": "Bogus"},
            'propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"',
            id="propagationPolicy Bogus in the body",
        ),
        pytest.param(
            {"propagationPolicy": "Bogus"}, None,
            'propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"',
            id="propagationPolicy Bogus in the query",
        ),
        pytest.param(
            {}, {"propagationPolicy": "Orphan", "orphanDependents": True},
            'propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
            id="orphanDependents and propagationPolicy",
        ),
    ],
)
async def test_delete_options(
    client: httpx.AsyncClient, params: dict[str, str], body: dict[str, Any] | None, message: str
) -> None:
    r = await client.request(
        "DELETE", f"{PODS}/p", params=params, content=json.dumps(body) if body is not None else None
    )
    details = assert_status(r, 422, "Invalid", DELETE_OPTIONS + message)["details"]
    assert (details["group"], details["kind"]) == ("meta.k8s.io", "DeleteOptions")
    # nothing was deleted; a valid policy deletes
    assert (await client.get(f"{PODS}/p")).status_code == 200
    r = await client.request("DELETE", f"{PODS}/p", params={"propagationPolicy": "Background"})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    ("params", "headers", "content", "message"),
    [
        # ValidatePatchOptions
        pytest.param(
            {}, APPLY, APPLIED,
            "fieldManager: Required value: is required for apply patch", id="apply without fieldManager",
        ),
        pytest.param(
            {"force": "true"}, MERGE, '{"metadata": {"labels": {"a": "b"}}}',
            "force: Forbidden: may not be specified for non-apply patch", id="force on a merge patch",
        ),
    ],
)
async def test_patch_options(
    client: httpx.AsyncClient, params: dict[str, str], headers: dict[str, str], content: str, message: str
) -> None:
    r = await client.patch(f"{PODS}/p", params=params, headers=headers, content=content)
    assert_status(r, 422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: ' + message)
    r = await client.patch(f"{PODS}/p", params={"fieldManager": "test"}, headers=APPLY, content=APPLIED)
    assert r.status_code == 200 and r.json()["metadata"]["labels"] == {"a": "b"}


@pytest.mark.parametrize(
    ("target", "message", "causes"),
    [
        # ValidatePodBinding (pkg/apis/core/validation)
        pytest.param(
            {"kind": "Pod", "name": "n1"},
            'Binding "p" is invalid: target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
            [("FieldValueNotSupported", "target.kind")], id="target is a Pod",
        ),
        pytest.param(
            {"kind": "Pod"},
            'Binding "p" is invalid: [target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", '
            "target.name: Required value]",
            [("FieldValueNotSupported", "target.kind"), ("FieldValueRequired", "target.name")],
            id="every error",
        ),
    ],
)
async def test_a_binding_target_is_a_node(
    server: APIServer, client: httpx.AsyncClient, target: dict[str, str], message: str, causes: list[tuple[str, str]]
) -> None:
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": target}
    details = assert_status(await client.post(f"{PODS}/p/binding", json=body), 422, "Invalid", message)["details"]
    assert [(c["reason"], c["field"]) for c in details["causes"]] == causes
    stored = server.cluster.get_pod("default", "p")
    assert stored is not None and not stored.spec.node_name
    body["target"] = {"name": "n1"}  # no kind: a Node
    assert (await client.post(f"{PODS}/p/binding", json=body)).status_code == 201
