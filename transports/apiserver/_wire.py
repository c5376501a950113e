"""Reading an object's metadata whether it is a Struct of the FakeCluster or a plain dict of the
server's own store, and the wire form (plain JSON builtins) of a Struct."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from kubesched._objects import to_builtins

__all__ = ["builtins", "labels_of", "ns_name", "rv_of", "uid_of", "with_rv"]


def ns_name(obj: Any) -> tuple[str, str]:
    if isinstance(obj, dict):
        m = obj.get("metadata") or {}
        return m.get("namespace", ""), m.get("name", "")
    return obj.metadata.namespace, obj.metadata.name


def labels_of(obj: Any) -> dict[str, str]:
    if isinstance(obj, dict):
        return (obj.get("metadata") or {}).get("labels") or {}
    return obj.metadata.labels  # type: ignore[no-any-return]


def rv_of(obj: Any) -> str:
    if isinstance(obj, dict):
        return str((obj.get("metadata") or {}).get("resourceVersion", ""))
    return obj.metadata.resource_version  # type: ignore[no-any-return]


def uid_of(obj: Any) -> str:
    if isinstance(obj, dict):
        return str((obj.get("metadata") or {}).get("uid", ""))
    return obj.metadata.uid  # type: ignore[no-any-return]


def with_rv(obj: Any, rv: str) -> Any:
    if isinstance(obj, dict):
        return {**obj, "metadata": {**obj.get("metadata", {}), "resourceVersion": rv}}
    return replace(obj, metadata=replace(obj.metadata, resource_version=rv))


def builtins(obj: Any) -> dict[str, Any]:
    """A Struct in wire form, with apiVersion and kind (``omit_defaults`` leaves them out)."""
    return {"apiVersion": obj.api_version, "kind": obj.kind, **to_builtins(obj)}
