"""Watch fan-out: each change is encoded once and the bytes are shared by every HTTP watch that
sends them; each watch's backlog is bounded.

    Store.record(change) ──► for each Watcher of the change's store: watcher.offer(change, lines)
        render(change, lines) ──► the change as one HTTP chunk for this watch (or None: not
        for it); ``lines`` holds the chunks already made for this change, by encoder, event
        type and object, so that watches of the same form share one bytes object
    Watcher.push(chunk) ──► straight to the client's socket when the watch has nothing queued
        and is not writing (a non-blocking send, no task switch); what the socket does not
        take ──► Watcher.backlog ──► written by the watch's task (``_watch``), never copied

A watcher whose backlog passes ``max_events`` chunks or ``max_bytes`` is closed on the spot and
its backlog dropped, as upstream's watch cache terminates a watcher that does not keep up
(cache_watcher.go: "Forcing %v watcher close due to unresponsiveness"): its stream ends, or its
connection is closed when a write to the client is stuck, and the client lists and watches
again.  A closed watcher holds nothing: the chunks it had are freed with the last watch holding
them.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

import anyio

__all__ = ["LineCache", "Lines", "Watcher", "chunk"]

log = logging.getLogger("kubesched.apiserver")

Lines = dict[Hashable, bytes]
"""The chunks made of one change, shared by the watchers it is offered to."""
Render = Callable[[Any, Lines], "bytes | None"]


def chunk(line: bytes) -> bytes:
    """``line`` framed as one HTTP/1.1 chunk (chunked transfer coding)."""
    return b"%x\r\n" % len(line) + line + b"\r\n"


class Watcher:
    """One HTTP watch's backlog of chunks to send, of the changes to one store."""

    __slots__ = (
        "store",
        "render",
        "resource",
        "identifier",
        "max_events",
        "max_bytes",
        "backlog",
        "pending_bytes",
        "wakeup",
        "ended",
        "aborted",
        "forced",
        "writing",
        "scope",
        "sink",
    )

    def __init__(
        self,
        store: str,
        render: Render,
        *,
        resource: str = "",
        identifier: str = "",
        max_events: int = 10_000,
        max_bytes: int = 16 << 20,
    ) -> None:
        self.store = store
        self.render = render
        self.resource = resource
        self.identifier = identifier
        """What the log says of this watch: its resource, and its key and selectors."""
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.backlog: deque[bytes | memoryview] = deque()
        self.pending_bytes = 0
        self.wakeup: anyio.Event | None = None
        self.ended = False
        self.aborted = False
        self.forced = False
        """Closed for not keeping up."""
        self.writing = False
        """A write to the client is in progress."""
        self.scope: anyio.CancelScope | None = None
        """The scope of the watch's stream, cancelled to close its connection at once."""
        self.sink: Callable[[bytes | memoryview], int] | None = None
        """Writes what the client's socket takes now (how many bytes), once the watch is past
        its initial events."""

    def offer(self, change: Any, lines: Lines) -> None:
        """A change to its store: rendered for this watch and queued, unless the watch is over
        or does not send it."""
        if self.ended:
            return
        data = self.render(change, lines)
        if data is not None:
            self.push(data)

    def push(self, data: bytes | memoryview) -> None:
        if self.sink is not None and not self.backlog and not self.writing:
            # nothing before it to write: straight to the socket, no task switch
            sent = self.sink(data)
            if sent == len(data):
                return
            data = memoryview(data)[sent:]
        self.backlog.append(data)
        self.pending_bytes += len(data)
        if len(self.backlog) > self.max_events or self.pending_bytes > self.max_bytes:
            self.force_close()
        else:
            self._wake()

    def take(self, limit: int) -> list[bytes | memoryview]:
        """The next chunks to write: at least one, up to ``limit`` bytes."""
        out = [self.backlog.popleft()]
        size = len(out[0])
        while self.backlog and size + len(self.backlog[0]) <= limit:
            data = self.backlog.popleft()
            out.append(data)
            size += len(data)
        self.pending_bytes -= size
        return out

    def force_close(self) -> None:
        log.info(
            "Forcing %s watcher close due to unresponsiveness: %s. len(backlog) = %d, "
            "pending bytes = %d",
            self.resource or self.store,
            self.identifier,
            len(self.backlog),
            self.pending_bytes,
        )
        self.forced = True
        self.backlog.clear()
        self.pending_bytes = 0
        self.end(abort=self.writing)

    def end(self, *, abort: bool = False) -> None:
        """End the watch: its stream ends after its backlog; with ``abort`` its connection is
        closed at once (a write in progress cut short) and its backlog dropped."""
        self.ended = True
        if abort:
            self.aborted = True
            self.backlog.clear()
            self.pending_bytes = 0
            if self.scope is not None:
                self.scope.cancel()
        self._wake()

    def release(self) -> None:
        """The watch is over: it takes no more changes and holds none."""
        self.ended = True
        self.backlog.clear()
        self.pending_bytes = 0
        self.scope = None
        self.sink = None

    def _wake(self) -> None:
        if self.wakeup is not None:
            self.wakeup.set()
            self.wakeup = None

    async def wait(self) -> None:
        if self.backlog or self.ended:
            return
        self.wakeup = anyio.Event()
        await self.wakeup.wait()


class LineCache:
    """The chunks of the objects of watches' initial listings, by object ((store, namespace,
    name)), encoder and resourceVersion, so that watches starting together share them; at most
    ``max_bytes``."""

    def __init__(self, max_bytes: int = 32 << 20) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._lines: dict[tuple[str, str, str], dict[Hashable, tuple[str, bytes]]] = {}

    def get(
        self, obj: tuple[str, str, str], encoder: Hashable, rv: str, make: Callable[[], bytes]
    ) -> bytes:
        forms = self._lines.get(obj)
        hit = forms.get(encoder) if forms is not None else None
        if hit is not None and hit[0] == rv:
            return hit[1]
        data = make()
        if forms is not None and hit is not None:
            self.size -= len(hit[1])
            del forms[encoder]
        if self.size + len(data) <= self.max_bytes:
            self._lines.setdefault(obj, {})[encoder] = (rv, data)
            self.size += len(data)
        return data

    def forget(self, obj: tuple[str, str, str]) -> None:
        """Drop a deleted object's chunks."""
        for _, data in self._lines.pop(obj, {}).values():
            self.size -= len(data)

    def clear(self) -> None:
        self._lines.clear()
        self.size = 0
