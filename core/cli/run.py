"""``kubesched run``: schedule a live cluster as a secondary scheduler.

::

    SIGINT/SIGTERM ─► cancel everything ─► release the lease ─► exit 0
    KubeTransport (list-then-watch, writes) ◄── Scheduler (pods whose schedulerName is a profile's)
         │                                          ▲
         └── LeaderElector (--leader-elect) ────────┘ runs the scheduler only while leading;
                                                     lease lost ─► scheduler cancelled ─► exit 1
    MetricsExporter: every second, Scheduler.metrics ─► Prometheus (upstream names), served on
                     --metrics-port by prometheus-client's HTTP server (its own thread)

Settings come from the KubeSchedulerConfiguration's ``clientConnection`` (kubeconfig, qps,
burst) and ``leaderElection`` (leaderElect, leaseDuration, renewDeadline, retryPeriod,
resourceName, resourceNamespace) sections, overridden by command-line flags, as kube-scheduler.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from .._config import SchedulerConfig
from .._durations import parse_duration
from .._errors import ConfigError
from .._scheduler import Scheduler

log = logging.getLogger("kubesched")

# upstream's buckets (pkg/scheduler/metrics/metrics.go)
ATTEMPT_DURATION_BUCKETS = tuple(
    0.001 * 2**i for i in range(15)
)  # ExponentialBuckets(0.001, 2, 15)
PREEMPTION_VICTIMS_BUCKETS = tuple(float(5 * i) for i in range(1, 11))  # LinearBuckets(5, 5, 10)


@dataclass
class RunOptions:
    """What ``kubesched run`` does, from the flags and the configuration file."""

    kubeconfig: str | None = None
    server: str | None = None
    context: str | None = None
    qps: float = 50.0
    burst: int = 100
    leader_elect: bool = False
    lease_name: str = "kubesched"
    lease_namespace: str = "kube-system"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    metrics_port: int | None = None
    metrics_address: str = "127.0.0.1"  # loopback unless asked (upstream --bind-address)
    seed: int = 0
    record_plugin_results: bool = False
    take_over_default_scheduler: bool = False
    """Schedule ``default-scheduler`` pods even while a kube-scheduler leads (it would compete)."""


def _seconds(value: Any, field: str) -> float:
    if isinstance(value, int | float):
        return float(value)
    try:
        return parse_duration(str(value))
    except ValueError as e:
        raise ConfigError(str(e), field=field) from None


def apply_config_sections(opts: RunOptions, doc: Mapping[str, Any], source: str = "") -> None:
    """Take ``clientConnection`` and ``leaderElection`` from a KubeSchedulerConfiguration document
    (the flags given on the command line are applied after this and win)."""
    cc = doc.get("clientConnection") or {}
    le = doc.get("leaderElection") or {}
    if not isinstance(cc, Mapping) or not isinstance(le, Mapping):
        raise ConfigError(
            "must be a mapping", field="clientConnection/leaderElection", source=source
        )
    try:
        if cc.get("kubeconfig"):
            opts.kubeconfig = str(cc["kubeconfig"])
        if "qps" in cc:
            opts.qps = float(cc["qps"])
        if "burst" in cc:
            opts.burst = int(cc["burst"])
        if "leaderElect" in le:
            opts.leader_elect = bool(le["leaderElect"])
        if le.get("resourceName"):
            opts.lease_name = str(le["resourceName"])
        if le.get("resourceNamespace"):
            opts.lease_namespace = str(le["resourceNamespace"])
        for key, attr in (
            ("leaseDuration", "lease_duration"),
            ("renewDeadline", "renew_deadline"),
            ("retryPeriod", "retry_period"),
        ):
            if key in le:
                setattr(opts, attr, _seconds(le[key], f"leaderElection.{key}"))
        if le.get("resourceLock") not in (None, "leases"):
            raise ConfigError('only "leases" is supported', field="leaderElection.resourceLock")
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e), source=source) from None
    except ConfigError as e:
        raise e.at(source=source) from None


class MetricsExporter:
    """Scheduler.metrics under upstream's metric names, in a prometheus-client registry.

    ``update()`` (every second from ``run()``, on the event loop) adds what happened since the
    last update; it drains ``attempt_durations`` and ``preemption_victims`` as it goes, so a
    long-running scheduler keeps no growing lists.
    """

    def __init__(self, profile: str, registry: Any = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = registry if registry is not None else CollectorRegistry()
        self.profile = profile
        self.attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result.",
            ["result", "profile"],
            registry=self.registry,
        )
        self.pending = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type.",
            ["queue"],
            registry=self.registry,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            registry=self.registry,
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=PREEMPTION_VICTIMS_BUCKETS,
            registry=self.registry,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=ATTEMPT_DURATION_BUCKETS,
            registry=self.registry,
        )
        for q in ("active", "backoff", "unschedulable", "gated"):
            self.pending.labels(queue=q).set(0)
        for result in ("scheduled", "unschedulable", "error"):
            self.attempts.labels(result=result, profile=profile)
        self._seen: dict[str, int] = {}
        self._seen_preemption_attempts = 0
        self.scheduler: Scheduler | None = None

    def attach(self, scheduler: Scheduler) -> None:
        """Export this scheduler's metrics (a new one after a restart keeps the totals)."""
        self.scheduler = scheduler
        self._seen = {}
        self._seen_preemption_attempts = 0

    def update(self) -> None:
        s = self.scheduler
        if s is None:
            return
        m = s.metrics
        for result, n in m.schedule_attempts.items():
            delta = n - self._seen.get(result, 0)
            if delta > 0:
                self.attempts.labels(result=result, profile=self.profile).inc(delta)
            self._seen[result] = n
        delta = m.preemption_attempts - self._seen_preemption_attempts
        if delta > 0:
            self.preemption_attempts.inc(delta)
        self._seen_preemption_attempts = m.preemption_attempts
        victims, m.preemption_victims[:] = list(m.preemption_victims), []
        for v in victims:
            self.preemption_victims.observe(v)
        durations, m.attempt_durations[:] = list(m.attempt_durations), []
        hist = self.attempt_duration.labels(result="scheduled", profile=self.profile)
        for d in durations:
            hist.observe(d)
        pending = s.queue.pending_pods()
        unschedulable = pending.get("unschedulable", [])
        gated = sum(1 for q in unschedulable if q.gated)
        self.pending.labels(queue="active").set(len(pending.get("active", [])))
        self.pending.labels(queue="backoff").set(len(pending.get("backoff", [])))
        self.pending.labels(queue="unschedulable").set(len(unschedulable) - gated)
        self.pending.labels(queue="gated").set(gated)

    async def run(self, period: float = 1.0) -> None:
        while True:
            self.update()
            await anyio.sleep(period)


def start_metrics_server(exporter: MetricsExporter, port: int, address: str) -> Any:
    """Serve /metrics in a thread; returns the server (``shutdown()`` it)."""
    from prometheus_client import start_http_server

    try:
        server, _thread = start_http_server(port, addr=address, registry=exporter.registry)
    except OSError as e:
        raise ConfigError(
            f"cannot listen on {address}:{port}: {e.strerror or e}", field="--metrics-port"
        ) from None
    return server


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in _leaves(e)]
    return [exc]


@contextlib.asynccontextmanager
async def _unwrapped_errors() -> AsyncIterator[None]:
    """A task group's ExceptionGroup holding one error re-raised as that error (a ConfigError
    then reaches the CLI as one clear line)."""
    try:
        yield
    except BaseExceptionGroup as eg:
        leaves = _leaves(eg)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise


async def _cancel_on_signal(scope: anyio.CancelScope, stopping: list[str]) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            log.info("received %s: shutting down", name)
            stopping.append(name)
            scope.cancel()
            return


async def _refuse_to_compete(transport: Any, cfg: SchedulerConfig, opts: RunOptions) -> None:
    """A profile that schedules ``default-scheduler`` pods while a kube-scheduler leads (its
    lease ``kube-system/kube-scheduler`` renewed within its duration) would bind the same pods
    as it: refuse, unless told to take over."""
    from kubesched.transports.kube import DEFAULT_SCHEDULER_LEASE, live_lease_holder

    from .._config import DEFAULT_SCHEDULER_NAME
    from .._errors import TransportError

    if opts.take_over_default_scheduler:
        return
    if not any(p.scheduler_name == DEFAULT_SCHEDULER_NAME for p in cfg.profiles):
        return
    ns, name = DEFAULT_SCHEDULER_LEASE
    try:
        live = await live_lease_holder(transport, ns, name)
    except TransportError as e:  # e.g. 403: RBAC does not let it read that lease
        log.warning("cannot read the lease %s/%s (%s): not checking for a running kube-scheduler", ns, name, e)
        return
    if live is None:
        return
    holder, age = live
    raise ConfigError(
        f"a kube-scheduler is running (lease {ns}/{name} held by {holder}, renewed {age:.0f}s ago) "
        f'and a profile schedules "{DEFAULT_SCHEDULER_NAME}" pods: both would bind them; pass a '
        "--config whose profiles have another schedulerName, or --take-over-default-scheduler"
    )


async def run_scheduler(
    opts: RunOptions,
    cfg: SchedulerConfig,
    *,
    exporter: MetricsExporter | None = None,
    task_status: anyio.abc.TaskStatus[Scheduler] = anyio.TASK_STATUS_IGNORED,
    handle_signals: bool = True,
) -> int:
    """Run until a signal (0) or a lost lease (1).  ``task_status.started(scheduler)`` once the
    scheduler has synced its cache (in-process tests)."""
    from kubesched.transports.kube import (
        KubeTransport,
        LeaderElectionLost,
        LeaderElector,
        load_config,
    )

    cluster = load_config(kubeconfig=opts.kubeconfig, server=opts.server, context=opts.context)
    log.info("connecting to %s (%s)", cluster.server, cluster.source or "flags")
    profiles = ", ".join(p.scheduler_name for p in cfg.profiles)
    code = 0
    server = None
    if exporter is None and opts.metrics_port is not None:
        exporter = MetricsExporter(cfg.profiles[0].scheduler_name)
    if exporter is not None and opts.metrics_port is not None:
        server = start_metrics_server(exporter, opts.metrics_port, opts.metrics_address)
        log.info("serving metrics on %s:%d/metrics", opts.metrics_address, opts.metrics_port)
    started = False
    try:
        async with (
            _unwrapped_errors(),
            KubeTransport(cluster, qps=opts.qps, burst=opts.burst, seed=opts.seed) as transport,
        ):
            await _refuse_to_compete(transport, cfg, opts)
            elector = None
            if opts.leader_elect:
                elector = LeaderElector(
                    transport,
                    name=opts.lease_name,
                    namespace=opts.lease_namespace,
                    lease_duration=opts.lease_duration,
                    renew_deadline=opts.renew_deadline,
                    retry_period=opts.retry_period,
                )
            stopping: list[str] = []
            async with anyio.create_task_group() as tg:
                if handle_signals:
                    tg.start_soon(_cancel_on_signal, tg.cancel_scope, stopping)
                if exporter is not None:
                    tg.start_soon(exporter.run)

                async def schedule() -> None:
                    nonlocal started
                    sched = Scheduler(
                        transport, cfg, seed=opts.seed, record_timings=exporter is not None,
                        patch_plugin_results=opts.record_plugin_results,
                    )
                    if exporter is not None:
                        exporter.attach(sched)
                    async with anyio.create_task_group() as stg:
                        await stg.start(sched.run)
                        log.info("cache synced: scheduling pods of scheduler(s) %s", profiles)
                        if not started:
                            started = True
                            task_status.started(sched)

                try:
                    if elector is not None:
                        await elector.run(schedule)
                    else:
                        await schedule()
                except LeaderElectionLost as e:
                    log.error("%s: stopping", e)
                    code = 1
                tg.cancel_scope.cancel()
    finally:
        if exporter is not None:
            exporter.update()
        if server is not None:
            server.shutdown()
    return code
