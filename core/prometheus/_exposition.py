"""The recorder as Prometheus families (:class:`SchedulerCollector`), in a registry of its own,
and their text exposition (see the package docstring)."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

from kubesched.metrics._metrics import Histogram, HistogramVec, MetricsRecorder

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
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        rec = self.recorder
        attempts = CounterMetricFamily(
            "scheduler_schedule_attempts", _HELP["schedule_attempts"], labels=["result", "profile"]
        )
        for (result, profile), n in sorted(rec.attempts.items()):
            attempts.add_metric([result, profile], n)
        yield attempts
        yield _histogram_vec("scheduling_attempt_duration_seconds", ["result", "profile"], rec.attempt_duration)
        yield _histogram("scheduling_algorithm_duration_seconds", rec.algorithm_duration)
        yield _histogram_vec("pod_scheduling_sli_duration_seconds", ["attempts"], rec.sli_duration)
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
        yield CounterMetricFamily(
            "scheduler_preemption_attempts", _HELP["preemption_attempts"], value=rec.preemption_attempts
        )
        yield _histogram("preemption_victims", rec.preemption_victims)
        sched = rec.scheduler
        if sched is not None and sched.config.emulated_version >= (1, 36):
            # v1.36.0 (kubernetes#135126): pods bound after the 5-minute flush of unschedulablePods
            yield CounterMetricFamily(
                "scheduler_pod_scheduled_after_flush", _HELP["pod_scheduled_after_flush"],
                value=rec.scheduled_after_flush,
            )
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


def _histogram(name: str, h: Histogram, labels: Sequence[str] = (), values: Sequence[str] = ()) -> Any:
    from prometheus_client.core import HistogramMetricFamily

    family = HistogramMetricFamily(f"scheduler_{name}", _HELP[name], labels=list(labels))
    _add(family, values, h)
    return family


def _histogram_vec(name: str, labels: Sequence[str], vec: HistogramVec) -> Any:
    from prometheus_client.core import HistogramMetricFamily

    family = HistogramMetricFamily(f"scheduler_{name}", _HELP[name], labels=list(labels))
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
