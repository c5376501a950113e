"""Where the served objects live, and the one history of their changes.

Each row of the registry names its backend:

- ``CLUSTER``: the FakeCluster holds the kind as kubesched's msgspec Struct (admission, the kubelet
  and disruption-controller emulations, fault injection act on it); writes are FakeCluster verbs,
  and the store learns of every change (ours or the cluster's own) by following its watch.  A
  Struct declares only the fields kubesched reads, so the store keeps each object's wire form
  too: the JSON its client last wrote (defaulted), with the Struct laid over it at every change
  (``_wire.overlay``); reads and watches serve that form, so no field a client sent is lost.
  An object that entered the cluster without a client's JSON (a scenario file's, or one a
  controller made: a pod from its owner's template) starts from the Struct's, and every wire
  form gets the row's defaults (``_defaults``), as upstream stores every object defaulted.
- ``OBJECTS``: the server's own generic object store: plain dicts by (namespace, name), with
  resourceVersions taken from the cluster's sequence (one sequence, as in etcd).  A kind with no
  simulation behaviour lives here: create/get/list/watch/update/patch/delete need nothing else.

Every change of either lands in ``history`` (bounded, in resourceVersion order) and is offered to
the HTTP watchers of its store (encoded once for all of them, ``_fanout``).  The Events the cluster records itself (``FakeCluster.events``:
its controllers', a scheduler's sent to the FakeCluster) join the generic store's Events as they
are drained, as a core/v1 recorder would have written them (``_events``), and the namespace a
cluster object lives in is created with it (``ensure_namespace``).

The store knows a row of the registry only as a :class:`Row` (what it reads of one): the
registry's rows name the store's backends, never the other way round.
"""

from __future__ import annotations

import logging
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import msgspec
from msgspec.structs import replace

from kubesched import ConfigError, ConflictError, NotFoundError, UnavailableError
from kubesched.api import KINDS, convert
from kubesched.transports.fake import FakeCluster

from ._events import core_event, event_from_core
from ._fanout import LineCache, Lines, Watcher
from ._http import (
    HTTPError,
    Resource,
    already_exists,
    bad_request,
    conflict,
    details,
    invalid,
    not_found,
)
from ._wire import builtins, ns_name, overlay, private_copy, rv_of, uid_of, with_rv

__all__ = [
    "CLUSTER",
    "OBJECTS",
    "Backend",
    "Change",
    "Decoded",
    "Row",
    "Store",
    "Watcher",
    "ensure_namespace",
    "new_namespace",
]

log = logging.getLogger("kubesched.apiserver")

Validate = Callable[[Any, str], None]


class Row(Resource, Protocol):
    """What the store and its backends read of a row of the registry
    (``_resource.ResourceSpec``)."""

    @property
    def version(self) -> str: ...
    @property
    def namespaced(self) -> bool: ...
    @property
    def store(self) -> str: ...
    @property
    def backend(self) -> Backend | None: ...
    @property
    def defaults(self) -> Callable[[dict[str, Any]], None] | None: ...


@dataclass(slots=True)
class Change:
    rv: int
    store: str
    type: str
    obj: Any
    prev: Any = None


class Store:
    """Every served object, by the rows in ``specs``, and the history of their changes."""

    def __init__(
        self,
        cluster: FakeCluster,
        specs: Iterable[Row],
        *,
        history_size: int,
        validate: Validate,
    ) -> None:
        self.cluster = cluster
        self.history_size = history_size
        self.validate = validate
        """Admission's validation of a decoded Struct (raises ConfigError)."""
        specs = list(specs)
        self.objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {
            s.store: {} for s in specs if s.backend is OBJECTS
        }
        """The generic object store: store name → (namespace, name) → object."""
        self.cluster_kinds = tuple(dict.fromkeys(s.store for s in specs if s.backend is CLUSTER))
        self.defaults: dict[str, Callable[[dict[str, Any]], None]] = {}
        """The API server's defaults of each cluster kind, for its wire form."""
        for s in specs:
            if s.backend is CLUSTER and s.defaults is not None:
                self.defaults.setdefault(s.store, s.defaults)
        self.namespaced_object_stores = tuple(
            dict.fromkeys(s.store for s in specs if s.backend is OBJECTS and s.namespaced)
        )
        self.history: deque[Change] = deque()
        self.floor = 0  # changes with rv <= floor may be missing from history
        self.last_rv = 0
        self.wired: dict[str, dict[tuple[str, str], dict[str, Any]]] = {
            k: {} for k in self.cluster_kinds
        }
        """The cluster's objects in wire form: kind → (namespace, name) → object."""
        self.incoming: dict[tuple[str, str, str], dict[str, Any]] = {}
        """The wire form a client is writing, by (kind, namespace, name), for the cluster's
        change that the write makes."""
        self.pending_namespaces: set[str] = set()
        self.events_seen = 0
        """How many of the cluster's recorded Events (``FakeCluster.events``) are taken."""
        self.posted_events: set[int] = set()
        """The indexes in ``FakeCluster.events`` of the records of Events a client created
        (already stored as they were sent)."""
        self.recorded_events: dict[tuple[Any, ...], tuple[str, str]] = {}
        """The Events stored from the cluster's records, by what makes two of them the same."""
        self.watchers: set[Watcher] = set()
        self.listing_lines = LineCache()
        """The chunks of objects sent in watches' initial listings, shared among them."""
        self._cluster_watch: Any = None

    # --- reads -----------------------------------------------------------------------------

    def list(self, spec: Row, namespace: str | None) -> list[Any]:
        """The row's objects (in ``namespace`` unless None), by (namespace, name)."""
        assert spec.backend is not None
        objs = spec.backend.list(self, spec)
        if namespace is not None and spec.namespaced:
            objs = [o for o in objs if ns_name(o)[0] == namespace]
        return sorted(objs, key=ns_name)

    def get(self, spec: Row, namespace: str, name: str) -> Any | None:
        assert spec.backend is not None
        return spec.backend.get(self, spec, namespace, name)

    @property
    def resource_version(self) -> str:
        return str(self.cluster.resource_version)

    def now(self) -> datetime:
        return datetime.fromisoformat(self.cluster.timestamp().replace("Z", "+00:00"))

    # --- the generic object store ----------------------------------------------------------

    def put(self, store: str, obj: dict[str, Any], type_: str) -> dict[str, Any]:
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        prev = self.objects[store].get(key)
        meta["resourceVersion"] = self.cluster.next_resource_version()
        self.objects[store][key] = obj
        self.record(Change(int(meta["resourceVersion"]), store, type_, obj, prev))
        return obj

    def remove(self, store: str, key: tuple[str, str]) -> dict[str, Any]:
        old = self.objects[store].pop(key)
        gone = with_rv(old, self.cluster.next_resource_version())
        self.record(Change(int(rv_of(gone)), store, "DELETED", gone, old))
        return gone

    # --- following the cluster -------------------------------------------------------------

    def follow_cluster(self) -> None:
        """(Re)start following the cluster's watch: its listing is our current state."""
        self._cluster_watch = self.cluster.watch()
        old, self.wired = self.wired, {k: {} for k in self.cluster_kinds}
        listing = []
        while (ev := self._cluster_watch.get_nowait()) is not None and ev.type != "SYNCED":
            listing.append(ev.obj)
        # owners before what they own: a controller's pod starts from its owner's template
        listing.sort(key=lambda o: _OWNED.get(type(o).__name__, 0))
        for obj in listing:
            store = type(obj).__name__
            key = ns_name(obj)
            self.wired.setdefault(store, {})[key] = self._wire(
                store, key, obj, old.get(store, {}).get(key)
            )
        rv = int(self.cluster.resource_version)
        self.history.clear()
        self.floor = max(self.floor, rv)
        self.last_rv = max(self.last_rv, rv)
        for objs in self.wired.values():
            for ns, _ in objs:
                if ns:
                    ensure_namespace(self, ns)

    def _wire(
        self, store: str, key: tuple[str, str], obj: Any, prev: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The wire form of a cluster object: what its client is writing, or else what we
        served of it before, or else its owner's template (a controller's pod or ReplicaSet),
        with the Struct laid over it; then the API server's defaults, so that an object that
        never came through the server reads as if it had, and a Struct field left at its
        default (a file's pod has no ``terminationGracePeriodSeconds``) never removes one."""
        base = self.incoming.pop((store, *key), None)
        if base is None:
            base = prev if prev is not None and uid_of(prev) == obj.metadata.uid else None
        if base is None:
            base = self._from_template(store, obj)
        wire = builtins(obj) if base is None else private_copy(overlay(base, obj))
        defaults = self.defaults.get(store)
        if defaults is not None:
            defaults(wire)
        return wire

    def _from_template(self, store: str, obj: Any) -> dict[str, Any] | None:
        """A pod (or a Deployment's ReplicaSet) that a controller made from its owner's pod
        template, as upstream's controllers copy it: the template as its owner's client wrote
        it (the Struct holds only the fields kubesched reads)."""
        if store not in ("Pod", "ReplicaSet"):
            return None
        ref = next((r for r in obj.metadata.owner_references if r.controller), None)
        if ref is None:
            return None
        owner = self.wired.get(ref.kind, {}).get((obj.metadata.namespace, ref.name))
        if owner is None or uid_of(owner) != ref.uid:
            return None
        template = (owner.get("spec") or {}).get("template")
        if not isinstance(template, dict):
            return None
        template = private_copy(template)
        base: dict[str, Any] = {"apiVersion": obj.api_version, "kind": obj.kind}
        if store == "ReplicaSet":
            return base | {"spec": {"template": template}}
        return base | {
            "metadata": template.get("metadata") or {},
            "spec": template.get("spec") or {},
        }

    async def pump(self) -> None:
        while True:
            try:
                async for ev in self._cluster_watch:
                    self._on_cluster_event(ev)
                    self.drain()
                return  # the cluster was closed
            except UnavailableError:
                # the cluster's watch was dropped (a fault injected on the cluster): start again;
                # HTTP watchers may have missed changes, so they end and their clients re-list
                log.info("cluster watch dropped: following it again")
                self.drop_watches()
                self.follow_cluster()

    def drain(self) -> None:
        """Take every cluster change already delivered, in order, then the Events the cluster
        recorded."""
        watch = self._cluster_watch
        if watch is None:
            return
        while (ev := watch.get_nowait()) is not None:
            self._on_cluster_event(ev)
        while self.pending_namespaces:
            ensure_namespace(self, self.pending_namespaces.pop())
        self._take_events()

    def _take_events(self) -> None:
        """Store the Events the cluster recorded since the last call, as client-go's core/v1
        recorder does (its EventLogger): an Event like one recorded before (same source,
        object, type, reason and message) counts again on that one (``count`` + 1, its last
        timestamp), else it is a new one."""
        records = self.cluster.events
        if "Event" not in self.objects:  # not served
            self.events_seen = len(records)
            return
        while self.events_seen < len(records):
            i = self.events_seen
            self.events_seen += 1
            if i in self.posted_events:
                self.posted_events.discard(i)
                continue
            core = core_event(records[i], self.cluster.timestamp)
            ref = core["involvedObject"]
            similar = (
                core["source"].get("component"),
                *(ref.get(k) for k in ("kind", "namespace", "name", "uid", "apiVersion")),
                core.get("type"),
                core.get("reason"),
                core.get("message"),
            )
            seen = self.recorded_events.get(similar)
            before = self.objects["Event"].get(seen) if seen is not None else None
            if before is not None:
                again = private_copy(before)
                again["deprecatedCount"] = int(again.get("deprecatedCount") or 1) + 1
                again["deprecatedLastTimestamp"] = core["lastTimestamp"]
                self.put("Event", again, "MODIFIED")
                continue
            event = event_from_core(core)
            meta = event["metadata"]
            while (meta["namespace"], meta["name"]) in self.objects["Event"]:
                # the same nanosecond (a virtual clock): the next one, as a later call would get
                stem, _, nanos = meta["name"].rpartition(".")
                meta["name"] = f"{stem}.{int(nanos, 16) + 1:x}"
            meta.update(uid=str(uuid.uuid4()), creationTimestamp=self.cluster.timestamp())
            ensure_namespace(self, meta["namespace"])
            self.recorded_events[similar] = (meta["namespace"], meta["name"])
            self.put("Event", event, "ADDED")

    def _on_cluster_event(self, ev: Any) -> None:
        if ev.type == "SYNCED" or ev.obj is None:
            return
        store = type(ev.obj).__name__
        key = ns_name(ev.obj)
        objs = self.wired.setdefault(store, {})
        prev = objs.get(key)
        obj = self._wire(store, key, ev.obj, prev)
        if ev.type == "DELETED":
            objs.pop(key, None)
        else:
            objs[key] = obj
            if key[0] and ("", key[0]) not in self.objects["Namespace"]:
                self.pending_namespaces.add(key[0])
        self.record(Change(int(ev.obj.metadata.resource_version or 0), store, ev.type, obj, prev))

    # --- history and watchers --------------------------------------------------------------

    def record(self, change: Change) -> None:
        self.history.append(change)
        self.last_rv = max(self.last_rv, change.rv)
        while len(self.history) > self.history_size:
            self.floor = max(self.floor, self.history.popleft().rv)
        if change.type == "DELETED":
            self.listing_lines.forget((change.store, *ns_name(change.obj)))
        lines: Lines = {}  # this change's chunks, made once for all its watchers
        for w in list(self.watchers):
            if w.store == change.store:
                w.offer(change, lines)

    def drop_watches(self, *, abort: bool = False) -> None:
        for w in list(self.watchers):
            w.end(abort=abort)

    def compact(self) -> None:
        self.drain()
        self.history.clear()
        self.floor = max(self.floor, self.last_rv, int(self.cluster.resource_version))

    async def call(self, spec: Row, name: str, call: Awaitable[None]) -> None:
        """Await a FakeCluster verb; its typed errors become API errors."""
        try:
            await call
        except ConflictError as e:
            raise conflict(spec, name, str(e)) from None
        except NotFoundError:
            raise not_found(spec, name) from None
        except UnavailableError as e:
            raise HTTPError(503, "ServiceUnavailable", str(e)) from None
        finally:
            self.drain()


# --- namespaces -------------------------------------------------------------------------------


def new_namespace(store: Store, name: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Namespace as the API server creates it: labelled with its name, the ``kubernetes``
    finalizer, phase Active (``meta``: the metadata a client sent)."""
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
    """The namespace ``name`` exists (created if not): a system one, or one a cluster object
    lives in."""
    if ("", name) in store.objects["Namespace"]:
        return
    store.put("Namespace", new_namespace(store, name), "ADDED")


# --- backends ----------------------------------------------------------------------------------


class Backend:
    """How a row's objects are held: read, decoded from and encoded to wire form, written.
    Writes raise the API errors of a failed write (404, 409, 403 from admission)."""

    def list(self, store: Store, spec: Row) -> list[Any]:
        raise NotImplementedError

    def get(self, store: Store, spec: Row, namespace: str, name: str) -> Any | None:
        raise NotImplementedError

    def encode(self, obj: Any) -> dict[str, Any]:
        """The stored object in wire form."""
        raise NotImplementedError

    def decode(self, store: Store, spec: Row, body: dict[str, Any]) -> Any:
        """A request's object (wire form, already checked and completed) as it is stored."""
        raise NotImplementedError

    def prepare_create(self, store: Store, body: dict[str, Any]) -> dict[str, Any]:
        """Complete a new object before it is decoded (unless the row has its own hook)."""
        return body

    def create(self, store: Store, spec: Row, obj: Any) -> Any:
        raise NotImplementedError

    def update(self, store: Store, spec: Row, name: str, obj: Any) -> Any:
        raise NotImplementedError

    def update_status(self, store: Store, spec: Row, name: str, obj: Any) -> Any:
        """A write of the status subresource: ``obj`` differs from the stored object in its
        status only."""
        return self.update(store, spec, name, obj)

    def delete(self, store: Store, spec: Row, namespace: str, name: str) -> None:
        raise NotImplementedError


_STRUCTS = {cls.__name__: cls for cls in KINDS.values()}
_OWNED = {"ReplicaSet": 1, "Pod": 2}
"""How deep in the chain of owners (Deployment → ReplicaSet → Pod, Job → Pod) a kind is."""


@dataclass(slots=True)
class Decoded:
    """A request's object for the cluster: its wire form and its Struct."""

    wire: dict[str, Any]
    obj: Any


class ClusterBackend(Backend):
    """The FakeCluster's kinds: kubesched's Structs, validated like admission does; read in the
    wire form the store keeps of them."""

    def list(self, store: Store, spec: Row) -> list[Any]:
        store.drain()
        return list(store.wired[spec.store].values())

    def get(self, store: Store, spec: Row, namespace: str, name: str) -> Any | None:
        store.drain()
        return store.wired[spec.store].get((namespace if spec.namespaced else "", name))

    def encode(self, obj: Decoded | dict[str, Any]) -> dict[str, Any]:
        if isinstance(obj, Decoded):
            return overlay(obj.wire, obj.obj)
        return obj

    def decode(self, store: Store, spec: Row, body: dict[str, Any]) -> Any:
        name = (body.get("metadata") or {}).get("name", "")
        try:
            obj = convert(body, _STRUCTS[spec.store])
        except msgspec.ValidationError as e:
            raise bad_request(
                f'{spec.kind} in version "{spec.version}" cannot be handled as a {spec.kind}: {e}'
            ) from None
        try:
            store.validate(obj, spec.store)  # kubesched's kind name (SchedulingPodGroup)
        except ConfigError as e:
            raise invalid(spec, name, e.field, e.message) from None
        return Decoded(body, obj)

    def _written(self, store: Store, spec: Row, new: Decoded) -> tuple[str, str, str]:
        ns, name = ns_name(new.obj)
        key = (spec.store, (ns or "default") if spec.namespaced else "", name)
        store.incoming[key] = new.wire
        return key

    def _stored(self, store: Store, spec: Row, key: tuple[str, str, str]) -> Any:
        store.drain()
        store.incoming.pop(key, None)
        return store.wired[spec.store][key[1:]]

    def create(self, store: Store, spec: Row, obj: Any) -> Any:
        name = ns_name(obj.obj)[1]
        key = self._written(store, spec, obj)
        try:
            store.cluster.create(obj.obj)
        except ConfigError as e:  # admission (an unknown PriorityClass)
            raise HTTPError(
                403,
                "Forbidden",
                f'{spec.qualified} "{name}" is forbidden: {e.message}',
                details(spec, name),
            ) from None
        except ConflictError:
            raise already_exists(spec, name) from None
        finally:
            store.drain()
            store.incoming.pop(key, None)
        return self._stored(store, spec, key)

    def update(self, store: Store, spec: Row, name: str, obj: Any) -> Any:
        key = self._written(store, spec, obj)
        try:
            store.cluster.update(obj.obj)
        except ConflictError as e:
            raise conflict(spec, name, str(e)) from None
        except NotFoundError:
            raise not_found(spec, name) from None
        finally:
            store.drain()
            store.incoming.pop(key, None)
        return self._stored(store, spec, key)

    def update_status(self, store: Store, spec: Row, name: str, obj: Any) -> Any:
        """The cluster's object keeps its own spec: the wire form's defaults that its Struct
        lacks (an object from a scenario file) are no spec change (no new generation)."""
        current = store.cluster.get(spec.store, *ns_name(obj.obj))
        if current is not None and hasattr(current, "spec"):
            obj = Decoded(obj.wire, replace(obj.obj, spec=current.spec))
        return self.update(store, spec, name, obj)

    def delete(self, store: Store, spec: Row, namespace: str, name: str) -> None:
        try:
            store.cluster.delete_object(spec.store, namespace, name)
        except NotFoundError:
            raise not_found(spec, name) from None
        store.drain()


class ObjectsBackend(Backend):
    """The generic object store: plain dicts, kept as written."""

    def list(self, store: Store, spec: Row) -> list[Any]:
        return list(store.objects[spec.store].values())

    def get(self, store: Store, spec: Row, namespace: str, name: str) -> Any | None:
        return store.objects[spec.store].get((namespace if spec.namespaced else "", name))

    def encode(self, obj: dict[str, Any]) -> dict[str, Any]:
        return obj

    def decode(self, store: Store, spec: Row, body: dict[str, Any]) -> Any:
        return body

    def prepare_create(self, store: Store, body: dict[str, Any]) -> dict[str, Any]:
        body["metadata"]["creationTimestamp"] = store.cluster.timestamp()
        return body

    def create(self, store: Store, spec: Row, obj: Any) -> Any:
        return store.put(spec.store, obj, "ADDED")

    def update(self, store: Store, spec: Row, name: str, obj: Any) -> Any:
        return store.put(spec.store, obj, "MODIFIED")

    def delete(self, store: Store, spec: Row, namespace: str, name: str) -> None:
        store.remove(spec.store, (namespace, name))


CLUSTER: Backend = ClusterBackend()
OBJECTS: Backend = ObjectsBackend()
