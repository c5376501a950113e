"""The FGD paper's fill experiment, run: ``kubesched trace openb NODES PODS --fill F --config CFG``.

The artifact (hkust-adsl/kubernetes-scheduler-simulator, commit 8f3d641) schedules a shuffled,
inflated task list one task at a time on an empty cluster, nothing ever finishing, and after each
task logs the GPU milli placed and arrived and the cluster's fragmentation
(``pkg/simulator/analysis.go`` ``ClusterGpuFragReport``); ``experiments/analysis/
merge_alloc_discrete.py`` (and ``merge_frag_discrete.py``, ``merge_frag_ratio_discrete.py``) turn
the log into one value per integer percent 0-130 of the cluster's GPUs arrived: the mean over the
tasks whose arrived percent rounds to it (to the nearest even, as Python's ``round``), or over
those within one percent when none does.

Here the tasks and the cluster are the ``cards`` model of :mod:`._openb` (GPU requests as the
artifact's annotations, for a GPU-sharing plugin such as examples/gpushare's Open-Gpu-Share) and
each task goes through the configured profile's scheduling cycle (PreFilter, Filter, PreScore,
Score, host selection, Reserve) against the scheduler's cache, with no queue, binding or clock:
a task that fits nowhere is counted and dropped, as the artifact does.  A task's cards are the
``alibabacloud.com/gpu-index`` its Reserve recorded (the fullest cards that fit when none did).

The fragmentation is the artifact's measure (``pkg/utils/frag.go``: over the typical task types,
the 95 % most frequent of the task list before inflation, each node's idle GPU milli outside the
"satisfied" quadrant), kept per node and updated as tasks land.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import msgspec

from kubesched._transport import Transport, WatchEvent
from kubesched.api._objects import Binding, Event, Node, Pod, convert, uid_for
from kubesched.config._config import SchedulerConfig
from kubesched.runtime._cyclestate import CycleState
from kubesched.runtime._framework import PODS_TO_ACTIVATE_KEY
from kubesched.runtime._infos import PodInfo
from kubesched.runtime._status import FitError
from kubesched.scheduler._binding_cycle import PodsToActivate
from kubesched.scheduler._filterpass import CycleError
from kubesched.scheduler._scheduler import Scheduler
from kubesched.traces._openb import (
    GPU_COUNT,
    GPU_MILLI,
    MODEL_LABEL,
    Options,
    Task,
    TraceNode,
    fill,
    group_units,
    node_object,
    pod_object,
)

GPU_INDEX = "alibabacloud.com/gpu-index"
"""The annotation a GPU-sharing Reserve writes: the cards a task got (``0`` or ``0-1-3``)."""
MILLI = 1000
POPULARITY = 95
FILL_NODE_PODS = 1001
"""Allocatable pods of a node in the run: the artifact's node list (data/node_yaml) says 1001."""


@dataclass
class FillReport:
    """What the run measured; ``allocation`` etc. have one entry per percent 0..100 x factor."""

    nodes: int
    gpus: int
    pods: int
    placed: int = 0
    failed: int = 0
    errors: int = 0
    gpu_milli_placed: int = 0
    allocation: list[float | None] = field(default_factory=list)
    frag_amount: list[float | None] = field(default_factory=list)
    frag_ratio: list[float | None] = field(default_factory=list)

    def to_json(self, *, seed: int, factor: float) -> dict[str, Any]:
        return {"fill": {
            "seed": seed, "factor": factor, "nodes": self.nodes, "gpus": self.gpus, "pods": self.pods,
            "placed": self.placed, "failed": self.failed, "errors": self.errors,
            "gpuMilliPlaced": self.gpu_milli_placed,
            "allocation": self.allocation, "fragAmount": self.frag_amount, "fragRatio": self.frag_ratio,
        }}


# --- the fragmentation measure (pkg/utils/frag.go) -----------------------------------------------
@dataclass(frozen=True, slots=True)
class _Shape:
    cpu: int
    milli: int
    num: int
    models: str


def _shape(t: Task) -> _Shape:
    if t.num_gpu == 0:
        return _Shape(t.cpu_milli, 0, 0, "")
    return _Shape(t.cpu_milli, t.gpu_milli, t.num_gpu, "|".join(t.gpu_spec))


def typical_types(tasks: Sequence[Task]) -> list[tuple[_Shape, float]]:
    """``GetTypicalPods`` (cpu tasks involved, popularity 95 %, step 1)."""
    counts = Counter(_shape(t) for t in tasks)
    total = float(len(tasks))
    if not total:
        return []
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0].cpu, kv[0].milli, kv[0].num, kv[0].models),
                     reverse=True)
    expected = POPULARITY * total / 100.0
    i = 0
    cum = 0.0
    while cum < expected and i < len(ordered):
        cum += ordered[i][1]
        i += 1
    if i >= len(ordered):
        return [(s, c / total) for s, c in ordered]
    return [(s, c / cum) for s, c in ordered[:i]]


def node_frag(free: Sequence[int], cpu_left: int, model: str, typical: Sequence[tuple[_Shape, float]]) -> float:
    """``NodeGpuShareFragAmount`` summed over every quadrant but q3 (satisfied)."""
    idle = sum(free)
    out = 0.0
    for s, freq in typical:
        if s.milli == 0:
            out += freq * idle  # xl_satisfied / xr_lack_cpu: all idle GPU
            continue
        if s.models and (not model or model not in [m for m in s.models.split("|") if m]):
            out += freq * idle  # no_access
            continue
        fits = sum(1 for f in free if f >= s.milli) >= s.num
        if fits and cpu_left >= s.cpu:
            out += freq * sum(f for f in free if f < s.milli)  # q3, less its q2 part
        else:
            out += freq * idle  # q1 / q2 / q4
    return out


# --- the run ---------------------------------------------------------------------------------------
class _NoClient(Transport):
    """The fill never binds, patches or watches: the cycle ends at Reserve."""

    async def watch(self) -> AsyncIterator[WatchEvent]:  # pragma: no cover - never called
        raise RuntimeError("the fill experiment has no cluster to watch")
        yield

    async def bind(self, binding: Binding) -> None:  # pragma: no cover
        raise RuntimeError("the fill experiment does not bind")

    async def patch_pod_status(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover
        raise RuntimeError("the fill experiment does not patch pods")

    async def delete_pod(self, namespace: str, name: str, *, uid: str | None = None) -> None:  # pragma: no cover
        raise RuntimeError("the fill experiment does not delete pods")

    async def record_event(self, event: Event) -> None:  # pragma: no cover
        return None


def fill_tasks(nodes: Sequence[TraceNode], tasks: Sequence[Task], factor: float, seed: int) -> list[Task]:
    """The tasks in the order they arrive (:func:`._openb.fill`: shuffled, then inflated)."""
    capacity = sum(n.gpus for n in nodes) * MILLI
    units = fill(group_units(tasks, "none"), capacity, factor, seed)
    return [t for u in units for t in u.members]


def node_names(nodes: Sequence[TraceNode], seed: int) -> dict[str, str]:
    """Each node's name in the run: ``NNNN-<name>``, NNNN a permutation drawn by the seed over the
    nodes in name order, as the artifact's simulator names the nodes it creates
    (``syncClusterResourceList``).  Its scheduler breaks a tie between nodes by the smallest name,
    so this gives each seed its own fixed preference among equal nodes."""
    ordered = sorted(n.name for n in nodes)
    perm = random.Random(f"kubesched-trace/{seed}/nodes").sample(range(len(ordered)), len(ordered))
    return {name: f"{p:04d}-{name}" for name, p in zip(ordered, perm, strict=True)}


def _objects(nodes: Sequence[TraceNode], order: Sequence[Task], node_pods: int, seed: int
             ) -> tuple[list[Node], list[Pod]]:
    opts = Options(mode="fill", shared_gpu="cards", node_pods=node_pods)
    names = node_names(nodes, seed)
    node_objs = []
    for n in nodes:
        obj = node_object(replace(n, name=names[n.name]), opts)
        node_objs.append(convert(obj, Node))
    pods: list[Pod] = []
    for t in order:
        p: Pod = convert(pod_object(t, {}, {}, opts), Pod)
        p.metadata.uid = uid_for(p.metadata.namespace, p.metadata.name)
        pods.append(p)
    return node_objs, pods


def run_fill(nodes: Sequence[TraceNode], tasks: Sequence[Task], config: SchedulerConfig, *,
             factor: float, seed: int, node_pods: int = FILL_NODE_PODS) -> FillReport:
    """Schedule the fill of ``tasks`` on ``nodes`` with ``config``'s first profile."""
    order = fill_tasks(nodes, tasks, factor, seed)
    report: FillReport = anyio.run(_run, nodes, tasks, order, config, seed, factor, node_pods)
    return report


async def _run(nodes: Sequence[TraceNode], tasks: Sequence[Task], order: Sequence[Task],
               config: SchedulerConfig, seed: int, factor: float, node_pods: int) -> FillReport:
    node_objs, pods = _objects(nodes, order, node_pods, seed)
    names = node_names(nodes, seed)
    nodes = [replace(n, name=names[n.name]) for n in nodes]
    sched = Scheduler(_NoClient(), config, seed=seed)
    for n in node_objs:
        sched.cluster.nodes[n.metadata.name] = n
        sched.cache.add_node(n)
    for p in pods:  # the whole workload is known, as the artifact's typical pods are
        sched.cluster.pods[p.metadata.uid] = p
        sched.cluster.pod_keys[(p.metadata.namespace, p.metadata.name)] = p.metadata.uid
    fw = sched.profiles[config.profiles[0].scheduler_name]
    so = sched.scheduling
    gpus = sum(n.gpus for n in nodes)
    report = FillReport(nodes=len(nodes), gpus=gpus, pods=len(order))
    typical = typical_types(tasks)
    free = {n.name: [MILLI] * n.gpus for n in nodes}
    cpu_left = {n.name: n.cpu_milli for n in nodes}
    model = {n.name: n.model for n in nodes}
    frag = {n.name: node_frag(free[n.name], cpu_left[n.name], n.model, typical) for n in nodes}
    frag_total = sum(frag.values())
    idle_total = gpus * MILLI
    arrived = used = 0
    rows: list[tuple[int, int, float, float]] = [(0, 0, frag_total, _ratio(frag_total, idle_total))]
    for t, pod in zip(order, pods, strict=True):
        arrived += t.gpu_request
        pi = PodInfo(pod)
        state = CycleState()
        state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
        try:
            result = await so.schedule_pod(fw, state, pi)
        except FitError:
            report.failed += 1
        except CycleError:
            report.errors += 1
        else:
            host = result.suggested_host
            assumed = msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=host))
            api = pi.with_pod(assumed)
            sched.cache.assume_pod(api, host)
            st = fw.run_reserve_plugins_reserve(state, assumed, host)
            if st is not None and not st.is_success():
                await fw.run_reserve_plugins_unreserve(state, assumed, host)
                sched.cache.forget_pod(api.uid)
                report.errors += 1
            else:
                report.placed += 1
                used += t.gpu_request
                cards = free[host]
                if t.num_gpu:
                    for c in _cards_of(assumed, cards, t):
                        cards[c] -= t.gpu_milli
                    idle_total -= t.gpu_request
                cpu_left[host] -= t.cpu_milli
                new = node_frag(cards, cpu_left[host], model[host], typical)
                frag_total += new - frag[host]
                frag[host] = new
        rows.append((arrived, used, frag_total, _ratio(frag_total, idle_total)))
    report.gpu_milli_placed = used
    steps = round(100 * factor)
    report.allocation, report.frag_amount, report.frag_ratio = _discrete(rows, gpus, steps)
    return report


def _ratio(frag: float, idle: int) -> float:
    return 100 * frag / idle if idle else 0.0


def _cards_of(pod: Pod, free: list[int], t: Task) -> list[int]:
    ann = pod.metadata.annotations or {}
    text = ann.get(GPU_INDEX, "")
    try:
        cards = [int(x) for x in text.split("-")] if text else []
    except ValueError:
        cards = []
    if len(cards) == t.num_gpu and all(0 <= c < len(free) and free[c] >= t.gpu_milli for c in cards):
        return cards
    out: list[int] = []
    for c in sorted(range(len(free)), key=lambda c: free[c]):  # NodeResource.Add without an index
        if len(out) == t.num_gpu:
            break
        if free[c] >= t.gpu_milli:
            out.append(c)
    return out


def _discrete(rows: Sequence[tuple[int, int, float, float]], gpus: int, steps: int
              ) -> tuple[list[float | None], list[float | None], list[float | None]]:
    """``merge_alloc_discrete.py`` and its frag siblings: per integer percent arrived."""
    by: dict[int, list[int]] = {}
    arrive = [round(a / gpus / 10) if gpus else 0 for a, _, _, _ in rows]
    for i, r in enumerate(arrive):
        by.setdefault(r, []).append(i)
    alloc_ratio = [round(u / gpus / 10, 2) if gpus else 0.0 for _, u, _, _ in rows]
    alloc: list[float | None] = []
    amount: list[float | None] = []
    ratio: list[float | None] = []
    for pct in range(steps + 1):
        idx = by.get(pct)
        if not idx:
            idx = [i for k in (pct - 1, pct, pct + 1) for i in by.get(k, [])]
        if not idx:
            alloc.append(None)
            amount.append(None)
            ratio.append(None)
            continue
        alloc.append(round(sum(alloc_ratio[i] for i in idx) / len(idx), 2))
        amount.append(round(100 * (sum(rows[i][2] for i in idx) / len(idx)) / 1000 / gpus, 2) if gpus else 0.0)
        ratio.append(round(sum(rows[i][3] for i in idx) / len(idx), 2))
    return alloc, amount, ratio


__all__ = ["GPU_COUNT", "GPU_INDEX", "GPU_MILLI", "MODEL_LABEL", "FillReport", "fill_tasks", "node_frag",
           "run_fill", "typical_types", "FILL_NODE_PODS"]
