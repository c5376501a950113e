"""Timing a scheduler_perf workload: the init pods scheduled first, then the measured pods timed
from their creation to the last bind (pods/s, attempt latency p50/p99, per-gang figures)."""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import numpy as np

from kubesched._errors import ConfigError, plain_exception
from kubesched.api._objects import Pod
from kubesched.bench._capacity import unschedulable_pods
from kubesched.bench._workloads import PROBE, GangProbe, PodMaker, Workload
from kubesched.config._versions import Version
from kubesched.runtime._handle import Handle
from kubesched.scheduler._results import AttemptRecord, ResultRecorder, append_history

__all__ = ["BenchResult", "check_sizes", "run", "run_workload", "sized"]


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
    cpu_ms_per_pod: float = 0.0
    """The process's CPU time over the measured window, per measured pod (what a core spends)."""
    encode_ms: float | None = None
    """With ``--record-plugin-results``: the mean CPU time an attempt spends encoding its plugin
    results into the simulator's annotations (included in the figures above)."""

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
        if self.cpu_ms_per_pod:
            line += f"; CPU {self.cpu_ms_per_pod:.3f} ms a pod"
        if self.encode_ms is not None:
            line += f"; plugin results encoded in {self.encode_ms:.3f} ms an attempt (included)"
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

    check_sizes(w)
    cfg = w.config(w.emulated_version)
    probes: list[GangProbe] = []

    def new_probe(args: Any, handle: Handle) -> GangProbe:
        probes.append(GangProbe(args, handle))
        return probes[-1]

    churned = 0
    async with FakeCluster() as cluster:
        for i in range(w.nodes):
            cluster.create(w.make_node(i))
        for obj in w.make_objects(w) if w.make_objects is not None else ():
            cluster.create(obj)
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
            if w.make_group is not None:  # the gangs' PodGroups exist before their pods
                for g in range(-(-w.pods // max(w.gang_size, 1))):
                    cluster.create(w.make_group(g))
            # the cluster built so far is long-lived: full collections need not walk it again
            # (what a long-running scheduler process does at start-up; undone below)
            gc.freeze()
            start = anyio.current_time()
            cpu0 = time.process_time()
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
            cpu = time.process_time() - cpu0
            gc.unfreeze()
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
        cpu_ms_per_pod=cpu * 1000 / max(w.pods, 1),
    )
    if isinstance(sched.recorder, _DiscardingRecorder) and sched.recorder.encoded:
        result.encode_ms = sched.recorder.encode_seconds * 1000 / sched.recorder.encoded
    if w.gang_size and probes:
        _gang_figures(result, probes[-1], measured, w.gang_size)
    return result


class _DiscardingRecorder(ResultRecorder):
    """Records every attempt's results and encodes them at the end of the attempt, as ``run
    --record-plugin-results`` does; keeps none of them."""

    encoded = 0
    encode_seconds = 0.0

    def finish(self, pod: Pod, record: AttemptRecord) -> None:
        t0 = time.process_time()
        append_history(None, record.annotations())
        self.encode_seconds += time.process_time() - t0
        self.encoded += 1


def _gang_figures(result: BenchResult, probe: GangProbe, measured: list[Pod], size: int) -> None:
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


def check_sizes(w: Workload) -> None:
    """ConfigError when ``w``'s sizes cannot hold its pods (:mod:`kubesched.bench._capacity`):
    before the cluster is built, with the line the stuck check would give after the work."""
    _check_plugins(w)
    pending = unschedulable_pods(w)
    if pending:
        raise _cannot_schedule(pending)


def _cannot_schedule(pending: int) -> ConfigError:
    return ConfigError(
        f"{pending} pods cannot be scheduled on these sizes: the workload needs room for "
        "its pods (leave --nodes, --pods and --init-pods at their defaults, or keep their "
        "proportions)"
    )


def _check_stuck(sched: Any) -> None:
    """The backstop of :func:`check_sizes`: pods pending with nothing left to try."""
    if sched.is_idle() and not sched.queue.pending_pods()["active"]:
        pending = sum(len(v) for v in sched.queue.pending_pods().values())
        if pending and not sched.queue.busy():
            raise _cannot_schedule(pending)


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


def sized(
    w: Workload,
    *,
    nodes: int | None = None,
    pods: int | None = None,
    init_pods: int | None = None,
    record_plugin_results: bool = False,
    emulated_version: Version | None = None,
) -> Workload:
    """``w`` with the sizes given (None: the case's own; measured gang pods: whole gangs), at
    ``emulated_version`` (None: the newest kubesched emulates)."""
    count = w.pods if pods is None else pods
    if w.gang_size:
        count = max(w.gang_size, count - count % w.gang_size)
    return dataclasses.replace(
        w,
        nodes=w.nodes if nodes is None else nodes,
        pods=count,
        init_pods=w.init_pods if init_pods is None else init_pods,
        record_plugin_results=record_plugin_results,
        emulated_version=w.emulated_version if emulated_version is None else emulated_version,
    )


def _unwrapped(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args)``; what fails inside a task group (a ConfigError...) comes out as itself
    (:func:`kubesched.plain_exception`)."""
    try:
        return fn(*args, **kwargs)
    except BaseExceptionGroup as group:
        error = plain_exception(group)
        if error is None:
            raise
    raise error  # outside the handler: the group is not its context


def run(w: Workload, *, progress: Callable[[float, int], None] | None = None, backend: str = "asyncio") -> BenchResult:
    """:func:`run_workload` on a new event loop of ``backend`` (in wall-clock time); a
    ConfigError raised inside the run comes out as itself."""
    return _unwrapped(anyio.run, run_workload, w, progress, backend=backend)  # type: ignore[no-any-return]
