"""``Scheduler.wait_idle``: returns once the scheduler has nothing to do, live or deterministic,
however many times and by however many tasks it is awaited (virtual time here; real time in
tests/e2e/test_embed_service.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from kubesched import Scheduler
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def running(*, deterministic: bool) -> AsyncIterator[tuple[FakeCluster, Scheduler]]:
    async with FakeCluster(kubelet_timers=not deterministic) as cluster:
        for name in ("n1", "n2"):
            cluster.create(make_node(name).capacity(cpu="2").obj())
        scheduler = Scheduler(cluster, deterministic=deterministic)
        async with anyio.create_task_group() as tg:
            await tg.start(scheduler.run)
            yield cluster, scheduler
            tg.cancel_scope.cancel()


def placements(cluster: FakeCluster) -> dict[str, str | None]:
    return {p.metadata.name: p.spec.node_name or None for p in cluster.pods()}


@pytest.mark.parametrize("deterministic", [False, True], ids=["live", "deterministic"])
async def test_wait_idle_again_and_again_and_by_several_tasks(deterministic: bool) -> None:
    async with running(deterministic=deterministic) as (cluster, scheduler):
        with anyio.fail_after(60):  # virtual seconds: a safety net only
            await scheduler.wait_idle()  # nothing to do from the start
            for name in ("a", "b", "c"):
                cluster.create(make_pod(name).req(cpu="1500m").obj())
            await scheduler.wait_idle()
            first = placements(cluster)
            assert first["c"] is None  # 1.5 cpu on 2-cpu nodes: the third pod is unschedulable
            assert {first["a"], first["b"]} == {"n1", "n2"}
            start = anyio.current_time()
            await scheduler.wait_idle()  # already idle: at once (a simulation's loop may sleep)
            assert anyio.current_time() == start
            # a deleted pod makes room: two tasks wait for the scheduler to place ``c``
            bound = next(p for p in cluster.pods() if p.spec.node_name)
            cluster.delete_now("Pod", bound.metadata.namespace, bound.metadata.name, graceful=False)
            done: list[str] = []

            async def waiter(name: str) -> None:
                await scheduler.wait_idle()
                done.append(name)

            async with anyio.create_task_group() as tg:
                tg.start_soon(waiter, "first")
                tg.start_soon(waiter, "second")
            assert sorted(done) == ["first", "second"]
            assert placements(cluster)["c"] == bound.spec.node_name
            assert scheduler.is_idle()
