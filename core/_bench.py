"""``kubesched bench``: scheduler_perf-shaped workloads on the fake cluster, in wall-clock time.

Workloads (test/integration/scheduler_perf/config/performance-config.yaml):

- ``basic`` — SchedulingBasic: nodes from node-default.yaml (4 CPU, 32Gi, 110 pods), init pods
  and measured pods from pod-default.yaml (100m CPU, 500Mi).

Prints pods/s over the measured pods and the scheduling-attempt latency (pop → bound) p50/p99.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import numpy as np

from ._config import SchedulerConfig
from ._objects import Node, Pod
from .testing import make_node, make_pod


@dataclass
class Workload:
    name: str
    nodes: int
    init_pods: int
    pods: int
    make_node: Callable[[int], Node]
    make_init_pod: Callable[[int], Pod]
    make_pod: Callable[[int], Pod]
    config: Callable[[], SchedulerConfig] = SchedulerConfig


def _default_node(i: int) -> Node:
    return (
        make_node(f"node-{i}")
        .capacity(cpu="4", memory="32Gi", pods="110")
        .label("topology.kubernetes.io/zone", f"zone-{i % 3}")
        .obj()
    )


def _default_pod(prefix: str) -> Callable[[int], Pod]:
    def build(i: int) -> Pod:
        return make_pod(f"{prefix}-{i}", "sched-perf").req(cpu="100m", memory="500Mi").obj()

    return build


WORKLOADS: dict[str, Workload] = {
    "basic": Workload("SchedulingBasic", 5000, 1000, 10000, _default_node, _default_pod("init"), _default_pod("pod")),
}


@dataclass
class BenchResult:
    workload: str
    nodes: int
    pods: int
    seconds: float
    pods_per_second: float
    p50_ms: float
    p99_ms: float
    attempts: int

    def text(self) -> str:
        return (
            f"{self.workload}: {self.nodes} nodes, {self.pods} pods in {self.seconds:.2f}s: "
            f"{self.pods_per_second:.0f} pods/s; scheduling attempt latency "
            f"p50 {self.p50_ms:.2f} ms, p99 {self.p99_ms:.2f} ms ({self.attempts} attempts)"
        )


async def run_workload(w: Workload) -> BenchResult:
    """Schedule the init pods, then time the measured pods from creation to the last bind."""
    from kubesched.transports.fake import FakeCluster

    from ._scheduler import Scheduler

    async with FakeCluster() as cluster:
        for i in range(w.nodes):
            cluster.create(w.make_node(i))
        sched = Scheduler(cluster, w.config(), record_timings=True)
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)
            for i in range(w.init_pods):
                cluster.create(w.make_init_pod(i))
            await _wait_bound(sched, w.init_pods)
            sched.metrics.attempt_durations.clear()
            attempts0 = sched.metrics.attempts
            start = anyio.current_time()
            for i in range(w.pods):
                cluster.create(w.make_pod(i))
            await _wait_bound(sched, w.init_pods + w.pods)
            elapsed = anyio.current_time() - start
            tg.cancel_scope.cancel()
    lat = np.array(sched.metrics.attempt_durations or [0.0]) * 1000
    return BenchResult(
        w.name, w.nodes, w.pods, elapsed, w.pods / elapsed if elapsed > 0 else float("inf"),
        float(np.percentile(lat, 50)), float(np.percentile(lat, 99)), sched.metrics.attempts - attempts0,
    )


async def _wait_bound(sched: Any, count: int) -> None:
    while sched.scheduled_count < count:
        if sched.is_idle() and sched.scheduled_count < count and not sched.queue.pending_pods()["active"]:
            pending = sum(len(v) for v in sched.queue.pending_pods().values())
            if pending and not sched.queue.busy():
                raise RuntimeError(f"{pending} pods cannot be scheduled; the workload is broken")
        await anyio.sleep(0.01)


def run_bench(args: argparse.Namespace) -> int:
    from ._errors import ConfigError

    w = WORKLOADS.get(args.workload)
    if w is None:
        raise ConfigError(f"unknown workload {args.workload!r} (known: {', '.join(WORKLOADS)})", field="WORKLOAD")
    if args.nodes is not None:
        w.nodes = args.nodes
    if args.pods is not None:
        w.pods = args.pods
    if args.init_pods is not None:
        w.init_pods = args.init_pods
    result = anyio.run(run_workload, w, backend=args.backend)
    print(json.dumps(result.__dict__) if args.json else result.text())
    return 0
