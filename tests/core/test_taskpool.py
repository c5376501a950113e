"""TaskPool: jobs run concurrently on reused tasks (the binding cycles' workers)."""

from __future__ import annotations

import anyio
import pytest

from kubesched.scheduler._taskpool import TaskPool

pytestmark = pytest.mark.anyio


async def test_a_job_waiting_never_holds_up_the_next() -> None:
    gate = anyio.Event()
    done: list[str] = []

    async def blocked() -> None:
        await gate.wait()
        done.append("blocked")

    async def quick(name: str) -> None:
        done.append(name)

    async with anyio.create_task_group() as tg:
        pool = TaskPool(tg)
        pool.start_soon(blocked)
        pool.start_soon(quick, "a")
        pool.start_soon(quick, "b")
        with anyio.fail_after(5):
            while len(done) < 2:
                await anyio.sleep(0)
        assert done == ["a", "b"]  # in submission order, past the waiting job
        gate.set()
        with anyio.fail_after(5):
            while len(done) < 3:
                await anyio.sleep(0)
        tg.cancel_scope.cancel()  # the workers wait for jobs as long as the task group lives
    assert done == ["a", "b", "blocked"]


async def test_idle_workers_are_reused() -> None:
    ran = 0

    async def job() -> None:
        nonlocal ran
        ran += 1

    async with anyio.create_task_group() as tg:
        pool = TaskPool(tg)
        for _ in range(50):
            pool.start_soon(job)
            for _ in range(3):  # the job runs; its worker waits for the next
                await anyio.sleep(0)
        tg.cancel_scope.cancel()
    assert ran == 50
    assert pool.workers == 1


async def test_a_job_error_ends_the_task_group() -> None:
    async def broken() -> None:
        raise RuntimeError("boom")

    with pytest.raises(BaseExceptionGroup) as info:
        async with anyio.create_task_group() as tg:
            TaskPool(tg).start_soon(broken)
            await anyio.sleep_forever()
    assert info.group_contains(RuntimeError, match="boom")


async def test_a_worker_yielding_before_it_sleeps_is_claimed_by_the_next_job(anyio_backend: str) -> None:
    """The loop's pattern: a job, then one yield.  The worker that ran the last job yields once
    before it sleeps, and the next job claims it: one worker, no wake-up Event made (on
    asyncio, whose ready tasks run in order; trio may run them in any order, so a job may come
    before its worker yields, and another worker be made)."""
    ran = 0

    async def job() -> None:
        nonlocal ran
        ran += 1

    async with anyio.create_task_group() as tg:
        pool = TaskPool(tg)
        made = 0
        new_event = pool._new_event

        def counting() -> anyio.Event:
            nonlocal made
            made += 1
            return new_event()

        pool._new_event = counting
        for _ in range(50):
            pool.start_soon(job)
            await anyio.sleep(0)
        for _ in range(3):
            await anyio.sleep(0)
        tg.cancel_scope.cancel()
    assert ran == 50
    if anyio_backend == "asyncio":
        assert pool.workers == 1
        assert made <= 1  # only once the jobs stopped coming


async def test_claims_and_wake_ups_mixed_never_leave_a_job_behind_a_waiting_one() -> None:
    """Jobs started at random moments, some of them waiting on a gate: every job runs, and the
    quick ones all run while the waiting ones still wait."""
    import random

    rng = random.Random(3)
    gate = anyio.Event()
    done: list[int] = []

    async def job(i: int, blocked: bool) -> None:
        if blocked:
            await gate.wait()
        done.append(i)

    async with anyio.create_task_group() as tg:
        pool = TaskPool(tg)
        blocked = set()
        for i in range(200):
            b = rng.random() < 0.2
            if b:
                blocked.add(i)
            pool.start_soon(job, i, b)
            for _ in range(rng.choice([0, 0, 1, 2])):
                await anyio.sleep(0)
        with anyio.fail_after(5):
            while len(done) < 200 - len(blocked):
                await anyio.sleep(0)
        assert set(done) == set(range(200)) - blocked
        gate.set()
        with anyio.fail_after(5):
            while len(done) < 200:
                await anyio.sleep(0)
        tg.cancel_scope.cancel()
    assert sorted(done) == list(range(200))
