"""What the scheduler measures, as kube-scheduler's ``pkg/scheduler/metrics`` does.

Two layers, so that a scheduler nobody watches pays (almost) nothing::

    Metrics           always on, a few integer counters: attempts by result, preemption attempts,
                      preemptions and their victims (a simulation's summary, the bench)
    MetricsRecorder   attached on demand (``kubesched run --metrics-port``, ``simulate
                      --metrics``): upstream's counters and histograms, by profile, in plain
                      Python (no Prometheus here; ``kubesched.cli.prometheus`` renders them)

What the recorder holds, by upstream's metric (names without the ``scheduler_`` prefix):

- ``schedule_attempts_total{result,profile}`` and ``scheduling_attempt_duration_seconds``: every
  attempt, under the pod's own profile, when its result is known — ``scheduled`` at the end of a
  successful binding cycle, ``unschedulable`` / ``error`` in the failure handler (a binding
  failure too), from the pop of the pod to that moment.
- ``scheduling_algorithm_duration_seconds``: the pop to the end of SchedulePod (on a failure,
  to the failure handler: PostFilter included, as upstream's deferred observation).
- ``pod_scheduling_sli_duration_seconds{attempts}`` and ``pod_scheduling_attempts``: at a
  bind, from the pod's first entry into activeQ, by its attempts ("15+" from 15).
- ``framework_extension_point_duration_seconds{extension_point,status,profile}``: every run of
  an extension point (PreEnqueue, PreFilter, Filter, PostFilter, PreScore, Score, Reserve,
  Unreserve, Permit, PreBind, Bind, PostBind).  Filter is the whole Filter pass of a cycle
  (nominated pods included, extenders excluded), as upstream's ``findNodesThatPassFilters``.
- ``plugin_execution_duration_seconds{plugin,extension_point,status}``: each plugin's call, in
  the sampled cycles only (``PLUGIN_METRICS_SAMPLE_PERCENT``, the cycle's
  ``CycleState.record_plugin_metrics``; PreEnqueue samples each run, as upstream's queue).
  Filter and Score plugins are called once per batch of nodes: one sample per call (upstream
  has one per node), its status the first rejection's code.
- ``permit_wait_duration_seconds{result}``: a waiting pod's wait at WaitOnPermit.
- ``queue_incoming_pods_total{queue,event}``: counted by the scheduling queue as pods enter.
- ``event_handling_duration_seconds{event}`` (1.31+): observed by the event handlers
  (``EventHandlers``), each cluster event's handling under its label (``runtime._events.metric_label``).
- ``plugin_evaluation_total{plugin,extension_point,profile}``: counted in plain ints by each
  profile's runners at every call (not sampled), read when asked (:meth:`plugin_evaluations`).
- ``preemption_attempts_total`` and ``preemption_victims``: from :class:`Metrics`.
- ``preemption_goroutines_execution_total{result}`` and
  ``preemption_goroutines_duration_seconds{result}`` (with SchedulerAsyncPreemption): from
  :class:`Metrics`' count of async preemptions, every one ``success`` and observed at 0 s, as
  upstream's ``defer ... WithLabelValues(result).Observe(SinceInSeconds(startTime))`` evaluates
  its label and its duration when the goroutine starts (v1.35.4 ``preemption.go``
  ``prepareCandidateAsync``; the same after v1.36.0).
- the gauges — ``pending_pods{queue}``, ``unschedulable_pods{plugin,profile}``,
  ``goroutines{operation}``, ``cache_size{type}`` — are read from the queue and the cache when
  asked (:meth:`gauges`): no hot-path bookkeeping at all.
- ``batch_attempts_total{profile,result}`` and ``batch_cache_flushed_total{profile,reason}``
  (1.35): the counts OpportunisticBatching keeps anyway (:meth:`batch_counts`).

Which of them a version exposes, and under which name, is the exposition's
(:mod:`kubesched.prometheus`).

Time: every duration is read from anyio's clock (``now``), the scheduler's own clock.  In
``kubesched run`` that is the real monotonic clock; in a simulation it is virtual time, so a
duration is what the simulated cluster saw: the CPU-bound ones (extension points, plugins, the
algorithm) are 0 — nothing takes time in virtual time — while attempts that wait (Permit, a
slow bind) and the SLI (queueing, backoff) carry their virtual seconds.  A simulation's metrics
are then as deterministic as the rest of its output.  The plugin sampling draws from the
recorder's own random source, never the scheduler's, so attaching a recorder changes no decision.

How it is recorded: nothing is wrapped or replaced.  As upstream's ``metricsRecorder``, the
recorder is handed to its owners, and each observes at the point of work, as upstream's runners
do (``defer ... FrameworkExtensionPointDuration.Observe`` in ``RunPreFilterPlugins`` and the
others, ``ObservePluginDurationAsync`` in ``runFilterPlugin`` when the cycle is sampled)::

    MetricsRecorder.attach(scheduler) ──► Scheduler.set_metrics_recorder(recorder)
        Metrics.recorder        attempts, their durations and the SLI (``scheduled``,
                                ``failed``), preemption victims (``preempted``)
        Scheduler               the Filter pass (``find_nodes_that_pass_filters``, as
                                upstream's ``findNodesThatPassFilters``) and the algorithm
                                (``scheduling_cycle``)
        Framework (each)        every extension point it runs, WaitOnPermit; its PluginCalls
                                time each plugin call of a sampled cycle
        SchedulingQueue         every pod entering a sub-queue (``_count``)

Cost: without a recorder, each of those places tests ``recorder is not None`` (per extension
point, per attempt, per pod entering a queue) and goes on; the sampled plugin timing
costs nothing more, as ``CycleState.record_plugin_metrics`` is only ever set with a recorder.
With one, an extension point costs two clock reads, and a sampled cycle two per plugin call.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.clock import now as _now
from kubesched.runtime._status import Status

if TYPE_CHECKING:
    from kubesched.queue._heap import QueuedPodInfo

PLUGIN_METRICS_SAMPLE_PERCENT = 10
"""``pluginMetricsSamplePercent``: the share of scheduling cycles whose plugins are timed."""

SUCCESS = "Success"
ERROR = "Error"
# extension points, as ``framework_extension_point_duration_seconds`` names them
PRE_ENQUEUE, PRE_FILTER, FILTER, POST_FILTER = "PreEnqueue", "PreFilter", "Filter", "PostFilter"
PRE_SCORE, SCORE, RESERVE, UNRESERVE = "PreScore", "Score", "Reserve", "Unreserve"
PERMIT, PRE_BIND, BIND, POST_BIND = "Permit", "PreBind", "Bind", "PostBind"
SCHEDULED, UNSCHEDULABLE, SCHEDULE_ERROR = "scheduled", "unschedulable", "error"


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """``metrics.ExponentialBuckets``, multiplied step by step as Go does (the same floats)."""
    out = []
    for _ in range(count):
        out.append(start)
        start *= factor
    return tuple(out)


ATTEMPT_DURATION_BUCKETS = exponential_buckets(0.001, 2, 15)
ALGORITHM_DURATION_BUCKETS = exponential_buckets(0.001, 2, 15)
SLI_DURATION_BUCKETS = exponential_buckets(0.01, 2, 20)
POD_SCHEDULING_ATTEMPTS_BUCKETS = exponential_buckets(1, 2, 5)
EXTENSION_POINT_BUCKETS = exponential_buckets(0.0001, 2, 12)
PLUGIN_DURATION_BUCKETS = exponential_buckets(0.00001, 1.5, 20)
PERMIT_WAIT_BUCKETS = exponential_buckets(0.001, 2, 15)
PREEMPTION_VICTIMS_BUCKETS = exponential_buckets(1, 2, 7)
PREEMPTION_GOROUTINES_BUCKETS = exponential_buckets(0.01, 2, 20)
EVENT_HANDLING_BUCKETS = exponential_buckets(0.0001, 2, 12)


class Histogram:
    """Observations counted into fixed buckets (upper bounds, inclusive; the last is +Inf)."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[tuple[float, int]]:
        """(upper bound, observations at or below it), +Inf last."""
        out: list[tuple[float, int]] = []
        total = 0
        for bound, n in zip((*self.bounds, float("inf")), self.counts, strict=True):
            total += n
            out.append((bound, total))
        return out


class HistogramVec:
    """One :class:`Histogram` per label values."""

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.series: dict[tuple[str, ...], Histogram] = {}

    def observe(self, labels: tuple[str, ...], value: float) -> None:
        h = self.series.get(labels)
        if h is None:
            h = self.series[labels] = Histogram(self.bounds)
        h.observe(value)


class Metrics:
    """Counters every scheduler keeps, and its :class:`MetricsRecorder` when one is attached."""

    def __init__(self, *, record_timings: bool = False) -> None:
        self.schedule_attempts: dict[str, int] = {SCHEDULED: 0, UNSCHEDULABLE: 0, SCHEDULE_ERROR: 0}
        self.record_timings = record_timings
        self.attempt_durations: list[float] = []
        """With ``record_timings`` (the bench): each successful attempt's duration."""
        self.preemption_attempts = 0
        self.preemptions = 0  # preemptions that chose a node and evicted its victims
        self.preemption_goroutines = 0
        """Async preemptions whose victims are deleted in the background
        (``preemption_goroutines_execution_total``, with SchedulerAsyncPreemption)."""
        self.preemption_victims: list[int] = []
        """Each preemption's victims, while no recorder is attached (then its histogram)."""
        self.pod_attempts: dict[str, int] | None = None
        """Scheduling cycles run per pod uid, when kept (a simulation keeps them for its
        output; a live scheduler does not, as its pods come and go without end)."""
        self.recorder: MetricsRecorder | None = None

    @property
    def attempts(self) -> int:
        return sum(self.schedule_attempts.values())

    def set_recorder(self, recorder: MetricsRecorder | None) -> None:
        """Forward to ``recorder`` from now on; the victims counted so far go to its histogram."""
        self.recorder = recorder
        if recorder is not None:
            for v in self.preemption_victims:
                recorder.preemption_victims.observe(v)
            self.preemption_victims = []

    def preempted(self, victims: int) -> None:
        """A preemption chose a node and evicts its ``victims`` (``PreemptionVictims``)."""
        self.preemptions += 1
        rec = self.recorder
        if rec is None:
            self.preemption_victims.append(victims)
        else:
            rec.preemption_victims.observe(victims)

    def preemption_goroutine(self) -> None:
        """An async preemption deletes its victims in the background (``prepareCandidateAsync``'s
        goroutine)."""
        self.preemption_goroutines += 1

    def sample_plugins(self) -> bool:
        """Whether this scheduling cycle times its plugins (never without a recorder)."""
        rec = self.recorder
        return rec is not None and rec.sample()

    def scheduled(self, profile: str, qpi: QueuedPodInfo, start: float) -> None:
        """``PodScheduled``: the binding cycle bound the pod (``start``: when it was popped)."""
        self.schedule_attempts[SCHEDULED] += 1
        rec = self.recorder
        if rec is None and not self.record_timings:
            return
        now = _now()
        if self.record_timings:
            self.attempt_durations.append(now - start)
        if rec is not None:
            rec.pod_scheduled(profile, qpi, now, start)

    def failed(self, rejected: bool, profile: str, uid: str, start: float) -> None:
        """``PodUnschedulable`` / ``PodScheduleError``, from the failure handler."""
        result = UNSCHEDULABLE if rejected else SCHEDULE_ERROR
        self.schedule_attempts[result] += 1
        rec = self.recorder
        if rec is not None:
            rec.pod_failed(result, profile, uid, start)


def status_code(out: Any) -> str:
    """The status label of a runner's or plugin's result: a Status's code, the first Status of
    a tuple (``(result, status)``), or Success."""
    if isinstance(out, Status):
        return out.code.label
    if isinstance(out, tuple):
        for item in out:
            if isinstance(item, Status):
                return item.code.label
    return SUCCESS


def batch_code(out: Any) -> str:
    """A batch Filter result's label: the first rejection's code, Success if none."""
    if not out:
        return SUCCESS
    statuses = getattr(out, "statuses", None)
    values: Iterable[Any] = statuses if statuses is not None else out.values()
    for st in values:
        if isinstance(st, Status) and not st.is_success():
            return st.code.label
    return SUCCESS


class MetricsRecorder:
    """Upstream's scheduler metrics for one or more schedulers in turn (``kubesched run``
    builds a new Scheduler each time it becomes the leader: the totals carry on)."""

    def __init__(self, *, seed: int = 0, sample_percent: int = PLUGIN_METRICS_SAMPLE_PERCENT) -> None:
        self.now: Callable[[], float] = _now
        self.rng = random.Random(seed)
        self.sample_percent = sample_percent
        self.attempts: dict[tuple[str, str], int] = {}  # (result, profile)
        self.attempt_duration = HistogramVec(ATTEMPT_DURATION_BUCKETS)  # (result, profile)
        self.algorithm_duration = Histogram(ALGORITHM_DURATION_BUCKETS)
        self.sli_duration = HistogramVec(SLI_DURATION_BUCKETS)  # (attempts,)
        self.pod_scheduling_attempts = Histogram(POD_SCHEDULING_ATTEMPTS_BUCKETS)
        self.extension_point_duration = HistogramVec(EXTENSION_POINT_BUCKETS)  # (point, status, profile)
        self.plugin_duration = HistogramVec(PLUGIN_DURATION_BUCKETS)  # (plugin, point, status)
        self.permit_wait_duration = HistogramVec(PERMIT_WAIT_BUCKETS)  # (result,)
        self.incoming: dict[tuple[str, str], int] = {}  # (queue, event): pod_incoming, from the queue
        self.event_handling_duration = HistogramVec(EVENT_HANDLING_BUCKETS)  # (event,), from the handlers
        self.preemption_victims = Histogram(PREEMPTION_VICTIMS_BUCKETS)
        self.scheduled_after_flush = 0  # pod_scheduled_after_flush_total (Kubernetes 1.36)
        self.profiles: list[str] = []
        self.scheduler: Any = None
        self._preemption_attempts = 0  # of the schedulers before the current one
        self._preemption_goroutines = 0
        self._plugin_evaluations: dict[tuple[str, str, str], int] = {}  # of the schedulers before
        # batch_attempts_total / batch_cache_flushed_total of the schedulers before the current one
        self._batch_attempts: dict[tuple[str, str], int] = {}
        self._batch_flushes: dict[tuple[str, str], int] = {}
        self._algorithm_failed: str | None = None  # the pod whose SchedulePod just failed

    # --- recording ----------------------------------------------------------------------------
    def sample(self) -> bool:
        return self.rng.randrange(100) < self.sample_percent

    def _attempt(self, result: str, profile: str, duration: float) -> None:
        key = (result, profile)
        self.attempts[key] = self.attempts.get(key, 0) + 1
        self.attempt_duration.observe(key, duration)

    def pod_scheduled(self, profile: str, qpi: QueuedPodInfo, now: float, start: float) -> None:
        self._attempt(SCHEDULED, profile, now - start)
        self.pod_scheduling_attempts.observe(qpi.attempts)
        if qpi.flushed:
            self.scheduled_after_flush += 1
        if qpi.initial_attempt_timestamp is not None:
            label = "15+" if qpi.attempts >= 15 else str(qpi.attempts)
            self.sli_duration.observe((label,), now - qpi.initial_attempt_timestamp)

    def pod_failed(self, result: str, profile: str, uid: str, start: float) -> None:
        duration = self.now() - start
        self._attempt(result, profile, duration)
        if self._algorithm_failed == uid:
            self._algorithm_failed = None
            self.algorithm_duration.observe(duration)

    def extension_point(self, point: str, status: str, profile: str, duration: float) -> None:
        self.extension_point_duration.observe((point, status, profile), duration)

    def sampled_extension_point(self, point: str, status: str, profile: str, duration: float) -> None:
        """An extension point observed in the sampled cycles only (v1.35's Sign), as the plugin
        timings are (a quiet-stretch jump replays them with the sampling draws)."""
        self.extension_point_duration.observe((point, status, profile), duration)

    def extension_point_since(self, point: str, status: Status | None, profile: str, start: float) -> None:
        """An extension point's run that began at ``start`` and ended with ``status`` (None:
        Success)."""
        code = SUCCESS if status is None else status.code.label
        self.extension_point_duration.observe((point, code, profile), self.now() - start)

    def permit_waited(self, status: Status | None, start: float) -> None:
        """``permit_wait_duration_seconds``: a waiting pod's WaitOnPermit, from ``start``."""
        self.permit_wait_duration.observe((status_code(status),), self.now() - start)

    def algorithm_start(self) -> float:
        """SchedulePod begins: its start (the failure of an earlier one is forgotten)."""
        self._algorithm_failed = None
        return self.now()

    def algorithm_done(self, start: float) -> None:
        """SchedulePod found a node."""
        self.algorithm_duration.observe(self.now() - start)

    def algorithm_failed(self, uid: str) -> None:
        """SchedulePod failed for pod ``uid``: observed by the failure handler (:meth:`pod_failed`),
        PostFilter included, as upstream's deferred observation."""
        self._algorithm_failed = uid

    def pod_incoming(self, queue: str, event: str) -> None:
        """``queue_incoming_pods_total``: a pod entered ``queue`` on ``event``."""
        key = (queue, event)
        self.incoming[key] = self.incoming.get(key, 0) + 1

    def event_handled(self, label: str, duration: float) -> None:
        """``event_handling_duration_seconds``: an event handler handled the cluster event
        ``label`` in ``duration`` seconds."""
        self.event_handling_duration.observe((label,), duration)

    def plugin(self, name: str, point: str, out: Any, duration: float) -> None:
        self.plugin_duration.observe((name, point, status_code(out)), duration)

    def plugin_code(self, name: str, point: str, code: str, duration: float) -> None:
        self.plugin_duration.observe((name, point, code), duration)

    @property
    def preemption_attempts(self) -> int:
        current = self.scheduler.metrics.preemption_attempts if self.scheduler is not None else 0
        return self._preemption_attempts + current

    @property
    def preemption_goroutines(self) -> int:
        current = self.scheduler.metrics.preemption_goroutines if self.scheduler is not None else 0
        return self._preemption_goroutines + current

    # --- attaching ------------------------------------------------------------------------------
    def attach(self, scheduler: Any) -> None:
        """Record ``scheduler``'s metrics from now on (a later one takes over, the totals kept):
        the scheduler hands this recorder to its counters, its queue and its profiles."""
        if self.scheduler is scheduler:
            return
        if self.scheduler is not None:
            self._preemption_attempts += self.scheduler.metrics.preemption_attempts
            self._preemption_goroutines += self.scheduler.metrics.preemption_goroutines
            self._plugin_evaluations = self.plugin_evaluations()
            self._batch_attempts, self._batch_flushes = self.batch_counts()
        self.scheduler = scheduler
        for name in scheduler.profiles:
            if name not in self.profiles:
                self.profiles.append(name)
        scheduler.set_metrics_recorder(self)

    # --- reading ------------------------------------------------------------------------------
    def plugin_evaluations(self) -> dict[tuple[str, str, str], int]:
        """``plugin_evaluation_total`` by (plugin, extension point, profile): the counts each
        profile's runners keep (``Framework.plugin_evaluations``), added to those of the
        earlier schedulers."""
        out = dict(self._plugin_evaluations)
        sched = self.scheduler
        if sched is not None:
            for profile, fw in sched.profiles.items():
                for (plugin, point), n in fw.plugin_evaluations().items():
                    key = (plugin, point, profile)
                    out[key] = out.get(key, 0) + n
        return out

    def batch_counts(self) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]:
        """``batch_attempts_total`` by (profile, result) and ``batch_cache_flushed_total`` by
        (profile, reason): OpportunisticBatching's own counts (``OpportunisticBatch.attempts`` /
        ``.flushes``, none when the gate is off), added to those of the earlier schedulers."""
        attempts, flushes = dict(self._batch_attempts), dict(self._batch_flushes)
        sched = self.scheduler
        batching = sched.scheduling.batching if sched is not None else None
        if batching is not None:
            for profile, batch in batching.batches.items():
                for result, n in batch.attempts.items():
                    attempts[(profile, result)] = attempts.get((profile, result), 0) + n
                for reason, n in batch.flushes.items():
                    flushes[(profile, reason)] = flushes.get((profile, reason), 0) + n
        return attempts, flushes

    def gauges(self) -> dict[str, dict[tuple[str, ...], float]]:
        """The gauges, read from the current scheduler now: ``pending_pods`` by queue (gated
        pods apart from the unschedulable ones), ``unschedulable_pods`` by (plugin, profile) —
        the queued pods whose last attempt (or PreEnqueue) a plugin rejected, as upstream's
        gauge (incremented then, decremented at the next pop) —, ``goroutines`` by
        operation (the binding cycles running) and ``cache_size`` by type (the cache's
        ``updateMetrics``: its assumed pods, pods and nodes, a node kept for its pods included)."""
        pending: dict[tuple[str, ...], float] = {(q,): 0 for q in ("active", "backoff", "unschedulable", "gated")}
        reasons: dict[tuple[str, ...], float] = {}
        sched = self.scheduler
        if sched is None:
            return {"pending_pods": pending, "unschedulable_pods": reasons, "goroutines": {}, "cache_size": {}}
        for queue, pods in sched.queue.pending_pods().items():
            for qpi in pods:
                label = "gated" if queue == "unschedulable" and qpi.gated else queue
                pending[(label,)] += 1
                profile = qpi.pod.spec.scheduler_name
                for plugin in qpi.unschedulable_plugins | qpi.pending_plugins:
                    reasons[(plugin, profile)] = reasons.get((plugin, profile), 0) + 1
        goroutines: dict[tuple[str, ...], float] = {("binding",): float(sched.binding.tasks)}
        cache = sched.cache
        cache_size: dict[tuple[str, ...], float] = {
            ("assumed_pods",): float(sum(1 for st in cache.pod_states.values() if st.assumed)),
            ("pods",): float(len(cache.pod_states)),
            ("nodes",): float(len(cache.node_infos)),
        }
        return {"pending_pods": pending, "unschedulable_pods": reasons, "goroutines": goroutines, "cache_size": cache_size}

