"""Kubernetes protobuf request bodies, for the kinds a kube-scheduler writes.

client-go sends ``application/vnd.kubernetes.protobuf`` by default (kube-scheduler's
``clientConnection.contentType``).  A body is the magic ``k8s\\x00`` and a ``runtime.Unknown``
message: its ``typeMeta`` (apiVersion, kind) and ``raw``, the object's own message.  This module
decodes the protobuf wire format (varints and length-delimited fields) by small field tables
taken from upstream's ``generated.proto`` files (k8s.io/api, k8s.io/apimachinery), into the
object's JSON form, for: core/v1 Binding and Event, events.k8s.io/v1 Event,
coordination.k8s.io/v1 Lease, DeleteOptions, and apps/v1 Deployment and ReplicaSet and batch/v1
Job with the pod template fields the scheduler reads (what ``kubectl create deployment|job``
sends).  Any other kind is refused
(``ProtobufError``), and the server answers 415 asking for application/json.

gogo-protobuf writes every non-pointer field, so an empty string, a zero number or a zero time
decodes as absent (as ``omitempty`` leaves it out of the JSON); the pointer fields (``?`` in the
tables) keep their zero values.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

__all__ = ["MAGIC", "ProtobufError", "decode"]

MAGIC = b"k8s\x00"


class ProtobufError(ValueError):
    """A body that is not a Kubernetes protobuf message of a kind decoded here."""


# a field: (JSON name, type); type is a scalar name or a message table; "[...]" marks repeated,
# a trailing "?" a pointer field (its zero value is kept)
Table = dict[int, tuple[str, Any]]

_TIME = "time"
_MICRO = "microtime"

_OWNER_REFERENCE: Table = {
    1: ("kind", "string"),
    3: ("name", "string"),
    4: ("uid", "string"),
    5: ("apiVersion", "string"),
    6: ("controller", "bool?"),
    7: ("blockOwnerDeletion", "bool?"),
}
_MANAGED_FIELDS: Table = {
    1: ("manager", "string"),
    2: ("operation", "string"),
    3: ("apiVersion", "string"),
    4: ("time", _TIME),
    6: ("fieldsType", "string"),
    7: ("fieldsV1", "fieldsv1"),
    8: ("subresource", "string"),
}
_OBJECT_META: Table = {
    1: ("name", "string"),
    2: ("generateName", "string"),
    3: ("namespace", "string"),
    4: ("selfLink", "string"),
    5: ("uid", "string"),
    6: ("resourceVersion", "string"),
    7: ("generation", "int"),
    8: ("creationTimestamp", _TIME),
    9: ("deletionTimestamp", _TIME),
    10: ("deletionGracePeriodSeconds", "int?"),
    11: ("labels", "map"),
    12: ("annotations", "map"),
    13: ("ownerReferences", [_OWNER_REFERENCE]),
    14: ("finalizers", ["string"]),
    17: ("managedFields", [_MANAGED_FIELDS]),
}
_OBJECT_REFERENCE: Table = {
    1: ("kind", "string"),
    2: ("namespace", "string"),
    3: ("name", "string"),
    4: ("uid", "string"),
    5: ("apiVersion", "string"),
    6: ("resourceVersion", "string"),
    7: ("fieldPath", "string"),
}
_EVENT_SOURCE: Table = {1: ("component", "string"), 2: ("host", "string")}
_EVENT_SERIES: Table = {1: ("count", "int"), 2: ("lastObservedTime", _MICRO)}

# k8s.io/api/core/v1
_BINDING: Table = {1: ("metadata", _OBJECT_META), 2: ("target", _OBJECT_REFERENCE)}
_CORE_EVENT: Table = {
    1: ("metadata", _OBJECT_META),
    2: ("involvedObject", _OBJECT_REFERENCE),
    3: ("reason", "string"),
    4: ("message", "string"),
    5: ("source", _EVENT_SOURCE),
    6: ("firstTimestamp", _TIME),
    7: ("lastTimestamp", _TIME),
    8: ("count", "int"),
    9: ("type", "string"),
    10: ("eventTime", _MICRO),
    11: ("series", _EVENT_SERIES),
    12: ("action", "string"),
    13: ("related", _OBJECT_REFERENCE),
    14: ("reportingComponent", "string"),
    15: ("reportingInstance", "string"),
}
# k8s.io/api/events/v1
_EVENT: Table = {
    1: ("metadata", _OBJECT_META),
    2: ("eventTime", _MICRO),
    3: ("series", _EVENT_SERIES),
    4: ("reportingController", "string"),
    5: ("reportingInstance", "string"),
    6: ("action", "string"),
    7: ("reason", "string"),
    8: ("regarding", _OBJECT_REFERENCE),
    9: ("related", _OBJECT_REFERENCE),
    10: ("note", "string"),
    11: ("type", "string"),
    12: ("deprecatedSource", _EVENT_SOURCE),
    13: ("deprecatedFirstTimestamp", _TIME),
    14: ("deprecatedLastTimestamp", _TIME),
    15: ("deprecatedCount", "int"),
}
# k8s.io/api/coordination/v1
_LEASE_SPEC: Table = {
    1: ("holderIdentity", "string?"),
    2: ("leaseDurationSeconds", "int?"),
    3: ("acquireTime", _MICRO),
    4: ("renewTime", _MICRO),
    5: ("leaseTransitions", "int?"),
    6: ("strategy", "string?"),
    7: ("preferredHolder", "string?"),
}
_LEASE: Table = {1: ("metadata", _OBJECT_META), 2: ("spec", _LEASE_SPEC)}
# k8s.io/apimachinery/pkg/apis/meta/v1
_PRECONDITIONS: Table = {1: ("uid", "string?"), 2: ("resourceVersion", "string?")}
_DELETE_OPTIONS: Table = {
    1: ("gracePeriodSeconds", "int?"),
    2: ("preconditions", _PRECONDITIONS),
    3: ("orphanDependents", "bool?"),
    4: ("propagationPolicy", "string?"),
    5: ("dryRun", ["string"]),
}

# the workload kinds a typed client creates (``kubectl create deployment|job``), with the pod
# template's fields the scheduler reads (k8s.io/api core/v1, apps/v1, batch/v1 generated.proto)
_RESOURCE_REQUIREMENTS: Table = {1: ("limits", "quantitymap"), 2: ("requests", "quantitymap")}
_CONTAINER: Table = {1: ("name", "string"), 2: ("image", "string"), 8: ("resources", _RESOURCE_REQUIREMENTS)}
_TOLERATION: Table = {
    1: ("key", "string"),
    2: ("operator", "string"),
    3: ("value", "string"),
    4: ("effect", "string"),
    5: ("tolerationSeconds", "int?"),
}
_POD_SPEC: Table = {
    2: ("containers", [_CONTAINER]),
    3: ("restartPolicy", "string"),
    4: ("terminationGracePeriodSeconds", "int?"),
    7: ("nodeSelector", "map"),
    10: ("nodeName", "string"),
    19: ("schedulerName", "string"),
    20: ("initContainers", [_CONTAINER]),
    22: ("tolerations", [_TOLERATION]),
    24: ("priorityClassName", "string"),
    25: ("priority", "int?"),
}
_POD_TEMPLATE_SPEC: Table = {1: ("metadata", _OBJECT_META), 2: ("spec", _POD_SPEC)}
_LABEL_SELECTOR: Table = {
    1: ("matchLabels", "map"),
    2: ("matchExpressions", [{1: ("key", "string"), 2: ("operator", "string"), 3: ("values", ["string"])}]),
}
_REPLICA_SET_SPEC: Table = {
    1: ("replicas", "int?"),
    2: ("selector", _LABEL_SELECTOR),
    3: ("template", _POD_TEMPLATE_SPEC),
}
_DEPLOYMENT_SPEC: Table = {**_REPLICA_SET_SPEC}
_JOB_SPEC: Table = {
    1: ("parallelism", "int?"),
    2: ("completions", "int?"),
    4: ("selector", _LABEL_SELECTOR),
    6: ("template", _POD_TEMPLATE_SPEC),
    7: ("backoffLimit", "int?"),
    9: ("completionMode", "string?"),
}

KINDS: dict[tuple[str, str], Table] = {
    ("apps/v1", "Deployment"): {1: ("metadata", _OBJECT_META), 2: ("spec", _DEPLOYMENT_SPEC)},
    ("apps/v1", "ReplicaSet"): {1: ("metadata", _OBJECT_META), 2: ("spec", _REPLICA_SET_SPEC)},
    ("batch/v1", "Job"): {1: ("metadata", _OBJECT_META), 2: ("spec", _JOB_SPEC)},
    ("v1", "Binding"): _BINDING,
    ("v1", "Event"): _CORE_EVENT,
    ("events.k8s.io/v1", "Event"): _EVENT,
    ("coordination.k8s.io/v1", "Lease"): _LEASE,
    ("v1", "DeleteOptions"): _DELETE_OPTIONS,
    ("meta.k8s.io/v1", "DeleteOptions"): _DELETE_OPTIONS,
}
"""(apiVersion, kind) → the table of its message."""

_UNKNOWN: Table = {1: ("typeMeta", {1: ("apiVersion", "string"), 2: ("kind", "string")}),
                   2: ("raw", "bytes"), 3: ("contentEncoding", "string"),
                   4: ("contentType", "string")}  # fmt: skip


# --- the wire format ---------------------------------------------------------------------------


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf):
            raise ProtobufError("truncated varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def _fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value): a varint's int or a length-delimited field's bytes."""
    out: list[tuple[int, int | bytes]] = []
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            out.append((number, value))
        elif wire == 2:
            size, i = _varint(buf, i)
            if i + size > len(buf):
                raise ProtobufError("truncated field")
            out.append((number, buf[i : i + size]))
            i += size
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _time(buf: bytes, micro: bool) -> str | None:
    seconds = nanos = 0
    for number, v in _fields(buf):
        if number == 1 and isinstance(v, int):
            seconds = _signed(v)
        elif number == 2 and isinstance(v, int):
            nanos = _signed(v)
    if seconds == 0 and nanos == 0:
        return None
    t = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _scalar(kind: str, v: int | bytes) -> Any:
    base = kind.rstrip("?")
    if base == "string":
        if not isinstance(v, bytes):
            raise ProtobufError("a string field is not length-delimited")
        return v.decode()
    if base == "bytes":
        return v
    if not isinstance(v, int):
        raise ProtobufError(f"a {base} field is not a varint")
    return bool(v) if base == "bool" else _signed(v)


def _message(buf: bytes, table: Table) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, v in _fields(buf):
        field = table.get(number)
        if field is None:
            continue  # a field this server does not keep
        name, kind = field
        repeated = isinstance(kind, list)
        kind = kind[0] if repeated else kind
        value: Any
        if isinstance(kind, dict):
            if not isinstance(v, bytes):
                raise ProtobufError(f"field {name} is not a message")
            value = _message(v, kind)
        elif kind in (_TIME, _MICRO):
            if not isinstance(v, bytes):
                raise ProtobufError(f"field {name} is not a time")
            value = _time(v, kind == _MICRO)
        elif kind == "fieldsv1":
            raw = (
                _message(v, {1: ("Raw", "bytes")}).get("Raw", b"") if isinstance(v, bytes) else b""
            )
            value = json.loads(raw) if raw else {}
        elif kind == "map":
            if not isinstance(v, bytes):
                raise ProtobufError(f"field {name} is not a map entry")
            entry = _message(v, {1: ("key", "string?"), 2: ("value", "string?")})
            out.setdefault(name, {})[entry.get("key", "")] = entry.get("value", "")
            continue
        elif kind == "quantitymap":  # map<string, resource.Quantity{string: 1}>
            if not isinstance(v, bytes):
                raise ProtobufError(f"field {name} is not a map entry")
            entry = _message(v, {1: ("key", "string?"), 2: ("value", {1: ("string", "string?")})})
            out.setdefault(name, {})[entry.get("key", "")] = entry.get("value", {}).get("string", "")
            continue
        else:
            value = _scalar(kind, v)
            if not kind.endswith("?") and value in ("", 0, False) and not repeated:
                continue
        if value is None or (isinstance(value, dict) and not value and not repeated):
            continue
        if repeated:
            out.setdefault(name, []).append(value)
        else:
            out[name] = value
    return out


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form (with apiVersion and kind) of a Kubernetes protobuf body."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf magic")
    unknown = _message(body[len(MAGIC) :], _UNKNOWN)
    type_meta = unknown.get("typeMeta", {})
    api, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
    table = KINDS.get((api, kind))
    if table is None:
        raise ProtobufError(f"{kind or 'an object'} ({api or 'no apiVersion'}) in protobuf")
    if unknown.get("contentEncoding"):
        raise ProtobufError(f"content encoding {unknown['contentEncoding']!r}")
    return {"apiVersion": api, "kind": kind, **_message(unknown.get("raw", b""), table)}
