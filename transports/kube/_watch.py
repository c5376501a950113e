"""List-then-watch for each kind, merged into one WatchEvent stream.

Model (one :class:`Reflector` per kind, as client-go's reflector + informer store)::

    initial sync:  list Pods... (paginated, consistent read) ─► ADDED × n    (kind by kind:
                   PriorityClasses, Nodes, PDBs, PodGroups, the storage kinds (StorageClasses,
                   CSIDrivers, CSINodes, CSIStorageCapacities, PVs, PVCs), the DRA kinds
                   (DeviceClasses, ResourceSlices, DeviceTaintRules, ResourceClaims), Pods)  ─► SYNCED
    then, per kind, concurrently:
        watch?resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=300..600
           ADDED / MODIFIED / DELETED ─► store + stream      BOOKMARK ─► RV only
           server timeout (clean end) ─► watch again from RV
           410 Gone, ERROR event, dropped connection ─► backoff ─► re-list:
               the new listing is diffed against the store (``replace``): DELETED for what
               vanished (or was re-created with a new uid), ADDED for what is new, MODIFIED
               for what changed — so the consumer never has to re-list itself.

A kind that is not served (the PodGroup CRD not installed, a server without a storage or DRA
kind: 404 on list) is empty and is listed again every minute.  Backoff: 0.8 s doubling to 30 s with jitter, reset after a
successful listing.  Time comes from anyio only.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Self

import anyio
import anyio.lowlevel
import msgspec

from kubesched import NotFoundError, TransportError, UnavailableError, WatchEvent, WatchEventType
from kubesched.api import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    DeviceClass,
    DeviceTaintRule,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
    ReplicaSet,
    ResourceClaim,
    ResourceSlice,
    SchedulingPodGroup,
    StatefulSet,
    StorageClass,
    Workload,
)

from ._client import ApiClient, GoneError, status_message

log = logging.getLogger("kubesched.kube")

__all__ = ["RESOURCES", "WORKLOAD_API_RESOURCES", "KubeWatch", "Reflector", "Resource", "resources_for"]


@dataclass(frozen=True, slots=True)
class Resource:
    """One watched kind: its struct and its cluster-wide collection path."""

    kind: str
    type: type[Any]
    path: str
    optional: bool = False
    """A custom resource that may not be installed (404 on list: treated as empty)."""
    fallback: str = ""
    """The path watched instead when ``path`` answers 404 (an older version of the kind)."""
    multi_version: bool = False
    """One Struct for several versions (the Workload API's Workload): an object gets the version
    of the path it came from (a list's items carry no apiVersion)."""

    @property
    def api_version(self) -> str:
        """``group/version`` of :attr:`path` (``v1`` for the core group)."""
        parts = self.path.strip("/").split("/")
        return parts[1] if parts[0] == "api" else f"{parts[1]}/{parts[2]}"


RESOURCES: tuple[Resource, ...] = (
    Resource("PriorityClass", PriorityClass, "/apis/scheduling.k8s.io/v1/priorityclasses"),
    Resource("Node", Node, "/api/v1/nodes"),
    Resource("PodDisruptionBudget", PodDisruptionBudget, "/apis/policy/v1/poddisruptionbudgets"),
    Resource("PodGroup", PodGroup, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", optional=True),
    # the volume plugins' informers, before the pods that name them
    Resource("StorageClass", StorageClass, "/apis/storage.k8s.io/v1/storageclasses", optional=True),
    Resource("CSIDriver", CSIDriver, "/apis/storage.k8s.io/v1/csidrivers", optional=True),
    Resource("CSINode", CSINode, "/apis/storage.k8s.io/v1/csinodes", optional=True),
    Resource(
        "CSIStorageCapacity",
        CSIStorageCapacity,
        "/apis/storage.k8s.io/v1/csistoragecapacities",
        optional=True,
    ),
    Resource("PersistentVolume", PersistentVolume, "/api/v1/persistentvolumes", optional=True),
    Resource(
        "PersistentVolumeClaim",
        PersistentVolumeClaim,
        "/api/v1/persistentvolumeclaims",
        optional=True,
    ),
    # the DynamicResources plugin's informers (resource.k8s.io, GA in 1.34), before the pods
    Resource("DeviceClass", DeviceClass, "/apis/resource.k8s.io/v1/deviceclasses", optional=True),
    Resource("ResourceSlice", ResourceSlice, "/apis/resource.k8s.io/v1/resourceslices", optional=True),
    # 1.36's version, or 1.33-1.35's v1alpha3 (the one their scheduler's informer watches)
    Resource(
        "DeviceTaintRule",
        DeviceTaintRule,
        "/apis/resource.k8s.io/v1beta2/devicetaintrules",
        optional=True,
        fallback="/apis/resource.k8s.io/v1alpha3/devicetaintrules",
    ),
    Resource("ResourceClaim", ResourceClaim, "/apis/resource.k8s.io/v1/resourceclaims", optional=True),
    # PodTopologySpread's default constraints: the selector of a pod's controller
    Resource("ReplicaSet", ReplicaSet, "/apis/apps/v1/replicasets", optional=True),
    Resource("StatefulSet", StatefulSet, "/apis/apps/v1/statefulsets", optional=True),
    Resource("Pod", Pod, "/api/v1/pods"),
)


WORKLOAD_API_RESOURCES: tuple[Resource, ...] = (
    Resource("Workload", Workload, "/apis/scheduling.k8s.io/v1alpha1/workloads", optional=True, multi_version=True),
    Resource("Workload", Workload, "/apis/scheduling.k8s.io/v1alpha2/workloads", optional=True, multi_version=True),
    Resource("SchedulingPodGroup", SchedulingPodGroup, "/apis/scheduling.k8s.io/v1alpha2/podgroups", optional=True),
)
"""The Workload API (alpha): watched, like kube-scheduler's informers for it, only with the
GenericWorkload gate on (:func:`resources_for`); 1.35 serves v1alpha1 Workloads, 1.36 v1alpha2
Workloads and PodGroups, and a cluster without them answers 404 (none)."""


def resources_for(feature_gates: Mapping[str, bool]) -> tuple[Resource, ...]:
    """The kinds a scheduler with ``feature_gates`` watches: :data:`RESOURCES`, and the Workload
    API's before the pods when GenericWorkload is on."""
    if not feature_gates.get("GenericWorkload", False):
        return RESOURCES
    return (*RESOURCES[:-1], *WORKLOAD_API_RESOURCES, RESOURCES[-1])


class _ListMeta(msgspec.Struct, rename="camel"):
    resource_version: str = ""
    continue_: str = msgspec.field(default="", name="continue")


class _RawList(msgspec.Struct):
    items: list[msgspec.Raw] | None = None
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)


class _RawEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw = msgspec.Raw(b"null")


class _MetaOnly(msgspec.Struct):
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)


class _ErrStatus(msgspec.Struct):
    code: int = 0
    message: str = ""


_list_decoder = msgspec.json.Decoder(_RawList)
_event_decoder = msgspec.json.Decoder(_RawEvent)
_meta_decoder = msgspec.json.Decoder(_MetaOnly)
_status_decoder = msgspec.json.Decoder(_ErrStatus)


class Backoff:
    """Exponential backoff with jitter: ``initial`` doubling to ``maximum``; ``reset()``."""

    def __init__(self, rng: random.Random, initial: float = 0.8, maximum: float = 30.0) -> None:
        self.rng = rng
        self.initial = initial
        self.maximum = maximum
        self._next = initial

    def next(self) -> float:
        d = self._next
        self._next = min(self.maximum, self._next * 2)
        return d * (1.0 + self.rng.random())

    def reset(self) -> None:
        self._next = self.initial


class KubeWatch:
    """The merged stream: an async iterator with ``get_nowait()`` and ``pending()``, like the
    fake cluster's watch (the scheduler drains delivered events before each cycle)."""

    def __init__(self) -> None:
        self._queue: deque[WatchEvent] = deque()
        self._wakeup: anyio.Event | None = None
        self._ended = False
        self.scope = anyio.CancelScope()
        self.synced = False

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> WatchEvent:
        await anyio.lowlevel.checkpoint()
        while True:
            if self._queue:
                return self._queue.popleft()
            if self._ended:
                raise StopAsyncIteration
            self._wakeup = anyio.Event()
            await self._wakeup.wait()

    def get_nowait(self) -> WatchEvent | None:
        """The next delivered event without waiting, or None."""
        return self._queue.popleft() if self._queue else None

    def pending(self) -> bool:
        """Events delivered but not yet taken."""
        return bool(self._queue)

    async def aclose(self) -> None:
        """Stop watching: the reflectors are cancelled and the iterator ends."""
        self.scope.cancel()
        self._end()
        self._queue.clear()

    def push(self, event: WatchEvent) -> None:
        if self._ended:
            return
        self._queue.append(event)
        self._wake()

    def _end(self) -> None:
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None


def _key(obj: Any) -> tuple[str, str]:
    md = obj.metadata
    return md.namespace, md.name


class Reflector:
    """List-then-watch of one kind, keeping a store and emitting WatchEvents."""

    def __init__(
        self,
        api: ApiClient,
        resource: Resource,
        emit: Callable[[WatchEvent], None],
        *,
        rng: random.Random,
        page_size: int = 500,
        min_watch_timeout: float = 300.0,
        backoff_initial: float = 0.8,
        backoff_max: float = 30.0,
        not_served_poll: float = 60.0,
    ) -> None:
        self.api = api
        self.resource = resource
        self.emit = emit
        self.rng = rng
        self.page_size = page_size
        self.min_watch_timeout = min_watch_timeout
        self.backoff = Backoff(rng, backoff_initial, backoff_max)
        self.not_served_poll = not_served_poll
        self.decoder = msgspec.json.Decoder(resource.type)
        self.store: dict[tuple[str, str], Any] = {}
        self.resource_version = ""
        self.served = True
        self.lists = 0
        self.watches = 0

    # --- listing ------------------------------------------------------------------------------
    def _decode(self, raw: bytes) -> Any | None:
        try:
            obj = self.decoder.decode(raw)
            if self.resource.multi_version:
                obj = msgspec.structs.replace(obj, api_version=self.resource.api_version)
            return obj
        except (msgspec.ValidationError, RecursionError) as e:
            why = "nested too deep" if isinstance(e, RecursionError) else e
            log.error("skipping a %s that does not decode: %s", self.resource.kind, why)
            return None

    async def _list(self) -> tuple[list[Any], str]:
        res = self.resource
        items: list[Any] = []
        cont = ""
        while True:
            params: dict[str, Any] = {"limit": self.page_size} if self.page_size else {}
            if cont:
                params["continue"] = cont
            try:
                body = await self.api.request("GET", res.path, params=params)
            except NotFoundError:
                if res.fallback and not cont:
                    self.resource = res = dataclasses.replace(res, path=res.fallback, fallback="")
                    continue
                if not res.optional:
                    raise
                if self.served:
                    log.info("%s are not served by this API server: none will be seen", res.path)
                self.served = False
                return [], ""
            try:
                lst = _list_decoder.decode(body)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as e:
                # garbage, or JSON nested past any object's depth: a server fault, retried
                why = "nested too deep" if isinstance(e, RecursionError) else e
                raise UnavailableError(f"GET {res.path}: undecodable list: {why}") from None
            for raw in lst.items or ():
                obj = self._decode(raw)
                if obj is not None:
                    items.append(obj)
            cont = lst.metadata.continue_
            if not cont:
                self.served = True
                return items, lst.metadata.resource_version

    def replace(self, items: list[Any]) -> list[WatchEvent]:
        """Diff a fresh listing against the store (client-go ``Replace``): the events that bring
        a consumer from the old state to the new one."""
        new = {_key(o): o for o in items}
        out: list[WatchEvent] = []
        for k, old in self.store.items():
            cur = new.get(k)
            if cur is None or cur.metadata.uid != old.metadata.uid:
                out.append(WatchEvent("DELETED", old))
        for k, obj in new.items():
            old = self.store.get(k)
            if old is None or old.metadata.uid != obj.metadata.uid:
                out.append(WatchEvent("ADDED", obj))
            elif old.metadata.resource_version != obj.metadata.resource_version:
                out.append(WatchEvent("MODIFIED", obj))
        self.store = new
        return out

    async def list_once(self) -> None:
        """List, diff against the store and emit the changes; raises the transport's error."""
        items, rv = await self._list()
        self.lists += 1
        for event in self.replace(items):
            self.emit(event)
        self.resource_version = rv

    async def sync(self) -> None:
        """List until it succeeds, backing off between failures."""
        while True:
            try:
                await self.list_once()
            except TransportError as e:
                delay = self.backoff.next()
                level = logging.ERROR if "403" in str(e) or "401" in str(e) else logging.WARNING
                log.log(
                    level, "listing %s failed (%s); retrying in %.1fs", self.resource.kind, e, delay
                )
                await anyio.sleep(delay)
                continue
            self.backoff.reset()
            return

    # --- watching -----------------------------------------------------------------------------
    async def run(self) -> None:
        """Watch (after :meth:`sync`) forever: re-watch on a clean end, re-list on errors."""
        while True:
            if not self.served:
                await anyio.sleep(self.not_served_poll)
                await self.sync()
                continue
            start = anyio.current_time()
            try:
                received = await self.watch_once()
            except GoneError as e:
                log.info("watch of %s expired (%s); re-listing", self.resource.kind, e)
            except TransportError as e:
                delay = self.backoff.next()
                log.warning(
                    "watch of %s failed (%s); re-listing in %.1fs", self.resource.kind, e, delay
                )
                await anyio.sleep(delay)
            else:
                if received or anyio.current_time() - start >= 1.0:
                    continue  # the server's timeoutSeconds: watch again from the same version
                delay = self.backoff.next()
                log.warning(
                    "watch of %s closed at once; re-listing in %.1fs", self.resource.kind, delay
                )
                await anyio.sleep(delay)
            await self.sync()

    async def watch_once(self) -> int:
        """One watch request from ``resource_version``; returns how many lines it received when
        the server ends it cleanly; raises GoneError / TransportError otherwise."""
        res = self.resource
        timeout = self.min_watch_timeout * (1.0 + self.rng.random())
        params = {
            "watch": "true",
            "resourceVersion": self.resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(int(timeout)),
        }
        received = 0
        self.watches += 1
        error: TransportError | None = None
        # An error line ends the watch by cancelling the read, not by leaving the loop: the
        # cancellation unwinds httpx's chain of async generators from the inside, so none is
        # left suspended for the garbage collector (trio warns about those).
        with anyio.CancelScope() as scope:
            async with self.api.stream(
                res.path, params=params, read_timeout=timeout + 30.0
            ) as resp:
                async for line in resp.aiter_lines():
                    if error is not None or not line.strip():
                        continue
                    received += 1
                    try:
                        self._on_line(line.encode())
                    except TransportError as e:
                        error = e
                        scope.cancel()
        if error is not None:
            raise error
        return received

    def _on_line(self, line: bytes) -> None:
        try:
            raw = _event_decoder.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as e:
            why = "nested too deep" if isinstance(e, RecursionError) else e
            raise UnavailableError(
                f"watch of {self.resource.kind}: undecodable event: {why}"
            ) from None
        type_ = raw.type
        if type_ == "BOOKMARK":
            rv = _meta_decoder.decode(raw.object).metadata.resource_version
            if rv:
                self.resource_version = rv
            return
        if type_ == "ERROR":
            try:
                st = _status_decoder.decode(raw.object)
            except msgspec.DecodeError:
                st = _ErrStatus()
            msg = f"watch of {self.resource.kind}: {st.code} {st.message or status_message(b'', st.code)}"
            if st.code == 410:
                raise GoneError(msg)
            raise UnavailableError(msg)
        if type_ not in ("ADDED", "MODIFIED", "DELETED"):
            log.warning("watch of %s: unknown event type %r", self.resource.kind, type_)
            return
        obj = self._decode(raw.object)
        if obj is None:
            return
        key = _key(obj)
        old = self.store.get(key)
        if obj.metadata.resource_version:
            self.resource_version = obj.metadata.resource_version
        kind: WatchEventType
        if type_ == "DELETED":
            self.store.pop(key, None)
            kind = "DELETED"
        else:
            if old is not None and old.metadata.uid != obj.metadata.uid:
                self.emit(WatchEvent("DELETED", old))  # re-created while we looked away
                old = None
            self.store[key] = obj
            kind = "ADDED" if old is None else "MODIFIED"
        self.emit(WatchEvent(kind, obj))
