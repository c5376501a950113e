"""Giving memory back to the operating system once many connections have closed.

What a closed connection held (its watch's backlog, its buffers, its tasks) is freed, but
glibc's allocator keeps freed memory in its heap, so a server that had a thousand watches open
keeps their memory after they go.  ``malloc_trim(0)`` returns the free pages; it costs some
milliseconds on a large heap, so it runs at most once a ``interval``, and only after
``threshold`` connections closed since it last ran.  Without glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable

import anyio

__all__ = ["Trimmer"]

log = logging.getLogger("kubesched.apiserver")


def _malloc_trim() -> Callable[[], object] | None:
    try:
        fn = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return lambda: fn(0)


class Trimmer:
    """Counts closed connections; ``run`` trims the heap after many."""

    def __init__(self, *, threshold: int = 64, interval: float = 1.0) -> None:
        self.threshold = threshold
        self.interval = interval
        self.closed = 0
        self.trims = 0
        self._trim = _malloc_trim()

    def connection_closed(self) -> None:
        self.closed += 1

    def trim_if_due(self) -> bool:
        if self.closed < self.threshold or self._trim is None:
            return False
        self.closed = 0
        self._trim()
        self.trims += 1
        return True

    async def run(self) -> None:
        if self._trim is None:
            return
        while True:
            await anyio.sleep(self.interval)
            self.trim_if_due()
