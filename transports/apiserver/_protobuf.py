"""Kubernetes protobuf request bodies, for the kinds a kube-scheduler or a typed client writes.

client-go sends ``application/vnd.kubernetes.protobuf`` by default (kube-scheduler's
``clientConnection.contentType``; kubectl's typed clients: ``kubectl create deployment|job``).
A body is the magic ``k8s\\x00`` and a ``runtime.Unknown`` message: its ``typeMeta``
(apiVersion, kind) and ``raw``, the object's own message.  This module decodes the protobuf wire
format (varints and length-delimited fields) by field tables (``_protomessages`` and, for the
volumes, ``_protomessages_storage``; the event, lease, binding and delete option ones are here)
into the object's JSON form, for: core/v1 Pod, Namespace, Service, Binding, Event,
PersistentVolume and PersistentVolumeClaim (what a kube-scheduler's VolumeBinding PreBind
PUTs), events.k8s.io/v1 Event, coordination.k8s.io/v1 Lease, DeleteOptions, autoscaling/v1
Scale, apps/v1 Deployment and ReplicaSet, batch/v1 Job, policy/v1 PodDisruptionBudget,
scheduling.k8s.io/v1 PriorityClass (what ``kubectl create`` sends of the kinds served), and the
resource.k8s.io kinds (``_protomessages_dra``: what a kube-scheduler's DynamicResources plugin
writes of a ResourceClaim, what a DRA driver publishes), and the Workload API's Workloads and
PodGroups (``_protomessages_workload``; served with GenericWorkload).  Any
other kind is refused (``ProtobufError``), and so is a field no table names that carries a
value (a client newer than these tables): the server answers 415 asking for application/json,
never losing a field silently.

gogo-protobuf writes every non-pointer field, so an empty string, a zero number or a zero time
decodes as absent (as ``omitempty`` leaves it out of the JSON); the pointer fields (``?`` in the
tables) keep their zero values; a message present but empty decodes as ``{}`` (Go's JSON writes
a struct field, and a set pointer to one, as ``{}``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ._protomessages import (
    DEPLOYMENT,
    JOB,
    MICRO_TIME,
    NAMESPACE,
    OBJECT_META,
    POD,
    POD_DISRUPTION_BUDGET,
    PRIORITY_CLASS,
    REPLICA_SET,
    SERVICE,
    TIME,
    Table,
)
from ._protomessages_dra import (
    DEVICE_CLASS,
    DEVICE_TAINT_RULE,
    DEVICE_TAINT_RULE_V1ALPHA3,
    RESOURCE_CLAIM,
    RESOURCE_CLAIM_TEMPLATE,
    RESOURCE_SLICE,
)
from ._protomessages_storage import OBJECT_REFERENCE, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM
from ._protomessages_workload import POD_GROUP_V1ALPHA2, WORKLOAD_V1ALPHA1, WORKLOAD_V1ALPHA2

__all__ = ["KINDS", "MAGIC", "ProtobufError", "decode"]

MAGIC = b"k8s\x00"


class ProtobufError(ValueError):
    """A body that is not a Kubernetes protobuf message of a kind decoded here."""


_EVENT_SOURCE: Table = {1: ("component", "string"), 2: ("host", "string")}
_EVENT_SERIES: Table = {1: ("count", "int"), 2: ("lastObservedTime", MICRO_TIME)}

# k8s.io/api/core/v1
_BINDING: Table = {1: ("metadata", OBJECT_META), 2: ("target", OBJECT_REFERENCE)}
_CORE_EVENT: Table = {
    1: ("metadata", OBJECT_META),
    2: ("involvedObject", OBJECT_REFERENCE),
    3: ("reason", "string"),
    4: ("message", "string"),
    5: ("source", _EVENT_SOURCE),
    6: ("firstTimestamp", TIME),
    7: ("lastTimestamp", TIME),
    8: ("count", "int"),
    9: ("type", "string"),
    10: ("eventTime", MICRO_TIME),
    11: ("series", _EVENT_SERIES),
    12: ("action", "string"),
    13: ("related", OBJECT_REFERENCE),
    14: ("reportingComponent", "string"),
    15: ("reportingInstance", "string"),
}
# k8s.io/api/events/v1
_EVENT: Table = {
    1: ("metadata", OBJECT_META),
    2: ("eventTime", MICRO_TIME),
    3: ("series", _EVENT_SERIES),
    4: ("reportingController", "string"),
    5: ("reportingInstance", "string"),
    6: ("action", "string"),
    7: ("reason", "string"),
    8: ("regarding", OBJECT_REFERENCE),
    9: ("related", OBJECT_REFERENCE),
    10: ("note", "string"),
    11: ("type", "string"),
    12: ("deprecatedSource", _EVENT_SOURCE),
    13: ("deprecatedFirstTimestamp", TIME),
    14: ("deprecatedLastTimestamp", TIME),
    15: ("deprecatedCount", "int"),
}
# k8s.io/api/coordination/v1
_LEASE_SPEC: Table = {
    1: ("holderIdentity", "string?"),
    2: ("leaseDurationSeconds", "int?"),
    3: ("acquireTime", MICRO_TIME),
    4: ("renewTime", MICRO_TIME),
    5: ("leaseTransitions", "int?"),
    6: ("strategy", "string?"),
    7: ("preferredHolder", "string?"),
}
_LEASE: Table = {1: ("metadata", OBJECT_META), 2: ("spec", _LEASE_SPEC)}
# k8s.io/apimachinery/pkg/apis/meta/v1
_PRECONDITIONS: Table = {1: ("uid", "string?"), 2: ("resourceVersion", "string?")}
_DELETE_OPTIONS: Table = {
    1: ("gracePeriodSeconds", "int?"),
    2: ("preconditions", _PRECONDITIONS),
    3: ("orphanDependents", "bool?"),
    4: ("propagationPolicy", "string?"),
    5: ("dryRun", ["string"]),
    6: ("ignoreStoreReadErrorWithClusterBreakingPotential", "bool?"),
}
# k8s.io/api/autoscaling/v1: the scale subresource's object
_SCALE: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", {1: ("replicas", "int")}),
    3: ("status", {1: ("replicas", "int"), 2: ("selector", "string")}),
}

KINDS: dict[tuple[str, str], Table] = {
    ("v1", "Pod"): POD,
    ("v1", "Namespace"): NAMESPACE,
    ("v1", "Service"): SERVICE,
    ("v1", "PersistentVolume"): PERSISTENT_VOLUME,
    ("v1", "PersistentVolumeClaim"): PERSISTENT_VOLUME_CLAIM,
    ("policy/v1", "PodDisruptionBudget"): POD_DISRUPTION_BUDGET,
    ("scheduling.k8s.io/v1", "PriorityClass"): PRIORITY_CLASS,
    ("apps/v1", "Deployment"): DEPLOYMENT,
    ("apps/v1", "ReplicaSet"): REPLICA_SET,
    ("autoscaling/v1", "Scale"): _SCALE,
    ("batch/v1", "Job"): JOB,
    ("v1", "Binding"): _BINDING,
    ("v1", "Event"): _CORE_EVENT,
    ("events.k8s.io/v1", "Event"): _EVENT,
    ("coordination.k8s.io/v1", "Lease"): _LEASE,
    ("v1", "DeleteOptions"): _DELETE_OPTIONS,
    ("meta.k8s.io/v1", "DeleteOptions"): _DELETE_OPTIONS,
    ("resource.k8s.io/v1", "DeviceClass"): DEVICE_CLASS,
    ("resource.k8s.io/v1", "ResourceClaim"): RESOURCE_CLAIM,
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): RESOURCE_CLAIM_TEMPLATE,
    ("resource.k8s.io/v1", "ResourceSlice"): RESOURCE_SLICE,
    ("resource.k8s.io/v1beta2", "DeviceTaintRule"): DEVICE_TAINT_RULE,
    ("resource.k8s.io/v1alpha3", "DeviceTaintRule"): DEVICE_TAINT_RULE_V1ALPHA3,
    ("scheduling.k8s.io/v1alpha1", "Workload"): WORKLOAD_V1ALPHA1,
    ("scheduling.k8s.io/v1alpha2", "Workload"): WORKLOAD_V1ALPHA2,
    ("scheduling.k8s.io/v1alpha2", "PodGroup"): POD_GROUP_V1ALPHA2,
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


def _fields(buf: bytes) -> list[tuple[int, int, int | bytes]]:
    """(field number, wire type, value): a varint's int, or the bytes of a length-delimited
    or fixed-size field."""
    out: list[tuple[int, int, int | bytes]] = []
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire in (1, 2, 5):
            if wire == 2:
                size, i = _varint(buf, i)
            else:
                size = 8 if wire == 1 else 4
            if i + size > len(buf):
                raise ProtobufError("truncated field")
            value = buf[i : i + size]
            i += size
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _is_zero(wire: int, v: int | bytes) -> bool:
    """Whether a field holds its zero value: 0, no bytes, or a message of zero fields (what
    gogo-protobuf writes for a non-pointer field left unset)."""
    if isinstance(v, int):
        return v == 0
    if wire != 2:
        return not any(v)
    try:
        return all(_is_zero(w, x) for _, w, x in _fields(v))
    except ProtobufError:
        return False


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _time(buf: bytes, micro: bool) -> str | None:
    seconds = nanos = 0
    for number, _, v in _fields(buf):
        if number == 1 and isinstance(v, int):
            seconds = _signed(v)
        elif number == 2 and isinstance(v, int):
            nanos = _signed(v)
    if seconds == 0 and nanos == 0:
        return None
    try:
        t = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        raise ProtobufError(f"a time of {seconds} seconds is out of range") from None
    if not 0 <= nanos < 10**9:
        raise ProtobufError(f"a time of {nanos} nanoseconds is out of range")
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _scalar(kind: str, v: int | bytes) -> Any:
    base = kind.rstrip("?")
    if base == "string":
        if not isinstance(v, bytes):
            raise ProtobufError("a string field is not length-delimited")
        try:
            return v.decode()
        except UnicodeDecodeError:
            raise ProtobufError("a string field is not UTF-8") from None
    if base == "bytes":
        return v
    if not isinstance(v, int):
        raise ProtobufError(f"a {base} field is not a varint")
    return bool(v) if base == "bool" else _signed(v)


_QUANTITY: Table = {1: ("string", "string?")}
_MAP_VALUES: dict[str, Any] = {"map": "string?", "quantitymap": _QUANTITY, "timemap": TIME}
"""A map's entry is a message (key 1, value 2): the type of its value, by the map's."""
_INT_OR_STRING: Table = {1: ("type", "int?"), 2: ("intVal", "int?"), 3: ("strVal", "string?")}


def _message(buf: bytes, table: Table, what: str = "") -> dict[str, Any]:
    """The JSON form of a message by its table; ``what`` names it in errors."""
    out: dict[str, Any] = {}
    for number, wire, v in _fields(buf):
        field = table.get(number)
        if field is None:
            if _is_zero(wire, v):
                continue  # a field of a newer API left unset
            raise ProtobufError(f"field {number} of {what or 'the object'} is not decoded here")
        name, kind = field
        repeated = isinstance(kind, list)
        kind = kind[0] if repeated else kind
        here = f"{what}.{name}" if what and name else what or name
        value: Any
        if isinstance(kind, dict):
            if not isinstance(v, bytes):
                raise ProtobufError(f"field {here} is not a message")
            value = _message(v, kind, here)
            if not name:  # an embedded struct: its fields are its parent's
                out.update(value)
                continue
        elif kind in (TIME, MICRO_TIME):
            if not isinstance(v, bytes):
                raise ProtobufError(f"field {here} is not a time")
            value = _time(v, kind == MICRO_TIME)
        elif kind == "fieldsv1":
            raw = (
                _message(v, {1: ("Raw", "bytes")}).get("Raw", b"") if isinstance(v, bytes) else b""
            )
            try:
                value = json.loads(raw) if raw else {}
            except ValueError:
                raise ProtobufError(f"field {here} is not JSON") from None
        elif isinstance(kind, tuple):  # ("msgmap", table): a map of messages
            if not isinstance(v, bytes):
                raise ProtobufError(f"field {here} is not a map entry")
            entry = _message(v, {1: ("key", "string?"), 2: ("value", kind[1])}, here)
            out.setdefault(name, {})[entry.get("key", "")] = entry.get("value", {})
            continue
        elif kind == "rawext":
            if not isinstance(v, bytes):
                raise ProtobufError(f"field {here} is not a message")
            raw = _message(v, {1: ("Raw", "bytes")}, here).get("Raw", b"")
            try:
                value = json.loads(raw) if raw else None
            except ValueError:
                raise ProtobufError(f"field {here} is not JSON") from None
        elif kind in _MAP_VALUES:
            if not isinstance(v, bytes):
                raise ProtobufError(f"field {here} is not a map entry")
            entry = _message(v, {1: ("key", "string?"), 2: ("value", _MAP_VALUES[kind])}, here)
            value = entry.get("value")
            if kind == "quantitymap":
                value = (value or {}).get("string", "")
            out.setdefault(name, {})[entry.get("key", "")] = (
                "" if value is None and kind == "map" else value
            )
            continue
        elif kind.rstrip("?") in ("quantity", "intorstr"):
            if not isinstance(v, bytes):
                raise ProtobufError(f"field {here} is not a message")
            if kind.startswith("quantity"):
                value = _message(v, _QUANTITY, here).get("string", "")
            else:
                parts = _message(v, _INT_OR_STRING, here)
                value = (
                    parts.get("strVal", "") if parts.get("type") == 1 else parts.get("intVal", 0)
                )
            if not kind.endswith("?") and value in ("", 0) and not repeated:
                continue
        else:
            value = _scalar(kind, v)
            if not kind.endswith("?") and value in ("", 0, False) and not repeated:
                continue
        if value is None:
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
    return {"apiVersion": api, "kind": kind, **_message(unknown.get("raw", b""), table, kind)}
