"""kube-scheduler's metrics in the Prometheus text format, and ``kubesched run``'s HTTP endpoints.

::

    MetricsRecorder (kubesched.metrics._metrics) ──► SchedulerCollector ──► exposition()   simulate --metrics
                                                               └──► serve()        kubesched run
    serve(): GET /metrics, /healthz, /livez, /readyz (and /<endpoint>/<check>); any other path 404

The collector reads the recorder when scraped: counters and histograms as recorded, gauges from
the scheduler's queue at that moment; nothing is copied in between.  Its families carry no
``_created`` series (kube-scheduler's Go client has none), and nothing goes to prometheus-client's
global registry.  The server is h11 over anyio, on the scheduler's event loop: a scrape reads the
scheduler between two of its steps, never in the middle of one.

Health, as kube-scheduler's ``healthz`` package (``k8s.io/apiserver/pkg/server/healthz``):
``/livez`` checks ``ping``; ``/healthz`` checks ``leaderElection`` (with ``--leader-elect``: the
lease renewed within its duration plus 20 s) or else ``ping``; ``/readyz`` checks
``leaderElection``, ``shutdown`` (no SIGTERM yet) and ``sched-handler-sync`` (the informers have
filled the cache).  Success is ``ok`` (200); a failure is 500 with every check listed
(``[+]ping ok``, ``[-]sched-handler-sync failed: reason withheld``) and ``readyz check failed``;
``?verbose`` lists them on success too, ``?exclude=NAME`` skips one.  Unlike kube-scheduler, a
standby replica (``--leader-elect``, not leading) runs no informers, so it is not ready.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import anyio.abc
import h11

from kubesched.metrics._metrics import Histogram, HistogramVec, MetricsRecorder

from .._errors import ConfigError

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


# --- health --------------------------------------------------------------------------------


Check = tuple[str, Callable[[], str | None]]
"""(name, check): the check returns None when healthy, else why not (for the log)."""


def ping() -> str | None:
    return None


@dataclass
class Endpoints:
    """What ``serve`` answers: /metrics from ``registry``, the three health endpoints."""

    registry: Any
    healthz: Sequence[Check]
    livez: Sequence[Check]
    readyz: Sequence[Check]

    def answer(self, target: str) -> tuple[int, str, bytes]:
        """(status, content type, body) for a request target (path and query)."""
        parts = urlsplit(target)
        path = parts.path
        if path == "/metrics":
            return 200, CONTENT_TYPE, exposition(self.registry)
        for name, checks in (("healthz", self.healthz), ("livez", self.livez), ("readyz", self.readyz)):
            if path == f"/{name}":
                return _root_health(name, checks, parse_qsl(parts.query, keep_blank_values=True))
            for check, fn in checks:
                if path == f"/{name}/{check}":
                    why = fn()
                    if why is None:
                        return 200, TEXT, b"ok"
                    return 500, TEXT, f"internal server error: {why}\n".encode()
        return 404, TEXT, b"404 page not found\n"


def _root_health(name: str, checks: Sequence[Check], query: list[tuple[str, str]]) -> tuple[int, str, bytes]:
    """``handleRootHealth``: run every check not excluded; all pass: "ok" (or, verbose, the
    list); any fails: 500 with the list, reasons withheld (they go to the log)."""
    excluded = {v for k, v in query if k == "exclude"}
    verbose = any(k == "verbose" for k, _ in query)
    lines: list[str] = []
    failed: list[str] = []
    for check, fn in checks:
        if check in excluded:
            excluded.discard(check)
            lines.append(f"[+]{check} excluded: ok")
            continue
        why = fn()
        if why is None:
            lines.append(f"[+]{check} ok")
        else:
            lines.append(f"[-]{check} failed: reason withheld")
            failed.append(check)
            log.info("%s check failed: %s: %s", name, check, why)
    if excluded:
        quoted = ",".join(f'"{e}"' for e in sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    listing = "".join(line + "\n" for line in lines)
    if failed:
        return 500, TEXT, f"{listing}{name} check failed\n".encode()
    if not verbose:
        return 200, TEXT, b"ok"
    return 200, TEXT, f"{listing}{name} check passed\n".encode()


async def listen(address: str, port: int) -> anyio.abc.Listener[anyio.abc.SocketStream]:
    """The listening socket, or a ConfigError naming the flag."""
    try:
        return await anyio.create_tcp_listener(local_host=address, local_port=port)
    except OSError as e:
        raise ConfigError(
            f"cannot listen on {address}:{port}: {e.strerror or e}", field="--metrics-port"
        ) from None


async def serve(listener: anyio.abc.Listener[anyio.abc.SocketStream], endpoints: Endpoints) -> None:
    """Answer HTTP/1.1 requests on ``listener`` until cancelled (keep-alive; any method, HEAD
    without a body)."""

    async def connection(stream: anyio.abc.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST_HEAD)
        request: h11.Request | None = None
        try:
            async with stream:
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        try:
                            data = await stream.receive(65536)
                        except (anyio.EndOfStream, anyio.BrokenResourceError):
                            data = b""
                        conn.receive_data(data)
                    elif isinstance(event, h11.Request):
                        request = event
                    elif isinstance(event, h11.EndOfMessage) and request is not None:
                        await _respond(conn, stream, request, endpoints)
                        if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                            return  # MUST_CLOSE: HTTP/1.0, or "Connection: close"
                        conn.start_next_cycle()
                        request = None
                    elif not isinstance(event, h11.Data):
                        return  # ConnectionClosed
        except (h11.ProtocolError, anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
            return
        except Exception:  # one broken connection never takes the server down
            log.exception("metrics connection failed")

    await listener.serve(connection)


async def _respond(
    conn: h11.Connection, stream: anyio.abc.SocketStream, req: h11.Request, endpoints: Endpoints
) -> None:
    try:
        status, content_type, body = endpoints.answer(req.target.decode("latin-1"))
    except Exception:  # a bug: 500, never a dead server
        log.exception("answering %s failed", req.target)
        status, content_type, body = 500, TEXT, b"internal server error\n"
    headers = [
        ("content-type", content_type),
        ("content-length", str(len(body))),
        ("x-content-type-options", "nosniff"),
    ]
    await stream.send(conn.send(h11.Response(status_code=status, headers=headers)))
    if req.method != b"HEAD" and body:
        await stream.send(conn.send(h11.Data(data=body)))
    await stream.send(conn.send(h11.EndOfMessage()))
