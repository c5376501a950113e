"""The in-memory fake cluster: a store plus controllers, behind one Transport facade.

Model (built like kube-apiserver + kube-controller-manager)::

    create / update / delete_object        the test or the simulator, as an admin
    bind / patch_pod_status / delete_pod   the scheduler, as a Transport (faults injected here)
                      │
                      ▼
    Store (_store.py) ─────────────────────────────────────────────────────────────────
      admit    in-write steps, in order: Admission → Kubelet → Disruption (same write)
      commit   kind → {(namespace, name): object}; resourceVersion += 1
      fan-out  one WatchEvent per write to every watch():  ADDED × all, SYNCED, changes…
      feed     each committed Change to the controllers of its kind, in order
    ───────────┬──────────────────────────────────┬────────────────────────────────────
               ▼                                  ▼
    Kubelet (_kubelet.py)               Disruption (_disruption.py)
      Pod: bound → Running (in-write)     Pod, PDB: expected pods per computed PDB
      graceful deletion → DELETED           → status (MODIFIED when it changes)
      after the grace period (timer task
      or a simulation's run_due_terminations)

Admission (``_admission.py``: priority, Pending, SchedulingGated) and the kubelet's start of a
bound pod are in-write steps, so a pod create and a binding are one event each, as they always
were.  A controller's own writes go back through the store and are fed to every controller
after the change being handled: controllers see changes in resourceVersion order.

The workload controllers (``_controllers.py``: pods' ``kubesched.io/duration``, Job,
ReplicaSet, Deployment), the PersistentVolume controller (``_pv_controller.py``, with the
external provisioners; the scheduler's ``update_persistent_volume(_claim)`` writes feed it) and
the StatefulSet controller (``_statefulset.py``) and the resourceclaim controller
(``_resourceclaims.py``) are registered last.  Adding a controller: a
module with a ``Controller`` subclass naming its ``kinds`` (a new kind is one row in ``_store.KINDS``),
reacting in ``observe`` through the store (``create``, ``put``, ``remove``, ``in_namespace``),
with timers in ``tasks()``; then one line in ``FakeCluster.__init__``, after the existing
controllers, since registration order is the order of every effect.

Objects in the store and in watch events are shared, never mutated: a write builds a new object
(``msgspec.structs.replace`` of the changed parts).  Treat what ``get_pod``, ``pods()`` or a
watch event gives you as read-only; change the cluster with ``update()``.

Time is ``anyio.current_time()`` only, so the whole cluster runs in virtual time.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import anyio
from anyio.abc import TaskGroup
from msgspec.structs import replace

from kubesched import ConflictError, NotFoundError, Transport, UnavailableError
from kubesched.api import (
    Binding,
    Event,
    Node,
    ObjectReference,
    Pod,
    PodCondition,
    selector_matches,
)
from kubesched.clock import now as _now
from kubesched.clock import reader, running
from kubesched.transports._taskgroups import exit_task_group
from kubesched.transports.fake._podgroups import PodGroupStatusWrites, _set_condition

from ._admission import DEFAULT_PREEMPTION_POLICY as DEFAULT_PREEMPTION_POLICY
from ._admission import Admission
from ._controllers import MAX_PODS, Controllers
from ._deployments import Deployments
from ._disruption import Disruption
from ._kubelet import Kubelet, completed
from ._pv_controller import PersistentVolumes, VolumeWrites
from ._resourceclaims import ClaimWrites, ResourceClaims
from ._statefulset import StatefulSets
from ._store import KINDS, Clock, Controller, Faults, Store, kind_of
from ._watch import Watch


def _check_bindable(binding: Binding, pod: Pod) -> None:
    """The API server's checks of a binding: the uid precondition, a pod being deleted or
    already assigned (ConflictError)."""
    name = pod.metadata.name
    if binding.metadata.uid and binding.metadata.uid != pod.metadata.uid:
        raise ConflictError(
            f"Precondition failed: UID in precondition: {binding.metadata.uid}, "
            f"UID in object meta: {pod.metadata.uid}"
        )
    if pod.metadata.deletion_timestamp is not None:
        raise ConflictError(f"pod {name} is being deleted, cannot be assigned to a host")
    if pod.spec.node_name:
        raise ConflictError(f'pod {name} is already assigned to node "{pod.spec.node_name}"')

__all__ = ["EventRecord", "FakeCluster", "Faults", "match_label_selector"]

match_label_selector = selector_matches
"""Whether ``labels`` match a metav1.LabelSelector (``None`` matches nothing, ``{}`` all)."""


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One recorded Event: ``time`` in seconds since the cluster started, ``object`` as
    ``namespace/name`` of what the event is about."""

    time: float
    type: str
    reason: str
    object: str
    message: str
    # what an API server needs to serve it as an Event (not compared)
    regarding: ObjectReference | None = field(default=None, compare=False)
    """What the event is about, as an Event's ``regarding``."""
    source: str = field(default="", compare=False)
    """The component that recorded it: the Event's ``reportingController`` (a scheduler's
    ``default-scheduler``), or the controller's (``replicaset-controller``, ...)."""
    timestamp: str = field(default="", compare=False)
    """The wall-clock time of ``time`` (RFC 3339, as :meth:`FakeCluster.timestamp`)."""
    core: bool = field(default=False, compare=False)
    """Recorded as a core/v1 Event through client-go's tools/record (the controllers); else an
    events.k8s.io/v1 Event through tools/events (the scheduler's)."""


class _EventRecordSlots:
    """EventRecord's slots, writable: record_event builds a scheduler's record as one of these
    and then makes it an EventRecord (``__class__``; the same slots, so the same layout): one
    attribute store a field instead of the frozen dataclass's ``object.__setattr__`` calls (one
    event a pod)."""

    __slots__ = EventRecord.__slots__


# the component that records a controller's events (kube-controller-manager's names)
_CONTROLLER_COMPONENTS = {
    "Deployment": "deployment-controller",
    "Job": "job-controller",
    "PersistentVolume": "persistentvolume-controller",
    "PersistentVolumeClaim": "persistentvolume-controller",
    "ReplicaSet": "replicaset-controller",
    "StatefulSet": "statefulset-controller",
}


class FakeCluster(PodGroupStatusWrites, ClaimWrites, VolumeWrites, Transport):
    """An in-memory Kubernetes cluster, in virtual time.  Use as ``async with FakeCluster() as c``.

    ``epoch`` is the wall-clock time of the moment the cluster is entered; timestamps written into
    objects are ``epoch`` plus the anyio time elapsed since then.  ``default_grace_seconds`` is
    the termination grace period of a pod without ``spec.terminationGracePeriodSeconds``.
    ``clear_nominated_node_name_on_binding`` mirrors the API server's
    ClearingNominatedNodeNameAfterBinding feature gate (beta and on since 1.35).  The Job and
    ReplicaSet controllers create pods until the cluster holds ``max_pods`` (then each refused
    create is a Warning ``FailedCreate`` event), so one enormous workload cannot take all memory.
    ``provisioning_delay``: the virtual seconds a volume takes to provision (a StorageClass's
    ``kubesched.io/provisioning-delay`` annotation overrides it).  ``volume_attributes_class``:
    the controller-manager's VolumeAttributesClass gate for the PV controller's matching (None:
    a 1.30 controller; see :func:`kubesched.api.vac_matching`).
    """

    def __init__(
        self,
        *,
        epoch: str = "2024-01-01T00:00:00Z",
        default_grace_seconds: int = 30,
        clear_nominated_node_name_on_binding: bool = True,
        kubelet_timers: bool = True,
        seed: int = 0,
        max_pods: int = MAX_PODS,
        provisioning_delay: float = 0.0,
        readiness: bool | None = None,
        volume_attributes_class: bool | None = True,
    ) -> None:
        """``kubelet_timers=False``: terminations happen only when ``run_due_terminations`` is
        called (a deterministic simulation drives every timed event from one loop).
        ``readiness``: the kubelet reports pods Ready (``_kubelet``); by default if ``kubelet_timers``."""
        self.kubelet_timers = kubelet_timers
        self._clock = Clock(epoch)
        self.default_grace_seconds = default_grace_seconds
        self.clear_nominated_node_name_on_binding = clear_nominated_node_name_on_binding
        self.events: list[EventRecord] = []
        """Every recorded Event, in call order."""
        self._store = Store(self._clock)
        self._pods: dict[tuple[str, str], Pod] = self._store.objects("Pod")  # (the store's own dict)
        self.faults = Faults(self._store)
        """Fault injection (see :class:`Faults`)."""
        self._tg: TaskGroup | None = None
        self._clock_bound = running()  # kubesched.clock.now() reads the loop's clock while entered
        # the store's admission step and controllers; registration order is effect order
        self._kubelet = Kubelet(self._store, timers=kubelet_timers, readiness=kubelet_timers if readiness is None else readiness)
        self._controllers: list[Controller] = [
            Admission(self._store),
            self._kubelet,
            Disruption(self._store),
        ]
        # pods' durations, Jobs, ReplicaSets (``seed``: generated names); Deployments
        self.controllers = Controllers(self._store, self, seed=seed, timers=kubelet_timers, max_pods=max_pods)
        self.deployments = Deployments(self._store, self, timers=kubelet_timers)
        self.volumes = PersistentVolumes(
            self._store, self, delay=provisioning_delay, timers=kubelet_timers, vac_enabled=volume_attributes_class
        )
        self.statefulsets = StatefulSets(self._store, self, self.controllers)
        # DRA: claims from templates, reservedFor and allocations of consumers gone
        self.resource_claims = ResourceClaims(self._store, self._clock, self.controllers.rng)
        self._controllers += [self.controllers, self.deployments, self.volumes, self.statefulsets, self.resource_claims]
        for c in self._controllers:
            self._store.register(c)

    # --- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        if self._tg is not None or self._store.closed:
            raise RuntimeError("a FakeCluster can be entered only once")
        self._clock.start = _now()
        await self._clock_bound.__aenter__()
        self._clock.read = reader()  # the loop's clock, until the cluster is left
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        self._kubelet.timers = self.kubelet_timers
        self.controllers.timers = self.deployments.timers = self.volumes.timers = self.kubelet_timers
        for c in self._controllers:
            for task in c.tasks():
                tg.start_soon(task)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self.aclose()
            if self._tg is not None:  # what failed (the block, a controller) comes out as itself
                await exit_task_group(self._tg, exc_type, exc, tb)
        finally:
            self._clock.read = _now
            await self._clock_bound.__aexit__(None, None, None)

    async def aclose(self) -> None:
        """End every watch (after its queued events) and stop the termination timers."""
        self._store.close()
        for c in self._controllers:
            c.close()

    @property
    def instant_writes(self) -> bool:
        """Whether every write completes within its call (no injected delay): a caller gains
        nothing by running writes concurrently."""
        return not self.faults.delayed

    # --- time ------------------------------------------------------------------------------

    def elapsed(self) -> float:
        """Seconds (anyio time) since the cluster was entered."""
        return self._clock.elapsed()

    def timestamp(self, offset: float | None = None) -> str:
        """RFC 3339 UTC time of now (+ ``offset`` seconds): ``…T00:00:30Z``, or with
        microseconds when not a whole second (``…T00:00:30.500000Z``)."""
        return self._clock.timestamp(offset)

    def wall_clock(self) -> float:
        """The cluster's wall clock, in Unix seconds: ``epoch`` plus the elapsed loop time (the
        scheduler's injected wall clock, consistent with :meth:`timestamp`)."""
        return self._clock.wall_clock()

    # --- reads -----------------------------------------------------------------------------

    def get(self, kind: str | type[Any], namespace: str, name: str) -> Any | None:
        """The stored object (read-only), or None.  ``namespace`` is ignored for cluster-scoped
        kinds."""
        k = kind_of(kind)
        return self._store.get(k, self._store.key(k, namespace, name))

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        """The stored pod (read-only), or None."""
        return self._pods.get((namespace, name))  # (the store's own dict: no Store.get call)

    def list(self, kind: str | type[Any]) -> list[Any]:
        """Every stored object of ``kind``, in creation order (read-only)."""
        return list(self._store.objects(kind_of(kind)).values())

    def pods(self) -> builtins.list[Pod]:
        """Every pod, in creation order (read-only)."""
        return self.list("Pod")

    def nodes(self) -> builtins.list[Node]:
        """Every node, in creation order (read-only)."""
        return self.list("Node")

    @property
    def resource_version(self) -> str:
        """The resourceVersion of the latest write."""
        return str(self._store.resource_version)

    def next_resource_version(self) -> str:
        """Take the next resourceVersion for a write kept outside this store (the API server's
        Events, Leases and Namespaces), so every kind shares one sequence, as in etcd."""
        return self._store.next_resource_version()

    # --- admin writes ----------------------------------------------------------------------

    def create(self, obj: Any) -> Any:
        """Create a copy of ``obj`` (admission applied); returns the stored object.

        ConflictError if it exists; ConfigError for a pod naming an unknown PriorityClass.
        """
        return self._store.create(obj)

    def update(self, obj: Any) -> Any:
        """Replace the stored object with a copy of ``obj``; returns the stored object.

        NotFoundError if missing; ConflictError if ``metadata.resourceVersion`` is set and stale.
        uid and creationTimestamp are kept from the stored object when ``obj`` has none.
        """
        return self._store.update(obj)

    def delete_object(self, kind: str | type[Any], namespace: str, name: str) -> None:
        """Remove an object at once (for a pod: a forced deletion, no grace period)."""
        k = kind_of(kind)
        key = self._store.key(k, namespace, name)
        if self._store.get(k, key) is None:
            raise NotFoundError(f'{KINDS[k][2]} "{name}" not found')
        self._store.remove(k, key)

    # --- the Transport verbs ---------------------------------------------------------------

    def watch(self) -> Watch:
        """Every object as ADDED (PriorityClasses, Nodes, PDBs, PodGroups, Pods, each in creation
        order), then SYNCED, then every change.  Ends when the cluster is closed; raises
        UnavailableError when dropped by ``faults.drop_watches()``."""
        return self._store.watch()

    async def bind(self, binding: Binding) -> None:
        """Bind the pod; the kubelet starts it at once (one MODIFIED: nodeName, PodScheduled
        True, phase Running, startTime)."""
        if "bind" in self.faults._armed:
            await self.faults._enter("bind")
        store = self._store
        if store.closed:
            self._check_open()
        namespace = binding.metadata.namespace or "default"
        name = binding.metadata.name
        key = (namespace, name)
        pod = self._pods.get(key) or self._pod_or_404(namespace, name)  # (a Pod is true)
        uid = binding.metadata.uid
        if (uid and uid != pod.metadata.uid) or pod.metadata.deletion_timestamp is not None or pod.spec.node_name:
            _check_bindable(binding, pod)  # (raises the API server's conflict)
        target = binding.target.name
        if target in self.controllers.deleted_nodes and self.get("Node", "", target) is None:
            # bound to a node deleted meanwhile: the pod garbage collector removes it
            store.remove("Pod", key)
            return
        now = self._clock.timestamp()
        if pod.status.conditions:
            conditions = _set_condition(pod.status.conditions, PodCondition(type="PodScheduled", status="True"), now)
        else:  # _set_condition's result for a pod with no condition yet (most bindings)
            conditions = [PodCondition(type="PodScheduled", status="True", last_transition_time=now)]
        nominated = "" if self.clear_nominated_node_name_on_binding else pod.status.nominated_node_name
        # a status and a condition list of the write's own: the kubelet starts the pod in them
        status = replace(pod.status, conditions=conditions, nominated_node_name=nominated)
        # the spec copied without replace's __post_init__: a stored spec is defaulted already
        spec = pod.spec.__copy__()  # type: ignore[attr-defined]  # (msgspec.Struct's, not in its stubs)
        spec.node_name = target
        new = replace(pod, metadata=replace(pod.metadata), spec=spec, status=status)
        # the kubelet's in-write step makes it Running (phase, startTime), at the binding's time
        store.put("Pod", key, new, "MODIFIED", "bind", now)

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
        self._store.put("Pod", (namespace, name), new, "MODIFIED", "status")

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
        self._store.put("Pod", (namespace, name), new, "MODIFIED", "update")

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
        _begin_deletion(self, pod, grace_seconds)

    async def record_event(self, event: Event) -> None:
        """Append the event to ``events``."""
        if "record_event" in self.faults._armed:
            await self.faults._enter("record_event")
        if self._store.closed:
            self._check_open()
        ref = event.regarding
        obj = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
        clock = self._clock  # one read of the clock (elapsed()): the time and its timestamp agree
        t = clock.elapsed() if clock.start is None else clock.read() - clock.start
        # EventRecord(t, event.type, event.reason, obj, event.note, regarding=event.regarding,
        # source=event.reporting_controller, timestamp=...): the same object (see _EventRecordSlots)
        rec: Any = _EventRecordSlots()
        rec.time = t
        rec.type = event.type
        rec.reason = event.reason
        rec.object = obj
        rec.message = event.note
        rec.regarding = event.regarding
        rec.source = event.reporting_controller
        rec.timestamp = clock.timestamp_at(t)
        rec.core = False
        rec.__class__ = EventRecord
        self.events.append(rec)

    # --- what the workload controllers use (_controllers.py) ------------------------------

    def record(
        self, kind: str, reason: str, obj: Any, message: str, type_: str = "Normal", *, source: str = ""
    ) -> None:
        """Record an Event the controller of ``kind`` (or ``source``) emits about ``obj``."""
        md = obj.metadata
        what = f"{md.namespace}/{md.name}" if md.namespace else md.name
        ref = ObjectReference(
            api_version=obj.api_version, kind=obj.kind, namespace=md.namespace, name=md.name,
            uid=md.uid, resource_version=md.resource_version,
        )  # fmt: skip
        self.events.append(
            EventRecord(
                self.elapsed(), type_, reason, what, message,
                regarding=ref, source=source or _CONTROLLER_COMPONENTS.get(kind, ""),
                timestamp=self.timestamp(), core=True,
            )
        )  # fmt: skip

    def delete_now(self, kind: str, namespace: str, name: str, *, graceful: bool) -> None:
        """Delete an object now (a controller or the simulation acting: no fault injection), a
        pod with its grace period when ``graceful``.  A Node's pods go with it, as the pod
        garbage collector removes the pods of a node that is gone."""
        k = kind_of(kind)
        key = self._store.key(k, namespace, name)
        obj = self._store.get(k, key)
        if obj is None:
            return
        if k == "Pod" and graceful:
            if obj.metadata.deletion_timestamp is None:
                _begin_deletion(self, obj, None)
            return
        self._store.remove(k, key)
        if k == "Node":
            for pod in [p for p in self._store.objects("Pod").values() if p.spec.node_name == name]:
                self._store.remove("Pod", (pod.metadata.namespace, pod.metadata.name))

    def set_pod_phase(self, pod: Pod, phase: str) -> None:
        """The kubelet reports the pod's containers ended: its phase becomes ``phase``."""
        status = completed(pod.status, phase, self.timestamp()) if self._kubelet.readiness else replace(pod.status, phase=phase)
        new = replace(pod, metadata=replace(pod.metadata), status=status)
        self._store.put("Pod", (pod.metadata.namespace, pod.metadata.name), new, "MODIFIED", "status")

    # --- the kubelet's terminations (idle accounting; a simulation's wake source) ----------

    def pending_terminations(self) -> int:
        """How many pods are waiting out their grace period."""
        return self._kubelet.pending_terminations()

    def next_termination_time(self) -> float | None:
        """The anyio time (``anyio.current_time()`` clock) at which the next terminating pod
        goes, or None."""
        return self._kubelet.next_termination_time()

    def run_due_terminations(self) -> None:
        """Remove every terminating pod whose grace period is over, in deadline order.

        The kubelet task calls it at each deadline; a simulation's scheduler also calls it
        before each scheduling cycle, so a termination due at an instant is always seen by the
        cycles of that instant, whichever task the event loop runs first.
        """
        self._kubelet.run_due_terminations()

    # --- internals -------------------------------------------------------------------------

    @property
    def _watchers(self) -> builtins.list[Any]:
        """Every live watch (weak references), for tests."""
        return self._store.watchers

    def _check_open(self) -> None:
        if self._store.closed:
            raise UnavailableError("the fake cluster is closed")

    def _pod_or_404(self, namespace: str, name: str) -> Pod:
        pod: Pod | None = self._store.get("Pod", (namespace, name))
        if pod is None:
            raise NotFoundError(f'pods "{name}" not found')
        return pod


def _begin_deletion(cluster: FakeCluster, pod: Pod, grace_seconds: int | None) -> None:
    """A pod's deletion: at once when unbound, finished or with no grace period; else its
    ``deletionTimestamp`` (the kubelet, fed this change, removes it when the period is over)."""
    key = (pod.metadata.namespace, pod.metadata.name)
    grace = grace_seconds
    if grace is None:
        grace = pod.spec.termination_grace_period_seconds
    if grace is None:
        grace = cluster.default_grace_seconds
    if not pod.spec.node_name or pod.status.phase in ("Succeeded", "Failed") or grace <= 0:
        cluster._store.remove("Pod", key)
        return
    if cluster._tg is None:
        raise RuntimeError("FakeCluster is not running: use 'async with FakeCluster()'")
    meta = replace(pod.metadata, deletion_timestamp=cluster.timestamp(grace), deletion_grace_period_seconds=grace)
    cluster._store.put("Pod", key, replace(pod, metadata=meta), "MODIFIED", "delete")

