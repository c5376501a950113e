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
from .._objects import Pod
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

    @staticmethod
    def _pod_json(rec: PodRecord) -> dict[str, Any]:
        p = rec.pod
        return {
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

    def to_json_obj(self) -> dict[str, Any]:
        pods = [self._pod_json(rec) for rec in self.pods]
        return {"pods": pods, "events": self.events, "summary": self.summary}

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
        write('  "summary": ' + summary.replace("\n", "\n  ") + "\n}\n")

    def to_json(self) -> str:
        parts: list[str] = []
        self.write_json(parts.append)
        return "".join(parts)

    def to_text(self) -> str:
        return render_text(self)


async def simulate(
    manifests: Sequence[Manifest],
    config: SchedulerConfig | None = None,
    *,
    seed: int = 0,
    until: float = 3600.0,
    registry: dict[str, Any] | None = None,
) -> SimulationResult:
    """Run a simulation on the current event loop (which must run in virtual time)."""
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
        sched = Scheduler(cluster, config, seed=seed, registry=registry, deterministic=True)
        watch = cluster.watch()
        pending_arrivals = [len(later)]
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
        for key in sorted(records, key=lambda k: order.get(k, len(order))):
            result.pods.append(records[key])
        # the deterministic loop makes the order events were recorded in the same on every
        # backend: it is the causal order (a preemptor's FailedScheduling, then its victims')
        result.events = [
            {"time": round(e.time, 6), "type": e.type, "reason": e.reason, "object": e.object, "message": e.message}
            for e in sorted(cluster.events, key=lambda e: round(e.time, 6))
        ]
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
        return result
