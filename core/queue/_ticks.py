"""The scheduling queue's periodic flushes (``PriorityQueue.Run``): backoffQ every second,
the unschedulable leftovers every 30 s (see :mod:`kubesched.queue._scheduling_queue`)."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from kubesched.queue._backoffqueue import BACKOFF_Q_ORDERING_WINDOW, align_to_window

FLUSH_BACKOFF_PERIOD = 1.0
FLUSH_UNSCHEDULABLE_PERIOD = 30.0


class FlushTicks:
    """The two flushes' ticks: ``ticks[0]`` the backoff flush, ``ticks[1]`` the leftover
    flush, each ``(t0, period, k)`` with the next tick due at ``t0 + period * k``.

    ``flush_backoff`` and ``flush_leftover`` run the flushes; ``backoff_busy`` and
    ``unschedulable_busy`` say whether either has anything to move.  ``aligned`` is the
    ``SchedulerPopFromBackoffQ`` gate (the backoff flush on whole seconds).
    """

    def __init__(
        self,
        now: Callable[[], float],
        *,
        aligned: bool,
        flush_backoff: Callable[[], object],
        flush_leftover: Callable[[], object],
        backoff_busy: Callable[[], bool],
        unschedulable_busy: Callable[[], bool],
    ) -> None:
        self.now = now
        self.aligned = aligned
        self.flush_backoff = flush_backoff
        self.flush_leftover = flush_leftover
        self.backoff_busy = backoff_busy
        self.unschedulable_busy = unschedulable_busy
        self.ticks: list[tuple[float, float, int]] = []
        # run_due's last look: the ticks it left (a copy: ``ticks`` is also changed from
        # outside, in place or replaced) and the first of them due
        self._seen: list[tuple[float, float, int]] = []
        self._due = 0.0

    async def run(self) -> None:
        """The periodic flushes (every 1 s and every 30 s from now; with PopFromBackoffQ the 1 s
        flush on whole seconds); runs until cancelled.

        The flushes happen at fixed ticks.  ``run_due`` runs every tick that has come and not
        yet run, whoever calls it first — this task, or the scheduling loop before each pop —
        so what the loop pops at a tick's instant never depends on which task ran first.
        """
        self.start()
        while True:
            await anyio.sleep_until(min(t0 + period * k for t0, period, k in self.ticks))
            self.run_due()

    def start(self) -> None:
        """Start the ticks from now (``run`` does; a driver may instead call ``run_due``
        itself at ``next_tick()``)."""
        start = self.now()
        backoff_t0 = start
        if self.aligned:
            # ``waitUntilAlignedWithOrderingWindow``: the first flush at the next whole second
            # (``alignToWindow(now + 1s)``), then every second
            backoff_t0 = align_to_window(start + BACKOFF_Q_ORDERING_WINDOW) - FLUSH_BACKOFF_PERIOD
        self.ticks = [
            (backoff_t0, FLUSH_BACKOFF_PERIOD, 1),
            (start, FLUSH_UNSCHEDULABLE_PERIOD, 1),
        ]

    def next_tick(self, *, backoff_only: bool = False) -> float | None:
        """When the next periodic flush is due (None before ``start``)."""
        ticks = self.ticks[:1] if backoff_only else self.ticks
        if not ticks:
            return None
        return min(t0 + period * k for t0, period, k in ticks)

    def next_useful_tick(self) -> float | None:
        """When the next periodic flush that can move a pod is due: the backoff flush while the
        backoff queue holds a pod, the leftover flush while a pod is unschedulable.  A flush of
        an empty queue does nothing, so a driver need not wake for it: idle virtual time costs
        no wall time.  (Adding a pod to either queue wakes the driver, which asks again.)"""
        if not self.ticks:
            return None
        times = []
        if self.backoff_busy():
            t0, period, k = self.ticks[0]
            times.append(t0 + period * k)
        if self.unschedulable_busy():
            t0, period, k = self.ticks[1]
            times.append(t0 + period * k)
        return min(times, default=None)

    def run_due(self) -> None:
        """Run the periodic flushes whose tick has come (each tick runs once, however many
        ticks an idle stretch skipped)."""
        ticks = self.ticks
        if not ticks:
            return
        now = self.now()
        now += 1e-9  # a tick due at t runs at t, whatever the clock's float rounding
        if now < self._due and ticks == self._seen:
            return  # (once a pod) the ticks of the last look, none of them due yet
        for i, (t0, period, k) in enumerate(ticks):
            if now < t0 + period * k:
                continue
            # the first tick still to come, in O(1) after a long idle stretch (the same k as
            # stepping one tick at a time, float rounding included)
            first = k
            k = max(k, int((now - t0) // period))
            while now >= t0 + period * k:
                k += 1
            while k - 1 > first and now < t0 + period * (k - 1):
                k -= 1
            self.ticks[i] = (t0, period, k)
            if i == 0:
                self.flush_backoff()
            else:
                self.flush_leftover()
        # what the next look compares (a flush that changed the ticks is covered the same way)
        ticks = self.ticks
        self._seen = list(ticks)
        self._due = min(t0 + period * k for t0, period, k in ticks) if ticks else 0.0
