"""The fake cluster's store: the API server's storage half, and the feed its controllers hang on.

Model::

    create / update / put / remove            (the facade's verbs, and controllers' own writes)
            │
            ▼  admit(change)   in-write steps, in registration order; may fill in change.obj,
            │                  which then lands in this same write (one resourceVersion)
            ▼
    commit: objects[kind][key] = obj;  resourceVersion += 1 (one sequence for every kind)
            │
            ├─► watchers: one WatchEvent per write, pushed at once onto every live watch's queue
            │
            └─► observe(change)  every controller registered for the kind, in registration order,
                                 one change at a time, in resourceVersion order (a write made
                                 while observing is queued and fed after the current change)

A controller (``Controller``) names the kinds it is fed and reacts through this API: reads
(``get``, ``objects``, ``in_namespace``) and writes (``create``, ``update``, ``put``,
``remove``).  Every write is a :class:`Change` whose ``verb`` says which API call made it: an
admin ``update`` that sets ``nodeName`` is not a binding, and no controller takes it for one.

Objects in the store and in events are shared, never mutated: a write stores a new object.
Time is ``anyio.current_time()`` only (:class:`Clock`, through :func:`kubesched.clock.now`).
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Literal, NamedTuple

import anyio
import anyio.lowlevel
import msgspec
from msgspec.structs import replace

from kubesched import (
    ConfigError,
    ConflictError,
    NotFoundError,
    WatchEvent,
    WatchEventType,
)
from kubesched.api import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    Deployment,
    DeviceClass,
    DeviceTaintRule,
    Job,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
    ReplicaSet,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    SchedulingPodGroup,
    StatefulSet,
    StorageClass,
    Workload,
    uid_for,
)
from kubesched.api import copy as _copy
from kubesched.clock import now as _now

from ._watch import Watch

# kind → (struct, namespaced, resource name used in API error messages); in watch-listing order
KINDS: dict[str, tuple[type[Any], bool, str]] = {
    "PriorityClass": (PriorityClass, False, "priorityclasses.scheduling.k8s.io"),
    "Node": (Node, False, "nodes"),
    "PodDisruptionBudget": (PodDisruptionBudget, True, "poddisruptionbudgets.policy"),
    "PodGroup": (PodGroup, True, "podgroups.scheduling.x-k8s.io"),
    "Workload": (Workload, True, "workloads.scheduling.k8s.io"),
    "SchedulingPodGroup": (SchedulingPodGroup, True, "podgroups.scheduling.k8s.io"),
    "StorageClass": (StorageClass, False, "storageclasses.storage.k8s.io"),
    "CSIDriver": (CSIDriver, False, "csidrivers.storage.k8s.io"),
    "CSINode": (CSINode, False, "csinodes.storage.k8s.io"),
    "CSIStorageCapacity": (CSIStorageCapacity, True, "csistoragecapacities.storage.k8s.io"),
    "PersistentVolume": (PersistentVolume, False, "persistentvolumes"),
    "PersistentVolumeClaim": (PersistentVolumeClaim, True, "persistentvolumeclaims"),
    # resource.k8s.io (DRA): listed before pods, as a scheduler's informers have them first
    "DeviceClass": (DeviceClass, False, "deviceclasses.resource.k8s.io"),
    "ResourceSlice": (ResourceSlice, False, "resourceslices.resource.k8s.io"),
    "DeviceTaintRule": (DeviceTaintRule, False, "devicetaintrules.resource.k8s.io"),
    "ResourceClaimTemplate": (ResourceClaimTemplate, True, "resourceclaimtemplates.resource.k8s.io"),
    "ResourceClaim": (ResourceClaim, True, "resourceclaims.resource.k8s.io"),
    "Pod": (Pod, True, "pods"),
    "Job": (Job, True, "jobs.batch"),
    "Deployment": (Deployment, True, "deployments.apps"),
    "ReplicaSet": (ReplicaSet, True, "replicasets.apps"),
    "StatefulSet": (StatefulSet, True, "statefulsets.apps"),
}

# struct → kind name, for the writes' lookup (kind_of for anything else)
_KIND_OF_TYPE: dict[type[Any], str] = {cls: kind for kind, (cls, _, _) in KINDS.items()}

# kubesched.api.copy for the kinds' structs, without its call and lookup (a create a pod): a
# deep copy through msgpack, the encoder's bytes decoded by the kind's decoder
_encode = msgspec.msgpack.Encoder().encode
_DECODE_OF_TYPE: dict[type[Any], Callable[[bytes], Any]] = {
    cls: msgspec.msgpack.Decoder(cls).decode for cls in _KIND_OF_TYPE
}

_LAST_TIME = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)

# the three-digit groups of a timestamp's microseconds: f"{frac:06d}" is
# f"{_DIGITS[frac // 1000]}{_DIGITS[frac % 1000]}" without parsing a format spec (0 <= frac < 10**6)
_DIGITS = tuple(f"{i:03d}" for i in range(1000))

VERBS = (
    "bind",
    "delete_pod",
    "patch_pod_status",
    "patch_pod_annotations",
    "record_event",
    "update_persistent_volume",
    "update_persistent_volume_claim",
    "update_resource_claim",
    "update_resource_claim_status",
    "delete_resource_claim",
    "create_resource_claim",
)
"""The transport verbs that faults can be injected into."""

Key = tuple[str, str]
"""(namespace, name); namespace "" for cluster-scoped kinds."""

Verb = Literal["create", "update", "bind", "status", "delete"]
VERBS_OF_CHANGES: tuple[Verb, ...] = ("create", "update", "bind", "status", "delete")
"""Every ``Change.verb``."""


def kind_of(kind: str | type[Any]) -> str:
    """The kind name of ``kind`` (a name or a struct class); ValueError when unknown."""
    name = kind if isinstance(kind, str) else getattr(kind, "__name__", "")
    if name not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")
    return name


class Change(NamedTuple):
    """One write, as controllers are fed it (immutable).

    ``type``: ADDED, MODIFIED or DELETED.  ``obj``: the object written (for DELETED: the last
    state, with the deletion's resourceVersion); during ``admit`` it is the private object being
    written and may be changed in place.  ``old``: the stored object before (None for ADDED).
    ``verb``: the call that wrote it — ``create``, ``update`` (admin writes), ``bind``,
    ``status`` (status writes: the scheduler's patches, controllers' status), ``delete`` (a
    graceful deletion beginning: MODIFIED with a deletionTimestamp; or the object going:
    DELETED).  ``stamp``: the write's time (RFC 3339) when the call that wrote it read the
    clock for it (a create's creationTimestamp, a binding's), else "": an in-write step that
    needs the time takes it, so one write has one time, as the API server gives it.
    """

    type: WatchEventType
    kind: str
    key: Key
    obj: Any
    old: Any
    verb: Verb
    stamp: str = ""


def plain_pod(pod: Pod) -> bool:
    """A pod with no owner, no annotation, no resource claim and no claim for its extended
    resources: what the workload controllers (``kubesched.io/duration``, Jobs, ReplicaSets),
    the StatefulSet controller and the resourceclaim controller do nothing for, but when it
    goes (``Controller.follows_plain_pods``).  The store tests it once a write."""
    md = pod.metadata
    return not (md.owner_references or md.annotations or pod.spec.resource_claims) and (
        pod.status.extended_resource_claim_status is None
    )


_new_tuple = tuple.__new__


class _WatchEventSlots:
    """WatchEvent's slots, writable: put builds a write's event as one of these and then makes
    it a WatchEvent (``__class__``; the same slots, so the same layout): two attribute stores
    instead of the frozen dataclass's ``object.__setattr__`` calls (two writes a pod)."""

    __slots__ = WatchEvent.__slots__


class Controller:
    """A reconciler fed by the store: subclass, set ``kinds``, override what you need, and
    ``Store.register`` it (the facade does, in a fixed order: that order is the order every
    hook runs in, so it is part of the cluster's behaviour).

    - ``admit(change)``: an in-write step, before the write is committed, for emulations that
      upstream does in a later write but that this cluster folds into the triggering one (the
      kubelet starting a pod at bind; PDB status on create).  Change ``change.obj`` in place;
      raising aborts the write (admission's errors).  Do not write to the store here.  Fed the
      writes of ``admits`` when set (a subset of ``kinds``), else of every kind in ``kinds``.
    - ``observe(change)``: after the write is committed and every watcher has its event.  React
      through the store's API; writes made here are fed to controllers after this change.
    - ``tasks()``: coroutine functions to run in the cluster's task group (timers);
      ``close()``: stop them (the cluster is closing).

    ``admit_verbs`` / ``observe_verbs``, when set, name the only verbs whose changes ``admit`` /
    ``observe`` act on: the store does not call them for the others (a pod's create and bind
    then skip the hooks that ignore them).  ``follows_plain_pods = False``: ``observe`` does
    nothing for a :func:`plain_pod`'s writes (its removal aside), so the store does not call it
    for them (most pods are plain: their create and bind reach only the controllers that need
    them).  ``admits_unbound_pods = False``: ``admit`` does nothing for the create of a pod that
    names no node (the kubelet's start), so the store does not call it for one.
    """

    kinds: ClassVar[tuple[str, ...]] = ()
    admits: ClassVar[tuple[str, ...] | None] = None
    admit_verbs: ClassVar[tuple[Verb, ...] | None] = None
    observe_verbs: ClassVar[tuple[Verb, ...] | None] = None
    follows_plain_pods: ClassVar[bool] = True
    admits_unbound_pods: ClassVar[bool] = True

    def __init__(self, store: Store) -> None:
        self.store = store

    def admit(self, change: Change) -> None:
        """In-write step (see the class docstring); by default nothing."""

    def observe(self, change: Change) -> None:
        """After-write step (see the class docstring); by default nothing."""

    def tasks(self) -> tuple[Callable[[], Any], ...]:
        """Background tasks to start when the cluster is entered; by default none."""
        return ()

    def close(self) -> None:
        """The cluster is closing; by default nothing."""


class Clock:
    """The cluster's time: ``epoch`` (wall clock at start) plus anyio time elapsed since."""

    def __init__(self, epoch: str) -> None:
        try:
            parsed = datetime.fromisoformat(epoch.replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(f"invalid RFC 3339 time {epoch!r}", field="epoch") from None
        if parsed.tzinfo is None:
            raise ConfigError(f"invalid RFC 3339 time {epoch!r}: no time zone", field="epoch")
        self.epoch = parsed.astimezone(UTC)
        self.start: float | None = None
        self.read: Callable[[], float] = _now
        """``kubesched.clock.now``, or while the cluster runs the loop's clock it reads
        (``kubesched.clock.reader``): the same time, one call fewer a read."""
        self._second: int | None = None
        self._prefix = ""
        self._dotted = self._whole = ""  # the fast path's: "<_prefix>." and "<_prefix>Z"
        self._epoch_micros = 0
        # the microseconds after the start that _format's second covers without a carry
        # (lo <= micros < hi; none before a second is formatted or in RFC 3339's last second),
        # and base: what a time's micros less base are, its timestamp's fraction
        self._lo = self._hi = self._base = 0
        self._last_seconds = -1.0
        self._last_stamp = ""
        self._last_second = (_LAST_TIME - self.epoch).total_seconds()  # RFC 3339's last

    def elapsed(self) -> float:
        start = self.start
        if start is None:
            self.start = start = self.read()
        return self.read() - start

    def timestamp(self, offset: float | None = None) -> str:
        start = self.start
        seconds = self.elapsed() if start is None else self.read() - start
        if offset:  # (adding 0.0 changes no time, nor its timestamp)
            seconds += offset
        elif seconds == self._last_seconds:  # many writes at one (virtual) instant
            return self._last_stamp
        # timestamp_at's common case, inlined (a pod's writes read the clock three times)
        micros = round(seconds * 1_000_000)
        if self._lo <= micros < self._hi:
            frac = micros - self._base
            stamp = f"{self._dotted}{_DIGITS[frac // 1000]}{_DIGITS[frac % 1000]}Z" if frac else self._whole
            self._last_seconds = seconds
            self._last_stamp = stamp
            return stamp
        return self.timestamp_at(seconds)

    def timestamp_at(self, seconds: float) -> str:
        """The timestamp of ``seconds`` after the start (:meth:`timestamp` of a time read)."""
        if seconds == self._last_seconds:  # many writes at one (virtual) instant
            return self._last_stamp
        # _format's common case: a time in the second formatted last, before year 9999's
        # end, with no carry from the epoch's microseconds
        micros = round(seconds * 1_000_000)
        if self._lo <= micros < self._hi:
            frac = micros - self._base
            stamp = f"{self._dotted}{_DIGITS[frac // 1000]}{_DIGITS[frac % 1000]}Z" if frac else self._whole
        else:
            stamp = self._format(seconds)
        self._last_seconds = seconds
        self._last_stamp = stamp
        return stamp

    def _format(self, seconds: float) -> str:
        # RFC 3339 ends at year 9999: a later time (now + a grace period of billions of
        # seconds) is that last second, never an overflow
        if seconds >= self._last_second:
            return _LAST_TIME.strftime("%Y-%m-%dT%H:%M:%SZ")
        micros = round(seconds * 1_000_000)
        whole, frac = divmod(micros, 1_000_000)
        if whole != self._second:  # the formatted second, kept: many writes share one
            t = self.epoch + timedelta(microseconds=whole * 1_000_000)
            self._second, self._prefix = whole, t.strftime("%Y-%m-%dT%H:%M:%S")
            self._dotted, self._whole = f"{self._prefix}.", f"{self._prefix}Z"
            self._epoch_micros = t.microsecond
            # the fast path's range: this second's times whose fraction does not carry, when
            # the whole second is before RFC 3339's last (then every time in it is)
            self._lo = whole * 1_000_000
            self._hi = self._lo + 1_000_000 - t.microsecond if whole + 1 <= self._last_second else self._lo
            self._base = self._lo - t.microsecond
        frac += self._epoch_micros
        if frac >= 1_000_000:  # an epoch with microseconds: carry into the next second
            t = self.epoch + timedelta(microseconds=micros)
            return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if t.microsecond else "%Y-%m-%dT%H:%M:%SZ")
        return f"{self._prefix}.{frac:06d}Z" if frac else f"{self._prefix}Z"

    def wall_clock(self) -> float:
        return self.epoch.timestamp() + self.elapsed()


class Faults:
    """Fault injection for tests: failed or slow writes, dropped watches.

    ``verb`` is one of ``bind``, ``delete_pod``, ``patch_pod_status``, ``patch_pod_annotations``,
    ``record_event``, ``update_persistent_volume``, ``update_persistent_volume_claim``,
    ``update_resource_claim``, ``update_resource_claim_status``, ``delete_resource_claim``.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._failures: dict[str, deque[BaseException]] = {v: deque() for v in VERBS}
        self._delays: dict[str, float] = {}
        self._armed: frozenset[str] = frozenset()
        """The verbs with a failure to take or a delay: for any other, ``_enter`` does nothing
        (a hot verb skips the call)."""

    def fail_next(
        self, verb: str, exc: BaseException | type[BaseException], times: int = 1
    ) -> None:
        """Make the next ``times`` calls of ``verb`` raise ``exc`` (an instance or a class)
        instead of acting."""
        self._check(verb)
        if isinstance(exc, type):
            exc = exc(f"injected {verb} failure")
        self._failures[verb].extend([exc] * times)
        self._rearm()

    def delay(self, verb: str, seconds: float) -> None:
        """Make every later call of ``verb`` sleep ``seconds`` (virtual) before it acts;
        ``0`` removes the delay."""
        self._check(verb)
        if seconds > 0:
            self._delays[verb] = seconds
        else:
            self._delays.pop(verb, None)
        self._rearm()

    def drop_watches(self) -> None:
        """End every current watch: its iterator raises UnavailableError at once.  A new
        ``watch()`` lists everything again, then SYNCED."""
        self._store.drop_watches()

    @property
    def delayed(self) -> bool:
        """Whether some verb has a delay."""
        return bool(self._delays)

    def clear(self) -> None:
        """Forget every pending failure and delay."""
        for q in self._failures.values():
            q.clear()
        self._delays.clear()
        self._rearm()

    def _rearm(self) -> None:
        """Recompute ``_armed`` (after every change of the failures or the delays)."""
        self._armed = frozenset(v for v, q in self._failures.items() if q) | frozenset(self._delays)

    async def _enter(self, verb: str) -> None:
        """Called first by each verb: take its failure (if any), sleep its delay, then raise.
        Without either the verb runs to its end without yielding (as client-go's fake clientset
        does): a write then costs no trip through the event loop."""
        q = self._failures[verb]
        exc = None
        if q:
            exc = q.popleft()
            if not q:
                self._rearm()
        seconds = self._delays.get(verb, 0)
        if seconds:
            await anyio.sleep(seconds)
        elif exc is not None:
            await anyio.lowlevel.checkpoint()
        if exc is not None:
            raise exc

    @staticmethod
    def _check(verb: str) -> None:
        if verb not in VERBS:
            raise ValueError(f"unknown verb {verb!r} (expected one of {', '.join(VERBS)})")


class Store:
    """Objects by kind, one resourceVersion sequence, watch fan-out, and the controllers' feed."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.closed = False
        self._objects: dict[str, dict[Key, Any]] = {kind: {} for kind in KINDS}
        # namespaced kinds: namespace → name → key (each namespace's objects in creation order;
        # a key, not the object: only a create writes it, an update of the object is in _objects)
        self._by_ns: dict[str, dict[str, dict[str, Key]]] = {
            kind: {} for kind, (_, namespaced, _) in KINDS.items() if namespaced
        }
        self._rv = 0
        # every live watch, weakly: an abandoned one is collected and forgotten at the next write
        self.watchers: list[weakref.ref[Watch]] = []
        # per kind and verb, the admit and observe steps of the controllers that have them
        # (overridden) and act on that verb: the default no-ops are not called on every write
        self._admit: dict[str, dict[str, list[Callable[[Change], None]]]] = {
            kind: {verb: [] for verb in VERBS_OF_CHANGES} for kind in KINDS
        }
        # those of the Pod creates' admit steps that act on a pod naming no node (most creates)
        self._admit_unbound: list[Callable[[Change], None]] = []
        self._controllers: list[Controller] = []  # in registration order
        self._unfollowed: set[tuple[Controller, str]] = set()  # (controller, kind): see follow
        self._observe: dict[str, dict[str, list[Callable[[Change], None]]]] = {}
        # per verb, those of the Pod observers that follow plain pods (a plain pod's writes)
        self._observe_plain: dict[str, list[Callable[[Change], None]]] = {}
        self._index_observers()
        self._backlog: deque[Change] = deque()  # changes written while one is being fed
        self._feeding = False

    def register(self, controller: Controller) -> None:
        """Feed ``controller`` every write of its kinds, after those registered before it."""
        cls = type(controller)
        admits = controller.kinds if controller.admits is None else controller.admits
        admit_verbs = controller.admit_verbs or VERBS_OF_CHANGES
        for kind in controller.kinds:
            if cls.admit is not Controller.admit and kind in admits:
                for verb in admit_verbs:
                    self._admit[kind_of(kind)][verb].append(controller.admit)
                if kind == "Pod" and "create" in admit_verbs and controller.admits_unbound_pods:
                    self._admit_unbound.append(controller.admit)
        self._controllers.append(controller)
        self._index_observers()

    def follow(self, controller: Controller, kind: str, on: bool) -> None:
        """Feed ``controller`` the writes of ``kind`` (one of its kinds) again, or stop: for a
        controller whose ``observe`` does nothing for them until it says so (the disruption
        controller, while it computes no PDB).  Its place in the order is kept."""
        if on:
            self._unfollowed.discard((controller, kind))
        else:
            self._unfollowed.add((controller, kind))
        self._index_observers()

    def _index_observers(self) -> None:
        """Rebuild, per kind and verb, the observers fed: each registered controller that
        overrides ``observe``, acts on the verb and follows the kind, in registration order."""
        observe: dict[str, dict[str, list[Callable[[Change], None]]]] = {
            kind: {verb: [] for verb in VERBS_OF_CHANGES} for kind in KINDS
        }
        plain: dict[str, list[Callable[[Change], None]]] = {verb: [] for verb in VERBS_OF_CHANGES}
        for controller in self._controllers:
            if type(controller).observe is Controller.observe:
                continue
            for kind in controller.kinds:
                if (controller, kind) in self._unfollowed:
                    continue
                for verb in controller.observe_verbs or VERBS_OF_CHANGES:
                    observe[kind_of(kind)][verb].append(controller.observe)
                    if kind == "Pod" and controller.follows_plain_pods:
                        plain[verb].append(controller.observe)
        # new lists: a feed going through the old ones ends as it began
        self._observe, self._observe_plain = observe, plain

    def _observers(self, change: Change) -> list[Callable[[Change], None]]:
        """The observers ``change`` goes to, now: a plain pod's write (not its removal) goes to
        those that follow plain pods only."""
        if change.type != "DELETED" and change.kind == "Pod" and plain_pod(change.obj):
            return self._observe_plain[change.verb]
        return self._observe[change.kind][change.verb]

    # --- reads -----------------------------------------------------------------------------

    def key(self, kind: str, namespace: str, name: str) -> Key:
        return ((namespace or "default") if KINDS[kind][1] else "", name)

    def get(self, kind: str, key: Key) -> Any | None:
        """The stored object (read-only), or None."""
        return self._objects[kind].get(key)

    def objects(self, kind: str) -> dict[Key, Any]:
        """Every stored object of ``kind`` by key, in creation order (read-only: do not change
        the dict)."""
        return self._objects[kind]

    def in_namespace(self, kind: str, namespace: str) -> Iterator[Any]:
        """Every stored object of the namespaced ``kind`` in ``namespace``, in creation order."""
        return map(self._objects[kind].__getitem__, self._by_ns[kind].get(namespace, {}).values())

    @property
    def resource_version(self) -> int:
        return self._rv

    def next_resource_version(self) -> str:
        self._rv += 1
        return str(self._rv)

    # --- writes ----------------------------------------------------------------------------

    def create(self, obj: Any) -> Any:
        """Create a copy of ``obj``: system metadata, then the in-write steps; returns it."""
        cls = type(obj)
        kind = _KIND_OF_TYPE.get(cls) or kind_of(cls)
        _, namespaced, resource = KINDS[kind]
        decode = _DECODE_OF_TYPE.get(cls)
        obj = _copy(obj) if decode is None else decode(_encode(obj))
        meta = obj.metadata
        if not meta.name:
            raise ConfigError("name or generateName is required", field="metadata.name")
        if namespaced:
            if not meta.namespace:
                meta.namespace = "default"
        elif meta.namespace:
            meta.namespace = ""
        key = (meta.namespace, meta.name)
        if key in self._objects[kind]:
            raise ConflictError(f'{resource} "{meta.name}" already exists')
        if not meta.uid:
            meta.uid = uid_for(
                meta.namespace, meta.name if kind in ("Pod", "Node") else f"{kind}/{meta.name}"
            )
        stamp = ""
        if meta.creation_timestamp is None:
            meta.creation_timestamp = stamp = self.clock.timestamp()
        if not meta.generation:
            meta.generation = 1
        # a pod naming no node skips the admit steps that act on bound ones only
        admits = self._admit_unbound if kind == "Pod" and not obj.spec.node_name else self._admit[kind]["create"]
        self.put(kind, key, obj, "ADDED", "create", stamp, admits)
        return obj

    def update(self, obj: Any) -> Any:
        """Replace the stored object with a copy of ``obj`` (optimistic concurrency on a set
        resourceVersion; uid and creationTimestamp kept; generation bumped on a spec change)."""
        kind = _KIND_OF_TYPE.get(type(obj)) or kind_of(type(obj))
        _, namespaced, resource = KINDS[kind]
        obj = _copy(obj)
        meta = obj.metadata
        meta.namespace = (meta.namespace or "default") if namespaced else ""
        key = (meta.namespace, meta.name)
        old = self._objects[kind].get(key)
        if old is None:
            raise NotFoundError(f'{resource} "{meta.name}" not found')
        if meta.resource_version and meta.resource_version != old.metadata.resource_version:
            raise ConflictError(
                f'Operation cannot be fulfilled on {resource} "{meta.name}": the object has been '
                "modified; please apply your changes to the latest version and try again"
            )
        meta.uid = meta.uid or old.metadata.uid
        meta.creation_timestamp = meta.creation_timestamp or old.metadata.creation_timestamp
        meta.generation = old.metadata.generation
        if getattr(obj, "spec", None) != getattr(old, "spec", None):
            meta.generation += 1
        self.put(kind, key, obj, "MODIFIED", "update")
        return obj

    def put(
        self,
        kind: str,
        key: Key,
        obj: Any,
        type_: WatchEventType,
        verb: Verb,
        stamp: str = "",
        admits: list[Callable[[Change], None]] | None = None,
    ) -> None:
        """Write ``obj`` (a new object, owned by the store from now on) at ``key``: the in-write
        steps, commit with the next resourceVersion, watchers, then the controllers' feed.
        ``stamp``: the write's time, when the caller read the clock for it (``Change.stamp``).
        ``admits``: the in-write steps, when the caller chose them (``create``), else those of
        the kind and verb."""
        objects = self._objects[kind]
        # Change(...) without its Python-level __new__ (two writes a pod)
        old = objects.get(key)
        change = _new_tuple(Change, (type_, kind, key, obj, old, verb, stamp))
        if admits is None:
            admits = self._admit[kind][verb]
        for admit in admits:
            admit(change)
        self._rv += 1
        obj.metadata.resource_version = str(self._rv)
        objects[key] = obj
        if old is None:  # a new key: into its namespace's index (a rewrite keeps its place)
            by_ns = self._by_ns.get(kind)
            if by_ns is not None:
                in_ns = by_ns.get(key[0])
                if in_ns is None:
                    in_ns = by_ns[key[0]] = {}
                in_ns[key[1]] = key
        # WatchEvent(type_, obj): the same object, without the frozen dataclass's __init__
        event: Any = _WatchEventSlots()
        event.type = type_
        event.obj = obj
        event.__class__ = WatchEvent
        self._emit(event)
        if self._feeding:  # fed after the change being fed, to its observers then
            self._backlog.append(change)
            return
        # _observers(change), inlined (two writes a pod; put never writes a DELETED): a plain
        # pod's write goes to the observers that follow plain pods only
        md = obj.metadata
        if (
            kind == "Pod"
            and not (md.owner_references or md.annotations or obj.spec.resource_claims)
            and obj.status.extended_resource_claim_status is None
        ):
            observers = self._observe_plain[verb]
        else:
            observers = self._observe[kind][verb]
        if observers:  # (else there is nothing to feed)
            self._feed(change, observers)

    def remove(self, kind: str, key: Key) -> None:
        """Remove the object at ``key`` at once (DELETED)."""
        old = self._objects[kind].pop(key)
        if kind in self._by_ns:
            in_ns = self._by_ns[kind][key[0]]
            del in_ns[key[1]]
            if not in_ns:
                del self._by_ns[kind][key[0]]
        self._rv += 1
        gone = replace(old, metadata=replace(old.metadata, resource_version=str(self._rv)))
        self._emit(WatchEvent("DELETED", gone))
        change = Change("DELETED", kind, key, gone, old, "delete")
        if self._feeding:
            self._backlog.append(change)
        else:
            self._feed(change, self._observe[kind]["delete"])

    def _feed(self, change: Change, observers: list[Callable[[Change], None]]) -> None:
        """Feed ``change`` to ``observers`` (``_observers(change)``: put and remove call it when
        no change is being fed), then every change written meanwhile, in order."""
        self._feeding = True
        try:
            for observe in observers:
                observe(change)
            backlog = self._backlog
            while backlog:
                ch = backlog.popleft()
                for observe in self._observers(ch):
                    observe(ch)
        finally:
            self._feeding = False
            self._backlog.clear()

    # --- watch fan-out ---------------------------------------------------------------------

    def watch(self) -> Watch:
        """A new watch: every object as ADDED (kind by kind, in ``KINDS`` order), SYNCED, then
        every write."""
        listing = [
            WatchEvent("ADDED", obj) for objs in self._objects.values() for obj in objs.values()
        ]
        listing.append(WatchEvent("SYNCED"))
        watch = Watch(listing)
        if self.closed:
            watch._end()
        else:
            self.watchers.append(weakref.ref(watch))
        return watch

    def _emit(self, event: WatchEvent) -> None:
        gone = False
        for ref in self.watchers:
            watch = ref()
            if watch is None or watch._ended:
                gone = True
            else:  # the delivery: queued, the waiting iterator woken, on_push told
                watch._queue.append(event)
                wakeup = watch._wakeup
                if wakeup is not None:
                    watch._set(wakeup)
                    watch._wakeup = None
                if watch.on_push is not None:
                    watch.on_push()
        if gone:
            self._forget_ended()

    def _forget_ended(self) -> None:
        self.watchers = [r for r in self.watchers if (w := r()) is not None and not w._ended]

    def drop_watches(self) -> None:
        """End every watch as dropped (their iterators raise UnavailableError)."""
        for ref in self.watchers:
            if (watch := ref()) is not None:
                watch._end(dropped=True)
        self.watchers.clear()

    def close(self) -> None:
        """End every watch after its queued events; later watches end at once."""
        self.closed = True
        for ref in self.watchers:
            if (watch := ref()) is not None:
                watch._end()
        self.watchers.clear()
