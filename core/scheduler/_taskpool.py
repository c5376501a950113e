"""TaskPool: concurrent jobs on reused tasks of a task group (the binding cycles' goroutines).

Upstream starts a goroutine per binding cycle; a new anyio task costs tens of microseconds
(its task, cancel scope and completion event), a large share of a pod's scheduling.  A pool
keeps the tasks: each job still runs concurrently with everything else, never queued behind
another job, because a job is handed to a free worker (an idle one woken, or a new one) and a
worker takes a job only when it has finished its last::

    start_soon(job) ──► jobs (FIFO) ──► a free worker runs it ──► takes the next, or waits
                         │ no idle worker: a new one, in the task group

Workers live as long as the task group (cancelling it cancels them with their jobs); a job's
exception propagates out of the task group, as a task's would.  A worker waits for its next job
on an Event of the running backend, made without ``anyio.Event()``'s look-up of the backend.

The scheduling loop starts a binding cycle after each pod and then yields, so the next job
usually comes while the last one's worker would be going to sleep.  A worker out of jobs
therefore yields once first, ``spinning``: a ``start_soon`` meanwhile claims it (its job is the
worker's when it resumes) instead of waking or making another, and no Event is made, waited on
and set per job.  Unclaimed, it removes its claim mark and sleeps on its Event as before.  A
claimed worker resumes where a woken one would: queued at its yield, before the loop's own
yield after ``start_soon``.
"""

from __future__ import annotations

import types
from collections import deque
from collections.abc import Awaitable, Callable, Generator
from typing import Any, cast

import anyio.abc
import anyio.lowlevel


class TaskPool:
    """``start_soon`` of a task group, on reused worker tasks."""

    def __init__(self, tg: anyio.abc.TaskGroup) -> None:
        """Made in the task group's event loop (its backend makes the workers' events)."""
        self._tg = tg
        backend = anyio.lowlevel.current_token().backend_class
        self._new_event = backend.create_event
        # ``anyio.lowlevel.checkpoint`` without its look-up: on asyncio, the bare yield that its
        # ``asyncio.sleep(0)`` ends in, without the two coroutines around it (a Task runs a
        # coroutine that yields None again at its next turn, and a cancellation comes in at
        # the yield, as at sleep(0)'s)
        self.checkpoint: Callable[[], Awaitable[None]] = (
            cast("Callable[[], Awaitable[None]]", _bare_yield)
            if backend.__module__ == "anyio._backends._asyncio" else backend.checkpoint
        )
        self._jobs: deque[tuple[Callable[..., Awaitable[Any]], tuple[Any, ...]]] = deque()
        self._idle: list[anyio.Event] = []  # one wake-up event per idle worker
        # one claim per spinning worker (see the module doc), taken by a job
        self._spinning: deque[_Claim] = deque()
        self.workers = 0

    def start_soon(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run ``fn(*args)`` concurrently, as ``TaskGroup.start_soon`` would."""
        self._jobs.append((fn, args))
        if self._spinning:
            self._spinning.popleft().taken = True
        elif self._idle:
            self._idle.pop().set()
        else:
            self.workers += 1
            self._tg.start_soon(self._worker)

    async def _worker(self) -> None:
        jobs = self._jobs
        spinning = self._spinning
        new_event = self._new_event
        checkpoint = self.checkpoint
        claim = _Claim()  # this worker's, reused: it is in ``spinning`` only while it spins
        while True:
            while jobs:
                fn, args = jobs.popleft()
                await fn(*args)
            claim.taken = False
            spinning.append(claim)
            await checkpoint()
            if claim.taken or jobs:
                # claimed: its job is here, or a worker that finished first took it (then no
                # job waits on it); unclaimed with jobs: each has a worker woken for it
                # too, this one just runs first
                if not claim.taken:
                    spinning.remove(claim)
                continue
            spinning.remove(claim)
            wake = new_event()
            self._idle.append(wake)
            await wake.wait()


@types.coroutine
def _bare_yield() -> Generator[None, None, None]:
    """One turn of the asyncio event loop (what ``asyncio.sleep(0)`` awaits)."""
    yield


class _Claim:
    """A spinning worker's claim (compared by identity: each worker removes its own)."""

    __slots__ = ("taken",)

    def __init__(self) -> None:
        self.taken = False


__all__ = ["TaskPool"]
