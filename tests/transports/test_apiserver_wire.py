"""The fake API server's wire: no field lost (defaults written, what a client sent kept through
the cluster's changes), request bodies by media type (JSON, YAML, Kubernetes protobuf for the
kinds a scheduler writes, 415 for any other)."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api._objects import (
    ContainerPort,
    Event,
    PodGroupSpec,
    PodSpec,
    TopologySpreadConstraint,
    convert,
)
from kubesched.transports.apiserver import APIServer
from kubesched.transports.apiserver import _protobuf as protobuf
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

# The fake API server speaks plain HTTP: its clients share a TLS context that loads no CA bundle
# (httpx loads certifi's for every client it builds otherwise, some 40 ms each).
NO_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)

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
        httpx.AsyncClient(base_url=server.url, timeout=10, verify=NO_TLS) as c,
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
            id="spread constraint maxSkew 1",
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
    raw = _f(1, _object_meta("c"))
    r = await client.post(
        "/api/v1/namespaces/default/configmaps",
        headers=PROTOBUF,
        content=_envelope("v1", "ConfigMap", raw),
    )
    assert r.status_code == 404, r.text  # not served at all
    r = await client.post(PODS, headers=PROTOBUF, content=_envelope("v1", "ConfigMap", raw))
    assert r.status_code == 415, r.text
    assert r.json()["message"].startswith(
        "the body of the request could not be decoded as application/vnd.kubernetes.protobuf "
        "(ConfigMap (v1) in protobuf): this server decodes it for apps/v1 Deployment, "
    )
    assert r.json()["message"].endswith("; send other objects as application/json")
    assert ", v1 Pod, " in r.json()["message"]
    r = await client.post(PODS, headers=PROTOBUF, content=b"not protobuf")
    assert r.status_code == 415, r.text


def _entry(key: str, value: bytes | str) -> bytes:
    """A map entry (key 1, value 2)."""
    return _f(1, key) + _f(2, value)


def _gogo_pod() -> bytes:
    """A core/v1 Pod as client-go's gogo-protobuf marshals it (field numbers from
    k8s.io/api core/v1 generated.proto at v0.32.9): every non-pointer field written, zero or
    not; pointer fields only when set (terminationGracePeriodSeconds 0, enableServiceLinks
    false); a zero metav1.Time as an empty message; a Quantity as {string: 1}; an IntOrString
    as {type: 1, intVal: 2, strVal: 3}; embedded structs (ProbeHandler, VolumeSource,
    LocalObjectReference) as fields of their own."""
    meta = (
        _f(1, "web") + _f(2, "") + _f(3, "default") + _f(4, "") + _f(5, "") + _f(6, "")
        + _f(7, 0) + _f(8, b"") + _f(11, _entry("app", "web"))
    )  # fmt: skip
    probe = (
        # handler (ProbeHandler, embedded) 1 → httpGet 2: path 1, port 2, host 3, scheme 4
        _f(1, _f(2, _f(1, "/healthz") + _f(2, _f(1, 0) + _f(2, 8080) + _f(3, "")) + _f(3, "")
                 + _f(4, "")))
        + _f(2, 0) + _f(3, 0) + _f(4, 5) + _f(5, 0) + _f(6, 0)
    )  # fmt: skip
    container = (
        _f(1, "app") + _f(2, "registry.k8s.io/app:1.0") + _f(5, "")
        # ports: name 1, hostPort 2, containerPort 3, protocol 4, hostIP 5
        + _f(6, _f(1, "http") + _f(2, 0) + _f(3, 8080) + _f(4, "") + _f(5, ""))
        + _f(7, _f(1, "MODE") + _f(2, "fast"))  # env: name 1, value 2
        + _f(8, _f(1, _entry("cpu", _f(1, "500m"))))  # resources: limits 1
        + _f(10, probe)  # livenessProbe
        + _f(13, "") + _f(14, "") + _f(16, 0) + _f(17, 0) + _f(18, 0) + _f(20, "")
    )  # fmt: skip
    # volumes: name 1, volumeSource 2 (embedded) → configMap 19 → localObjectReference 1 → name 1
    volume = _f(1, "config") + _f(2, _f(19, _f(1, _f(1, "cfg"))))
    # tolerations: key 1, operator 2, value 3, effect 4 (tolerationSeconds 5, a pointer: unset)
    toleration = _f(1, "dedicated") + _f(2, "Equal") + _f(3, "gpu") + _f(4, "NoSchedule")
    spec = (
        _f(1, volume) + _f(2, container) + _f(3, "") + _f(4, 0) + _f(6, "") + _f(8, "")
        + _f(9, "") + _f(10, "") + _f(11, 0) + _f(12, 0) + _f(13, 0) + _f(16, "") + _f(17, "")
        + _f(19, "") + _f(22, toleration) + _f(24, "") + _f(30, 0)
    )  # fmt: skip
    status = _f(1, "") + _f(3, "") + _f(4, "") + _f(5, "") + _f(6, "") + _f(9, "")
    return _envelope("v1", "Pod", _f(1, meta) + _f(2, spec) + _f(3, status))


async def test_protobuf_pod_is_stored_with_every_field_and_the_defaults(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post(PODS, headers=PROTOBUF, content=_gogo_pod())
    assert r.status_code == 201, r.text
    got = (await client.get(f"{PODS}/web")).json()
    assert got["metadata"]["labels"] == {"app": "web"}
    assert got["spec"] == {
        "volumes": [{"name": "config", "configMap": {"name": "cfg", "defaultMode": 420}}],
        "containers": [
            {
                "name": "app",
                "image": "registry.k8s.io/app:1.0",
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "MODE", "value": "fast"}],
                # SetDefaults_Pod: requests from limits
                "resources": {"limits": {"cpu": "500m"}, "requests": {"cpu": "500m"}},
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                    "periodSeconds": 5,
                    "timeoutSeconds": 1,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 0,  # a pointer: its zero was sent
        "dnsPolicy": "ClusterFirst",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "enableServiceLinks": False,
        "tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
        "priority": 0,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    assert got["status"]["phase"] == "Pending"


@pytest.mark.parametrize(
    ("field", "code"),
    [
        pytest.param(_f(99, "x"), 415, id="an unknown field with a value: 415"),
        pytest.param(_f(99, 7), 415, id="an unknown varint: 415"),
        pytest.param(_f(99, ""), 201, id="an unknown empty field: ignored"),
        pytest.param(_f(99, _f(1, "") + _f(2, 0)), 201, id="an unknown message of zeros: ignored"),
    ],
)
async def test_protobuf_field_unknown_here_is_refused_unless_unset(
    client: httpx.AsyncClient, field: bytes, code: int
) -> None:
    # in the pod's spec, after its one container
    spec = _f(2, _f(1, "c") + _f(2, "pause:3.9")) + field
    body = _envelope("v1", "Pod", _f(1, _object_meta("p")) + _f(2, spec))
    r = await client.post(PODS, headers=PROTOBUF, content=body)
    assert r.status_code == code, r.text
    if code == 415:
        assert r.json()["message"].startswith(
            "the body of the request could not be decoded as application/vnd.kubernetes.protobuf "
            "(field 99 of Pod.spec is not decoded here)"
        )


# --- lists ---------------------------------------------------------------------------------------


async def test_list_items_carry_no_api_version_or_kind(client: httpx.AsyncClient) -> None:
    """As the API server writes a list of a built-in kind (its items are typed by the list);
    a watch event's object has them; a custom resource's items keep theirs."""
    await _node(client, "n1")
    assert (await client.post(PODS, json=_pod("p"))).status_code == 201
    group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
             "metadata": {"name": "g"}, "spec": {"minMember": 1}}  # fmt: skip
    groups = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups"
    assert (await client.post(groups, json=group)).status_code == 201
    for url, kind in (
        (PODS, "PodList"),
        ("/api/v1/nodes", "NodeList"),
        ("/api/v1/namespaces", "NamespaceList"),
        ("/apis/events.k8s.io/v1/events", "EventList"),
    ):
        listed = (await client.get(url)).json()
        assert listed["kind"] == kind
        for item in listed["items"]:
            assert "apiVersion" not in item and "kind" not in item, (url, item)
    [item] = (await client.get(groups)).json()["items"]
    assert (item["apiVersion"], item["kind"]) == ("scheduling.x-k8s.io/v1alpha1", "PodGroup")
    async with client.stream("GET", PODS, params={"watch": "true", "timeoutSeconds": "0.2"}) as w:
        [event] = [msgspec.json.decode(line) async for line in w.aiter_lines() if line]
    assert (event["object"]["apiVersion"], event["object"]["kind"]) == ("v1", "Pod")


# --- hostile protobuf: never anything but ProtobufError ------------------------------------------


def _fuzzed_field() -> st.SearchStrategy[bytes]:
    """Fields that look like protobuf: small numbers, varints of any size, nested messages."""
    number = st.integers(1, 45)
    leaf = st.one_of(
        st.builds(_f, number, st.integers(0, 2**64 - 1)),
        st.builds(_f, number, st.binary(max_size=12)),
    )
    return st.recursive(
        leaf,
        lambda inner: st.builds(_f, number, st.lists(inner, max_size=4).map(b"".join)),
        max_leaves=12,
    )


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(
    kind=st.sampled_from(sorted(protobuf.KINDS)),
    raw=st.lists(_fuzzed_field(), max_size=6).map(b"".join),
)
def test_protobuf_decoding_fails_only_as_protobuf_error(kind: tuple[str, str], raw: bytes) -> None:
    try:
        obj = protobuf.decode(_envelope(*kind, raw))
    except protobuf.ProtobufError:
        return
    assert (obj["apiVersion"], obj["kind"]) == kind
    msgspec.json.encode(obj)  # plain JSON
