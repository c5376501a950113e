"""Reading an object's metadata whether it is a Struct of the FakeCluster or a plain dict of the
server's own store, and the wire form (plain JSON builtins) of a Struct.

A Struct declares only the fields kubesched reads, so the wire form of a cluster object is the
JSON its client wrote (with the server's defaults) with the Struct's fields laid over it
(``overlay``): every field the client sent survives, and what the cluster changed (status,
``nodeName``, metadata) is current."""

from __future__ import annotations

from functools import cache
from typing import Any, Protocol, TypeVar, overload

import msgspec
from msgspec.structs import fields, replace

from kubesched.api import ObjectMeta, to_builtins

__all__ = [
    "builtins",
    "labels_of",
    "ns_name",
    "overlay",
    "private_copy",
    "rv_of",
    "uid_of",
    "with_rv",
]


class APIObject(Protocol):
    """A Struct of the FakeCluster: what this module reads of one."""

    @property
    def metadata(self) -> ObjectMeta: ...


_S = TypeVar("_S", bound=msgspec.Struct)


def ns_name(obj: Any) -> tuple[str, str]:
    if isinstance(obj, dict):
        m = obj.get("metadata") or {}
        return m.get("namespace", ""), m.get("name", "")
    return obj.metadata.namespace, obj.metadata.name


def labels_of(obj: dict[str, Any] | APIObject) -> dict[str, str]:
    if isinstance(obj, dict):
        return (obj.get("metadata") or {}).get("labels") or {}
    return obj.metadata.labels


def rv_of(obj: dict[str, Any] | APIObject) -> str:
    if isinstance(obj, dict):
        return str((obj.get("metadata") or {}).get("resourceVersion", ""))
    return obj.metadata.resource_version


def uid_of(obj: dict[str, Any] | APIObject) -> str:
    if isinstance(obj, dict):
        return str((obj.get("metadata") or {}).get("uid", ""))
    return obj.metadata.uid


@overload
def with_rv(obj: dict[str, Any], rv: str) -> dict[str, Any]: ...
@overload
def with_rv(obj: _S, rv: str) -> _S: ...
def with_rv(obj: Any, rv: str) -> Any:
    """The object (a wire dict or a Struct) at resourceVersion ``rv``: a copy."""
    if isinstance(obj, dict):
        return {**obj, "metadata": {**obj.get("metadata", {}), "resourceVersion": rv}}
    return replace(obj, metadata=replace(obj.metadata, resource_version=rv))


def builtins(obj: Any) -> dict[str, Any]:
    """A Struct in wire form, with apiVersion and kind (``omit_defaults`` leaves them out)."""
    return {"apiVersion": obj.api_version, "kind": obj.kind, **to_builtins(obj)}


def private_copy(d: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a wire form (plain JSON builtins), shared with nothing."""
    return msgspec.json.decode(msgspec.json.encode(d), type=dict[str, Any])


_NO_DEFAULT: Any = object()


@cache
def _fields(cls: type[msgspec.Struct]) -> tuple[tuple[str, str, Any], ...]:
    """(attribute, wire name, default value) of each field of a Struct type."""
    out = []
    for f in fields(cls):
        if f.default is not msgspec.NODEFAULT:
            default = f.default
        elif f.default_factory is not msgspec.NODEFAULT:
            default = f.default_factory()
        else:
            default = _NO_DEFAULT
        out.append((f.name, f.encode_name, default))
    return tuple(out)


def overlay(raw: dict[str, Any], obj: msgspec.Struct) -> dict[str, Any]:
    """``raw`` (a wire form of the object, e.g. as its client wrote it) with every field the
    Struct ``obj`` declares set from ``obj``: a field ``obj`` has at its default is left as
    ``raw`` has it when ``raw`` says the same, and removed when ``raw`` says otherwise (the
    cluster cleared it); the fields ``obj`` does not declare are kept from ``raw``.  Lists of
    Structs are laid item by item over a list of the same length."""
    out = dict(raw)
    for attr, key, default in _fields(type(obj)):
        value = getattr(obj, attr)
        had = raw.get(key, _NO_DEFAULT)
        if value is default or (default is not _NO_DEFAULT and value == default):
            if had is not _NO_DEFAULT and had != msgspec.to_builtins(value):
                if isinstance(value, msgspec.Struct) and isinstance(had, dict):
                    out[key] = overlay(had, value)
                else:
                    del out[key]
            continue
        if isinstance(value, msgspec.Struct):
            out[key] = overlay(had if isinstance(had, dict) else {}, value)
        elif (
            isinstance(value, list)
            and value
            and isinstance(value[0], msgspec.Struct)
            and isinstance(had, list)
            and len(had) == len(value)
        ):
            out[key] = [
                overlay(r if isinstance(r, dict) else {}, v)
                for r, v in zip(had, value, strict=True)
            ]
        else:
            out[key] = msgspec.to_builtins(value)
    return out
