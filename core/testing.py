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

``pytest_plugins = ["kubesched.pytest_plugin"]`` in a conftest adds the fixtures (both anyio
backends in virtual time, ``temporary_plugin``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from kubesched._errors import plain_exception
from kubesched.api._objects import (
    Affinity,
    Container,
    ContainerPort,
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
from kubesched.config._config import SchedulerConfig
from kubesched.runtime._entrypoints import Factory
from kubesched.runtime._entrypoints import register_temporary_plugin as register_temporary_plugin
from kubesched.scheduler._simcluster import SETTLE_POLL_SECONDS as SETTLE_POLL_SECONDS
from kubesched.scheduler._simcluster import SimCluster as SimCluster
from kubesched.scheduler._simcluster import scheduler_for as _scheduler_for


@asynccontextmanager
async def scheduler_for(
    objects: Iterable[Any] = (),
    *,
    plugins: Mapping[str, Factory] | None = None,
    config: SchedulerConfig | Mapping[str, Any] | None = None,
    enable: Sequence[str | tuple[str, int]] = (),
    plugin_args: Mapping[str, Mapping[str, Any]] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
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
    - ``feature_gates``: e.g. ``{"SchedulerAsyncPreemption": False}``.
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


class RecordingClient:
    """A transport stand-in that records the scheduler's writes (no watch).

    ``fail`` maps a verb (``"patch"``, ``"delete"``) to the pod names whose call raises; a
    ``block`` event, when set, makes every delete wait for it (to hold a preemption open).
    """

    def __init__(self) -> None:
        self.patched: list[tuple[str, str, Any, str | None]] = []
        self.deleted: list[tuple[str, str, str | None]] = []
        self.fail: dict[str, set[str]] = {}
        self.block: Any = None

    async def patch_pod_status(
        self, namespace: str, name: str, *, condition: Any = None, nominated_node_name: str | None = None
    ) -> None:
        from ._errors import UnavailableError

        if name in self.fail.get("patch", ()):
            raise UnavailableError(f"patch of {namespace}/{name} failed")
        self.patched.append((namespace, name, condition, nominated_node_name))

    async def delete_pod(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        from ._errors import UnavailableError

        if self.block is not None:
            await self.block.wait()
        if name in self.fail.get("delete", ()):
            raise UnavailableError(f"delete of {namespace}/{name} failed")
        self.deleted.append((namespace, name, uid))


class StubScheduler:
    """What a plugin reaches through ``handle.scheduler``: metrics, events, spawn, activate."""

    def __init__(self, task_group: Any = None) -> None:
        from types import SimpleNamespace

        from kubesched.scheduler._scheduler import Metrics

        self.metrics = Metrics()
        self.events: list[tuple[str, str, str, str]] = []  # (pod key, type, reason, message)
        self.activated: list[str] = []
        self.extenders: list[Any] = []
        self.task_group = task_group
        self.queue = SimpleNamespace(activate=lambda pods: self.activated.extend(p.key for p in pods))

    def spawn(self, fn: Any, *args: Any) -> None:
        assert self.task_group is not None, "StubScheduler(task_group=...) is needed to spawn"
        self.task_group.start_soon(fn, *args)

    async def record_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
        self.events.append((pod.key, type_, reason, note))


def framework_for(
    enabled: dict[str, list[str]],
    nodes: list[Node] = (),  # type: ignore[assignment]
    pods: list[Pod] = (),  # type: ignore[assignment]
    *,
    registry: dict[str, Any] | None = None,
    plugin_args: dict[str, Any] | None = None,
    pdbs: list[PodDisruptionBudget] = (),  # type: ignore[assignment]
    feature_gates: dict[str, bool] | None = None,
    task_group: Any = None,
    seed: int = 0,
) -> Any:
    """A :class:`~kubesched.Framework` wired to a fixed cluster, as upstream's ``tf.NewFramework``.

    ``enabled`` maps extension points to plugin names (PrioritySort and DefaultBinder are added
    when absent).  Bound ``pods`` fill the snapshot; every pod is in ``handle.cluster``.  The
    handle's ``client`` is a :class:`RecordingClient`, its ``scheduler`` a :class:`StubScheduler`.
    """
    import random

    from kubesched.cache._cache import Cache, Snapshot
    from kubesched.plugins import IN_TREE
    from kubesched.queue._scheduling_queue import Nominator
    from kubesched.runtime._framework import Framework
    from kubesched.scheduler._scheduler import ClusterState

    factories: dict[str, Any] = dict(IN_TREE) if registry is None else dict(registry)
    points = {k: [(n, 1) for n in v] for k, v in enabled.items()}
    points.setdefault("queueSort", [("PrioritySort", 1)])
    points.setdefault("bind", [("DefaultBinder", 1)])
    fw = Framework("default-scheduler", points, factories, plugin_args or {})
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    cluster = ClusterState()
    for p in pods:
        cluster.pods[p.metadata.uid] = p
        cluster.pod_keys[(p.metadata.namespace, p.metadata.name)] = p.metadata.uid
        if p.spec.node_name:
            cache.add_pod(p)
    for n in nodes:
        cluster.nodes[n.metadata.name] = n
    for pdb in pdbs:
        cluster.pdbs[(pdb.metadata.namespace, pdb.metadata.name)] = pdb
    snapshot = Snapshot()
    snapshot.update(cache)
    fw.snapshot = snapshot
    fw.nominator = Nominator()
    fw.cluster = cluster
    fw.client = RecordingClient()
    fw.scheduler = StubScheduler(task_group)
    fw.feature_gates = dict(feature_gates or {})
    fw.rng = random.Random(seed)
    return fw
