"""A 1.36 parallel PreBind group in the scheduler's binding cycle (kubernetes#135393: upstream
runs the group's plugins with ``Parallelizer().Until``, one goroutine each).

In a simulation the members run as tasks of their own, each with a turn of the deterministic
driver (:mod:`kubesched.scheduler._driver`), handed out in profile order: the first member runs
until it ends or waits on the cluster (``park_until``), then the next, so the writes of a group
come in the same order on any event loop, all at the same virtual instant.  The binding cycle
gives up its turn while its group runs and takes a new one, after the members' last, when the
group has ended.  A live scheduler (no turns) runs them in one plain task group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from kubesched.runtime._binding_runners import run_concurrently
from kubesched.scheduler._driver import TURN

if TYPE_CHECKING:
    from kubesched.runtime._binding_runners import PreBindGroupMember, PreBindGroupRunner
    from kubesched.scheduler._driver import Driver


def group_runner(driver: Driver) -> PreBindGroupRunner:
    """The binding cycle's :data:`~kubesched.runtime._binding_runners.PreBindGroupRunner`."""

    async def run_group(members: list[PreBindGroupMember]) -> None:
        turn = TURN.get()
        if not driver.deterministic or turn is None:
            await run_concurrently(members)
            return
        tickets = [driver.ticket() for _ in members]  # the members' turns come right after ours
        for _ in members:
            driver.activate()
        driver.end(turn[0])
        turn[0] = None
        driver.deactivate()  # the cycle waits for its group
        left = [len(members)]

        async def member(run: PreBindGroupMember, ticket: int | None, cancel: anyio.CancelScope) -> None:
            own: list[int | None] = [ticket]
            token = TURN.set(own)
            try:
                await driver.take(own[0])
                await run(lambda: cancel.cancel())
            finally:
                left[0] -= 1
                if left[0] == 0:  # the cycle goes on after its group, in a turn of its own
                    turn[0] = driver.ticket()
                    driver.activate()
                driver.end(own[0])
                driver.deactivate()
                TURN.reset(token)

        async with anyio.create_task_group() as tg:
            for run, ticket in zip(members, tickets, strict=True):
                tg.start_soon(member, run, ticket, tg.cancel_scope)
        await driver.take(turn[0])

    return run_group


__all__ = ["group_runner"]
