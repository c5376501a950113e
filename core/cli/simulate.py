"""``kubesched simulate``: manifests in, placements and events out, in virtual time.

The contract is DESIGN §8: objects are created in file order at t=0 (or at their
``kubesched.io/arrival`` offset); scheduling starts once every t=0 object is in the scheduler's
cache; the run ends when nothing more can happen (or at ``--until``); the same input and seed
give the same output byte for byte on asyncio and trio.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from .._config import SchedulerConfig
from .._objects import Node, Pod
from .._resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resource, pod_requests
from .._scheduler import Scheduler
from .manifests import Manifest, system_priority_classes
from .output import render_text

UNTIL_EPSILON = 1e-6


@dataclass
class PodRecord:
    pod: Pod
    deleted: bool = False


@dataclass
class SimulationResult:
    """What a simulation produced: the pods (input order), events and summary."""

    pods: list[PodRecord] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """What the user should know about the run itself (stderr, not the output contract)."""
    # ``--explain``: pod uid -> the recorded plugin results (kube-scheduler-simulator's keys)
    results: dict[str, dict[str, str]] | None = None

    def _pod_json(self, rec: PodRecord) -> dict[str, Any]:
        p = rec.pod
        row: dict[str, Any] = {
            "namespace": p.metadata.namespace,
            "name": p.metadata.name,
            "uid": p.metadata.uid,
            "priority": p.spec.priority or 0,
            "nodeName": p.spec.node_name or None,
            "phase": p.status.phase or "Pending",
            "deleted": rec.deleted,
            "nominatedNodeName": p.status.nominated_node_name or None,
            "conditions": [
                {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
                for c in p.status.conditions
            ],
        }
        if self.results is not None:
            row["annotations"] = self.annotations(p)
        return row

    def to_json_obj(self) -> dict[str, Any]:
        pods = [self._pod_json(rec) for rec in self.pods]
        return {"pods": pods, "events": self.events, "summary": self.summary, "nodes": self.nodes}

    def annotations(self, pod: Pod) -> dict[str, str]:
        """The pod's annotations with its recorded plugin results (``--explain``)."""
        recorded = (self.results or {}).get(pod.metadata.uid, {})
        return {**(pod.metadata.annotations or {}), **recorded}

    def write_json(self, write: Callable[[str], object]) -> None:
        """The JSON report, written piece by piece: the same bytes as ``to_json()`` without
        building the whole document (or its dicts) in memory at once."""

        def items(key: str, values: Iterable[Any], last: bool) -> None:
            write(f'  "{key}": [')
            first = True
            for v in values:
                text = json.dumps(v, indent=2, ensure_ascii=False)
                write(("\n" if first else ",\n") + "    " + text.replace("\n", "\n    "))
                first = False
            write("]" if first else "\n  ]")
            write("\n" if last else ",\n")

        write("{\n")
        items("pods", (self._pod_json(rec) for rec in self.pods), False)
        items("events", self.events, False)
        summary = json.dumps(self.summary, indent=2, ensure_ascii=False)
        write('  "summary": ' + summary.replace("\n", "\n  ") + ",\n")
        items("nodes", self.nodes, True)
        write("}\n")

    def to_json(self) -> str:
        parts: list[str] = []
        self.write_json(parts.append)
        return "".join(parts)

    def to_text(self) -> str:
        text = render_text(self)
        if self.results is None:
            return text
        from .explain import explain_pod

        for rec in self.pods:
            text += "\n" + explain_pod(rec.pod.metadata.namespace, rec.pod.metadata.name, self.annotations(rec.pod))
        return text


async def simulate(
    manifests: Sequence[Manifest],
    config: SchedulerConfig | None = None,
    *,
    seed: int = 0,
    until: float = 3600.0,
    registry: dict[str, Any] | None = None,
    progress: Callable[[float, int], None] | None = None,
    explain: bool = False,
) -> SimulationResult:
    """Run a simulation on the current event loop (which must run in virtual time).

    ``progress``, when given, is called with (virtual seconds, pods bound so far) at every pod
    event; it must be cheap and must not touch the run.  ``explain``: record every plugin's
    result of every attempt (``SimulationResult.results``).
    """
    from kubesched.transports.fake import FakeCluster

    order: dict[tuple[str, str], int] = {}
    for m in sorted(manifests, key=lambda m: m.order):
        if m.kind == "Pod":
            order[(m.obj.metadata.namespace, m.obj.metadata.name)] = len(order)
    initial = [m for m in manifests if m.arrival <= 0]
    later = [m for m in manifests if m.arrival > 0]
    records: dict[tuple[str, str], PodRecord] = {}
    async with FakeCluster(kubelet_timers=False) as cluster:
        start = anyio.current_time()
        for pc in system_priority_classes():
            cluster.create(pc)
        for m in initial:
            cluster.create(m.obj)
        sched = Scheduler(
            cluster, config, seed=seed, registry=registry, deterministic=True,
            record_plugin_results=explain,
        )
        watch = cluster.watch()
        pending_arrivals = [len(later)]
        bound: set[tuple[str, str]] = set()
        stop_at = start + until

        def track(event: Any) -> None:
            obj = event.obj
            if isinstance(obj, Pod):
                key = (obj.metadata.namespace, obj.metadata.name)
                rec = records.get(key)
                if rec is None:
                    rec = records[key] = PodRecord(obj)
                rec.pod = obj
                if event.type == "DELETED":
                    rec.deleted = True
                if progress is not None:
                    if obj.spec.node_name:
                        bound.add(key)
                    progress(anyio.current_time() - start, len(bound))

        async def tracker() -> None:
            async for event in watch:
                track(event)

        def next_arrival() -> float | None:
            if not pending_arrivals[0]:
                return None
            return start + later[len(later) - pending_arrivals[0]].arrival

        def due_arrivals() -> None:
            """Create every object whose arrival time has come."""
            now = anyio.current_time()
            while pending_arrivals[0]:
                m = later[len(later) - pending_arrivals[0]]
                if start + m.arrival > now + 1e-9:
                    return
                cluster.create(m.obj)
                pending_arrivals[0] -= 1

        # the scheduler's loop drives every timed event, in a fixed order at each instant
        sched.add_wake_source(cluster.next_termination_time, cluster.run_due_terminations)
        sched.add_wake_source(next_arrival, due_arrivals)

        async with anyio.create_task_group() as tg:
            tg.start_soon(tracker)
            await tg.start(sched.run)
            # ``until`` is exclusive: nothing that happens at exactly that instant is included,
            # so where the run stops never depends on which task runs first
            with anyio.move_on_after(max(0.0, stop_at - UNTIL_EPSILON - anyio.current_time())):
                await sched.wait_idle()
            end = anyio.current_time()
            if end >= stop_at - 2 * UNTIL_EPSILON:
                end = stop_at
            tg.cancel_scope.cancel()
        while (event := watch.get_nowait()) is not None:
            track(event)
        result = SimulationResult()
        if sched.recorder is not None:
            result.results = sched.recorder.latest
        for key in sorted(records, key=lambda k: order.get(k, len(order))):
            result.pods.append(records[key])
        # the deterministic loop makes the order events were recorded in the same on every
        # backend: it is the causal order (a preemptor's FailedScheduling, then its victims')
        result.events = [
            {"time": round(e.time, 6), "type": e.type, "reason": e.reason, "object": e.object, "message": e.message}
            for e in sorted(cluster.events, key=lambda e: round(e.time, 6))
        ]
        if sched.stalled is not None:
            at, attempts, pod = sched.stalled
            result.warnings.append(
                f"livelock at t={round(at - start, 6):g}s: {attempts} scheduling attempts without "
                f"virtual time advancing (the last for {pod}); the simulation stopped there"
            )
        last = max([sched.last_activity - start, *(r["time"] for r in result.events)], default=0.0)
        virtual = round(min(max(last, 0.0), end - start), 6)
        pods = result.pods
        result.summary = {
            "pods": len(pods),
            "scheduled": sum(1 for r in pods if r.pod.spec.node_name and not r.deleted),
            "pending": sum(1 for r in pods if not r.pod.spec.node_name and not r.deleted),
            "deleted": sum(1 for r in pods if r.deleted),
            "preemptions": sched.metrics.preemptions,
            "attempts": sched.metrics.attempts,
            "virtualSeconds": float(virtual),
        }
        node_order = {m.obj.metadata.name: m.order for m in manifests if m.kind == "Node"}
        nodes = sorted(cluster.nodes(), key=lambda n: node_order.get(n.metadata.name, len(node_order)))
        result.nodes = final_allocation(nodes, [r.pod for r in pods if not r.deleted])
        return result


def final_allocation(nodes: Sequence[Node], pods: Sequence[Pod]) -> list[dict[str, Any]]:
    """The JSON ``nodes`` section: each node's capacity and what its pods request, at the end.

    Keys as in the timeline: ``cpu`` in millicores, ``memory`` in bytes, ``pods`` a count, then
    the node's extended resources.  Capacity is the node's allocatable (what the scheduler
    fits against); a pod counts while it is bound and not finished.
    """
    used: dict[str, Resource] = {}
    for pod in pods:
        if pod.spec.node_name and pod.status.phase not in ("Succeeded", "Failed"):
            r = used.setdefault(pod.spec.node_name, Resource())
            r.add(pod_requests(pod))
            r.allowed_pod_number += 1
    out = []
    for node in nodes:
        cap = Resource.from_list(node.status.allocatable)
        alloc = used.get(node.metadata.name, Resource())
        keys = [CPU, MEMORY, PODS]
        keys += sorted(k for k in {*cap.scalar, *alloc.scalar} if k not in keys and k != EPHEMERAL_STORAGE)
        out.append(
            {
                "name": node.metadata.name,
                "capacity": {k: cap.get(k) for k in keys},
                "allocated": {k: alloc.get(k) for k in keys},
            }
        )
    return out
