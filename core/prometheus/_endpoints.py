"""``kubesched run``'s HTTP endpoints: ``/metrics`` and kube-scheduler's health checks
(``/healthz``, ``/livez``, ``/readyz``), served by h11 on the scheduler's event loop (see the
package docstring)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import anyio.abc
import h11

from kubesched._errors import ConfigError
from kubesched.prometheus._exposition import CONTENT_TYPE, MAX_REQUEST_HEAD, TEXT, exposition

log = logging.getLogger("kubesched")


# --- health --------------------------------------------------------------------------------


Check = tuple[str, Callable[[], str | None]]
"""(name, check): the check returns None when healthy, else why not (for the log)."""


def ping() -> str | None:
    return None


@dataclass
class Endpoints:
    """What ``serve`` answers: /metrics from ``registry``, the three health endpoints."""

    registry: Any
    healthz: Sequence[Check]
    livez: Sequence[Check]
    readyz: Sequence[Check]

    def answer(self, target: str) -> tuple[int, str, bytes]:
        """(status, content type, body) for a request target (path and query)."""
        parts = urlsplit(target)
        path = parts.path
        if path == "/metrics":
            return 200, CONTENT_TYPE, exposition(self.registry)
        for name, checks in (("healthz", self.healthz), ("livez", self.livez), ("readyz", self.readyz)):
            if path == f"/{name}":
                return _root_health(name, checks, parse_qsl(parts.query, keep_blank_values=True))
            for check, fn in checks:
                if path == f"/{name}/{check}":
                    why = fn()
                    if why is None:
                        return 200, TEXT, b"ok"
                    return 500, TEXT, f"internal server error: {why}\n".encode()
        return 404, TEXT, b"404 page not found\n"


def _root_health(name: str, checks: Sequence[Check], query: list[tuple[str, str]]) -> tuple[int, str, bytes]:
    """``handleRootHealth``: run every check not excluded; all pass: "ok" (or, verbose, the
    list); any fails: 500 with the list, reasons withheld (they go to the log)."""
    excluded = {v for k, v in query if k == "exclude"}
    verbose = any(k == "verbose" for k, _ in query)
    lines: list[str] = []
    failed: list[str] = []
    for check, fn in checks:
        if check in excluded:
            excluded.discard(check)
            lines.append(f"[+]{check} excluded: ok")
            continue
        why = fn()
        if why is None:
            lines.append(f"[+]{check} ok")
        else:
            lines.append(f"[-]{check} failed: reason withheld")
            failed.append(check)
            log.info("%s check failed: %s: %s", name, check, why)
    if excluded:
        quoted = ",".join(f'"{e}"' for e in sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    listing = "".join(line + "\n" for line in lines)
    if failed:
        return 500, TEXT, f"{listing}{name} check failed\n".encode()
    if not verbose:
        return 200, TEXT, b"ok"
    return 200, TEXT, f"{listing}{name} check passed\n".encode()


async def listen(address: str, port: int) -> anyio.abc.Listener[anyio.abc.SocketStream]:
    """The listening socket, or a ConfigError naming the flag."""
    try:
        return await anyio.create_tcp_listener(local_host=address, local_port=port)
    except OSError as e:
        raise ConfigError(
            f"cannot listen on {address}:{port}: {e.strerror or e}", field="--metrics-port"
        ) from None


async def serve(listener: anyio.abc.Listener[anyio.abc.SocketStream], endpoints: Endpoints) -> None:
    """Answer HTTP/1.1 requests on ``listener`` until cancelled (keep-alive; any method, HEAD
    without a body)."""

    async def connection(stream: anyio.abc.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST_HEAD)
        request: h11.Request | None = None
        try:
            async with stream:
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        try:
                            data = await stream.receive(65536)
                        except (anyio.EndOfStream, anyio.BrokenResourceError):
                            data = b""
                        conn.receive_data(data)
                    elif isinstance(event, h11.Request):
                        request = event
                    elif isinstance(event, h11.EndOfMessage) and request is not None:
                        await _respond(conn, stream, request, endpoints)
                        if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                            return  # MUST_CLOSE: HTTP/1.0, or "Connection: close"
                        conn.start_next_cycle()
                        request = None
                    elif not isinstance(event, h11.Data):
                        return  # ConnectionClosed
        except (h11.ProtocolError, anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
            return
        except Exception:  # one broken connection never takes the server down
            log.exception("metrics connection failed")

    await listener.serve(connection)


async def _respond(
    conn: h11.Connection, stream: anyio.abc.SocketStream, req: h11.Request, endpoints: Endpoints
) -> None:
    try:
        status, content_type, body = endpoints.answer(req.target.decode("latin-1"))
    except Exception:  # a bug: 500, never a dead server
        log.exception("answering %s failed", req.target)
        status, content_type, body = 500, TEXT, b"internal server error\n"
    headers = [
        ("content-type", content_type),
        ("content-length", str(len(body))),
        ("x-content-type-options", "nosniff"),
    ]
    await stream.send(conn.send(h11.Response(status_code=status, headers=headers)))
    if req.method != b"HEAD" and body:
        await stream.send(conn.send(h11.Data(data=body)))
    await stream.send(conn.send(h11.EndOfMessage()))
