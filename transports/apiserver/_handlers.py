"""The generic REST verbs over any row of the registry: get, list, watch, create, update (PUT),
patch (JSON, merge, strategic merge, server-side apply) and delete, on the resource and its
``status`` subresource, with label/field selectors, limit/continue, resourceVersion and UID
preconditions, dryRun, and ``kubectl get``'s Table output.

Each verb reads and writes through the row's backend (``_store``) and calls the row's hooks
(``_kinds``) where a kind differs.  A view row (core/v1 Events) is read through its conversion;
its writes are converted and made on the row it views.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import anyio.to_thread
import msgspec
import yaml

from kubesched.api import (
    VALIDATION_MODES,
    decode_json,
    drop_nulls,
    field_warning,
    knows,
    load_yaml_documents,
    strict_error,
    unknown_fields,
)
from kubesched.validation import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
)

from . import _protobuf as protobuf
from ._fieldlabels import field_labels
from ._http import (
    HTTPError,
    Reply,
    already_exists,
    bad_request,
    conflict,
    details,
    invalid,
    json_reply,
    method_not_allowed,
    not_found,
    success,
)
from ._params import (
    check_delete_options,
    check_list_options,
    check_patch_options,
    flag,
    resource_version,
    watch_timeout,
)
from ._patch import PatchError, apply_json_patch, json_merge_patch, strategic_merge_patch
from ._registry import find_resource
from ._selectors import SelectorError, parse_field_selector, parse_label_selector
from ._table import table
from ._watch import WatchPlan, WatchServer, watch
from ._wire import labels_of, ns_name, private_copy, rv_of, uid_of

if TYPE_CHECKING:
    from ._http import Request
    from ._resource import ResourceSpec, Subresource
    from ._store import Store

__all__ = ["Server", "handle", "offload"]

T = TypeVar("T")


class Server(WatchServer, Protocol):
    """What the handlers need of the server (``_server.APIServer``): what its watches need, and
    the size of a request body past which it is decoded in a worker thread."""

    offload_bytes: int


# metadata a client cannot set on create
_SYSTEM_FIELDS = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
    "selfLink",
)
# metadata an update keeps from the stored object
_KEPT_ON_UPDATE = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
)


async def handle(
    server: Server,
    req: Request,
    spec: ResourceSpec,
    namespace: str | None,
    name: str,
    sub: str,
) -> Reply | WatchPlan:
    """One request on ``spec``'s resource: ``namespace`` from the path (None when none),
    ``name`` and ``sub`` (subresource) when given."""
    m, q = req.method, req.query
    ns = namespace if spec.namespaced and namespace else ""
    as_table = "as=Table" in req.headers.get("accept", "")
    if spec.backend is None and not (m == "POST" and not name):
        raise method_not_allowed()
    if sub and spec.subresources[sub].view is not None:
        return await _subresource_view(server, req, spec, ns, name, spec.subresources[sub])
    if m in ("GET", "HEAD") and not name:
        watching = bool(flag(q, "watch"))
        matcher = _list_options(spec, namespace, q, watching)
        if watching:
            return watch(server, spec, namespace, q, as_table, matcher)
        return _list(server, spec, namespace, q, as_table, matcher)
    if m in ("GET", "HEAD"):
        resource_version(q.get("resourceVersion", ""))
        return _get(server, spec, ns, name, q, as_table)
    body: dict[str, Any] = {}
    warnings: tuple[str, ...] = ()
    if m in ("POST", "PUT"):
        body, warnings = await offload(server, len(req.body), _decoded, req, spec, sub)
    reply = await handle_write(server, req, spec, namespace, ns, name, sub, body)
    if warnings and isinstance(reply, Reply):
        reply.warnings = (*reply.warnings, *warnings)
    return reply


async def offload(server: Server, size: int, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``: CPU work on the request's own data (decoding, defaulting, validating its
    body), in a worker thread when the body is over the server's ``offload_bytes`` so that the
    other clients are answered meanwhile (and a signal is handled at once: the request is then
    given up, its thread left to finish)."""
    if size <= server.offload_bytes:
        return fn(*args)
    return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)


def _body_kind(spec: ResourceSpec, sub: str) -> tuple[str, str, str]:
    """(group/version, version, kind) of what a request on ``spec`` (and ``sub``) carries: the
    resource's own kind, or its subresource's (a pod's binding takes a v1 Binding, a scale an
    autoscaling/v1 Scale), which is what its fields are checked against."""
    s = spec.subresources[sub] if sub else None
    if s is None or not s.kind:
        return spec.group_version, spec.version, spec.kind
    if s.group is None and not s.version:
        return spec.group_version, spec.version, s.kind
    return (f"{s.group}/{s.version}" if s.group else s.version), s.version, s.kind


def _decoded(req: Request, spec: ResourceSpec, sub: str = "") -> tuple[dict[str, Any], tuple[str, ...]]:
    """A POST's or PUT's object, and the warnings of its field validation (against the kind the
    request carries: :func:`_body_kind`)."""
    body = _body(req)
    gv, version, kind = _body_kind(spec, sub)
    if knows(gv, kind):
        # a null field is an absent one, as Go decodes it into these kinds' types (the
        # kinds kept as sent echo a null back, as Go's encoding of a nil field without
        # omitempty does); in a PATCH, null means "remove"
        body = drop_nulls(body)
    release = spec.unknown_in_release(body) if spec.unknown_in_release is not None and not sub else []
    return body, _field_validation(gv, version, kind, body, req.query, release)


def _field_validation(
    gv: str, version: str, kind: str, body: Any, q: dict[str, str], release: list[str] | None = None
) -> tuple[str, ...]:
    """``fieldValidation`` (default Warn, as the API server's): Strict refuses a body with
    fields its kind does not have (400, the strict decoding error), Warn answers a Warning
    header for each, Ignore says nothing; the fields are dropped either way.  ``release``: the
    paths of fields already taken out that the emulated release's kind lacks."""
    mode = q.get("fieldValidation") or "Warn"
    if mode not in VALIDATION_MODES:
        raise bad_request(
            f"fieldValidation must be one of Ignore, Warn, or Strict, got {go_quote(mode)}"
        )
    if mode == "Ignore" or not isinstance(body, dict):
        return ()
    unknown = unknown_fields(body, gv, kind)
    if release:
        unknown = [*release, *unknown]
    if not unknown:
        return ()
    if mode == "Strict":
        raise bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: ' + strict_error(unknown)
        )
    return tuple(field_warning(p) for p in unknown)


async def handle_write(
    server: Server,
    req: Request,
    spec: ResourceSpec,
    namespace: str | None,
    ns: str,
    name: str,
    sub: str,
    body: Any,
) -> Reply | WatchPlan:
    """A POST, PUT, PATCH or DELETE of :func:`handle`."""
    m, q = req.method, req.query
    if m == "POST" and not name and spec.create is not None:
        return await spec.create(server.store, spec, ns, "", body)
    post = spec.subresources[sub].post if sub else None
    if m == "POST" and post is not None:
        if q.get("dryRun") and sub == "eviction":  # propagateDryRun: into its deleteOptions
            opts = body.get("deleteOptions")
            body = {**body, "deleteOptions": {**(opts if isinstance(opts, dict) else {}), "dryRun": [q["dryRun"]]}}
        return await post(server.store, spec, ns, name, body)
    if m == "POST" and not name:
        if spec.namespaced and namespace is None:
            raise method_not_allowed()
        return await _create(server, spec, ns, body, q, size=len(req.body))
    if m == "PUT" and name:
        return await _update(server, spec, ns, name, sub, body, q, size=len(req.body))
    if m == "PATCH" and name:
        return await _patch(server, req, spec, ns, name, sub)
    if m == "DELETE" and name and not sub:
        return await _delete(server, req, spec, ns, name)
    raise method_not_allowed()


def _int_param(q: dict[str, str], key: str) -> int:
    """An int64 query parameter (0 when absent); 400 when it is not one, as upstream's
    parameter conversion."""
    raw = q.get(key) or ""
    if not raw:
        return 0
    if not re.fullmatch(r"-?[0-9]{1,19}", raw) or not -(2**63) <= int(raw) < 2**63:
        raise bad_request(f'{key}: Invalid value: "{raw}": strconv.ParseInt: parsing "{raw}": invalid syntax')
    return int(raw)


_JSON_TYPES = ("application/json", "")
_YAML_TYPES = ("application/yaml", "application/apply-patch+yaml")
_PROTOBUF = "application/vnd.kubernetes.protobuf"
_ACCEPTED = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
_PROTOBUF_KINDS = ", ".join(sorted({f"{api} {kind}" for api, kind in protobuf.KINDS}))


def unsupported_media_type(message: str = "") -> HTTPError:
    """415, as the API server answers a body in a media type it does not decode."""
    return HTTPError(
        415,
        "UnsupportedMediaType",
        message
        or f"the body of the request was in an unknown format - accepted media types include: {_ACCEPTED}",
    )


def _body(req: Request, yaml_ok: bool = True) -> dict[str, Any]:
    """The request's object: JSON, YAML, or Kubernetes protobuf for the kinds decoded
    (``_protobuf``); any other media type is 415."""
    ctype = req.headers.get("content-type", "").split(";")[0].strip().lower()
    try:
        if ctype in _YAML_TYPES and yaml_ok:
            docs = load_yaml_documents(req.body.decode("utf-8"))
            data = docs[0] if len(docs) == 1 else docs
        elif ctype in _JSON_TYPES:
            data = decode_json(req.body) if req.body else {}
        elif ctype == _PROTOBUF:
            data = protobuf.decode(req.body) if req.body else {}
        else:
            raise unsupported_media_type()
    except protobuf.ProtobufError as e:
        raise unsupported_media_type(
            f"the body of the request could not be decoded as {_PROTOBUF} ({e}): "
            f"this server decodes it for {_PROTOBUF_KINDS}; send other objects as application/json"
        ) from None
    except (ValueError, yaml.YAMLError) as e:
        raise bad_request(f"the body of the request was in an unknown format: {e}") from None
    if not isinstance(data, dict):
        raise bad_request("the body of the request must be a JSON object")
    return data


# --- reads -------------------------------------------------------------------------------------


def _get(
    server: Server, spec: ResourceSpec, ns: str, name: str, q: dict[str, str], as_table: bool
) -> Reply:
    obj = server.store.get(spec, ns, name)
    if obj is None:
        raise not_found(spec, name)
    if as_table:
        return json_reply(
            table(
                spec.printer,
                [spec.printable(obj)],
                server.store.now(),
                resource_version=rv_of(obj),
                include_object=q.get("includeObject", "Metadata"),
            )
        )
    return Reply(200, spec.encode(obj))


Matcher = tuple[Callable[[Any], bool] | None, bool]


def _list_options(
    spec: ResourceSpec, namespace: str | None, q: dict[str, str], watching: bool
) -> Matcher:
    """A list's or watch's options checked in upstream's order: each parameter decodes (400),
    ``ValidateListOptions`` (422), each field selector label is the kind's (400), the
    resourceVersion is one (400); then the selectors' matcher."""
    _int_param(q, "limit")
    watch_timeout(q, 0.0)
    try:
        parse_label_selector(q.get("labelSelector"))
        parse_field_selector(q.get("fieldSelector"))
    except SelectorError as e:
        raise bad_request(str(e)) from None
    check_list_options(q, watching)
    matcher = _matcher(spec, namespace, q)
    resource_version(q.get("resourceVersion", ""))
    return matcher


def _matcher(spec: ResourceSpec, namespace: str | None, q: dict[str, str]) -> Matcher:
    """(match function or None for all, whether it can change as an object changes)."""
    try:
        labels = parse_label_selector(q.get("labelSelector"))
        fields = parse_field_selector(q.get("fieldSelector"), field_labels(spec).resolve)
    except SelectorError as e:
        raise bad_request(str(e)) from None
    ns = namespace if spec.namespaced else None
    if labels is None and fields is None and ns is None:
        return None, False

    def matches(obj: Any) -> bool:
        if ns is not None and ns_name(obj)[0] != ns:
            return False
        if labels is not None and not labels(labels_of(obj)):
            return False
        return fields is None or fields(spec.wire(obj))

    return matches, labels is not None or fields is not None


def _list(
    server: Server,
    spec: ResourceSpec,
    namespace: str | None,
    q: dict[str, str],
    as_table: bool,
    matcher: Matcher,
) -> Reply:
    matches, _ = matcher
    objs = server.store.list(spec, namespace)
    if matches is not None:
        objs = [o for o in objs if matches(o)]
    rv = server.store.resource_version
    start: tuple[str, ...] = ()
    if q.get("continue"):
        try:
            token = json.loads(base64.urlsafe_b64decode(q["continue"].encode()))
            start = tuple(token["start"])
        except (ValueError, KeyError, TypeError):
            raise bad_request(
                "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
            ) from None
        objs = [o for o in objs if ns_name(o) > start]
    cont = ""
    limit = _int_param(q, "limit")
    if limit > 0 and len(objs) > limit:
        objs = objs[:limit]
        last = list(ns_name(objs[-1]))
        cont = base64.urlsafe_b64encode(
            json.dumps({"v": "meta.k8s.io/v1", "rv": int(rv), "start": last}).encode()
        ).decode()
    if as_table:
        t = table(
            spec.printer,
            [spec.printable(o) for o in objs],
            server.store.now(),
            resource_version=rv,
            include_object=q.get("includeObject", "Metadata"),
            continue_token=cont,
        )
        return json_reply(t)
    meta: dict[str, Any] = {"resourceVersion": rv}
    if cont:
        meta["continue"] = cont
    return json_reply(
        {
            "kind": f"{spec.kind}List",
            "apiVersion": spec.group_version,
            "metadata": meta,
            "items": [_list_item(spec, spec.wire(o)) for o in objs],
        }
    )


def _list_item(spec: ResourceSpec, obj: dict[str, Any]) -> dict[str, Any]:
    """An item of a list as the API server writes it: a built-in kind's items carry no
    apiVersion and kind (the list's name them; a watch event's object has them), a custom
    resource's do (they are stored with them)."""
    if spec.crd:
        return obj
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


# --- writes ------------------------------------------------------------------------------------


def _check_identity(
    spec: ResourceSpec, ns: str, body: dict[str, Any], name: str = ""
) -> dict[str, Any]:
    """The body's kind, apiVersion, namespace and name agree with the request (and are set)."""
    kind, api = body.get("kind"), body.get("apiVersion")
    if (kind and kind != spec.kind) or (api and api != spec.group_version):
        raise bad_request(
            f"the API version in the data ({api}) does not match the expected API version ({spec.group_version})"
            if api and api != spec.group_version
            else f"the kind in the data ({kind}) does not match the expected kind ({spec.kind})"
        )
    body["kind"], body["apiVersion"] = spec.kind, spec.group_version
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        meta = body["metadata"] = {}
    if spec.namespaced:
        if meta.get("namespace") and meta["namespace"] != ns:
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        meta["namespace"] = ns
    else:
        meta.pop("namespace", None)
    if name and meta.get("name") and meta["name"] != name:
        raise bad_request("the name of the object does not match the name on the URL")
    if name:
        meta["name"] = name
    return meta


def _check_name(spec: ResourceSpec, name: Any) -> None:
    """The name rule of every kind served: a DNS-1123 subdomain (a label for a Namespace); 422."""
    if not isinstance(name, str):
        raise invalid(spec, "", "metadata.name", f"Invalid value: {name!r}: must be a string")
    errs = dns1123_label_errors(name) if spec.kind == "Namespace" else dns1123_subdomain_errors(name)
    if errs:
        raise invalid(spec, name, "metadata.name", f"Invalid value: {go_quote(name)}: {errs[0]}")


def _defaulted_and_decoded(store: Store, spec: ResourceSpec, body: dict[str, Any]) -> Any:
    """``body`` with the kind's defaults, as its backend stores it (decoded and validated): the
    work on the request's own object, free to run in a worker thread."""
    assert spec.backend is not None
    if spec.defaults is not None:
        spec.defaults(body)
    return spec.backend.decode(store, spec, body)


def _viewed(spec: ResourceSpec) -> ResourceSpec:
    """The row a view row's writes are made on."""
    assert spec.view is not None
    target = find_resource(*spec.view.of)
    assert target is not None
    return target


def _to_view(spec: ResourceSpec, reply: Reply) -> Reply:
    """A reply of the viewed row, converted for the view row ``spec``."""
    assert spec.view is not None
    return Reply(reply.status, msgspec.json.encode(spec.view.to_view(json.loads(reply.body))))


async def _create(
    server: Server,
    spec: ResourceSpec,
    ns: str,
    body: dict[str, Any],
    q: dict[str, str],
    *,
    size: int = 0,
) -> Reply:
    """POST: ``size`` is the request body's (a big one is decoded in a worker thread)."""
    if spec.view is not None:
        _check_identity(spec, ns, body)
        body = spec.view.from_view(body)
        return _to_view(spec, await _create(server, _viewed(spec), ns, body, q, size=size))
    store, backend = server.store, spec.backend
    assert backend is not None
    meta = _check_identity(spec, ns, body)
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"] + "".join(
            secrets.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5)
        )
    name = meta.get("name", "")
    if not name:
        raise invalid(spec, "", "metadata.name", "Required value: name or generateName is required")
    _check_name(spec, name)
    for k in _SYSTEM_FIELDS:
        meta.pop(k, None)
    meta["uid"] = str(uuid.uuid4())
    body = (spec.prepare_create or backend.prepare_create)(store, body)
    obj = await offload(server, size, _defaulted_and_decoded, store, spec, body)
    if backend.get(store, spec, ns, name) is not None:
        raise already_exists(spec, name)
    if q.get("dryRun"):
        return Reply(201, spec.encode(obj))
    if spec.on_create is not None:
        await spec.on_create(store, spec, name, obj)
    return Reply(201, spec.encode(backend.create(store, spec, obj)))


async def _update(
    server: Server,
    spec: ResourceSpec,
    ns: str,
    name: str,
    sub: str,
    body: dict[str, Any],
    q: dict[str, str],
    *,
    size: int = 0,
) -> Reply:
    old = server.store.get(spec, ns, name)
    if old is None:
        raise not_found(spec, name)
    dry_run = bool(q.get("dryRun"))
    if spec.view is not None:
        _check_identity(spec, ns, body)
        body = spec.view.from_view(body)
        reply = await _replace(server, _viewed(spec), ns, name, sub, old, body, dry_run, size=size)
        return _to_view(spec, reply)
    _check_identity(spec, ns, body, name)
    return await _replace(server, spec, ns, name, sub, old, body, dry_run, size=size)


async def _replace(
    server: Server,
    spec: ResourceSpec,
    ns: str,
    name: str,
    sub: str,
    old: Any,
    new: dict[str, Any],
    dry_run: bool,
    *,
    size: int = 0,
) -> Reply:
    """Store ``new`` (wire form) in place of ``old``, with the rules of a PUT on the resource
    or on its status subresource; ``size`` is the request body's."""
    store, backend = server.store, spec.backend
    assert backend is not None
    old_wire = backend.encode(old)
    new_meta = new.get("metadata") or {}
    if new_meta.get("uid") and new_meta["uid"] != uid_of(old):
        raise conflict(
            spec,
            name,
            f"Precondition failed: UID in precondition: {new_meta['uid']}, UID in object meta: {uid_of(old)}",
        )
    rv = str(new_meta.get("resourceVersion") or "")
    if rv and rv != rv_of(old):
        raise conflict(
            spec,
            name,
            f'Operation cannot be fulfilled on {spec.qualified} "{name}": the object has been modified; '
            "please apply your changes to the latest version and try again",
        )
    if sub == "status":
        # the status strategy's PrepareForUpdate: everything but the status is the stored one
        merged = private_copy({**old_wire, "status": new.get("status")})
        if merged["status"] is None:
            merged.pop("status")
    else:
        merged = dict(new)
        if "status" in spec.subresources:
            if "status" in old_wire:
                merged["status"] = old_wire["status"]
            else:
                merged.pop("status", None)
        meta = dict(new_meta)
        for k in _KEPT_ON_UPDATE:
            if k in old_wire.get("metadata", {}):
                meta[k] = old_wire["metadata"][k]
            else:
                meta.pop(k, None)
        meta["name"] = name
        if spec.namespaced:
            meta["namespace"] = ns
        merged["metadata"] = meta
    merged["metadata"] = {**merged["metadata"], "resourceVersion": rv_of(old)}
    if spec.prepare_update is not None:
        spec.prepare_update(merged, name)
    obj = await offload(server, size, _defaulted_and_decoded, store, spec, merged)
    if spec.validate_update is not None and not sub:
        spec.validate_update(spec, name, old_wire, backend.encode(obj))
    if dry_run:
        return Reply(200, spec.encode(obj))
    write = backend.update_status if sub == "status" else backend.update
    return Reply(200, spec.encode(write(store, spec, name, obj)))


async def _patch(
    server: Server, req: Request, spec: ResourceSpec, ns: str, name: str, sub: str
) -> Reply:
    ctype = req.headers.get("content-type", "").split(";")[0].strip()
    check_patch_options(req.query, ctype == "application/apply-patch+yaml")
    old = server.store.get(spec, ns, name)
    view = spec
    if spec.view is not None:  # patched in the view's form, stored as the viewed row's
        spec = _viewed(spec)

    def stored_form(d: dict[str, Any]) -> dict[str, Any]:
        return view.view.from_view(d) if view.view is not None else d

    def reply_form(reply: Reply) -> Reply:
        return _to_view(view, reply) if view.view is not None else reply

    dry_run = bool(req.query.get("dryRun"))
    if ctype == "application/apply-patch+yaml":
        applied = stored_form(_body(req))
        if old is None:
            if sub:
                raise not_found(spec, name)
            _check_identity(spec, ns, applied, name)
            return reply_form(await _create(server, spec, ns, applied, req.query, size=len(req.body)))
        _check_identity(spec, ns, applied, name)
        applied["metadata"].pop("resourceVersion", None)
        merged = strategic_merge_patch(private_copy(spec.wire(old)), applied)
    else:
        if old is None:
            raise not_found(spec, name)
        merged = stored_form(_patched(req, spec, name, private_copy(view.wire(old))))
    merged.setdefault("metadata", {})
    _check_identity(spec, ns, merged, name)
    return reply_form(
        await _replace(server, spec, ns, name, sub, old, merged, dry_run, size=len(req.body))
    )


def _patched(
    req: Request, spec: ResourceSpec, name: str, current: dict[str, Any]
) -> dict[str, Any]:
    """``current`` (a private copy) with the request's JSON, merge or strategic merge patch
    applied."""
    ctype = req.headers.get("content-type", "").split(";")[0].strip()
    try:
        patch = decode_json(req.body) if req.body else {}
    except ValueError as e:
        raise bad_request(f"error decoding patch: {e}") from None
    try:
        if ctype == "application/json-patch+json":
            merged = apply_json_patch(current, patch)
        elif ctype == "application/merge-patch+json":
            merged = json_merge_patch(current, patch)
        elif ctype == "application/strategic-merge-patch+json":
            if spec.crd:
                raise HTTPError(
                    415,
                    "UnsupportedMediaType",
                    "strategic merge patch is not supported for custom resources",
                )
            merged = strategic_merge_patch(current, patch)
        else:
            raise HTTPError(
                415,
                "UnsupportedMediaType",
                f"the server does not support the patch type {ctype!r}",
            )
    except PatchError as e:
        raise HTTPError(422, "Invalid", str(e), details(spec, name)) from None
    if not isinstance(merged, dict):
        raise bad_request("the patch result is not an object")
    return merged


async def _subresource_view(
    server: Server, req: Request, spec: ResourceSpec, ns: str, name: str, sub: Subresource
) -> Reply:
    """GET, PUT or PATCH of a subresource that is another form of its object (a Scale): a
    write is laid over the object, which is then updated as by a PUT of the resource."""
    view = sub.view
    assert view is not None
    old = server.store.get(spec, ns, name)
    if old is None:
        raise not_found(spec, name)
    current = view.read(spec, spec.wire(old))
    m = req.method
    if m in ("GET", "HEAD"):
        if "as=Table" in req.headers.get("accept", ""):
            t = table(
                view.printer,
                [current],
                server.store.now(),
                resource_version=rv_of(old),
                include_object=req.query.get("includeObject", "Metadata"),
            )
            return json_reply(t)
        return json_reply(current)
    warnings: tuple[str, ...] = ()
    if m == "PUT":
        body = _body(req)
        gv = f"{sub.group}/{sub.version}" if sub.group else (sub.version or spec.group_version)
        warnings = _field_validation(gv, sub.version or spec.version, sub.kind or spec.kind, body, req.query)
    elif m == "PATCH":
        ctype = req.headers.get("content-type", "").split(";")[0].strip()
        check_patch_options(req.query, ctype == "application/apply-patch+yaml")
        if ctype == "application/apply-patch+yaml":
            applied = _body(req)
            if isinstance(applied.get("metadata"), dict):
                applied["metadata"].pop("resourceVersion", None)
            try:
                body = strategic_merge_patch(private_copy(current), applied)
            except PatchError as e:
                raise HTTPError(422, "Invalid", str(e), details(spec, name)) from None
        else:
            body = _patched(req, spec, name, private_copy(current))
    else:
        raise method_not_allowed()
    new = view.write(spec, name, private_copy(spec.wire(old)), body)
    reply = await _replace(server, spec, ns, name, "", old, new, bool(req.query.get("dryRun")))
    answer = json_reply(view.read(spec, json.loads(reply.body)))
    answer.warnings = warnings
    return answer


async def _delete(server: Server, req: Request, spec: ResourceSpec, ns: str, name: str) -> Reply:
    store, backend = server.store, spec.backend
    assert backend is not None
    opts: dict[str, Any] = _body(req, yaml_ok=False) if req.body else {}
    if not req.body:  # DeleteOptions from the query, as upstream reads them without a body
        if "propagationPolicy" in req.query:
            opts["propagationPolicy"] = req.query["propagationPolicy"]
        if "orphanDependents" in req.query:
            opts["orphanDependents"] = flag(req.query, "orphanDependents")
    grace = opts.get("gracePeriodSeconds")
    if req.query.get("gracePeriodSeconds"):
        grace = _int_param(req.query, "gracePeriodSeconds")
    if grace is not None and (isinstance(grace, bool) or not isinstance(grace, int) or not -(2**63) <= grace < 2**63):
        raise bad_request(f"gracePeriodSeconds: Invalid value: {grace!r}: must be an int64 number of seconds")
    check_delete_options(opts)
    old = store.get(spec, ns, name)
    if old is None:
        raise not_found(spec, name)
    pre = opts.get("preconditions") or {}
    if pre.get("uid") and pre["uid"] != uid_of(old):
        raise conflict(
            spec,
            name,
            f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {uid_of(old)}",
        )
    if pre.get("resourceVersion") and str(pre["resourceVersion"]) != rv_of(old):
        raise conflict(
            spec,
            name,
            f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
            f"ResourceVersion in object meta: {rv_of(old)}",
        )
    if req.query.get("dryRun"):
        return Reply(200, spec.encode(old))
    if spec.delete is not None:
        return await spec.delete(store, spec, ns, name, old, pre.get("uid") or None, grace)
    backend.delete(store, spec, ns, name)
    if spec.returns_deleted:
        return Reply(200, spec.encode(old))
    return json_reply(success(spec, name, uid_of(old)))
