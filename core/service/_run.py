"""``kubesched run``: schedule a live cluster as a secondary scheduler.

::

    SIGINT/SIGTERM ─► cancel everything ─► release the lease ─► exit 0
    KubeTransport (list-then-watch, writes) ◄── Scheduler (pods whose schedulerName is a profile's)
         │                                          ▲
         └── LeaderElector (--leader-elect) ────────┘ runs the scheduler only while leading;
                                                     lease lost ─► scheduler cancelled ─► exit 1
    --metrics-port: a MetricsRecorder (kubesched.metrics._metrics) on every Scheduler in turn, served
                    with the health endpoints on the event loop (kubesched.prometheus):
                    /metrics, /healthz, /livez, /readyz; any other path 404

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

from kubesched._errors import ConfigError, plain_exception
from kubesched._logs import v
from kubesched.api._durations import parse_duration
from kubesched.config._config import SchedulerConfig
from kubesched.metrics._metrics import MetricsRecorder
from kubesched.scheduler._scheduler import Scheduler

log = logging.getLogger("kubesched")

LEADER_ELECTION_HEALTH_TIMEOUT = 20.0
"""``NewLeaderHealthzAdaptor(time.Second * 20)``: how long past the lease duration a leader
that has not renewed still counts as healthy."""


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
    built_in_profile: bool = False
    """The profiles are the built-in default (no ``--config``): they take ``default-scheduler``
    pods, so run refuses to start unless :attr:`take_over_default_scheduler`, whatever the lease
    ``kube-system/kube-scheduler`` says (RBAC may hide it)."""


WIRE_VERBOSITY = 6
"""``-v`` from which httpx logs each request (klog's V(6): the request URLs); httpcore's
connection and header events from 8 (V(8): the bodies)."""

LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


class _KlogLevelNames(logging.Formatter):
    """``INFO`` for every klog V level (``V(n)`` is ``INFO - n``: Python would call it ``Level 17``)."""

    def format(self, record: logging.LogRecord) -> str:
        if logging.DEBUG < record.levelno < logging.INFO:
            record.levelname = "INFO"
        return super().format(record)


def configure_logging(verbosity: int = 0, log_level: str | None = None, *, stream: Any = None) -> None:
    """Logging as ``kube-scheduler -v=N`` logs, on stderr (``kubesched run`` only: a simulation
    configures none, so it prints none of it).

    kubesched's loggers show klog's ``V(0)`` to ``V(verbosity)`` (:func:`kubesched._logs.v`):
    0–1 the info lines, 2 each bind and each pod that does not fit, 3 each scheduling attempt,
    10 everything (DEBUG).  ``log_level`` (debug, info, warning, error) is the other way to say
    it: the more verbose of the two wins, so ``--log-level warning`` quietens the default and
    ``--log-level debug`` is ``-v=10``.  httpx and httpcore stay at WARNING below ``-v=6``
    (:data:`WIRE_VERBOSITY`) whatever ``log_level`` says: httpx logs each request from 6,
    httpcore its connection and header events from 8.
    """
    level = v(verbosity)
    if log_level is not None:
        level = min(level, LOG_LEVELS[log_level]) if verbosity else LOG_LEVELS[log_level]
    root = logging.getLogger()
    if not root.handlers:  # as logging.basicConfig: a process that has its own keeps them
        handler = logging.StreamHandler(stream)
        handler.setFormatter(_KlogLevelNames("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("httpx").setLevel(logging.INFO if verbosity >= WIRE_VERBOSITY else logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.DEBUG if verbosity >= WIRE_VERBOSITY + 2 else logging.WARNING)


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


@contextlib.asynccontextmanager
async def _unwrapped_errors() -> AsyncIterator[None]:
    """A task group's ExceptionGroup re-raised as the one exception it stands for
    (:func:`kubesched.plain_exception`: a ConfigError then reaches the CLI as one clear line)."""
    try:
        yield
    except BaseExceptionGroup as eg:
        error = plain_exception(eg)
        if error is None:
            raise
        raise error from None


async def _cancel_on_signal(scope: anyio.CancelScope, stopping: list[str]) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            log.info("received %s: shutting down", name)
            stopping.append(name)
            scope.cancel()
            return


def check_takes_default_scheduler_pods(opts: RunOptions) -> None:
    """ConfigError unless the user chose which pods ``run`` takes: without ``--config`` the
    default profile takes every ``default-scheduler`` pod, the ones a kube-scheduler already
    schedules, so that needs ``--take-over-default-scheduler`` (checked before connecting)."""
    if opts.built_in_profile and not opts.take_over_default_scheduler:
        raise ConfigError(
            'without --config the default profile schedules "default-scheduler" pods, those of '
            "kube-scheduler: pass --take-over-default-scheduler to schedule them, or a --config whose "
            "profile has schedulerName: my-scheduler (and spec.schedulerName: my-scheduler on the pods)"
        )


async def _refuse_to_compete(transport: Any, cfg: SchedulerConfig, opts: RunOptions) -> None:
    """A profile that schedules ``default-scheduler`` pods while a kube-scheduler leads (its
    lease ``kube-system/kube-scheduler`` renewed within its duration) would bind the same pods
    as it: refuse, unless told to take over."""
    from kubesched._errors import TransportError
    from kubesched.config._config import DEFAULT_SCHEDULER_NAME
    from kubesched.transports.kube import DEFAULT_SCHEDULER_LEASE, live_lease_holder

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


class _Health:
    """The state kube-scheduler's health checks look at (``kubesched.prometheus``)."""

    def __init__(self, opts: RunOptions, stopping: list[str]) -> None:
        self.opts = opts
        self.stopping = stopping
        self.elector: Any = None
        self.synced = False

    def leader_election(self) -> str | None:
        """``HealthzAdaptor.Check``: a leader whose lease was last renewed more than its
        duration plus 20 s ago is unhealthy; a candidate that does not lead is healthy."""
        e = self.elector
        if e is None or not e.is_leader:
            return None
        observed = getattr(e, "_observed_time", None)  # when the lease last changed, its clock
        if observed is not None and anyio.current_time() - observed > e.lease_duration + LEADER_ELECTION_HEALTH_TIMEOUT:
            return f"failed election to renew leadership on lease {e.name}"
        return None

    def shutdown(self) -> str | None:
        return "process is shutting down" if self.stopping else None

    def handler_sync(self) -> str | None:
        return None if self.synced else "handlers are not fully synchronized"

    def endpoints(self, registry: Any) -> Any:
        from kubesched.prometheus import Endpoints, ping

        leader = [("leaderElection", self.leader_election)] if self.opts.leader_elect else []
        return Endpoints(
            registry,
            healthz=leader or [("ping", ping)],
            livez=[("ping", ping)],
            readyz=[*leader, ("shutdown", self.shutdown), ("sched-handler-sync", self.handler_sync)],
        )


async def run_scheduler(
    opts: RunOptions,
    cfg: SchedulerConfig,
    *,
    recorder: MetricsRecorder | None = None,
    task_status: anyio.abc.TaskStatus[Scheduler] = anyio.TASK_STATUS_IGNORED,
    handle_signals: bool = True,
) -> int:
    """Run until a signal (0) or a lost lease (1).  ``task_status.started(scheduler)`` once the
    scheduler has synced its cache (in-process tests).  ``recorder``: the metrics recorder to
    attach to the scheduler (one is made when ``opts.metrics_port`` is set)."""
    import kubesched.prometheus as prometheus
    from kubesched.transports.kube import (
        KubeTransport,
        LeaderElectionLost,
        LeaderElector,
        load_config,
        resources_for,
    )

    check_takes_default_scheduler_pods(opts)
    cluster = load_config(kubeconfig=opts.kubeconfig, server=opts.server, context=opts.context)
    log.info("connecting to %s (%s)", cluster.server, cluster.source or "flags")
    profiles = ", ".join(p.scheduler_name for p in cfg.profiles)
    code = 0
    stopping: list[str] = []
    health = _Health(opts, stopping)
    listener = None
    if opts.metrics_port is not None:
        if recorder is None:
            recorder = MetricsRecorder(seed=opts.seed)
        listener = await prometheus.listen(opts.metrics_address, opts.metrics_port)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        log.info("serving /metrics, /healthz, /livez and /readyz on %s:%d", opts.metrics_address, port)
    started = False
    try:
        async with (
            _unwrapped_errors(),
            KubeTransport(
                cluster, qps=opts.qps, burst=opts.burst, seed=opts.seed, resources=resources_for(cfg.feature_gates)
            ) as transport,
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
            health.elector = elector
            async with anyio.create_task_group() as tg:
                if handle_signals:
                    tg.start_soon(_cancel_on_signal, tg.cancel_scope, stopping)
                if listener is not None:
                    assert recorder is not None
                    registry = prometheus.registry(recorder, process=True)
                    tg.start_soon(prometheus.serve, listener, health.endpoints(registry))

                async def schedule() -> None:
                    nonlocal started
                    sched = Scheduler(
                        transport, cfg, seed=opts.seed, patch_plugin_results=opts.record_plugin_results,
                    )
                    if recorder is not None:
                        recorder.attach(sched)
                    async with anyio.create_task_group() as stg:
                        await stg.start(sched.run)
                        health.synced = True
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
        if listener is not None:
            with anyio.CancelScope(shield=True):
                await listener.aclose()
    return code
