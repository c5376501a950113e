"""kubesched.clock: ``now()`` is the running loop's clock, looked up once per run."""

from __future__ import annotations

import anyio
import pytest

from kubesched.clock import _bound, now, running
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio


async def test_now_is_the_loops_clock_inside_and_outside_running() -> None:
    assert _bound.fn is None
    assert abs(now() - anyio.current_time()) < 0.5
    async with running():
        assert _bound.fn is not None
        a = now()
        await anyio.sleep(0.01)
        b = now()
        assert a < b <= anyio.current_time()
    assert _bound.fn is None


async def test_components_leave_in_any_order_and_the_last_one_out_forgets() -> None:
    first, second = running(), running()
    await first.__aenter__()
    await second.__aenter__()
    await first.__aexit__(None, None, None)  # not nested: the first one in leaves first
    assert _bound.fn is not None
    assert abs(now() - anyio.current_time()) < 0.5
    await second.__aexit__(None, None, None)
    assert _bound.fn is None and _bound.depth == 0


async def test_the_fake_cluster_binds_the_clock_while_entered() -> None:
    async with FakeCluster() as cluster:
        assert _bound.fn is not None
        assert cluster.wall_clock() > 0
    assert _bound.fn is None


def test_a_plain_asyncio_loop_reads_the_monotonic_clock_and_a_virtual_one_its_own() -> None:
    import time

    from kubesched.transports.fake import virtual_time

    async def bound() -> object:
        async with running():
            return _bound.fn

    assert anyio.run(bound, backend="asyncio") is time.monotonic  # BaseEventLoop.time's clock
    fn = virtual_time.run(bound, backend="asyncio")
    assert fn is not time.monotonic and getattr(fn, "__self__", None) is not None  # its loop's time()
