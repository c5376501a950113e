"""Leaving the task group a transport owns (``async with FakeCluster()``, ``APIServer``,
``KubeTransport``) without an ExceptionGroup: what failed comes out as itself."""

from __future__ import annotations

from types import TracebackType

import anyio.abc

from kubesched import plain_exception


async def exit_task_group(
    tg: anyio.abc.TaskGroup,
    exc_type: type[BaseException] | None,
    exc: BaseException | None,
    tb: TracebackType | None,
) -> None:
    """``tg.__aexit__``, raising the one plain exception its ExceptionGroup stands for
    (:func:`kubesched.plain_exception`): what the ``async with`` block raised stays whole, even
    an ExceptionGroup of its own; a cancellation goes on as the group it came in."""
    error: BaseException | None = None
    try:
        await tg.__aexit__(exc_type, exc, tb)
    except BaseExceptionGroup as group:
        if (error := plain_exception(group, keep=exc)) is None:
            raise
    if error is not None:
        raise error  # outside the handler: the group is not its context


__all__ = ["exit_task_group"]
