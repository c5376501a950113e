"""A FakeCluster served over the Kubernetes REST API, on 127.0.0.1, with h11 over anyio sockets.

Model, as the kube-apiserver's generic registry::

    request ──HTTP/1.1 (h11, keep-alive)──► route by (group, version, resource) ──► its row
        (_registry: one ResourceSpec per served kind) ──► generic handler (_handlers: get, list,
        watch, create, update, patch, delete; hooks of the row where a kind differs, _kinds)
        ──► store (_store): the row's backend, the FakeCluster (Pods, Nodes, PriorityClasses,
        PodDisruptionBudgets, PodGroups: admission, kubelet, disruption controller, faults) or
        the server's generic object store (Namespaces, Events, Leases: plain dicts)
    FakeCluster.watch() ──pump──► history (bounded, by resourceVersion) ──► each HTTP watch's queue

- Discovery and OpenAPI (_discovery) and ``kubectl get`` tables (_table) come from the same rows.
- ResourceVersions of the server's own objects come from the cluster's sequence (one sequence,
  as in etcd).
- One pump task follows the cluster's watch; before each request the queued cluster events are
  drained too, so a client that reads after a write sees it, and history is in resourceVersion
  order.  History keeps the last ``history_size`` changes: a watch from an older resourceVersion
  gets 200 and one ERROR event with a 410 Expired Status ("too old resource version"), as the
  kube-apiserver's watch cache answers (_watch).
- Objects of the FakeCluster are served in the wire form their client wrote, defaulted as
  upstream stores every object, with the cluster's changes laid over it (_store).
- No authentication or authorization: bind only to a loopback address.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl, unquote, urlsplit

import anyio
import anyio.abc
import h11
from anyio.abc import SocketAttribute

from kubesched._validation import validate_object as _validate
from kubesched.transports.fake import FakeCluster

from . import _discovery as disco
from ._handlers import handle
from ._http import (
    MAX_REQUEST_BODY_BYTES,
    HTTPError,
    Reply,
    Request,
    bad_request,
    check_path_segment,
    json_reply,
    method_not_allowed,
    no_such_path,
    warning_header,
)
from ._kinds import SYSTEM_NAMESPACES, ensure_namespace
from ._registry import GROUPS, RESOURCES, find_resource, group_exists
from ._store import Store
from ._watch import Abort, WatchPlan

__all__ = ["APIServer"]

MAX_HEADER_BYTES = 1 << 20  # Go's http.DefaultMaxHeaderBytes


class _TooLarge(Exception):
    """A request body over MAX_REQUEST_BODY_BYTES."""


log = logging.getLogger("kubesched.apiserver")

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
        self.bookmark_interval = bookmark_interval
        self.watch_timeout = watch_timeout
        self.store = Store(cluster, RESOURCES, history_size=history_size, validate=_validate)
        """Every served object and the history of their changes."""
        self._tg: anyio.abc.TaskGroup | None = None
        self._listener: anyio.abc.Listener[Any] | None = None

    @property
    def history_size(self) -> int:
        return self.store.history_size

    @property
    def _dicts(self) -> dict[str, dict[tuple[str, str], dict[str, Any]]]:
        """The server's own objects (Namespaces, Events, Leases): store → (ns, name) → object."""
        return self.store.objects

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{self.host}:{self.port}"

    async def __aenter__(self) -> Self:
        listener = await anyio.create_tcp_listener(local_host=self.host, local_port=self.port)
        self._listener = listener
        self.port = listener.extra(SocketAttribute.local_port)
        self.store.follow_cluster()
        for ns in SYSTEM_NAMESPACES:
            ensure_namespace(self.store, ns)
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        tg.start_soon(self.store.pump)
        tg.start_soon(listener.serve, self._connection)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for w in list(self.store.watchers):
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
        self.store.drop_watches(abort=abort)

    def compact(self) -> None:
        """Forget the watch history: a watch from any resourceVersion before now gets 410."""
        self.store.compact()

    @property
    def resource_version(self) -> str:
        """The latest resourceVersion (of any kind)."""
        return self.store.resource_version

    # --- HTTP --------------------------------------------------------------------------------

    async def _connection(self, stream: anyio.abc.ByteStream) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADER_BYTES)
        try:
            async with stream:
                while True:
                    try:
                        req = await self._read_request(conn, stream)
                    except h11.RemoteProtocolError as e:
                        # a request h11 refuses (no Host, a bad header line): 400 as upstream's
                        # Go server, then close; never a connection dropped without an answer
                        await self._refuse(conn, stream, e.error_status_hint, "BadRequest", str(e))
                        return
                    except _TooLarge:
                        await self._refuse(
                            conn, stream, 413, "RequestEntityTooLarge",
                            f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}",
                        )
                        return
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
    ) -> Request | None:
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
                for k, v in head.headers:
                    if k == b"content-length" and int(v) > MAX_REQUEST_BODY_BYTES:
                        raise _TooLarge  # refused before reading a byte of it
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_REQUEST_BODY_BYTES:  # chunked: stop reading at the limit
                    raise _TooLarge
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                target = urlsplit(head.target.decode("latin-1"))
                return Request(
                    method=head.method.decode("latin-1").upper(),
                    path=target.path,
                    query=dict(parse_qsl(target.query, keep_blank_values=True)),
                    headers={k.decode().lower(): v.decode("latin-1") for k, v in head.headers},
                    body=bytes(body),
                )
            else:  # ConnectionClosed, PAUSED
                return None

    async def _refuse(
        self, conn: h11.Connection, stream: anyio.abc.ByteStream, code: int, reason: str, message: str
    ) -> None:
        """Answer a request that cannot be read (and close the connection after it)."""
        if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        body = HTTPError(code, reason, message).body()
        headers = [
            ("content-type", "application/json"),
            ("content-length", str(len(body))),
            ("connection", "close"),
        ]
        try:
            await stream.send(conn.send(h11.Response(status_code=code, headers=headers)))
            await stream.send(conn.send(h11.Data(data=body)))
            await stream.send(conn.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:
            return

    async def _respond(
        self, conn: h11.Connection, stream: anyio.abc.ByteStream, req: Request
    ) -> bool:
        """Answer one request; False when the connection must close."""
        try:
            self.store.drain()
            result = await self._route(req)
        except HTTPError as e:
            result = Reply(e.code, e.body())
        except Exception as e:  # a bug or an injected failure: 500, never a dead server
            log.exception("%s %s failed", req.method, req.path)
            result = Reply(
                500, HTTPError(500, "InternalError", f"Internal error occurred: {e}").body()
            )
        if isinstance(result, WatchPlan):
            return await self._stream(conn, stream, result)
        headers = [
            ("content-type", result.content_type),
            ("content-length", str(len(result.body))),
            ("cache-control", "no-cache, private"),
        ]
        headers += [("warning", warning_header(w)) for w in result.warnings]
        await stream.send(conn.send(h11.Response(status_code=result.status, headers=headers)))
        if req.method != "HEAD" and result.body:
            await stream.send(conn.send(h11.Data(data=result.body)))
        await stream.send(conn.send(h11.EndOfMessage()))
        return True

    async def _stream(
        self, conn: h11.Connection, stream: anyio.abc.ByteStream, plan: WatchPlan
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
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError, Abort):
                closed = True  # the client went away, or the watch is dropped by closing it
            tg.cancel_scope.cancel()
        if closed:
            return False
        await stream.send(conn.send(h11.EndOfMessage()))
        return True

    # --- routing -----------------------------------------------------------------------------

    async def _route(self, req: Request) -> Reply | WatchPlan:
        """Discovery, version, health and OpenAPI; else (group, version, resource) → its row →
        the generic handler."""
        # each segment percent-decoded (as Go's net/http gives the path to upstream's router)
        try:
            parts = [unquote(p, errors="strict") for p in req.path.split("/") if p]
        except UnicodeDecodeError:
            raise bad_request("the request path is not UTF-8 once percent-decoded") from None
        accept = req.headers.get("accept", "")
        if req.method not in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"):
            raise method_not_allowed()
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
            paths += [f"/apis/{g}/{v}" for g, vs in GROUPS.items() for v in vs]
            return json_reply({"paths": sorted(paths)})
        head = parts[0]
        if head == "version" and len(parts) == 1:
            return json_reply(VERSION_INFO)
        if head in ("healthz", "livez", "readyz"):
            return Reply(200, b"ok", "text/plain; charset=utf-8")
        if head == "openapi":
            return self._openapi(parts)
        if head == "api":
            if len(parts) == 1:
                if _wants_aggregated(accept):
                    return json_reply(
                        disco.aggregated_discovery(True), disco.AGGREGATED_CONTENT_TYPE
                    )
                return json_reply(disco.api_versions(f"{self.host}:{self.port}"))
            group, version, rest = "", parts[1], parts[2:]
        elif head == "apis":
            if len(parts) == 1:
                if _wants_aggregated(accept):
                    return json_reply(
                        disco.aggregated_discovery(False), disco.AGGREGATED_CONTENT_TYPE
                    )
                return json_reply(disco.api_group_list())
            group = parts[1]
            if len(parts) == 2:
                if not group_exists(group):
                    raise no_such_path()
                return json_reply(disco.api_group(group))
            version, rest = parts[2], parts[3:]
        else:
            raise no_such_path()
        if not group_exists(group, version):
            raise no_such_path()
        if not rest:
            return json_reply(disco.api_resource_list(group, version))
        namespace: str | None = None
        if (
            rest[0] == "namespaces"
            and len(rest) >= 3
            and not (group == "" and len(rest) == 3 and rest[2] in ("status", "finalize"))
        ):
            namespace, rest = rest[1], rest[2:]
        spec = find_resource(group, version, rest[0])
        if spec is None or len(rest) > 3 or (namespace is not None and not spec.namespaced):
            raise no_such_path()
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        for what, segment in (("namespace", namespace), ("name", name)):
            if segment:
                check_path_segment(what, segment)
        if sub and sub not in spec.subresources:
            raise no_such_path()
        if spec.namespaced and name and namespace is None:
            raise no_such_path()
        return await handle(self, req, spec, namespace, name, sub)

    def _openapi(self, parts: list[str]) -> Reply:
        if parts[:2] != ["openapi", "v3"]:
            raise no_such_path()
        rest = parts[2:]
        if not rest:
            return json_reply(disco.openapi_index())
        if rest[0] == "api" and rest[1:] == ["v1"]:
            return json_reply(disco.openapi_document("", "v1"))
        if rest[0] == "apis" and len(rest) == 3 and group_exists(rest[1], rest[2]):
            return json_reply(disco.openapi_document(rest[1], rest[2]))
        raise no_such_path()


def _wants_aggregated(accept: str) -> bool:
    """Whether the Accept header asks for apidiscovery.k8s.io/v2 APIGroupDiscoveryList."""
    for media in accept.split(","):
        params = {p.strip() for p in media.split(";")[1:]}
        if {"g=apidiscovery.k8s.io", "v=v2", "as=APIGroupDiscoveryList"} <= params:
            return True
    return False
