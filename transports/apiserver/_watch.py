"""WATCH: the lines one HTTP watch streams, from the store's history and then its live changes.

A watch streams JSON lines (``{"type": ..., "object": ...}``) with chunked encoding.  Without a
resourceVersion (or with 0) it starts with the listing as ADDED events; from a resourceVersion
it replays the history after it, or answers one ERROR event with a 410 Expired Status when that
version is older than the history ("too old resource version"), as the watch cache does.  With
``allowWatchBookmarks=true`` a BOOKMARK comes every ``bookmark_interval`` seconds, and one marked
``k8s.io/initial-events-end`` after the initial events when ``sendInitialEvents=true``.  With a
selector, an object that starts or stops matching is ADDED or DELETED for that watch.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from ._http import HTTPError, bad_request
from ._store import Change, Watcher
from ._table import table
from ._wire import with_rv

if TYPE_CHECKING:
    from ._registry import ResourceSpec
    from ._server import APIServer

__all__ = ["Abort", "WatchPlan", "event_line", "watch"]

Send = Callable[[bytes], Awaitable[None]]
Matcher = Callable[[Any], bool]


_MAX_TIMEOUT_SECONDS = (2**63 - 1) // 10**9  # the longest time.Duration


class Abort(Exception):
    """End a watch by closing its connection (a dropped watch)."""


def event_line(
    server: APIServer, spec: ResourceSpec, type_: str, obj: Any, as_table: bool, include: str
) -> bytes:
    if as_table:
        body = msgspec.json.encode(
            table(spec.printer, [spec.printable(obj)], server.store.now(), include_object=include)
        )
    else:
        body = spec.encode(obj)
    return b'{"type":"' + type_.encode() + b'","object":' + body + b"}\n"


def bookmark_line(server: APIServer, spec: ResourceSpec, *, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(server.store.last_rv), "creationTimestamp": None}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    obj = {"kind": spec.kind, "apiVersion": spec.group_version, "metadata": meta}
    return msgspec.json.encode({"type": "BOOKMARK", "object": obj}) + b"\n"


@dataclass
class WatchPlan:
    """What one HTTP watch streams: initial lines, then its watcher's changes."""

    server: APIServer
    spec: ResourceSpec
    watcher: Watcher | None
    initial: list[bytes]
    matches: Matcher | None
    selective: bool
    timeout: float
    bookmarks: bool
    as_table: bool
    include_object: str

    async def run(self, send: Send) -> None:
        server, watcher = self.server, self.watcher
        try:
            for line in self.initial:
                await send(line)
            if watcher is None:
                return
            interval = server.bookmark_interval
            next_bookmark = anyio.current_time() + interval
            with anyio.move_on_after(self.timeout):
                while True:
                    while watcher.queue:
                        change_line = self._line(watcher.queue.popleft())
                        if change_line is not None:
                            await send(change_line)
                    if watcher.aborted:
                        raise Abort
                    if watcher.ended:
                        return
                    if self.bookmarks and anyio.current_time() >= next_bookmark:
                        await send(bookmark_line(server, self.spec))
                        next_bookmark = anyio.current_time() + interval
                    if self.bookmarks:
                        with anyio.move_on_after(max(0.0, next_bookmark - anyio.current_time())):
                            await watcher.wait()
                    else:
                        await watcher.wait()
        finally:
            if watcher is not None:
                server.store.watchers.discard(watcher)

    def _line(self, change: Change) -> bytes | None:
        type_, obj = change.type, change.obj
        if self.matches is not None:
            now_ok = self.matches(obj)
            if type_ == "MODIFIED" and self.selective:
                was_ok = self.matches(change.prev) if change.prev is not None else now_ok
                if now_ok and not was_ok:
                    type_ = "ADDED"
                elif was_ok and not now_ok:
                    type_, obj = "DELETED", with_rv(change.prev, str(change.rv))
                elif not now_ok:
                    return None
            elif not now_ok:
                return None
        return event_line(self.server, self.spec, type_, obj, self.as_table, self.include_object)


def watch(
    server: APIServer,
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
    rv_param = q.get("resourceVersion", "")
    bookmarks = q.get("allowWatchBookmarks") in ("true", "1", "True")
    send_initial = q.get("sendInitialEvents") in ("true", "1", "True")
    include = q.get("includeObject", "Metadata")
    raw = q.get("timeoutSeconds") or ""
    timeout = server.watch_timeout
    if raw:
        # a number of seconds in int64 as upstream's ListOptions (nan, inf, 1e308 are not; a
        # fraction is kept, for tests); past what a Duration holds it is capped there, so that
        # every watch ends
        m = re.fullmatch(r"-?([0-9]{1,19})(\.[0-9]{1,9})?", raw)
        if m is None or int(m.group(1)) >= 2**63:
            raise bad_request(
                f'timeoutSeconds: Invalid value: "{raw}": strconv.ParseInt: parsing "{raw}": invalid syntax'
            )
        if float(raw) > 0:
            timeout = min(float(raw), _MAX_TIMEOUT_SECONDS)
    plan = WatchPlan(
        server, spec, None, [], matches, selective, timeout, bookmarks, as_table, include
    )
    if send_initial or rv_param in ("", "0"):
        objs = store.list(spec, namespace)
        if matches is not None:
            objs = [o for o in objs if matches(o)]
        plan.initial = [event_line(server, spec, "ADDED", o, as_table, include) for o in objs]
        if send_initial and bookmarks:
            plan.initial.append(bookmark_line(server, spec, initial_end=True))
        backlog: list[Change] = []
    else:
        try:
            since = int(rv_param)
        except ValueError:
            raise bad_request(f'invalid resource version "{rv_param}"') from None
        if since < store.floor:
            status = HTTPError(410, "Expired", f"too old resource version: {since} ({store.floor})")
            plan.initial = [b'{"type":"ERROR","object":' + status.body() + b"}\n"]
            return plan
        backlog = [c for c in store.history if c.store == spec.store and c.rv > since]
    watcher = Watcher(spec.store, deque(backlog))
    store.watchers.add(watcher)
    plan.watcher = watcher
    return plan
