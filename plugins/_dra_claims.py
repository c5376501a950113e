"""The DynamicResources plugin's claim tracker (upstream ``dra_manager.go``'s claim side) and
the ``resourceclaim`` helpers it needs (k8s.io/dynamic-resource-allocation v0.36.2).

:class:`ClaimTracker` holds the claims PreBind wrote until the scheduler's copy catches up (the
assume cache), the allocations between Reserve and PreBind (in flight), and the devices the
cluster's allocated claims take, kept from the claims table's change log so that a scheduling
cycle costs what changed since the last one, not every claim.
"""

from __future__ import annotations

import functools
import re
import time as _time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from kubesched.dra import (
    AllocatedState,
    PatchedSlices,
    PoolUse,
    legacy_selectors,
    taint_rules_apply,
)
from kubesched.framework import ConfigError, QueueingHint, Status, parse_quantity

if TYPE_CHECKING:
    from kubesched.api import AllocationResult, ResourceClaim
    from kubesched.framework import Handle, Pod


def format_time(seconds: float) -> str:
    """A metav1.Time (RFC 3339, seconds) from Unix seconds."""
    return _format_second(int(seconds))


@functools.lru_cache(maxsize=64)
def _format_second(second: int) -> str:
    """Many writes fall in one second (a simulation's, or a busy scheduler's)."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_CONFLICT_RETRIES = 5  # retry.DefaultRetry: Steps 5, Duration 10ms
_CONFLICT_BACKOFF = 0.01


class ClaimError(Exception):
    """A reason the pod cannot use its claims now (``foreachPodResourceClaim``'s errors)."""


def duration(value: Any, field_name: str) -> float:
    """A metav1.Duration (``"10s"``, ``"1m30s"``) in seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        raise ConfigError(f"{field_name}: invalid duration {value!r}")
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    text, total = value.strip(), 0.0
    if text in ("0", ""):
        return 0.0
    parts = re.findall(r"(\d+(?:\.\d*)?)(ms|us|µs|ns|h|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ConfigError(f'{field_name}: time: invalid duration "{value}"')
    for number, unit in parts:
        total += float(number) * units[unit]
    return total


@dataclass
class _Tracked:
    """The devices the cluster's allocated claims take, with how many claims take each, and
    where in the claims table's change log they were last brought up to date."""

    table: Any = None
    epoch: int = 0
    pos: int = 0
    contrib: dict[tuple[str, str], tuple[Any, ...]] = field(default_factory=dict)
    devices: dict[tuple[str, str, str], int] = field(default_factory=dict)
    shared: dict[tuple[tuple[str, str, str], str], int] = field(default_factory=dict)
    capacity: dict[tuple[str, str, str], dict[str, Fraction]] = field(default_factory=dict)
    pools: dict[tuple[str, str], set[str]] = field(
        default_factory=dict
    )  # dedicated devices per pool
    frozen: dict[tuple[str, str], frozenset[Any]] = field(default_factory=dict)
    """Per pool with dedicated devices in use, their names (made again for the pools in
    ``dirty``)."""
    dirty: set[tuple[str, str]] = field(default_factory=set)

    def reset(self, table: Any, epoch: int) -> None:
        self.table, self.epoch, self.pos = table, epoch, 0
        self.contrib, self.devices, self.shared, self.capacity = {}, {}, {}, {}
        self.pools, self.frozen, self.dirty = {}, {}, set()


def key_of(claim: ResourceClaim) -> tuple[str, str]:
    return (claim.metadata.namespace, claim.metadata.name)


def _version(claim: ResourceClaim | None) -> int:
    if claim is None:
        return -1
    try:
        return int(claim.metadata.resource_version or "0")
    except ValueError:
        return 0


def is_reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """``resourceclaim.IsReservedForPod``."""
    uid = pod.metadata.uid
    return any(r.uid == uid for r in claim.status.reserved_for)


def controlled_by(claim: ResourceClaim, pod: Pod) -> bool:
    """``metav1.IsControlledBy``."""
    return any(
        ref.controller and ref.uid == pod.metadata.uid for ref in claim.metadata.owner_references
    )


def _mark(table: Any) -> Any:
    """Where a ``ChangeLog`` table (the cluster state's) is in its changes; None for a plain
    dict (read every time)."""
    log = getattr(table, "log", None)
    return (id(table), getattr(table, "epoch", 0), len(log)) if log is not None else None


class ClaimTracker:
    """Assumed and in-flight claims and the devices in use (see the module)."""

    def __init__(self, handle: Handle, consumable_capacity: bool) -> None:
        self.handle = handle
        self.consumable_capacity = consumable_capacity
        self.assumed: dict[tuple[str, str], ResourceClaim] = {}
        self.in_flight: dict[str, ResourceClaim] = {}
        self._tracked = _Tracked()
        self._slices_mark: Any = None
        self._slices_cache: tuple[Any, ...] = ()
        # the scheduler's slice tracker applies DeviceTaintRules (DRADeviceTaintRules from
        # 1.35, DRADeviceTaints before): the slices as ListWithDeviceTaintRules lists them
        self.taint_rules = taint_rules_apply(handle.feature_gates, handle.emulated_version)
        self._patched = PatchedSlices()
        self._legacy = legacy_selectors(handle.cluster.device_classes, handle.feature_gates, handle.emulated_version)

    def get_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The latest claim: the assumed one while the cluster's copy is not newer."""
        stored = self.handle.cluster.get_resource_claim(namespace, name)
        assumed = self.assumed.get((namespace, name))
        if assumed is None:
            return stored
        if (
            stored is None
            or stored.metadata.uid != assumed.metadata.uid
            or _version(stored) >= _version(assumed)
        ):
            # deleted, replaced, or the informer has caught up (upstream keeps an assumed
            # object until a strictly newer one; an equal version has the same content)
            del self.assumed[(namespace, name)]
            return stored
        return assumed

    def _contribution(self, claim: ResourceClaim | None) -> tuple[Any, ...]:
        """What an allocated claim takes: dedicated devices, and (with DRAConsumableCapacity)
        shares with the capacity they consume; admin access takes nothing."""
        if claim is None or claim.status.allocation is None:
            return ()
        out: list[Any] = []
        for r in claim.status.allocation.devices.results:
            if r.admin_access:
                continue
            did = (r.driver, r.pool, r.device)
            if self.consumable_capacity and r.share_id:
                caps = tuple((n, parse_quantity(q)) for n, q in r.consumed_capacity.items())
                out.append((did, r.share_id, caps))
            else:
                out.append((did, None, ()))
        return tuple(out)

    def _apply(self, contribution: tuple[Any, ...], sign: int) -> None:
        t = self._tracked
        for did, share, caps in contribution:
            if share is None:
                n = t.devices.get(did, 0) + sign
                pid = (did[0], did[1])
                if n:
                    t.devices[did] = n
                    t.pools.setdefault(pid, set()).add(did[2])
                else:
                    t.devices.pop(did, None)
                    names = t.pools.get(pid)
                    if names is not None:
                        names.discard(did[2])
                t.dirty.add(pid)
                continue
            n = t.shared.get((did, share), 0) + sign
            if n:
                t.shared[(did, share)] = n
            else:
                t.shared.pop((did, share), None)
            have = t.capacity.setdefault(did, {})
            for name, q in caps:
                have[name] = have.get(name, Fraction(0)) + sign * q
            if not any(have.values()) and not any(k[0] == did for k in t.shared):
                t.capacity.pop(did, None)

    def _sync_tracked(self) -> None:
        """Bring the devices of the cluster's allocated claims up to date: from the claims
        table's change log (only the claims that changed), or all of them."""
        table = self.handle.cluster.resource_claims
        log = getattr(table, "log", None)
        t = self._tracked
        if (
            log is None
            or t.table is not table
            or t.epoch != getattr(table, "epoch", 0)
            or t.pos > len(log)
        ):
            t.reset(table, getattr(table, "epoch", 0))
            for key, claim in table.items():
                c = self._contribution(claim)
                t.contrib[key] = c
                self._apply(c, +1)
            t.pos = len(log) if log is not None else 0
            return
        if t.pos == len(log):
            return
        for key in set(log[t.pos :]):
            c = self._contribution(table.get(key))
            old = t.contrib.get(key, ())
            if c == old:
                continue
            self._apply(old, -1)
            self._apply(c, +1)
            if c:
                t.contrib[key] = c
            else:
                t.contrib.pop(key, None)
        t.pos = len(log)

    def allocated_state(self) -> AllocatedState:
        """``GatherAllocatedState`` / ``ListAllAllocatedDevices``: the devices of allocated
        claims (as the cluster has them), of assumed ones newer than that, and of in-flight
        allocations.  Kept incrementally: a cycle costs what changed since the last one."""
        from kubesched.dra import AllocatedState

        self._sync_tracked()
        t = self._tracked
        plain = not t.shared and not t.capacity
        use: dict[tuple[str, str], frozenset[Any]] = {}
        devices: set[tuple[str, str, str]] = set()
        if plain:
            # the allocator's per-pool view of what is in use, kept here pool by pool (the
            # pools changed since the last cycle made again); the devices in use read from it
            for pid in t.dirty:
                names = t.pools.get(pid)
                if names:
                    t.frozen[pid] = frozenset(names)
                else:
                    t.frozen.pop(pid, None)
            t.dirty.clear()
            use = dict(t.frozen)
        else:
            devices = set(t.devices)
        shared = set(t.shared)
        capacity = {k: dict(v) for k, v in t.capacity.items()} if t.capacity else {}
        extra: list[ResourceClaim] = list(self.in_flight.values())
        for key in list(self.assumed):
            claim = self.get_claim(*key)
            if claim is not None and claim is not self.handle.cluster.get_resource_claim(*key):
                extra.append(claim)
        for claim in extra:
            for did, share, caps in self._contribution(claim):
                if share is None:
                    if plain:
                        pid = (did[0], did[1])
                        use[pid] = use.get(pid, frozenset()) | {did[2]}
                    else:
                        devices.add(did)
                else:
                    shared.add((did, share))
                    have = capacity.setdefault(did, {})
                    for name, q in caps:
                        have[name] = have.get(name, Fraction(0)) + q
        if not plain:
            return AllocatedState(devices, shared, capacity)
        pool_use = PoolUse.of_pools(use)
        state = AllocatedState(pool_use.dedicated(), shared, capacity)
        if not shared:
            state.pool_use = pool_use
        return state

    def slices(self) -> Sequence[Any]:
        """The cluster's ResourceSlices as one tuple, the same object while none changed (the
        allocator then reuses what it worked out from them)."""
        cluster = self.handle.cluster
        mark: Any = _mark(cluster.resource_slices)
        rules = cluster.device_taint_rules if self.taint_rules else None
        rules_mark: Any = None
        if rules is not None:
            rules_mark = _mark(rules)
            if self._legacy is not None and rules_mark is not None:  # 1.33-1.34: classes too
                classes_mark = _mark(cluster.device_classes)
                rules_mark = None if classes_mark is None else (rules_mark, classes_mark)
            mark = None if mark is None or rules_mark is None else (mark, rules_mark)
        if mark is None or mark != self._slices_mark:
            slices = cluster.list_resource_slices()
            if rules:
                self._slices_cache = self._patched.of(slices, rules, rules_mark, self._legacy)
            else:
                self._slices_cache = tuple(slices)
            self._slices_mark = mark
        return self._slices_cache

    def pod_claims(self, pod: Pod) -> list[ResourceClaim]:
        """The pod's claims in ``spec.resourceClaims`` order (those intentionally not created
        left out); raises :class:`ClaimError`."""
        out: list[ResourceClaim] = []
        ns = pod.metadata.namespace
        for pc in pod.spec.resource_claims:
            must_check_owner = False
            name: str | None
            if pc.resource_claim_name is not None:
                name = pc.resource_claim_name
            elif pc.resource_claim_template_name is not None:
                for st in pod.status.resource_claim_statuses:
                    if st.name == pc.name:
                        name = st.resource_claim_name
                        must_check_owner = True
                        break
                else:
                    raise ClaimError(
                        f'pod "{ns}/{pod.metadata.name}": ResourceClaim not created yet'
                    )
            else:
                raise ClaimError(
                    f'pod "{ns}/{pod.metadata.name}", spec.resourceClaim "{pc.name}": none of the supported fields are set'
                )
            if name is None:
                continue
            claim = self.get_claim(ns, name)
            if claim is None:
                raise ClaimError(f'resourceclaim.resource.k8s.io "{name}" not found')
            if claim.metadata.deletion_timestamp is not None:
                raise ClaimError(f'resourceclaim "{name}" is being deleted')
            if must_check_owner and not controlled_by(claim, pod):
                raise ClaimError(
                    f"ResourceClaim {ns}/{name} was not created for Pod {ns}/{pod.metadata.name} (Pod is not owner)"
                )
            out.append(claim)
        return out


def schedulable_after_claim_change(
    tracker: ClaimTracker, pod: Pod, old: Any, new: Any
) -> QueueingHint:
    """``isSchedulableAfterClaimChange``."""
    from kubesched.framework import QueueingHint

    if getattr(new, "kind", None) != "ResourceClaim":
        return QueueingHint.QUEUE
    try:
        claims = tracker.pod_claims(pod)
    except ClaimError:
        return QueueingHint.QUEUE_SKIP
    uses = any(c.metadata.uid == new.metadata.uid for c in claims)
    if old is not None and old.status.allocation is not None and new.status.allocation is None:
        return QueueingHint.QUEUE  # deallocated: devices freed for other pods
    if not uses:
        return QueueingHint.QUEUE_SKIP
    if old is None:
        return QueueingHint.QUEUE
    if old.status == new.status:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def schedulable_after_pod_change(
    tracker: ClaimTracker, pod: Pod, old: Any, new: Any
) -> QueueingHint:
    """``isSchedulableAfterPodChange``: the pod itself got its generated claims."""
    from kubesched.framework import QueueingHint

    if getattr(new, "kind", "Pod") != "Pod" or new is None:
        return QueueingHint.QUEUE
    if pod.metadata.uid != new.metadata.uid:
        return QueueingHint.QUEUE_SKIP
    try:
        tracker.pod_claims(new)
    except ClaimError:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def filter_stop(handle: Handle, timeout: float) -> Callable[[], str | None]:
    """``context.WithTimeout(filterTimeout)`` on the transport's clock, started at the
    search's first check (after 1024 steps: most searches end before, and never read the
    clock)."""
    deadline: list[float] = []
    clock: list[Callable[[], float]] = []

    def stop() -> str | None:
        if not clock:
            clock.append(handle.wall_clock if handle.wall_clock() else _time.monotonic)
            deadline.append(clock[0]() + timeout)
            return None
        return "context deadline exceeded" if clock[0]() >= deadline[0] else None

    return stop


class BindingConditions:
    """Binding conditions (DRADeviceBindingConditions with DRAResourceClaimDeviceStatus):
    whether a claim's devices are ready, failed, or past ``bindingTimeout``."""

    def __init__(
        self, handle: Handle, tracker: ClaimTracker, enabled: bool, timeout: float
    ) -> None:
        self.handle = handle
        self.tracker = tracker
        self.binding_conditions = enabled
        self.binding_timeout = timeout

    def is_claim_ready_for_binding(self, claim: ResourceClaim) -> bool:
        """``isClaimReadyForBinding``: raises ClaimError when a failure condition is True."""
        alloc = claim.status.allocation
        if alloc is None:
            return False
        for r in alloc.devices.results:
            if not r.binding_conditions:
                continue
            dev = next(
                (
                    d
                    for d in claim.status.devices
                    if (d.driver, d.pool, d.device) == (r.driver, r.pool, r.device)
                ),
                None,
            )
            if dev is None:
                return False
            conds = {c.type: c for c in dev.conditions}
            for name in r.binding_failure_conditions:
                c = conds.get(name)
                if c is not None and c.status == "True":
                    raise ClaimError(
                        f'claim {claim.metadata.name} binding failed: reason={c.reason}, message="{c.message}"'
                    )
            for name in r.binding_conditions:
                c = conds.get(name)
                if c is None or c.status != "True":
                    return False
        return True

    def is_claim_timeout(self, claim: ResourceClaim) -> bool:
        """``isClaimTimeout``: allocated with binding conditions longer than bindingTimeout."""
        alloc = claim.status.allocation
        if not self.binding_conditions or alloc is None or not alloc.allocation_timestamp:
            return False
        from kubesched.api import parse_time_ns

        since = (parse_time_ns(alloc.allocation_timestamp) or 0) / 1e9
        if any(r.binding_conditions for r in alloc.devices.results):
            return bool(since + self.binding_timeout < self.handle.wall_clock())
        return False

    def _has_binding_conditions(self, claims: list[ResourceClaim]) -> bool:
        for claim in claims:
            alloc = claim.status.allocation
            if alloc is not None and any(r.binding_conditions for r in alloc.devices.results):
                return True
        return False

    def _pod_ready_for_binding(self, claims: list[ResourceClaim]) -> bool:
        for i, claim in enumerate(claims):
            latest = self.tracker.get_claim(*key_of(claim))
            if latest is None:
                raise ClaimError(f'resourceclaim.resource.k8s.io "{claim.metadata.name}" not found')
            claims[i] = latest
            if not self.is_claim_ready_for_binding(latest):
                if self.is_claim_timeout(latest):
                    raise ClaimError(f"claim {latest.metadata.name} binding timeout")
                return False
        return True

    async def bind_claim(
        self, claim: ResourceClaim, allocation: AllocationResult | None, pod: Pod
    ) -> ResourceClaim:
        """``bindClaim``: finalizer, allocation and reservation written; the result assumed.
        A conflict (another pod's PreBind wrote the shared claim first) is retried on the
        latest claim, as upstream's ``retry.RetryOnConflict(retry.DefaultRetry, ...)``: 5
        tries, 10 ms apart."""
        from kubesched.framework import ConflictError

        try:
            for attempt in range(_CONFLICT_RETRIES):
                latest = self.tracker.get_claim(*key_of(claim)) or claim
                try:
                    return await self._bind_once(claim, latest, allocation, pod)
                except ConflictError:
                    if attempt == _CONFLICT_RETRIES - 1:
                        raise
                    await self.handle.park_until(self.handle.now() + _CONFLICT_BACKOFF)
            raise AssertionError("unreachable")
        finally:
            if allocation is not None:
                self.tracker.in_flight.pop(claim.metadata.uid, None)

    async def _bind_once(
        self,
        claim: ResourceClaim,
        latest: ResourceClaim,
        allocation: AllocationResult | None,
        pod: Pod,
    ) -> ResourceClaim:
        from kubesched.api import FINALIZER, ResourceClaimConsumerReference

        client = self.handle.client
        modified = False
        try:
            if latest.metadata.deletion_timestamp is not None:
                raise ClaimError(
                    f"claim {claim.metadata.namespace}/{claim.metadata.name} got deleted in the meantime"
                )
            if allocation is not None:
                if latest.status.allocation is not None:
                    raise ClaimError(
                        f"claim {claim.metadata.namespace}/{claim.metadata.name} got allocated elsewhere in the meantime"
                    )
                if FINALIZER not in latest.metadata.finalizers:
                    latest = await client.update_resource_claim(
                        replace(
                            latest,
                            metadata=replace(
                                latest.metadata, finalizers=[*latest.metadata.finalizers, FINALIZER]
                            ),
                        )
                    )
                latest = replace(latest, status=replace(latest.status, allocation=allocation))
            ref = ResourceClaimConsumerReference(
                resource="pods", name=pod.metadata.name, uid=pod.metadata.uid
            )
            status = replace(latest.status, reserved_for=[*latest.status.reserved_for, ref])
            if (
                self.binding_conditions
                and status.allocation is not None
                and status.allocation.allocation_timestamp is None
            ):
                stamp = format_time(self.handle.wall_clock())
                status = replace(
                    status, allocation=replace(status.allocation, allocation_timestamp=stamp)
                )
            updated = await client.update_resource_claim_status(replace(latest, status=status))
            modified = True
            return updated
        finally:
            if modified:
                self.tracker.assumed[key_of(updated)] = updated


FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize


def compute_score(claims: Sequence[ResourceClaim], results: Sequence[AllocationResult]) -> int:
    """``computeScore`` (v1.35+ dynamicresources.go): for each claim, each prioritized-list
    request scores 8 minus the index of the subrequest allocated.  As upstream, the node's
    results are indexed by the claim's position among all the pod's claims (an error when
    there are fewer results than claims)."""
    score = 0
    for i, claim in enumerate(claims):
        if i >= len(results):
            raise ClaimError(
                f"number of allocations {len(results)} is smaller than number of claims"
            )
        allocated = {
            r.request for r in results[i].devices.results if len(r.request.split("/")) == 2
        }
        for req in claim.spec.devices.requests:
            if req.exactly is not None:
                continue
            for j, sub in enumerate(req.first_available):
                if f"{req.name}/{sub.name}" in allocated:
                    score += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - j
    return score


def check_class(cluster: Any, class_name: str, request: str) -> Status | None:
    """``validateDeviceClass``: a missing class keeps the pod waiting for a DeviceClass event."""
    if not class_name:
        return Status.as_error(f"request {request}: unsupported request type")
    if cluster.get_device_class(class_name) is None:
        return Status.unresolvable(f"request {request}: device class {class_name} does not exist")
    return None
