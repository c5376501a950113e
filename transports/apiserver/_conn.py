"""One HTTP/1.1 connection of the fake API server: h11 over an anyio byte stream, its requests
read under upstream's timeouts and answered one at a time, a watch streamed.

    accept ──► read the head (ReadHeaderTimeout) ──► read the body ──► answer ──┐
                    ▲                                                            │ keep-alive
                    └──── wait for the next request to start (IdleTimeout) ◄─────┘

- Timeouts are kube-apiserver's http.Server's (k8s.io/apiserver/pkg/server/secure_serving.go):
  ``ReadHeaderTimeout`` 32 s from the start of a request (a new connection's: its accept) until
  its head is read; ``IdleTimeout`` 90 s for a kept-alive connection to start its next request.
  A connection past either is closed without an answer, as Go's server closes it.
- A request that cannot be taken (a head h11 refuses: 400; a body over the limit: 413) is
  answered once its body is read, up to ``MAX_DRAIN_BYTES`` or ``DRAIN_SECONDS``, so that a client
  still sending it reads the answer rather than a reset; then the write side is shut and what the
  client still sends is read for up to ``LINGER_SECONDS`` before closing (Go's
  closeWriteAndWait).
- A watch's response head goes through h11; its body is the plan's chunks, written as they are
  (``_watch``), while the connection is read to learn when the client goes away; the kernel
  holds at most ``WATCH_SEND_BUFFER`` (doubled) of it.
"""

from __future__ import annotations

import logging
import math
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

import anyio
import h11

from ._http import MAX_REQUEST_BODY_BYTES, HTTPError, Reply, Request, warning_header
from ._sockets import Socket
from ._watch import WatchPlan

__all__ = ["MAX_HEADER_BYTES", "Connection", "Server"]

log = logging.getLogger("kubesched.apiserver")

MAX_HEADER_BYTES = 1 << 20  # Go's http.DefaultMaxHeaderBytes
MAX_DRAIN_BYTES = 32 << 20
"""The most of a refused body read before the answer."""
DRAIN_SECONDS = 10.0
"""The longest a refused body is read before the answer."""
LINGER_SECONDS = 0.5  # Go's rstAvoidanceDelay
WATCH_SEND_BUFFER = 64 << 10
"""The kernel's buffer for a watch's writes: a watch that does not read stalls there soon (the
server's bounded backlog takes over), not after the kernel took megabytes of it."""
_CLOSED = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError)


class Server(Protocol):
    """What a connection needs of its server (``_server.APIServer``): its timeouts, and the
    answer to a request."""

    read_header_timeout: float
    idle_timeout: float

    async def answer(self, req: Request) -> Reply | WatchPlan: ...


class _TooLarge(Exception):
    """A request body over MAX_REQUEST_BODY_BYTES (read up to the drain's bounds)."""


class Connection:
    """One client connection of ``server``."""

    def __init__(self, server: Server, stream: Socket) -> None:
        self.server = server
        self.stream = stream
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADER_BYTES)

    async def serve(self) -> None:
        conn, stream = self.conn, self.stream
        try:
            try:
                first = True
                while True:
                    try:
                        req = await self._read_request(first)
                    except h11.RemoteProtocolError as e:
                        # a request h11 refuses (no Host, a bad header line): 400 as upstream's
                        # Go server, then close; never a connection dropped without an answer
                        await self._refuse(e.error_status_hint, "BadRequest", str(e))
                        return
                    except _TooLarge:
                        await self._refuse(
                            413,
                            "RequestEntityTooLarge",
                            f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}",
                        )
                        return
                    if req is None:
                        return
                    first = False
                    if not await self._respond(req):
                        return
                    if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                        return
                    conn.start_next_cycle()
            finally:
                stream.close()
        except (*_CLOSED, ConnectionError, h11.ProtocolError):
            return
        except Exception:  # one broken connection never takes the server down
            log.exception("connection failed")

    # --- reading -----------------------------------------------------------------------------

    async def _receive(self) -> bytes:
        try:
            return await self.stream.receive(65536)
        except _CLOSED:
            return b""

    async def _event(self) -> object:
        """h11's next event, reading from the client as it needs."""
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.conn.receive_data(await self._receive())

    async def _read_request(self, first: bool) -> Request | None:
        """The next request, or None when the connection is over (closed by the client, idle or
        slow past its timeout)."""
        server, conn = self.server, self.conn
        event: object = None
        if not first:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                with anyio.move_on_after(server.idle_timeout) as idle:
                    conn.receive_data(await self._receive())
                if idle.cancelled_caught:
                    return None
                event = None
        with anyio.move_on_after(server.read_header_timeout) as head_read:
            if event is None:
                event = await self._event()
        if head_read.cancelled_caught or not isinstance(event, h11.Request):
            return None  # timed out, closed, or PAUSED
        head = event
        too_large = any(
            k == b"content-length" and int(v) > MAX_REQUEST_BODY_BYTES for k, v in head.headers
        )
        body = bytearray()
        drained = 0
        with anyio.CancelScope(deadline=math.inf) as drain:
            if too_large:
                drain.deadline = anyio.current_time() + DRAIN_SECONDS
            while True:
                try:
                    event = await self._event()
                except h11.RemoteProtocolError:
                    if too_large:  # the client stopped sending the rest (or framed it wrong)
                        break
                    raise
                if isinstance(event, h11.Data):
                    if too_large:
                        drained += len(event.data)
                        if drained > MAX_DRAIN_BYTES:
                            break
                        continue
                    body += event.data
                    if len(body) > MAX_REQUEST_BODY_BYTES:  # chunked: the rest is drained
                        too_large, drained, body = True, len(body), bytearray()
                        drain.deadline = anyio.current_time() + DRAIN_SECONDS
                elif isinstance(event, h11.EndOfMessage):
                    break
                else:  # ConnectionClosed
                    if too_large:
                        break
                    return None
        if too_large:
            raise _TooLarge
        target = urlsplit(head.target.decode("latin-1"))
        return Request(
            method=head.method.decode("latin-1").upper(),
            path=target.path,
            query=dict(parse_qsl(target.query, keep_blank_values=True)),
            headers={k.decode().lower(): v.decode("latin-1") for k, v in head.headers},
            body=bytes(body),
        )

    async def _refuse(self, code: int, reason: str, message: str) -> None:
        """Answer a request that cannot be read, and close the connection after it."""
        conn, stream = self.conn, self.stream
        if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        body = HTTPError(code, reason, message).body()
        headers = [
            ("content-type", "application/json"),
            ("content-length", str(len(body))),
            ("connection", "close"),
        ]
        try:
            await stream.send(conn.send(h11.Response(status_code=code, headers=headers)))
            await stream.send(conn.send(h11.Data(data=body)))
            await stream.send(conn.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:
            return
        await self._linger()

    async def _linger(self) -> None:
        """Shut the write side, then read what the client still sends for a while: closing with
        unread data would reset the connection before the client reads the answer."""
        try:
            await self.stream.send_eof()
        except (*_CLOSED, NotImplementedError, OSError):
            return
        read = 0
        with anyio.move_on_after(LINGER_SECONDS):
            while read <= MAX_DRAIN_BYTES:
                data = await self._receive()
                if not data:
                    return
                read += len(data)

    # --- answering ---------------------------------------------------------------------------

    async def _respond(self, req: Request) -> bool:
        """Answer one request; False when the connection must close."""
        conn, stream = self.conn, self.stream
        result = await self.server.answer(req)
        if isinstance(result, WatchPlan):
            return await self._stream(result, head_only=req.method == "HEAD")
        headers = [
            ("content-type", result.content_type),
            ("content-length", str(len(result.body))),
            ("cache-control", "no-cache, private"),
        ]
        headers += [("warning", warning_header(w)) for w in result.warnings]
        await stream.send(conn.send(h11.Response(status_code=result.status, headers=headers)))
        if req.method != "HEAD" and result.body:
            await stream.send(conn.send(h11.Data(data=result.body)))
        await stream.send(conn.send(h11.EndOfMessage()))
        return True

    async def _stream(self, plan: WatchPlan, head_only: bool) -> bool:
        conn, stream = self.conn, self.stream
        headers = [
            ("content-type", "application/json"),
            ("transfer-encoding", "chunked"),
            ("cache-control", "no-cache, private"),
        ]
        await stream.send(conn.send(h11.Response(status_code=200, headers=headers)))
        # the body is the plan's chunks, written as they are: h11 is told it ended now, and its
        # last chunk is written when the watch ends
        end = conn.send(h11.EndOfMessage())
        if head_only:
            plan.close()
            await stream.send(end)
            return True
        stream.limit_send_buffer(WATCH_SEND_BUFFER)
        ended = False
        async with anyio.create_task_group() as tg:

            async def watch_for_close() -> None:
                received = 0
                try:
                    while received <= MAX_HEADER_BYTES:  # a pipelined request at most
                        data = await stream.receive(65536)
                        if not data:
                            break
                        received += len(data)
                        conn.receive_data(data)
                except _CLOSED:
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(watch_for_close)
            try:
                ended = await plan.run(stream, end)
            except (*_CLOSED, ConnectionError):
                ended = False  # the client went away
            tg.cancel_scope.cancel()
        return ended
