"""A watch of the fake cluster's store: one watcher's queue of events and its wake-up."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Self

import anyio
import anyio.lowlevel

from kubesched import UnavailableError, WatchEvent


def _set_future(future: Any) -> None:
    """Wake a watch's waiting iterator (asyncio): its future done, unless cancelled already
    (the iterator's task was cancelled and has not run since)."""
    if not future.done():
        future.set_result(None)


class Watch:
    """One watcher's iterator over its own unbounded queue (it starts with the listing and SYNCED).

    A deque and an anyio.Event rather than a memory object stream: an abandoned watch is then
    just garbage (the store holds it weakly), with no stream left unclosed.  On an asyncio loop
    the wait is on a future of the loop's own, which is what an Event's wait awaits (without
    anyio's and asyncio's Event around it: about a hundred bytecodes and five frames a wait, one
    wait a pod's write in a scheduler): set once, it wakes the waiting task as the Event would.
    """

    def __init__(self, events: Iterable[WatchEvent]) -> None:
        self._queue: deque[WatchEvent] = deque(events)
        self._wakeup: Any = None  # what the waiting iterator awaits: an anyio.Event or a future
        # found at the first wait: what makes a wait's wakeup (the loop's create_future, else the
        # running backend's Event class: no anyio.Event() looking the backend up again), whether
        # that is a future (awaited itself, not its wait()), and what sets one (_wake)
        self._make: Callable[[], Any] | None = None
        self._futures = False
        self._set: Callable[[Any], None] = _set_future
        # called (synchronously) for every event delivered to this watch
        self.on_push: Callable[[], None] | None = None
        self._ended = False
        self._dropped = False

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> WatchEvent:
        if self._queue or self._ended or self._dropped:  # else the wait below yields
            await anyio.lowlevel.checkpoint()
        while True:
            if self._dropped:
                self._queue.clear()
                raise UnavailableError("watch connection dropped (injected fault)")
            if self._queue:
                return self._queue.popleft()
            if self._ended:
                raise StopAsyncIteration
            make = self._make
            if make is None:
                make = self._make = self._wakeup_maker()
            self._wakeup = wakeup = make()
            if self._futures:
                await wakeup
            else:
                await wakeup.wait()

    def _wakeup_maker(self) -> Callable[[], Any]:
        """What makes a wait's wakeup on the running loop (see the class docstring)."""
        loop = anyio.lowlevel.current_token().native_token
        create_future = getattr(loop, "create_future", None)
        if callable(create_future):  # an asyncio loop (trio's token has none)
            self._futures = True
            self._set = _set_future
            return create_future  # type: ignore[no-any-return]
        event = type(anyio.Event())
        self._set = event.set
        return event

    def get_nowait(self) -> WatchEvent | None:
        """The next delivered event without waiting, or None.

        The scheduler drains delivered events before each scheduling cycle, so a change made at
        one virtual instant is seen by every cycle that runs at that instant, whichever task
        the event loop happens to run first.
        """
        if self._dropped or not self._queue:
            return None
        return self._queue.popleft()

    def pending(self) -> bool:
        """Events delivered but not yet taken."""
        return bool(self._queue) and not self._dropped

    async def aclose(self) -> None:
        """Stop watching: the iterator ends at once."""
        self._end()
        self._queue.clear()

    def _end(self, *, dropped: bool = False) -> None:
        self._ended = True
        self._dropped = self._dropped or dropped
        if self._wakeup is not None:
            self._set(self._wakeup)
            self._wakeup = None
