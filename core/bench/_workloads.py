"""``kubesched bench``: scheduler_perf-shaped workloads on the fake cluster, in wall-clock time.

Each workload reproduces one upstream scheduler_perf test case (kubernetes/kubernetes,
``test/integration/scheduler_perf/``): its node and pod templates (``templates/*.yaml``) and its
node and pod counts.  Nodes are ``node-default.yaml`` (4 CPU, 32Gi, 110 pods) with the
``kubernetes.io/hostname`` label a kubelet sets, plus the zone label of the case's
``labelNodePrepareStrategy`` (upstream picks a value at random per node; here node ``i`` gets value
``i % len(values)``).  The init pods are created and scheduled first; then the measured pods are
created and timed from the first creation to the moment every measured pod is bound.

========================  ==========================================================  ==========
workload                  upstream case (config file)                                 nodes/init/measured
========================  ==========================================================  ==========
``basic``                 SchedulingBasic (config/performance-config.yaml);           5000/1000/10000
                          pod-default.yaml (100m CPU, 500Mi)
``pod-anti-affinity``     SchedulingPodAntiAffinity/5000Nodes                         5000/1000/1000
                          (affinity/performance-config.yaml);
                          pod-with-pod-anti-affinity.yaml: label color=green, required
                          anti-affinity to color=green on kubernetes.io/hostname in
                          namespaces sched-1, sched-0; init pods in sched-0, measured in sched-1
``pod-affinity``          SchedulingPodAffinity/5000Nodes; every node in zone          5000/5000/1000
                          ``zone1``; pod-with-pod-affinity.yaml: color=blue, required
                          affinity to color=blue on topology.kubernetes.io/zone, namespaces
                          sched-1, sched-0
``topology-spreading``    TopologySpreading/5000Nodes (config/performance-config.yaml);  5000/5000/2000
                          zones moon-1..3; init pods pod-default.yaml; measured
                          pod-with-topology-spreading.yaml: color=blue, maxSkew 5 on zone,
                          DoNotSchedule
``node-affinity``         SchedulingNodeAffinity/5000Nodes; every node in ``zone1``;  5000/5000/1000
                          pod-with-node-affinity.yaml: required zone In [zone1, zone2]
``preemption``            PreemptionBasic/1000Nodes (default_preemption/               1000/4000/1000
                          performance-config.yaml) with ``SchedulerAsyncPreemption=false``:
                          init pod-low-priority.yaml (900m CPU, 500Mi, priority 0,
                          terminationGracePeriodSeconds 0), measured pod-high-priority.yaml
                          (3000m CPU, 500Mi, priority 10): each measured pod preempts 3 of
                          the 4 low-priority pods of a node
``preemption-async``      the same with ``SchedulerAsyncPreemption=true`` (upstream's  1000/4000/1000
                          default)
``preemption-churn``      PreemptionAsync/5000Nodes_AsyncPreemptionEnabled:           5000/20000/5000
                          low-priority init pods; while pod-default.yaml pods are
                          measured, a pod-high-priority.yaml preemptor is created every
                          200 ms (upstream's ``churn`` op)
``gang-upstream``         issue 36: the Workload API's gangs of 1.36 (GenericWorkload,  1000/0/4000
                          GangScheduling): 500 PodGroups (scheduling.k8s.io/v1alpha2,
                          gang minCount 8) of 8 gang-pod.yaml pods each joined by
                          spec.schedulingGroup, scheduled by the PodGroup cycle
``gang``                  GangScheduling/5000Nodes_1000Gangs_3000Pods                 5000/0/3000
                          (podgroup/gangscheduling/performance-config.yaml): 1000 gangs of
                          3 pods of gang-pod.yaml (100m CPU, 100Mi) in gang-ns-0; upstream
                          groups them with a PodGroup (minCount 3), here with the ``Gang``
                          plugin's labels (available-count 3), enabled as in the demo
``dra-template``          SchedulingWithResourceClaimTemplateStructured/fast           500/2500/2500
                          (dra/performance-config.yaml): DeviceClass ``test-class``
                          (driver test-driver.cdi.k8s.io), one ResourceSlice of 10
                          devices per node, pod-with-claim-template.yaml: one claim from
                          the template ``test-claim-template`` per pod
``dra-steady``            SteadyStateClusterResourceClaimTemplateStructured: the same   500/2500/2500
                          cluster half full (init pods keep their devices) while the
                          measured pods come; ``--init-pods 0`` empty, 2500 half, 4500
                          (with ``--pods 500``) full
``dra-shared-claim``      SchedulingWithResourceClaim (a ResourceClaim by name): every    500/2500/2500
                          claim shared by 5 pods (10 devices per node)
========================  ==========================================================  ==========

Done means every measured pod is bound.  For ``preemption`` and ``preemption-async`` the measured
pods are the high-priority preemptors, so the time includes evicting their victims.  The victims'
template sets ``terminationGracePeriodSeconds: 0`` upstream and here, so they go at once; with the
fake cluster's default 30 s grace, which passes in *wall-clock* time in a bench, the grace period
would dominate every figure.

Output: pods/s over the measured pods and the scheduling-attempt latency p50/p99 (pop → bound, for
the attempts of the measured phase that ended in a bind: a failed attempt, such as the one in which
a preemptor evicts its victims, is counted in ``attempts`` but has no latency sample).  ``gang`` also gives the time per gang
attempt: from the first member's scheduling attempt that passes the Gang PreFilter (the pods
before it have been waiting for their siblings) to the last member's bind, mean, p50 and p99 over
the gangs — upstream's ``scheduler_podgroup_scheduling_attempt_duration_seconds`` (~3.7 ms average
in upstream CI for this case) measures its one-cycle workload scheduling, which kubesched's
per-pod Permit gang does in three cycles plus the binds.

Workloads that need InterPodAffinity or PodTopologySpread raise a ConfigError when the plugin is
missing instead of silently measuring without it.  Speed is measured here, never by timed tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec

from kubesched.api._objects import (
    Affinity,
    LabelSelector,
    Node,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    uid_for,
)
from kubesched.api._workload import (
    GangSchedulingPolicy,
    PodGroupPolicy,
    PodSchedulingGroup,
    SchedulingPodGroup,
    SchedulingPodGroupSpec,
)
from kubesched.config._config import SchedulerConfig, parse_config
from kubesched.config._versions import DEFAULT_VERSION, Version, default_feature_gates
from kubesched.hookspecs import hookimpl
from kubesched.runtime._entrypoints import all_plugins
from kubesched.runtime._handle import Handle
from kubesched.testing import make_node, make_pod

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
GANG_NAME_LABEL = "gang.kubesched.io/name"
GANG_COUNT_LABEL = "gang.kubesched.io/available-count"
PROBE = "BenchGangProbe"

PodMaker = Callable[[int], Pod]


@dataclass
class Workload:
    """One scheduler_perf case: the cluster, the init pods, the measured pods, the profile."""

    name: str
    nodes: int
    init_pods: int
    pods: int
    make_node: Callable[[int], Node]
    make_init_pod: PodMaker
    make_pod: PodMaker
    config: Callable[[Version], SchedulerConfig] = lambda v: _default_config(v)
    """The profile at an emulated Kubernetes version."""
    emulated_version: Version = DEFAULT_VERSION
    requires: tuple[str, ...] = ()
    """Plugins the case exercises: missing from kubesched.plugins.IN_TREE → ConfigError."""
    gang_size: int = 0
    """Measured pods form gangs of this many (consecutive indices); time per gang attempt."""
    churn: PodMaker | None = None
    """Created every ``churn_interval`` seconds while the measured pods are scheduled."""
    churn_interval: float = 0.2
    note: str = ""
    make_group: Callable[[int], Any] | None = None
    """The object of gang ``i`` (a PodGroup), created before the measured pods."""
    make_objects: Callable[[Workload], list[Any]] | None = None
    """API objects created with the nodes (DRA: the DeviceClass, the ResourceSlices, the
    ResourceClaimTemplate or the shared ResourceClaims)."""
    devices_per_node: int = 0
    """DRA: devices per node; ``pods_per_claim`` pods share one device."""
    pods_per_claim: int = 1
    record_plugin_results: bool = False
    """``--record-plugin-results``: every attempt's plugin results are recorded and encoded
    (then dropped: the annotations of a 5000-node attempt are hundreds of kB)."""


# --- templates (test/integration/scheduler_perf/templates) --------------------------------------


def node_maker(zones: tuple[str, ...] = ()) -> Callable[[int], Node]:
    """node-default.yaml (+ the hostname label, + labelNodePrepareStrategy's zone values)."""

    def build(i: int) -> Node:
        name = f"node-{i}"
        b = make_node(name).capacity(cpu="4", memory="32Gi", pods="110").label(HOSTNAME, name)
        if zones:
            b.label(ZONE, zones[i % len(zones)])
        return b.obj()

    return build


def _stamped(prefix: str, template: Pod) -> PodMaker:
    """Pods ``<prefix>-<i>`` that are ``template`` but for their name (and uid): the store
    copies each pod it is given, so they may share the template's parts until then."""
    meta = template.metadata
    namespace = meta.namespace

    def build(i: int) -> Pod:
        name = f"{prefix}-{i}"
        named = msgspec.structs.replace(meta, name=name, uid=uid_for(namespace, name))
        return msgspec.structs.replace(template, metadata=named)

    return build


def _default_pod(prefix: str, namespace: str = "sched-perf") -> PodMaker:
    """pod-default.yaml: 100m CPU, 500Mi."""
    return _stamped(prefix, make_pod(prefix, namespace).req(cpu="100m", memory="500Mi").obj())


def _pod_affinity_pod(prefix: str, namespace: str, *, anti: bool) -> PodMaker:
    """pod-with-pod-anti-affinity.yaml (color=green, hostname) or pod-with-pod-affinity.yaml
    (color=blue, zone): a required term on the pod's own label, in namespaces sched-1, sched-0."""
    color, key = ("green", HOSTNAME) if anti else ("blue", ZONE)

    def build(i: int) -> Pod:
        pod = (
            make_pod(f"{prefix}-{i}", namespace)
            .label("color", color)
            .req(cpu="100m", memory="500Mi")
            .obj()
        )
        term = PodAffinityTerm(
            label_selector=LabelSelector(match_labels={"color": color}),
            topology_key=key,
            namespaces=["sched-1", "sched-0"],
        )
        terms = PodAffinity(required_during_scheduling_ignored_during_execution=[term])
        pod.spec.affinity = (
            Affinity(pod_anti_affinity=terms) if anti else Affinity(pod_affinity=terms)
        )
        return pod

    return build


def _node_affinity_pod(prefix: str) -> PodMaker:
    """pod-with-node-affinity.yaml: required topology.kubernetes.io/zone In [zone1, zone2]."""
    return _stamped(
        prefix,
        make_pod(prefix, "sched-perf").node_affinity_in(ZONE, ["zone1", "zone2"]).req(cpu="100m", memory="500Mi").obj(),
    )


def _spreading_pod(prefix: str) -> PodMaker:
    """pod-with-topology-spreading.yaml: color=blue, maxSkew 5 on zone, DoNotSchedule."""
    template = (
        make_pod(prefix, "sched-perf")
        .label("color", "blue")
        .spread(5, ZONE, "DoNotSchedule", LabelSelector(match_labels={"color": "blue"}))
        .req(cpu="100m", memory="500Mi")
        .obj()
    )
    return _stamped(prefix, template)


def _low_priority_pod(prefix: str) -> PodMaker:
    """pod-low-priority.yaml: 900m CPU, 500Mi, no priority, terminationGracePeriodSeconds 0."""

    def build(i: int) -> Pod:
        pod = make_pod(f"{prefix}-{i}", "sched-perf").req(cpu="900m", memory="500Mi").obj()
        pod.spec.termination_grace_period_seconds = 0
        return pod

    return build


def _high_priority_pod(prefix: str) -> PodMaker:
    """pod-high-priority.yaml: priority 10, 3000m CPU, 500Mi."""

    def build(i: int) -> Pod:
        return (
            make_pod(f"{prefix}-{i}", "sched-perf")
            .priority(10)
            .req(cpu="3000m", memory="500Mi")
            .obj()
        )

    return build


def _gang_pod(size: int) -> PodMaker:
    """podgroup/gangscheduling/templates/gang-pod.yaml (100m CPU, 100Mi), member of gang
    ``gang-<i // size>`` through the Gang plugin's labels instead of a PodGroup reference."""

    def build(i: int) -> Pod:
        return (
            make_pod(f"test-gang-scheduling-{i}", "gang-ns-0")
            .label(GANG_NAME_LABEL, f"gang-{i // size}")
            .label(GANG_COUNT_LABEL, str(size))
            .req(cpu="100m", memory="100Mi")
            .obj()
        )

    return build


def _upstream_gang_pod(size: int) -> PodMaker:
    """gang-pod.yaml (100m CPU, 100Mi) in PodGroup ``gang-<i // size>`` (spec.schedulingGroup)."""

    def build(i: int) -> Pod:
        pod = make_pod(f"test-gang-scheduling-{i}", "gang-ns-0").req(cpu="100m", memory="100Mi").obj()
        group = PodSchedulingGroup(pod_group_name=f"gang-{i // size}")
        return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, scheduling_group=group))

    return build


def _upstream_gang_group(size: int) -> Callable[[int], SchedulingPodGroup]:
    def build(i: int) -> SchedulingPodGroup:
        policy = PodGroupPolicy(gang=GangSchedulingPolicy(min_count=size))
        return SchedulingPodGroup(
            metadata=ObjectMeta(name=f"gang-{i}", namespace="gang-ns-0"),
            spec=SchedulingPodGroupSpec(scheduling_policy=policy),
        )

    return build


# --- profiles ------------------------------------------------------------------------------------


def _default_config(version: Version, gates: dict[str, bool] | None = None) -> SchedulerConfig:
    """The default profile of ``version`` (with ``gates`` over its defaults)."""
    return parse_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
        version=version,
        feature_gates={**default_feature_gates(version), **(gates or {})},
    )


def _with_gates(**gates: bool) -> Callable[[Version], SchedulerConfig]:
    def build(version: Version) -> SchedulerConfig:
        return _default_config(version, gates)

    return build


def _gang_config(version: Version) -> SchedulerConfig:
    """The demo's profile (``Gang`` under multiPoint and as queueSort instead of PrioritySort),
    plus the bench's probe, which only records times."""
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": "Gang"}, {"name": PROBE}]},
                        "queueSort": {
                            "enabled": [{"name": "Gang"}],
                            "disabled": [{"name": "PrioritySort"}],
                        },
                    },
                }
            ],
        },
        registry={**all_plugins(), PROBE: GangProbe},
        version=version,
    )


def _upstream_gang_config(version: Version) -> SchedulerConfig:
    """The default profile of 1.36 with GenericWorkload and GangScheduling on (GangScheduling
    joins it), plus the bench's probe."""
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": PROBE}]}}}],
        },
        registry={**all_plugins(), PROBE: GangProbe},
        version=version,
        feature_gates={**default_feature_gates(version), "GenericWorkload": True, "GangScheduling": True},
    )


class GangProbe:
    """Records, per pod, the start of its first scheduling attempt that got past every other
    PreFilter plugin (for a gang member: past the Gang quorum check) and the time of its bind."""

    name = PROBE

    def __init__(self, args: Any, handle: Handle) -> None:
        self.started: dict[str, float] = {}
        self.bound: dict[str, float] = {}

    @hookimpl
    def kubesched_pre_filter(self, state: Any, pod: Pod, nodes: Any) -> None:
        self.started.setdefault(pod.metadata.uid, anyio.current_time())

    @hookimpl
    def kubesched_post_bind(self, state: Any, pod: Pod, node_name: str) -> None:
        self.bound[pod.metadata.uid] = anyio.current_time()


# --- DRA (test/integration/scheduler_perf/dra) -------------------------------------------------

DRA_DRIVER = "test-driver.cdi.k8s.io"
DRA_CLASS = "test-class"
DRA_TEMPLATE = "test-claim-template"
DRA_NAMESPACE = "sched-perf"


def _dra_objects(w: Workload) -> list[Any]:
    """deviceclass.yaml, resourceslice per node (node-with-dra-test-driver.yaml's devices),
    resourceclaimtemplate-structured.yaml, or the shared claims (claim ``k`` for pods
    ``k*pods_per_claim``…)."""
    from kubesched.api._dra import (
        CELDeviceSelector,
        DeviceClaim,
        DeviceClass,
        DeviceClassSpec,
        DeviceRequest,
        DeviceSelector,
        ExactDeviceRequest,
        ResourceClaim,
        ResourceClaimSpec,
    )
    from kubesched.testing_dra import make_claim_template, make_slice

    selector = DeviceSelector(cel=CELDeviceSelector(expression=f'device.driver == "{DRA_DRIVER}"'))
    out: list[Any] = [DeviceClass(metadata=ObjectMeta(name=DRA_CLASS), spec=DeviceClassSpec(selectors=[selector]))]
    for i in range(w.nodes):
        b = make_slice(f"node-{i}", DRA_DRIVER)
        for d in range(w.devices_per_node):
            b.device(f"dev-{d}")
        out.append(b.obj())
    if w.pods_per_claim <= 1:
        out.append(make_claim_template(DRA_TEMPLATE, DRA_CLASS, DRA_NAMESPACE, request="req-0"))
    else:
        spec = ResourceClaimSpec(devices=DeviceClaim(requests=[
            DeviceRequest(name="req-0", exactly=ExactDeviceRequest(device_class_name=DRA_CLASS, allocation_mode="ExactCount", count=1))
        ]))  # fmt: skip
        for prefix, n in (("init", w.init_pods), ("pod", w.pods)):
            for k in range(-(-n // w.pods_per_claim)):
                meta = ObjectMeta(name=f"{prefix}-claim-{k}", namespace=DRA_NAMESPACE)
                out.append(ResourceClaim(metadata=meta, spec=spec))
    return out


def _dra_pod(prefix: str, per_claim: int = 1) -> PodMaker:
    """pod-with-claim-template.yaml (or, shared, pod-with-claim-ref.yaml): pod-default's
    requests and one claim ``resource`` used by its container."""

    def build(i: int) -> Pod:
        b = make_pod(f"{prefix}-{i}", DRA_NAMESPACE).req(cpu="100m", memory="500Mi")
        if per_claim > 1:
            b.resource_claim("resource", claim=f"{prefix}-claim-{i // per_claim}")
        else:
            b.resource_claim("resource", template=DRA_TEMPLATE)
        return b.obj()

    return build


# --- the workloads -------------------------------------------------------------------------------

_GANG_SIZE = 3
_UPSTREAM_GANG_SIZE = 8

WORKLOADS: dict[str, Workload] = {
    "basic": Workload(
        "SchedulingBasic", 5000, 1000, 10000, node_maker(), _default_pod("init"), _default_pod("pod")
    ),
    "pod-anti-affinity": Workload(
        "SchedulingPodAntiAffinity",
        5000,
        1000,
        1000,
        node_maker(),
        _pod_affinity_pod("init", "sched-0", anti=True),
        _pod_affinity_pod("pod", "sched-1", anti=True),
        requires=("InterPodAffinity",),
    ),
    "pod-affinity": Workload(
        "SchedulingPodAffinity",
        5000,
        5000,
        1000,
        node_maker(("zone1",)),
        _pod_affinity_pod("init", "sched-0", anti=False),
        _pod_affinity_pod("pod", "sched-1", anti=False),
        requires=("InterPodAffinity",),
    ),
    "topology-spreading": Workload(
        "TopologySpreading",
        5000,
        5000,
        2000,
        node_maker(("moon-1", "moon-2", "moon-3")),
        _default_pod("init"),
        _spreading_pod("pod"),
        requires=("PodTopologySpread",),
    ),
    "node-affinity": Workload(
        "SchedulingNodeAffinity",
        5000,
        5000,
        1000,
        node_maker(("zone1",)),
        _node_affinity_pod("init"),
        _node_affinity_pod("pod"),
        requires=("NodeAffinity",),
    ),
    "preemption": Workload(
        "PreemptionBasic",
        1000,
        4000,
        1000,
        node_maker(),
        _low_priority_pod("low"),
        _high_priority_pod("high"),
        config=_with_gates(SchedulerAsyncPreemption=False),
        requires=("DefaultPreemption",),
        note="SchedulerAsyncPreemption=false; victims' grace period 0 as upstream",
    ),
    "preemption-async": Workload(
        "PreemptionBasic",
        1000,
        4000,
        1000,
        node_maker(),
        _low_priority_pod("low"),
        _high_priority_pod("high"),
        config=_with_gates(SchedulerAsyncPreemption=True),
        requires=("DefaultPreemption",),
        note="SchedulerAsyncPreemption=true; victims' grace period 0 as upstream",
    ),
    "preemption-churn": Workload(
        "PreemptionAsync",
        5000,
        20000,
        5000,
        node_maker(),
        _low_priority_pod("low"),
        _default_pod("pod"),
        config=_with_gates(SchedulerAsyncPreemption=True),
        requires=("DefaultPreemption",),
        churn=_high_priority_pod("churn"),
        note="SchedulerAsyncPreemption=true; a preemptor every 200 ms",
    ),
    "gang": Workload(
        "GangScheduling",
        5000,
        0,
        1000 * _GANG_SIZE,
        node_maker(),
        _default_pod("init"),
        _gang_pod(_GANG_SIZE),
        config=_gang_config,
        requires=("Gang",),
        gang_size=_GANG_SIZE,
    ),
    "gang-upstream": Workload(
        "GangSchedulingUpstream",
        1000,
        0,
        500 * _UPSTREAM_GANG_SIZE,
        node_maker(),
        _default_pod("init"),
        _upstream_gang_pod(_UPSTREAM_GANG_SIZE),
        config=_upstream_gang_config,
        emulated_version=Version(1, 36),
        requires=("GangScheduling",),
        gang_size=_UPSTREAM_GANG_SIZE,
        make_group=_upstream_gang_group(_UPSTREAM_GANG_SIZE),
        note="GenericWorkload and GangScheduling on: the PodGroup cycle of 1.36",
    ),
    "dra-template": Workload(
        "SchedulingWithResourceClaimTemplateStructured",
        500,
        2500,
        2500,
        node_maker(),
        _dra_pod("init"),
        _dra_pod("pod"),
        requires=("DynamicResources",),
        make_objects=_dra_objects,
        devices_per_node=10,
    ),
    "dra-steady": Workload(
        "SteadyStateClusterResourceClaimTemplateStructured",
        500,
        2500,
        2500,
        node_maker(),
        _dra_pod("init"),
        _dra_pod("pod"),
        requires=("DynamicResources",),
        make_objects=_dra_objects,
        devices_per_node=10,
        note="half full: the init pods keep their devices (--init-pods 0: empty, 4500 with --pods 500: full)",
    ),
    "dra-shared-claim": Workload(
        "SchedulingWithResourceClaim",
        500,
        2500,
        2500,
        node_maker(),
        _dra_pod("init", 5),
        _dra_pod("pod", 5),
        requires=("DynamicResources",),
        make_objects=_dra_objects,
        devices_per_node=10,
        pods_per_claim=5,
        note="each ResourceClaim shared by 5 pods",
    ),
}
"""``kubesched bench WORKLOAD`` name → the case at its default (upstream 5000Nodes-class) size."""
