"""A simulation: manifests in, placements and events out, in virtual time.

The contract (docs/architecture.md, "simulate"): objects are created in file order at t=0 (or at
their ``kubesched.io/arrival`` offset); scheduling starts once every t=0 object is in the
scheduler's cache; the run ends when nothing more can happen (or at ``until``); the same input
and seed give the same output byte for byte on asyncio and trio.

::

    Simulation(manifests, config, seed=..., until=...)    the plan: what arrives, is deleted,
        │                                                  is drained, and when (checked here)
        │ run()  (on an event loop in virtual time; run_in_virtual_time() makes one)
        ▼
    _Run: a FakeCluster with the t=0 objects ─► a Scheduler on it ─► its loop drives every
          timed event (terminations, controllers, provisioning, arrivals, deletions, drains)
          an Observer reads the cluster's watch (records, timeline, workloads)
        │ until idle, ``until``, or only retries for QUIET_LIMIT
        ▼
    SimulationResult: the pods, events, summary, nodes, timeline, workloads, warnings
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from msgspec.structs import replace

from kubesched._errors import ConfigError, plain_exception
from kubesched.api._pvhelpers import vac_matching
from kubesched.api._workload import SCHEDULING_POD_GROUP_KIND
from kubesched.config._config import SchedulerConfig
from kubesched.scenario._config import simulation_config
from kubesched.scenario._gatedfields import apply_gated_fields
from kubesched.scenario._manifests import (
    DURATION_ANNOTATION,
    MAX_PODS,
    Manifest,
    load_manifests,
    system_priority_classes,
)
from kubesched.scenario._workloadapi import check_workload_api
from kubesched.scheduler._quiet import QuietSkipper
from kubesched.scheduler._scheduler import Scheduler
from kubesched.simulation._drains import Drains
from kubesched.simulation._events import EVENT_MODES, fold_events, occurrences
from kubesched.simulation._observer import Observer
from kubesched.simulation._result import SimulationResult, claim_rows
from kubesched.simulation._timeline import final_allocation

UNTIL_EPSILON = 1e-6
QUIET_LIMIT = 3600.0
"""Without ``until``, a run also ends when, for this long in virtual time, no pod was
created, bound, finished or deleted, no node changed and nothing timed is left to come: only
pods that keep failing and retrying (an Error status, say) would go on for ever."""

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


class Simulation:
    """One simulation of ``manifests`` (from :func:`kubesched.scenario.load_manifests`) under
    ``config`` (the defaults when None).

    ``until`` (virtual seconds, exclusive) cuts the run; without it the run goes on until
    nothing more can happen (or until only retries are left, :data:`QUIET_LIMIT`).  A run that
    ends with something still to come says so (``summary.cutShort``, ``warnings``).

    ``progress``, when given, is called with (virtual seconds, pods bound so far) at every pod
    event; it must be cheap and must not touch the run.  ``explain``: record every plugin's
    result of every attempt (``SimulationResult.results``).  ``max_pods``: the most pods the
    cluster's controllers keep at once (a create beyond it is a FailedCreate event and a warning).
    ``metrics``: record kube-scheduler's metrics (in virtual time) and keep their final
    exposition (``SimulationResult.metrics``).  ``events``: ``"series"`` folds isomorphic events
    as the API server keeps them, ``"all"`` keeps one entry per occurrence (:mod:`._events`).

    A bad ``kubesched.io/drain`` is a :class:`~kubesched.ConfigError` here, before any run.  The
    manifests' objects go into the run's cluster: a simulation runs once.
    """

    def __init__(
        self,
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
        events: str = "series",
    ) -> None:
        if events not in EVENT_MODES:
            raise ValueError(f"events: {events!r} is not one of {', '.join(EVENT_MODES)}")
        self.manifests = manifests
        self.config = config
        self.seed = seed
        self.until = until
        self.registry = registry
        self.progress = progress
        self.explain = explain
        self.max_pods = max_pods
        self.metrics = metrics
        self.events = events
        # the plan: each object's time, in the order the run meets them
        self.initial = _owned_first([m for m in manifests if m.arrival <= 0])
        self.arrivals = [m for m in manifests if m.arrival > 0]
        self.deletions = sorted(
            (m for m in manifests if m.deletion is not None), key=lambda m: (m.deletion or 0.0, m.order)
        )
        self.drains = Drains(manifests)  # kubesched.io/drain on Nodes (a bad one is bad input)
        cfg = config if config is not None else SchedulerConfig()
        check_workload_api(manifests, cfg.emulated_version, cfg.feature_gates)
        apply_gated_fields(manifests, cfg.feature_gates)
        if until is None:
            check_can_end(manifests)
        self.pod_order: dict[tuple[str, str], int] = {}
        """(namespace, name) -> the pod's place in the input: the order of ``result.pods``."""
        for m in sorted(manifests, key=lambda m: m.order):
            if m.kind == "Pod":
                self.pod_order[(m.obj.metadata.namespace, m.obj.metadata.name)] = len(self.pod_order)
        self.result: SimulationResult | None = None
        """What the run produced, once it has run."""
        self.skip_quiet = True
        """Skip quiet stretches (:mod:`kubesched.scheduler._quiet`); off runs every retry (the
        differential tests compare the two)."""
        self.skipped_attempts = 0
        """Scheduling attempts the run accounted for without running them (quiet stretches)."""
        self._ran = False

    @classmethod
    def load(
        cls,
        files: Sequence[str],
        *,
        config: str = "",
        feature_gates: str = "",
        validation: str = "Strict",
        texts: dict[str, str] | None = None,
        warn: Callable[[str], object] | None = None,
        **options: Any,
    ) -> Simulation:
        """The simulation of a scenario on disk, checked as ``kubesched simulate`` checks it: the
        manifests of ``files`` (:func:`~kubesched.scenario.load_manifests`, with ``validation``
        and ``warn``), under the KubeSchedulerConfiguration file ``config`` (the defaults when
        empty) and ``feature_gates``.  ``texts`` maps a path to its content, for inputs that are
        not files; ``options`` are the constructor's."""
        max_pods = options.get("max_pods", MAX_PODS)
        manifests = load_manifests(files, texts, validation=validation, warn=warn, max_pods=max_pods)
        cfg = simulation_config(config, feature_gates, (texts or {}).get(config), warn=warn)
        return cls(manifests, cfg, **options)

    async def run(self) -> SimulationResult:
        """Run on the current event loop (which must run in virtual time); the result."""
        from kubesched.transports.fake import FakeCluster

        if self._ran:
            raise RuntimeError("a Simulation runs once: its manifests' objects went into its cluster")
        self._ran = True
        error: BaseException | None = None
        try:
            # ClearingNominatedNodeNameAfterBinding (alpha 1.34, beta on 1.35): the API server
            # clears a pod's nominatedNodeName when it binds it
            cfg = self.config  # None: the default configuration, the newest release's (on)
            clear_nnn = cfg is None or bool(cfg.feature_gates.get("ClearingNominatedNodeNameAfterBinding", False))
            vac = True if cfg is None else vac_matching(cfg.emulated_version, cfg.feature_gates)
            async with FakeCluster(kubelet_timers=False, seed=self.seed, max_pods=self.max_pods,
                                   clear_nominated_node_name_on_binding=clear_nnn,
                                   volume_attributes_class=vac) as cluster:  # fmt: skip
                result = self.result = await _Run(self, cluster).run()
        except BaseExceptionGroup as group:  # from the run's task group: what failed, as itself
            if (error := plain_exception(group)) is None:
                raise
        if error is not None:
            raise error  # outside the handler: the group is not its context
        return result

    def run_in_virtual_time(self, backend: str = "trio") -> SimulationResult:
        """:meth:`run` on a new event loop of ``backend`` (asyncio or trio) in virtual time."""
        from kubesched.transports.fake import virtual_time

        return virtual_time.run(self.run, backend=backend)


_REPLACING = ("Deployment", "ReplicaSet", "StatefulSet")
"""The workloads whose controller replaces a pod that finishes (a Job's pods finish for good)."""


def pod_group_rows(cluster: Any, manifests: Sequence[Manifest]) -> list[dict[str, Any]]:
    """The ``podGroups`` section: each Workload API PodGroup of the input (input order) as the
    cluster has it at the end: its policy, minCount and status conditions."""
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for m in sorted(manifests, key=lambda m: m.order):
        if m.kind != SCHEDULING_POD_GROUP_KIND:
            continue
        md = m.obj.metadata
        if (md.namespace, md.name) in seen:
            continue
        seen.add((md.namespace, md.name))
        pg = cluster.get(SCHEDULING_POD_GROUP_KIND, md.namespace, md.name) or m.obj
        gang = pg.spec.scheduling_policy.gang
        rows.append({
            "namespace": md.namespace,
            "name": md.name,
            "policy": "Gang" if gang is not None else "Basic",
            "minCount": gang.min_count if gang is not None else None,
            "deleted": cluster.get(SCHEDULING_POD_GROUP_KIND, md.namespace, md.name) is None,
            "conditions": [
                {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
                for c in pg.status.conditions
            ],
        })  # fmt: skip
    return rows


def check_can_end(manifests: Sequence[Manifest]) -> None:
    """A run without ``--until`` must be able to end by itself: a Deployment, ReplicaSet or
    StatefulSet that keeps replicas whose pods finish (``kubesched.io/duration`` on its template)
    and is never deleted replaces them for ever.  Refused before any simulation work, naming the
    workload; its last document decides (a later one may scale it to 0 or drop the duration)."""
    last: dict[tuple[str, str, str], Manifest] = {}
    for m in sorted(manifests, key=lambda m: (m.arrival, m.order)):
        if m.kind in _REPLACING:
            md = m.obj.metadata
            last[(m.kind, md.namespace, md.name)] = m
    for m in sorted(last.values(), key=lambda m: m.order):
        spec = m.obj.spec
        replicas = 1 if spec.replicas is None else spec.replicas
        annotations = spec.template.metadata.annotations or {}
        if m.deletion is None and replicas > 0 and DURATION_ANNOTATION in annotations:
            raise ConfigError(
                f"its pods finish ({DURATION_ANNOTATION} on spec.template) and it replaces them "
                "for ever, so the run cannot end by itself: give --until",
                source=m.label,
            )


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
    events: str = "series",
) -> SimulationResult:
    """Run a simulation on the current event loop (which must run in virtual time): the
    :class:`Simulation` of these arguments, run once."""
    sim = Simulation(
        manifests, config, seed=seed, until=until, registry=registry, progress=progress, explain=explain,
        max_pods=max_pods, metrics=metrics, events=events,
    )  # fmt: skip
    return await sim.run()


class _Run:
    """One run of a :class:`Simulation` on its fake cluster: the cluster, the scheduler, the
    observer of the watch, and how far the timed plan has got."""

    def __init__(self, sim: Simulation, cluster: Any) -> None:
        self.sim = sim
        self.cluster = cluster
        self.start = anyio.current_time()
        self.stop_at = self.start + sim.until if sim.until is not None else math.inf
        self.arrived = 0  # of sim.arrivals
        self.deleted = 0  # of sim.deletions
        for pc in system_priority_classes():
            cluster.create(pc)
        for m in sim.initial:
            cluster.create(m.obj)
        self.sched = Scheduler(
            cluster, sim.config, seed=sim.seed, registry=sim.registry, deterministic=True,
            record_plugin_results=sim.explain,
        )  # fmt: skip
        self.recorder: Any = None
        if sim.metrics:
            from kubesched.metrics._metrics import MetricsRecorder

            self.recorder = MetricsRecorder(seed=sim.seed)
            self.recorder.attach(self.sched)
        self.quiet: QuietSkipper | None = None
        if sim.skip_quiet:  # after the recorder: it logs the recorder's draws too
            self.quiet = QuietSkipper(self.sched, cluster.events, lambda: self.stop_at - UNTIL_EPSILON)
            self.sched.at_rest = self.quiet.at_rest
        self.watch = cluster.watch()
        self.observer = Observer(self.start, sim.progress, self.sched.cache.rules)
        # the scheduler's loop drives every timed event, in a fixed order at each instant
        sched = self.sched
        sched.add_wake_source(cluster.next_termination_time, cluster.run_due_terminations)
        sched.add_wake_source(cluster.controllers.next_due, cluster.controllers.run_due)
        sched.add_wake_source(cluster.volumes.next_due, cluster.volumes.run_due)  # provisioning delays
        sched.add_wake_source(self.next_arrival, self.due_arrivals)
        sched.add_wake_source(self.next_deletion, self.due_deletions)
        sim.drains.bind(cluster, self.start)
        sched.add_wake_source(sim.drains.next_due, sim.drains.run_due)

    # --- the timed plan: arrivals and deletions --------------------------------------------------

    def next_arrival(self) -> float | None:
        arrivals = self.sim.arrivals
        return self.start + arrivals[self.arrived].arrival if self.arrived < len(arrivals) else None

    def due_arrivals(self) -> None:
        """Create (or update) every object whose arrival time has come."""
        now = anyio.current_time()
        arrivals = self.sim.arrivals
        while self.arrived < len(arrivals):
            m = arrivals[self.arrived]
            if self.start + m.arrival > now + 1e-9:
                return
            if m.update:
                apply_update(self.cluster, m)
            else:
                self.cluster.create(m.obj)
            self.arrived += 1

    def next_deletion(self) -> float | None:
        deletions = self.sim.deletions
        return self.start + (deletions[self.deleted].deletion or 0.0) if self.deleted < len(deletions) else None

    def due_deletions(self) -> None:
        """Delete every object whose ``kubesched.io/deletion`` time has come."""
        now = anyio.current_time()
        deletions = self.sim.deletions
        while self.deleted < len(deletions):
            m = deletions[self.deleted]
            if self.start + (m.deletion or 0.0) > now + 1e-9:
                return
            md = m.obj.metadata
            self.cluster.delete_now(m.kind, md.namespace, md.name, graceful=True)
            self.deleted += 1

    def next_timed(self) -> float | None:
        """When the next arrival, deletion, termination, completion, provisioning or drain is due."""
        cluster = self.cluster
        times = [t for t in (self.next_arrival(), self.next_deletion(), cluster.next_termination_time(),
                             cluster.controllers.next_due(), cluster.volumes.next_due(),
                             self.sim.drains.next_planned())
                 if t is not None]  # fmt: skip
        return min(times, default=None)

    # --- running ------------------------------------------------------------------------------

    async def run(self) -> SimulationResult:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._observe)
            await tg.start(self.sched.run)
            ended = await self._until_done()
            end = anyio.current_time()
            # before the binding cycles are cancelled: who still waits on Permit, for whom
            waiting = self._waiting_on_permit()
            unfinished = self._unfinished(waiting)
            if end >= self.stop_at - 2 * UNTIL_EPSILON:
                end = self.stop_at
            metrics_text = self._metrics_text()  # the gauges as the run left them
            tg.cancel_scope.cancel()
        while (event := self.watch.get_nowait()) is not None:
            self.observer.see(event)
        return self._result(ended, end, unfinished, waiting, metrics_text)

    async def _observe(self) -> None:
        async for event in self.watch:
            self.observer.see(event)

    async def _until_done(self) -> str:
        """Wait for the end of the run; why it ended: ``idle`` (nothing more can happen),
        ``until``, or ``retrying`` (nothing but retries for :data:`QUIET_LIMIT`)."""
        # ``until`` is exclusive: nothing that happens at exactly that instant is included,
        # so where the run stops never depends on which task runs first
        until = self.sim.until
        while True:
            deadline = self.stop_at - UNTIL_EPSILON
            to_come = self.next_timed()
            if until is None:
                quiet = self.start + self.observer.last_change + QUIET_LIMIT
                deadline = max(quiet, to_come + QUIET_LIMIT) if to_come is not None else quiet
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())) as scope:
                await self.sched.wait_idle()
            if not scope.cancelled_caught:
                return "idle"
            if until is not None:
                return "until"
            quiet_since = self.start + self.observer.last_change + QUIET_LIMIT - UNTIL_EPSILON
            if self.next_timed() is None and anyio.current_time() >= quiet_since:
                return "retrying"

    def _waiting_on_permit(self) -> dict[str, list[str]]:
        """Pod uid -> the plugins it still waits for at Permit."""
        return {
            wp.uid: wp.get_pending_plugins()
            for fw in self.sched.profiles.values()
            for wp in fw.iterate_over_waiting_pods()
            if not wp.released
        }

    def _unfinished(self, waiting: dict[str, list[str]]) -> dict[str, int]:
        """What was still to come when the run ended, by kind."""
        sim, cluster = self.sim, self.cluster
        return {
            "arrivals": len(sim.arrivals) - self.arrived,
            "deletions": len(sim.deletions) - self.deleted,
            "terminations": cluster.pending_terminations(),
            "completions": cluster.controllers.pending_completions(),
            "scheduling": self.sched.queue.pending_count(),
            "waitingOnPermit": len(waiting),
            **({"drains": sim.drains.pending()} if sim.drains else {}),
            **({"provisionings": n} if (n := cluster.volumes.pending_provisionings()) else {}),
        }

    def _metrics_text(self) -> str | None:
        if self.recorder is None:
            return None
        from kubesched.prometheus import exposition, registry

        return exposition(registry(self.recorder)).decode()

    # --- the result ---------------------------------------------------------------------------

    def _result(
        self, ended: str, end: float, unfinished: dict[str, int], waiting: dict[str, list[str]],
        metrics_text: str | None,
    ) -> SimulationResult:
        sched, cluster = self.sched, self.cluster
        result = SimulationResult(metrics=metrics_text)
        if sched.recorder is not None:
            result.results = sched.recorder.latest
        self._pod_records(result, waiting)
        result.profiles = list(sched.profiles)
        # the deterministic loop makes the order events were recorded in the same on every
        # backend: it is the causal order (a preemptor's FailedScheduling, then its victims')
        repeats = self.quiet.repeats if self.quiet is not None else []
        self.sim.skipped_attempts = self.quiet.skipped_attempts if self.quiet is not None else 0
        result.events = (fold_events if self.sim.events == "series" else occurrences)(cluster.events, repeats)
        last_event = max((round(e.time, 6) for e in cluster.events), default=0.0)
        last_event = max([last_event, *(round(r.last_time(), 6) for r in repeats)])
        if sched.stalled is not None:
            at, attempts, pod = sched.stalled
            result.warnings.append(
                f"livelock at t={round(at - self.start, 6):g}s: {attempts} scheduling attempts without "
                f"virtual time advancing (the last for {pod}); the simulation stopped there"
            )
        self._summary(result, end, last_event)
        result.pod_groups = pod_group_rows(cluster, self.sim.manifests)
        node_order = {m.obj.metadata.name: m.order for m in self.sim.manifests if m.kind == "Node"}
        nodes = sorted(cluster.nodes(), key=lambda n: node_order.get(n.metadata.name, len(node_order)))
        result.nodes = final_allocation(nodes, [r.pod for r in result.pods if not r.deleted], self.sched.cache.rules)
        pods = result.pods
        result.summary["succeeded"] = sum(1 for r in pods if r.pod.status.phase == "Succeeded")
        result.summary["cutShort"] = None
        result.summary["noProfile"] = sum(1 for r in pods if r.no_profile)
        result.summary["emulatedVersion"] = str(sched.config.emulated_version)
        if ended != "idle" and any(unfinished.values()):
            self._cut_short(result, ended, end, unfinished)
        if cluster.controllers.refused_creates:
            result.warnings.append(
                f"the cluster held {self.sim.max_pods} pods (--max-pods), so Jobs and ReplicaSets were refused "
                "pods they wanted (FailedCreate events)"
            )
        result.timeline = self.observer.timeline.entries
        result.workloads = self.observer.workload_rows()
        result.claims = claim_rows(cluster.list("ResourceClaim"))
        return result

    def _pod_records(self, result: SimulationResult, waiting: dict[str, list[str]]) -> None:
        """``result.pods``: every pod the run saw, in input order (then in order of creation)."""
        order = self.sim.pod_order
        records = self.observer.records
        pod_attempts = self.sched.metrics.pod_attempts or {}
        profiles = self.sched.profiles
        for key in sorted(records, key=lambda k: order.get(k, len(order))):
            rec = records[key]
            rec.attempts = pod_attempts.get(rec.pod.metadata.uid, 0)
            rec.waiting_on_permit = waiting.get(rec.pod.metadata.uid)
            rec.no_profile = (
                not rec.pod.spec.node_name and not rec.deleted and rec.pod.spec.scheduler_name not in profiles
            )
            result.pods.append(rec)

    def _summary(self, result: SimulationResult, end: float, last_event: float) -> None:
        sched = self.sched
        last = max(sched.last_activity - self.start, last_event)
        virtual = round(min(max(last, 0.0), end - self.start), 6)
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

    def _cut_short(self, result: SimulationResult, ended: str, end: float, unfinished: dict[str, int]) -> None:
        at = round(end - self.start, 6)
        result.summary["cutShort"] = {"reason": ended, "at": float(at), **unfinished}
        what = ", ".join(f"{n} {_UNFINISHED[k]}" for k, n in unfinished.items() if n)
        if ended == "until":
            result.warnings.append(f"stopped at --until ({at:g}s of virtual time) with {what} still to come")
        else:
            result.warnings.append(
                f"stopped at t={at:g}s after {QUIET_LIMIT:g}s of virtual time with nothing but "
                f"scheduling retries, with {what} still to come; pass --until to run longer"
            )


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
