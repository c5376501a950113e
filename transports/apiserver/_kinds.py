"""The hooks of the kinds that differ from a generic object (the rows of ``_registry`` name them).

- Node: its kubelet reports Ready as soon as it registers (on create).
- Pod: ValidatePodUpdate; DELETE goes through the kubelet emulation (grace period); the
  ``binding`` subresource (and the ``bindings`` resource) bind through the FakeCluster.
- Namespace: created with the ``kubernetes.io/metadata.name`` label, the ``kubernetes``
  finalizer and phase Active; the system namespaces exist from the start, and a namespace any
  cluster object lives in is created with it; DELETE removes what lives in it, never
  default/kube-system/kube-public.
- Event: events.k8s.io/v1 is stored, core/v1 is a view of it (converted both ways, as the API
  server converts between them); a new Event is also recorded in the cluster.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import msgspec

from kubesched._errors import ConflictError, NotFoundError, UnavailableError
from kubesched._objects import Binding, Event, convert

from ._http import (
    HTTPError,
    Reply,
    bad_request,
    conflict,
    details,
    invalid,
    json_reply,
    not_found,
    success,
)
from ._wire import ns_name

if TYPE_CHECKING:
    from ._registry import ResourceSpec
    from ._store import Store

__all__ = [
    "SYSTEM_NAMESPACES",
    "bind",
    "check_pod_update",
    "create_namespace",
    "delete_namespace",
    "delete_pod",
    "ensure_namespace",
    "event_from_core",
    "event_to_core",
    "kubelet_ready",
    "label_namespace",
    "record_event",
]

# --- Node --------------------------------------------------------------------------------------


def kubelet_ready(store: Store, body: dict[str, Any]) -> dict[str, Any]:
    """A Node's kubelet reports Ready as soon as it registers."""
    status = body.get("status")
    if not isinstance(status, dict):
        status = body["status"] = {}
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        conditions = status["conditions"] = []
    if not any(isinstance(c, dict) and c.get("type") == "Ready" for c in conditions):
        conditions.append(
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
            }
        )
    return body


# --- Pod ---------------------------------------------------------------------------------------

_POD_MUTABLE = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
    "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
    "previously negative)"
)


def check_pod_update(
    spec: ResourceSpec, name: str, old_wire: dict[str, Any], new_wire: dict[str, Any]
) -> None:
    """ValidatePodUpdate: the spec is immutable except images, tolerations (additions only),
    scheduling gates (removals only) and activeDeadlineSeconds."""
    old: dict[str, Any] = old_wire.get("spec", {})
    new_spec: dict[str, Any] = new_wire.get("spec", {})

    def strip(s: dict[str, Any]) -> dict[str, Any]:
        s = {
            k: v
            for k, v in s.items()
            if k not in ("tolerations", "schedulingGates", "activeDeadlineSeconds")
        }
        for group in ("containers", "initContainers"):
            if isinstance(s.get(group), list):
                s[group] = [{k: v for k, v in c.items() if k != "image"} for c in s[group]]
        return s

    old_gates = [g.get("name") for g in old.get("schedulingGates") or []]
    for g in new_spec.get("schedulingGates") or []:
        if g.get("name") not in old_gates:
            raise HTTPError(
                422,
                "Invalid",
                f"Pod \"{name}\" is invalid: spec.schedulingGates: Forbidden: only deletion is allowed, but found new scheduling gate '{g.get('name')}'",
                details(spec, name) | {"kind": "Pod"},
            )
    old_tol = old.get("tolerations") or []
    new_tol = new_spec.get("tolerations") or []
    if any(t not in new_tol for t in old_tol) or strip(old) != strip(new_spec):
        raise HTTPError(
            422,
            "Invalid",
            f'Pod "{name}" is invalid: {_POD_MUTABLE}',
            details(spec, name) | {"kind": "Pod"},
        )


async def delete_pod(
    store: Store,
    spec: ResourceSpec,
    ns: str,
    name: str,
    old: Any,
    uid: str | None,
    grace: int | None,
) -> Reply:
    """Through the kubelet emulation: the answer is the pod, terminating (or gone)."""
    await store.call(spec, name, store.cluster.delete_pod(ns, name, uid=uid, grace_seconds=grace))
    current = store.get(spec, ns, name)
    return Reply(200, spec.encode(current if current is not None else old))


async def bind(store: Store, spec: ResourceSpec, ns: str, name: str, body: dict[str, Any]) -> Reply:
    """POST pods/<name>/binding, or bindings (the name in the body)."""
    from ._registry import find_resource

    pods = find_resource("", "v1", "pods")
    assert pods is not None
    binding_res = find_resource("", "v1", "bindings")
    assert binding_res is not None
    meta = body.get("metadata") or {}
    if name and meta.get("name") and meta["name"] != name:
        raise bad_request("the name of the object does not match the name on the URL")
    name = name or meta.get("name", "")
    if meta.get("namespace") and meta["namespace"] != ns:
        raise bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    body = {**body, "metadata": {**meta, "name": name, "namespace": ns}}
    body.pop("kind", None)
    body.pop("apiVersion", None)
    try:
        binding = convert(body, Binding)
    except msgspec.ValidationError as e:
        raise bad_request(f'Binding in version "v1" cannot be handled as a Binding: {e}') from None
    if not name:
        raise invalid(
            binding_res, "", "metadata.name", "Required value: name or generateName is required"
        )
    if not binding.target.name:
        raise invalid(binding_res, name, "target.name", "Required value")
    try:
        await store.cluster.bind(binding)
    except ConflictError as e:
        raise conflict(
            pods, name, f'Operation cannot be fulfilled on pods/binding "{name}": {e}'
        ) from None
    except NotFoundError:
        raise not_found(pods, name) from None
    except UnavailableError as e:
        raise HTTPError(503, "ServiceUnavailable", str(e)) from None
    finally:
        store.drain()
    return json_reply(success(code=201), status=201)


# --- Namespace ---------------------------------------------------------------------------------

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_UNDELETABLE_NAMESPACES = ("default", "kube-system", "kube-public")


def new_namespace(store: Store, name: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = dict(meta or {})
    meta.update(name=name, uid=str(uuid.uuid4()), creationTimestamp=store.cluster.timestamp())
    meta["labels"] = {**(meta.get("labels") or {}), "kubernetes.io/metadata.name": name}
    meta.pop("namespace", None)
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta,
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def ensure_namespace(store: Store, name: str) -> None:
    if ("", name) in store.objects["Namespace"]:
        return
    store.put("Namespace", new_namespace(store, name), "ADDED")


def create_namespace(store: Store, body: dict[str, Any]) -> dict[str, Any]:
    meta = body["metadata"]
    body = new_namespace(store, meta["name"], meta) | {
        k: v for k, v in body.items() if k not in ("metadata", "status")
    }
    body["status"] = {"phase": "Active"}
    return body


def label_namespace(body: dict[str, Any], name: str) -> None:
    """On update: the ``kubernetes.io/metadata.name`` label stays."""
    body["metadata"]["labels"] = {
        **(body["metadata"].get("labels") or {}),
        "kubernetes.io/metadata.name": name,
    }


async def delete_namespace(
    store: Store,
    spec: ResourceSpec,
    ns: str,
    name: str,
    old: Any,
    uid: str | None,
    grace: int | None,
) -> Reply:
    """Remove what lives in the namespace, then the namespace: the answer is the namespace."""
    if name in _UNDELETABLE_NAMESPACES:
        raise HTTPError(
            403,
            "Forbidden",
            f'namespaces "{name}" is forbidden: this namespace may not be deleted',
            details(spec, name),
        )
    for kind in store.cluster_kinds:
        for obj in store.cluster.list(kind):
            if ns_name(obj)[0] == name:
                store.cluster.delete_object(kind, name, ns_name(obj)[1])
    store.drain()
    for st in store.namespaced_object_stores:
        for key in [k for k in store.objects[st] if k[0] == name]:
            store.remove(st, key)
    return json_reply(store.remove(spec.store, ("", name)))


# --- Event -------------------------------------------------------------------------------------


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v not in (None, "", {})}


def event_to_core(e: dict[str, Any]) -> dict[str, Any]:
    """events.k8s.io/v1 Event → core/v1 Event (as the API server converts between them)."""
    series = e.get("series") or {}
    out = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": e.get("metadata", {}),
        "involvedObject": e.get("regarding") or {},
        "reason": e.get("reason"),
        "message": e.get("note"),
        "source": e.get("deprecatedSource"),
        "firstTimestamp": e.get("deprecatedFirstTimestamp"),
        "lastTimestamp": e.get("deprecatedLastTimestamp") or series.get("lastObservedTime"),
        "count": e.get("deprecatedCount") or series.get("count"),
        "type": e.get("type"),
        "eventTime": e.get("eventTime"),
        "series": series or None,
        "action": e.get("action"),
        "related": e.get("related"),
        "reportingComponent": e.get("reportingController"),
        "reportingInstance": e.get("reportingInstance"),
    }
    return _drop_none(out) | {"metadata": out["metadata"], "involvedObject": out["involvedObject"]}


def event_from_core(e: dict[str, Any]) -> dict[str, Any]:
    """core/v1 Event → events.k8s.io/v1 Event."""
    out = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": e.get("metadata", {}),
        "regarding": e.get("involvedObject"),
        "reason": e.get("reason"),
        "note": e.get("message"),
        "deprecatedSource": e.get("source"),
        "deprecatedFirstTimestamp": e.get("firstTimestamp"),
        "deprecatedLastTimestamp": e.get("lastTimestamp"),
        "deprecatedCount": e.get("count"),
        "type": e.get("type"),
        "eventTime": e.get("eventTime"),
        "series": e.get("series"),
        "action": e.get("action"),
        "related": e.get("related"),
        "reportingController": e.get("reportingComponent")
        or (e.get("source") or {}).get("component"),
        "reportingInstance": e.get("reportingInstance"),
    }
    return _drop_none(out) | {"metadata": out["metadata"]}


async def record_event(store: Store, spec: ResourceSpec, name: str, body: Any) -> None:
    """A new Event is recorded in the cluster too (``FakeCluster.events``)."""
    try:
        event = convert(body, Event)
    except msgspec.ValidationError as e:
        raise bad_request(f'Event in version "v1" cannot be handled as a Event: {e}') from None
    await store.call(spec, name, store.cluster.record_event(event))
