"""Quiet stretches skipped in virtual time: retries whose outcome cannot differ, accounted for
without being run one by one (issue 38).

A pod that cannot be scheduled until a known later instant (its preemption victim terminates
after a grace period of 3e11 s, a node arrives in a week) is retried by the queue's periodic
flushes in between, as kube-scheduler retries it (the unschedulable pods every 5 minutes, a pod
that failed with an error after its backoff): a simulation would run each of those attempts.
When nothing but such retries happens, the scheduler's state comes back to where it was, shifted
in time::

    quiet point t1 (the loop is about to sleep) ── retries only ──► quiet point t2
        fingerprint(t1) == fingerprint(t2)    every time relative to now, the queue's order,
                                              backoff and flags, the nominator, the cluster's
                                              resourceVersion, the next timed event, ...
        ⇒ what runs in (t2, t2 + P] is what ran in (t1, t2], P = t2 - t1, and so on until the
          next timed event (or ``until``)
        ⇒ jump k periods at once: counters += k × their change over the period (attempts, the
          pods' queue attempts and backoff counts, the scheduling cycle, ...), times += k·P,
          the period's events repeated k times (:class:`Repeat`, folded by
          :mod:`kubesched.simulation._events`), the period's rng draws replayed k times

The loop then sleeps to the next flush after the jump and runs the last period before the
timed event for real.  The fingerprint holds everything a retry reads that a retry may change;
a change it does not cover (a status write, a bind) makes the states differ and no skip is
taken, and a period with an Error (whose log line is rate-limited in time) is not jumped.

The seeded rng is not in the fingerprint: a preemption's dry run draws its candidate offset on
every attempt, whatever comes of it (no candidate: no write, the same message).  The scheduler's
draws are logged instead, and a jump replays the period's draws k times; the period's draws
must take the rng from its state at t1 to its state at t2 (nothing drew otherwise), or no skip
is taken.  What only a plugin knows (a TTL cache of Coscheduling) is not seen: a profile with a
plugin outside :data:`STATELESS_PLUGINS` is never skipped.  With ``--metrics``, the recorder's
counts are jumped with the rest and its sampling of plugin timings replayed
(:mod:`kubesched.scheduler._quiet_metrics`); with ``--explain``, a jump keeps each pod's attempt
records of the period as many times as its result history can show.

Exactness needs exact arithmetic: every time involved (now, the flush ticks, the pods'
timestamps and backoff expiries, the events) must be a whole number of seconds, so that adding
k·P gives the float the run would have computed.  (A run's flush ticks fall on whole seconds
from its start; a pod retried by them is stamped with them.)
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.metrics._metrics import SCHEDULE_ERROR, SCHEDULED
from kubesched.scheduler._batch import BATCH_ATTEMPTS, BATCH_FLUSHES
from kubesched.scheduler._quiet_metrics import RecorderLog
from kubesched.scheduler._results import HISTORY_LIMIT, ResultRecorder, go_json

if TYPE_CHECKING:
    from kubesched.queue._heap import QueuedPodInfo
    from kubesched.scheduler._scheduler import Scheduler

STATELESS_PLUGINS = frozenset(
    {
        "DefaultBinder", "DefaultPreemption", "DynamicResources", "ImageLocality", "InterPodAffinity",
        "NodeAffinity", "NodeDeclaredFeatures", "NodeName", "NodePorts", "NodeResourcesBalancedAllocation",
        "NodeResourcesFit", "NodeUnschedulable", "NodeVolumeLimits", "PodTopologySpread", "PrioritySort",
        "SchedulingGates", "TaintToleration", "VolumeBinding", "VolumeRestrictions", "VolumeZone",
    }
)  # fmt: skip
"""The in-tree plugins whose decisions depend only on the cluster, the pod and the scheduler's
state the fingerprint covers (not on what earlier attempts left inside the plugin)."""

MIN_STRETCH = 1320.0
"""Look for a period only when the next timed event is at least this far (four of the
unschedulable pods' 330 s retry periods): a shorter stretch has too few retries to gain from."""

MAX_MARKS = 32
"""Quiet points remembered while looking for a period (then forgotten, and looked for again)."""


@dataclass(frozen=True)
class Repeat:
    """The events of one skipped period, repeated: ``block`` (the events recorded in
    ``(after - period, after]``) happened again ``count`` times, the ``j``-th shifted by
    ``j * period`` (j = 1 … count), before any event recorded after it."""

    block: tuple[Any, ...]
    period: float
    count: int
    after: float

    def last_time(self) -> float:
        return float(max(e.time for e in self.block)) + self.count * self.period


MAX_DRAWS = 1_000_000
"""The most rng draws one jump replays (a longer stretch is jumped over in several)."""


@dataclass
class _Mark:
    now: float
    counters: dict[Any, int]
    events: int  # len(cluster.events)
    rng: tuple[Any, ...]  # the scheduler's rng state
    draws: int  # len(the draw log)
    metrics: tuple[dict[Any, int], dict[Any, float]]  # (--metrics) the recorder's counts, sums
    metrics_mark: tuple[int, int, tuple[Any, ...]] | None  # (--metrics) RecorderLog.mark()


class QuietSkipper:
    """Skips the quiet stretches of a deterministic scheduler (see the module doc).

    ``events`` is the list the scheduler's Events are recorded into (the fake cluster's); ``limit``
    gives the instant the run ends at (``until``; infinity without).  :meth:`at_rest` is called
    by the loop before it sleeps."""

    def __init__(self, sched: Scheduler, events: list[Any], limit: Callable[[], float]) -> None:
        self.sched = sched
        self.events = events
        self.limit = limit
        self.repeats: list[Repeat] = []
        self.skipped_attempts = 0
        """Scheduling attempts accounted for without being run."""
        self._marks: dict[tuple[Any, ...], _Mark] = {}
        self._marks_horizon: float | None = None
        # the scheduler's draws (a preemption's candidate offset, a tie among nodes), logged to
        # be replayed: a jump draws the rng as the skipped attempts would have
        self._draws: list[tuple[int, ...]] = []
        self._randrange = sched.rng.randrange
        self.enabled = all(
            name in STATELESS_PLUGINS and type(plugin).__module__.startswith("kubesched.plugins")
            for fw in sched.profiles.values()
            for name, plugin in fw.plugins.items()
        )
        self.metrics_log: RecorderLog | None = None
        if self.enabled and sched.metrics.recorder is not None:
            self.metrics_log = RecorderLog(sched.metrics.recorder, self._context)
            self._pre_enqueue: str | None = None  # the pod whose PreEnqueue plugins run
            run_pre_enqueue = sched.queue._run_pre_enqueue

            def pre_enqueue(qpi: QueuedPodInfo) -> None:
                self._pre_enqueue = qpi.uid
                try:
                    run_pre_enqueue(qpi)
                finally:
                    self._pre_enqueue = None

            sched.queue._run_pre_enqueue = pre_enqueue  # type: ignore[method-assign]
        if self.enabled:

            def randrange(*args: int) -> int:
                self._draws.append(args)
                return self._randrange(*args)

            sched.rng.randrange = randrange  # type: ignore[method-assign, assignment]

    def _context(self) -> tuple[str, str] | None:
        """(``--metrics``) What the recorder's draw is for: a pod's PreEnqueue or its cycle."""
        if self._pre_enqueue is not None:
            return ("preEnqueue", self._pre_enqueue)
        in_flight = self.sched.queue.in_flight
        return ("cycle", next(iter(in_flight))) if len(in_flight) == 1 else None

    # --- the loop's call ------------------------------------------------------------------------
    def at_rest(self, now: float) -> bool:
        """The loop is about to sleep at ``now``: if the state is where it was one period ago
        and the next timed event is far enough, jump ahead; whether it did."""
        sched = self.sched
        q = sched.queue
        log = self.metrics_log
        if len(self._draws) > MAX_DRAWS or (log is not None and len(log.draws) + len(log.timings) > MAX_DRAWS):
            self._forget()
        if not self.enabled or not (q.unschedulable or len(q.backoff)):
            return False
        horizon = self._horizon()
        if horizon is None or horizon - now < MIN_STRETCH or not self._at_rest(now):
            return False
        if horizon != self._marks_horizon or len(self._marks) >= MAX_MARKS:
            self._forget()
            self._marks_horizon = horizon
            if log is not None:
                log.learned = {}
        fp = self._fingerprint(now, horizon)
        if fp is None:
            return False
        counters = self._counters()
        prev = self._marks.get(fp)
        rng = sched.rng.getstate()
        metrics = log.counters() if log is not None else ({}, {})
        mark = _Mark(now, counters, len(self.events), rng, len(self._draws), metrics, log.mark() if log else None)
        self._marks[fp] = mark
        if prev is None:
            return False
        period = now - prev.now
        # whole periods that end before the horizon, one left to run for real
        k = int((horizon - now) // period) - 1
        draws = self._draws[prev.draws :]
        if draws:
            k = min(k, MAX_DRAWS // len(draws))
        if k < 1 or not whole_periods(q.ticks.ticks, period) or not self._events_whole(prev.events):
            return False
        if not _replays(prev.rng, draws, rng):
            return False  # drawn otherwise than through randrange: cannot be replayed
        delta = {key: n - prev.counters.get(key, n) for key, n in counters.items()}
        if delta.get(("attempts", SCHEDULE_ERROR)) or delta.get(("attempts", SCHEDULED)):
            return False  # an error's log is rate-limited in time; a bind is no retry
        pods: list[tuple[str, str]] = []
        if log is not None:
            assert prev.metrics_mark is not None
            if prev.metrics[1] != metrics[1] or set(prev.metrics[0]) != set(metrics[0]):
                return False  # a duration that is not 0, or a new series
            found = log.period(prev.metrics_mark)
            if found is None:
                return False
            pods = found
        self._jump(prev, delta, period, k)
        if log is not None:
            log.jump({key: n - prev.metrics[0][key] for key, n in metrics[0].items()}, pods, k)
        if draws:  # at most MAX_DRAWS
            for _ in range(k):
                for args in draws:
                    self._randrange(*args)
        self._forget()
        return True

    def _records(self, recorder: ResultRecorder, delta: dict[Any, int], k: int) -> None:
        """(``--explain``) Each pod's attempt records of the period, repeated: only as many
        repetitions as its result history can show (the rest would have scrolled out of it)."""
        for qpi in self._queued():
            n = delta.get(("records", qpi.uid), 0)
            if n > 0:
                kept = recorder._attempts[qpi.uid]
                period = kept[-n:]
                kept.extend(period * _saturating(period, k))

    def _forget(self) -> None:
        self._marks = {}
        self._draws = []
        if self.metrics_log is not None:
            self.metrics_log.forget()

    def _horizon(self) -> float | None:
        """The next instant something other than a retry happens: a timed source, a Permit
        deadline, or the run's end (``until``); None if none is known."""
        sched = self.sched
        times = sched.driver.source_times()
        times += [t for fw in sched.profiles.values() if (t := fw.next_permit_deadline()) is not None]
        times.append(self.limit())
        horizon = min(times)
        return horizon if math.isfinite(horizon) else None

    def _at_rest(self, now: float) -> bool:
        """Nothing runs or waits but the queued pods, and the clock is on a whole second."""
        sched = self.sched
        q = sched.queue
        if not float(now).is_integer():
            return False
        if len(q.active_q) or q.in_flight or sched.driver.active or sched.binding.tasks:
            return False
        recorder = sched.recorder
        if sched._background_tasks or sched.extenders or (recorder is not None and recorder.patch):
            return False
        if q.metrics_recorder is not sched.metrics.recorder or (
            sched.metrics.recorder is not None and self.metrics_log is None
        ):
            return False
        if any(fw.waiting_pods for fw in sched.profiles.values()):
            return False
        pending = getattr(sched.handlers.watch, "pending", None)
        return not (callable(pending) and pending())

    # --- the state ------------------------------------------------------------------------------
    def _pod(self, qpi: QueuedPodInfo, where: str, now: float) -> tuple[Any, ...] | None:
        ts = qpi.timestamp
        exp = qpi.backoff_expiration
        if not float(ts).is_integer() or (exp is not None and not float(exp).is_integer()):
            return None
        return (
            qpi.uid, where, ts - now, None if exp is None else exp - now,
            self.sched.queue.backoff_duration(qpi), qpi.seq, qpi.initial_attempt_timestamp,
            tuple(sorted(qpi.unschedulable_plugins)), tuple(sorted(qpi.pending_plugins)),
            qpi.gating_plugin, qpi.flushed, qpi.pod.metadata.resource_version,
        )  # fmt: skip

    def _fingerprint(self, now: float, horizon: float) -> tuple[Any, ...] | None:
        """Everything a retry reads that a retry may change, every time relative to ``now``;
        None when a time is not a whole second."""
        sched = self.sched
        q = sched.queue
        pods: list[tuple[Any, ...] | None] = [self._pod(qpi, "u", now) for qpi in q.unschedulable.values()]
        for where, heap in (("b", q.backoff.pod_backoff_q), ("e", q.backoff.pod_error_backoff_q)):
            pods += sorted((self._pod(qpi, where, now) for qpi in heap.values()), key=repr)
        if any(p is None for p in pods):
            return None
        ticks = []
        for t0, period, k in q.ticks.ticks:
            tick = t0 + period * k
            if not float(tick).is_integer():
                return None
            ticks.append(tick - now)
        nominator = q.nominator
        driver = sched.driver
        scheduling = sched.scheduling
        metrics = sched.metrics
        return (
            horizon, tuple(pods), tuple(ticks),
            q.scheduling_cycle - q.move_request_cycle, len(q.activeq._events),
            tuple((node, tuple(pi.uid for pi in pis)) for node, pis in nominator.nominated_pods.items()),
            tuple(nominator.pod_to_node.items()),
            scheduling.next_start_node_index, scheduling._filter_pass_rate,
            driver._tickets - driver._turns_done, len(driver._turns_skipped), len(driver._parked),
            getattr(sched.transport, "resource_version", None),
            metrics.preemptions, len(metrics.preemption_victims), sched.binding.scheduled_count,
        )  # fmt: skip

    def _queued(self) -> list[QueuedPodInfo]:
        q = self.sched.queue
        return [*q.unschedulable.values(), *q.backoff.values()]

    def _counters(self) -> dict[Any, int]:
        """What a retry adds to: the period's change, times k, is added at a jump."""
        sched = self.sched
        q = sched.queue
        metrics = sched.metrics
        recorder = sched.recorder
        out: dict[Any, int] = {
            ("cycle",): q.scheduling_cycle,
            ("moveRequest",): q.move_request_cycle,
            ("eventsBase",): q.activeq._events_base,
            ("tickets",): sched.driver._tickets,
            ("turns",): sched.driver._turns_done,
            ("preemptionAttempts",): metrics.preemption_attempts,
        }
        for result, n in metrics.schedule_attempts.items():
            out[("attempts", result)] = n
        for profile, fw in sched.profiles.items():  # plugin_evaluation_total's counts
            for runner, attr in _EVALUATIONS:
                for i, n in enumerate(getattr(getattr(fw, runner), attr)):
                    out[("evaluations", profile, attr, i)] = n
        batching = sched.scheduling.batching
        if batching is not None:  # OpportunisticBatching's counts (scheduler_batch_*_total, 1.35)
            for name, batch in batching.batches.items():
                for result in BATCH_ATTEMPTS:
                    out[("batchAttempts", name, result)] = batch.attempts.get(result, 0)
                for reason in BATCH_FLUSHES:
                    out[("batchFlushes", name, reason)] = batch.flushes.get(reason, 0)
        pod_attempts = metrics.pod_attempts if metrics.pod_attempts is not None else {}
        for qpi in self._queued():
            uid = qpi.uid
            out[("qpi", uid, "attempts")] = qpi.attempts
            out[("qpi", uid, "unschedulable")] = qpi.unschedulable_count
            out[("qpi", uid, "errors")] = qpi.consecutive_errors_count
            out[("pod", uid)] = pod_attempts.get(uid, 0)
            if recorder is not None:
                out[("records", uid)] = len(recorder._attempts.get(uid, ()))
        return out

    def _events_whole(self, start: int) -> bool:
        """The period's events are all on whole seconds (their repeats then exact)."""
        return all(float(e.time).is_integer() for e in self.events[start:])

    # --- the jump -------------------------------------------------------------------------------
    def _jump(self, prev: _Mark, delta: dict[Any, int], period: float, k: int) -> None:
        """Apply ``k`` more periods: counters (``delta``: their change over one), times, events."""
        sched = self.sched
        q = sched.queue
        metrics = sched.metrics
        shift = k * period

        def add(key: tuple[Any, ...]) -> int:
            return k * delta.get(key, 0)

        batching = sched.scheduling.batching
        if batching is not None:
            for name, batch in batching.batches.items():
                for result in BATCH_ATTEMPTS:
                    if n := add(("batchAttempts", name, result)):
                        batch.attempts[result] = batch.attempts.get(result, 0) + n
                for reason in BATCH_FLUSHES:
                    if n := add(("batchFlushes", name, reason)):
                        batch.flushes[reason] = batch.flushes.get(reason, 0) + n
                if batch.last_cycle.cycle_count > q.scheduling_cycle - delta.get(("cycle",), 0):
                    batch.last_cycle.cycle_count += add(("cycle",))  # a cycle of the period
        # the queue's counters and times
        q.activeq._scheduling_cycle += add(("cycle",))
        q.move_request_cycle += add(("moveRequest",))
        q.activeq._events_base += add(("eventsBase",))
        for qpi in self._queued():
            uid = qpi.uid
            qpi.attempts += add(("qpi", uid, "attempts"))
            qpi.unschedulable_count += add(("qpi", uid, "unschedulable"))
            qpi.consecutive_errors_count += add(("qpi", uid, "errors"))
            qpi.timestamp += shift
            if qpi.backoff_expiration is not None:
                qpi.backoff_expiration += shift
        for heap in (q.backoff.pod_backoff_q, q.backoff.pod_error_backoff_q):
            for qpi in heap.values():
                heap.push(qpi)  # re-placed under its shifted expiry
        ticks = q.ticks.ticks
        for i, (t0, tick_period, n) in enumerate(ticks):
            ticks[i] = (t0, tick_period, n + round(shift / tick_period))
        # the scheduler's
        driver = sched.driver
        driver._tickets += add(("tickets",))
        driver._turns_done += add(("turns",))
        metrics.preemption_attempts += add(("preemptionAttempts",))
        for result in metrics.schedule_attempts:
            metrics.schedule_attempts[result] += add(("attempts", result))
        for profile, fw in sched.profiles.items():
            for runner, attr in _EVALUATIONS:
                counts = getattr(getattr(fw, runner), attr)
                for i in range(len(counts)):
                    counts[i] += add(("evaluations", profile, attr, i))
        if metrics.pod_attempts is not None:
            for qpi in self._queued():
                if (n := add(("pod", qpi.uid))) != 0:
                    metrics.pod_attempts[qpi.uid] = metrics.pod_attempts.get(qpi.uid, 0) + n
        if sched.recorder is not None:
            self._records(sched.recorder, delta, k)
        if sched.scheduling.last_attempt > prev.now:
            sched.scheduling.last_attempt += shift
        if sched._last_touch > prev.now:
            sched._last_touch += shift
        block = tuple(self.events[prev.events :])
        if block:
            self.repeats.append(Repeat(block, period, k, prev.now + period))
        self.skipped_attempts += sum(add(("attempts", r)) for r in metrics.schedule_attempts)


# the runners' plugin_evaluation_total counts (Framework.plugin_evaluations)
_EVALUATIONS = (
    ("filters", "pre_filter_evaluations"),
    ("filters", "filter_evaluations"),
    ("scores", "pre_score_evaluations"),
    ("scores", "score_evaluations"),
)


def _saturating(records: Sequence[Any], k: int) -> int:
    """How many repetitions of a pod's ``records`` (``--explain``: its attempts of one period) to
    keep of ``k``: enough that the result history, which keeps the newest entries that fit in
    :data:`~kubesched.scheduler._results.HISTORY_LIMIT` bytes, holds none from before them."""
    shortest = min(len(go_json(r.annotations()).encode()) for r in records)
    fit = HISTORY_LIMIT // max(1, shortest) + 1
    return min(k, -(-fit // len(records)) + 1)


def _replays(start: tuple[Any, ...], draws: list[tuple[int, ...]], end: tuple[Any, ...]) -> bool:
    """Whether ``draws`` (randrange's arguments) take an rng from state ``start`` to ``end``."""
    if not draws:
        return start == end
    rng = random.Random()
    rng.setstate(start)
    for args in draws:
        rng.randrange(*args)
    return rng.getstate() == end


def whole_periods(ticks: Sequence[tuple[float, float, int]], period: float) -> bool:
    """Whether ``period`` is a whole number of each tick's period (a jump keeps the ticks'
    phase)."""
    return all(math.isclose(period / p, round(period / p)) for _, p, _ in ticks)
