"""The scheduler's pod informer excludes terminal pods, as upstream's field selector
``status.phase!=Succeeded,status.phase!=Failed`` does (scheduler.go, NewInformerFactory)."""

from __future__ import annotations

import anyio
import pytest

from kubesched import Scheduler
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio


async def _settle(sched: Scheduler) -> None:
    with anyio.fail_after(60):
        while True:
            await anyio.sleep(1)
            if sched.is_idle():
                return


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
async def test_a_pod_turning_terminal_leaves_the_cache_and_moves_waiting_pods(phase: str) -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").capacity(cpu="2", memory="4Gi").obj())
        sched = Scheduler(cluster)
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)
            cluster.create(make_pod("a").req(cpu="2").obj())
            await _settle(sched)
            cluster.create(make_pod("b").req(cpu="2").obj())
            await _settle(sched)
            assert not cluster.get_pod("default", "b").spec.node_name  # type: ignore[union-attr]
            a = cluster.get_pod("default", "a")
            assert a is not None
            cluster.set_pod_phase(a, phase)
            await _settle(sched)
            # seen as a deletion: the node is free and b (AssignedPodDelete) is placed
            assert a.metadata.uid not in sched.cluster.pods
            assert [p.pod.metadata.name for p in sched.cache.node_infos["n1"].pods] == ["b"]
            assert cluster.get_pod("default", "b").spec.node_name == "n1"  # type: ignore[union-attr]
            tg.cancel_scope.cancel()


async def test_a_pod_created_terminal_is_never_seen() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").capacity(cpu="2", memory="4Gi").obj())
        done = make_pod("done").req(cpu="2").obj()
        done.status.phase = "Succeeded"
        cluster.create(done)
        sched = Scheduler(cluster)
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)
            cluster.create(make_pod("b").req(cpu="2").obj())
            await _settle(sched)
            assert [p.metadata.name for p in sched.cluster.pods.values()] == ["b"]
            assert cluster.get_pod("default", "done").spec.node_name == ""  # type: ignore[union-attr]
            assert cluster.get_pod("default", "b").spec.node_name == "n1"  # type: ignore[union-attr]
            tg.cancel_scope.cancel()


async def test_duration_with_kubelet_timers() -> None:
    """Outside a simulation the fake kubelet's own task ends pods at their duration."""
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").capacity(cpu="2", memory="4Gi").obj())
        p = make_pod("a").req(cpu="1").obj()
        p.metadata.annotations = {"kubesched.io/duration": "2m"}
        p.spec.node_name = "n1"
        cluster.create(p)
        await anyio.sleep(119)
        assert cluster.get_pod("default", "a").status.phase == "Running"  # type: ignore[union-attr]
        await anyio.sleep(2)
        assert cluster.get_pod("default", "a").status.phase == "Succeeded"  # type: ignore[union-attr]
