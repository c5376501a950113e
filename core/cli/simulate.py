"""``kubesched simulate``: manifests in, placements and events out, in virtual time.

The contract is DESIGN §8: objects are created in file order at t=0 (or at their
``kubesched.io/arrival`` offset); scheduling starts once every t=0 object is in the scheduler's
cache; the run ends when nothing more can happen (or at ``--until``); the same input and seed
give the same output byte for byte on asyncio and trio.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from msgspec.structs import replace

from kubesched.api._objects import Node, Pod
from kubesched.api._resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resource, pod_requests
from kubesched.config._config import SchedulerConfig
from kubesched.scheduler._scheduler import Scheduler

from .manifests import MAX_PODS, Manifest, system_priority_classes
from .output import PodRecord as PodRecord
from .output import SimulationResult as SimulationResult

UNTIL_EPSILON = 1e-6
QUIET_LIMIT = 3600.0
"""Without ``--until``, a run also ends when, for this long in virtual time, no pod was
created, bound, finished or deleted, no node changed and nothing timed is left to come: only
pods that keep failing and retrying (an Error status, say) would go on for ever."""


async def simulate(
    manifests: Sequence[Manifest],
    config: SchedulerConfig | None = None,
    *,
    seed: int = 0,
    until: float | None = None,
    registry: dict[str, Any] | None = None,
    progress: Callable[[float, int], None] | None = None,
    explain: bool = False,
    max_pods: int = MAX_PODS,
    metrics: bool = False,
) -> SimulationResult:
    """Run a simulation on the current event loop (which must run in virtual time).

    ``until`` (virtual seconds, exclusive) cuts the run; without it the run goes on until
    nothing more can happen (or until only retries are left, :data:`QUIET_LIMIT`).  A run that
    ends with something still to come says so (``summary.cutShort``, ``warnings``).

    ``progress``, when given, is called with (virtual seconds, pods bound so far) at every pod
    event; it must be cheap and must not touch the run.  ``explain``: record every plugin's
    result of every attempt (``SimulationResult.results``).  ``max_pods``: the most pods the
    cluster's controllers keep at once (a create beyond it is a FailedCreate event and a warning).
    ``metrics``: record kube-scheduler's metrics (in virtual time: :mod:`kubesched.metrics._metrics`)
    and keep their final exposition (``SimulationResult.metrics``).
    """
    from kubesched.transports.fake import FakeCluster
    from kubesched.transports.fake._controllers import controller_of

    order: dict[tuple[str, str], int] = {}
    for m in sorted(manifests, key=lambda m: m.order):
        if m.kind == "Pod":
            order[(m.obj.metadata.namespace, m.obj.metadata.name)] = len(order)
    initial = _owned_first([m for m in manifests if m.arrival <= 0])
    later = [m for m in manifests if m.arrival > 0]
    records: dict[tuple[str, str], PodRecord] = {}
    deletions = sorted((m for m in manifests if m.deletion is not None), key=lambda m: (m.deletion or 0.0, m.order))
    from .whatif import Drains

    drains = Drains(manifests)  # kubesched.io/drain on Nodes (a bad one is bad input, before the run)
    pending_deletions = [0]
    timeline = Timeline()
    workloads: dict[tuple[str, str, str], dict[str, Any]] = {}
    rs_owner: dict[tuple[str, str], tuple[str, str, str]] = {}
    owned: Counter[tuple[str, str, str]] = Counter()  # pods created per owner
    async with FakeCluster(kubelet_timers=False, seed=seed, max_pods=max_pods) as cluster:
        start = anyio.current_time()
        for pc in system_priority_classes():
            cluster.create(pc)
        for m in initial:
            cluster.create(m.obj)
        sched = Scheduler(
            cluster, config, seed=seed, registry=registry, deterministic=True,
            record_plugin_results=explain,
        )
        recorder = None
        if metrics:
            from kubesched.metrics._metrics import MetricsRecorder

            recorder = MetricsRecorder(seed=seed)
            recorder.attach(sched)
        watch = cluster.watch()
        pending_arrivals = [len(later)]
        bound: set[tuple[str, str]] = set()
        stop_at = start + until if until is not None else math.inf
        progress_at = [0.0]  # virtual seconds of the last change in the cluster

        def track(event: Any) -> None:
            obj = event.obj
            now = round(anyio.current_time() - start, 6)
            if isinstance(obj, Pod):
                key = (obj.metadata.namespace, obj.metadata.name)
                rec = records.get(key)
                old = rec.pod if rec is not None else None
                if (
                    old is None
                    or event.type == "DELETED"
                    or old.spec.node_name != obj.spec.node_name
                    or old.status.phase != obj.status.phase
                    or bool(old.metadata.deletion_timestamp) != bool(obj.metadata.deletion_timestamp)
                ):
                    progress_at[0] = now
                if rec is None or rec.pod.metadata.uid != obj.metadata.uid:
                    rec = records[key] = PodRecord(obj, created_at=now)
                    ref = controller_of(obj)
                    if ref is not None:
                        rec.owner = f"{ref.kind}/{obj.metadata.namespace}/{ref.name}"
                        owned[(ref.kind, obj.metadata.namespace, ref.name)] += 1
                rec.pod = obj
                if obj.spec.node_name and rec.scheduled_at is None:
                    rec.scheduled_at = now
                if obj.status.phase == "Succeeded" and rec.finished_at is None:
                    rec.finished_at = now
                if event.type == "DELETED":
                    rec.deleted = True
                timeline.pod(key, obj, event.type == "DELETED", now)
            elif isinstance(obj, Node):
                progress_at[0] = now
                timeline.node(obj, event.type == "DELETED", now)
            elif type(obj).__name__ in ("Job", "ReplicaSet", "Deployment", "StatefulSet"):
                md = obj.metadata
                wkey = (obj.kind, md.namespace, md.name)
                if wkey not in workloads and event.type != "DELETED":
                    workloads[wkey] = {
                        "kind": obj.kind, "namespace": md.namespace, "name": md.name,
                        "createdAt": now, "completedAt": None, "pods": 0,
                    }
                    ref = controller_of(obj)
                    if obj.kind == "ReplicaSet" and ref is not None and ref.kind == "Deployment":
                        rs_owner[(md.namespace, md.name)] = ("Deployment", md.namespace, ref.name)
                w = workloads.get(wkey)
                conds = obj.status.conditions if obj.kind == "Job" else []
                if w is not None and w["completedAt"] is None and any(
                    c.type == "Complete" and c.status == "True" for c in conds
                ):
                    w["completedAt"] = now
            if progress is not None and isinstance(obj, Pod):
                if obj.spec.node_name:
                    bound.add((obj.metadata.namespace, obj.metadata.name))
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
                if m.update:
                    apply_update(cluster, m)
                else:
                    cluster.create(m.obj)
                pending_arrivals[0] -= 1

        def next_timed() -> float | None:
            """When the next arrival, deletion, termination or completion is due."""
            times = [t for t in (next_arrival(), next_deletion(), cluster.next_termination_time(),
                                 cluster.controllers.next_due(), cluster.volumes.next_due(), drains.next_planned())
                     if t is not None]
            return min(times, default=None)

        def next_deletion() -> float | None:
            if pending_deletions[0] >= len(deletions):
                return None
            return start + (deletions[pending_deletions[0]].deletion or 0.0)

        def due_deletions() -> None:
            """Delete every object whose ``kubesched.io/deletion`` time has come."""
            now = anyio.current_time()
            while pending_deletions[0] < len(deletions):
                m = deletions[pending_deletions[0]]
                if start + (m.deletion or 0.0) > now + 1e-9:
                    return
                md = m.obj.metadata
                cluster.delete_now(m.kind, md.namespace, md.name, graceful=True)
                pending_deletions[0] += 1

        # the scheduler's loop drives every timed event, in a fixed order at each instant
        sched.add_wake_source(cluster.next_termination_time, cluster.run_due_terminations)
        sched.add_wake_source(cluster.controllers.next_due, cluster.controllers.run_due)
        sched.add_wake_source(cluster.volumes.next_due, cluster.volumes.run_due)  # provisioning delays
        sched.add_wake_source(next_arrival, due_arrivals)
        sched.add_wake_source(next_deletion, due_deletions)
        drains.bind(cluster, start)
        sched.add_wake_source(drains.next_due, drains.run_due)

        async with anyio.create_task_group() as tg:
            tg.start_soon(tracker)
            await tg.start(sched.run)
            # ``until`` is exclusive: nothing that happens at exactly that instant is included,
            # so where the run stops never depends on which task runs first
            ended = "idle"
            while True:
                deadline = stop_at - UNTIL_EPSILON
                to_come = next_timed()
                if until is None:
                    quiet = start + progress_at[0] + QUIET_LIMIT
                    deadline = max(quiet, to_come + QUIET_LIMIT) if to_come is not None else quiet
                with anyio.move_on_after(max(0.0, deadline - anyio.current_time())) as scope:
                    await sched.wait_idle()
                if not scope.cancelled_caught:
                    break
                if until is not None:
                    ended = "until"
                    break
                if next_timed() is None and anyio.current_time() >= start + progress_at[0] + QUIET_LIMIT - UNTIL_EPSILON:
                    ended = "retrying"
                    break
            end = anyio.current_time()
            # before the binding cycles are cancelled: who still waits on Permit, for whom
            waiting = {
                wp.uid: wp.get_pending_plugins()
                for fw in sched.profiles.values()
                for wp in fw.iterate_over_waiting_pods()
                if not wp.released
            }
            unfinished = {
                "arrivals": pending_arrivals[0],
                "deletions": len(deletions) - pending_deletions[0],
                "terminations": cluster.pending_terminations(),
                "completions": cluster.controllers.pending_completions(),
                "scheduling": sched.queue.pending_count(),
                "waitingOnPermit": len(waiting),
                **({"drains": drains.pending()} if drains else {}),
                **({"provisionings": n} if (n := cluster.volumes.pending_provisionings()) else {}),
            }
            if end >= stop_at - 2 * UNTIL_EPSILON:
                end = stop_at
            metrics_text = None
            if recorder is not None:  # the gauges as the run left them
                from . import prometheus

                metrics_text = prometheus.exposition(prometheus.registry(recorder)).decode()
            tg.cancel_scope.cancel()
        while (event := watch.get_nowait()) is not None:
            track(event)
        result = SimulationResult(metrics=metrics_text)
        if sched.recorder is not None:
            result.results = sched.recorder.latest
        pod_attempts = sched.metrics.pod_attempts or {}
        for key in sorted(records, key=lambda k: order.get(k, len(order))):
            rec = records[key]
            rec.attempts = pod_attempts.get(rec.pod.metadata.uid, 0)
            rec.waiting_on_permit = waiting.get(rec.pod.metadata.uid)
            rec.no_profile = (
                not rec.pod.spec.node_name and not rec.deleted
                and rec.pod.spec.scheduler_name not in sched.profiles
            )
            result.pods.append(rec)
        result.profiles = list(sched.profiles)
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
        result.summary["succeeded"] = sum(1 for r in pods if r.pod.status.phase == "Succeeded")
        result.summary["cutShort"] = None
        result.summary["noProfile"] = sum(1 for r in pods if r.no_profile)
        if ended != "idle" and any(unfinished.values()):
            at = round(end - start, 6)
            result.summary["cutShort"] = {"reason": ended, "at": float(at), **unfinished}
            what = ", ".join(f"{n} {_UNFINISHED[k]}" for k, n in unfinished.items() if n)
            if ended == "until":
                result.warnings.append(f"stopped at --until ({at:g}s of virtual time) with {what} still to come")
            else:
                result.warnings.append(
                    f"stopped at t={at:g}s after {QUIET_LIMIT:g}s of virtual time with nothing but "
                    f"scheduling retries, with {what} still to come; pass --until to run longer"
                )
        if cluster.controllers.refused_creates:
            result.warnings.append(
                f"the cluster held {max_pods} pods (--max-pods), so Jobs and ReplicaSets were refused "
                "pods they wanted (FailedCreate events)"
            )
        result.timeline = timeline.entries
        for (kind, ns, name), n in owned.items():
            if (kind, ns, name) in workloads:
                workloads[(kind, ns, name)]["pods"] += n
            if kind == "ReplicaSet" and (ns, name) in rs_owner and rs_owner[(ns, name)] in workloads:
                workloads[rs_owner[(ns, name)]]["pods"] += n
        result.workloads = list(workloads.values())
        return result


def _owned_first(initial: list[Manifest]) -> list[Manifest]:
    """The t=0 objects in file order, except that a workload another t=0 object names as its
    controller (an exported cluster: Deployment → ReplicaSet → Pods) is created after what it
    controls, so that, as a controller manager starting on a synced cluster, it finds and adopts
    them instead of creating their like again."""
    uids = {m.obj.metadata.uid: m for m in initial if m.obj.metadata.uid}
    owners: set[int] = set()
    for m in initial:
        for ref in m.obj.metadata.owner_references:
            owner = uids.get(ref.uid)
            if ref.controller and owner is not None and owner.kind == ref.kind:
                owners.add(id(owner))
    if not owners:
        return initial
    rank = {"Job": 1, "ReplicaSet": 1, "StatefulSet": 1, "Deployment": 2}
    return sorted(initial, key=lambda m: rank.get(m.kind, 0) if id(m) in owners else 0)


_UNFINISHED = {
    "arrivals": "arrival(s)",
    "deletions": "deletion(s)",
    "terminations": "pod termination(s)",
    "completions": "pod completion(s) (kubesched.io/duration)",
    "scheduling": "pod(s) queued to be scheduled (active or backoff)",
    "waitingOnPermit": "pod(s) waiting on Permit",
    "drains": "node drain(s) (kubesched.io/drain) not begun or with evictions a PodDisruptionBudget refused",
    "provisionings": "volume provisioning(s) (kubesched.io/provisioning-delay)",
}


def apply_update(cluster: Any, m: Manifest) -> None:
    """A later document for an existing object replaces it, as ``kubectl apply`` would: what
    the cluster set (a pod's binding, admission defaults, status) is kept for pods and
    workloads; a Node, PDB or PriorityClass is replaced as written."""
    md = m.obj.metadata
    old = cluster.get(m.kind, md.namespace, md.name)
    if old is None:
        cluster.create(m.obj)  # deleted meanwhile: the document creates it again
        return
    new = m.obj
    if m.kind == "Pod":
        new = replace(
            old,
            metadata=replace(old.metadata, labels=md.labels, annotations=md.annotations, resource_version=""),
            spec=replace(old.spec, tolerations=new.spec.tolerations, scheduling_gates=new.spec.scheduling_gates),
        )
    elif m.kind in ("Job", "ReplicaSet", "Deployment", "StatefulSet"):
        new = replace(new, metadata=replace(new.metadata, uid=old.metadata.uid), status=old.status)
    cluster.update(new)


class Timeline:
    """``timeline``: after each instant at which a pod was created, bound, finished or deleted
    or a node changed, the pending and running pods, and what the running pods of schedulable
    nodes request against those nodes' allocatable (a cordoned node counts in neither).  O(1)
    per event; one entry per instant."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.pending = 0
        self.running = 0
        self.allocated = Resource()
        self.capacity = Resource()
        self._pods: dict[tuple[str, str], tuple[str, Resource | None]] = {}
        self._nodes: dict[str, Resource] = {}  # schedulable nodes' allocatable
        self._on_node: dict[str, Resource] = {}  # node -> what its running pods request

    def pod(self, key: tuple[str, str], pod: Pod, deleted: bool, now: float) -> None:
        old_state, old_req = self._pods.get(key, ("", None))
        if deleted or pod.status.phase in ("Succeeded", "Failed"):
            state = ""
        elif pod.spec.node_name:
            state = "running"
        else:
            state = "pending"
        created = key not in self._pods and not deleted
        if state == old_state and not created:
            if deleted:
                self._pods.pop(key, None)
            return
        if old_state == "pending":
            self.pending -= 1
        elif old_state == "running" and old_req is not None:
            self.running -= 1
            self._charge(pod.spec.node_name, old_req, -1)
        req = None
        if state == "pending":
            self.pending += 1
        elif state == "running":
            self.running += 1
            req = pod_requests(pod)
            req.allowed_pod_number = 1
            self._charge(pod.spec.node_name, req, 1)
        if deleted:
            self._pods.pop(key, None)
        else:
            self._pods[key] = (state, req)
        self._snapshot(now)

    def node(self, node: Node, deleted: bool, now: float) -> None:
        name = node.metadata.name
        old = self._nodes.pop(name, None)
        on_node = self._on_node.get(name)
        if old is not None:
            self.capacity.add(old, -1)
            if on_node is not None:
                self.allocated.add(on_node, -1)
        if not deleted and not node.spec.unschedulable:
            cap = Resource.from_list(node.status.allocatable)
            self._nodes[name] = cap
            self.capacity.add(cap)
            if on_node is not None:
                self.allocated.add(on_node)
        self._snapshot(now)

    def _charge(self, node: str, req: Resource, sign: int) -> None:
        self._on_node.setdefault(node, Resource()).add(req, sign)
        if node in self._nodes:
            self.allocated.add(req, sign)

    def _snapshot(self, now: float) -> None:
        keys = [CPU, MEMORY, PODS]
        extra = {*self.capacity.scalar, *self.allocated.scalar}
        keys += sorted(k for k in extra if k not in keys and k != EPHEMERAL_STORAGE)
        entry = {
            "time": now,
            "pending": self.pending,
            "running": self.running,
            "allocated": {k: self.allocated.get(k) for k in keys},
            "capacity": {k: self.capacity.get(k) for k in keys},
        }
        if self.entries and self.entries[-1]["time"] == now:
            self.entries[-1] = entry
        else:
            self.entries.append(entry)


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
