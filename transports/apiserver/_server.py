"""A FakeCluster served over the Kubernetes REST API, on 127.0.0.1, with h11 over anyio sockets.

Model::

    client ──HTTP/1.1 (h11, keep-alive)──► route ──► read: the cluster's store / our own store
                                                └──► write: FakeCluster verbs (admission, kubelet,
                                                     disruption controller, fault injection)
    FakeCluster.watch() ──pump──► history (bounded, by resourceVersion) ──► each HTTP watch's queue

- Pods, Nodes, PriorityClasses, PodDisruptionBudgets and PodGroups live in the FakeCluster;
  Namespaces, Events (events.k8s.io/v1, also shown as core/v1) and Leases live here, as plain
  dicts, with resourceVersions from the cluster's own sequence (one sequence, as in etcd).
- One pump task follows the cluster's watch; before each request the queued cluster events are
  drained too, so a client that reads after a write sees it, and history is in resourceVersion
  order.  History keeps the last ``history_size`` changes: a watch from an older resourceVersion
  gets 200 and one ERROR event with a 410 Expired Status ("too old resource version"), as the
  kube-apiserver's watch cache answers.
- A watch streams JSON lines with chunked encoding; with ``allowWatchBookmarks=true`` it gets a
  BOOKMARK every ``bookmark_interval`` seconds, and one marked ``k8s.io/initial-events-end`` after
  the initial events when ``sendInitialEvents=true``.
- A Node created without a Ready condition gets Ready=True (its kubelet's first status report).
- Objects are stored with the fields kubesched models (msgspec Structs drop the rest).
- No authentication or authorization: bind only to a loopback address.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit

import anyio
import anyio.abc
import h11
import msgspec
import yaml
from anyio.abc import SocketAttribute
from msgspec.structs import replace

from kubesched._errors import ConfigError, ConflictError, NotFoundError, UnavailableError
from kubesched._objects import KINDS, Binding, Event, convert, to_builtins
from kubesched._validation import validate_object as _validate
from kubesched.transports.fake import FakeCluster

from . import _discovery as disco
from ._discovery import Resource, find_resource
from ._patch import PatchError, apply_json_patch, json_merge_patch, strategic_merge_patch
from ._selectors import SelectorError, parse_field_selector, parse_label_selector
from ._table import table

__all__ = ["APIServer"]

log = logging.getLogger("kubesched.apiserver")

_CLUSTER_STORES = {"Pod", "Node", "PriorityClass", "PodDisruptionBudget", "PodGroup"}
_STRUCTS = {cls.__name__: cls for cls in KINDS.values()}
_SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_UNDELETABLE_NAMESPACES = ("default", "kube-system", "kube-public")
_KIND_BY_STORE = {"CoreEvent": "Event"}
VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-kubesched",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2024-12-11T00:00:00Z",
    "goVersion": "go1.23.4",
    "compiler": "gc",
    "platform": "linux/amd64",
}


class _HTTPError(Exception):
    """An API error: answered as a Kubernetes Status."""

    def __init__(
        self, code: int, reason: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def body(self) -> bytes:
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            status["details"] = self.details
        return msgspec.json.encode(status)


def _details(res: Resource, name: str) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "kind": res.plural}
    if res.group:
        d["group"] = res.group
    return d


def _not_found(res: Resource, name: str) -> _HTTPError:
    return _HTTPError(404, "NotFound", f'{res.qualified} "{name}" not found', _details(res, name))


def _conflict(res: Resource, name: str, message: str) -> _HTTPError:
    return _HTTPError(409, "Conflict", message, _details(res, name))


def _invalid(res: Resource, name: str, fld: str, message: str) -> _HTTPError:
    d = _details(res, name)
    d["kind"] = res.kind
    d["causes"] = [{"reason": "FieldValueInvalid", "message": message, "field": fld}]
    return _HTTPError(422, "Invalid", f'{res.kind} "{name}" is invalid: {fld}: {message}', d)


def _bad_request(message: str) -> _HTTPError:
    return _HTTPError(400, "BadRequest", message)


def _success(
    res: Resource | None = None, name: str = "", uid: str = "", code: int = 200
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
    }
    if res is not None:
        details = _details(res, name)
        if uid:
            details["uid"] = uid
        out["details"] = details
    if code != 200:
        out["code"] = code
    return out


# --- objects in wire form --------------------------------------------------------------------


def _meta(obj: Any) -> dict[str, Any] | Any:
    return obj["metadata"] if isinstance(obj, dict) else obj.metadata


def _ns_name(obj: Any) -> tuple[str, str]:
    if isinstance(obj, dict):
        m = obj.get("metadata") or {}
        return m.get("namespace", ""), m.get("name", "")
    return obj.metadata.namespace, obj.metadata.name


def _labels(obj: Any) -> dict[str, str]:
    if isinstance(obj, dict):
        return (obj.get("metadata") or {}).get("labels") or {}
    return obj.metadata.labels  # type: ignore[no-any-return]


def _rv_of(obj: Any) -> str:
    if isinstance(obj, dict):
        return str((obj.get("metadata") or {}).get("resourceVersion", ""))
    return obj.metadata.resource_version  # type: ignore[no-any-return]


def _uid_of(obj: Any) -> str:
    if isinstance(obj, dict):
        return str((obj.get("metadata") or {}).get("uid", ""))
    return obj.metadata.uid  # type: ignore[no-any-return]


def _with_rv(obj: Any, rv: str) -> Any:
    if isinstance(obj, dict):
        return {**obj, "metadata": {**obj.get("metadata", {}), "resourceVersion": rv}}
    return replace(obj, metadata=replace(obj.metadata, resource_version=rv))


def _builtins(obj: Any) -> dict[str, Any]:
    """A Struct in wire form, with apiVersion and kind (``omit_defaults`` leaves them out)."""
    return {"apiVersion": obj.api_version, "kind": obj.kind, **to_builtins(obj)}


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v not in (None, "", {})}


def _event_to_core(e: dict[str, Any]) -> dict[str, Any]:
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


def _event_from_core(e: dict[str, Any]) -> dict[str, Any]:
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


# --- history and watchers ----------------------------------------------------------------------


@dataclass(slots=True)
class _Change:
    rv: int
    store: str
    type: str
    obj: Any
    prev: Any = None


@dataclass(eq=False)
class _Watcher:
    store: str
    queue: deque[_Change] = field(default_factory=deque)
    wakeup: anyio.Event | None = None
    ended: bool = False
    aborted: bool = False

    def push(self, change: _Change) -> None:
        self.queue.append(change)
        self._wake()

    def end(self, *, abort: bool = False) -> None:
        self.ended = True
        self.aborted = self.aborted or abort
        self._wake()

    def _wake(self) -> None:
        if self.wakeup is not None:
            self.wakeup.set()
            self.wakeup = None

    async def wait(self) -> None:
        if self.queue or self.ended:
            return
        self.wakeup = anyio.Event()
        await self.wakeup.wait()


class _Abort(Exception):
    """End a watch by closing its connection (a dropped watch)."""


@dataclass
class _Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass
class _Reply:
    status: int
    body: bytes
    content_type: str = "application/json"


Send = Callable[[bytes], Awaitable[None]]


@dataclass
class _WatchPlan:
    """What one HTTP watch streams: initial lines, then its watcher's changes."""

    server: APIServer
    res: Resource
    watcher: _Watcher | None
    initial: list[bytes]
    matches: Callable[[Any], bool] | None
    selective: bool
    timeout: float
    bookmarks: bool
    as_table: bool
    include_object: str

    async def run(self, send: Send) -> None:
        server, watcher = self.server, self.watcher
        try:
            for line in self.initial:
                await send(line)
            if watcher is None:
                return
            interval = server.bookmark_interval
            next_bookmark = anyio.current_time() + interval
            with anyio.move_on_after(self.timeout):
                while True:
                    while watcher.queue:
                        change_line = self._line(watcher.queue.popleft())
                        if change_line is not None:
                            await send(change_line)
                    if watcher.aborted:
                        raise _Abort
                    if watcher.ended:
                        return
                    if self.bookmarks and anyio.current_time() >= next_bookmark:
                        await send(server._bookmark_line(self.res))
                        next_bookmark = anyio.current_time() + interval
                    if self.bookmarks:
                        with anyio.move_on_after(max(0.0, next_bookmark - anyio.current_time())):
                            await watcher.wait()
                    else:
                        await watcher.wait()
        finally:
            if watcher is not None:
                server._watchers.discard(watcher)

    def _line(self, change: _Change) -> bytes | None:
        type_, obj = change.type, change.obj
        if self.matches is not None:
            now_ok = self.matches(obj)
            if type_ == "MODIFIED" and self.selective:
                was_ok = self.matches(change.prev) if change.prev is not None else now_ok
                if now_ok and not was_ok:
                    type_ = "ADDED"
                elif was_ok and not now_ok:
                    type_, obj = "DELETED", _with_rv(change.prev, str(change.rv))
                elif not now_ok:
                    return None
            elif not now_ok:
                return None
        return self.server._event_line(self.res, type_, obj, self.as_table, self.include_object)


# --- the server ------------------------------------------------------------------------------


class APIServer:
    """Serve ``cluster`` over the Kubernetes REST API.  ``async with APIServer(cluster) as s:``
    then point a client at ``s.url`` (``write_kubeconfig(path, s.url)`` for kubectl).

    ``port`` 0 picks a free port.  ``history_size`` bounds the watch history (older
    resourceVersions get 410); ``bookmark_interval`` is the seconds between BOOKMARK events.
    The cluster must be entered (``async with FakeCluster()``) for as long as the server runs.
    """

    def __init__(
        self,
        cluster: FakeCluster,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        history_size: int = 10_000,
        bookmark_interval: float = 60.0,
        watch_timeout: float = 1800.0,
    ) -> None:
        self.cluster = cluster
        self.host = host
        self.port = port
        self.history_size = history_size
        self.bookmark_interval = bookmark_interval
        self.watch_timeout = watch_timeout
        self._dicts: dict[str, dict[tuple[str, str], dict[str, Any]]] = {
            "Namespace": {},
            "Event": {},
            "Lease": {},
        }
        self._history: deque[_Change] = deque()
        self._floor = 0  # changes with rv <= floor may be missing from history
        self._last_rv = 0
        self._last: dict[tuple[str, str, str], Any] = {}
        self._pending_namespaces: set[str] = set()
        self._watchers: set[_Watcher] = set()
        self._cluster_watch: Any = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._listener: anyio.abc.Listener[Any] | None = None

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{self.host}:{self.port}"

    async def __aenter__(self) -> Self:
        listener = await anyio.create_tcp_listener(local_host=self.host, local_port=self.port)
        self._listener = listener
        self.port = listener.extra(SocketAttribute.local_port)
        self._follow_cluster()
        for ns in _SYSTEM_NAMESPACES:
            self._ensure_namespace(ns)
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        tg.start_soon(self._pump)
        tg.start_soon(listener.serve, self._connection)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for w in list(self._watchers):
            w.end()
        try:
            if self._tg is not None:
                self._tg.cancel_scope.cancel()
                await self._tg.__aexit__(exc_type, exc, tb)
        finally:
            self._tg = None
            if self._listener is not None:
                with anyio.CancelScope(shield=True):
                    await self._listener.aclose()
                self._listener = None

    # --- test hooks ------------------------------------------------------------------------

    def drop_watches(self, *, abort: bool = False) -> None:
        """End every open HTTP watch: cleanly (the response ends), or with ``abort`` by closing
        its connection mid-stream."""
        for w in list(self._watchers):
            w.end(abort=abort)

    def compact(self) -> None:
        """Forget the watch history: a watch from any resourceVersion before now gets 410."""
        self._drain()
        self._history.clear()
        self._floor = max(self._floor, self._last_rv, int(self.cluster.resource_version))

    @property
    def resource_version(self) -> str:
        """The latest resourceVersion (of any kind)."""
        return str(self.cluster.resource_version)

    # --- following the cluster -------------------------------------------------------------

    def _follow_cluster(self) -> None:
        """(Re)start following the cluster's watch: its listing is our current state."""
        self._cluster_watch = self.cluster.watch()
        self._last = {k: v for k, v in self._last.items() if k[0] not in _CLUSTER_STORES}
        while (ev := self._cluster_watch.get_nowait()) is not None and ev.type != "SYNCED":
            ns, name = _ns_name(ev.obj)
            self._last[(type(ev.obj).__name__, ns, name)] = ev.obj
        rv = int(self.cluster.resource_version)
        self._history.clear()
        self._floor = max(self._floor, rv)
        self._last_rv = max(self._last_rv, rv)
        for key in list(self._last):
            if key[1]:
                self._ensure_namespace(key[1])

    async def _pump(self) -> None:
        while True:
            try:
                async for ev in self._cluster_watch:
                    self._on_cluster_event(ev)
                    self._drain()
                return  # the cluster was closed
            except UnavailableError:
                # the cluster's watch was dropped (a fault injected on the cluster): start again;
                # HTTP watchers may have missed changes, so they end and their clients re-list
                log.info("cluster watch dropped: following it again")
                self.drop_watches()
                self._follow_cluster()

    def _drain(self) -> None:
        """Take every cluster change already delivered, in order."""
        watch = self._cluster_watch
        if watch is None:
            return
        while (ev := watch.get_nowait()) is not None:
            self._on_cluster_event(ev)
        while self._pending_namespaces:
            self._ensure_namespace(self._pending_namespaces.pop())

    def _on_cluster_event(self, ev: Any) -> None:
        if ev.type == "SYNCED" or ev.obj is None:
            return
        obj = ev.obj
        store = type(obj).__name__
        ns, name = _ns_name(obj)
        key = (store, ns, name)
        prev = self._last.get(key)
        if ev.type == "DELETED":
            self._last.pop(key, None)
        else:
            self._last[key] = obj
            if ns and ("", ns) not in self._dicts["Namespace"]:
                self._pending_namespaces.add(ns)
        self._record(_Change(int(obj.metadata.resource_version or 0), store, ev.type, obj, prev))

    def _record(self, change: _Change) -> None:
        self._history.append(change)
        self._last_rv = max(self._last_rv, change.rv)
        while len(self._history) > self.history_size:
            self._floor = max(self._floor, self._history.popleft().rv)
        for w in self._watchers:
            if w.store == change.store:
                w.push(change)

    # --- the server's own store (Namespaces, Events, Leases) --------------------------------

    def _dict_put(self, store: str, obj: dict[str, Any], type_: str) -> dict[str, Any]:
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        prev = self._dicts[store].get(key)
        meta["resourceVersion"] = self.cluster.next_resource_version()
        self._dicts[store][key] = obj
        self._record(_Change(int(meta["resourceVersion"]), store, type_, obj, prev))
        return obj

    def _dict_remove(self, store: str, key: tuple[str, str]) -> dict[str, Any]:
        old = self._dicts[store].pop(key)
        gone = _with_rv(old, self.cluster.next_resource_version())
        self._record(_Change(int(_rv_of(gone)), store, "DELETED", gone, old))
        return gone  # type: ignore[no-any-return]

    def _ensure_namespace(self, name: str) -> None:
        if ("", name) in self._dicts["Namespace"]:
            return
        self._dict_put("Namespace", self._new_namespace(name), "ADDED")

    def _new_namespace(self, name: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        meta = dict(meta or {})
        meta.update(name=name, uid=str(uuid.uuid4()), creationTimestamp=self.cluster.timestamp())
        meta["labels"] = {**(meta.get("labels") or {}), "kubernetes.io/metadata.name": name}
        meta.pop("namespace", None)
        return {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": meta,
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }

    # --- reads -------------------------------------------------------------------------------

    def _store_of(self, res: Resource) -> str:
        return "Event" if res.store == "CoreEvent" else res.store

    def _objects(self, res: Resource, namespace: str | None) -> list[Any]:
        store = self._store_of(res)
        if store in _CLUSTER_STORES:
            objs = self.cluster.list(store)
        else:
            objs = list(self._dicts[store].values())
        if namespace is not None and res.namespaced:
            objs = [o for o in objs if _ns_name(o)[0] == namespace]
        return sorted(objs, key=_ns_name)

    def _lookup(self, res: Resource, namespace: str, name: str) -> Any | None:
        store = self._store_of(res)
        if store in _CLUSTER_STORES:
            return self.cluster.get(store, namespace, name)
        return self._dicts[store].get((namespace if res.namespaced else "", name))

    def _wire(self, res: Resource, obj: Any) -> dict[str, Any]:
        """The object as the client sees it (plain dicts; core/v1 for core Events)."""
        d = obj if isinstance(obj, dict) else _builtins(obj)
        if res.store == "CoreEvent":
            return _event_to_core(d)
        return d

    def _printable(self, res: Resource, obj: Any) -> dict[str, Any]:
        """The wire form the Table printers read (events.k8s.io Events print as core ones)."""
        d = self._wire(res, obj)
        return _event_to_core(d) if res.store == "Event" else d

    def _encode(self, res: Resource, obj: Any) -> bytes:
        return msgspec.json.encode(self._wire(res, obj))

    def _event_line(
        self, res: Resource, type_: str, obj: Any, as_table: bool, include_object: str
    ) -> bytes:
        if as_table:
            body = msgspec.json.encode(
                table(
                    res.kind,
                    [self._printable(res, obj)],
                    self._now(),
                    include_object=include_object,
                )
            )
        else:
            body = self._encode(res, obj)
        return b'{"type":"' + type_.encode() + b'","object":' + body + b"}\n"

    def _bookmark_line(self, res: Resource, *, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(self._last_rv), "creationTimestamp": None}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": res.kind, "apiVersion": res.group_version, "metadata": meta}
        return msgspec.json.encode({"type": "BOOKMARK", "object": obj}) + b"\n"

    def _now(self) -> datetime:
        return datetime.fromisoformat(self.cluster.timestamp().replace("Z", "+00:00"))

    # --- HTTP --------------------------------------------------------------------------------

    async def _connection(self, stream: anyio.abc.ByteStream) -> None:
        conn = h11.Connection(h11.SERVER)
        try:
            async with stream:
                while True:
                    req = await self._read_request(conn, stream)
                    if req is None:
                        return
                    if not await self._respond(conn, stream, req):
                        return
                    if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                        return
                    conn.start_next_cycle()
        except (
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            anyio.EndOfStream,
            ConnectionError,
            h11.ProtocolError,
        ):
            return
        except Exception:  # one broken connection never takes the server down
            log.exception("connection failed")

    async def _read_request(
        self, conn: h11.Connection, stream: anyio.abc.ByteStream
    ) -> _Request | None:
        head: h11.Request | None = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    data = await stream.receive(65536)
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    data = b""
                conn.receive_data(data)
            elif isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                target = urlsplit(head.target.decode("latin-1"))
                return _Request(
                    method=head.method.decode().upper(),
                    path=target.path,
                    query=dict(parse_qsl(target.query, keep_blank_values=True)),
                    headers={k.decode().lower(): v.decode("latin-1") for k, v in head.headers},
                    body=bytes(body),
                )
            else:  # ConnectionClosed, PAUSED
                return None

    async def _respond(
        self, conn: h11.Connection, stream: anyio.abc.ByteStream, req: _Request
    ) -> bool:
        """Answer one request; False when the connection must close."""
        try:
            self._drain()
            result = await self._route(req)
        except _HTTPError as e:
            result = _Reply(e.code, e.body())
        except Exception as e:  # a bug or an injected failure: 500, never a dead server
            log.exception("%s %s failed", req.method, req.path)
            result = _Reply(
                500, _HTTPError(500, "InternalError", f"Internal error occurred: {e}").body()
            )
        if isinstance(result, _WatchPlan):
            return await self._stream(conn, stream, result)
        headers = [
            ("content-type", result.content_type),
            ("content-length", str(len(result.body))),
            ("cache-control", "no-cache, private"),
        ]
        await stream.send(conn.send(h11.Response(status_code=result.status, headers=headers)))
        if req.method != "HEAD" and result.body:
            await stream.send(conn.send(h11.Data(data=result.body)))
        await stream.send(conn.send(h11.EndOfMessage()))
        return True

    async def _stream(
        self, conn: h11.Connection, stream: anyio.abc.ByteStream, plan: _WatchPlan
    ) -> bool:
        headers = [
            ("content-type", "application/json"),
            ("transfer-encoding", "chunked"),
            ("cache-control", "no-cache, private"),
        ]
        await stream.send(conn.send(h11.Response(status_code=200, headers=headers)))
        closed = False

        async def send(chunk: bytes) -> None:
            await stream.send(conn.send(h11.Data(data=chunk)))

        async with anyio.create_task_group() as tg:

            async def watch_for_close() -> None:
                nonlocal closed
                try:
                    while True:
                        conn.receive_data(await stream.receive(65536))
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    closed = True
                tg.cancel_scope.cancel()

            tg.start_soon(watch_for_close)
            try:
                await plan.run(send)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError, _Abort):
                closed = True  # the client went away, or the watch is dropped by closing it
            tg.cancel_scope.cancel()
        if closed:
            return False
        await stream.send(conn.send(h11.EndOfMessage()))
        return True

    # --- routing -----------------------------------------------------------------------------

    async def _route(self, req: _Request) -> _Reply | _WatchPlan:
        parts = [p for p in req.path.split("/") if p]
        accept = req.headers.get("accept", "")
        if req.method not in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"):
            raise _HTTPError(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            )
        if not parts:
            paths = [
                "/api",
                "/api/v1",
                "/apis",
                "/healthz",
                "/livez",
                "/openapi/v3",
                "/readyz",
                "/version",
            ]
            paths += [f"/apis/{g}/{v}" for g, vs in disco.GROUPS.items() for v in vs]
            return self._json({"paths": sorted(paths)})
        head = parts[0]
        if head == "version" and len(parts) == 1:
            return self._json(VERSION_INFO)
        if head in ("healthz", "livez", "readyz"):
            return _Reply(200, b"ok", "text/plain; charset=utf-8")
        if head == "openapi":
            return self._openapi(parts)
        if head == "api":
            if len(parts) == 1:
                if _wants_aggregated(accept):
                    return self._json(
                        disco.aggregated_discovery(True), disco.AGGREGATED_CONTENT_TYPE
                    )
                return self._json(disco.api_versions(f"{self.host}:{self.port}"))
            group, version, rest = "", parts[1], parts[2:]
        elif head == "apis":
            if len(parts) == 1:
                if _wants_aggregated(accept):
                    return self._json(
                        disco.aggregated_discovery(False), disco.AGGREGATED_CONTENT_TYPE
                    )
                return self._json(disco.api_group_list())
            group = parts[1]
            if len(parts) == 2:
                if not disco.group_exists(group):
                    raise _HTTPError(
                        404, "NotFound", "the server could not find the requested resource"
                    )
                return self._json(disco.api_group(group))
            version, rest = parts[2], parts[3:]
        else:
            raise _HTTPError(404, "NotFound", "the server could not find the requested resource")
        if not disco.group_exists(group, version):
            raise _HTTPError(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            return self._json(disco.api_resource_list(group, version))
        namespace: str | None = None
        if (
            rest[0] == "namespaces"
            and len(rest) >= 3
            and not (group == "" and len(rest) == 3 and rest[2] in ("status", "finalize"))
        ):
            namespace, rest = rest[1], rest[2:]
        res = find_resource(group, version, rest[0])
        if res is None or len(rest) > 3 or (namespace is not None and not res.namespaced):
            raise _HTTPError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if sub and sub not in res.subresources:
            raise _HTTPError(404, "NotFound", "the server could not find the requested resource")
        if res.namespaced and name and namespace is None:
            raise _HTTPError(404, "NotFound", "the server could not find the requested resource")
        ns = namespace if res.namespaced else ""
        return await self._verb(req, res, namespace, ns or "", name, sub, accept)

    async def _verb(
        self,
        req: _Request,
        res: Resource,
        namespace: str | None,
        ns: str,
        name: str,
        sub: str,
        accept: str,
    ) -> _Reply | _WatchPlan:
        m, q = req.method, req.query
        as_table = "as=Table" in accept
        if m in ("GET", "HEAD") and not name:
            if q.get("watch") in ("true", "1", "True"):
                return self._watch(res, namespace, q, as_table)
            return self._list(res, namespace, q, as_table)
        if m in ("GET", "HEAD"):
            obj = self._lookup(res, ns, name)
            if obj is None:
                raise _not_found(res, name)
            if as_table:
                return self._json(
                    table(
                        res.kind,
                        [self._printable(res, obj)],
                        self._now(),
                        resource_version=_rv_of(obj),
                        include_object=q.get("includeObject", "Metadata"),
                    )
                )
            return _Reply(200, self._encode(res, obj))
        body = self._body(req) if m in ("POST", "PUT") else {}
        if m == "POST" and res.kind == "Binding" and not name:
            return await self._bind(res, ns, "", body)
        if m == "POST" and sub == "binding":
            return await self._bind(res, ns, name, body)
        if m == "POST" and not name:
            if res.namespaced and namespace is None:
                raise _HTTPError(
                    405,
                    "MethodNotAllowed",
                    "the server does not allow this method on the requested resource",
                )
            return await self._create(res, ns, body, q)
        if m == "PUT" and name:
            return await self._update(res, ns, name, sub, body, q)
        if m == "PATCH" and name:
            return await self._patch(req, res, ns, name, sub)
        if m == "DELETE" and name and not sub:
            return await self._delete(req, res, ns, name)
        raise _HTTPError(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )

    def _json(self, doc: Any, content_type: str = "application/json", status: int = 200) -> _Reply:
        return _Reply(status, msgspec.json.encode(doc), content_type)

    def _body(self, req: _Request) -> dict[str, Any]:
        ctype = req.headers.get("content-type", "application/json").split(";")[0].strip()
        try:
            if ctype in ("application/yaml", "application/apply-patch+yaml"):
                data = yaml.safe_load(req.body)
            else:
                data = json.loads(req.body) if req.body else {}
        except (ValueError, yaml.YAMLError) as e:
            raise _bad_request(f"the body of the request was in an unknown format: {e}") from None
        if not isinstance(data, dict):
            raise _bad_request("the body of the request must be a JSON object")
        return data

    def _openapi(self, parts: list[str]) -> _Reply:
        if parts[:2] != ["openapi", "v3"]:
            raise _HTTPError(404, "NotFound", "the server could not find the requested resource")
        rest = parts[2:]
        if not rest:
            return self._json(disco.openapi_index())
        if rest[0] == "api" and rest[1:] == ["v1"]:
            return self._json(disco.openapi_document("", "v1"))
        if rest[0] == "apis" and len(rest) == 3 and disco.group_exists(rest[1], rest[2]):
            return self._json(disco.openapi_document(rest[1], rest[2]))
        raise _HTTPError(404, "NotFound", "the server could not find the requested resource")

    # --- list and watch ----------------------------------------------------------------------

    def _matcher(
        self, res: Resource, namespace: str | None, q: dict[str, str]
    ) -> tuple[Callable[[Any], bool] | None, bool]:
        """(match function or None for all, whether it can change as an object changes)."""
        try:
            labels = parse_label_selector(q.get("labelSelector"))
            fields = parse_field_selector(q.get("fieldSelector"))
        except SelectorError as e:
            raise _bad_request(str(e)) from None
        ns = namespace if res.namespaced else None
        if labels is None and fields is None and ns is None:
            return None, False

        def matches(obj: Any) -> bool:
            if ns is not None and _ns_name(obj)[0] != ns:
                return False
            if labels is not None and not labels(_labels(obj)):
                return False
            return fields is None or fields(self._wire(res, obj))

        return matches, labels is not None or fields is not None

    def _list(
        self, res: Resource, namespace: str | None, q: dict[str, str], as_table: bool
    ) -> _Reply:
        matches, _ = self._matcher(res, namespace, q)
        objs = self._objects(res, namespace)
        if matches is not None:
            objs = [o for o in objs if matches(o)]
        rv = self.cluster.resource_version
        start: tuple[str, ...] = ()
        if q.get("continue"):
            try:
                token = json.loads(base64.urlsafe_b64decode(q["continue"].encode()))
                start = tuple(token["start"])
            except (ValueError, KeyError, TypeError):
                raise _bad_request(
                    "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
                ) from None
            objs = [o for o in objs if _ns_name(o) > start]
        cont = ""
        limit = int(q.get("limit") or 0)
        if limit > 0 and len(objs) > limit:
            objs = objs[:limit]
            last = list(_ns_name(objs[-1]))
            cont = base64.urlsafe_b64encode(
                json.dumps({"v": "meta.k8s.io/v1", "rv": int(rv), "start": last}).encode()
            ).decode()
        if as_table:
            t = table(
                res.kind,
                [self._printable(res, o) for o in objs],
                self._now(),
                resource_version=rv,
                include_object=q.get("includeObject", "Metadata"),
                continue_token=cont,
            )
            return self._json(t)
        meta: dict[str, Any] = {"resourceVersion": rv}
        if cont:
            meta["continue"] = cont
        items = [self._wire(res, o) for o in objs]
        return self._json(
            {
                "kind": f"{res.kind}List",
                "apiVersion": res.group_version,
                "metadata": meta,
                "items": items,
            }
        )

    def _watch(
        self, res: Resource, namespace: str | None, q: dict[str, str], as_table: bool
    ) -> _WatchPlan:
        matches, selective = self._matcher(res, namespace, q)
        rv_param = q.get("resourceVersion", "")
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1", "True")
        send_initial = q.get("sendInitialEvents") in ("true", "1", "True")
        include = q.get("includeObject", "Metadata")
        try:
            timeout = float(q["timeoutSeconds"]) if q.get("timeoutSeconds") else self.watch_timeout
        except ValueError:
            raise _bad_request(f"invalid timeoutSeconds {q['timeoutSeconds']!r}") from None
        plan = _WatchPlan(
            self, res, None, [], matches, selective, timeout, bookmarks, as_table, include
        )
        store = self._store_of(res)
        if send_initial or rv_param in ("", "0"):
            objs = self._objects(res, namespace)
            if matches is not None:
                objs = [o for o in objs if matches(o)]
            plan.initial = [self._event_line(res, "ADDED", o, as_table, include) for o in objs]
            if send_initial and bookmarks:
                plan.initial.append(self._bookmark_line(res, initial_end=True))
            backlog: list[_Change] = []
        else:
            try:
                since = int(rv_param)
            except ValueError:
                raise _bad_request(f'invalid resource version "{rv_param}"') from None
            if since < self._floor:
                status = _HTTPError(
                    410, "Expired", f"too old resource version: {since} ({self._floor})"
                )
                plan.initial = [b'{"type":"ERROR","object":' + status.body() + b"}\n"]
                return plan
            backlog = [c for c in self._history if c.store == store and c.rv > since]
        watcher = _Watcher(store, deque(backlog))
        self._watchers.add(watcher)
        plan.watcher = watcher
        return plan

    # --- writes ------------------------------------------------------------------------------

    def _check_identity(
        self, res: Resource, ns: str, body: dict[str, Any], name: str = ""
    ) -> dict[str, Any]:
        kind, api = body.get("kind"), body.get("apiVersion")
        want_kind = res.kind
        if (kind and kind != want_kind) or (api and api != res.group_version):
            raise _bad_request(
                f"the API version in the data ({api}) does not match the expected API version ({res.group_version})"
                if api and api != res.group_version
                else f"the kind in the data ({kind}) does not match the expected kind ({want_kind})"
            )
        body["kind"], body["apiVersion"] = want_kind, res.group_version
        meta = body.get("metadata")
        if not isinstance(meta, dict):
            meta = body["metadata"] = {}
        if res.namespaced:
            if meta.get("namespace") and meta["namespace"] != ns:
                raise _bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if name and meta.get("name") and meta["name"] != name:
            raise _bad_request("the name of the object does not match the name on the URL")
        if name:
            meta["name"] = name
        return meta

    def _decode(self, res: Resource, body: dict[str, Any]) -> Any:
        name = (body.get("metadata") or {}).get("name", "")
        try:
            obj = convert(body, _STRUCTS[res.store])
        except msgspec.ValidationError as e:
            raise _bad_request(
                f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: {e}'
            ) from None
        try:
            _validate(obj, res.kind)
        except ConfigError as e:
            raise _invalid(res, name, e.field, e.message) from None
        return obj

    async def _create(
        self, res: Resource, ns: str, body: dict[str, Any], q: dict[str, str]
    ) -> _Reply:
        if res.store == "CoreEvent":
            body = _event_from_core(self._check_copy(res, ns, body))
            res = find_resource("events.k8s.io", "v1", "events")  # type: ignore[assignment]
            stored = await self._create(res, ns, body, q)
            return _Reply(
                stored.status, msgspec.json.encode(_event_to_core(json.loads(stored.body)))
            )
        meta = self._check_identity(res, ns, body)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(
                secrets.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5)
            )
        name = meta.get("name", "")
        if not name:
            raise _invalid(
                res, "", "metadata.name", "Required value: name or generateName is required"
            )
        for k in (
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "managedFields",
            "selfLink",
        ):
            meta.pop(k, None)
        meta["uid"] = str(uuid.uuid4())
        if res.store == "Node":
            _kubelet_ready(body)
        dry_run = bool(q.get("dryRun"))
        if res.store in _CLUSTER_STORES:
            obj = self._decode(res, body)
            if self.cluster.get(res.store, ns, name) is not None:
                raise _HTTPError(
                    409,
                    "AlreadyExists",
                    f'{res.qualified} "{name}" already exists',
                    _details(res, name),
                )
            if dry_run:
                return _Reply(201, self._encode(res, obj))
            try:
                stored = self.cluster.create(obj)
            except ConfigError as e:  # admission (an unknown PriorityClass)
                raise _HTTPError(
                    403,
                    "Forbidden",
                    f'{res.qualified} "{name}" is forbidden: {e.message}',
                    _details(res, name),
                ) from None
            except ConflictError:
                raise _HTTPError(
                    409,
                    "AlreadyExists",
                    f'{res.qualified} "{name}" already exists',
                    _details(res, name),
                ) from None
            self._drain()
            return _Reply(201, self._encode(res, stored))
        store = res.store
        key = (ns, name)
        if store == "Namespace":
            body = self._new_namespace(name, meta) | {
                k: v for k, v in body.items() if k not in ("metadata", "status")
            }
            body["status"] = {"phase": "Active"}
        else:
            meta["creationTimestamp"] = self.cluster.timestamp()
        if key in self._dicts[store]:
            raise _HTTPError(
                409,
                "AlreadyExists",
                f'{res.qualified} "{name}" already exists',
                _details(res, name),
            )
        if dry_run:
            return self._json(body, status=201)
        if store == "Event":
            try:
                event = convert(body, Event)
            except msgspec.ValidationError as e:
                raise _bad_request(
                    f'Event in version "v1" cannot be handled as a Event: {e}'
                ) from None
            await self._cluster_call(res, name, self.cluster.record_event(event))
        self._dict_put(store, body, "ADDED")
        return self._json(body, status=201)

    def _check_copy(self, res: Resource, ns: str, body: dict[str, Any]) -> dict[str, Any]:
        self._check_identity(res, ns, body)
        return body

    async def _cluster_call(self, res: Resource, name: str, call: Awaitable[None]) -> None:
        try:
            await call
        except ConflictError as e:
            raise _conflict(res, name, str(e)) from None
        except NotFoundError:
            raise _not_found(res, name) from None
        except UnavailableError as e:
            raise _HTTPError(503, "ServiceUnavailable", str(e)) from None
        finally:
            self._drain()

    async def _bind(self, res: Resource, ns: str, name: str, body: dict[str, Any]) -> _Reply:
        pods = find_resource("", "v1", "pods")
        assert pods is not None
        binding_res = find_resource("", "v1", "bindings")
        assert binding_res is not None
        meta = body.get("metadata") or {}
        if name and meta.get("name") and meta["name"] != name:
            raise _bad_request("the name of the object does not match the name on the URL")
        name = name or meta.get("name", "")
        if meta.get("namespace") and meta["namespace"] != ns:
            raise _bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        body = {**body, "metadata": {**meta, "name": name, "namespace": ns}}
        body.pop("kind", None)
        body.pop("apiVersion", None)
        try:
            binding = convert(body, Binding)
        except msgspec.ValidationError as e:
            raise _bad_request(
                f'Binding in version "v1" cannot be handled as a Binding: {e}'
            ) from None
        if not name:
            raise _invalid(
                binding_res, "", "metadata.name", "Required value: name or generateName is required"
            )
        if not binding.target.name:
            raise _invalid(binding_res, name, "target.name", "Required value")
        try:
            await self.cluster.bind(binding)
        except ConflictError as e:
            raise _conflict(
                pods, name, f'Operation cannot be fulfilled on pods/binding "{name}": {e}'
            ) from None
        except NotFoundError:
            raise _not_found(pods, name) from None
        except UnavailableError as e:
            raise _HTTPError(503, "ServiceUnavailable", str(e)) from None
        finally:
            self._drain()
        return self._json(_success(code=201), status=201)

    async def _update(
        self, res: Resource, ns: str, name: str, sub: str, body: dict[str, Any], q: dict[str, str]
    ) -> _Reply:
        old = self._lookup(res, ns, name)
        if old is None:
            raise _not_found(res, name)
        if res.store == "CoreEvent":
            body = _event_from_core(self._check_copy(res, ns, body))
            res = find_resource("events.k8s.io", "v1", "events")  # type: ignore[assignment]
            reply = await self._replace(res, ns, name, sub, old, body, bool(q.get("dryRun")))
            return _Reply(reply.status, msgspec.json.encode(_event_to_core(json.loads(reply.body))))
        self._check_identity(res, ns, body, name)
        return await self._replace(res, ns, name, sub, old, body, bool(q.get("dryRun")))

    async def _replace(
        self,
        res: Resource,
        ns: str,
        name: str,
        sub: str,
        old: Any,
        new: dict[str, Any],
        dry_run: bool,
    ) -> _Reply:
        """Store ``new`` (wire form) in place of ``old``, with the rules of a PUT on the resource
        or on its status subresource."""
        old_wire = old if isinstance(old, dict) else _builtins(old)
        new_meta = new.get("metadata") or {}
        if new_meta.get("uid") and new_meta["uid"] != _uid_of(old):
            raise _conflict(
                res,
                name,
                f"Precondition failed: UID in precondition: {new_meta['uid']}, UID in object meta: {_uid_of(old)}",
            )
        rv = str(new_meta.get("resourceVersion") or "")
        if rv and rv != _rv_of(old):
            raise _conflict(
                res,
                name,
                f'Operation cannot be fulfilled on {res.qualified} "{name}": the object has been modified; '
                "please apply your changes to the latest version and try again",
            )
        if sub == "status":
            merged = {**old_wire, "status": new.get("status")}
            if merged["status"] is None:
                merged.pop("status")
        else:
            merged = dict(new)
            if "status" in res.subresources:
                if "status" in old_wire:
                    merged["status"] = old_wire["status"]
                else:
                    merged.pop("status", None)
            meta = dict(new_meta)
            for k in (
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
            ):
                if k in old_wire.get("metadata", {}):
                    meta[k] = old_wire["metadata"][k]
                else:
                    meta.pop(k, None)
            meta["name"] = name
            if res.namespaced:
                meta["namespace"] = ns
            merged["metadata"] = meta
        merged["metadata"] = {**merged["metadata"], "resourceVersion": _rv_of(old)}
        if res.store in _CLUSTER_STORES:
            obj = self._decode(res, merged)
            if res.store == "Pod" and not sub:
                _check_pod_update(res, name, old_wire.get("spec", {}), to_builtins(obj.spec))
            if dry_run:
                return _Reply(200, self._encode(res, obj))
            try:
                stored = self.cluster.update(obj)
            except ConflictError as e:
                raise _conflict(res, name, str(e)) from None
            except NotFoundError:
                raise _not_found(res, name) from None
            self._drain()
            return _Reply(200, self._encode(res, stored))
        if res.store == "Namespace":
            merged["metadata"]["labels"] = {
                **(merged["metadata"].get("labels") or {}),
                "kubernetes.io/metadata.name": name,
            }
        if dry_run:
            return self._json(merged)
        self._dict_put(res.store, merged, "MODIFIED")
        return self._json(merged)

    async def _patch(self, req: _Request, res: Resource, ns: str, name: str, sub: str) -> _Reply:
        ctype = req.headers.get("content-type", "").split(";")[0].strip()
        old = self._lookup(res, ns, name)
        core_event = res.store == "CoreEvent"
        if core_event:
            res = find_resource("events.k8s.io", "v1", "events")  # type: ignore[assignment]
        dry_run = bool(req.query.get("dryRun"))
        if ctype == "application/apply-patch+yaml":
            applied = self._body(req)
            if core_event:
                applied = _event_from_core(applied)
            if old is None:
                if sub:
                    raise _not_found(res, name)
                self._check_identity(res, ns, applied, name)
                reply = await self._create(res, ns, applied, req.query)
                return self._core_reply(reply) if core_event else reply
            self._check_identity(res, ns, applied, name)
            applied["metadata"].pop("resourceVersion", None)
            merged = strategic_merge_patch(self._wire_for_patch(res, old, False), applied)
        else:
            if old is None:
                raise _not_found(res, name)
            try:
                patch = json.loads(req.body) if req.body else {}
            except ValueError as e:
                raise _bad_request(f"error decoding patch: {e}") from None
            current = self._wire_for_patch(res, old, core_event)
            try:
                if ctype == "application/json-patch+json":
                    merged = apply_json_patch(current, patch)
                elif ctype == "application/merge-patch+json":
                    merged = json_merge_patch(current, patch)
                elif ctype == "application/strategic-merge-patch+json":
                    if res.crd:
                        raise _HTTPError(
                            415,
                            "UnsupportedMediaType",
                            "strategic merge patch is not supported for custom resources",
                        )
                    merged = strategic_merge_patch(current, patch)
                else:
                    raise _HTTPError(
                        415,
                        "UnsupportedMediaType",
                        f"the server does not support the patch type {ctype!r}",
                    )
            except PatchError as e:
                raise _HTTPError(422, "Invalid", str(e), _details(res, name)) from None
            if not isinstance(merged, dict):
                raise _bad_request("the patch result is not an object")
            if core_event:
                merged = _event_from_core(merged)
        merged.setdefault("metadata", {})
        self._check_identity(res, ns, merged, name)
        reply = await self._replace(res, ns, name, sub, old, merged, dry_run)
        return self._core_reply(reply) if core_event else reply

    def _core_reply(self, reply: _Reply) -> _Reply:
        return _Reply(reply.status, msgspec.json.encode(_event_to_core(json.loads(reply.body))))

    def _wire_for_patch(self, res: Resource, old: Any, core_event: bool) -> dict[str, Any]:
        d = old if isinstance(old, dict) else _builtins(old)
        d = json.loads(json.dumps(d))  # a private deep copy
        return _event_to_core(d) if core_event else d  # type: ignore[no-any-return]

    async def _delete(self, req: _Request, res: Resource, ns: str, name: str) -> _Reply:
        opts: dict[str, Any] = {}
        if req.body:
            try:
                opts = json.loads(req.body)
            except ValueError:
                raise _bad_request("the body of the request was in an unknown format") from None
        if not isinstance(opts, dict):
            opts = {}
        grace = opts.get("gracePeriodSeconds")
        if req.query.get("gracePeriodSeconds"):
            grace = int(req.query["gracePeriodSeconds"])
        old = self._lookup(res, ns, name)
        if old is None:
            raise _not_found(res, name)
        pre = opts.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != _uid_of(old):
            raise _conflict(
                res,
                name,
                f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {_uid_of(old)}",
            )
        if pre.get("resourceVersion") and str(pre["resourceVersion"]) != _rv_of(old):
            raise _conflict(
                res,
                name,
                f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                f"ResourceVersion in object meta: {_rv_of(old)}",
            )
        if req.query.get("dryRun"):
            return _Reply(200, self._encode(res, old))
        store = self._store_of(res)
        if store == "Pod":
            await self._cluster_call(
                res,
                name,
                self.cluster.delete_pod(ns, name, uid=pre.get("uid") or None, grace_seconds=grace),
            )
            current = self.cluster.get("Pod", ns, name)
            return _Reply(200, self._encode(res, current if current is not None else old))
        if store in _CLUSTER_STORES:
            try:
                self.cluster.delete_object(store, ns, name)
            except NotFoundError:
                raise _not_found(res, name) from None
            self._drain()
            return self._json(_success(res, name, _uid_of(old)))
        if store == "Namespace":
            if name in _UNDELETABLE_NAMESPACES:
                raise _HTTPError(
                    403,
                    "Forbidden",
                    f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                    _details(res, name),
                )
            for kind in _CLUSTER_STORES:
                for obj in self.cluster.list(kind):
                    if _ns_name(obj)[0] == name:
                        self.cluster.delete_object(kind, name, _ns_name(obj)[1])
            self._drain()
            for st in ("Event", "Lease"):
                for key in [k for k in self._dicts[st] if k[0] == name]:
                    self._dict_remove(st, key)
        gone = self._dict_remove(store, (ns, name))
        if res.store == "CoreEvent":
            return self._json(_success(res, name, _uid_of(old)))
        return (
            self._json(gone)
            if store == "Namespace"
            else self._json(_success(res, name, _uid_of(old)))
        )


def _wants_aggregated(accept: str) -> bool:
    """Whether the Accept header asks for apidiscovery.k8s.io/v2 APIGroupDiscoveryList."""
    for media in accept.split(","):
        params = {p.strip() for p in media.split(";")[1:]}
        if {"g=apidiscovery.k8s.io", "v=v2", "as=APIGroupDiscoveryList"} <= params:
            return True
    return False


def _kubelet_ready(body: dict[str, Any]) -> None:
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


_POD_MUTABLE = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
    "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
    "previously negative)"
)


def _check_pod_update(res: Resource, name: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    """ValidatePodUpdate, for the fields kubesched models: the spec is immutable except images,
    tolerations (additions only) and scheduling gates (removals only)."""

    def strip(spec: dict[str, Any]) -> dict[str, Any]:
        s = {
            k: v
            for k, v in spec.items()
            if k not in ("tolerations", "schedulingGates", "activeDeadlineSeconds")
        }
        for group in ("containers", "initContainers"):
            if isinstance(s.get(group), list):
                s[group] = [{k: v for k, v in c.items() if k != "image"} for c in s[group]]
        return s

    old_gates = [g.get("name") for g in old.get("schedulingGates") or []]
    for g in new.get("schedulingGates") or []:
        if g.get("name") not in old_gates:
            raise _HTTPError(
                422,
                "Invalid",
                f"Pod \"{name}\" is invalid: spec.schedulingGates: Forbidden: only deletion is allowed, but found new scheduling gate '{g.get('name')}'",
                _details(res, name) | {"kind": "Pod"},
            )
    old_tol = old.get("tolerations") or []
    new_tol = new.get("tolerations") or []
    if any(t not in new_tol for t in old_tol):
        raise _HTTPError(
            422,
            "Invalid",
            f'Pod "{name}" is invalid: {_POD_MUTABLE}',
            _details(res, name) | {"kind": "Pod"},
        )
    if strip(old) != strip(new):
        raise _HTTPError(
            422,
            "Invalid",
            f'Pod "{name}" is invalid: {_POD_MUTABLE}',
            _details(res, name) | {"kind": "Pod"},
        )
