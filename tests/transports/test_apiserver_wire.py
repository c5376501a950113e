"""The fake API server's wire: no field lost (defaults written, what a client sent kept through
the cluster's changes), request bodies by media type (JSON, YAML, Kubernetes protobuf for the
kinds a scheduler writes, 415 for any other)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec
import pytest

from kubesched._objects import (
    ContainerPort,
    Event,
    PodGroupSpec,
    PodSpec,
    TopologySpreadConstraint,
    convert,
)
from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

PODS = "/api/v1/namespaces/default/pods"
PROTOBUF = {"content-type": "application/vnd.kubernetes.protobuf"}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with (
        FakeCluster(epoch=epoch, default_grace_seconds=0) as cluster,
        APIServer(cluster) as server,
        httpx.AsyncClient(base_url=server.url, timeout=10) as c,
    ):
        yield c


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "pause:3.9",
                    "env": [{"name": "A", "value": "1"}],
                    "ports": [{"containerPort": 80}],
                    "resources": {"requests": {"cpu": "100m"}},
                }
            ],
            "volumes": [{"name": "v", "emptyDir": {}}],
        },
    }


async def _node(client: httpx.AsyncClient, name: str) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": {"cpu": "4", "pods": "110"}},
    }
    assert (await client.post("/api/v1/nodes", json=node)).status_code == 201


# --- point 1: defaults are written ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "wire"),
    [
        pytest.param(
            TopologySpreadConstraint(max_skew=1, when_unsatisfiable="DoNotSchedule"),
            {"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"},
            id="spread constraint maxSkew 1 (issue 14)",
        ),
        pytest.param(
            convert({"topologyKey": "zone"}, TopologySpreadConstraint),
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            id="spread constraint decoded without maxSkew",
        ),
        pytest.param(
            PodSpec(),
            {"schedulerName": "default-scheduler", "restartPolicy": "Always"},
            id="pod spec",
        ),
        pytest.param(
            ContainerPort(container_port=80),
            {"containerPort": 80, "protocol": "TCP"},
            id="container port protocol TCP",
        ),
        pytest.param(PodGroupSpec(min_member=1), {"minMember": 1}, id="PodGroup minMember 1"),
        pytest.param(
            Event(), {"metadata": {}, "regarding": {}, "type": "Normal"}, id="Event type Normal"
        ),
    ],
)
def test_fields_at_their_default_value_are_written(obj: Any, wire: dict[str, Any]) -> None:
    assert msgspec.to_builtins(obj) == wire
    assert msgspec.json.decode(msgspec.json.encode(obj)) == wire


async def test_a_bound_pod_keeps_every_field_its_client_sent(client: httpx.AsyncClient) -> None:
    await _node(client, "n1")
    r = await client.post(PODS, json=_pod("p"))
    assert r.status_code == 201, r.text
    sent_container = r.json()["spec"]["containers"][0]
    assert sent_container["env"] == [{"name": "A", "value": "1"}]
    rv = r.json()["metadata"]["resourceVersion"]
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
               "target": {"kind": "Node", "name": "n1"}}  # fmt: skip
    assert (await client.post(f"{PODS}/p/binding", json=binding)).status_code == 201
    got = (await client.get(f"{PODS}/p")).json()
    assert got["spec"]["nodeName"] == "n1"
    assert got["spec"]["containers"] == [sent_container]
    assert got["spec"]["volumes"] == [{"name": "v", "emptyDir": {}}]
    # the watch from before the binding sees the same object
    async with client.stream(
        "GET", PODS, params={"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"}
    ) as w:
        events = [msgspec.json.decode(line) async for line in w.aiter_lines() if line]
    assert events and events[-1]["object"]["spec"]["containers"] == [sent_container]
    assert events[-1]["object"]["spec"]["nodeName"] == "n1"
    # a status PUT keeps the spec as the client wrote it
    got["status"]["conditions"] = [{"type": "Custom", "status": "True"}]
    r = await client.put(f"{PODS}/p/status", json=got)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["containers"] == [sent_container]
    assert {"type": "Custom", "status": "True"} in r.json()["status"]["conditions"]


# --- point 3: media types ------------------------------------------------------------------------


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _f(number: int, value: int | str | bytes) -> bytes:
    """One protobuf field: a varint, or a length-delimited string/bytes/message."""
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """runtime.Unknown (k8s.io/apimachinery/pkg/runtime/generated.proto): typeMeta = 1
    (apiVersion = 1, kind = 2), raw = 2, contentEncoding = 3, contentType = 4; as client-go's
    protobuf serializer writes it, empty strings included."""
    type_meta = _f(1, api_version) + _f(2, kind)
    return b"k8s\x00" + _f(1, type_meta) + _f(2, raw) + _f(3, "") + _f(4, "")


def _object_meta(name: str, namespace: str = "", uid: str = "") -> bytes:
    # meta/v1 ObjectMeta: name 1, generateName 2, namespace 3, selfLink 4, uid 5,
    # resourceVersion 6, generation 7, creationTimestamp 8 (a zero Time), labels 11 (map entries)
    return (
        _f(1, name) + _f(2, "") + _f(3, namespace) + _f(4, "") + _f(5, uid) + _f(6, "")
        + _f(7, 0) + _f(8, b"") + _f(11, _f(1, "k") + _f(2, "v"))
    )  # fmt: skip


def _object_reference(kind: str, name: str, namespace: str = "") -> bytes:
    # core/v1 ObjectReference: kind 1, namespace 2, name 3, uid 4, apiVersion 5,
    # resourceVersion 6, fieldPath 7
    return (
        _f(1, kind) + _f(2, namespace) + _f(3, name) + _f(4, "") + _f(5, "v1") + _f(6, "")
        + _f(7, "")
    )  # fmt: skip


def _micro_time(seconds: int, nanos: int) -> bytes:
    return _f(1, seconds) + _f(2, nanos)


async def test_protobuf_binding_binds(client: httpx.AsyncClient) -> None:
    await _node(client, "n1")
    assert (await client.post(PODS, json=_pod("p"))).status_code == 201
    # core/v1 Binding: metadata 1, target 2
    raw = _f(1, _object_meta("p", "default")) + _f(2, _object_reference("Node", "n1"))
    r = await client.post(
        f"{PODS}/p/binding", headers=PROTOBUF, content=_envelope("v1", "Binding", raw)
    )
    assert r.status_code == 201, r.text
    assert (await client.get(f"{PODS}/p")).json()["spec"]["nodeName"] == "n1"


async def test_protobuf_event_is_stored_as_json(client: httpx.AsyncClient) -> None:
    # events.k8s.io/v1 Event: metadata 1, eventTime 2, reportingController 4,
    # reportingInstance 5, action 6, reason 7, regarding 8, note 10, type 11, deprecatedCount 15
    raw = (
        _f(1, _object_meta("p.1", "default"))
        + _f(2, _micro_time(1_700_000_000, 123_456_000))
        + _f(4, "default-scheduler") + _f(5, "default-scheduler-n0") + _f(6, "Scheduling")
        + _f(7, "FailedScheduling") + _f(8, _object_reference("Pod", "p", "default"))
        + _f(10, "0/1 nodes are available") + _f(11, "Warning") + _f(15, 0)
    )  # fmt: skip
    r = await client.post(
        "/apis/events.k8s.io/v1/namespaces/default/events",
        headers=PROTOBUF,
        content=_envelope("events.k8s.io/v1", "Event", raw),
    )
    assert r.status_code == 201, r.text
    got = (await client.get("/apis/events.k8s.io/v1/namespaces/default/events/p.1")).json()
    assert got["eventTime"] == "2023-11-14T22:13:20.123456Z"
    assert got["regarding"] == {
        "kind": "Pod",
        "namespace": "default",
        "name": "p",
        "apiVersion": "v1",
    }
    assert (got["reason"], got["note"], got["type"], got["action"]) == (
        "FailedScheduling", "0/1 nodes are available", "Warning", "Scheduling"
    )  # fmt: skip
    assert got["metadata"]["labels"] == {"k": "v"}
    assert "deprecatedCount" not in got and "generateName" not in got["metadata"]


async def test_protobuf_lease_create_and_update(client: httpx.AsyncClient) -> None:
    url = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"

    def lease(holder: str, transitions: int, rv: str = "") -> bytes:
        meta = _f(1, "kube-scheduler") + _f(3, "kube-system") + _f(6, rv)
        # LeaseSpec: holderIdentity 1, leaseDurationSeconds 2, acquireTime 3, renewTime 4,
        # leaseTransitions 5 (pointers: a zero is kept)
        spec = (
            _f(1, holder) + _f(2, 15) + _f(3, _micro_time(1_700_000_000, 0))
            + _f(4, _micro_time(1_700_000_010, 0)) + _f(5, transitions)
        )  # fmt: skip
        return _envelope("coordination.k8s.io/v1", "Lease", _f(1, meta) + _f(2, spec))

    r = await client.post(url, headers=PROTOBUF, content=lease("a", 0))
    assert r.status_code == 201, r.text
    assert r.json()["spec"] == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2023-11-14T22:13:20.000000Z",
        "renewTime": "2023-11-14T22:13:30.000000Z",
        "leaseTransitions": 0,
    }
    rv = r.json()["metadata"]["resourceVersion"]
    r = await client.put(f"{url}/kube-scheduler", headers=PROTOBUF, content=lease("b", 1, rv))
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["holderIdentity"] == "b"
    r = await client.put(f"{url}/kube-scheduler", headers=PROTOBUF, content=lease("c", 2, rv))
    assert r.status_code == 409, r.text


async def test_protobuf_delete_options(client: httpx.AsyncClient) -> None:
    assert (await client.post(PODS, json=_pod("p"))).status_code == 201
    # meta/v1 DeleteOptions: gracePeriodSeconds 1, preconditions 2 (uid 1, resourceVersion 2)
    opts = _envelope("v1", "DeleteOptions", _f(1, 0) + _f(2, _f(1, "not-the-uid")))
    r = await client.request("DELETE", f"{PODS}/p", headers=PROTOBUF, content=opts)
    assert r.status_code == 409, r.text
    assert "Precondition failed: UID in precondition: not-the-uid" in r.json()["message"]
    opts = _envelope("meta.k8s.io/v1", "DeleteOptions", _f(1, 0))
    r = await client.request("DELETE", f"{PODS}/p", headers=PROTOBUF, content=opts)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        pytest.param("text/plain", b'{"metadata": {"name": "p"}}', id="text/plain"),
        pytest.param("application/xml", b"<Pod><name>p</name></Pod>", id="XML"),
        pytest.param(
            "multipart/form-data; boundary=x",
            b'--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n{}\r\n--x--\r\n',
            id="multipart",
        ),
    ],
)
async def test_other_media_types_are_415(
    client: httpx.AsyncClient, content_type: str, body: bytes
) -> None:
    r = await client.post(PODS, headers={"content-type": content_type}, content=body)
    assert r.status_code == 415, r.text
    assert r.json()["reason"] == "UnsupportedMediaType"
    assert r.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    assert (await client.get(PODS)).json()["items"] == []


async def test_protobuf_of_a_kind_not_decoded_is_415_asking_for_json(
    client: httpx.AsyncClient,
) -> None:
    raw = _f(1, _object_meta("p"))
    r = await client.post(PODS, headers=PROTOBUF, content=_envelope("v1", "Pod", raw))
    assert r.status_code == 415, r.text
    assert "send other objects as application/json" in r.json()["message"]
    r = await client.post(PODS, headers=PROTOBUF, content=b"not protobuf")
    assert r.status_code == 415, r.text
