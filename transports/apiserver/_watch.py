"""WATCH: the lines one HTTP watch streams, from the store's history and then its live changes.

A watch streams JSON lines (``{"type": ..., "object": ...}``) with chunked encoding.  Without a
resourceVersion (or with 0) it starts with the listing as ADDED events; from a resourceVersion
it replays the history after it, or answers one ERROR event with a 410 Expired Status when that
version is older than the history ("too old resource version"), as the watch cache does.  With
``allowWatchBookmarks=true`` a BOOKMARK comes every ``bookmark_interval`` seconds, and one marked
``k8s.io/initial-events-end`` after the initial events when ``sendInitialEvents=true``.  With a
selector, an object that starts or stops matching is ADDED or DELETED for that watch.

The initial events (the listing or the replay) are encoded as they are sent; the live changes are
encoded once, when the store records them, and shared by every watch of the same form, each
with its own bounded backlog (``_fanout``).  Every line goes out as one HTTP chunk, written to
the connection as is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.lowlevel
import msgspec

from ._fanout import Lines, Watcher, chunk
from ._http import HTTPError
from ._params import flag, resource_version, watch_timeout
from ._sockets import Socket
from ._store import Change
from ._table import table
from ._wire import ns_name, rv_of, with_rv

if TYPE_CHECKING:
    from ._resource import ResourceSpec
    from ._store import Store

__all__ = ["Abort", "WatchPlan", "WatchServer", "event_line", "watch"]

Write = Callable[[bytes | memoryview], Awaitable[None]]
Matcher = Callable[[Any], bool]

WRITE_BATCH_BYTES = 64 << 10
"""The most bytes of backlog joined into one write."""
FORCED_END_SECONDS = 1.0
"""How long the end of the stream of a watch closed for not keeping up may take to write."""


class WatchServer(Protocol):
    """What a watch needs of its server (``_server.APIServer``): the store, and the settings of
    its watches."""

    store: Store
    bookmark_interval: float
    """The seconds between BOOKMARK events."""
    watch_timeout: float
    """The seconds of a watch that asks for no ``timeoutSeconds``."""
    watch_backlog_events: int
    watch_backlog_bytes: int
    """The bounds of a watch's backlog: past either, it is closed for not keeping up."""


class Abort(Exception):
    """End a watch by closing its connection (a dropped watch)."""


def event_line(
    server: WatchServer, spec: ResourceSpec, type_: str, obj: Any, as_table: bool, include: str
) -> bytes:
    if as_table:
        body = msgspec.json.encode(
            table(spec.printer, [spec.printable(obj)], server.store.now(), include_object=include)
        )
    else:
        body = spec.encode(obj)
    return b'{"type":"' + type_.encode() + b'","object":' + body + b"}\n"


def bookmark_line(server: WatchServer, spec: ResourceSpec, *, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(server.store.last_rv), "creationTimestamp": None}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    obj = {"kind": spec.kind, "apiVersion": spec.group_version, "metadata": meta}
    return msgspec.json.encode({"type": "BOOKMARK", "object": obj}) + b"\n"


@dataclass
class WatchPlan:
    """What one HTTP watch streams: initial events, then its watcher's backlog."""

    server: WatchServer
    spec: ResourceSpec
    matches: Matcher | None
    selective: bool
    timeout: float
    bookmarks: bool
    as_table: bool
    include_object: str
    watcher: Watcher | None = None
    listing: list[Any] = field(default_factory=list)
    """The objects of the initial listing (sent as ADDED)."""
    replay: list[Change] = field(default_factory=list)
    """The history after the watch's resourceVersion."""
    initial_end: bool = False
    """A BOOKMARK marked k8s.io/initial-events-end after the initial events."""
    error: bytes = b""
    """An ERROR event instead of a watch (410 Expired)."""

    def _encoder(self) -> tuple[str, str, str]:
        return (self.spec.group, self.spec.version, self.spec.plural)

    def render(self, change: Change, lines: Lines) -> bytes | None:
        """``change`` as this watch's chunk (None when not for it); a JSON line is made once per
        change for every watch of the same resource, type and object."""
        type_, obj, use_prev = change.type, change.obj, False
        if self.matches is not None:
            now_ok = self.matches(obj)
            if type_ == "MODIFIED" and self.selective:
                was_ok = self.matches(change.prev) if change.prev is not None else now_ok
                if now_ok and not was_ok:
                    type_ = "ADDED"
                elif was_ok and not now_ok:
                    type_, use_prev = "DELETED", True
                elif not now_ok:
                    return None
            elif not now_ok:
                return None
        if use_prev:
            obj = with_rv(change.prev, str(change.rv))
        if self.as_table:  # its cells say how old the object is now: not shared
            return chunk(event_line(self.server, self.spec, type_, obj, True, self.include_object))
        key = (self._encoder(), type_, use_prev)
        data = lines.get(key)
        if data is None:
            data = lines[key] = chunk(
                event_line(self.server, self.spec, type_, obj, False, self.include_object)
            )
        return data

    def _initial(self) -> Iterator[bytes]:
        if self.error:
            yield chunk(self.error)
            return
        cache, encoder = self.server.store.listing_lines, self._encoder()
        for obj in self.listing:
            if self.as_table:
                yield chunk(
                    event_line(self.server, self.spec, "ADDED", obj, True, self.include_object)
                )
                continue

            def make(obj: Any = obj) -> bytes:
                return chunk(event_line(self.server, self.spec, "ADDED", obj, False, ""))

            yield cache.get((self.spec.store, *ns_name(obj)), encoder, rv_of(obj), make)
        for change in self.replay:
            data = self.render(change, {})
            if data is not None:
                yield data
        if self.initial_end:
            yield chunk(bookmark_line(self.server, self.spec, initial_end=True))

    def close(self) -> None:
        """The watch is over (or never streamed: a HEAD): its watcher goes, with what it held."""
        self.listing, self.replay = [], []
        if self.watcher is not None:
            self.watcher.release()
            self.server.store.watchers.discard(self.watcher)

    async def run(self, stream: Socket, end: bytes) -> bool:
        """Write the watch to ``stream``, then ``end`` (the last chunk) when it ends: True when it
        ended so, False when its connection must close (a write cut short)."""
        watcher = self.watcher

        async def write(data: bytes | memoryview) -> None:
            # a turn for the other tasks after each write: a socket that takes everything
            # never makes the send wait, and a thousand watches starting would queue the rest
            if watcher is None:
                await stream.send(data)
            else:
                watcher.writing = True
                try:
                    await stream.send(data)
                finally:
                    watcher.writing = False
            await anyio.lowlevel.checkpoint()

        try:
            with anyio.CancelScope() as scope:
                if watcher is not None:
                    watcher.scope = scope
                    if watcher.aborted:
                        return False
                for data in self._initial():
                    await write(data)
                if watcher is not None:
                    await self._follow(watcher, stream, write)
                    if watcher.forced:  # its end, if the client takes it soon
                        with anyio.move_on_after(FORCED_END_SECONDS):
                            await stream.send(end)
                            return True
                        return False
                await write(end)
                return True
            return False  # aborted: cut short
        except Abort:
            return False
        finally:
            self.close()

    async def _follow(self, watcher: Watcher, stream: Socket, write: Write) -> None:
        """The live changes: written by the store's ``record`` straight to the socket while the
        watch has nothing else to write and the socket takes them, else by this task."""
        interval = self.server.bookmark_interval
        next_bookmark = anyio.current_time() + interval
        watcher.sink = stream.try_send
        with anyio.move_on_after(self.timeout):
            while True:
                while watcher.backlog:
                    batch = watcher.take(WRITE_BATCH_BYTES)
                    await write(batch[0] if len(batch) == 1 else b"".join(batch))
                if watcher.aborted:
                    raise Abort
                if watcher.ended:
                    return
                if self.bookmarks and anyio.current_time() >= next_bookmark:
                    await write(chunk(bookmark_line(self.server, self.spec)))
                    next_bookmark = anyio.current_time() + interval
                if self.bookmarks:
                    with anyio.move_on_after(max(0.0, next_bookmark - anyio.current_time())):
                        await watcher.wait()
                else:
                    await watcher.wait()


def watch(
    server: WatchServer,
    spec: ResourceSpec,
    namespace: str | None,
    q: dict[str, str],
    as_table: bool,
    matcher: tuple[Matcher | None, bool],
) -> WatchPlan:
    """GET ...?watch=true; ``matcher``: (the selectors' match or None, whether it can change as
    an object changes)."""
    store = server.store
    matches, selective = matcher
    timeout = watch_timeout(q, server.watch_timeout)
    rv_param = q.get("resourceVersion", "")
    since = resource_version(rv_param)
    bookmarks = bool(flag(q, "allowWatchBookmarks"))
    send_initial = bool(flag(q, "sendInitialEvents"))
    include = q.get("includeObject", "Metadata")
    plan = WatchPlan(server, spec, matches, selective, timeout, bookmarks, as_table, include)
    if send_initial or not since:
        objs = store.list(spec, namespace)
        plan.listing = [o for o in objs if matches(o)] if matches is not None else objs
        plan.initial_end = send_initial and bookmarks
    else:
        if since < store.floor:
            status = HTTPError(410, "Expired", f"too old resource version: {since} ({store.floor})")
            plan.error = b'{"type":"ERROR","object":' + status.body() + b"}\n"
            return plan
        plan.replay = [c for c in store.history if c.store == spec.store and c.rv > since]
    labels, fields = q.get("labelSelector", ""), q.get("fieldSelector", "")
    where = f"/{spec.plural}/{namespace}" if namespace else f"/{spec.plural}/"
    watcher = Watcher(
        spec.store,
        plan.render,
        resource=spec.qualified,
        identifier=f'key: "{where}", labels: "{labels}", fields: "{fields}"',
        max_events=server.watch_backlog_events,
        max_bytes=server.watch_backlog_bytes,
    )
    store.watchers.add(watcher)
    plan.watcher = watcher
    return plan
