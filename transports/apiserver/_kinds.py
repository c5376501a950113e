"""The hooks of the kinds that differ from a generic object (the rows of ``_registry`` name them).

- Node: its kubelet reports Ready as soon as it registers (on create).
- Pod: ValidatePodUpdate; DELETE goes through the kubelet emulation (grace period); the
  ``binding`` subresource (and the ``bindings`` resource) bind through the FakeCluster; the
  ``eviction`` subresource (a policy/v1 Eviction) deletes the pod if its PodDisruptionBudget
  allows it, as upstream's ``EvictionREST``.
- Namespace: created with the ``kubernetes.io/metadata.name`` label, the ``kubernetes``
  finalizer and phase Active; the system namespaces exist from the start, and a namespace any
  cluster object lives in is created with it (by the store, ``_store.ensure_namespace``);
  DELETE removes what lives in it, never default/kube-system/kube-public.
- Deployment, ReplicaSet, StatefulSet, ReplicationController: the ``scale`` subresource, an
  autoscaling/v1 Scale of ``spec.replicas`` (a write of it updates the object).
- Event: events.k8s.io/v1 is stored, core/v1 is a view of it (converted both ways, as the API
  server converts between them: ``_events``); a new Event is also recorded in the cluster, and
  the Events the cluster records itself (its controllers', or a scheduler's sent to the
  FakeCluster) are stored as client-go's core/v1 recorder writes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec.structs import replace

from kubesched import ConflictError, NotFoundError, UnavailableError
from kubesched.api import (
    Binding,
    Event,
    Pod,
    PodCondition,
    PodDisruptionBudget,
    convert,
    selector_matches,
)

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
from ._params import FieldError, meta_invalid, not_supported
from ._selectors import label_selector_string
from ._store import new_namespace
from ._wire import ns_name

if TYPE_CHECKING:
    from ._resource import PostHook, ResourceSpec
    from ._store import Store

__all__ = [
    "SYSTEM_NAMESPACES",
    "bind",
    "binder",
    "check_pod_update",
    "create_namespace",
    "delete_namespace",
    "delete_pod",
    "evict",
    "evictor",
    "kubelet_ready",
    "label_namespace",
    "record_event",
    "scale_of",
    "write_scale",
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


Find = Callable[[str, str, str], "ResourceSpec | None"]
"""The registry's lookup of a row by (group, version, resource)."""


def binder(find: Find) -> PostHook:
    """The POST hook of pods/<name>/binding and of bindings: :func:`bind`, with ``find`` for
    the pods and bindings rows its errors name."""

    async def hook(
        store: Store, spec: ResourceSpec, ns: str, name: str, body: dict[str, Any]
    ) -> Reply:
        return await bind(store, ns, name, body, find)

    return hook


async def bind(store: Store, ns: str, name: str, body: dict[str, Any], find: Find) -> Reply:
    """POST pods/<name>/binding, or bindings (the name in the body)."""
    pods = find("", "v1", "pods")
    assert pods is not None
    binding_res = find("", "v1", "bindings")
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
    # ValidatePodBinding (pkg/apis/core/validation): upstream returns its errors unwrapped,
    # which its API server answers with a 500; a client's error here is a 422 Invalid
    errs: list[FieldError] = []
    if binding.target.kind not in ("", "Node"):
        errs.append(not_supported("target.kind", binding.target.kind, ["Node", "<empty>"]))
    if not binding.target.name:
        errs.append(FieldError("target.name", "Required value"))
    if errs:
        raise meta_invalid("Binding", errs, group="", name=name)
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


# --- Eviction ----------------------------------------------------------------------------------

# pkg/registry/core/pod/storage/eviction.go (v1.35)
_VIOLATES_BUDGET = "Cannot evict pod as it would violate the pod's disruption budget."
_MANY_BUDGETS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def _too_many_requests(cause: str, retry_after: int) -> HTTPError:
    """``errors.NewTooManyRequests`` with a ``DisruptionBudget`` cause."""
    d: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after:
        d["retryAfterSeconds"] = retry_after
    return HTTPError(429, "TooManyRequests", _VIOLATES_BUDGET, d)


def evictor(find: Find) -> PostHook:
    """The POST hook of pods/<name>/eviction: :func:`evict`, with ``find`` for the pods row."""

    async def hook(store: Store, spec: ResourceSpec, ns: str, name: str, body: dict[str, Any]) -> Reply:
        return await evict(store, ns, name, body, find)

    return hook


async def evict(store: Store, ns: str, name: str, body: dict[str, Any], find: Find) -> Reply:
    """POST pods/<name>/eviction (``EvictionREST.Create``): a pod that is finished, Pending or
    terminating is deleted at once; else its PodDisruptionBudget (one at most: 500 for more)
    must allow a disruption (429 otherwise, or while the budget's status lags its generation),
    which the eviction spends (``disruptionsAllowed`` - 1, the pod in ``disruptedPods``); an
    unready pod is deleted without spending it while the budget has its healthy pods.  The pod
    then gets DisruptionTarget (EvictionByEvictionAPI) and is deleted with the Eviction's
    deleteOptions (gracePeriodSeconds, preconditions); ``dryRun`` only checks."""
    pods = find("", "v1", "pods")
    assert pods is not None
    kind, api = body.get("kind"), body.get("apiVersion")
    if (kind and kind != "Eviction") or (api and api not in ("policy/v1", "policy/v1beta1")):
        raise bad_request(
            f"the API version in the data ({api}) does not match the expected API version (policy/v1)"
            if api and api not in ("policy/v1", "policy/v1beta1")
            else f"the kind in the data ({kind}) does not match the expected kind (Eviction)"
        )
    meta, opts = body.get("metadata") or {}, body.get("deleteOptions") or {}
    if not isinstance(meta, dict) or not isinstance(opts, dict):
        raise bad_request('Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal '
                          "into Go struct field Eviction of an object")  # fmt: skip
    if meta.get("name", "") != name:
        raise bad_request("name in URL does not match name in Eviction object")
    if meta.get("namespace") and meta["namespace"] != ns:
        raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
    store.drain()
    pod: Pod | None = store.cluster.get_pod(ns, name)
    if pod is None:
        raise not_found(pods, name)
    pre = opts.get("preconditions") or {}
    if pre.get("uid") and pre["uid"] != pod.metadata.uid:
        raise conflict(pods, name, f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {pod.metadata.uid}")
    if pre.get("resourceVersion") and str(pre["resourceVersion"]) != pod.metadata.resource_version:
        raise conflict(
            pods, name, f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
            f"ResourceVersion in object meta: {pod.metadata.resource_version}",
        )  # fmt: skip
    dry_run = bool(opts.get("dryRun"))
    ignore_budget = pod.status.phase in ("Succeeded", "Failed", "Pending") or pod.metadata.deletion_timestamp
    if not ignore_budget:
        _spend_budget(store, pod, dry_run)
    if not dry_run:
        if not ignore_budget:
            cond = PodCondition(type="DisruptionTarget", status="True", reason="EvictionByEvictionAPI",
                                message="Eviction API: evicting", last_transition_time=store.cluster.timestamp())  # fmt: skip
            conditions = [*(c for c in pod.status.conditions if c.type != cond.type), cond]
            md = replace(pod.metadata, resource_version="")
            store.cluster.update(replace(pod, metadata=md, status=replace(pod.status, conditions=conditions)))
        grace = opts.get("gracePeriodSeconds")
        await store.call(pods, name, store.cluster.delete_pod(ns, name, grace_seconds=grace if isinstance(grace, int) else None))
    return json_reply(success(), status=201)


def _spend_budget(store: Store, pod: Pod, dry_run: bool) -> None:
    """``checkAndDecrement`` on the pod's one PodDisruptionBudget, if it has one."""
    md = pod.metadata
    budgets: list[PodDisruptionBudget] = [
        b for b in store.cluster.list("PodDisruptionBudget")
        if b.metadata.namespace == md.namespace and b.spec.selector is not None
        and (b.spec.selector.match_labels or b.spec.selector.match_expressions)  # empty matches nothing
        and selector_matches(b.spec.selector, md.labels)
    ]  # fmt: skip
    if len(budgets) > 1:
        raise HTTPError(500, "", _MANY_BUDGETS)
    if not budgets:
        return
    pdb = budgets[0]
    st = pdb.status
    healthy, desired = (st.current_healthy, st.desired_healthy) if st is not None else (0, 0)
    ready = any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions) or (
        pod.status.phase == "Running" and not any(c.type == "Ready" for c in pod.status.conditions)
    )
    if not ready and healthy >= desired > 0:
        return  # an unready pod does not count towards healthy: nothing to spend
    if st is None or st.observed_generation < pdb.metadata.generation:
        raise _too_many_requests(f"The disruption budget {pdb.metadata.name} is still being processed by the server.", 10)
    if st.disruptions_allowed < 0:
        raise HTTPError(403, "Forbidden", f'poddisruptionbudget.policy "{pdb.metadata.name}" is forbidden: pdb disruptions allowed is negative',
                        {"name": pdb.metadata.name, "group": "policy", "kind": "poddisruptionbudget"})  # fmt: skip
    if st.disruptions_allowed == 0:
        raise _too_many_requests(
            f"The disruption budget {pdb.metadata.name} needs {st.desired_healthy} healthy pods and has "
            f"{st.current_healthy} currently", 0,
        )  # fmt: skip
    if dry_run:
        return
    spent = replace(st, disruptions_allowed=st.disruptions_allowed - 1,
                    disrupted_pods={**st.disrupted_pods, md.name: store.cluster.timestamp()})  # fmt: skip
    store.cluster.update(replace(pdb, metadata=replace(pdb.metadata, resource_version=""), status=spent))


# --- Scale -------------------------------------------------------------------------------------

_SCALE_META = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
_INT32 = (-(2**31), 2**31 - 1)


def scale_of(spec: ResourceSpec, obj: dict[str, Any]) -> dict[str, Any]:
    """The autoscaling/v1 Scale of an object with replicas (scaleFromDeployment and its
    siblings): its name, namespace, uid, resourceVersion and creationTimestamp; the desired
    replicas; the current ones and the selector in string form."""
    meta = obj.get("metadata") or {}
    obj_spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    out_meta = {k: meta[k] for k in _SCALE_META if k in meta}
    out_meta.setdefault("creationTimestamp", None)
    scale_spec: dict[str, Any] = {}
    if obj_spec.get("replicas"):
        scale_spec["replicas"] = obj_spec["replicas"]
    scale_status: dict[str, Any] = {"replicas": status.get("replicas") or 0}
    selector = label_selector_string(
        obj_spec.get("selector"), as_set=spec.kind == "ReplicationController"
    )
    if selector:
        scale_status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": out_meta,
        "spec": scale_spec,
        "status": scale_status,
    }


_JSON_TYPES: dict[type, str] = {str: "string", list: "array", dict: "object"}
"""encoding/json's name for a JSON value of each Python type (numbers and bools apart)."""


def _undecodable_scale(value: Any, field: str, go_type: str) -> HTTPError:
    """400 for a Scale field of the wrong JSON type, in encoding/json's words."""
    if isinstance(value, bool):
        what = "bool"
    elif isinstance(value, int | float):
        what = f"number {msgspec.json.encode(value).decode()}"
    else:
        what = _JSON_TYPES.get(type(value), "value")
    return bad_request(
        'Scale in version "v1" cannot be handled as a Scale: '
        f"json: cannot unmarshal {what} into Go struct field {field} of type {go_type}"
    )


def write_scale(
    spec: ResourceSpec, name: str, obj: dict[str, Any], scale: dict[str, Any]
) -> dict[str, Any]:
    """A Scale a client sent, laid over the object (scaleUpdatedObjectInfo.UpdatedObject): it is
    decoded and validated (ValidateScale), its uid is a precondition, and its replicas and
    resourceVersion become the object's (storage then checks that resourceVersion)."""
    kind, api = scale.get("kind"), scale.get("apiVersion")
    if (kind and kind != "Scale") or (api and api != "autoscaling/v1"):
        raise bad_request(
            f"the API version in the data ({api}) does not match the expected API version (autoscaling/v1)"
            if api and api != "autoscaling/v1"
            else f"the kind in the data ({kind}) does not match the expected kind (Scale)"
        )
    meta, scale_spec = scale.get("metadata") or {}, scale.get("spec") or {}
    for field, value, go_type in (
        ("Scale.metadata", meta, "v1.ObjectMeta"),
        ("Scale.spec", scale_spec, "v1.ScaleSpec"),
    ):
        if not isinstance(value, dict):
            raise _undecodable_scale(value, field, go_type)
    replicas = scale_spec.get("replicas")
    replicas = 0 if replicas is None else replicas
    if (
        isinstance(replicas, bool)
        or not isinstance(replicas, int)
        or not _INT32[0] <= replicas <= _INT32[1]
    ):
        raise _undecodable_scale(replicas, "ScaleSpec.spec.replicas", "int32")
    if meta.get("name") and meta["name"] != name:
        raise bad_request("the name of the object does not match the name on the URL")
    if spec.namespaced and meta.get("namespace") and meta["namespace"] != ns_name(obj)[0]:
        raise bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    if replicas < 0:
        message = f"Invalid value: {replicas}: must be greater than or equal to 0"
        raise HTTPError(
            422,
            "Invalid",
            f'Scale.autoscaling "{name}" is invalid: spec.replicas: {message}',
            {
                "name": name,
                "group": "autoscaling",
                "kind": "Scale",
                "causes": [
                    {"reason": "FieldValueInvalid", "message": message, "field": "spec.replicas"}
                ],
            },
        )
    uid = (obj.get("metadata") or {}).get("uid", "")
    if meta.get("uid") and meta["uid"] != uid:
        raise HTTPError(
            409,
            "Conflict",
            f"Operation cannot be fulfilled on {spec.plural}/scale{'.' + spec.group if spec.group else ''} "
            f'"{name}": Precondition failed: UID in precondition: {meta["uid"]}, UID in object meta: {uid}',
            {"name": name, "group": spec.group, "kind": f"{spec.plural}/scale"}
            if spec.group
            else {"name": name, "kind": f"{spec.plural}/scale"},
        )
    obj.setdefault("spec", {})["replicas"] = replicas
    obj.setdefault("metadata", {})["resourceVersion"] = str(meta.get("resourceVersion") or "")
    return obj


# --- Namespace ---------------------------------------------------------------------------------

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_UNDELETABLE_NAMESPACES = ("default", "kube-system", "kube-public")


def create_namespace(store: Store, body: dict[str, Any]) -> dict[str, Any]:
    """The namespace strategy's PrepareForCreate: phase Active, the ``kubernetes`` finalizer
    added to those sent."""
    meta = body["metadata"]
    body = new_namespace(store, meta["name"], meta) | {
        k: v for k, v in body.items() if k not in ("metadata", "status")
    }
    spec: dict[str, Any] = body["spec"] if isinstance(body.get("spec"), dict) else {}
    sent = spec.get("finalizers")
    finalizers: list[Any] = sent if isinstance(sent, list) else []
    if "kubernetes" not in finalizers:
        finalizers = [*finalizers, "kubernetes"]
    body["spec"] = {**spec, "finalizers": finalizers}
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


async def record_event(store: Store, spec: ResourceSpec, name: str, body: Any) -> None:
    """A new Event is recorded in the cluster too (``FakeCluster.events``); the server keeps
    that record from being served a second time (``Store.posted_events``)."""
    try:
        event = convert(body, Event)
    except msgspec.ValidationError as e:
        raise bad_request(f'Event in version "v1" cannot be handled as a Event: {e}') from None

    async def record() -> None:
        await store.cluster.record_event(event)
        # appended last, with no await since: this request's record
        store.posted_events.add(len(store.cluster.events) - 1)

    await store.call(spec, name, record())
