"""TCP sockets for the fake API server, on anyio's readiness waits (``wait_readable``,
``wait_writable``) rather than its socket streams: nothing is buffered between the server and
the kernel, and a write can be tried at once, without a task switch (``try_send``), which is how
a watch that keeps up gets each change (``_fanout``).  Both anyio backends.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.abc

__all__ = ["Socket", "accept_loop", "listen"]

log = logging.getLogger("kubesched.apiserver")

_RESOURCE_ERRORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def listen(host: str, port: int, backlog: int = 1024) -> socket.socket:
    """A non-blocking socket listening on ``host``:``port`` (0: a free port)."""
    family, type_, proto, _, addr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, type_, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(backlog)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


async def accept_loop(
    sock: socket.socket,
    handle: Callable[[Socket], Coroutine[Any, Any, None]],
    tg: anyio.abc.TaskGroup,
    *,
    batch: int = 32,
) -> None:
    """Accept connections on ``sock`` for ever, each served by ``handle`` in ``tg``: up to
    ``batch`` at each wake-up, so that a busy server still empties its accept queue (a client
    finds it full when the server takes one connection per turn of its event loop)."""
    while True:
        await anyio.wait_readable(sock)
        for _ in range(batch):
            try:
                conn, _ = sock.accept()
            except (BlockingIOError, InterruptedError):
                break
            except ConnectionAbortedError:
                continue
            except OSError as e:
                if e.errno not in _RESOURCE_ERRORS:
                    raise
                log.warning("cannot accept a connection: %s", e)
                await anyio.sleep(0.1)
                break
            conn.setblocking(False)
            with contextlib.suppress(OSError):
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            tg.start_soon(handle, Socket(conn))


class Socket:
    """A connected non-blocking socket: ``receive`` and ``send`` wait for readiness; ``try_send``
    writes what the kernel takes now.  Raises anyio's ClosedResourceError once closed,
    BrokenResourceError when the peer reset it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        """The next bytes, or b"" at the end of the stream."""
        while True:
            if self.closed:
                raise anyio.ClosedResourceError
            try:
                return self.sock.recv(max_bytes)
            except (BlockingIOError, InterruptedError):
                await anyio.wait_readable(self.sock)
            except OSError as e:
                raise anyio.BrokenResourceError from e

    async def send(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            if self.closed:
                raise anyio.ClosedResourceError
            try:
                view = view[self.sock.send(view) :]
            except (BlockingIOError, InterruptedError):
                await anyio.wait_writable(self.sock)
            except OSError as e:
                raise anyio.BrokenResourceError from e

    def try_send(self, data: bytes | memoryview) -> int:
        """Write what the kernel takes of ``data`` now: how many bytes (0 when it takes none,
        or when the connection is broken: the next ``send`` says so)."""
        if self.closed:
            return 0
        try:
            return self.sock.send(data)
        except OSError:
            return 0

    def limit_send_buffer(self, size: int) -> None:
        """Bound what the kernel holds of this connection's writes (``SO_SNDBUF``; Linux
        doubles it), rather than let it grow to megabytes for a client that does not read."""
        with contextlib.suppress(OSError):
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)

    async def send_eof(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError as e:
            raise anyio.BrokenResourceError from e

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            anyio.notify_closing(self.sock)
            self.sock.close()
