"""``kubesched.testing.scheduler_for``: a fake cluster and a running scheduler, for tests.

Model::

    scheduler_for(objects, plugins=, config= | enable=, plugin_args=)
        FakeCluster  ◄── objects created first (the t=0 listing)
        Scheduler(cluster, config, registry=plugins) running in a task group of the current loop
        yield SimCluster ──► test: sim.create(pod); await sim.settle(); assert sim.placements()
        on exit: cancel the scheduler, close the cluster (an error in the test body comes out
        as itself, not wrapped in an ExceptionGroup)

It runs on the current event loop, which should be in virtual time (kubesched's pytest plugin,
or ``kubesched.transports.fake.virtual_time.run``), so backoffs and grace periods pass at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel

from kubesched.api._objects import Pod, PodCondition
from kubesched.api._pvhelpers import vac_matching
from kubesched.config._config import API_VERSION, KIND, SchedulerConfig, parse_config
from kubesched.config._versions import (
    DEFAULT_VERSION,
    Version,
    default_feature_gates,
    parse_version,
)
from kubesched.runtime._entrypoints import Factory, all_plugins
from kubesched.scheduler._scheduler import Scheduler

SETTLE_POLL_SECONDS = 0.01
"""How often (virtual seconds) :meth:`SimCluster.settle` looks at the scheduler."""


class SimCluster:
    """A fake cluster and the scheduler running on it (from :func:`scheduler_for`)."""

    def __init__(self, cluster: Any, scheduler: Scheduler) -> None:
        self.cluster = cluster
        """The :class:`kubesched.transports.fake.FakeCluster` (create, update, delete, faults)."""
        self.scheduler = scheduler
        """The running :class:`kubesched.Scheduler`."""

    # --- changing the cluster --------------------------------------------------------------
    def create(self, *objects: Any) -> None:
        """Create objects (Pods, Nodes, PDBs, PriorityClasses, PodGroups), in order."""
        for obj in objects:
            self.cluster.create(obj)

    # --- waiting ---------------------------------------------------------------------------
    def is_settled(self, *, terminations: bool = True) -> bool:
        """Nothing for the scheduler to do (see ``Scheduler.is_idle``), and, with
        ``terminations``, no deleted pod still in its grace period."""
        if terminations and self.cluster.pending_terminations():
            return False
        return self.scheduler.is_idle()

    async def settle(self, *, timeout: float = 3600.0, terminations: bool = True) -> None:
        """Wait until nothing more can happen: no pod in the active or backoff queue, in a
        scheduling cycle, binding, waiting on Permit, or being preempted; no watch event
        undelivered; and (``terminations``) no victim still terminating.

        Pods the scheduler found unschedulable stay pending: a settled cluster is what a test
        asserts on.  In virtual time the wait takes no real time; ``timeout`` is virtual seconds
        (TimeoutError when the scheduler never settles, e.g. a plugin that keeps requeueing).
        """
        deadline = anyio.current_time() + timeout
        while True:
            if self.is_settled(terminations=terminations):
                # let everything already runnable at this instant run, then look again
                await anyio.lowlevel.checkpoint()
                if self.is_settled(terminations=terminations):
                    return
            if anyio.current_time() >= deadline:
                raise TimeoutError(
                    f"the scheduler did not settle within {timeout:g}s: {self._busy()}"
                )
            await anyio.sleep(SETTLE_POLL_SECONDS)

    def _busy(self) -> str:
        q = self.scheduler.queue
        waiting = sum(len(fw.waiting_pods) for fw in self.scheduler.profiles.values())
        return (
            f"{len(q.active_q)} active, {len(q.backoff)} in backoff, {len(q.in_flight)} in flight, "
            f"{waiting} waiting on permit, {self.cluster.pending_terminations()} terminating"
        )

    # --- looking ---------------------------------------------------------------------------
    def pod(self, name: str, namespace: str = "default") -> Pod | None:
        """The pod as the cluster has it now (None once deleted)."""
        pod: Pod | None = self.cluster.get_pod(namespace, name)
        return pod

    def node_of(self, name: str, namespace: str = "default") -> str | None:
        """The node the pod is bound to (None: pending, or deleted)."""
        pod = self.pod(name, namespace)
        return (pod.spec.node_name or None) if pod is not None else None

    def placements(self) -> dict[str, str | None]:
        """Every pod in the cluster → its node (None: pending).  Pods of the ``default``
        namespace are keyed by name, others by ``namespace/name``."""
        out: dict[str, str | None] = {}
        for pod in self.cluster.pods():
            ns, name = pod.metadata.namespace, pod.metadata.name
            out[name if ns == "default" else f"{ns}/{name}"] = pod.spec.node_name or None
        return out

    def condition(
        self, name: str, namespace: str = "default", type: str = "PodScheduled"
    ) -> PodCondition | None:
        """The pod's condition of ``type`` (e.g. why it is pending: ``.message``)."""
        pod = self.pod(name, namespace)
        if pod is None:
            return None
        return next((c for c in pod.status.conditions if c.type == type), None)

    def events(self, reason: str | None = None) -> list[Any]:
        """The recorded Events (``EventRecord``), all or those with ``reason``."""
        return [e for e in self.cluster.events if reason is None or e.reason == reason]


def _config(
    config: SchedulerConfig | Mapping[str, Any] | None,
    registry: Mapping[str, Factory],
    enable: Sequence[str | tuple[str, int]],
    plugin_args: Mapping[str, Mapping[str, Any]] | None,
    version: Version | None = None,
    gates: Mapping[str, bool] | None = None,
) -> SchedulerConfig:
    if config is not None and (enable or plugin_args):
        raise ValueError("give either config= or enable= / plugin_args=, not both")
    if isinstance(config, SchedulerConfig):
        if version is not None and version != config.emulated_version:
            raise ValueError("give emulated_version= or a SchedulerConfig of that version, not both")
        return config
    if config is None:
        if not enable and not plugin_args:
            if version is None and gates is None:
                return SchedulerConfig()
            config = {"apiVersion": API_VERSION, "kind": KIND}
        enabled = [
            {"name": p} if isinstance(p, str) else {"name": p[0], "weight": p[1]} for p in enable
        ]
        profile: dict[str, Any] = {"plugins": {"multiPoint": {"enabled": enabled}}}
        if plugin_args:
            profile["pluginConfig"] = [{"name": n, "args": dict(a)} for n, a in plugin_args.items()]
        config = {"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]}
    version = version or DEFAULT_VERSION
    if gates is not None:
        gates = {**default_feature_gates(version), **gates}
    return parse_config(config, registry=registry, version=version, feature_gates=gates)


@asynccontextmanager
async def scheduler_for(
    objects: Iterable[Any] = (),
    *,
    plugins: Mapping[str, Factory] | None = None,
    config: SchedulerConfig | Mapping[str, Any] | None = None,
    enable: Sequence[str | tuple[str, int]] = (),
    plugin_args: Mapping[str, Mapping[str, Any]] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    emulated_version: str | Version | None = None,
    seed: int = 0,
    **cluster_options: Any,
) -> AsyncIterator[SimCluster]:
    """A fake cluster holding ``objects`` and a scheduler running on it, in the current loop: the
    engine side of :func:`kubesched.testing.scheduler_for`, whose docstring gives the arguments
    (the public one also turns a task group's failure into the plain exception)."""
    from kubesched.transports.fake import FakeCluster

    extra = dict(plugins or {})
    registry = all_plugins()  # keeps ``.unavailable``: why a broken entry point is missing
    registry.update(extra)
    version = parse_version(emulated_version) if isinstance(emulated_version, str) else emulated_version
    cfg = _config(config, registry, enable, plugin_args, version, feature_gates)
    if feature_gates:
        cfg.feature_gates = {**cfg.feature_gates, **feature_gates}
    failure: Exception | None = None
    # ClearingNominatedNodeNameAfterBinding (beta on from 1.35): the API server's, per version
    cluster_options.setdefault(
        "clear_nominated_node_name_on_binding", bool(cfg.feature_gates.get("ClearingNominatedNodeNameAfterBinding", False))
    )
    cluster_options.setdefault("volume_attributes_class", vac_matching(cfg.emulated_version, cfg.feature_gates))
    async with FakeCluster(**cluster_options) as cluster:
        for obj in objects:
            cluster.create(obj)
        scheduler = Scheduler(cluster, cfg, registry=extra or None, seed=seed)
        async with anyio.create_task_group() as tg:
            await tg.start(scheduler.run)
            try:
                yield SimCluster(cluster, scheduler)
            except Exception as err:  # re-raised below, outside the task groups
                failure = err
            finally:
                tg.cancel_scope.cancel()
    if failure is not None:
        raise failure


__all__ = ["SETTLE_POLL_SECONDS", "SimCluster", "scheduler_for"]
