"""Helpers for tests and for plugin authors: object builders and a fake-cluster scheduler.

Builders read like kube-scheduler's ``st.MakePod()`` wrappers::

    pod = make_pod("p").priority(100).req(cpu="500m", memory="1Gi").obj()
    node = make_node("n1").capacity(cpu="4", memory="8Gi").label("zone", "a").obj()

For plugin authors: :func:`scheduler_for` runs a scheduler on a fake cluster in the current
(virtual-time) event loop, :meth:`SimCluster.settle` waits until it has nothing left to do, and
:func:`register_temporary_plugin` makes a plugin known by name for the duration of a block::

    async with scheduler_for(nodes, plugins={"Gate": Gate}, enable=["Gate"]) as sim:
        sim.create(make_pod("p").obj())
        await sim.settle()
        assert sim.placements() == {"p": "n1"}

A plugin's unit test builds it over a :class:`FakeHandle` (a ``kubesched.framework.Handle`` over
a fixed cluster that records events, activations and API writes), or runs a whole profile with
:func:`framework_for`::

    handle = FakeHandle([node], [pod], feature_gates={"SchedulerQueueingHints": False})
    plugin = MyPlugin(None, handle)

``pytest_plugins = ["kubesched.pytest_plugin"]`` in a conftest adds the fixtures (both anyio
backends in virtual time, ``temporary_plugin``).
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from kubesched._errors import UnavailableError, plain_exception
from kubesched._transport import Transport, WatchEvent
from kubesched.api._dra import ResourceClaim
from kubesched.api._objects import (
    Affinity,
    Binding,
    Container,
    ContainerPort,
    ContainerResourceClaim,
    Event,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodDisruptionBudget,
    PodDisruptionBudgetSpec,
    PodDisruptionBudgetStatus,
    PodGroup,
    PodResourceClaim,
    PodSchedulingGate,
    PodSpec,
    PodStatus,
    PreferredSchedulingTerm,
    ResourceRequirements,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from kubesched.api._objects import uid_for as uid_for
from kubesched.cache._cache import Cache, Snapshot
from kubesched.cache._clusterstate import ClusterState
from kubesched.config._config import SchedulerConfig
from kubesched.config._versions import DEFAULT_VERSION, Version, parse_version
from kubesched.metrics._metrics import Metrics
from kubesched.queue._nominator import Nominator
from kubesched.runtime._entrypoints import Factory
from kubesched.runtime._entrypoints import register_temporary_plugin as register_temporary_plugin
from kubesched.runtime._framework import Framework
from kubesched.runtime._handle import Extender, FrameworkHandle, HandleParts
from kubesched.runtime._waiting_pods import WaitingPods
from kubesched.scheduler._simcluster import SETTLE_POLL_SECONDS as SETTLE_POLL_SECONDS
from kubesched.scheduler._simcluster import SimCluster as SimCluster
from kubesched.scheduler._simcluster import scheduler_for as _scheduler_for
from kubesched.testing_dra import RecordingClaimCreates
from kubesched.testing_dra import SemVer as SemVer
from kubesched.testing_dra import make_claim as make_claim
from kubesched.testing_dra import make_claim_template as make_claim_template
from kubesched.testing_dra import make_device_class as make_device_class
from kubesched.testing_dra import make_slice as make_slice


@asynccontextmanager
async def scheduler_for(
    objects: Iterable[Any] = (),
    *,
    plugins: Mapping[str, Factory] | None = None,
    config: SchedulerConfig | Mapping[str, Any] | None = None,
    enable: Sequence[str | tuple[str, int]] = (),
    plugin_args: Mapping[str, Mapping[str, Any]] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    emulated_version: str | None = None,
    seed: int = 0,
    **cluster_options: Any,
) -> AsyncIterator[SimCluster]:
    """A fake cluster holding ``objects`` and a scheduler running on it, in the current loop.

    - ``plugins``: name → factory ``(args, handle) -> plugin``, added to the registry (beside
      the in-tree, entry-point and temporarily registered plugins; these win on a name clash).
    - ``config``: a :class:`~kubesched.SchedulerConfig` or a KubeSchedulerConfiguration
      document (a dict, validated like ``--config``); or, instead, ``enable``: plugin names (or
      ``(name, weight)``) added to the default profile's ``multiPoint``, with ``plugin_args``
      (name → args) as its ``pluginConfig``.
    - ``feature_gates``: e.g. ``{"SchedulerAsyncPreemption": False}``, over the defaults of
      ``emulated_version`` (``"1.32"``; default: the newest kubesched emulates).
    - ``cluster_options``: passed to ``FakeCluster`` (``default_grace_seconds=...``).

    The scheduler is running and its cache synced with ``objects`` when the block starts::

        async with scheduler_for([make_node("n1").obj()], plugins={"Gate": Gate}, enable=["Gate"]) as sim:
            sim.create(make_pod("p").obj())
            await sim.settle()
            assert sim.placements() == {"p": "n1"}

    A configuration or a profile that cannot be built raises its own error, not an
    ExceptionGroup: :class:`~kubesched.ConfigError` for bad plugin args or a plugin declaring
    ``async def`` a hook that must be a plain function, :class:`~kubesched.PluginError` for a
    profile that cannot be assembled (an unknown plugin).  An error in the block, or one that
    stops the scheduler, comes out as itself too (:func:`kubesched.plain_exception`).
    """
    failure: BaseException | None = None
    raised: BaseException | None = None  # by the block: itself, even an ExceptionGroup
    try:
        async with _scheduler_for(
            objects,
            plugins=plugins,
            config=config,
            enable=enable,
            plugin_args=plugin_args,
            feature_gates=feature_gates,
            emulated_version=emulated_version,
            seed=seed,
            **cluster_options,
        ) as sim:
            try:
                yield sim
            except BaseException as e:
                raised = e
                raise
    except BaseExceptionGroup as group:  # from the task group the scheduler runs in
        if (failure := plain_exception(group, keep=raised)) is None:
            raise
    if failure is not None:
        raise failure  # outside the handler: no group as its context


class PodBuilder:
    """A fluent Pod builder; ``obj()`` returns the Pod."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self._pod = Pod(
            metadata=ObjectMeta(name=name, namespace=namespace, uid=uid_for(namespace, name)),
            spec=PodSpec(),
            status=PodStatus(),
        )

    def obj(self) -> Pod:
        return self._pod

    def namespace(self, ns: str) -> PodBuilder:
        self._pod.metadata.namespace = ns
        self._pod.metadata.uid = uid_for(ns, self._pod.metadata.name)
        return self

    def uid(self, uid: str) -> PodBuilder:
        self._pod.metadata.uid = uid
        return self

    def priority(self, p: int) -> PodBuilder:
        self._pod.spec.priority = p
        return self

    def scheduler_name(self, name: str) -> PodBuilder:
        self._pod.spec.scheduler_name = name
        return self

    def label(self, k: str, v: str) -> PodBuilder:
        self._pod.metadata.labels = {**self._pod.metadata.labels, k: v}
        return self

    def labels(self, labels: dict[str, str]) -> PodBuilder:
        self._pod.metadata.labels = {**self._pod.metadata.labels, **labels}
        return self

    def annotation(self, k: str, v: str) -> PodBuilder:
        self._pod.metadata.annotations = {**self._pod.metadata.annotations, k: v}
        return self

    def creation_timestamp(self, ts: str) -> PodBuilder:
        self._pod.metadata.creation_timestamp = ts
        return self

    def node(self, name: str) -> PodBuilder:
        self._pod.spec.node_name = name
        return self

    def nominated_node(self, name: str) -> PodBuilder:
        self._pod.status.nominated_node_name = name
        return self

    def start_time(self, ts: str) -> PodBuilder:
        self._pod.status.start_time = ts
        return self

    def phase(self, phase: str) -> PodBuilder:
        self._pod.status.phase = phase
        return self

    def terminating(self, ts: str = "1970-01-01T00:00:01Z") -> PodBuilder:
        self._pod.metadata.deletion_timestamp = ts
        return self

    def condition(self, type: str, status: str, reason: str = "", message: str = "") -> PodBuilder:
        self._pod.status.conditions = [
            *self._pod.status.conditions,
            PodCondition(type=type, status=status, reason=reason, message=message),
        ]
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        self._pod.spec.preemption_policy = policy
        return self

    def container(self, image: str = "pause", **requests: Any) -> PodBuilder:
        """Add a container; ``requests`` as ``cpu="100m", memory="1Gi"`` (None: no requests)."""
        reqs = {_res_name(k): v for k, v in requests.items() if v is not None}
        c = Container(
            name=f"c{len(self._pod.spec.containers)}",
            image=image,
            resources=ResourceRequirements(requests=reqs or None),
        )
        self._pod.spec.containers = [*self._pod.spec.containers, c]
        return self

    def req(self, **requests: Any) -> PodBuilder:
        """Add one container requesting ``requests`` (``ephemeral_storage``, ``nvidia.com/gpu`` via dict)."""
        return self.container(**requests)

    def req_list(self, requests: dict[str, Any]) -> PodBuilder:
        """Add one container with requests given as a ResourceList."""
        c = Container(
            name=f"c{len(self._pod.spec.containers)}",
            image="pause",
            resources=ResourceRequirements(requests=dict(requests)),
        )
        self._pod.spec.containers = [*self._pod.spec.containers, c]
        return self

    def init_req(self, requests: dict[str, Any], sidecar: bool = False) -> PodBuilder:
        c = Container(
            name=f"init{len(self._pod.spec.init_containers)}",
            image="pause",
            resources=ResourceRequirements(requests=dict(requests)),
            restart_policy="Always" if sidecar else None,
        )
        self._pod.spec.init_containers = [*self._pod.spec.init_containers, c]
        return self

    def overhead(self, overhead: dict[str, Any]) -> PodBuilder:
        self._pod.spec.overhead = dict(overhead)
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodBuilder:
        c = Container(
            name=f"c{len(self._pod.spec.containers)}",
            image="pause",
            ports=[ContainerPort(container_port=port, host_port=port, protocol=protocol, host_ip=host_ip)],
        )
        self._pod.spec.containers = [*self._pod.spec.containers, c]
        return self

    def node_selector(self, sel: dict[str, str]) -> PodBuilder:
        self._pod.spec.node_selector = dict(sel)
        return self

    def _affinity(self) -> Affinity:
        if self._pod.spec.affinity is None:
            self._pod.spec.affinity = Affinity()
        return self._pod.spec.affinity

    def node_affinity_in(self, key: str, values: list[str], op: str = "In") -> PodBuilder:
        """Add a required node affinity term ``key op values`` (a new term each call)."""
        aff = self._affinity()
        if aff.node_affinity is None:
            aff.node_affinity = NodeAffinity()
        na = aff.node_affinity
        if na.required_during_scheduling_ignored_during_execution is None:
            na.required_during_scheduling_ignored_during_execution = NodeSelector()
        req = na.required_during_scheduling_ignored_during_execution
        req.node_selector_terms = [
            *req.node_selector_terms,
            NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key=key, operator=op, values=list(values))]),
        ]
        return self

    def preferred_node_affinity(self, weight: int, key: str, values: list[str], op: str = "In") -> PodBuilder:
        aff = self._affinity()
        if aff.node_affinity is None:
            aff.node_affinity = NodeAffinity()
        na = aff.node_affinity
        na.preferred_during_scheduling_ignored_during_execution = [
            *na.preferred_during_scheduling_ignored_during_execution,
            PreferredSchedulingTerm(
                weight=weight,
                preference=NodeSelectorTerm(
                    match_expressions=[NodeSelectorRequirement(key=key, operator=op, values=list(values))]
                ),
            ),
        ]
        return self

    def _pod_affinity_term(self, key: str, values: list[str] | None, topology_key: str, op: str) -> PodAffinityTerm:
        expr = LabelSelectorRequirement(key=key, operator=op, values=list(values or []))
        return PodAffinityTerm(label_selector=LabelSelector(match_expressions=[expr]), topology_key=topology_key)

    def pod_affinity(self, key: str, values: list[str] | None, topology_key: str, op: str = "In", weight: int = 0) -> PodBuilder:
        """Required (weight 0) or preferred pod affinity to pods matching ``key op values``."""
        aff = self._affinity()
        if aff.pod_affinity is None:
            aff.pod_affinity = PodAffinity()
        term = self._pod_affinity_term(key, values, topology_key, op)
        _add_term(aff.pod_affinity, term, weight)
        return self

    def pod_anti_affinity(self, key: str, values: list[str] | None, topology_key: str, op: str = "In", weight: int = 0) -> PodBuilder:
        aff = self._affinity()
        if aff.pod_anti_affinity is None:
            aff.pod_anti_affinity = PodAffinity()
        term = self._pod_affinity_term(key, values, topology_key, op)
        _add_term(aff.pod_anti_affinity, term, weight)
        return self

    def toleration(self, key: str, value: str = "", effect: str = "", operator: str = "Equal") -> PodBuilder:
        self._pod.spec.tolerations = [
            *self._pod.spec.tolerations,
            Toleration(key=key, operator=operator, value=value, effect=effect),
        ]
        return self

    def spread(
        self,
        max_skew: int,
        topology_key: str,
        when: str,
        selector: LabelSelector | None = None,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: list[str] | None = None,
    ) -> PodBuilder:
        """Add a topology spread constraint (as ``st.MakePod().SpreadConstraint(...)``)."""
        self._pod.spec.topology_spread_constraints = [
            *self._pod.spec.topology_spread_constraints,
            TopologySpreadConstraint(
                max_skew=max_skew, topology_key=topology_key, when_unsatisfiable=when,
                label_selector=selector, min_domains=min_domains,
                node_affinity_policy=node_affinity_policy, node_taints_policy=node_taints_policy,
                match_label_keys=list(match_label_keys or []),
            ),
        ]
        return self

    def resource_claim(self, name: str, *, claim: str | None = None, template: str | None = None) -> PodBuilder:
        """Add ``spec.resourceClaims`` entry ``name`` (of the claim ``claim``, or made from the
        template ``template``; default: the claim ``name``), used by every container."""
        ref = PodResourceClaim(name=name, resource_claim_name=claim if claim or template else name, resource_claim_template_name=template)
        self._pod.spec.resource_claims = [*self._pod.spec.resource_claims, ref]
        for c in self._pod.spec.containers:
            c.resources.claims = [*c.resources.claims, ContainerResourceClaim(name=name)]
        return self

    def scheduling_gates(self, *names: str) -> PodBuilder:
        self._pod.spec.scheduling_gates = [PodSchedulingGate(name=n) for n in names]
        return self


def _add_term(pa: PodAffinity, term: PodAffinityTerm, weight: int) -> None:
    if weight:
        pa.preferred_during_scheduling_ignored_during_execution = [
            *pa.preferred_during_scheduling_ignored_during_execution,
            WeightedPodAffinityTerm(weight=weight, pod_affinity_term=term),
        ]
    else:
        pa.required_during_scheduling_ignored_during_execution = [
            *pa.required_during_scheduling_ignored_during_execution, term,
        ]


def _res_name(k: str) -> str:
    return {"ephemeral_storage": "ephemeral-storage"}.get(k, k)


class NodeBuilder:
    """A fluent Node builder; allocatable equals capacity; pods default to 32 (as st.MakeNode)."""

    def __init__(self, name: str) -> None:
        self._node = Node(metadata=ObjectMeta(name=name, uid=uid_for("", name), labels={"kubernetes.io/hostname": name}))
        self._node.status.allocatable = {"pods": 32}
        self._node.status.capacity = {"pods": 32}

    def obj(self) -> Node:
        return self._node

    def capacity(self, **resources: Any) -> NodeBuilder:
        rl = {_res_name(k): v for k, v in resources.items()}
        rl.setdefault("pods", 32)
        self._node.status.allocatable = dict(rl)
        self._node.status.capacity = dict(rl)
        return self

    def capacity_list(self, resources: dict[str, Any]) -> NodeBuilder:
        rl = dict(resources)
        rl.setdefault("pods", 32)
        self._node.status.allocatable = dict(rl)
        self._node.status.capacity = dict(rl)
        return self

    def label(self, k: str, v: str) -> NodeBuilder:
        self._node.metadata.labels = {**self._node.metadata.labels, k: v}
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        self._node.spec.taints = [*self._node.spec.taints, Taint(key=key, value=value, effect=effect)]
        return self

    def unschedulable(self, flag: bool = True) -> NodeBuilder:
        self._node.spec.unschedulable = flag
        return self

    def images(self, images: dict[str, int]) -> NodeBuilder:
        from kubesched.api._objects import ContainerImage

        self._node.status.images = [ContainerImage(names=[n], size_bytes=s) for n, s in images.items()]
        return self


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


class PodGroupBuilder:
    """A fluent PodGroup (scheduling.x-k8s.io/v1alpha1) builder, as sp's ``tu.MakePodGroup()``."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        from kubesched.api._objects import PodGroup, PodGroupSpec

        self._pg = PodGroup(
            metadata=ObjectMeta(name=name, namespace=namespace, uid=uid_for(namespace, "podgroup/" + name)),
            spec=PodGroupSpec(),
        )

    def obj(self) -> Any:
        return self._pg

    def min_member(self, n: int) -> PodGroupBuilder:
        self._pg.spec.min_member = n
        return self

    def min_resources(self, **resources: Any) -> PodGroupBuilder:
        self._pg.spec.min_resources = {_res_name(k): v for k, v in resources.items()}
        return self

    def schedule_timeout(self, seconds: int) -> PodGroupBuilder:
        self._pg.spec.schedule_timeout_seconds = seconds
        return self

    def creation_timestamp(self, ts: str) -> PodGroupBuilder:
        self._pg.metadata.creation_timestamp = ts
        return self


def make_pod_group(name: str, namespace: str = "default") -> PodGroupBuilder:
    return PodGroupBuilder(name, namespace)


def make_pdb(
    name: str,
    namespace: str = "default",
    *,
    match_labels: dict[str, str],
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
    disruptions_allowed: int | None = None,
    disrupted_pods: dict[str, str] | None = None,
) -> PodDisruptionBudget:
    status = None
    if disruptions_allowed is not None or disrupted_pods:
        status = PodDisruptionBudgetStatus(
            disruptions_allowed=disruptions_allowed or 0, disrupted_pods=dict(disrupted_pods or {})
        )
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid_for(namespace, "pdb/" + name)),
        spec=PodDisruptionBudgetSpec(
            min_available=min_available,
            max_unavailable=max_unavailable,
            selector=LabelSelector(match_labels=dict(match_labels)),
        ),
        status=status,
    )


def make_node_info(node: Node, *pods: Pod) -> Any:
    """A :class:`~kubesched.NodeInfo` for ``node`` holding ``pods`` (as the cache would)."""
    from kubesched.runtime._nodeinfo import NodeInfo, PodInfo

    ni = NodeInfo(node)
    for p in pods:
        ni.add_pod(PodInfo(p))
    return ni


# --- a framework handle over a fixed cluster (plugin unit tests) ---------------------------------


class RecordingClient(RecordingClaimCreates, Transport):
    """A transport that records the scheduler's writes (its watch lists nothing).

    ``fail`` maps a verb (``"patch"``, ``"delete"``, ``"bind"``; for claims ``"update_claim"``,
    ``"update_claim_status"``, ``"delete_claim"``, ``"create_claim"``; ``"patch_extended"``) to
    the pod (claim) names whose call raises; a ``block`` event, when set, makes every delete
    wait for it (to hold a preemption open).
    """

    def __init__(self) -> None:
        self.bound: list[Binding] = []
        self.patched: list[tuple[str, str, Any, str | None]] = []
        self.deleted: list[tuple[str, str, str | None]] = []
        self.events: list[Event] = []
        self.claims: list[tuple[str, ResourceClaim]] = []  # ("update" | "status" | "create", claim)
        self.deleted_claims: list[tuple[str, str, str | None]] = []
        self.extended_statuses: list[tuple[str, str, Any]] = []  # (namespace, name, status)
        self.fail: dict[str, set[str]] = {}
        self.block: anyio.Event | None = None

    def _check(self, verb: str, namespace: str, name: str) -> None:
        if name in self.fail.get(verb, ()):
            raise UnavailableError(f"{verb} of {namespace}/{name} failed")

    async def watch(self) -> AsyncIterator[WatchEvent]:
        yield WatchEvent("SYNCED")

    async def bind(self, binding: Binding) -> None:
        self._check("bind", binding.metadata.namespace, binding.metadata.name)
        self.bound.append(binding)

    async def patch_pod_status(
        self, namespace: str, name: str, *, condition: PodCondition | None = None, nominated_node_name: str | None = None
    ) -> None:
        self._check("patch", namespace, name)
        self.patched.append((namespace, name, condition, nominated_node_name))

    async def delete_pod(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        if self.block is not None:
            await self.block.wait()
        self._check("delete", namespace, name)
        self.deleted.append((namespace, name, uid))

    async def record_event(self, event: Event) -> None:
        self.events.append(event)

    async def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        self._check("update_claim", claim.metadata.namespace, claim.metadata.name)
        self.claims.append(("update", claim))
        return claim

    async def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        self._check("update_claim_status", claim.metadata.namespace, claim.metadata.name)
        self.claims.append(("status", claim))
        return claim

    async def delete_resource_claim(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        self._check("delete_claim", namespace, name)
        self.deleted_claims.append((namespace, name, uid))


_TABLES: dict[str, tuple[str, bool]] = {
    "Node": ("nodes", False),
    "PodDisruptionBudget": ("pdbs", True),
    "PriorityClass": ("priority_classes", False),
    "PodGroup": ("pod_groups", True),
    "ReplicaSet": ("replica_sets", True),
    "StatefulSet": ("stateful_sets", True),
    "PersistentVolume": ("pvs", False),
    "PersistentVolumeClaim": ("pvcs", True),
    "StorageClass": ("storage_classes", False),
    "CSINode": ("csi_nodes", False),
    "CSIDriver": ("csi_drivers", False),
    "CSIStorageCapacity": ("csi_storage_capacities", True),
    "ResourceClaim": ("resource_claims", True),
    "ResourceSlice": ("resource_slices", False),
    "DeviceClass": ("device_classes", False),
    "DeviceTaintRule": ("device_taint_rules", False),
}
"""The cluster state's table of each kind :meth:`FakeHandle.add` takes (besides Pods): its
attribute, and whether it is keyed by (namespace, name) rather than by name."""


def _table(cluster: ClusterState, obj: Any) -> tuple[dict[Any, Any], Any]:
    """The table of ``cluster`` holding ``obj``'s kind, and its key there."""
    if obj.kind not in _TABLES:
        raise TypeError(f"FakeHandle keeps no {obj.kind}")
    name, namespaced = _TABLES[obj.kind]
    table: dict[Any, Any] = getattr(cluster, name)
    meta = obj.metadata
    return table, (meta.namespace, meta.name) if namespaced else meta.name


def _put(cluster: ClusterState, obj: Any) -> None:
    """``obj`` into ``cluster``, as the informer stores it (a pod without a uid by its key)."""
    if obj.kind == "Pod":
        uid = obj.metadata.uid or f"{obj.metadata.namespace}/{obj.metadata.name}"
        cluster.pods[uid] = obj
        cluster.pod_keys[(obj.metadata.namespace, obj.metadata.name)] = uid
    else:
        table, key = _table(cluster, obj)
        table[key] = obj


def _version(text: str | Version | None) -> Version:
    if text is None:
        return DEFAULT_VERSION
    return parse_version(text) if isinstance(text, str) else text


class FakeHandle(FrameworkHandle):
    """A :class:`kubesched.framework.Handle` over a fixed cluster, for a plugin's unit tests (as
    upstream's ``tf.NewFramework`` with fake listers).

    - ``nodes`` and the bound ``pods`` fill :attr:`snapshot`; every pod, node, ``pdbs`` and
      ``pod_groups`` are in :attr:`cluster` (a new one, or the ``cluster`` given; a
      ``snapshot`` given is used as it is);
      :meth:`add` / :meth:`delete` change the cluster later.
    - :attr:`client` is a :class:`RecordingClient` unless ``client`` is given.
    - ``clock``: a fixed time for :meth:`now` (set :attr:`clock` to move it; ``wall_epoch`` +
      clock is :meth:`wall_clock`); None: anyio's clock.
    - :meth:`record_event` appends ``(pod key, type, reason, note)`` to :attr:`events`;
      :meth:`activate` appends the pods' keys to :attr:`activated`; :meth:`spawn` starts the
      task in ``task_group`` (a RuntimeError without one).
    - waiting pods: a real :class:`WaitingPods` (:attr:`waiting`), empty.
    - ``emulated_version``: the Kubernetes minor the plugins see (``"1.32"``; default: the
      newest kubesched emulates).
    - the plugin runners raise a RuntimeError: build a Framework with :func:`framework_for` to
      run plugins (its handle shares this handle's parts).
    """

    def __init__(
        self,
        nodes: Iterable[Node] = (),
        pods: Iterable[Pod] = (),
        *,
        pdbs: Iterable[PodDisruptionBudget] = (),
        pod_groups: Iterable[PodGroup] = (),
        cluster: ClusterState | None = None,
        snapshot: Snapshot | None = None,
        client: Transport | None = None,
        feature_gates: Mapping[str, bool] | None = None,
        clock: float | None = None,
        wall_epoch: float = 0.0,
        seed: int = 0,
        deterministic: bool = False,
        extenders: Sequence[Extender] = (),
        task_group: anyio.abc.TaskGroup | None = None,
        emulated_version: str | Version | None = None,
    ) -> None:
        nodes, pods = list(nodes), list(pods)
        if cluster is None:
            cluster = ClusterState()
        for obj in (*nodes, *pods, *pdbs, *pod_groups):
            _put(cluster, obj)
        if snapshot is None:
            cache = Cache()
            for n in nodes:
                cache.add_node(n)
            for p in pods:
                if p.spec.node_name:
                    cache.add_pod(p)
            snapshot = Snapshot()
            snapshot.update(cache)
        self.clock = clock
        self.wall_epoch = wall_epoch
        self.events: list[tuple[str, str, str, str]] = []
        self.activated: list[str] = []
        self.task_group = task_group
        self.waiting = WaitingPods()
        parts = HandleParts(
            snapshot=snapshot,
            cluster=cluster,
            nominator=Nominator(),
            client=client if client is not None else RecordingClient(),
            record_event=self._record_event,
            instant_writes=lambda: False,
            feature_gates=dict(feature_gates or {}),
            now=self._now,
            wall_clock=self._wall_clock,
            rng=random.Random(seed),
            deterministic=deterministic,
            activate=self._activate,
            spawn=self._spawn,
            park_until=anyio.sleep_until,
            extenders=extenders,
            metrics=Metrics(),
            emulated_version=_version(emulated_version),
        )
        super().__init__(parts, self.waiting, None)

    def add(self, *objects: Any) -> FakeHandle:
        """Put API objects into :attr:`cluster` as the informer would: Pods, Nodes, PDBs,
        PriorityClasses, PodGroups, ReplicaSets, StatefulSets and the storage kinds (PV, PVC,
        StorageClass, CSINode, CSIDriver, CSIStorageCapacity).  The snapshot is left as it is.
        Returns the handle."""
        for obj in objects:
            _put(self.cluster, obj)
        return self

    def delete(self, *objects: Any) -> None:
        """Take API objects out of :attr:`cluster` (by namespace and name)."""
        for obj in objects:
            if obj.kind == "Pod":
                uid = self.cluster.pod_keys.pop((obj.metadata.namespace, obj.metadata.name), None)
                if uid is not None:
                    self.cluster.pods.pop(uid, None)
            else:
                table, key = _table(self.cluster, obj)
                table.pop(key, None)

    def _now(self) -> float:
        return anyio.current_time() if self.clock is None else self.clock

    def _wall_clock(self) -> float:
        return self.wall_epoch + (self.clock or 0.0)

    async def _record_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
        self.events.append((pod.key, type_, reason, note))

    def _activate(self, pods: Sequence[Pod]) -> None:
        self.activated.extend(p.key for p in pods)

    def _spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        if self.task_group is None:
            raise RuntimeError("FakeHandle(task_group=...) is needed to spawn")

        async def run() -> None:
            await fn(*args)

        self.task_group.start_soon(run)


def framework_for(
    enabled: dict[str, list[str]],
    nodes: Iterable[Node] = (),
    pods: Iterable[Pod] = (),
    *,
    registry: Mapping[str, Factory] | None = None,
    plugin_args: Mapping[str, Any] | None = None,
    pdbs: Iterable[PodDisruptionBudget] = (),
    feature_gates: Mapping[str, bool] | None = None,
    task_group: anyio.abc.TaskGroup | None = None,
    seed: int = 0,
    handle: FakeHandle | None = None,
    emulated_version: str | None = None,
) -> Framework:
    """A :class:`~kubesched.Framework` wired to a fixed cluster, as upstream's ``tf.NewFramework``.

    ``enabled`` maps extension points to plugin names (PrioritySort and DefaultBinder are added
    when absent).  Its plugins' handle has the parts of ``handle``, a :class:`FakeHandle` (by
    default one over ``nodes``, ``pods`` and ``pdbs``, with ``feature_gates``, ``seed``,
    ``task_group`` and ``emulated_version``): keep that FakeHandle to read the events, activations
    and API writes.
    """
    from kubesched.plugins import IN_TREE

    factories: dict[str, Factory] = dict(IN_TREE) if registry is None else dict(registry)
    points = {k: [(n, 1) for n in v] for k, v in enabled.items()}
    points.setdefault("queueSort", [("PrioritySort", 1)])
    points.setdefault("bind", [("DefaultBinder", 1)])
    if handle is None:
        handle = FakeHandle(
            nodes, pods, pdbs=pdbs, feature_gates=feature_gates, seed=seed, task_group=task_group,
            emulated_version=emulated_version,
        )  # fmt: skip
    return Framework("default-scheduler", points, factories, plugin_args or {}, parts=handle.parts)
