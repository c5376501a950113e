"""One served resource: a ``ResourceSpec`` row of the registry's table (``_registry``) and its
subresources.

A row says what the kind is (names, scope, verbs, categories), how ``kubectl get`` prints it
(``printer``), where its objects live and how they are decoded (``backend``, ``_store``), and
the hooks of a kind that differs from a generic object (``_kinds``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from . import _table as printers
from ._store import OBJECTS, Backend

if TYPE_CHECKING:
    from ._http import Reply
    from ._store import Store

__all__ = [
    "STATUS",
    "VERBS",
    "DeleteHook",
    "PostHook",
    "ResourceSpec",
    "Subresource",
    "SubresourceView",
    "View",
]

VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")

# (store, row, namespace, name, body) → the reply of a POST the row handles itself (binding)
PostHook = Callable[["Store", "ResourceSpec", str, str, dict[str, Any]], Awaitable["Reply"]]
# (store, row, namespace, name, the object, uid precondition, grace seconds) → the reply
DeleteHook = Callable[
    ["Store", "ResourceSpec", str, str, Any, "str | None", "int | None"], Awaitable["Reply"]
]


@dataclass(frozen=True)
class SubresourceView:
    """A subresource that is another form of its object (autoscaling/v1 Scale): ``read`` gives
    it from the object (wire form), ``write`` lays a new one sent by a client over the object
    (the row, the name, a private copy of the object, the body; raises the API errors of a bad
    one), and the object is then updated as by a PUT of the resource."""

    read: Callable[[ResourceSpec, dict[str, Any]], dict[str, Any]]
    write: Callable[[ResourceSpec, str, dict[str, Any], dict[str, Any]], dict[str, Any]]
    printer: printers.Printer = printers.DEFAULT


@dataclass(frozen=True)
class Subresource:
    """``<resource>/<name>/<subresource>``.  ``status`` needs nothing more: a PUT or PATCH of it
    changes only ``.status``, and one of the resource leaves ``.status`` alone."""

    verbs: tuple[str, ...]
    kind: str = ""
    """The kind it takes and answers with, when not the resource's own (Binding)."""
    group: str | None = None
    version: str = ""
    """The group and version of ``kind`` when not the resource's (autoscaling/v1 Scale)."""
    post: PostHook | None = None
    """Answers a POST of it (binding)."""
    view: SubresourceView | None = None
    """Answers its GET, PUT and PATCH as another form of the object (scale)."""


STATUS: Mapping[str, Subresource] = {"status": Subresource(("get", "patch", "update"))}


@dataclass(frozen=True)
class View:
    """The row serves the objects of another row (``of``: its group, version and resource) in
    another form: reads are converted with ``to_view``, writes with ``from_view`` and made on
    the other row."""

    of: tuple[str, str, str]
    to_view: Callable[[dict[str, Any]], dict[str, Any]]
    from_view: Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class ResourceSpec:
    """One served resource."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    singular: str = ""
    """Defaults to the kind in lower case."""
    verbs: tuple[str, ...] = VERBS
    categories: tuple[str, ...] = ()
    subresources: Mapping[str, Subresource] = field(default_factory=dict)
    printer: printers.Printer = printers.DEFAULT
    """The Table columns and cells of ``kubectl get``."""
    print_as: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """The form the printer reads, when not the wire form."""
    backend: Backend | None = OBJECTS
    """Where the objects live and how they are decoded; None for a create-only resource whose
    ``create`` hook does all (bindings)."""
    store: str = ""
    """The name the backend keeps them under (and watchers follow); defaults to the kind."""
    view: View | None = None
    crd: bool = False
    """A custom resource: no strategic merge patch."""
    defaults: Callable[[dict[str, Any]], None] | None = None
    """The API server's defaults for a created or replaced object, in place (``_defaults``);
    for a cluster kind, also for every object the cluster changes (idempotent)."""
    # hooks, only where the kind differs from a generic object (see _kinds)
    create: PostHook | None = None
    """Handles POST to the collection instead of the generic create."""
    prepare_create: Callable[[Store, dict[str, Any]], dict[str, Any]] | None = None
    """Completes a new object (wire form) in place of the backend's own step."""
    on_create: Callable[[Store, ResourceSpec, str, Any], Awaitable[None]] | None = None
    """Runs after the checks, before the object is stored (may refuse it)."""
    prepare_update: Callable[[dict[str, Any], str], None] | None = None
    """Adjusts an object about to replace the stored one (wire form)."""
    validate_update: Callable[[ResourceSpec, str, dict[str, Any], dict[str, Any]], None] | None = (
        None
    )
    """Checks an update of the resource (not of a subresource): the row, name, old and new
    object in wire form."""
    delete: DeleteHook | None = None
    """Deletes instead of the backend, after the preconditions; answers the request."""
    unknown_in_release: Callable[[dict[str, Any]], list[str]] | None = None
    """Removes from a POSTed or PUT body the fields kubesched's schema knows but the emulated
    release's kind does not have (a pod's ``workloadRef`` at 1.36) and returns their paths, which
    ``fieldValidation`` then treats as unknown fields (``_workloadapi``)."""
    returns_deleted: bool = False
    """A DELETE answers with the deleted object (the registry's ``ReturnDeletedObject``, as
    upstream's for PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers), not a
    Status."""

    def __post_init__(self) -> None:
        if not self.singular:
            object.__setattr__(self, "singular", self.kind.lower())
        if not self.store:
            object.__setattr__(self, "store", self.kind)

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``pods`` or ``poddisruptionbudgets.policy``, as API error messages name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def wire(self, obj: Any) -> dict[str, Any]:
        """A stored object as the client sees it."""
        assert self.backend is not None
        d = self.backend.encode(obj)
        return self.view.to_view(d) if self.view is not None else d

    def encode(self, obj: Any) -> bytes:
        return msgspec.json.encode(self.wire(obj))

    def printable(self, obj: Any) -> dict[str, Any]:
        """A stored object in the form its printer reads."""
        d = self.wire(obj)
        return self.print_as(d) if self.print_as is not None else d
