"""The recorder as Prometheus families (:class:`SchedulerCollector`), in a registry of its own,
and their text exposition (see the package docstring)."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from typing import Any

from kubesched.metrics._metrics import (
    PREEMPTION_GOROUTINES_BUCKETS,
    Histogram,
    HistogramVec,
    MetricsRecorder,
)

log = logging.getLogger("kubesched")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
MAX_REQUEST_HEAD = 16 * 1024

_HELP = {
    "schedule_attempts": "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
    "scheduling_attempt_duration_seconds": "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
    "scheduling_algorithm_duration_seconds": "Scheduling algorithm latency in seconds",
    "pod_scheduling_sli_duration_seconds": "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
    "pod_scheduling_attempts": "Number of attempts to successfully schedule a pod.",
    "pod_scheduled_after_flush": "Number of pods that were successfully scheduled after being flushed from "
    "unschedulablePods due to timeout. This metric helps detect potential queueing hint misconfigurations or "
    "event handling issues.",
    "framework_extension_point_duration_seconds": "Latency for running all plugins of a specific extension point.",
    "plugin_execution_duration_seconds": "Duration for running a plugin at a specific extension point.",
    "permit_wait_duration_seconds": "Duration of waiting on permit.",
    "queue_incoming_pods": "Number of pods added to scheduling queues by event and queue type.",
    "preemption_attempts": "Total preemption attempts in the cluster till now",
    "preemption_victims": "Number of selected preemption victims",
    "pending_pods": "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
    "unschedulable_pods": "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all plugins that caused it to not schedule and so this metric have meaning only when broken down by plugin.",
    "goroutines": "Number of running goroutines split by the work they do such as binding.",
    "cache_size": "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
    "preemption_goroutines_duration_seconds": "Duration in seconds for running goroutines for the preemption.",
    "preemption_goroutines_execution": "Number of preemption goroutines executed.",
    "batch_attempts": "Counts of results when we attempt to use batching.",
    "batch_cache_flushed": "Counts of cache flushes by reason.",
    "event_handling_duration_seconds": "Event handling latency in seconds.",
    "plugin_evaluation": "Number of attempts to schedule pods by each plugin and the extension point "
    "(available only in PreFilter, Filter, PreScore, and Score).",
}
# v1.30 (metrics.go): the help of pod_scheduling_sli_duration_seconds had a typo, fixed in v1.31
# (kubernetes#124221)
_HELP_1_30 = {
    "pod_scheduling_sli_duration_seconds": "E2e latency for a pod being scheduled, from the time the pod enters the "
    "scheduling queue an d might involve multiple scheduling attempts.",
}


def go_float(value: float) -> str:
    """A bucket bound as kube-scheduler's ``le`` label has it (Go's ``FormatFloat(v, 'g', -1,
    64)``): ``0.0001``, ``1e-05``, ``1.5000000000000002e-05``, ``64``, ``+Inf``."""
    from prometheus_client.utils import floatToGoString

    text = str(floatToGoString(value))  # type: ignore[no-untyped-call]
    return text[:-2] if text.endswith(".0") else text


class SchedulerCollector:
    """A prometheus-client collector over a :class:`MetricsRecorder` (read at each scrape)."""

    def __init__(self, recorder: MetricsRecorder) -> None:
        self.recorder = recorder

    def collect(self) -> Iterator[Any]:
        """The families of the emulated version's ``pkg/scheduler/metrics/metrics.go``: a metric
        the version does not have is not exposed."""
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        from kubesched.config._versions import DEFAULT_VERSION

        rec = self.recorder
        sched = rec.scheduler
        version = sched.config.emulated_version if sched is not None else DEFAULT_VERSION
        helps = {**_HELP, **_HELP_1_30} if version < (1, 31) else _HELP
        attempts = CounterMetricFamily(
            "scheduler_schedule_attempts", helps["schedule_attempts"], labels=["result", "profile"]
        )
        for (result, profile), n in sorted(rec.attempts.items()):
            attempts.add_metric([result, profile], n)
        yield attempts
        yield _histogram_vec("scheduling_attempt_duration_seconds", ["result", "profile"], rec.attempt_duration)
        yield _histogram("scheduling_algorithm_duration_seconds", rec.algorithm_duration)
        yield _histogram_vec("pod_scheduling_sli_duration_seconds", ["attempts"], rec.sli_duration, helps)
        yield _histogram("pod_scheduling_attempts", rec.pod_scheduling_attempts)
        yield _histogram_vec(
            "framework_extension_point_duration_seconds",
            ["extension_point", "status", "profile"],
            rec.extension_point_duration,
        )
        yield _histogram_vec(
            "plugin_execution_duration_seconds", ["plugin", "extension_point", "status"], rec.plugin_duration
        )
        yield _histogram_vec("permit_wait_duration_seconds", ["result"], rec.permit_wait_duration)
        incoming = CounterMetricFamily(
            "scheduler_queue_incoming_pods", _HELP["queue_incoming_pods"], labels=["queue", "event"]
        )
        for (queue, event), n in sorted(rec.incoming.items()):
            incoming.add_metric([queue, event], n)
        yield incoming
        if version >= (1, 31):
            # v1.31 (kubernetes#125929) EventHandlingLatency, observed by the event handlers
            yield _histogram_vec("event_handling_duration_seconds", ["event"], rec.event_handling_duration)
        # PluginEvaluationTotal: every version (its help names PreScore and Score from v1.30,
        # kubernetes#123007)
        evaluations = CounterMetricFamily(
            "scheduler_plugin_evaluation", _HELP["plugin_evaluation"], labels=["plugin", "extension_point", "profile"]
        )
        for (plugin, point, profile), n in sorted(rec.plugin_evaluations().items()):
            evaluations.add_metric([plugin, point, profile], n)
        yield evaluations
        yield CounterMetricFamily(
            "scheduler_preemption_attempts", _HELP["preemption_attempts"], value=rec.preemption_attempts
        )
        yield _histogram("preemption_victims", rec.preemption_victims)
        if version >= (1, 36):
            # v1.36.0 (kubernetes#135126): pods bound after the 5-minute flush of unschedulablePods
            yield CounterMetricFamily(
                "scheduler_pod_scheduled_after_flush", _HELP["pod_scheduled_after_flush"],
                value=rec.scheduled_after_flush,
            )
        if version >= (1, 35):
            # v1.35.0 metrics.go BatchAttemptStats / BatchCacheFlushed (OpportunisticBatching)
            batch_attempts, flushes = rec.batch_counts()
            for name, label, counts in (
                ("batch_attempts", "result", batch_attempts),
                ("batch_cache_flushed", "reason", flushes),
            ):
                counter = CounterMetricFamily(f"scheduler_{name}", _HELP[name], labels=["profile", label])
                for (profile, value), n in sorted(counts.items()):
                    counter.add_metric([profile, value], n)
                yield counter
        if sched is not None and sched.config.feature_gates.get("SchedulerAsyncPreemption", False):
            # registered with the gate (v1.35.4 metrics.go Register); every goroutine "success"
            # and observed at 0 s: upstream's deferred call evaluates both at the start
            n = rec.preemption_goroutines
            duration = HistogramMetricFamily(
                "scheduler_preemption_goroutines_duration_seconds",
                _HELP["preemption_goroutines_duration_seconds"], labels=["result"],
            )  # fmt: skip
            counter = CounterMetricFamily(
                "scheduler_preemption_goroutines_execution", _HELP["preemption_goroutines_execution"], labels=["result"]
            )
            if n:
                duration.add_metric(["success"], [(go_float(b), n) for b in (*PREEMPTION_GOROUTINES_BUCKETS, math.inf)], 0.0)
                counter.add_metric(["success"], n)
            yield duration
            yield counter
        gauges = rec.gauges()
        for name, labels in (
            ("pending_pods", ["queue"]),
            ("unschedulable_pods", ["plugin", "profile"]),
            ("goroutines", ["operation"]),
        ):
            family = GaugeMetricFamily(f"scheduler_{name}", _HELP[name], labels=labels)
            for values, v in sorted(gauges[name].items()):
                family.add_metric(list(values), v)
            yield family
        for name, help_text in _cache_size_families(version):
            family = GaugeMetricFamily(name, help_text, labels=["type"])
            for values, v in sorted(gauges["cache_size"].items()):
                family.add_metric(list(values), v)
            yield family


def _cache_size_families(version: tuple[int, int]) -> list[tuple[str, str]]:
    """The cache size gauge's names at ``version``: ``scheduler_scheduler_cache_size`` until 1.32;
    1.33 adds ``scheduler_cache_size`` and deprecates the old name (kubernetes#128810: shown in
    its deprecation release, its help prefixed as component-base does); 1.34 removes it
    (kubernetes#131425)."""
    help_text = _HELP["cache_size"]
    if version < (1, 33):
        return [("scheduler_scheduler_cache_size", help_text)]
    if version < (1, 34):
        return [
            ("scheduler_cache_size", help_text),
            ("scheduler_scheduler_cache_size", f"(Deprecated since 1.33.0) {help_text}"),
        ]
    return [("scheduler_cache_size", help_text)]


def _histogram(name: str, h: Histogram, labels: Sequence[str] = (), values: Sequence[str] = ()) -> Any:
    from prometheus_client.core import HistogramMetricFamily

    family = HistogramMetricFamily(f"scheduler_{name}", _HELP[name], labels=list(labels))
    _add(family, values, h)
    return family


def _histogram_vec(name: str, labels: Sequence[str], vec: HistogramVec, helps: dict[str, str] = _HELP) -> Any:
    from prometheus_client.core import HistogramMetricFamily

    family = HistogramMetricFamily(f"scheduler_{name}", helps[name], labels=list(labels))
    for values, h in sorted(vec.series.items()):
        _add(family, values, h)
    return family


def _add(family: Any, values: Sequence[str], h: Histogram) -> None:
    buckets = [(go_float(b), n) for b, n in h.cumulative()]
    family.add_metric(list(values), buckets, h.sum)


def registry(recorder: MetricsRecorder, *, process: bool = False) -> Any:
    """A registry of its own with the scheduler's metrics (and, ``process``, the ``process_*``
    metrics of this process, as kube-scheduler's /metrics has them)."""
    from prometheus_client import CollectorRegistry, ProcessCollector

    reg = CollectorRegistry(auto_describe=False)
    reg.register(SchedulerCollector(recorder))
    if process:
        ProcessCollector(registry=reg)
    return reg


def exposition(registry: Any) -> bytes:
    """The text exposition of everything in ``registry`` now."""
    from prometheus_client import generate_latest

    return bytes(generate_latest(registry))
