"""PersistentVolume and PersistentVolumeClaim in Kubernetes protobuf: the bodies a kube-scheduler's
VolumeBinding PreBind PUTs (a claim with ``volume.kubernetes.io/selected-node``, a volume with
``spec.claimRef``) are stored as their JSON form would be, field for field, with the server's
defaults and validation; and every field of every table the two kinds use survives a round trip.

The bodies are built from the decoder's own tables by a small gogo-protobuf-like encoder
(``_encode``): every non-pointer scalar written, zero or not, as client-go writes it.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from kubesched.transports.apiserver import APIServer
from kubesched.transports.apiserver import _protobuf as protobuf
from kubesched.transports.apiserver import _protomessages as messages
from kubesched.transports.apiserver import _protomessages_storage as storage_messages
from kubesched.transports.apiserver._protomessages import MICRO_TIME, TIME, Table
from kubesched.transports.fake import FakeCluster

PVS = "/api/v1/persistentvolumes"
PVCS = "/api/v1/namespaces/default/persistentvolumeclaims"
PROTOBUF = {"content-type": "application/vnd.kubernetes.protobuf"}
SELECTED_NODE = "volume.kubernetes.io/selected-node"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# --- a gogo-protobuf-like encoder, from the decoder's tables -------------------------------------


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _f(number: int, value: int | str | bytes) -> bytes:
    """One field: a varint, or a length-delimited string, bytes or message."""
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


_ZEROS: dict[str, int | str | bytes] = {"string": "", "int": 0, "bool": 0, TIME: b""}
"""What gogo-protobuf writes for a non-pointer field left unset."""
_MAP_VALUES: dict[str, Any] = {"map": "string?", "quantitymap": "quantity?", "timemap": TIME}


def _value(v: Any, kind: Any) -> int | str | bytes:
    if isinstance(kind, dict):
        return _encode(v, kind)
    base = kind.rstrip("?")
    if base in (TIME, MICRO_TIME):
        t = datetime.fromisoformat(v)
        return _f(1, int(t.timestamp())) + _f(2, t.microsecond * 1000)
    if base == "quantity":
        return _f(1, v)
    if base == "intorstr":
        return _f(1, 1) + _f(3, v) if isinstance(v, str) else _f(1, 0) + _f(2, v)
    if base == "fieldsv1":
        return _f(1, json.dumps(v).encode())
    if base == "bool":
        return int(v)
    assert isinstance(v, int | str | bytes), (kind, v)
    return v


def _encode(obj: dict[str, Any], table: Table) -> bytes:
    """A message from its JSON form, in field-number order; an embedded struct (a row named
    ``""``) takes its fields from ``obj`` itself and is always written, as gogo writes it."""
    out = bytearray()
    for number, (name, kind) in sorted(table.items()):
        if not name:
            out += _f(number, _encode(obj, kind))
        elif name not in obj:
            if isinstance(kind, str) and kind in _ZEROS:
                out += _f(number, _ZEROS[kind])
        elif isinstance(kind, list):
            out += b"".join(_f(number, _value(item, kind[0])) for item in obj[name])
        elif isinstance(kind, str) and kind in _MAP_VALUES:
            for key, v in sorted(obj[name].items()):
                out += _f(number, _f(1, key) + _f(2, _value(v, _MAP_VALUES[kind])))
        else:
            out += _f(number, _value(obj[name], kind))
    return bytes(out)


def _body(obj: dict[str, Any]) -> bytes:
    """A Kubernetes protobuf body: the magic, then runtime.Unknown (typeMeta 1, raw 2,
    contentEncoding 3, contentType 4)."""
    table = protobuf.KINDS[(obj["apiVersion"], obj["kind"])]
    type_meta = _f(1, obj["apiVersion"]) + _f(2, obj["kind"])
    return b"k8s\x00" + _f(1, type_meta) + _f(2, _encode(obj, table)) + _f(3, "") + _f(4, "")


# --- the objects ---------------------------------------------------------------------------------


def _storage_class() -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "fast"}, "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer"}  # fmt: skip


def _pv() -> dict[str, Any]:
    secret = {"name": "csi-secret", "namespace": "kube-system"}
    zone = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv1", "labels": {"disk": "ssd"}, "annotations": {"owner": "ops"}},
        "spec": {
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
            "storageClassName": "fast",
            "mountOptions": ["noatime", "nodiratime"],
            "csi": {
                "driver": "csi.example.com",
                "volumeHandle": "vol-1",
                "fsType": "ext4",
                "volumeAttributes": {"tier": "gold", "empty": ""},
                "nodeStageSecretRef": secret,
                "controllerExpandSecretRef": secret,
            },
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [zone]}]}},
            "volumeAttributesClassName": "silver",
        },
    }


def _pvc() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default", "annotations": {"team": "db"}},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}, "limits": {"storage": "5Gi"}},
            "storageClassName": "fast",
            "selector": {
                "matchLabels": {"disk": "ssd"},
                "matchExpressions": [{"key": "disk", "operator": "Exists"}],
            },
            "dataSourceRef": {"apiGroup": "example.com", "kind": "Populator", "name": "seed"},
        },
    }


# --- through the API server ----------------------------------------------------------------------


@asynccontextmanager
async def _client() -> AsyncIterator[httpx.AsyncClient]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with (
        FakeCluster(epoch=epoch) as cluster,
        APIServer(cluster) as server,
        httpx.AsyncClient(base_url=server.url, timeout=10) as c,
    ):
        yield c


async def _send(
    c: httpx.AsyncClient, method: str, url: str, obj: dict[str, Any], encoding: str
) -> Any:
    if encoding == "json":
        r = await c.request(method, url, json=obj)
    else:
        r = await c.request(method, url, headers=PROTOBUF, content=_body(obj))
    assert r.status_code in (200, 201), r.text
    return r.json()


async def _prebind(encoding: str) -> list[Any]:
    """What a kube-scheduler does with a claim and a volume, every write in ``encoding``:
    create them, then VolumeBinding's PreBind PUTs: the claim with the selected node
    annotation, the volume with its claimRef.  Every reply, and the objects at the end."""
    async with _client() as c:
        sc = await c.post("/apis/storage.k8s.io/v1/storageclasses", json=_storage_class())
        assert sc.status_code == 201, sc.text
        replies = [await _send(c, "POST", PVS, _pv(), encoding)]
        replies.append(await _send(c, "POST", PVCS, _pvc(), encoding))
        claim = (await c.get(f"{PVCS}/data")).json()
        claim["metadata"]["annotations"][SELECTED_NODE] = "n1"
        replies.append(await _send(c, "PUT", f"{PVCS}/data", claim, encoding))
        claim = replies[-1]
        pv = (await c.get(f"{PVS}/pv1")).json()
        pv["spec"]["claimRef"] = {
            "kind": "PersistentVolumeClaim", "namespace": "default", "name": "data",
            "uid": claim["metadata"]["uid"], "apiVersion": "v1",
            "resourceVersion": claim["metadata"]["resourceVersion"],
        }  # fmt: skip
        replies.append(await _send(c, "PUT", f"{PVS}/pv1", pv, encoding))
        replies.append((await c.get(f"{PVS}/pv1")).json())
        replies.append((await c.get(f"{PVCS}/data")).json())
        return replies


def _normalized(replies: list[Any]) -> Any:
    """The replies with what differs between two servers (uids, timestamps) replaced."""
    text = json.dumps(replies)
    for uid in sorted({r["metadata"]["uid"] for r in replies}):
        text = text.replace(uid, "<uid>")
    return json.loads(re.sub(r'"\d{4}-\d\d-\d\dT[0-9:.]+Z"', '"<time>"', text))


@pytest.mark.anyio
async def test_prebind_puts_in_protobuf_store_what_json_stores() -> None:
    sent = await _prebind("protobuf")
    assert _normalized(sent) == _normalized(await _prebind("json"))
    pv, claim = sent[-2], sent[-1]
    # what the client sent is all there, defaults added
    want_pv = copy.deepcopy(_pv()["spec"])
    want_pv.update(persistentVolumeReclaimPolicy="Retain", volumeMode="Filesystem")
    assert {k: v for k, v in pv["spec"].items() if k != "claimRef"} == want_pv
    assert pv["spec"]["claimRef"] == {
        "kind": "PersistentVolumeClaim", "namespace": "default", "name": "data",
        "uid": sent[2]["metadata"]["uid"], "apiVersion": "v1",
        "resourceVersion": sent[2]["metadata"]["resourceVersion"],
    }  # fmt: skip
    assert pv["metadata"]["labels"] == {"disk": "ssd"}
    assert pv["metadata"]["annotations"]["owner"] == "ops"
    assert claim["metadata"]["annotations"][SELECTED_NODE] == "n1"
    assert claim["metadata"]["annotations"]["team"] == "db"
    for key in ("accessModes", "resources", "storageClassName", "selector", "dataSourceRef"):
        assert claim["spec"][key] == _pvc()["spec"][key], key
    assert sent[1]["spec"]["volumeMode"] == "Filesystem"


@pytest.mark.anyio
async def test_protobuf_storage_bodies_are_validated_as_json_ones() -> None:
    no_capacity = _pv()
    del no_capacity["spec"]["capacity"]
    bad_claim = _pvc()
    bad_claim["spec"]["accessModes"] = ["Sometimes"]
    messages = {
        PVS: 'PersistentVolume "pv1" is invalid: spec.capacity: Required value',
        PVCS: 'PersistentVolumeClaim "data" is invalid: spec.accessModes: Unsupported value: '
        '"Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", '
        '"ReadWriteOncePod"',
    }
    async with _client() as c:
        for url, obj in ((PVS, no_capacity), (PVCS, bad_claim)):
            by_json = await c.post(url, json=obj)
            by_protobuf = await c.post(url, headers=PROTOBUF, content=_body(obj))
            assert by_json.status_code == by_protobuf.status_code == 422, by_protobuf.text
            assert by_protobuf.json() == by_json.json()
            assert by_protobuf.json()["message"] == messages[url]
        # a PUT of a stale resourceVersion is a conflict, as in JSON
        created = await _send(c, "POST", PVS, _pv(), "protobuf")
        await _send(c, "PUT", f"{PVS}/pv1", created, "protobuf")
        r = await c.put(f"{PVS}/pv1", headers=PROTOBUF, content=_body(created))
        assert r.status_code == 409, r.text


@pytest.mark.anyio
async def test_the_refusal_lists_the_storage_kinds() -> None:
    body = b"k8s\x00" + _f(1, _f(1, "v1") + _f(2, "ConfigMap")) + _f(2, b"")
    async with _client() as c:
        r = await c.put(f"{PVS}/pv1", headers=PROTOBUF, content=body)
    assert r.status_code == 415, r.text
    message = r.json()["message"]
    assert ", v1 Namespace, v1 PersistentVolume, v1 PersistentVolumeClaim, v1 Pod, " in message


# --- every field of every table survives a round trip --------------------------------------------


def _tables() -> dict[str, Table]:
    """Every table PersistentVolume and PersistentVolumeClaim use, by its name."""
    names = {id(t): n for m in (messages, storage_messages) for n, t in vars(m).items()
             if n.isupper() and isinstance(t, dict)}  # fmt: skip
    found: dict[str, Table] = {}

    def walk(table: Table) -> None:
        found[names[id(table)]] = table
        for _, kind in table.values():
            kind = kind[0] if isinstance(kind, list) else kind
            if isinstance(kind, dict) and names[id(kind)] not in found:
                walk(kind)

    walk(storage_messages.PERSISTENT_VOLUME)
    walk(storage_messages.PERSISTENT_VOLUME_CLAIM)
    return found


TABLES = _tables()
_SAMPLES: dict[str, Any] = {
    "string": "s", "int": -7, "bool": True, "quantity": "1500m", "intorstr": "http",
    "map": {"a": "1", "b": ""}, "quantitymap": {"storage": "10Gi", "cpu": "500m"},
    "timemap": {"p": "2024-05-06T07:08:09Z"}, TIME: "2024-05-06T07:08:09Z",
    MICRO_TIME: "2024-05-06T07:08:09.123456Z", "fieldsv1": {"f:metadata": {"f:labels": {}}},
}  # fmt: skip
_KEPT_ZEROS: dict[str, Any] = {"string": "", "int": 0, "bool": False}
"""A pointer's zero value, and a list's item's: kept (a non-pointer zero decodes as absent)."""


def _sample(table: Table, zeros: bool) -> dict[str, Any]:
    """Every field of ``table`` set (in its nested messages too); ``zeros``: every pointer
    scalar at its zero value (kept), every non-pointer one left out (a zero decodes as absent),
    repeated scalars of zero value, map values empty."""
    out: dict[str, Any] = {}
    for _, (name, kind) in sorted(table.items()):
        repeated = isinstance(kind, list)
        kind = kind[0] if repeated else kind
        if not name:
            out.update(_sample(kind, zeros))
            continue
        if isinstance(kind, dict):
            value: Any = _sample(kind, zeros)
        elif zeros:
            base = kind.rstrip("?")
            if kind == "map":
                value = {"": ""}
            elif base in _KEPT_ZEROS and (repeated or kind.endswith("?")):
                value = _KEPT_ZEROS[base]
            else:
                continue
        else:
            value = _SAMPLES[kind.rstrip("?")]
            if isinstance(value, str) and kind.startswith("string"):
                value = f"{name}-{value}"
        out[name] = [value, copy.deepcopy(value)] if repeated else value
    return out


@pytest.mark.parametrize("zeros", [False, True], ids=["every field set", "zero values"])
@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_field_survives_a_round_trip(name: str, zeros: bool) -> None:
    table = TABLES[name]
    obj = _sample(table, zeros)
    assert protobuf._message(_encode(obj, table), table, name) == obj


@pytest.mark.parametrize("obj", [_pv(), _pvc()], ids=["PersistentVolume", "PersistentVolumeClaim"])
def test_a_whole_object_round_trips(obj: dict[str, Any]) -> None:
    full = {**obj, **_sample(protobuf.KINDS[("v1", obj["kind"])], zeros=False)}
    assert protobuf.decode(_body(full)) == full
    assert protobuf.decode(_body(obj)) == obj


NEWER_THAN_1_32 = {("PERSISTENT_VOLUME_CLAIM_STATUS", "healthStatus")}
"""Fields the official client's models have that Kubernetes 1.32 has not (a body that sets one
is refused with 415, never decoded without it)."""


def test_the_tables_have_the_fields_the_official_client_knows() -> None:
    """An independent source for the names: every JSON name in a table is a field of the
    official Python client's model of that message, and every field of the model is in the
    table (but those newer than 1.32, the tables' version)."""
    kubernetes = pytest.importorskip("kubernetes")
    if int(kubernetes.__version__.split(".")[0]) < 32:
        pytest.skip("the official client is older than Kubernetes 1.32")
    models = kubernetes.client
    by_name = {n[2:].lower(): getattr(models, n) for n in dir(models) if n.startswith("V1")}
    for name, table in TABLES.items():
        if name == "PERSISTENT_VOLUME_SOURCE":
            continue  # inline: V1PersistentVolumeSpec has its fields
        top = table.get(1) == ("metadata", messages.OBJECT_META)
        fields = {"apiVersion", "kind"} if top else set()  # an object's TypeMeta
        for _, (field, kind) in table.items():
            fields |= {f for f, _ in kind.values()} if not field else {field}
        known = set(by_name[name.replace("_", "").lower()].attribute_map.values())
        assert fields <= known, (name, fields - known)
        assert {(name, f) for f in known - fields} <= NEWER_THAN_1_32, (name, known - fields)
