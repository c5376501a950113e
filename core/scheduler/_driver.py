"""The deterministic driver: what makes a simulation give the same bytes on any event loop.

Model::

    binding cycles, released waiting pods,      ticket()  ──►  1  2  3  4 ...   (runnable order)
    async preemptions, status writes                            │
                                                    take(t) waits until every earlier ticket
                                                    has ended; end(t) lets the next one go
    active  = tasks that can make progress now (not parked at Permit)
    settle() waits until active == 0: everything runnable at this instant has run
    cycle() = the scheduling cycle running now: a task made runnable during it (a waiting pod
              it rejected, a binding cycle or preemption it started) takes its turn after it

    wake sources: (next_due, run_due) pairs — the fake cluster's terminations, a simulation's
    arrivals — that the scheduler's deterministic loop runs, in registration order, before it
    pops the next pod; kick() wakes the loop when something new was delivered.

    park_until(t): a binding cycle that waits on the cluster (VolumeBinding's PreBind polling
    for its claims to be bound) gives up its turn and is inactive while it waits, and the loop
    releases it at t, as its first wake source: what is due at t (a volume provisioned after a
    delay) runs in a fixed order relative to it, whatever the event loop.

An event loop may run ready tasks in any order (asyncio and trio differ), so in a simulation
the tasks that become runnable at one virtual instant run one after another in the order they
became runnable (their tickets), and the loop pops the next pod only once they have all
finished or parked.  A live scheduler (``deterministic=False``) hands out no tickets: a slow
bind never stalls the scheduling loop.
"""

from __future__ import annotations

import contextvars
import heapq
from collections.abc import Callable

import anyio

from kubesched.clock import now as _now

TURN: contextvars.ContextVar[list[int | None] | None] = contextvars.ContextVar("kubesched_turn", default=None)
"""The running binding cycle's turn (a one-item list it ends when it finishes), for
:meth:`Driver.park_until`; set by the binding task."""


class Driver:
    """Turns, the active count and the wake sources of one scheduler (see the module doc)."""

    def __init__(self, deterministic: bool, drain: Callable[[], None]) -> None:
        self.deterministic = deterministic
        self._drain = drain  # applies the watch events already delivered
        self.active = 0  # binding cycles and background tasks not parked at Permit
        self._tickets = 0
        self._turns_done = 0
        self._turns_skipped: set[int] = set()
        self._turn_events: dict[int, anyio.Event] = {}
        self._settled: anyio.Event | None = None
        self.pre_cycle_hooks: list[Callable[[], object]] = []
        self.wake_sources: list[Callable[[], float | None]] = []
        self._kick: anyio.Event | None = None
        self._cycle: anyio.Event | None = None  # set when the running scheduling cycle ends
        # parked tasks: (when, seq, released event, the task's turn)
        self._parked: list[tuple[float, int, anyio.Event, list[int | None]]] = []
        self._parked_seq = 0
        if deterministic:  # live, park_until is a plain sleep: nothing is ever parked
            self.add_wake_source(self._next_parked, self._release_parked)

    # --- turns --------------------------------------------------------------------------------
    def ticket(self) -> int | None:
        """The next turn, for a task that just became runnable (None when not deterministic)."""
        if not self.deterministic:
            return None
        self._tickets += 1
        return self._tickets

    async def take(self, ticket: int | None) -> None:
        """Wait for this ticket's turn, then apply every change made before it."""
        if ticket is None:
            return
        # no new cycle starts while this task is active, so once the running one has ended
        # only the turns order the tasks
        if self._cycle is not None:
            await self._cycle.wait()
        while self._turns_done + 1 < ticket and ticket not in self._turns_skipped:
            event = self._turn_events.setdefault(ticket, anyio.Event())
            await event.wait()
            self._turn_events.pop(ticket, None)
        self._drain()  # the turn sees every change made before it

    def end(self, ticket: int | None) -> None:
        """This ticket's task finished (or gave up its turn): let the next one run."""
        if ticket is None:
            return
        self._turns_skipped.add(ticket)
        while self._turns_done + 1 in self._turns_skipped:
            self._turns_done += 1
            self._turns_skipped.discard(self._turns_done)
        event = self._turn_events.get(self._turns_done + 1)
        if event is not None:
            event.set()

    def begin_cycle(self) -> None:
        """A scheduling cycle starts (deterministic loop only)."""
        self._cycle = anyio.Event()

    def end_cycle(self) -> None:
        """The scheduling cycle ended: the tasks it made runnable may take their turns."""
        if self._cycle is not None:
            self._cycle.set()
            self._cycle = None

    # --- settling -----------------------------------------------------------------------------
    def activate(self) -> None:
        """A task can make progress (started, or released from Permit)."""
        self.active += 1

    def deactivate(self) -> None:
        """A task finished or parked at Permit."""
        self.active -= 1
        if self.active == 0 and self._settled is not None:
            self._settled.set()
            self._settled = None

    async def settle(self) -> None:
        """Wait until no binding cycle or background task can make progress."""
        while self.active > 0:
            if self._settled is None:
                self._settled = anyio.Event()
            await self._settled.wait()

    # --- parked tasks ----------------------------------------------------------------------------
    async def park_until(self, when: float) -> None:
        """Sleep until virtual time ``when`` without holding up the loop (see the module doc);
        a plain sleep outside a simulation's binding cycle."""
        turn = TURN.get()
        if not self.deterministic or turn is None:
            await anyio.sleep_until(when)
            return
        self.end(turn[0])
        turn[0] = None
        released = anyio.Event()
        self._parked_seq += 1
        entry = (when, self._parked_seq, released, turn)
        heapq.heappush(self._parked, entry)
        self.deactivate()
        self.kick()
        try:
            await released.wait()  # the loop gave it a turn and made it active again
        except anyio.get_cancelled_exc_class():
            if not released.is_set():  # cancelled while parked (a failed parallel PreBind group)
                self._parked.remove(entry)
                heapq.heapify(self._parked)
                self.activate()  # it runs again, to end
            raise
        await self.take(turn[0])

    def _next_parked(self) -> float | None:
        return self._parked[0][0] if self._parked else None

    def _release_parked(self) -> None:
        if not self._parked:
            return
        now = _now()
        while self._parked and self._parked[0][0] <= now:
            _, _, released, turn = heapq.heappop(self._parked)
            turn[0] = self.ticket()
            self.activate()
            released.set()

    # --- wake sources -------------------------------------------------------------------------
    def add_wake_source(self, next_due: Callable[[], float | None], run_due: Callable[[], object]) -> None:
        """A timed event source: when it is next due, and what to do then."""
        self.wake_sources.append(next_due)
        self.pre_cycle_hooks.append(run_due)

    def run_hooks(self) -> None:
        """Run every source's due work, in registration order."""
        for hook in self.pre_cycle_hooks:
            hook()

    def source_times(self) -> list[float]:
        """When each source is next due (sources with nothing pending give none)."""
        return [t for src in self.wake_sources if (t := src()) is not None]

    def kick(self) -> None:
        """Wake the loop from :meth:`sleep` (something was delivered or queued)."""
        if self._kick is not None:
            self._kick.set()
            self._kick = None

    async def sleep(self, seconds: float) -> None:
        """Sleep until ``seconds`` have passed or :meth:`kick` is called."""
        self._kick = kick = anyio.Event()
        with anyio.move_on_after(seconds):
            await kick.wait()


__all__ = ["TURN", "Driver"]
