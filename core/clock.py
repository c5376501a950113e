"""The event loop's clock, looked up once per run: :func:`now` is ``anyio.current_time()``.

``anyio.current_time()`` finds the running backend on every call (sniffio's thread-local and
context lookups), which costs more than reading the clock; a pod's way through the scheduler
reads it about twenty times.  While a component runs on a loop (:func:`running`: the scheduler,
the fake cluster), :func:`now` calls that backend's clock directly; elsewhere it is
``anyio.current_time()``.  Either way the time is the loop's own, so virtual time (a simulation's
loop clock) is what it reads.  A plain asyncio loop's clock is asyncio's ``BaseEventLoop.time``,
which is ``time.monotonic()``: that is called without the method around it (a loop whose class
defines its own ``time``, as the virtual-time loop does, keeps its method).

The backend is kept per thread, counted: components enter and leave in any order, and the last
one out forgets it, so a later loop in the same thread (another backend) is looked up afresh.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel


class _Bound(threading.local):
    fn: Callable[[], float] | None = None
    depth = 0


_bound = _Bound()

# asyncio's BaseEventLoop.time, named (core never imports asyncio): ``return time.monotonic()``
_MONOTONIC_LOOP_TIME = ("asyncio.base_events", "BaseEventLoop.time")


def now() -> float:
    """``anyio.current_time()``: the running loop's clock (virtual time in a simulation)."""
    fn = _bound.fn
    return fn() if fn is not None else anyio.current_time()


def reader() -> Callable[[], float]:
    """What :func:`now` calls now: the bound loop's clock (within :func:`running`), else
    :func:`now` itself.  A component that reads the time often, entered in :func:`running`,
    may keep it until it leaves (:func:`now` reads the same clock, with a call more)."""
    fn = _bound.fn
    return fn if fn is not None else now


@asynccontextmanager
async def running() -> AsyncIterator[None]:
    """Within, :func:`now` reads the current loop's clock without looking up its backend."""
    token = anyio.lowlevel.current_token()
    fn = token.backend_class.current_time
    # asyncio's backend reads the running loop's ``time()``: the loop (its token) is at hand
    loop_time = getattr(token.native_token, "time", None)
    if callable(loop_time):
        fn = loop_time
        method = getattr(loop_time, "__func__", None)
        if (getattr(method, "__module__", None), getattr(method, "__qualname__", None)) == _MONOTONIC_LOOP_TIME:
            fn = time.monotonic
    bound = _bound
    if bound.depth == 0 or bound.fn != fn:
        bound.fn, bound.depth = fn, 0
    bound.depth += 1
    try:
        yield
    finally:
        bound.depth -= 1
        if bound.depth <= 0:
            bound.fn, bound.depth = None, 0


__all__ = ["now", "reader", "running"]
