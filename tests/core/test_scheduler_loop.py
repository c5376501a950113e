"""The scheduler end to end on the fake cluster: failures, retries, watch drops, Permit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

import kubesched
from kubesched import Status, hookimpl, per_node_filter
from kubesched.config._config import ProfileConfig, SchedulerConfig, default_multi_point
from kubesched.scheduler._scheduler import Scheduler
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio


class Boom:
    """A Filter plugin with a bug: it raises on one node."""

    name = "Boom"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: Any, pod: kubesched.Pod, node_info: kubesched.NodeInfo) -> Status | None:
        if pod.metadata.labels.get("boom"):
            raise RuntimeError("boom")
        return None


class Waiter:
    """A Permit plugin that makes every pod labelled ``wait`` wait 10 s, and never allows it."""

    name = "Waiter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def kubesched_permit(self, state: Any, pod: kubesched.Pod, node_name: str) -> Any:
        if pod.metadata.labels.get("wait"):
            return Status.wait(), 10.0
        return None


def _config(*extra: str) -> SchedulerConfig:
    mp = [(n, w) for n, w in default_multi_point() if n not in ("DefaultPreemption", "Gang", "Coscheduling")]
    mp += [(n, 0) for n in extra]
    return SchedulerConfig(profiles=[ProfileConfig(multi_point=mp)])


@asynccontextmanager
async def running(objs: list[Any], config: SchedulerConfig) -> AsyncIterator[tuple[FakeCluster, Scheduler]]:
    async with FakeCluster() as cluster:
        for o in objs:
            cluster.create(o)
        sched = Scheduler(cluster, config, registry={"Boom": Boom, "Waiter": Waiter})
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)
            yield cluster, sched
            tg.cancel_scope.cancel()


async def settle(cluster: FakeCluster, sched: Scheduler, limit: float = 600) -> None:
    with anyio.fail_after(limit):
        while True:
            await anyio.sleep(1)
            if sched.is_idle() and cluster.pending_terminations() == 0:
                return


def _events(cluster: FakeCluster, obj: str) -> list[tuple[str, str]]:
    return [(e.reason, e.message) for e in cluster.events if e.object == obj]


async def test_a_plugin_that_raises_is_an_error_for_that_pod_only() -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(2)]
    pods = [make_pod("bad").label("boom", "1").req(cpu="1").obj(), make_pod("good").req(cpu="1").obj()]
    async with running([*nodes, *pods], _config("Boom")) as (cluster, sched):
        await anyio.sleep(0.5)
        bad = cluster.get_pod("default", "bad")
        good = cluster.get_pod("default", "good")
        assert good is not None and good.spec.node_name
        assert bad is not None and not bad.spec.node_name
        assert _events(cluster, "default/bad")[0] == ("FailedScheduling", 'running "Boom" filter plugin: boom')
        cond = next(c for c in bad.status.conditions if c.type == "PodScheduled")
        assert (cond.status, cond.reason) == ("False", "SchedulerError")
        # an error is retried after the backoff, not parked as unschedulable
        assert sched.queue.get(bad.metadata.uid) in sched.queue.backoff_q.values() + sched.queue.error_backoff_q.values() + sched.queue.active_q.values()


async def test_bind_failure_is_retried_and_binds_exactly_once() -> None:
    node = make_node("n1").capacity(cpu="4", memory="8Gi").obj()
    pod = make_pod("p").req(cpu="1").obj()
    async with running([node], _config()) as (cluster, sched):
        cluster.faults.fail_next("bind", kubesched.UnavailableError("etcd timeout"))
        cluster.create(pod)
        await settle(cluster, sched)
        got = cluster.get_pod("default", "p")
        assert got is not None and got.spec.node_name == "n1"
        events = _events(cluster, "default/p")
        # upstream RunBindPlugins: "running Bind plugin %q: %w" around DefaultBinder's API error
        assert events[0] == ("FailedScheduling", 'running Bind plugin "DefaultBinder": etcd timeout')
        assert [r for r, _ in events].count("Scheduled") == 1
        # the failed attempt's assumption was forgotten: the node counts the pod once
        assert len(sched.cache.node_infos["n1"].pods) == 1


async def test_bind_conflict_when_bound_elsewhere_is_not_requeued() -> None:
    node = make_node("n1").capacity(cpu="4", memory="8Gi").obj()
    async with running([node], _config()) as (cluster, sched):
        cluster.faults.fail_next("bind", kubesched.ConflictError('pod p is already assigned to node "n1"'))
        cluster.create(make_pod("p").req(cpu="1").obj())
        await settle(cluster, sched)
        assert sched.queue.get(make_pod("p").obj().metadata.uid) is None


async def test_watch_drop_relists_and_loses_no_pod() -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(3)]
    async with running(nodes, _config()) as (cluster, sched):
        for i in range(5):
            cluster.create(make_pod(f"a{i}").req(cpu="500m").obj())
        await anyio.sleep(0.1)
        cluster.faults.drop_watches()
        for i in range(5):
            cluster.create(make_pod(f"b{i}").req(cpu="500m").obj())
        cluster.delete_object("Node", "", "n2")
        await settle(cluster, sched)
        pods = cluster.pods()
        assert len(pods) == 10
        assert all(p.spec.node_name for p in pods)
        assert "n2" not in sched.cluster.nodes
        assert [e.reason for e in cluster.events].count("Scheduled") == 10


async def test_permit_timeout_releases_the_pod_with_upstream_message() -> None:
    node = make_node("n1").capacity(cpu="1", memory="8Gi").obj()
    waiting = make_pod("w").label("wait", "1").req(cpu="1").obj()
    other = make_pod("o").req(cpu="1").obj()
    async with running([node, waiting], _config("Waiter")) as (cluster, sched):
        await anyio.sleep(1)
        # the waiting pod holds the node's CPU: another pod does not fit meanwhile
        cluster.create(other)
        await anyio.sleep(1)
        assert _events(cluster, "default/o")[0][0] == "FailedScheduling"
        assert cluster.get_pod("default", "w").spec.node_name == ""
        await anyio.sleep(9)
        events = _events(cluster, "default/w")
        assert events[0] == (
            "FailedScheduling",
            "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Waiter.",
        )
        # its reservation was released: the other pod got the node
        await settle(cluster, sched)
        assert cluster.get_pod("default", "o").spec.node_name == "n1"
