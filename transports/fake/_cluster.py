"""The in-memory fake cluster: an API server, a kubelet and a disruption controller in one object.

Model::

    create/update/delete_object (the test or the simulator, as an admin)
    bind / patch_pod_status / delete_pod / record_event (the scheduler, as a Transport)
            │  admission (namespace, uid, creationTimestamp, priority)
            ▼
    store: kind → {(namespace, name): object}     resourceVersion += 1 on every write
            │  one WatchEvent per write, fanned out to every watcher's unbounded queue
            ▼
    watch() ─► ADDED × every object (PriorityClasses, Nodes, PDBs, PodGroups, Pods) ─► SYNCED ─► …

A pod's life, as the kubelet emulation plays it::

    Pending ──bind──► Running ──delete_pod──► terminating ──grace period──► (DELETED)
       │                        (deletionTimestamp = now + grace; MODIFIED)
       └──delete_pod──► (DELETED at once: an unbound pod has nothing to stop)

After every pod or PDB write the disruption-controller emulation recomputes the status of each
PDB that was created without one and emits MODIFIED when it changed.

Objects in the store and in watch events are shared, never mutated: a write builds a new object
(``msgspec.structs.replace`` of the changed parts).  Treat what ``get_pod``, ``pods()`` or a
watch event gives you as read-only; change the cluster with ``update()``.

Time is ``anyio.current_time()`` only, so the whole cluster runs in virtual time.
"""

from __future__ import annotations

import builtins
import heapq
import math
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup
from msgspec.structs import replace

from kubesched._errors import ConfigError, ConflictError, NotFoundError, UnavailableError
from kubesched._labels import selector_matches
from kubesched._objects import (
    Binding,
    Deployment,
    Job,
    ReplicaSet,
    Event,
    Node,
    Pod,
    PodCondition,
    PodDisruptionBudget,
    PodDisruptionBudgetStatus,
    PodGroup,
    PriorityClass,
)
from kubesched._objects import copy as _copy
from kubesched._transport import Transport, WatchEvent, WatchEventType
from kubesched.testing import uid_for

from ._controllers import Controllers

__all__ = ["EventRecord", "FakeCluster", "Faults", "match_label_selector"]

DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"

# kind → (struct, namespaced, resource name used in API error messages); in watch-listing order
_KINDS: dict[str, tuple[type[Any], bool, str]] = {
    "PriorityClass": (PriorityClass, False, "priorityclasses.scheduling.k8s.io"),
    "Node": (Node, False, "nodes"),
    "PodDisruptionBudget": (PodDisruptionBudget, True, "poddisruptionbudgets.policy"),
    "PodGroup": (PodGroup, True, "podgroups.scheduling.x-k8s.io"),
    "Pod": (Pod, True, "pods"),
    "Job": (Job, True, "jobs.batch"),
    "Deployment": (Deployment, True, "deployments.apps"),
    "ReplicaSet": (ReplicaSet, True, "replicasets.apps"),
}

# The two classes every API server creates at start-up; admission resolves them even when the
# cluster was not given them (they are not listed by watch()).
_LAST_TIME = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
_SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}

_VERBS = ("bind", "delete_pod", "patch_pod_status", "patch_pod_annotations", "record_event")

_Key = tuple[str, str]


def _kind_of(kind: str | type[Any]) -> str:
    name = kind if isinstance(kind, str) else getattr(kind, "__name__", "")
    if name not in _KINDS:
        raise ValueError(f"unknown kind {kind!r} (expected one of {', '.join(_KINDS)})")
    return name


match_label_selector = selector_matches
"""Whether ``labels`` match a metav1.LabelSelector (``None`` matches nothing, ``{}`` all)."""


def _scaled(value: int | str, total: int, *, what: str) -> int:
    """``intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)``."""
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.endswith("%"):
        try:
            pct = int(value[:-1])
        except ValueError:
            pass
        else:
            return math.ceil(pct * total / 100)
    raise ValueError(f"invalid {what} {value!r}: an integer or a percentage")


def _pdb_member(pdb: PodDisruptionBudget, pod: Pod | None) -> bool | None:
    """None if ``pod`` is not one of the pods ``pdb`` expects, else whether it is healthy."""
    if pod is None or pod.metadata.deletion_timestamp is not None:
        return None
    if not match_label_selector(pdb.spec.selector, pod.metadata.labels):
        return None
    return bool(pod.status.phase == "Running")


def _pdb_status(pdb: PodDisruptionBudget, members: dict[str, bool]) -> PodDisruptionBudgetStatus:
    """The disruption controller's status for ``pdb``; ``members``: expected pod → healthy."""
    expected = len(members)
    healthy = sum(members.values())
    spec = pdb.spec
    try:
        if spec.max_unavailable is not None:
            unavailable = _scaled(spec.max_unavailable, expected, what="maxUnavailable")
            desired = max(0, expected - unavailable)
        elif spec.min_available is not None:
            desired = _scaled(spec.min_available, expected, what="minAvailable")
        else:
            desired = 0
        allowed = max(0, healthy - desired)
    except ValueError:
        # the controller's fail-safe: no disruption allowed
        desired, allowed = 0, 0
    return PodDisruptionBudgetStatus(
        observed_generation=pdb.metadata.generation,
        disrupted_pods={},
        disruptions_allowed=allowed,
        current_healthy=healthy,
        desired_healthy=desired,
        expected_pods=expected,
    )


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One recorded Event: ``time`` in seconds since the cluster started, ``object`` as
    ``namespace/name`` of what the event is about."""

    time: float
    type: str
    reason: str
    object: str
    message: str


class Faults:
    """Fault injection for tests: failed or slow writes, dropped watches.

    ``verb`` is one of ``bind``, ``delete_pod``, ``patch_pod_status``, ``record_event``.
    """

    def __init__(self, cluster: FakeCluster) -> None:
        self._cluster = cluster
        self._failures: dict[str, deque[BaseException]] = {v: deque() for v in _VERBS}
        self._delays: dict[str, float] = {}

    def fail_next(
        self, verb: str, exc: BaseException | type[BaseException], times: int = 1
    ) -> None:
        """Make the next ``times`` calls of ``verb`` raise ``exc`` (an instance or a class)
        instead of acting."""
        self._check(verb)
        if isinstance(exc, type):
            exc = exc(f"injected {verb} failure")
        self._failures[verb].extend([exc] * times)

    def delay(self, verb: str, seconds: float) -> None:
        """Make every later call of ``verb`` sleep ``seconds`` (virtual) before it acts;
        ``0`` removes the delay."""
        self._check(verb)
        if seconds > 0:
            self._delays[verb] = seconds
        else:
            self._delays.pop(verb, None)

    def drop_watches(self) -> None:
        """End every current watch: its iterator raises UnavailableError at once.  A new
        ``watch()`` lists everything again, then SYNCED."""
        self._cluster._drop_watches()

    def clear(self) -> None:
        """Forget every pending failure and delay."""
        for q in self._failures.values():
            q.clear()
        self._delays.clear()

    async def _enter(self, verb: str) -> None:
        """Called first by each verb: take its failure (if any), sleep its delay, then raise."""
        q = self._failures[verb]
        exc = q.popleft() if q else None
        seconds = self._delays.get(verb, 0)
        if seconds:
            await anyio.sleep(seconds)
        else:
            await anyio.lowlevel.checkpoint()
        if exc is not None:
            raise exc

    @staticmethod
    def _check(verb: str) -> None:
        if verb not in _VERBS:
            raise ValueError(f"unknown verb {verb!r} (expected one of {', '.join(_VERBS)})")


class _Watch:
    """One watcher's iterator over its own unbounded queue (it starts with the listing and SYNCED).

    A deque and an anyio.Event rather than a memory object stream: an abandoned watch is then
    just garbage (the cluster holds it weakly), with no stream left unclosed.
    """

    def __init__(self, events: Iterable[WatchEvent]) -> None:
        self._queue: deque[WatchEvent] = deque(events)
        self._wakeup: anyio.Event | None = None
        # called (synchronously) for every event delivered to this watch
        self.on_push: Callable[[], None] | None = None
        self._ended = False
        self._dropped = False

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> WatchEvent:
        await anyio.lowlevel.checkpoint()
        while True:
            if self._dropped:
                self._queue.clear()
                raise UnavailableError("watch connection dropped (injected fault)")
            if self._queue:
                return self._queue.popleft()
            if self._ended:
                raise StopAsyncIteration
            self._wakeup = anyio.Event()
            await self._wakeup.wait()

    def get_nowait(self) -> WatchEvent | None:
        """The next delivered event without waiting, or None.

        The scheduler drains delivered events before each scheduling cycle, so a change made at
        one virtual instant is seen by every cycle that runs at that instant, whichever task
        the event loop happens to run first.
        """
        if self._dropped or not self._queue:
            return None
        return self._queue.popleft()

    def pending(self) -> bool:
        """Events delivered but not yet taken."""
        return bool(self._queue) and not self._dropped

    async def aclose(self) -> None:
        """Stop watching: the iterator ends at once."""
        self._end()
        self._queue.clear()

    def _push(self, event: WatchEvent) -> None:
        self._queue.append(event)
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None
        if self.on_push is not None:
            self.on_push()

    def _end(self, *, dropped: bool = False) -> None:
        self._ended = True
        self._dropped = self._dropped or dropped
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None


@dataclass(order=True, slots=True)
class _Termination:
    deadline: float
    seq: int
    key: _Key
    uid: str


class FakeCluster(Transport):
    """An in-memory Kubernetes cluster, in virtual time.  Use as ``async with FakeCluster() as c``.

    ``epoch`` is the wall-clock time of the moment the cluster is entered; timestamps written into
    objects are ``epoch`` plus the anyio time elapsed since then.  ``default_grace_seconds`` is
    the termination grace period of a pod without ``spec.terminationGracePeriodSeconds``.
    ``clear_nominated_node_name_on_binding`` mirrors the API server's
    ClearingNominatedNodeNameAfterBinding feature gate (beta and on since 1.35).
    """

    def __init__(
        self,
        *,
        epoch: str = "2024-01-01T00:00:00Z",
        default_grace_seconds: int = 30,
        clear_nominated_node_name_on_binding: bool = True,
        kubelet_timers: bool = True,
        seed: int = 0,
    ) -> None:
        """``kubelet_timers=False``: terminations happen only when ``run_due_terminations`` is
        called (a deterministic simulation drives every timed event from one loop)."""
        self.kubelet_timers = kubelet_timers
        try:
            parsed = datetime.fromisoformat(epoch.replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(f"invalid RFC 3339 time {epoch!r}", field="epoch") from None
        if parsed.tzinfo is None:
            raise ConfigError(f"invalid RFC 3339 time {epoch!r}: no time zone", field="epoch")
        self._epoch = parsed.astimezone(UTC)
        self.default_grace_seconds = default_grace_seconds
        self.clear_nominated_node_name_on_binding = clear_nominated_node_name_on_binding
        self.events: list[EventRecord] = []
        """Every recorded Event, in call order."""
        self.faults = Faults(self)
        """Fault injection (see :class:`Faults`)."""
        self._store: dict[str, dict[_Key, Any]] = {kind: {} for kind in _KINDS}
        self._pods_by_ns: dict[str, dict[str, Pod]] = {}
        # PDBs whose status the cluster computes → their expected pods (name → healthy)
        self._computed_pdbs: dict[_Key, dict[str, bool]] = {}
        self._rv = 0
        # every live watch, weakly: an abandoned one is collected and forgotten at the next write
        self._watchers: list[weakref.ref[_Watch]] = []
        self._start: float | None = None
        self._tg: TaskGroup | None = None
        self._closed = False
        self._terminating: dict[_Key, _Termination] = {}
        self._termination_heap: list[_Termination] = []
        self._termination_seq = 0
        self._kubelet_wake: anyio.Event | None = None
        self._kubelet_scope = anyio.CancelScope()
        # pods' durations and the Job / ReplicaSet / Deployment controllers (``seed``: the
        # random parts of generated names)
        self.controllers = Controllers(self, seed=seed)
        self._deleted_nodes: set[str] = set()
        self.controllers.on_wake = self._wake_kubelet

    # --- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        if self._tg is not None or self._closed:
            raise RuntimeError("a FakeCluster can be entered only once")
        self._start = anyio.current_time()
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        if self.kubelet_timers:
            tg.start_soon(self._kubelet)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
        if self._tg is not None:
            await self._tg.__aexit__(exc_type, exc, tb)

    async def aclose(self) -> None:
        """End every watch (after its queued events) and stop the termination timers."""
        self._closed = True
        for ref in self._watchers:
            if (watch := ref()) is not None:
                watch._end()
        self._watchers.clear()
        self._kubelet_scope.cancel()

    # --- time ------------------------------------------------------------------------------

    def elapsed(self) -> float:
        """Seconds (anyio time) since the cluster was entered."""
        if self._start is None:
            self._start = anyio.current_time()
        return anyio.current_time() - self._start

    def timestamp(self, offset: float | None = None) -> str:
        """RFC 3339 UTC time of now (+ ``offset`` seconds): ``…T00:00:30Z``, or with
        microseconds when not a whole second (``…T00:00:30.500000Z``)."""
        seconds = self.elapsed() + (offset or 0.0)
        # RFC 3339 ends at year 9999: a later time (now + a grace period of billions of
        # seconds) is that last second, never an overflow
        if seconds >= (_LAST_TIME - self._epoch).total_seconds():
            return _LAST_TIME.strftime("%Y-%m-%dT%H:%M:%SZ")
        micros = round(seconds * 1_000_000)
        t = self._epoch + timedelta(microseconds=micros)
        if t.microsecond:
            return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")

    def wall_clock(self) -> float:
        """The cluster's wall clock, in Unix seconds: ``epoch`` plus the elapsed loop time (the
        scheduler's injected wall clock, consistent with :meth:`timestamp`)."""
        return self._epoch.timestamp() + self.elapsed()

    # --- reads -----------------------------------------------------------------------------

    def get(self, kind: str | type[Any], namespace: str, name: str) -> Any | None:
        """The stored object (read-only), or None.  ``namespace`` is ignored for cluster-scoped
        kinds."""
        k = _kind_of(kind)
        return self._store[k].get(self._key(k, namespace, name))

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        """The stored pod (read-only), or None."""
        pod: Pod | None = self._store["Pod"].get((namespace, name))
        return pod

    def list(self, kind: str | type[Any]) -> list[Any]:
        """Every stored object of ``kind``, in creation order (read-only)."""
        return list(self._store[_kind_of(kind)].values())

    def pods(self) -> builtins.list[Pod]:
        """Every pod, in creation order (read-only)."""
        return self.list("Pod")

    def nodes(self) -> builtins.list[Node]:
        """Every node, in creation order (read-only)."""
        return self.list("Node")

    @property
    def resource_version(self) -> str:
        """The resourceVersion of the latest write."""
        return str(self._rv)

    def next_resource_version(self) -> str:
        """Take the next resourceVersion for a write kept outside this store (the API server's
        Events, Leases and Namespaces), so every kind shares one sequence, as in etcd."""
        self._rv += 1
        return str(self._rv)

    # --- admin writes ----------------------------------------------------------------------

    def create(self, obj: Any) -> Any:
        """Create a copy of ``obj`` (admission applied); returns the stored object.

        ConflictError if it exists; ConfigError for a pod naming an unknown PriorityClass.
        """
        kind = _kind_of(type(obj))
        _, namespaced, resource = _KINDS[kind]
        obj = _copy(obj)
        meta = obj.metadata
        if not meta.name:
            raise ConfigError("name or generateName is required", field="metadata.name")
        if namespaced:
            meta.namespace = meta.namespace or "default"
        else:
            meta.namespace = ""
        key = (meta.namespace, meta.name)
        if key in self._store[kind]:
            raise ConflictError(f'{resource} "{meta.name}" already exists')
        if kind == "Pod":
            self._admit_pod(obj)
        if not meta.uid:
            meta.uid = uid_for(
                meta.namespace, meta.name if kind in ("Pod", "Node") else f"{kind}/{meta.name}"
            )
        if meta.creation_timestamp is None:
            meta.creation_timestamp = self.timestamp()
        meta.generation = meta.generation or 1
        if kind == "PodDisruptionBudget":
            if obj.status is None:
                obj.status = self._track_pdb(key, obj)
            else:
                self._computed_pdbs.pop(key, None)
        self._put(kind, key, obj, "ADDED")
        if kind == "Pod":
            self._sync_pdbs(key, obj)
        return obj

    def update(self, obj: Any) -> Any:
        """Replace the stored object with a copy of ``obj``; returns the stored object.

        NotFoundError if missing; ConflictError if ``metadata.resourceVersion`` is set and stale.
        uid and creationTimestamp are kept from the stored object when ``obj`` has none.
        """
        kind = _kind_of(type(obj))
        _, namespaced, resource = _KINDS[kind]
        obj = _copy(obj)
        meta = obj.metadata
        meta.namespace = (meta.namespace or "default") if namespaced else ""
        key = (meta.namespace, meta.name)
        old = self._store[kind].get(key)
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
        if kind == "PodDisruptionBudget" and (key in self._computed_pdbs or obj.status is None):
            obj.status = self._track_pdb(key, obj)
        self._put(kind, key, obj, "MODIFIED")
        if kind == "Pod":
            self._sync_pdbs(key, obj)
        return obj

    def delete_object(self, kind: str | type[Any], namespace: str, name: str) -> None:
        """Remove an object at once (for a pod: a forced deletion, no grace period)."""
        k = _kind_of(kind)
        key = self._key(k, namespace, name)
        if key not in self._store[k]:
            raise NotFoundError(f'{_KINDS[k][2]} "{name}" not found')
        self._remove(k, key)

    # --- the Transport verbs ---------------------------------------------------------------

    def watch(self) -> _Watch:
        """Every object as ADDED (PriorityClasses, Nodes, PDBs, PodGroups, Pods, each in creation
        order), then SYNCED, then every change.  Ends when the cluster is closed; raises
        UnavailableError when dropped by ``faults.drop_watches()``."""
        listing = [
            WatchEvent("ADDED", obj) for objs in self._store.values() for obj in objs.values()
        ]
        listing.append(WatchEvent("SYNCED"))
        watch = _Watch(listing)
        if self._closed:
            watch._end()
        else:
            self._watchers.append(weakref.ref(watch))
        return watch

    async def bind(self, binding: Binding) -> None:
        """Bind the pod; the kubelet starts it at once (one MODIFIED: nodeName, PodScheduled
        True, phase Running, startTime)."""
        await self.faults._enter("bind")
        self._check_open()
        namespace = binding.metadata.namespace or "default"
        name = binding.metadata.name
        pod = self._pod_or_404(namespace, name)
        if binding.metadata.uid and binding.metadata.uid != pod.metadata.uid:
            raise ConflictError(
                f"Precondition failed: UID in precondition: {binding.metadata.uid}, "
                f"UID in object meta: {pod.metadata.uid}"
            )
        if pod.metadata.deletion_timestamp is not None:
            raise ConflictError(f"pod {name} is being deleted, cannot be assigned to a host")
        if pod.spec.node_name:
            raise ConflictError(f'pod {name} is already assigned to node "{pod.spec.node_name}"')
        if binding.target.name in self._deleted_nodes and binding.target.name not in self._store["Node"]:
            # the kubelet of a node that is gone never runs it: PodGC removes it
            self._remove("Pod", (namespace, name))
            return
        now = self.timestamp()
        conditions = _set_condition(
            pod.status.conditions,
            PodCondition(type="PodScheduled", status="True"),
            now,
        )
        status = replace(pod.status, conditions=conditions, phase="Running", start_time=now)
        if self.clear_nominated_node_name_on_binding:
            status = replace(status, nominated_node_name="")
        new = replace(
            pod,
            metadata=replace(pod.metadata),
            spec=replace(pod.spec, node_name=binding.target.name),
            status=status,
        )
        self._put("Pod", (namespace, name), new, "MODIFIED")
        self._sync_pdbs((namespace, name), new)

    async def patch_pod_status(
        self,
        namespace: str,
        name: str,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        """Strategic-merge the pod's status: ``condition`` replaces the one of its type
        (lastTransitionTime = now when the status changes), ``nominated_node_name`` is set
        ("" clears it).  No event when nothing changes."""
        await self.faults._enter("patch_pod_status")
        self._check_open()
        pod = self._pod_or_404(namespace, name)
        status = pod.status
        if condition is not None:
            now = self.timestamp()
            status = replace(status, conditions=_set_condition(status.conditions, condition, now))
        if nominated_node_name is not None:
            status = replace(status, nominated_node_name=nominated_node_name)
        if status == pod.status:
            return
        new = replace(pod, metadata=replace(pod.metadata), status=status)
        self._put("Pod", (namespace, name), new, "MODIFIED")

    async def patch_pod_annotations(
        self, namespace: str, name: str, annotations: Mapping[str, str]
    ) -> None:
        """Merge ``annotations`` into the pod's metadata (one MODIFIED; none if nothing changes)."""
        await self.faults._enter("patch_pod_annotations")
        self._check_open()
        pod = self._pod_or_404(namespace, name)
        merged = {**(pod.metadata.annotations or {}), **annotations}
        if merged == (pod.metadata.annotations or {}):
            return
        new = replace(pod, metadata=replace(pod.metadata, annotations=merged))
        self._put("Pod", (namespace, name), new, "MODIFIED")

    async def delete_pod(
        self, namespace: str, name: str, *, uid: str | None = None, grace_seconds: int | None = None
    ) -> None:
        """Delete the pod: an unbound pod goes at once; a bound one gets a deletionTimestamp
        (MODIFIED) and goes after its grace period (DELETED).  Deleting a terminating pod does
        nothing.  ``grace_seconds`` overrides the pod's own period (DeleteOptions'
        gracePeriodSeconds; 0 removes it at once)."""
        await self.faults._enter("delete_pod")
        self._check_open()
        pod = self._pod_or_404(namespace, name)
        if uid is not None and uid != pod.metadata.uid:
            raise ConflictError(
                f"Precondition failed: UID in precondition: {uid}, "
                f"UID in object meta: {pod.metadata.uid}"
            )
        if pod.metadata.deletion_timestamp is not None:
            return
        self._delete_pod(pod, grace_seconds)

    def _delete_pod(self, pod: Pod, grace_seconds: int | None) -> None:
        namespace, name = pod.metadata.namespace, pod.metadata.name
        key = (namespace, name)
        grace = grace_seconds
        if grace is None:
            grace = pod.spec.termination_grace_period_seconds
        if grace is None:
            grace = self.default_grace_seconds
        if not pod.spec.node_name or pod.status.phase in ("Succeeded", "Failed") or grace <= 0:
            self._remove("Pod", key)
            return
        if self._tg is None:
            raise RuntimeError("FakeCluster is not running: use 'async with FakeCluster()'")
        meta = replace(
            pod.metadata,
            deletion_timestamp=self.timestamp(grace),
            deletion_grace_period_seconds=grace,
        )
        self._put("Pod", key, replace(pod, metadata=meta), "MODIFIED")
        self._termination_seq += 1
        t = _Termination(anyio.current_time() + grace, self._termination_seq, key, pod.metadata.uid)
        self._terminating[key] = t
        heapq.heappush(self._termination_heap, t)
        self._wake_kubelet()
        self._sync_pdbs(key, self._store["Pod"][key])

    def _wake_kubelet(self) -> None:
        if self._kubelet_wake is not None:
            self._kubelet_wake.set()

    # --- what the controllers use (transports/fake/_controllers.py) -------------------------

    def record(self, kind: str, reason: str, obj: Any, message: str, type_: str = "Normal") -> None:
        """Record an Event a controller emits about ``obj``."""
        md = obj.metadata
        what = f"{md.namespace}/{md.name}" if md.namespace else md.name
        self.events.append(EventRecord(self.elapsed(), type_, reason, what, message))

    def delete_now(self, kind: str, namespace: str, name: str, *, graceful: bool) -> None:
        """Delete an object now, a pod with its grace period when ``graceful`` (no fault
        injection: a controller or the simulation acting, not the scheduler).  A Node's pods
        go with it, as the pod garbage collector removes the pods of a node that is gone."""
        k = _kind_of(kind)
        key = self._key(k, namespace, name)
        obj = self._store[k].get(key)
        if obj is None:
            return
        if k == "Pod" and graceful:
            if obj.metadata.deletion_timestamp is None:
                self._delete_pod(obj, None)
            return
        self._remove(k, key)
        if k == "Node":
            # the pod garbage collector: the pods bound to a deleted node go with it (forced)
            for pod in [p for p in self._store["Pod"].values() if p.spec.node_name == name]:
                self._remove("Pod", (pod.metadata.namespace, pod.metadata.name))

    def set_pod_phase(self, pod: Pod, phase: str) -> None:
        """The kubelet reports the pod's containers ended: its phase becomes ``phase``."""
        key = (pod.metadata.namespace, pod.metadata.name)
        new = replace(pod, metadata=replace(pod.metadata), status=replace(pod.status, phase=phase))
        self._put("Pod", key, new, "MODIFIED")
        self._sync_pdbs(key, new)

    async def record_event(self, event: Event) -> None:
        """Append the event to ``events``."""
        await self.faults._enter("record_event")
        self._check_open()
        ref = event.regarding
        obj = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
        self.events.append(EventRecord(self.elapsed(), event.type, event.reason, obj, event.note))

    # --- idle accounting -------------------------------------------------------------------

    def pending_terminations(self) -> int:
        """How many pods are waiting out their grace period."""
        return len(self._terminating)

    def next_termination_time(self) -> float | None:
        """The anyio time (``anyio.current_time()`` clock) at which the next terminating pod
        goes, or None."""
        heap = self._termination_heap
        while heap and self._terminating.get(heap[0].key) is not heap[0]:
            heapq.heappop(heap)
        return heap[0].deadline if heap else None

    # --- internals -------------------------------------------------------------------------

    def _key(self, kind: str, namespace: str, name: str) -> _Key:
        return ((namespace or "default") if _KINDS[kind][1] else "", name)

    def _check_open(self) -> None:
        if self._closed:
            raise UnavailableError("the fake cluster is closed")

    def _pod_or_404(self, namespace: str, name: str) -> Pod:
        pod: Pod | None = self._store["Pod"].get((namespace, name))
        if pod is None:
            raise NotFoundError(f'pods "{name}" not found')
        return pod

    def _admit_pod(self, pod: Pod) -> None:
        """The Priority admission plugin, and the kubelet for a pod created already bound."""
        spec = pod.spec
        cls: PriorityClass | None = None
        value: int | None = None
        if spec.priority_class_name:
            cls = self._store["PriorityClass"].get(("", spec.priority_class_name))
            if cls is not None:
                value = cls.value
            elif spec.priority_class_name in _SYSTEM_PRIORITY_CLASSES:
                value = _SYSTEM_PRIORITY_CLASSES[spec.priority_class_name]
            elif spec.priority is None:
                raise ConfigError(
                    f"no PriorityClass with name {spec.priority_class_name} was found",
                    field="spec.priorityClassName",
                )
        else:
            for pc in self._store["PriorityClass"].values():
                if pc.global_default:
                    cls = pc
                    value = pc.value
                    spec.priority_class_name = pc.metadata.name
                    break
        if spec.priority is None:
            spec.priority = value if value is not None else 0
        if spec.preemption_policy is None:
            policy = cls.preemption_policy if cls is not None else None
            spec.preemption_policy = policy or DEFAULT_PREEMPTION_POLICY
        if spec.node_name:
            now = self.timestamp()
            pod.status.phase = pod.status.phase or "Running"
            pod.status.start_time = pod.status.start_time or now
            if not any(c.type == "PodScheduled" for c in pod.status.conditions):
                pod.status.conditions = [
                    *pod.status.conditions,
                    PodCondition(type="PodScheduled", status="True", last_transition_time=now),
                ]
        else:
            pod.status.phase = pod.status.phase or "Pending"
            if spec.scheduling_gates and not any(c.type == "PodScheduled" for c in pod.status.conditions):
                # the API server's applySchedulingGatedCondition
                pod.status.conditions = [
                    *pod.status.conditions,
                    PodCondition(
                        type="PodScheduled",
                        status="False",
                        reason="SchedulingGated",
                        message="Scheduling is blocked due to non-empty scheduling gates",
                        last_transition_time=self.timestamp(),
                    ),
                ]

    def _put(self, kind: str, key: _Key, obj: Any, type_: WatchEventType) -> None:
        self._rv += 1
        obj.metadata.resource_version = str(self._rv)
        self._store[kind][key] = obj
        if kind == "Pod":
            self._pods_by_ns.setdefault(key[0], {})[key[1]] = obj
        self._emit(WatchEvent(type_, obj))
        self.controllers.observe(type_, obj)

    def _remove(self, kind: str, key: _Key) -> None:
        old = self._store[kind].pop(key)
        if kind == "Pod":
            ns_pods = self._pods_by_ns[key[0]]
            del ns_pods[key[1]]
            if not ns_pods:
                del self._pods_by_ns[key[0]]
            self._terminating.pop(key, None)
        elif kind == "PodDisruptionBudget":
            self._computed_pdbs.pop(key, None)
        self._rv += 1
        gone = replace(old, metadata=replace(old.metadata, resource_version=str(self._rv)))
        self._emit(WatchEvent("DELETED", gone))
        if kind == "Pod":
            self._sync_pdbs(key, None)
        elif kind == "Node":
            self._deleted_nodes.add(key[1])
        self.controllers.observe("DELETED", gone)

    def _emit(self, event: WatchEvent) -> None:
        gone = False
        for ref in self._watchers:
            watch = ref()
            if watch is None or watch._ended:
                gone = True
            else:
                watch._push(event)
        if gone:
            self._watchers = [r for r in self._watchers if (w := r()) is not None and not w._ended]

    def _drop_watches(self) -> None:
        for ref in self._watchers:
            if (watch := ref()) is not None:
                watch._end(dropped=True)
        self._watchers.clear()

    def _track_pdb(self, key: _Key, pdb: PodDisruptionBudget) -> PodDisruptionBudgetStatus:
        """Start (or restart) computing ``pdb``'s status; returns it."""
        members = {}
        for pod in self._pods_by_ns.get(key[0], {}).values():
            healthy = _pdb_member(pdb, pod)
            if healthy is not None:
                members[pod.metadata.name] = healthy
        self._computed_pdbs[key] = members
        return _pdb_status(pdb, members)

    def _sync_pdbs(self, pod_key: _Key, pod: Pod | None) -> None:
        """The disruption controller, after a write of the pod at ``pod_key`` (None: removed):
        update each computed PDB of its namespace that counts it, emitting MODIFIED on a change."""
        namespace, name = pod_key
        pdbs = self._store["PodDisruptionBudget"]
        for key, members in self._computed_pdbs.items():
            if key[0] != namespace:
                continue
            pdb = pdbs[key]
            healthy = _pdb_member(pdb, pod)
            if members.get(name) == healthy and (healthy is not None or name not in members):
                continue
            if healthy is None:
                del members[name]
            else:
                members[name] = healthy
            status = _pdb_status(pdb, members)
            if status != pdb.status:
                new = replace(pdb, metadata=replace(pdb.metadata), status=status)
                self._put("PodDisruptionBudget", key, new, "MODIFIED")

    def run_due_terminations(self) -> None:
        """Remove every terminating pod whose grace period is over, in deadline order.

        The kubelet task calls it at each deadline; a simulation's scheduler also calls it
        before each scheduling cycle, so a termination due at an instant is always seen by the
        cycles of that instant, whichever task the event loop runs first.
        """
        heap = self._termination_heap
        now = anyio.current_time()
        while heap and heap[0].deadline <= now + 1e-6:
            t = heapq.heappop(heap)
            if self._terminating.get(t.key) is not t:
                continue  # already gone (forced deletion)
            pod = self._store["Pod"].get(t.key)
            if pod is not None and pod.metadata.uid == t.uid:
                self._remove("Pod", t.key)
            else:
                self._terminating.pop(t.key, None)

    async def _kubelet(self) -> None:
        """Remove each terminating pod when its grace period is over, in deadline order."""
        heap = self._termination_heap
        with self._kubelet_scope:
            while True:
                self.run_due_terminations()
                self.controllers.run_due()
                self._kubelet_wake = wake = anyio.Event()
                deadline = heap[0].deadline if heap else math.inf
                finish = self.controllers.next_due()
                if finish is not None:
                    deadline = min(deadline, finish)
                with anyio.CancelScope(deadline=deadline):
                    await wake.wait()


def _set_condition(
    conditions: list[PodCondition], condition: PodCondition, now: str
) -> list[PodCondition]:
    """``conditions`` with ``condition`` merged in by type (podutil.UpdatePodCondition)."""
    out: list[PodCondition] = []
    found = False
    for c in conditions:
        if c.type != condition.type:
            out.append(c)
            continue
        found = True
        ltt = condition.last_transition_time
        if ltt is None:
            ltt = now if c.status != condition.status else c.last_transition_time
        out.append(replace(condition, last_transition_time=ltt))
    if not found:
        out.append(replace(condition, last_transition_time=condition.last_transition_time or now))
    return out
