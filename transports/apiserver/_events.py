"""Events in their two API forms, as the API server converts between them: events.k8s.io/v1 (the
stored one) and core/v1 (a view of it), and the core/v1 Event client-go's recorder writes for one
the cluster recorded itself (``FakeCluster.events``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from kubesched.transports.fake import EventRecord

__all__ = ["core_event", "event_from_core", "event_to_core"]


def _set(out: dict[str, Any], key: str, value: Any) -> None:
    """A field with ``omitempty``: written only when set."""
    if value not in (None, "", 0, {}):
        out[key] = value


def event_to_core(e: dict[str, Any]) -> dict[str, Any]:
    """events.k8s.io/v1 Event → core/v1 Event, as the API server converts between them
    (Convert_v1_Event_To_core_Event: the deprecated fields are the core ones, nothing is
    derived from ``eventTime`` or ``series``) and as Go writes it: ``source``, the two
    timestamps, ``eventTime`` and the reporting fields always, null or empty when unset."""
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": e.get("metadata", {}),
        "involvedObject": e.get("regarding") or {},
    }
    _set(out, "reason", e.get("reason"))
    _set(out, "message", e.get("note"))
    out["source"] = e.get("deprecatedSource") or {}
    out["firstTimestamp"] = e.get("deprecatedFirstTimestamp") or None
    out["lastTimestamp"] = e.get("deprecatedLastTimestamp") or None
    _set(out, "count", e.get("deprecatedCount"))
    _set(out, "type", e.get("type"))
    out["eventTime"] = e.get("eventTime") or None
    _set(out, "series", e.get("series"))
    _set(out, "action", e.get("action"))
    _set(out, "related", e.get("related"))
    out["reportingComponent"] = e.get("reportingController") or ""
    out["reportingInstance"] = e.get("reportingInstance") or ""
    return out


def event_from_core(e: dict[str, Any]) -> dict[str, Any]:
    """core/v1 Event → events.k8s.io/v1 Event (Convert_core_Event_To_v1_Event), as Go writes
    it: ``eventTime``, ``regarding``, ``deprecatedSource`` and the deprecated timestamps
    always."""
    out: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": e.get("metadata", {}),
        "eventTime": e.get("eventTime") or None,
    }
    _set(out, "series", e.get("series"))
    _set(
        out,
        "reportingController",
        e.get("reportingComponent") or (e.get("source") or {}).get("component"),
    )
    _set(out, "reportingInstance", e.get("reportingInstance"))
    _set(out, "action", e.get("action"))
    _set(out, "reason", e.get("reason"))
    out["regarding"] = e.get("involvedObject") or {}
    _set(out, "related", e.get("related"))
    _set(out, "note", e.get("message"))
    _set(out, "type", e.get("type"))
    out["deprecatedSource"] = e.get("source") or {}
    out["deprecatedFirstTimestamp"] = e.get("firstTimestamp") or None
    out["deprecatedLastTimestamp"] = e.get("lastTimestamp") or None
    _set(out, "deprecatedCount", e.get("count"))
    return out


def core_event(record: EventRecord, timestamp: Callable[[], str]) -> dict[str, Any]:
    """An Event the cluster recorded (a controller's, or a scheduler's sent straight to the
    FakeCluster) as client-go's core/v1 recorder (``tools/record``) writes it: named
    ``<object>.<unix nanoseconds in hex>``, first and last seen at its time, count 1, its
    component as ``source`` and as ``reportingComponent``; ``timestamp`` (the cluster's clock)
    dates a record without a time."""
    ref = msgspec.to_builtins(record.regarding) if record.regarding is not None else {}
    namespace = ref.get("namespace") or "default"
    at = datetime.fromisoformat((record.timestamp or timestamp()).replace("Z", "+00:00"))
    nanos = int(at.timestamp()) * 10**9 + at.microsecond * 1000
    seen = at.strftime("%Y-%m-%dT%H:%M:%SZ")  # a metav1.Time: whole seconds
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{ref.get('name') or record.object.rsplit('/', 1)[-1]}.{nanos:x}",
            "namespace": namespace,
        },
        "involvedObject": ref,
    }
    _set(out, "reason", record.reason)
    _set(out, "message", record.message)
    out["source"] = {"component": record.source} if record.source else {}
    out["firstTimestamp"] = seen
    out["lastTimestamp"] = seen
    out["count"] = 1
    _set(out, "type", record.type)
    out["eventTime"] = None
    out["reportingComponent"] = record.source
    out["reportingInstance"] = ""
    return out
