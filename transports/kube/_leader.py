"""Leader election over a coordination.k8s.io/v1 Lease, as client-go's ``leaderelection``.

::

    acquire: every retryPeriod (jittered ×1.2) try to take the lease ──► leader
    leader:  run the work; every retryPeriod renew; a renewal that does not succeed within
             renewDeadline ──► lost: the work is cancelled and LeaderElectionLost is raised
    done:    work finished or cancelled (SIGTERM) ──► release the lease (holder "", 1 s)

Another holder's lease counts as valid until ``leaseDurationSeconds`` after *we* last saw it
change (the observed time, on our own clock, as client-go: no trust in clock skew).  Updates
carry the resourceVersion, so two candidates never both win.  The lease is
``kube-system/kubesched`` by default — never ``kube-system/kube-scheduler``, which belongs to
the default scheduler.
"""

from __future__ import annotations

import logging
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import anyio
import msgspec

from kubesched import (
    ConfigError,
    ConflictError,
    KubeschedError,
    NotFoundError,
    TransportError,
    plain_exception,
)
from kubesched.api import Lease
from kubesched.framework import parse_time

from ._client import ApiClient
from ._transport import KubeTransport, micro_time

log = logging.getLogger("kubesched.kube")

DEFAULT_LEASE_NAME = "kubesched"
DEFAULT_LEASE_NAMESPACE = "kube-system"
JITTER_FACTOR = 1.2

__all__ = ["LeaderElectionLost", "LeaderElector", "default_identity", "live_lease_holder"]

DEFAULT_SCHEDULER_LEASE = ("kube-system", "kube-scheduler")
"""The lease a running kube-scheduler (leader election on, its default) renews."""


async def live_lease_holder(
    transport: KubeTransport, namespace: str, name: str
) -> tuple[str, float] | None:
    """(holder, seconds since its renewal) when the lease was renewed within its duration
    (someone is leading with it), else None: no such lease, no holder, or expired."""
    path = (
        f"/apis/coordination.k8s.io/v1/namespaces/{quote(namespace, safe='')}"
        f"/leases/{quote(name, safe='')}"
    )
    try:
        body = await transport.api.request("GET", path, retry=False)
    except NotFoundError:
        return None
    spec = _lease_decoder.decode(body).spec
    if not spec.holder_identity or not spec.renew_time:
        return None
    try:
        renewed = parse_time(spec.renew_time)
    except ValueError:
        return None
    if renewed is None:
        return None
    age = transport.wall_clock() - renewed
    if age > (spec.lease_duration_seconds or 15):
        return None
    return spec.holder_identity, max(0.0, age)

_lease_decoder = msgspec.json.Decoder(Lease)


class LeaderElectionLost(KubeschedError):
    """The lease could not be renewed within the renew deadline: stop scheduling."""


def default_identity() -> str:
    """``<hostname>_<uuid>``, as kube-scheduler's holder identity."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    """Campaign for a Lease and run work only while holding it."""

    def __init__(
        self,
        client: KubeTransport | ApiClient,
        *,
        name: str = DEFAULT_LEASE_NAME,
        namespace: str = DEFAULT_LEASE_NAMESPACE,
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        wall_clock: Callable[[], float] | None = None,
    ) -> None:
        if (namespace, name) == ("kube-system", "kube-scheduler"):
            raise ConfigError(
                "kube-system/kube-scheduler is the default scheduler's lease: use another name"
            )
        if lease_duration <= renew_deadline:
            raise ConfigError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ConfigError("renewDeadline must be greater than retryPeriod*1.2")
        if retry_period <= 0:
            raise ConfigError("retryPeriod must be greater than zero")
        if isinstance(client, KubeTransport):
            self.api = client.api
            self.wall_clock = wall_clock or client.wall_clock
            self.rng = client.rng
        else:
            self.api = client
            self.wall_clock = wall_clock or _time
            self.rng = client.rng
        self.name = name
        self.namespace = namespace
        self.identity = identity or default_identity()
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{quote(namespace, safe='')}/leases/{quote(name, safe='')}"
        self._observed: Lease | None = None
        self._observed_time = 0.0
        self.is_leader = False
        self.transitions_seen = 0

    def __repr__(self) -> str:
        return f"LeaderElector({self.namespace}/{self.name}, identity={self.identity!r})"

    # --- one attempt --------------------------------------------------------------------------
    def _spec(self, now: str, *, acquire_time: str, transitions: int) -> dict[str, Any]:
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.lease_duration),
            "acquireTime": acquire_time,
            "renewTime": now,
            "leaseTransitions": transitions,
        }

    def _observe(self, lease: Lease) -> None:
        old = self._observed
        if (
            old is None
            or old.spec != lease.spec
            or old.metadata.resource_version != lease.metadata.resource_version
        ):
            self._observed = lease
            self._observed_time = anyio.current_time()

    async def try_acquire_or_renew(self) -> bool:
        """One attempt to take or renew the lease (``tryAcquireOrRenew``)."""
        now = micro_time(self.wall_clock())
        try:
            body = await self.api.request("GET", self.path, retry=False)
        except NotFoundError:
            lease = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(now, acquire_time=now, transitions=0),
            }
            collection = self.path.rsplit("/", 1)[0]
            try:
                created = await self.api.request("POST", collection, body=lease, retry=False)
            except ConflictError:
                return False
            self._observe(_lease_decoder.decode(created))
            return True
        current = _lease_decoder.decode(body)
        self._observe(current)
        spec = current.spec
        holder = spec.holder_identity or ""
        duration = spec.lease_duration_seconds or int(self.lease_duration)
        if (
            holder
            and holder != self.identity
            and self._observed_time + duration > anyio.current_time()
        ):
            return False
        transitions = spec.lease_transitions or 0
        if holder == self.identity:
            new_spec = self._spec(
                now, acquire_time=spec.acquire_time or now, transitions=transitions
            )
        else:
            new_spec = self._spec(now, acquire_time=now, transitions=transitions + 1)
        update = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "resourceVersion": current.metadata.resource_version,
            },
            "spec": new_spec,
        }
        try:
            updated = await self.api.request("PUT", self.path, body=update, retry=False)
        except ConflictError:
            return False
        self._observe(_lease_decoder.decode(updated))
        return True

    async def _attempt(self) -> bool:
        try:
            return await self.try_acquire_or_renew()
        except TransportError as e:
            log.warning("leader election: %s", e)
            return False

    # --- the campaign -------------------------------------------------------------------------
    async def acquire(self) -> None:
        """Wait until this candidate holds the lease."""
        log.info("attempting to acquire leader lease %s/%s...", self.namespace, self.name)
        while not await self._attempt():
            await anyio.sleep(self.retry_period * (1.0 + JITTER_FACTOR * self.rng.random()))
        self.is_leader = True
        log.info("successfully acquired lease %s/%s", self.namespace, self.name)

    async def _renew_until_lost(self) -> None:
        while True:
            renewed = False
            with anyio.move_on_after(self.renew_deadline):
                while not (renewed := await self._attempt()):
                    await anyio.sleep(self.retry_period)
            if not renewed:
                return
            await anyio.sleep(self.retry_period)

    async def release(self) -> None:
        """Give the lease up (holder "", 1 s), if we still hold it."""
        try:
            body = await self.api.request("GET", self.path, retry=False)
            current = _lease_decoder.decode(body)
            if current.spec.holder_identity != self.identity:
                return
            now = micro_time(self.wall_clock())
            update = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": self.name,
                    "namespace": self.namespace,
                    "resourceVersion": current.metadata.resource_version,
                },
                "spec": {
                    "leaseDurationSeconds": 1,
                    "acquireTime": now,
                    "renewTime": now,
                    "leaseTransitions": current.spec.lease_transitions or 0,
                },
            }
            await self.api.request("PUT", self.path, body=update, retry=False)
            log.info("released lease %s/%s", self.namespace, self.name)
        except TransportError as e:
            log.warning("releasing the lease failed: %s", e)

    async def run(self, work: Callable[[], Awaitable[Any]]) -> None:
        """Acquire the lease, then run ``work()`` while renewing it.

        Returns when ``work`` returns; raises :class:`LeaderElectionLost` (after cancelling
        ``work``) when a renewal fails for ``renew_deadline``, and what ``work`` raises as itself
        (not in an ExceptionGroup).  When ``work`` ends or the caller
        is cancelled, the lease is released (``release_on_cancel``).
        """
        await self.acquire()
        lost = False
        error: BaseException | None = None
        raised: list[BaseException] = []  # what ``work`` raised: one exception, even a group
        try:
            async with anyio.create_task_group() as tg:

                async def _work() -> None:
                    try:
                        await work()
                    except BaseException as e:
                        raised.append(e)
                        raise
                    tg.cancel_scope.cancel()

                tg.start_soon(_work)
                await self._renew_until_lost()
                lost = True
                self.is_leader = False
                log.error(
                    "leader election lost: lease %s/%s was not renewed in %.0fs",
                    self.namespace,
                    self.name,
                    self.renew_deadline,
                )
                tg.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # what ``work`` raised, as itself
            if (error := plain_exception(group, keep=raised[0] if raised else None)) is None:
                raise
        finally:
            self.is_leader = False
            if not lost and self.release_on_cancel:
                with anyio.CancelScope(shield=True), anyio.move_on_after(self.renew_deadline):
                    await self.release()
        if error is not None:
            raise error  # outside the handler: the group is not its context
        if lost:
            raise LeaderElectionLost(f"lost the lease {self.namespace}/{self.name}")


def _time() -> float:
    import time

    return time.time()
