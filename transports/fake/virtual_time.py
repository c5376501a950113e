"""Virtual time for either anyio backend: a day of cluster time in the seconds the work takes.

trio has it built in (``MockClock(autojump_threshold=0)``: when every task is blocked, jump to the
next deadline).  For asyncio, :class:`VirtualTimeEventLoop` does the same: its clock is a number
it advances itself, and its selector, when nothing is ready, jumps the clock to the next timer
instead of sleeping.  Core code reads time only through anyio, so it cannot tell.
"""

from __future__ import annotations

import asyncio
import math
import selectors
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

T = TypeVar("T")

BACKENDS = ("asyncio", "trio")


class _JumpingSelector(selectors.BaseSelector):
    """Wraps a real selector: polls it, and when nothing is ready, jumps the loop's clock."""

    def __init__(self, loop: VirtualTimeEventLoop, inner: selectors.BaseSelector) -> None:
        self._loop = loop
        self._inner = inner

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._inner.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._inner.select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            # nothing scheduled: only real I/O (another thread) can wake us
            return self._inner.select(None)
        target = self._loop._now + timeout
        scheduled = self._loop._scheduled
        if scheduled:  # asyncio caps a wait at one day: jump straight to the next timer
            target = max(target, scheduled[0].when())
        # snap to whole nanoseconds so a timer set for t fires at exactly t, as on trio
        self._loop._now = round(target, 9)
        return []

    def close(self) -> None:
        self._inner.close()

    def get_map(self) -> Any:
        return self._inner.get_map()

    def get_key(self, fileobj: Any) -> selectors.SelectorKey:
        return self._inner.get_key(fileobj)


class VirtualTimeEventLoop(asyncio.SelectorEventLoop):
    """An asyncio event loop whose ``time()`` is virtual and jumps to the next timer when idle."""

    _scheduled: list[asyncio.TimerHandle]
    """asyncio's heap of timers, earliest first (``BaseEventLoop`` keeps it; typeshed leaves it out)."""

    def __init__(self) -> None:
        self._now = 0.0
        super().__init__(selector=_JumpingSelector(self, selectors.DefaultSelector()))

    def time(self) -> float:
        return self._now

    # asyncio runs the timers due before ``time() + _clock_resolution``.  One nanosecond, as the
    # clock snaps to nanoseconds; but far out (after ~100 days of virtual time) a nanosecond is
    # below a float's spacing, ``now + 1e-9 == now``, and a timer due exactly now would never
    # run while the loop spins: there the resolution is two float steps.
    @property
    def _clock_resolution(self) -> float:
        return max(1e-9, 2 * math.ulp(self._now))

    @_clock_resolution.setter
    def _clock_resolution(self, value: float) -> None:  # BaseEventLoop sets the real clock's
        pass


def trio_clock() -> Any:
    import trio.testing

    return trio.testing.MockClock(autojump_threshold=0)


def backend_options(backend: str) -> dict[str, Any]:
    """The anyio ``backend_options`` that give ``backend`` a virtual clock."""
    if backend == "asyncio":
        return {"loop_factory": VirtualTimeEventLoop}
    if backend == "trio":
        return {"clock": trio_clock()}
    raise ValueError(f"unknown backend {backend!r} (expected asyncio or trio)")


def run(fn: Callable[..., Awaitable[T]], *args: Any, backend: str = "trio") -> T:
    """``anyio.run`` on ``backend`` in virtual time."""
    if backend == "trio":
        _deterministic_trio()
    return anyio.run(fn, *args, backend=backend, backend_options=backend_options(backend))


def run_measured(fn: Callable[..., Awaitable[T]], *args: Any, backend: str = "trio") -> tuple[T, float]:
    """:func:`run`, and the wall-clock seconds it took (for ``kubesched bench day``: the engine
    itself never reads a wall clock)."""
    import time

    t0 = time.perf_counter()
    result = run(fn, *args, backend=backend)
    return result, time.perf_counter() - t0


def _deterministic_trio() -> None:
    """Seed trio's scheduler so that runs repeat exactly (trio shuffles ready tasks)."""
    try:
        import trio._core._run as trio_run

        trio_run._r.seed(0)
    except (ImportError, AttributeError):  # pragma: no cover - trio internals moved
        pass
