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
