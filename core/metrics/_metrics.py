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
- ``queue_incoming_pods_total{queue,event}``: kept by the scheduling queue (``incoming``).
- ``preemption_attempts_total`` and ``preemption_victims``: from :class:`Metrics`.
- the gauges — ``pending_pods{queue}``, ``unschedulable_pods{plugin,profile}``,
  ``goroutines{operation}`` — are read from the queue when asked (:meth:`gauges`): no hot-path
  bookkeeping at all.

Time: every duration is read from anyio's clock (``now``), the scheduler's own clock.  In
``kubesched run`` that is the real monotonic clock; in a simulation it is virtual time, so a
duration is what the simulated cluster saw: the CPU-bound ones (extension points, plugins, the
algorithm) are 0 — nothing takes time in virtual time — while attempts that wait (Permit, a
slow bind) and the SLI (queueing, backoff) carry their virtual seconds.  A simulation's metrics
are then as deterministic as the rest of its output.  The plugin sampling draws from the
recorder's own random source, never the scheduler's, so attaching a recorder changes no decision.

Cost: without a recorder, the framework's runners are the class's methods, unwrapped; the only
extra work is a flag test per runner (and per Filter/Score plugin call) and a method call or two
per attempt.  :meth:`attach` puts
timed wrappers on the scheduler's and each profile's instances (their ``run_*`` methods), so a
recorder costs two clock reads per extension point, and a sampled cycle two per plugin call.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from kubesched.runtime._status import Status

if TYPE_CHECKING:
    from kubesched.queue._scheduling_queue import QueuedPodInfo

PLUGIN_METRICS_SAMPLE_PERCENT = 10
"""``pluginMetricsSamplePercent``: the share of scheduling cycles whose plugins are timed."""

SUCCESS = "Success"
ERROR = "Error"
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


class _Victims(list[int]):
    """``Metrics.preemption_victims`` while a recorder is attached: each count goes to its
    histogram, and the list stays empty (a long-running scheduler keeps no growing list)."""

    def __init__(self, histogram: Histogram) -> None:
        super().__init__()
        self.histogram = histogram

    def append(self, victims: int) -> None:
        self.histogram.observe(victims)


class Metrics:
    """Counters every scheduler keeps, and its :class:`MetricsRecorder` when one is attached."""

    def __init__(self, *, record_timings: bool = False) -> None:
        self.schedule_attempts: dict[str, int] = {SCHEDULED: 0, UNSCHEDULABLE: 0, SCHEDULE_ERROR: 0}
        self.record_timings = record_timings
        self.attempt_durations: list[float] = []
        """With ``record_timings`` (the bench): each successful attempt's duration."""
        self.preemption_attempts = 0
        self.preemptions = 0  # preemptions that chose a node and evicted its victims
        self.preemption_victims: list[int] = []
        self.pod_attempts: dict[str, int] | None = None
        """Scheduling cycles run per pod uid, when kept (a simulation keeps them for its
        output; a live scheduler does not, as its pods come and go without end)."""
        self.recorder: MetricsRecorder | None = None

    @property
    def attempts(self) -> int:
        return sum(self.schedule_attempts.values())

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
        now = anyio.current_time()
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
        self.now: Callable[[], float] = anyio.current_time
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
        self.incoming: dict[tuple[str, str], int] = {}  # (queue, event), kept by the queue
        self.preemption_victims = Histogram(PREEMPTION_VICTIMS_BUCKETS)
        self.profiles: list[str] = []
        self.scheduler: Any = None
        self._preemption_attempts = 0  # of the schedulers before the current one
        self._algorithm_failed: str | None = None  # the pod whose SchedulePod just failed
        self._extender_time = 0.0  # extenders' Filter time, left out of the Filter pass

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

    def plugin(self, name: str, point: str, out: Any, duration: float) -> None:
        self.plugin_duration.observe((name, point, status_code(out)), duration)

    def plugin_code(self, name: str, point: str, code: str, duration: float) -> None:
        self.plugin_duration.observe((name, point, code), duration)

    @property
    def preemption_attempts(self) -> int:
        current = self.scheduler.metrics.preemption_attempts if self.scheduler is not None else 0
        return self._preemption_attempts + current

    # --- attaching ------------------------------------------------------------------------------
    def attach(self, scheduler: Any) -> None:
        """Record ``scheduler``'s metrics from now on (a later one takes over, the totals kept)."""
        if self.scheduler is scheduler:
            return
        if self.scheduler is not None:
            self._preemption_attempts += self.scheduler.metrics.preemption_attempts
        self.scheduler = scheduler
        metrics: Metrics = scheduler.metrics
        metrics.recorder = self
        for v in metrics.preemption_victims:
            self.preemption_victims.observe(v)
        metrics.preemption_victims = _Victims(self.preemption_victims)
        scheduler.queue.incoming = self.incoming
        for name, fw in scheduler.profiles.items():
            if name not in self.profiles:
                self.profiles.append(name)
            fw.metrics_recorder = self
            self._instrument_framework(fw)
        self._instrument_scheduler(scheduler)

    def _instrument_framework(self, fw: Any) -> None:
        profile = fw.profile_name
        sync_points: list[tuple[str, str, Callable[[Any], Any]]] = [
            ("run_pre_enqueue_plugins", "PreEnqueue", _same),
            ("run_pre_filter_plugins", "PreFilter", _second),
            ("run_pre_score_plugins", "PreScore", _same),
            ("run_score_plugins", "Score", _third),
            ("run_reserve_plugins_reserve", "Reserve", _same),
            ("run_permit_plugins", "Permit", _same),
        ]
        async_points: list[tuple[str, str, Callable[[Any], Any]]] = [
            ("run_post_filter_plugins", "PostFilter", _second),
            ("run_reserve_plugins_unreserve", "Unreserve", _none),
            ("run_pre_bind_plugins", "PreBind", _same),
            ("run_bind_plugins", "Bind", _same),
            ("run_post_bind_plugins", "PostBind", _none),
        ]
        for attr, point, status_of in sync_points:
            setattr(fw, attr, self._timed(getattr(fw, attr), point, profile, status_of))
        for attr, point, status_of in async_points:
            setattr(fw, attr, self._timed_async(getattr(fw, attr), point, profile, status_of))
        wait_on_permit = fw.wait_on_permit

        async def timed_wait_on_permit(pod: Any) -> Any:
            if fw.get_waiting_pod(pod.metadata.uid) is None:
                return await wait_on_permit(pod)
            t0 = self.now()
            st = await wait_on_permit(pod)
            self.permit_wait_duration.observe((status_code(st),), self.now() - t0)
            return st

        fw.wait_on_permit = timed_wait_on_permit

    def _timed(self, fn: Callable[..., Any], point: str, profile: str, status_of: Callable[[Any], Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = self.now()
            out = fn(*args, **kwargs)
            self.extension_point(point, status_code(status_of(out)), profile, self.now() - t0)
            return out

        return timed

    def _timed_async(
        self, fn: Callable[..., Awaitable[Any]], point: str, profile: str, status_of: Callable[[Any], Any]
    ) -> Callable[..., Awaitable[Any]]:
        async def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = self.now()
            out = await fn(*args, **kwargs)
            self.extension_point(point, status_code(status_of(out)), profile, self.now() - t0)
            return out

        return timed

    def _instrument_scheduler(self, sched: Any) -> None:
        filter_pass = sched.find_nodes_that_pass_filters
        pass_extenders = sched._pass_extenders
        schedule_pod = sched.schedule_pod

        async def timed_filter_pass(fw: Any, *args: Any, **kwargs: Any) -> Any:
            if not fw.has_filter_plugins():  # upstream returns before it starts the clock
                return await filter_pass(fw, *args, **kwargs)
            t0, ext0 = self.now(), self._extender_time
            try:
                out = await filter_pass(fw, *args, **kwargs)
            except Exception:
                self.extension_point("Filter", ERROR, fw.profile_name, self._since(t0, ext0))
                raise
            self.extension_point("Filter", SUCCESS, fw.profile_name, self._since(t0, ext0))
            return out

        async def timed_pass_extenders(*args: Any, **kwargs: Any) -> Any:
            t0 = self.now()
            try:
                return await pass_extenders(*args, **kwargs)
            finally:
                self._extender_time += self.now() - t0

        async def timed_schedule_pod(fw: Any, state: Any, pi: Any) -> Any:
            self._algorithm_failed = None
            t0 = self.now()
            try:
                out = await schedule_pod(fw, state, pi)
            except Exception:
                self._algorithm_failed = pi.uid  # observed by the failure handler (pod_failed)
                raise
            self.algorithm_duration.observe(self.now() - t0)
            return out

        sched.find_nodes_that_pass_filters = timed_filter_pass
        sched._pass_extenders = timed_pass_extenders
        sched.schedule_pod = timed_schedule_pod

    def _since(self, t0: float, extender0: float) -> float:
        return max(0.0, self.now() - t0 - (self._extender_time - extender0))

    # --- reading ------------------------------------------------------------------------------
    def gauges(self) -> dict[str, dict[tuple[str, ...], float]]:
        """The gauges, read from the current scheduler now: ``pending_pods`` by queue (gated
        pods apart from the unschedulable ones), ``unschedulable_pods`` by (plugin, profile) —
        the queued pods whose last attempt (or PreEnqueue) a plugin rejected, as upstream's
        gauge (incremented then, decremented at the next pop) — and ``goroutines`` by
        operation (the binding cycles running)."""
        pending: dict[tuple[str, ...], float] = {(q,): 0 for q in ("active", "backoff", "unschedulable", "gated")}
        reasons: dict[tuple[str, ...], float] = {}
        sched = self.scheduler
        if sched is None:
            return {"pending_pods": pending, "unschedulable_pods": reasons, "goroutines": {}}
        for queue, pods in sched.queue.pending_pods().items():
            for qpi in pods:
                label = "gated" if queue == "unschedulable" and qpi.gated else queue
                pending[(label,)] += 1
                profile = qpi.pod.spec.scheduler_name
                for plugin in qpi.unschedulable_plugins | qpi.pending_plugins:
                    reasons[(plugin, profile)] = reasons.get((plugin, profile), 0) + 1
        goroutines: dict[tuple[str, ...], float] = {("binding",): float(getattr(sched, "_binding_tasks", 0))}
        return {"pending_pods": pending, "unschedulable_pods": reasons, "goroutines": goroutines}


def _same(out: Any) -> Any:
    return out


def _second(out: Any) -> Any:
    return out[1]


def _third(out: Any) -> Any:
    return out[2]


def _none(out: Any) -> Any:
    return None
