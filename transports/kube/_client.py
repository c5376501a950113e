"""The HTTP layer: one ``httpx.AsyncClient``, a client-side QPS limit, typed errors, retries.

Every request (lists, watch starts, writes) first takes a token from a :class:`TokenBucket` (QPS
50, burst 100 by default, as kube-scheduler's ``clientConnection``), reading time from anyio
only, so it runs in virtual time in tests.

Errors map to :mod:`kubesched` (its exception hierarchy): 404 → NotFoundError, 409 → ConflictError, 410 →
GoneError (the watch's resourceVersion is too old), 5xx / 429 / connection failures →
UnavailableError, any other status → TransportError.  ``request(..., retry=True)`` retries the
retryable ones with exponential backoff and jitter; a 429's ``Retry-After`` is honoured.
"""

from __future__ import annotations

import logging
import random
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import msgspec

from kubesched import ConflictError, NotFoundError, TransportError, UnavailableError

from ._config import ClusterConfig

log = logging.getLogger("kubesched.kube")

USER_AGENT = "kubesched/0.1.0"
DEFAULT_QPS = 50.0
DEFAULT_BURST = 100

__all__ = ["ApiClient", "GoneError", "TokenBucket"]


class GoneError(TransportError):
    """410 Gone: the requested resourceVersion is no longer available; list again."""


class TokenBucket:
    """A token bucket: ``qps`` tokens a second, at most ``burst`` saved up.

    ``acquire()`` reserves a token and sleeps until it is due (tokens may go negative: waiters
    are served in arrival order, like Go's ``rate.Limiter.Wait``).  ``qps <= 0``: no limit.
    """

    def __init__(self, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST) -> None:
        if qps > 0 and burst < 1:
            raise ValueError("burst must be at least 1")
        self.qps = qps
        self.burst = burst
        self._tokens = float(burst)
        self._last: float | None = None

    async def acquire(self) -> None:
        if self.qps <= 0:
            await anyio.lowlevel.checkpoint()
            return
        now = anyio.current_time()
        if self._last is not None:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        if self._tokens >= 0:
            await anyio.lowlevel.checkpoint()
            return
        await anyio.sleep(-self._tokens / self.qps)


class _Status(msgspec.Struct, rename="camel"):
    """metav1.Status, the body of every API error."""

    kind: str = ""
    message: str = ""
    reason: str = ""
    code: int = 0


def status_message(body: bytes, code: int) -> str:
    """The message of a metav1.Status body (else the HTTP reason phrase)."""
    try:
        st = msgspec.json.decode(body, type=_Status)
    except msgspec.DecodeError:
        st = _Status()
    return st.message or httpx.codes.get_reason_phrase(code) or f"HTTP {code}"


def error_for(method: str, path: str, code: int, body: bytes) -> TransportError:
    """The typed error for a failed response."""
    msg = f"{method} {path}: {code} {status_message(body, code)}"
    if code == 404:
        return NotFoundError(msg)
    if code == 409:
        return ConflictError(msg)
    if code == 410:
        return GoneError(msg)
    if code == 429 or code >= 500:
        return UnavailableError(msg)
    return TransportError(msg)


def _retry_after(resp: httpx.Response) -> float | None:
    value = resp.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return min(max(float(value), 0.0), 60.0)
    except ValueError:
        return None


class ApiClient:
    """Requests to one API server with the QPS limit, typed errors and retries."""

    def __init__(
        self,
        config: ClusterConfig,
        *,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        timeout: float = 30.0,
        max_retries: int = 5,
        retry_base: float = 0.2,
        retry_max: float = 5.0,
        http_transport: httpx.AsyncBaseTransport | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.limiter = TokenBucket(qps, burst)
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_base = retry_base
        self.retry_max = retry_max
        self.rng = rng or random.Random()
        # plain HTTP (no redirect is followed) never uses TLS: no CA bundle loaded (30-40 ms)
        verify: ssl.SSLContext | bool = False
        if config.server.startswith("https:"):
            verify = config.ssl_context()
        elif not config.server.startswith("http:"):
            verify = True
        self.http = httpx.AsyncClient(
            base_url=config.server,
            auth=config.auth(),
            verify=verify,
            transport=http_transport,
            timeout=httpx.Timeout(timeout),
            headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
            trust_env=False,
        )
        self.requests = 0
        """Requests sent (each retry counts), for tests and diagnostics."""

    async def aclose(self) -> None:
        await self.http.aclose()

    def backoff(self, attempt: int) -> float:
        """The delay before retry ``attempt`` (0-based): exponential with full jitter on top."""
        base = min(self.retry_max, self.retry_base * (1 << attempt))
        return base * (1.0 + self.rng.random())

    async def _send_once(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None,
        content: bytes | None,
        content_type: str | None,
    ) -> httpx.Response:
        await self.limiter.acquire()
        headers = {"Content-Type": content_type} if content_type else None
        self.requests += 1
        try:
            return await self.http.request(
                method, path, params=params, content=content, headers=headers
            )
        except httpx.HTTPError as e:
            raise UnavailableError(f"{method} {path}: {type(e).__name__}: {e}") from None

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        retry: bool = True,
    ) -> bytes:
        """Send; the body of a 2xx answer, else the typed error.  With ``retry``, 5xx, 429 and
        connection failures are retried up to ``max_retries`` times."""
        content = None
        if body is not None:
            content = body if isinstance(body, bytes) else msgspec.json.encode(body)
        attempt = 0
        while True:
            delay: float | None = None
            try:
                resp = await self._send_once(
                    method,
                    path,
                    params=params,
                    content=content,
                    content_type=content_type if content is not None else None,
                )
            except UnavailableError as e:
                err: TransportError = e
            else:
                if resp.is_success:
                    return resp.content
                err = error_for(method, path, resp.status_code, resp.content)
                if resp.status_code == 429:
                    delay = _retry_after(resp)
            if not isinstance(err, UnavailableError) or not retry or attempt >= self.max_retries:
                raise err
            delay = self.backoff(attempt) if delay is None else delay
            log.debug("%s; retrying in %.2fs", err, delay)
            await anyio.sleep(delay)
            attempt += 1

    @asynccontextmanager
    async def stream(
        self, path: str, *, params: Mapping[str, Any], read_timeout: float | None
    ) -> AsyncIterator[httpx.Response]:
        """A streaming GET (a watch): the open response, or the typed error of its status."""
        await self.limiter.acquire()
        self.requests += 1
        timeout = httpx.Timeout(self.timeout, read=read_timeout)
        try:
            async with self.http.stream("GET", path, params=params, timeout=timeout) as resp:
                if not resp.is_success:
                    body = await resp.aread()
                    raise error_for("GET", path, resp.status_code, body)
                yield resp
        except httpx.HTTPError as e:
            raise UnavailableError(f"GET {path}: {type(e).__name__}: {e}") from None
