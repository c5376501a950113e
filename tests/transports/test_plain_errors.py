"""The transports' ``async with`` raises plain exceptions, never the ExceptionGroup of the task
group it owns: what the block raised comes out as itself (even an ExceptionGroup of its own)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

import kubesched
from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster
from kubesched.transports.kube import KubeTransport

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _api_server() -> Any:
    async with FakeCluster() as cluster, APIServer(cluster) as server:
        yield server


def _kube() -> KubeTransport:
    return KubeTransport("http://mock", http_transport=httpx.MockTransport(lambda r: httpx.Response(404)))


TRANSPORTS: list[Any] = [
    pytest.param(FakeCluster, id="FakeCluster"),
    pytest.param(_api_server, id="APIServer"),
    pytest.param(_kube, id="KubeTransport"),
]


@pytest.mark.parametrize("make", TRANSPORTS)
async def test_an_error_in_the_block_is_itself(make: Callable[[], AbstractAsyncContextManager[Any]]) -> None:
    with pytest.raises(kubesched.ConfigError, match="^bad input$") as exc:
        async with make():
            raise kubesched.ConfigError("bad input")
    assert exc.type is kubesched.ConfigError


@pytest.mark.parametrize("make", TRANSPORTS)
async def test_an_exception_group_of_the_block_is_left_as_it_is(
    make: Callable[[], AbstractAsyncContextManager[Any]],
) -> None:
    mine = ExceptionGroup("mine", [KeyError("a"), KeyError("b")])
    with pytest.raises(ExceptionGroup) as exc:
        async with make():
            raise mine
    assert exc.value is mine


@pytest.mark.parametrize("make", TRANSPORTS)
async def test_cancelling_the_block_still_works(make: Callable[[], AbstractAsyncContextManager[Any]]) -> None:
    with anyio.move_on_after(1) as scope:
        async with make():
            await anyio.sleep_forever()
    assert scope.cancelled_caught


async def test_a_failing_controller_task_is_plain() -> None:
    """A task of the cluster's own task group that fails (here: one the test starts in it)."""

    async def boom() -> None:
        raise RuntimeError("controller bug")

    with pytest.raises(RuntimeError, match="^controller bug$"):
        async with FakeCluster() as cluster:
            assert cluster._tg is not None
            cluster._tg.start_soon(boom)
            await anyio.sleep_forever()
