"""The scheduler (upstream ``scheduler.go``): its construction and its run loops.

``Scheduler.run()`` owns one task group: the informer (the transport's watch, applied to the
cluster state, the cache and the queue), the queue's periodic flushes, the scheduling loop, and
every binding cycle and background task (async preemption, status writes).  Leaving it cancels
everything.  The scheduling cycle (``schedule_one``) is CPU work on a snapshot; the binding cycle
does the I/O in its own task, so a slow bind never stalls scheduling.

The scheduler builds its parts and holds them, each an object given what it works with (upstream
splits ``*Scheduler``'s methods over these files; here they are objects of their own):

    _scheduler.py      Scheduler: construction (profiles, queue, cache, extenders), the run loops
    _eventhandlers.py  handlers   EventHandlers: the informer: watch events ──► cluster state,
                                  cache, queue
    _schedule_one.py   scheduling ScheduleOne: one pod's scheduling cycle, up to its assumed node
    _binding_cycle.py  binding    BindingCycle: the binding cycles, the failure handling
    _driver.py         driver     Driver: (simulations) turns and wake sources, used by the
                                  deterministic loop

Before each cycle the loop drains the watch events already delivered, so cluster changes made at
one virtual instant are always seen by the cycles that run at that instant: the same input gives
the same decisions on either backend.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from kubesched._errors import plain_exception
from kubesched._transport import Transport
from kubesched.api._objects import Pod
from kubesched.api._resources import request_rules
from kubesched.cache._cache import Cache, Snapshot
from kubesched.cache._clusterstate import ClusterState
from kubesched.clock import now as _now
from kubesched.clock import reader, running
from kubesched.config._config import SchedulerConfig
from kubesched.metrics._metrics import Metrics, MetricsRecorder
from kubesched.queue._nominator import Nominator
from kubesched.queue._scheduling_queue import QueuedPodInfo, SchedulingQueue
from kubesched.runtime import _events as ev
from kubesched.runtime._extender import (
    build_extenders,
    ignored_extended_resources,
    with_ignored_resources,
)
from kubesched.runtime._framework import Framework, build_framework
from kubesched.runtime._handle import Handle, HandleParts
from kubesched.runtime._nodeinfo import NodeInfo
from kubesched.scheduler._binding_cycle import BindingCycle
from kubesched.scheduler._driver import Driver
from kubesched.scheduler._eventhandlers import EventHandlers
from kubesched.scheduler._instant import (
    ATTEMPTS_PER_INSTANT,
    LIVELOCK_ATTEMPTS_PER_POD,
    InstantRetries,
)
from kubesched.scheduler._results import ResultRecorder
from kubesched.scheduler._schedule_one import (
    PodsToActivate,
    ScheduleOne,
    ScheduleResult,
    num_feasible_nodes_to_find,
    select_host,
)
from kubesched.scheduler._taskpool import TaskPool

log = logging.getLogger("kubesched")


def _informer_options(config: SchedulerConfig, cluster: ClusterState) -> dict[str, Any]:
    """The informer's options by version and gates: the GangScheduling gate, the emulated minor
    (its metrics' labels), the DynamicResourceAllocation gate; whether DeviceTaintRules patch
    the slices (a rule's change is then a ResourceSlice update for the queue) and, in
    1.33-1.34, the rules' class and CEL selectors over the cluster's classes."""
    from kubesched.dra import legacy_selectors, taint_rules_apply

    gates, version = config.feature_gates, config.emulated_version
    return {
        "gang_scheduling": bool(gates.get("GangScheduling", False)),
        "version": version,
        "dra": gates.get("DynamicResourceAllocation", True),
        "device_taint_rules": taint_rules_apply(gates, version),
        "taint_rule_selectors": legacy_selectors(cluster.device_classes, gates, version),
    }


class Scheduler:
    """A kube-scheduler: profiles (Frameworks), a queue, a cache, over a transport."""

    def __init__(
        self,
        transport: Transport,
        config: SchedulerConfig | None = None,
        *,
        registry: Mapping[str, Callable[[Any, Handle], Any]] | None = None,
        seed: int = 0,
        record_timings: bool = False,
        assumed_pod_ttl: float = 0.0,
        deterministic: bool = False,
        record_plugin_results: bool = False,
        patch_plugin_results: bool = False,
    ) -> None:
        """``deterministic`` (simulations): before each scheduling cycle, let every binding cycle
        and background task that can make progress at this instant finish (or park at Permit),
        so that the same input gives the same decisions on any event loop.  A live scheduler
        leaves it off: a slow bind must never stall the scheduling loop.

        ``record_plugin_results``: record every plugin's result of every attempt as
        kube-scheduler-simulator's annotations (:mod:`kubesched.scheduler._results`), kept in
        ``self.recorder.latest``; ``patch_plugin_results``: also write them onto the pods."""
        from kubesched.runtime._entrypoints import all_plugins

        self.transport = transport
        self.config = config or SchedulerConfig()
        self.registry = all_plugins()  # entry points < in-tree < the caller's registry
        if registry:
            self.registry.update(registry)
        self.rng = random.Random(seed)
        self.cluster = ClusterState()
        # PodLevelResources, InPlacePodVerticalScaling: requests computed by the release's gates
        rules = request_rules(self.config.emulated_version, self.config.feature_gates)
        self.cache = Cache(ttl=assumed_pod_ttl, rules=rules)
        self.snapshot = Snapshot()
        self.metrics = Metrics(record_timings=record_timings)
        if deterministic:
            self.metrics.pod_attempts = {}
        self.record_timings = record_timings
        recorder = None
        if record_plugin_results or patch_plugin_results:
            recorder = ResultRecorder(patch=patch_plugin_results)
        self.profiles: dict[str, Framework] = {}
        # ``buildExtenders``: HTTP extenders, in config order (``extenders: list[Any]`` so tests may
        # put fakes with the same methods); ignoredByScheduler resources go to NodeResourcesFit
        extenders: list[Any] = list(build_extenders(self.config.extenders))
        ignored = ignored_extended_resources([e.config for e in extenders])
        self.deterministic = deterministic
        self.driver = Driver(deterministic, self._drain)
        # the nominator lives in the queue; it is made first, for the profiles' handles
        nominator = Nominator(self._pod_exists)
        wall_clock = getattr(transport, "wall_clock", None)
        parts = HandleParts(
            snapshot=self.snapshot,
            cluster=self.cluster,
            nominator=nominator,
            client=transport,
            record_event=self.record_event,
            instant_writes=self._instant_writes,
            feature_gates=dict(self.config.feature_gates),
            now=anyio.current_time,
            wall_clock=wall_clock if callable(wall_clock) else _no_wall_clock,
            rng=self.rng,
            deterministic=deterministic,
            activate=self._activate,
            spawn=self.spawn,
            park_until=self.driver.park_until,
            extenders=extenders,
            metrics=self.metrics,
            emulated_version=self.config.emulated_version,
        )
        for prof in self.config.profiles:
            fw = build_framework(with_ignored_resources(prof, ignored), self.registry, parts=parts)
            self.profiles[prof.scheduler_name] = fw
        self.queue = SchedulingQueue(
            self.profiles,
            pod_initial_backoff=self.config.pod_initial_backoff_seconds,
            pod_max_backoff=self.config.pod_max_backoff_seconds,
            nominator=nominator,
            queueing_hints=self.config.feature_gates.get("SchedulerQueueingHints", True),
            pop_from_backoff_q=self.config.feature_gates.get("SchedulerPopFromBackoffQ", False),
            requeue_spread_on_assigned_pod=self.config.emulated_version >= (1, 31),
            rules=rules, version=self.config.emulated_version,  # version: the metrics' labels
        )
        self._tg: anyio.abc.TaskGroup | None = None
        self._pool: TaskPool | None = None  # the binding cycles' and background tasks' workers
        self.binding = BindingCycle(
            transport=transport, cluster=self.cluster, cache=self.cache, queue=self.queue,
            extenders=extenders, metrics=self.metrics, driver=self.driver, spawn=self.spawn,
            touch=self._touch,
        )
        _binding_per_version(self)
        self.scheduling = ScheduleOne(
            config=self.config, cache=self.cache, snapshot=self.snapshot, profiles=self.profiles,
            queue=self.queue, extenders=extenders, metrics=self.metrics, rng=self.rng,
            binding=self.binding,
        )
        _add_pod_group_cycle(self, transport)
        self.handlers = EventHandlers(
            transport=transport, cluster=self.cluster, cache=self.cache, queue=self.queue,
            profiles=self.profiles, driver=self.driver, touch=self._touch,
            **_informer_options(self.config, self.cluster),
        )
        self.recorder = recorder
        self._idle_waiter: anyio.Event | None = None  # deterministic wait_idle: set by the loop
        self._activity: anyio.Event | None = None  # live wait_idle: set when something ends
        # (instant, attempts, last pod) when a simulation stopped in a livelock (``_stall``)
        self.stalled: tuple[float, int, str] | None = None
        self._background_tasks = 0
        self.on_idle_check: Callable[[], None] | None = None
        # (simulations) called by the deterministic loop before it sleeps, with the instant: whether
        self.at_rest: Callable[[float], bool] | None = None  # it jumped ahead (QuietSkipper.at_rest)
        self._last_touch = 0.0  # when an activity last ended
        self._clock: Callable[[], float] = _now  # the loop's, while it runs (_keep_clock)

    # --- what the parts keep ----------------------------------------------------------------
    @property
    def recorder(self) -> ResultRecorder | None:
        """The plugin results recorder (``record_plugin_results``), or None; settable."""
        return self.binding.recorder

    @recorder.setter
    def recorder(self, recorder: ResultRecorder | None) -> None:
        self.binding.recorder = self.handlers.recorder = recorder

    @property
    def extenders(self) -> list[Any]:
        """The HTTP extenders (``buildExtenders``), in config order: the one list the parts and
        the profiles' handles share (tests change it in place to put fakes)."""
        return self.scheduling.extenders

    @property
    def scheduled_count(self) -> int:
        """The pods this scheduler bound."""
        return self.binding.scheduled_count

    @property
    def last_activity(self) -> float:
        """When an attempt last began or an activity last ended (``anyio.current_time``)."""
        return max(self._last_touch, self.scheduling.last_attempt)

    def _pod_exists(self, pod: Pod) -> bool:
        return pod.metadata.uid in self.cluster.pods

    def _drain(self) -> None:
        """Handle the watch events already delivered (:meth:`EventHandlers.drain`)."""
        self.handlers.drain()

    async def record_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
        """Record an Event about ``pod`` (:meth:`BindingCycle.record_event`)."""
        await self.binding.record_event(pod, type_, reason, action, note)

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled.  ``task_status.started()`` fires once the cache is synced.

        What ends it otherwise (a watch that fails for good, a bug) comes out as the plain
        exception, not wrapped in the run's task group's ExceptionGroup
        (:func:`kubesched.plain_exception` says which when several tasks failed at once)."""
        error: BaseException | None = None
        try:
            await self._run(task_status)
        except BaseExceptionGroup as group:
            if (error := plain_exception(group)) is None:
                raise
        if error is not None:
            raise error  # outside the handler: the group is not its context

    async def _run(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        try:
            async with running(), anyio.create_task_group() as tg:
                _keep_clock(self)
                self._tg = tg
                self._pool = self.binding.pool = TaskPool(tg)
                tg.start_soon(self.handlers.run)
                await self.handlers.synced.wait()
                if self.deterministic:
                    self.queue.start_ticks()
                else:
                    tg.start_soon(self.queue.run)
                if self.cache.ttl > 0:
                    tg.start_soon(self._cleanup_assumed_pods)
                tg.start_soon(self._deterministic_loop if self.deterministic else self._scheduling_loop)
                task_status.started()
        finally:
            _keep_clock(self, False)
            if self.extenders:  # their HTTP clients
                with anyio.CancelScope(shield=True):
                    for ext in self.extenders:
                        aclose = getattr(ext, "aclose", None)
                        if aclose is not None:
                            await aclose()

    async def _cleanup_assumed_pods(self) -> None:
        """Every second, expire assumed pods whose binding finished long ago (upstream's TTL)."""
        while True:
            await anyio.sleep(1.0)
            for uid in self.cache.cleanup_expired(_now()):
                log.warning("assumed pod %s expired without its Add", uid)
                pod = self.cluster.pods.get(uid)
                if pod is not None:
                    self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, pod, None)

    async def wait_synced(self) -> None:
        await self.handlers.synced.wait()

    def set_metrics_recorder(self, recorder: MetricsRecorder | None) -> None:
        """Record upstream's metrics into ``recorder`` from now on (None: stop), as
        :meth:`MetricsRecorder.attach` asks: the counters, the queue and each profile hold it
        and observe where the work happens."""
        self.metrics.set_recorder(recorder)
        self.queue.metrics_recorder = recorder
        self.handlers.metrics_recorder = recorder
        for fw in self.profiles.values():
            fw.metrics_recorder = recorder

    def spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run ``fn(*args)`` as a background task of the scheduler's task group."""
        assert self._tg is not None and self._pool is not None, "the scheduler is not running"
        self._background_tasks += 1
        self.driver.activate()
        self._pool.start_soon(self._background, fn, args, self.driver.ticket())

    async def _background(
        self, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...], ticket: int | None
    ) -> None:
        try:
            await self.driver.take(ticket)
            await fn(*args)
        except Exception:
            log.exception("background task %s failed", getattr(fn, "__name__", fn))
        finally:
            self.driver.end(ticket)
            self._background_tasks -= 1
            self.driver.deactivate()
            self._touch()

    def _touch(self) -> None:
        self._last_touch = self._clock()
        if self._activity is not None:  # (``_activity_ended``, its call saved when none waits)
            self._activity_ended()

    def _activity_ended(self) -> None:
        """Something the scheduler was busy with ended (an attempt, a binding cycle, a background
        task, a watch event handled): a live :meth:`wait_idle` looks again."""
        event = self._activity
        if event is not None:
            self._activity = None
            event.set()

    def is_idle(self) -> bool:
        """Nothing queued to run, in flight, binding, waiting on Permit, or in the background."""
        if self.queue.busy() or self.binding.tasks or self._background_tasks:
            return False
        if any(fw.waiting_pods for fw in self.profiles.values()):
            return False
        if self.handlers.relist_seen is not None:  # re-listing after a dropped watch
            return False
        pending = getattr(self.handlers.watch, "pending", None)
        return not (callable(pending) and pending())

    def add_wake_source(self, next_due: Callable[[], float | None], run_due: Callable[[], object]) -> None:
        """A timed event source for the deterministic loop: when it is next due, and what to do
        then (e.g. the fake cluster's terminations, a simulation's arrivals)."""
        self.driver.add_wake_source(next_due, run_due)

    def _next_wake(self, *, for_idle: bool = False) -> float | None:
        times = self.driver.source_times()
        times += [t for fw in self.profiles.values() if (t := fw.next_permit_deadline()) is not None]
        if not for_idle or self.queue.busy():
            # only a flush that can move a pod: idle virtual time costs no wall time
            tick = self.queue.next_useful_tick()
            if tick is not None:
                times.append(tick)
        return min(times, default=None)

    async def wait_idle(self) -> None:
        """Wait until the running scheduler has nothing to do: no pod in the active or backoff
        queue or in a scheduling cycle, no binding cycle, no pod waiting on Permit, no background
        task (async preemption, status writes), no watch event delivered but not handled.

        It returns once the scheduler runs and its cache is synced (``await
        tg.start(scheduler.run)``), and it may be called any number of times, by several tasks.
        Pods the scheduler found unschedulable stay pending: that is idle.  A pod that keeps
        failing with an Error is retried after each backoff, for ever: the scheduler is then
        never idle, so bound the wait (``with anyio.fail_after(...)``).

        Live (the default), it looks again whenever an attempt, a binding cycle, a background task
        or a watch event ends: no polling, in real or virtual time.  Deterministic (simulations),
        it also waits for every timed event (arrivals, terminations, Permit timeouts) to have
        run, and returns at once if the simulation stopped in a livelock (``stalled``).
        """
        if not self.handlers.synced.is_set():
            await self.handlers.synced.wait()
        if self.deterministic:
            if self.stalled is not None:
                return
            if self._idle_waiter is None:
                self._idle_waiter = anyio.Event()
            waiter = self._idle_waiter
            if self._next_wake(for_idle=True) is None:
                self.driver.kick()  # the loop may be asleep for good: have it look now
            await waiter.wait()
            return
        while True:
            if self.is_idle():
                # let everything already runnable at this instant run, then look again
                await anyio.lowlevel.checkpoint()
                if self.is_idle():
                    return
                continue
            if self._activity is None:
                self._activity = anyio.Event()
            await self._activity.wait()

    async def _deterministic_loop(self) -> None:
        """One scheduling loop that owns every timed event of a simulation.

        At each instant: let runnable tasks finish (in turn order), then run what is due in a
        fixed order — timed sources (terminations, arrivals), delivered watch events, the queue's
        flushes, Permit timeouts — and only then pop the next pod.  Nothing depends on the
        order in which the event loop runs ready tasks, so asyncio and trio agree exactly.
        """
        self.queue.on_change = self.driver.kick
        # see kubesched.scheduler._instant
        retries = InstantRetries(self.queue.backoff_duration, self.cluster.pod_by_uid, self.queue.done)
        self.driver.add_wake_source(retries.next_due, lambda: None)
        while True:
            await self.driver.settle()
            now = self._run_due()
            if self.driver.active > 0:
                continue
            qpi = retries.pop_due(now) or self.queue.pop_nowait()
            if qpi is not None:
                n = retries.count(now, qpi)
                if n > ATTEMPTS_PER_INSTANT and retries.defer(now, qpi):
                    continue  # popped, in flight: its attempt runs when its backoff is over
                if n > LIVELOCK_ATTEMPTS_PER_POD:
                    _stall(self, now, sum(retries.attempts.values()), qpi)
                    return
                self.driver.begin_cycle()
                try:
                    await self.scheduling.schedule_one(qpi)
                finally:
                    self.driver.end_cycle()
                continue
            if self._idle_waiter is not None and self._next_wake(for_idle=True) is None and self.is_idle():
                self._idle_waiter.set()
                self._idle_waiter = None
            wake = self._next_wake()
            if self.at_rest is not None and self.at_rest(now):
                wake = self._next_wake()  # the state jumped ahead: so did its next flush
            await self.driver.sleep(max(0.0, wake - now) if wake is not None else math.inf)

    def _run_due(self) -> float:
        """:func:`_run_due_steps`, then the instant (nothing is awaited between)."""
        _run_due_steps(self)
        return self._clock()

    async def _scheduling_loop(self) -> None:
        pool = self._pool
        assert pool is not None, "the scheduler is not running"
        while True:
            _run_due_steps(self)
            qpi = self.queue.pop_nowait()
            if qpi is None:
                await self.queue.wait_for_pods()
                continue
            await self.scheduling.schedule_one(qpi)
            if self._activity is not None:
                self._activity_ended()
            await pool.checkpoint()  # the backend's, not looked up a pod

    # --- what the profiles' handles lend ---------------------------------------------------------
    def node_info(self, name: str) -> NodeInfo | None:
        return self.snapshot.get(name)

    def _activate(self, pods: Sequence[Pod]) -> None:
        """The handles' ``activate``: the queue's (built after the profiles)."""
        self.queue.activate(pods)

    def _instant_writes(self) -> bool:
        """The handles' ``instant_writes``: a transport that says its writes complete within
        the call (the fake cluster without injected delays); others are taken not to."""
        return bool(getattr(self.transport, "instant_writes", False))

    async def park_until(self, when: float) -> None:
        """Sleep until ``when`` (``anyio.current_time``) inside a binding cycle, waiting on the
        cluster (VolumeBinding's PreBind), without holding up a simulation's loop: what is due
        meanwhile (a volume provisioned after a delay) still happens (:mod:`kubesched.scheduler._driver`)."""
        await self.driver.park_until(when)


def _run_due_steps(sched: Scheduler) -> None:
    """Everything due at this instant, before the next pop, in a fixed order: timed sources,
    delivered watch events, the queue's periodic flushes, Permit timeouts (the clock read only
    when a pod waits at Permit)."""
    if sched.driver.pre_cycle_hooks:  # (a live scheduler usually has none: no call)
        sched.driver.run_hooks()
    sched.handlers.drain()  # (``Scheduler._drain``, without its call)
    sched.queue.run_due_flushes()
    now: float | None = None
    for fw in sched.profiles.values():
        if fw.waiting_pods:
            if now is None:
                now = sched._clock()
            fw.expire_waiting_pods(now)


def _stall(sched: Scheduler, now: float, attempts: int, qpi: QueuedPodInfo) -> None:
    """Virtual time stopped advancing: pods keep re-entering the active queue at this
    instant (a livelock among plugins, e.g. activations that bypass backoff).  A real
    scheduler would spin here forever; a simulation stops and says so."""
    sched.stalled = (now, attempts, qpi.pod.key)
    if sched._idle_waiter is not None:
        sched._idle_waiter.set()
        sched._idle_waiter = None


def _keep_clock(sched: Scheduler, keep: bool = True) -> None:
    """While the scheduler runs (``keep``, within :func:`clock.running`), it and its queue read
    the loop's clock through :func:`clock.reader` (what :func:`clock.now` reads, without its
    call: a pod reads it a few times); a clock the caller gave the queue stays.  Undone after."""
    clock = reader() if keep else _now
    if sched.queue.now is sched._clock:
        sched.queue.now = clock
    sched._clock = clock


def _no_wall_clock() -> float:
    """The wall clock of a transport that has none."""
    return 0.0

__all__ = [
    "ClusterState",
    "Metrics",
    "PodsToActivate",
    "ScheduleResult",
    "Scheduler",
    "num_feasible_nodes_to_find",
    "select_host",
]


def _binding_per_version(sched: Scheduler) -> None:
    """The binding cycle of the emulated version: NominatedNodeNameForExpectation (alpha 1.34,
    beta on 1.35) runs the PreBindPreFlights, and from 1.36 (kubernetes#135393) the PreBind
    plugins they allow run in parallel."""
    sched.binding.nnn_for_expectation = bool(sched.config.feature_gates.get("NominatedNodeNameForExpectation", False))
    sched.binding.parallel_pre_bind = sched.config.emulated_version >= (1, 36)


def _add_pod_group_cycle(sched: Scheduler, transport: Transport) -> None:
    """v1.36 ScheduleOne: ``genericWorkloadEnabled && pod.Spec.SchedulingGroup != nil`` takes the
    PodGroup cycle; NominatedNodeNameForExpectation (alpha 1.34, beta on 1.35) is
    ``binding.nnn_for_expectation``."""
    if sched.config.feature_gates.get("GenericWorkload", False) and sched.config.emulated_version >= (1, 36):
        from kubesched.scheduler._schedule_one_podgroup import PodGroupCycle

        sched.scheduling.pod_group_cycle = PodGroupCycle(sched.scheduling, sched.cluster, transport)
