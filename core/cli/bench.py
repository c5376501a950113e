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
``gang``                  GangScheduling/5000Nodes_1000Gangs_3000Pods                 5000/0/3000
                          (podgroup/gangscheduling/performance-config.yaml): 1000 gangs of
                          3 pods of gang-pod.yaml (100m CPU, 100Mi) in gang-ns-0; upstream
                          groups them with a PodGroup (minCount 3), here with the ``Gang``
                          plugin's labels (available-count 3), enabled as in the demo
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

import argparse
import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import numpy as np

from kubesched.api._objects import (
    Affinity,
    LabelSelector,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
)
from kubesched.config._config import SchedulerConfig, parse_config
from kubesched.runtime._entrypoints import all_plugins
from kubesched.scheduler._results import AttemptRecord, ResultRecorder, append_history

from .._errors import ConfigError
from ..hookspecs import hookimpl
from ..testing import make_node, make_pod

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
    config: Callable[[], SchedulerConfig] = SchedulerConfig
    requires: tuple[str, ...] = ()
    """Plugins the case exercises: missing from kubesched.plugins.IN_TREE → ConfigError."""
    gang_size: int = 0
    """Measured pods form gangs of this many (consecutive indices); time per gang attempt."""
    churn: PodMaker | None = None
    """Created every ``churn_interval`` seconds while the measured pods are scheduled."""
    churn_interval: float = 0.2
    note: str = ""
    record_plugin_results: bool = False
    """``--record-plugin-results``: every attempt's plugin results are recorded and encoded
    (then dropped: the annotations of a 5000-node attempt are hundreds of kB)."""


# --- templates (test/integration/scheduler_perf/templates) --------------------------------------


def _nodes(zones: tuple[str, ...] = ()) -> Callable[[int], Node]:
    """node-default.yaml (+ the hostname label, + labelNodePrepareStrategy's zone values)."""

    def build(i: int) -> Node:
        name = f"node-{i}"
        b = make_node(name).capacity(cpu="4", memory="32Gi", pods="110").label(HOSTNAME, name)
        if zones:
            b.label(ZONE, zones[i % len(zones)])
        return b.obj()

    return build


def _default_pod(prefix: str, namespace: str = "sched-perf") -> PodMaker:
    """pod-default.yaml: 100m CPU, 500Mi."""

    def build(i: int) -> Pod:
        return make_pod(f"{prefix}-{i}", namespace).req(cpu="100m", memory="500Mi").obj()

    return build


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

    def build(i: int) -> Pod:
        return (
            make_pod(f"{prefix}-{i}", "sched-perf")
            .node_affinity_in(ZONE, ["zone1", "zone2"])
            .req(cpu="100m", memory="500Mi")
            .obj()
        )

    return build


def _spreading_pod(prefix: str) -> PodMaker:
    """pod-with-topology-spreading.yaml: color=blue, maxSkew 5 on zone, DoNotSchedule."""

    def build(i: int) -> Pod:
        return (
            make_pod(f"{prefix}-{i}", "sched-perf")
            .label("color", "blue")
            .spread(5, ZONE, "DoNotSchedule", LabelSelector(match_labels={"color": "blue"}))
            .req(cpu="100m", memory="500Mi")
            .obj()
        )

    return build


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


# --- profiles ------------------------------------------------------------------------------------


def _with_gates(**gates: bool) -> Callable[[], SchedulerConfig]:
    def build() -> SchedulerConfig:
        cfg = SchedulerConfig()
        cfg.feature_gates = {**cfg.feature_gates, **gates}
        return cfg

    return build


def _gang_config() -> SchedulerConfig:
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
        registry={**all_plugins(), PROBE: _GangProbe},
    )


class _GangProbe:
    """Records, per pod, the start of its first scheduling attempt that got past every other
    PreFilter plugin (for a gang member: past the Gang quorum check) and the time of its bind."""

    name = PROBE

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.started: dict[str, float] = {}
        self.bound: dict[str, float] = {}

    @hookimpl
    def kubesched_pre_filter(self, state: Any, pod: Pod, nodes: Any) -> None:
        self.started.setdefault(pod.metadata.uid, anyio.current_time())

    @hookimpl
    def kubesched_post_bind(self, state: Any, pod: Pod, node_name: str) -> None:
        self.bound[pod.metadata.uid] = anyio.current_time()


# --- the workloads -------------------------------------------------------------------------------

_GANG_SIZE = 3

WORKLOADS: dict[str, Workload] = {
    "basic": Workload(
        "SchedulingBasic", 5000, 1000, 10000, _nodes(), _default_pod("init"), _default_pod("pod")
    ),
    "pod-anti-affinity": Workload(
        "SchedulingPodAntiAffinity",
        5000,
        1000,
        1000,
        _nodes(),
        _pod_affinity_pod("init", "sched-0", anti=True),
        _pod_affinity_pod("pod", "sched-1", anti=True),
        requires=("InterPodAffinity",),
    ),
    "pod-affinity": Workload(
        "SchedulingPodAffinity",
        5000,
        5000,
        1000,
        _nodes(("zone1",)),
        _pod_affinity_pod("init", "sched-0", anti=False),
        _pod_affinity_pod("pod", "sched-1", anti=False),
        requires=("InterPodAffinity",),
    ),
    "topology-spreading": Workload(
        "TopologySpreading",
        5000,
        5000,
        2000,
        _nodes(("moon-1", "moon-2", "moon-3")),
        _default_pod("init"),
        _spreading_pod("pod"),
        requires=("PodTopologySpread",),
    ),
    "node-affinity": Workload(
        "SchedulingNodeAffinity",
        5000,
        5000,
        1000,
        _nodes(("zone1",)),
        _node_affinity_pod("init"),
        _node_affinity_pod("pod"),
        requires=("NodeAffinity",),
    ),
    "preemption": Workload(
        "PreemptionBasic",
        1000,
        4000,
        1000,
        _nodes(),
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
        _nodes(),
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
        _nodes(),
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
        _nodes(),
        _default_pod("init"),
        _gang_pod(_GANG_SIZE),
        config=_gang_config,
        requires=("Gang",),
        gang_size=_GANG_SIZE,
    ),
}
"""``kubesched bench WORKLOAD`` name → the case at its default (upstream 5000Nodes-class) size."""


@dataclass
class BenchResult:
    """The figures of one run."""

    workload: str
    nodes: int
    init_pods: int
    pods: int
    seconds: float
    pods_per_second: float
    p50_ms: float
    p99_ms: float
    attempts: int
    bound: int
    """Measured pods bound at the end (== pods)."""
    gangs: int = 0
    gang_attempt_ms: float | None = None
    gang_attempt_p50_ms: float | None = None
    gang_attempt_p99_ms: float | None = None
    preemption_victims: int = 0
    churn_pods: int = 0
    note: str = ""

    def text(self) -> str:
        line = (
            f"{self.workload}: {self.nodes} nodes, {self.init_pods} init pods, {self.pods} pods in "
            f"{self.seconds:.2f}s: {self.pods_per_second:.0f} pods/s; scheduling attempt latency "
            f"p50 {self.p50_ms:.2f} ms, p99 {self.p99_ms:.2f} ms ({self.attempts} attempts)"
        )
        if self.gang_attempt_ms is not None:
            line += (
                f"; {self.gangs} gangs, time per gang attempt {self.gang_attempt_ms:.2f} ms "
                f"(p50 {self.gang_attempt_p50_ms:.2f}, p99 {self.gang_attempt_p99_ms:.2f})"
            )
        if self.preemption_victims:
            line += f"; {self.preemption_victims} victims"
        if self.churn_pods:
            line += f"; {self.churn_pods} preemptors created"
        if self.note:
            line += f" [{self.note}]"
        return line


def _check_plugins(w: Workload) -> None:
    from kubesched.plugins import IN_TREE

    for name in w.requires:
        if name not in IN_TREE:
            raise ConfigError(
                f"workload {w.name} requires the {name} plugin, which kubesched does not have"
            )


async def run_workload(w: Workload, progress: Callable[[float, int], None] | None = None) -> BenchResult:
    """Schedule the init pods, then time the measured pods from creation to the last bind.

    ``progress``, when given, is told (seconds since the measured pods were created, measured
    pods bound) while the run waits for them.
    """
    from kubesched.scheduler._scheduler import Scheduler
    from kubesched.transports.fake import FakeCluster

    _check_plugins(w)
    cfg = w.config()
    probes: list[_GangProbe] = []

    def new_probe(args: Any, handle: Any) -> _GangProbe:
        probes.append(_GangProbe(args, handle))
        return probes[-1]

    churned = 0
    async with FakeCluster() as cluster:
        for i in range(w.nodes):
            cluster.create(w.make_node(i))
        sched = Scheduler(cluster, cfg, registry={PROBE: new_probe}, record_timings=True)
        if w.record_plugin_results:
            sched.recorder = _DiscardingRecorder()
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)
            for i in range(w.init_pods):
                cluster.create(w.make_init_pod(i))
            await _wait_bound(sched, w.init_pods)
            await _settle(sched)
            sched.metrics.attempt_durations.clear()
            attempts0 = sched.metrics.attempts
            victims0 = sum(sched.metrics.preemption_victims)
            scheduled0 = sched.scheduled_count
            measured = [w.make_pod(i) for i in range(w.pods)]
            start = anyio.current_time()
            if w.churn is not None:
                churn_scope = anyio.CancelScope()

                async def churn(maker: PodMaker = w.churn) -> None:
                    nonlocal churned
                    with churn_scope:
                        while True:
                            cluster.create(maker(churned))
                            churned += 1
                            await anyio.sleep(w.churn_interval)

                tg.start_soon(churn)
            for pod in measured:
                cluster.create(pod)
            await _wait_measured(sched, cluster, scheduled0, measured, progress)
            elapsed = anyio.current_time() - start
            if w.churn is not None:
                churn_scope.cancel()
            await _settle(sched)  # the last binding cycles record their metrics
            bound = sum(1 for p in measured if _bound(cluster, p))
            tg.cancel_scope.cancel()
    lat = np.array(sched.metrics.attempt_durations or [0.0]) * 1000
    result = BenchResult(
        w.name,
        w.nodes,
        w.init_pods,
        w.pods,
        elapsed,
        w.pods / elapsed if elapsed > 0 else float("inf"),
        float(np.percentile(lat, 50)),
        float(np.percentile(lat, 99)),
        sched.metrics.attempts - attempts0,
        bound,
        preemption_victims=sum(sched.metrics.preemption_victims) - victims0,
        churn_pods=churned,
        note=w.note,
    )
    if w.gang_size and probes:
        _gang_figures(result, probes[-1], measured, w.gang_size)
    return result


class _DiscardingRecorder(ResultRecorder):
    """Records every attempt's results and encodes them at the end of the attempt, as ``run
    --record-plugin-results`` does; keeps none of them."""

    def finish(self, pod: Pod, record: AttemptRecord) -> None:
        append_history(None, record.annotations())


def _gang_figures(result: BenchResult, probe: _GangProbe, measured: list[Pod], size: int) -> None:
    spans = []
    for g in range(0, len(measured), size):
        uids = [p.metadata.uid for p in measured[g : g + size]]
        if all(u in probe.bound and u in probe.started for u in uids):
            spans.append(max(probe.bound[u] for u in uids) - min(probe.started[u] for u in uids))
    if spans:
        a = np.array(spans) * 1000
        result.gangs = len(spans)
        result.gang_attempt_ms = float(a.mean())
        result.gang_attempt_p50_ms = float(np.percentile(a, 50))
        result.gang_attempt_p99_ms = float(np.percentile(a, 99))


def _bound(cluster: Any, pod: Pod) -> bool:
    cur = cluster.get_pod(pod.metadata.namespace, pod.metadata.name)
    return cur is not None and bool(cur.spec.node_name)


def _check_stuck(sched: Any) -> None:
    if sched.is_idle() and not sched.queue.pending_pods()["active"]:
        pending = sum(len(v) for v in sched.queue.pending_pods().values())
        if pending and not sched.queue.busy():
            raise ConfigError(
                f"{pending} pods cannot be scheduled on these sizes: the workload needs room for "
                "its pods (leave --nodes, --pods and --init-pods at their defaults, or keep their "
                "proportions)"
            )


async def _settle(sched: Any, limit: float = 1.0) -> None:
    """Until the scheduler is idle (the binding cycles still in flight have finished), or
    ``limit`` seconds."""
    with anyio.move_on_after(limit):
        while not sched.is_idle():
            await anyio.sleep(0.001)


async def _wait_bound(sched: Any, count: int) -> None:
    while sched.scheduled_count < count:
        _check_stuck(sched)
        await anyio.sleep(0.01)


async def _wait_measured(
    sched: Any, cluster: Any, scheduled0: int, measured: list[Pod],
    progress: Callable[[float, int], None] | None = None,
) -> None:
    """Until every measured pod is bound.  Binds are counted first (cheap); the pods are looked
    up only once there have been enough binds, and each bound one only once."""
    remaining = list(measured)
    start, first = anyio.current_time(), sched.scheduled_count
    while True:
        if progress is not None:
            progress(anyio.current_time() - start, min(len(measured), sched.scheduled_count - first))
        if sched.scheduled_count - scheduled0 >= len(remaining):
            remaining = [p for p in remaining if not _bound(cluster, p)]
            if not remaining:
                return
            scheduled0 = sched.scheduled_count
        _check_stuck(sched)
        await anyio.sleep(0.01)


def _sized(w: Workload, args: argparse.Namespace) -> Workload:
    """``w`` with the sizes given on the command line (measured gang pods: whole gangs)."""
    pods = w.pods if getattr(args, "pods", None) is None else args.pods
    if w.gang_size:
        pods = max(w.gang_size, pods - pods % w.gang_size)
    nodes = getattr(args, "nodes", None)
    init_pods = getattr(args, "init_pods", None)
    return dataclasses.replace(
        w,
        nodes=w.nodes if nodes is None else nodes,
        pods=pods,
        init_pods=w.init_pods if init_pods is None else init_pods,
        record_plugin_results=bool(getattr(args, "record_plugin_results", False)),
    )


def _unwrapped(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args)``; a ConfigError raised inside a task group comes out as itself."""
    try:
        return fn(*args, **kwargs)
    except BaseExceptionGroup as group:
        match, _ = group.split(ConfigError)
        found: BaseException | None = match
        while isinstance(found, BaseExceptionGroup) and len(found.exceptions) == 1:
            found = found.exceptions[0]
        if isinstance(found, ConfigError):
            raise found from None
        raise


def _check_sizes(args: argparse.Namespace) -> None:
    for flag in ("nodes", "pods", "init_pods"):
        value = getattr(args, flag, None)
        least = 0 if flag == "init_pods" else 1
        if value is not None and value < least:
            raise ConfigError(
                f"Invalid value: {value}: must be at least {least}", field=f"--{flag.replace('_', '-')}"
            )


def run_bench(args: argparse.Namespace) -> int:
    """``kubesched bench WORKLOAD|all``: one line (or one JSON object) per workload."""
    if args.workload == "day":
        day = run_day(args)
        print(json.dumps(day) if args.json else (
            f"day: {day['nodes']} nodes, {day['pods']} pods ({day['succeeded']} succeeded, "
            f"{day['attempts']} attempts) over {day['virtualSeconds']:g} virtual seconds in "
            f"{day['wallSeconds']:.1f}s wall, peak RSS {day['peakRssMiB']:.0f} MiB"
        ))  # fmt: skip
        return 0
    if args.workload == "all":
        names = list(WORKLOADS)
    elif args.workload in WORKLOADS:
        names = [args.workload]
    else:
        raise ConfigError(
            f"unknown workload {args.workload!r} (known: all, {', '.join(WORKLOADS)})",
            field="WORKLOAD",
        )
    from .progress import Progress

    _check_sizes(args)
    for name in names:
        w = _sized(WORKLOADS[name], args)
        try:
            with Progress(f"bench {name}", total_pods=w.pods, time_label="elapsed") as progress:
                result = _unwrapped(
                    anyio.run, run_workload, w, progress if progress.enabled else None, backend=args.backend
                )
        except ConfigError as e:
            if args.workload != "all":
                raise
            print(
                json.dumps({"workload": name, "error": str(e)})
                if args.json
                else f"{name}: skipped: {e}"
            )
            continue
        if args.json:
            print(json.dumps({"name": name, **dataclasses.asdict(result)}))
        else:
            print(f"{name}: {result.text()}", flush=True)
    return 0


# --- ``day``: a day of virtual time (simulated time, issue 10) ---------------------------------

DAY_NODES = 5000
DAY_PODS = 100_000


def day_manifests(nodes: int = DAY_NODES, pods: int = DAY_PODS, *, seed: int = 0) -> list[Any]:
    """A day of work on ``nodes`` nodes (4 CPU, 32Gi, 110 pods): Deployments holding a tenth
    of ``pods`` for the whole day, and Jobs of 100 pods (parallelism 25; durations 5 to 60
    minutes) arriving evenly over 24 hours for the rest."""
    import random

    from kubesched.api._objects import Deployment, Job, convert

    from .manifests import Manifest

    r = random.Random(seed)
    out: list[Manifest] = []

    def add(obj: Any, kind: str, arrival: float = 0.0) -> None:
        out.append(Manifest(obj, kind, "day", len(out) + 1, arrival, len(out)))

    for i in range(nodes):
        add(_nodes()(i), "Node")
    container = {"name": "c", "image": "x", "resources": {"requests": {"cpu": "", "memory": "1Gi"}}}
    serving = pods // 10
    deployments = max(1, serving // 500)
    for d in range(deployments):
        c = {**container, "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
        add(convert({"metadata": {"name": f"web-{d}", "namespace": "day"}, "spec": {
            "replicas": serving // deployments, "selector": {"matchLabels": {"app": f"web-{d}"}},
            "template": {"metadata": {"labels": {"app": f"web-{d}"}}, "spec": {"containers": [c]}}}}, Deployment),
            "Deployment")  # fmt: skip
    jobs = max(1, (pods - serving) // 100)
    for j in range(jobs):
        minutes = r.choice([5, 10, 15, 30, 45, 60])
        c = {**container, "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}
        arrival = 86400.0 * j / jobs
        add(convert({"metadata": {"name": f"job-{j}", "namespace": "day"}, "spec": {
            "parallelism": 25, "completions": 100,
            "template": {"metadata": {"annotations": {"kubesched.io/duration": f"{minutes}m"}},
                         "spec": {"restartPolicy": "Never", "containers": [c]}}}}, Job),
            "Job", arrival)  # fmt: skip
    out.sort(key=lambda m: (m.arrival, m.order))
    return out


def run_day(args: argparse.Namespace) -> dict[str, Any]:
    """``kubesched bench day``: the simulation's wall time and peak RSS (virtual time inside)."""
    import resource

    from kubesched.transports.fake import virtual_time

    from .simulate import simulate

    nodes = DAY_NODES if args.nodes is None else args.nodes
    pods = DAY_PODS if args.pods is None else args.pods
    manifests = day_manifests(nodes, pods)
    async def main() -> Any:
        return await simulate(manifests, until=86400.0)

    result, wall = virtual_time.run_measured(main, backend=args.backend)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    s = result.summary
    return {
        "workload": "day", "nodes": nodes, "pods": s["pods"], "succeeded": s["succeeded"],
        "scheduled": s["scheduled"], "attempts": s["attempts"], "virtualSeconds": s["virtualSeconds"],
        "timeline": len(result.timeline), "wallSeconds": round(wall, 2), "peakRssMiB": round(rss, 1),
    }  # fmt: skip
