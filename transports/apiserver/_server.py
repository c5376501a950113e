"""A FakeCluster served over the Kubernetes REST API, on 127.0.0.1, with h11 over sockets on anyio.

Model, as the kube-apiserver's generic registry::

    request ──HTTP/1.1 (h11, keep-alive)──► route by (group, version, resource) ──► its row
        (_registry: one ResourceSpec per served kind) ──► generic handler (_handlers: get, list,
        watch, create, update, patch, delete; hooks of the row where a kind differs, _kinds)
        ──► store (_store): the row's backend, the FakeCluster (Pods, Nodes, PriorityClasses,
        PodDisruptionBudgets, PodGroups: admission, kubelet, disruption controller, faults) or
        the server's generic object store (Namespaces, Events, Leases: plain dicts)
    FakeCluster.watch() ──pump──► history (bounded, by resourceVersion) ──► each HTTP watch's
        backlog (each change encoded once and shared, each backlog bounded: _fanout)

- One HTTP/1.1 connection (_conn): requests read under kube-apiserver's header and idle
  timeouts, answered one at a time; a refused request is answered once its body is read.
- Discovery and OpenAPI (_discovery) and ``kubectl get`` tables (_table) come from the same rows:
  the server's own :class:`~._registry.Registry`, the table's rows plus the gated ones its
  emulated version and feature gates serve (_workloadapi: the Workload API with GenericWorkload),
  groups in kube-apiserver's priority order.
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
import socket
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self
from urllib.parse import unquote

import anyio
import anyio.abc

from kubesched.framework import DEFAULT_VERSION, Version
from kubesched.transports._taskgroups import exit_task_group
from kubesched.transports.fake import FakeCluster
from kubesched.validation import validate_object as _validate

from . import _discovery as disco
from ._conn import Connection
from ._gatedfields import gated_fields_row
from ._handlers import handle
from ._http import (
    HTTPError,
    Reply,
    Request,
    bad_request,
    check_path_segment,
    json_reply,
    method_not_allowed,
    no_such_path,
)
from ._kinds import SYSTEM_NAMESPACES
from ._memory import Trimmer
from ._registry import RESOURCES, Registry
from ._sockets import Socket, accept_loop, listen
from ._store import Store, ensure_namespace
from ._watch import WatchPlan
from ._workloadapi import pod_fields, served_rows

__all__ = ["APIServer"]

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
    resourceVersions get 410); ``bookmark_interval`` is the seconds between BOOKMARK events;
    ``watch_timeout`` ends a watch that asks for none.  ``read_header_timeout`` and
    ``idle_timeout`` are kube-apiserver's (32 s to read a request's head, 90 s for a kept-alive
    connection to start its next request).  A watch whose backlog passes
    ``watch_backlog_events`` changes or ``watch_backlog_bytes`` is closed for not keeping up.
    A request body over ``offload_bytes`` is decoded and validated in a worker thread, so that
    other clients are answered meanwhile.
    ``emulated_version`` and ``feature_gates`` (default: none on; GenericWorkload is off by
    default in every release that has it) choose
    what of the gated APIs is served, as that release's API server with those gates
    (``_workloadapi``: the Workload API with GenericWorkload).
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
        read_header_timeout: float = 32.0,
        idle_timeout: float = 90.0,
        watch_backlog_events: int = 10_000,
        watch_backlog_bytes: int = 16 << 20,
        offload_bytes: int = 64 << 10,
        emulated_version: Version = DEFAULT_VERSION,
        feature_gates: Mapping[str, bool] | None = None,
    ) -> None:
        self.cluster = cluster
        self.host = host
        self.port = port
        self.bookmark_interval = bookmark_interval
        self.watch_timeout = watch_timeout
        self.read_header_timeout = read_header_timeout
        self.idle_timeout = idle_timeout
        self.watch_backlog_events = watch_backlog_events
        self.watch_backlog_bytes = watch_backlog_bytes
        self.offload_bytes = offload_bytes
        gates = feature_gates or {}
        rows = [
            gated_fields_row(pod_fields(r, emulated_version, gates) if (r.group, r.plural) == ("", "pods") else r, gates)
            for r in RESOURCES
        ]
        self.registry = Registry([*rows, *served_rows(emulated_version, gates)])
        """The rows this server serves (the emulated release's, with its gates)."""
        self.store = Store(cluster, self.registry.rows, history_size=history_size, validate=_validate)
        """Every served object and the history of their changes."""
        self.trimmer = Trimmer()
        """Gives the memory of closed connections back to the operating system."""
        self._tg: anyio.abc.TaskGroup | None = None
        self._listener: socket.socket | None = None

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
        listener = self._listener = listen(self.host, self.port)
        self.port = listener.getsockname()[1]
        self.store.follow_cluster()
        for ns in SYSTEM_NAMESPACES:
            ensure_namespace(self.store, ns)
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        tg.start_soon(self.store.pump)
        tg.start_soon(self.trimmer.run)
        tg.start_soon(accept_loop, listener, self._connection, tg)
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
            if self._tg is not None:  # what failed (the block, the server) comes out as itself
                self._tg.cancel_scope.cancel()
                await exit_task_group(self._tg, exc_type, exc, tb)
        finally:
            self._tg = None
            if self._listener is not None:
                anyio.notify_closing(self._listener)
                self._listener.close()
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

    async def _connection(self, stream: Socket) -> None:
        try:
            await Connection(self, stream).serve()
        finally:
            self.trimmer.connection_closed()

    async def answer(self, req: Request) -> Reply | WatchPlan:
        """The answer to one request: a reply, or the plan of a watch to stream."""
        try:
            self.store.drain()
            return await self._route(req)
        except HTTPError as e:
            return Reply(e.code, e.body())
        except Exception as e:  # a bug or an injected failure: 500, never a dead server
            log.exception("%s %s failed", req.method, req.path)
            return Reply(
                500, HTTPError(500, "InternalError", f"Internal error occurred: {e}").body()
            )

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
            paths += [f"/apis/{g}/{v}" for g, vs in self.registry.groups.items() for v in vs]
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
                        disco.aggregated_discovery(True, self.registry), disco.AGGREGATED_CONTENT_TYPE
                    )
                return json_reply(disco.api_versions(f"{self.host}:{self.port}"))
            group, version, rest = "", parts[1], parts[2:]
        elif head == "apis":
            if len(parts) == 1:
                if _wants_aggregated(accept):
                    return json_reply(
                        disco.aggregated_discovery(False, self.registry), disco.AGGREGATED_CONTENT_TYPE
                    )
                return json_reply(disco.api_group_list(self.registry))
            group = parts[1]
            if len(parts) == 2:
                if not self.registry.group_exists(group):
                    raise no_such_path()
                return json_reply(disco.api_group(group, self.registry))
            version, rest = parts[2], parts[3:]
        else:
            raise no_such_path()
        if not self.registry.group_exists(group, version):
            raise no_such_path()
        if not rest:
            return json_reply(disco.api_resource_list(group, version, self.registry))
        namespace: str | None = None
        if (
            rest[0] == "namespaces"
            and len(rest) >= 3
            and not (group == "" and len(rest) == 3 and rest[2] in ("status", "finalize"))
        ):
            namespace, rest = rest[1], rest[2:]
        spec = self.registry.find(group, version, rest[0])
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
            return json_reply(disco.openapi_index(self.registry))
        if rest[0] == "api" and rest[1:] == ["v1"]:
            return json_reply(disco.openapi_document("", "v1", self.registry))
        if rest[0] == "apis" and len(rest) == 3 and self.registry.group_exists(rest[1], rest[2]):
            return json_reply(disco.openapi_document(rest[1], rest[2], self.registry))
        raise no_such_path()


def _wants_aggregated(accept: str) -> bool:
    """Whether the Accept header asks for apidiscovery.k8s.io/v2 APIGroupDiscoveryList."""
    for media in accept.split(","):
        params = {p.strip() for p in media.split(";")[1:]}
        if {"g=apidiscovery.k8s.io", "v=v2", "as=APIGroupDiscoveryList"} <= params:
            return True
    return False
