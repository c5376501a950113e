"""The plugin handle (upstream ``framework.Handle``): the one door through which a plugin, and the
preemption package, reach the scheduler that runs them.

Three types::

    Handle           the Protocol plugins are written and type-checked against: every member a
                     plugin may use, nothing else (a typo in a plugin fails mypy)
    HandleParts      what a Scheduler lends its profiles, built once before them (upstream's
                     frameworkOptions: WithSnapshotSharedLister, WithPodNominator, WithClientSet,
                     WithPodActivator, WithExtenders, WithMetricsRecorder...); ``detached()``
                     for a Framework built without a scheduler (tests, tools)
    FrameworkHandle  the Handle a Framework gives its plugins' factories: the parts, the
                     profile's waiting pods and its plugin runners (upstream's frameworkImpl is
                     its own Handle; ours is a separate object so that the runtime's classes
                     stay small)

Every member is a plain attribute or a bound method, read as cheaply as the attributes the
Framework carried before.  Nothing is set on a handle after it is built.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

import anyio

from kubesched._transport import Transport
from kubesched.cache._cache import Snapshot
from kubesched.cache._clusterstate import ClusterState
from kubesched.config._versions import DEFAULT_VERSION, Version
from kubesched.metrics._metrics import Metrics
from kubesched.queue._nominator import Nominator

if TYPE_CHECKING:
    import numpy as np

    from kubesched.api._dra import ResourceClaim
    from kubesched.api._objects import (
        Binding,
        Event,
        PersistentVolume,
        PersistentVolumeClaim,
        Pod,
        PodCondition,
        PodExtendedResourceClaimStatus,
    )
    from kubesched.metrics._metrics import MetricsRecorder
    from kubesched.runtime._cyclestate import CycleState, PreFilterResult
    from kubesched.runtime._nodeinfo import NodeInfo, PodInfo, RowOverlay
    from kubesched.runtime._status import Status
    from kubesched.runtime._waiting_pods import WaitingPod, WaitingPods


class Extender(Protocol):
    """A scheduler extender as the preemption package calls it (upstream ``framework.Extender``;
    :class:`kubesched.runtime._extender.HTTPExtender` is one)."""

    @property
    def name(self) -> str:
        """``Name()``: how logs and errors name the extender."""

    def is_ignorable(self) -> bool:
        """``IsIgnorable()``: its errors skip it rather than fail the pod."""

    def supports_preemption(self) -> bool:
        """``SupportsPreemption()``: it has a preempt verb."""

    def is_interested(self, pod: Pod) -> bool:
        """``IsInterested(pod)``: the pod asks for a resource it manages (or it manages none)."""

    def process_preemption(
        self, pod: Pod, victims: Mapping[str, Any], snapshot: Snapshot
    ) -> Awaitable[Mapping[str, Any]] | Mapping[str, Any]:
        """``ProcessPreemption``: the candidates ``{node: Candidate}`` it keeps (or an
        awaitable of them)."""


class Handle(Protocol):
    """What a plugin may use of the scheduler that runs it (upstream ``framework.Handle``).

    A plugin's factory receives it, as upstream's ``New(ctx, args, handle)``:
    ``def new(args: Mapping[str, Any] | None, handle: Handle) -> MyPlugin``.  Keep it as
    ``self.handle``; read its members when the plugin runs (a plugin is built before the
    scheduler starts).  mypy checks a plugin against this Protocol: a member not listed here
    does not exist.
    """

    # --- the cluster as the cycle sees it ------------------------------------------------------
    @property
    def snapshot(self) -> Snapshot:
        """``SnapshotSharedLister()``: the nodes and their pods as this scheduling cycle sees them
        (NodeInfos by name and in order, their numpy columns), updated before every cycle."""

    @property
    def cluster(self) -> ClusterState:
        """``SharedInformerFactory()``'s listers: the informers' tables of pods (by uid, by
        namespace/name, by label), nodes, PodDisruptionBudgets, PriorityClasses, PodGroups,
        ReplicaSets, StatefulSets, the storage kinds (PV, PVC, StorageClass, CSINode, CSIDriver,
        CSIStorageCapacity), the DRA kinds while DynamicResourceAllocation is on
        (``get_resource_claim``, ``list_resource_slices``, ``get_device_class``,
        ``list_device_taint_rules``, ...) and namespace labels.  Read only: the informer writes
        them."""

    @property
    def nominator(self) -> Nominator:
        """``PodNominator``: the pods nominated to nodes by preemption
        (``for_node(name)``, ``node_of(uid)``, ``add`` / ``delete``)."""

    # --- waiting pods (Permit) -------------------------------------------------------------------
    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """``GetWaitingPod``: the pod of ``uid`` if it waits at this profile's Permit."""

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]:
        """``IterateOverWaitingPods``: this profile's waiting pods, in the order they started
        waiting (a copy: allowing or rejecting one while iterating is safe)."""

    def reject_waiting_pod(self, uid: str) -> bool:
        """``RejectWaitingPod``: reject the waiting pod of ``uid``; False if none waits."""

    # --- plugin runners (PluginsRunner, for preemption's dry run) -------------------------------
    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """``RunPreFilterPlugins``: the profile's PreFilter for ``pod`` into ``state`` (a fresh
        one), as a cycle runs it: (merged result, first failure, plugins that rejected).  Not in
        upstream's Handle: kubesched's gang preemption prepares every member of a gang with it."""

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        """Whether an AddPod or RemovePod PreFilter extension runs in this cycle."""

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """``RunPreFilterExtensionAddPod``: tell the PreFilter plugins ``pod_to_add`` now runs on
        ``node_info`` (their cycle state changes); an Error status if one fails."""

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """``RunPreFilterExtensionRemovePod``: as the AddPod one, for a pod taken off the node."""

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pod_priority: int | None = None
    ) -> Status | None:
        """``RunFilterPluginsWithNominatedPods``: the profile's Filter of one node, run with the
        pods nominated there at ``pod_priority`` or above and without them; the first failing
        status, or None."""

    def run_filter_plugins_with_nominated_pods_rows(
        self,
        state: CycleState,
        pod: Pod,
        rows: np.ndarray,
        pod_priority: int | None = None,
        *,
        base: RowOverlay | None = None,
    ) -> Mapping[int, Status]:
        """The same two-pass Filter for the snapshot's nodes ``rows`` in one batch (each node
        changed by ``base`` when given): {position in ``rows``: failing status}."""

    # --- the API -------------------------------------------------------------------------------
    @property
    def client(self) -> Transport:
        """``ClientSet()``: the scheduler's transport (bind, patch a pod's status, delete a pod,
        update a PV or PVC, record an event)."""

    def record_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> Awaitable[None]:
        """``EventRecorder().Eventf``: record an event about ``pod`` (``type_`` Normal or
        Warning); a failure to write it is logged, never raised."""

    def instant_writes(self) -> bool:
        """Whether every write of :attr:`client` completes within its call (the fake cluster
        without injected delays): a caller gains nothing by making them concurrently."""

    # --- configuration, time, randomness ------------------------------------------------------
    @property
    def feature_gates(self) -> Mapping[str, bool]:
        """The scheduler's feature gates (``SchedulerQueueingHints``, ``SchedulerAsyncPreemption``
        ...), known when the plugin is built; a gate not listed is at its default."""

    @property
    def emulated_version(self) -> Version:
        """The Kubernetes minor the scheduler emulates (``--emulated-version``): the plugins
        whose behaviour or texts changed between minors read it once, when they are built."""

    def now(self) -> float:
        """The scheduler's clock (anyio's: virtual time in a simulation), in seconds."""

    def wall_clock(self) -> float:
        """The cluster's wall clock in Unix seconds (the transport's, in a simulation the fake
        cluster's epoch plus virtual time; 0.0 when the transport has none)."""

    @property
    def rng(self) -> random.Random:
        """The scheduler's seeded random source (preemption's candidate offset): draw from it
        only, so that a simulation's seed fixes every decision."""

    @property
    def deterministic(self) -> bool:
        """Whether the scheduler runs a simulation's deterministic loop: work that could run
        concurrently runs one after another, in a fixed order."""

    # --- the queue and background work ----------------------------------------------------------
    def activate(self, pods: Sequence[Pod]) -> None:
        """``PodActivator.Activate``: move ``pods`` from the unschedulable pods or backoffQ to
        activeQ (pods not queued there are ignored)."""

    def spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run ``fn(*args)`` as a background task of the scheduler's task group (upstream starts
        a goroutine); an exception is logged.  Only while the scheduler runs."""

    def park_until(self, when: float) -> Awaitable[None]:
        """Sleep until :meth:`now` reaches ``when``, inside a binding cycle that waits on the
        cluster (VolumeBinding's PreBind poll), without holding up a simulation's loop."""

    # --- extenders and metrics ------------------------------------------------------------------
    @property
    def extenders(self) -> Sequence[Extender]:
        """``Extenders()``: the scheduler's extenders, in configuration order."""

    @property
    def metrics(self) -> Metrics:
        """The counters every scheduler keeps (preemption attempts, preemptions and their
        victims: upstream's ``preemption_attempts_total`` and ``preemption_victims``)."""

    @property
    def metrics_recorder(self) -> MetricsRecorder | None:
        """``MetricsRecorder()``: upstream's metrics while a recorder is attached, else None."""


class HandleParts:
    """What a Scheduler lends each of its profiles' handles, built once before the profiles
    (upstream's ``frameworkOptions``).  See :class:`Handle` for each member."""

    def __init__(
        self,
        *,
        snapshot: Snapshot,
        cluster: ClusterState,
        nominator: Nominator,
        client: Transport,
        record_event: Callable[[Pod, str, str, str, str], Awaitable[None]],
        instant_writes: Callable[[], bool],
        feature_gates: Mapping[str, bool],
        now: Callable[[], float],
        wall_clock: Callable[[], float],
        rng: random.Random,
        deterministic: bool,
        activate: Callable[[Sequence[Pod]], None],
        spawn: Callable[..., None],
        park_until: Callable[[float], Awaitable[None]],
        extenders: Sequence[Extender],
        metrics: Metrics,
        emulated_version: Version = DEFAULT_VERSION,
    ) -> None:
        self.snapshot = snapshot
        self.cluster = cluster
        self.nominator = nominator
        self.client = client
        self.record_event = record_event
        self.instant_writes = instant_writes
        self.feature_gates = feature_gates
        self.now = now
        self.wall_clock = wall_clock
        self.rng = rng
        self.deterministic = deterministic
        self.activate = activate
        self.spawn = spawn
        self.park_until = park_until
        self.extenders = extenders
        self.metrics = metrics
        self.emulated_version = emulated_version

    @classmethod
    def detached(
        cls,
        feature_gates: Mapping[str, bool] | None = None,
        *,
        seed: int = 0,
        emulated_version: Version = DEFAULT_VERSION,
    ) -> HandleParts:
        """The parts of a Framework built without a scheduler: an empty snapshot, cluster and
        nominator, anyio's clock; what only a running scheduler has (the client, events,
        activation, background tasks) raises a RuntimeError saying so."""
        return cls(
            snapshot=Snapshot(),
            cluster=ClusterState(),
            nominator=Nominator(),
            client=UnattachedTransport(),
            record_event=_unattached_record_event,
            instant_writes=lambda: False,
            feature_gates=dict(feature_gates or {}),
            now=anyio.current_time,
            wall_clock=lambda: 0.0,
            rng=random.Random(seed),
            deterministic=False,
            activate=_unattached_activate,
            spawn=_unattached_spawn,
            park_until=anyio.sleep_until,
            extenders=(),
            metrics=Metrics(),
            emulated_version=emulated_version,
        )


def _unattached(what: str) -> NoReturn:
    raise RuntimeError(
        f"{what}: this plugin's framework is not attached to a scheduler (build it with "
        "kubesched.Scheduler, or give it a kubesched.testing.FakeHandle's parts)"
    )


async def _unattached_record_event(pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
    _unattached(f"handle.record_event({reason!r}) for pod {pod.key}")


def _unattached_activate(pods: Sequence[Pod]) -> None:
    _unattached("handle.activate()")


def _unattached_spawn(fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
    _unattached(f"handle.spawn({getattr(fn, '__name__', fn)})")


class UnattachedTransport(Transport):
    """The client of a Framework built without a scheduler: every call raises a RuntimeError."""

    def watch(self) -> NoReturn:
        _unattached("handle.client.watch()")

    async def bind(self, binding: Binding) -> None:
        _unattached("handle.client.bind()")

    async def patch_pod_status(
        self,
        namespace: str,
        name: str,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        _unattached("handle.client.patch_pod_status()")

    async def delete_pod(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        _unattached("handle.client.delete_pod()")

    async def record_event(self, event: Event) -> None:
        _unattached("handle.client.record_event()")

    async def patch_pod_annotations(self, namespace: str, name: str, annotations: Mapping[str, str]) -> None:
        _unattached("handle.client.patch_pod_annotations()")

    async def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        _unattached("handle.client.update_persistent_volume()")

    async def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        _unattached("handle.client.update_persistent_volume_claim()")

    async def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        _unattached("handle.client.update_resource_claim()")

    async def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        _unattached("handle.client.update_resource_claim_status()")

    async def delete_resource_claim(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        _unattached("handle.client.delete_resource_claim()")

    async def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        _unattached("handle.client.create_resource_claim()")

    async def patch_pod_extended_resource_claim_status(
        self, namespace: str, name: str, status: PodExtendedResourceClaimStatus
    ) -> None:
        _unattached("handle.client.patch_pod_extended_resource_claim_status()")


class PluginsRunner(Protocol):
    """The runners a :class:`FrameworkHandle` lends from its Framework (upstream ``PluginsRunner``)."""

    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]: ...
    def has_pre_filter_extensions(self, state: CycleState) -> bool: ...
    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...
    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...
    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pod_priority: int | None = None
    ) -> Status | None: ...
    def run_filter_plugins_with_nominated_pods_rows(
        self,
        state: CycleState,
        pod: Pod,
        rows: np.ndarray,
        pod_priority: int | None = None,
        *,
        base: RowOverlay | None = None,
    ) -> Mapping[int, Status]: ...


class FrameworkHandle:
    """The :class:`Handle` a Framework gives its plugins: the scheduler's ``parts``, the
    profile's ``waiting`` pods, and the profile's plugin ``runner`` (None: a handle with no
    framework behind it, whose runners raise a RuntimeError).  Every member is copied or bound
    once, here."""

    def __init__(self, parts: HandleParts, waiting: WaitingPods, runner: PluginsRunner | None) -> None:
        self.parts = parts
        self.snapshot = parts.snapshot
        self.cluster = parts.cluster
        self.nominator = parts.nominator
        self.client = parts.client
        self.record_event = parts.record_event
        self.instant_writes = parts.instant_writes
        self.feature_gates = parts.feature_gates
        self.emulated_version = parts.emulated_version
        self.now = parts.now
        self.wall_clock = parts.wall_clock
        self.rng = parts.rng
        self.deterministic = parts.deterministic
        self.activate = parts.activate
        self.spawn = parts.spawn
        self.park_until = parts.park_until
        self.extenders = parts.extenders
        self.metrics = parts.metrics
        self.get_waiting_pod = waiting.get
        self.iterate_over_waiting_pods = waiting.iterate
        self.reject_waiting_pod = waiting.reject
        self.runner: PluginsRunner = runner if runner is not None else _NoRunner()
        self.run_pre_filter_plugins = self.runner.run_pre_filter_plugins
        self.has_pre_filter_extensions = self.runner.has_pre_filter_extensions
        self.run_pre_filter_extension_add_pod = self.runner.run_pre_filter_extension_add_pod
        self.run_pre_filter_extension_remove_pod = self.runner.run_pre_filter_extension_remove_pod
        self.run_filter_plugins_with_nominated_pods = self.runner.run_filter_plugins_with_nominated_pods
        self.run_filter_plugins_with_nominated_pods_rows = self.runner.run_filter_plugins_with_nominated_pods_rows

    @property
    def metrics_recorder(self) -> MetricsRecorder | None:
        """The recorder attached to :attr:`metrics`, if any."""
        return self.metrics.recorder


class _NoRunner:
    """The runners of a handle with no framework behind it: each raises a RuntimeError."""

    def _none(self, what: str) -> NoReturn:
        raise RuntimeError(f"handle.{what}: this handle has no framework (build one with kubesched.testing.framework_for)")

    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        self._none("run_pre_filter_plugins()")

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        self._none("has_pre_filter_extensions()")

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        self._none("run_pre_filter_extension_add_pod()")

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        self._none("run_pre_filter_extension_remove_pod()")

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pod_priority: int | None = None
    ) -> Status | None:
        self._none("run_filter_plugins_with_nominated_pods()")

    def run_filter_plugins_with_nominated_pods_rows(
        self,
        state: CycleState,
        pod: Pod,
        rows: np.ndarray,
        pod_priority: int | None = None,
        *,
        base: RowOverlay | None = None,
    ) -> Mapping[int, Status]:
        self._none("run_filter_plugins_with_nominated_pods_rows()")


__all__ = ["Extender", "FrameworkHandle", "Handle", "HandleParts", "PluginsRunner", "UnattachedTransport"]
