"""The structured allocator: which devices a node can give a pod's claims.

k8s.io/dynamic-resource-allocation ``structured/`` (v0.36.2 for 1.36, v0.35.x and v0.34.x for
those minors).  ``allocator.go`` ``NewAllocator`` picks the first variant whose supported
features cover the enabled ones: "stable" (AdminAccess, PrioritizedList, PartitionableDevices,
DeviceTaints) at the 1.34–1.35 defaults, "incubating" (plus DeviceBindingAndStatus and
ConsumableCapacity) at 1.36's; "experimental" (plus ListTypeAttributes) with
DRAListTypeAttributes, whose constraints compare list attributes as sets.  The variants
differ in pool order (see ``_pools``; experimental orders as incubating) and in that.

The search (``allocateOne``): claims, then their requests, then each request's devices, in
order; for a device slot, pools → slices → devices first-fit, skipping devices in use (by
allocated claims or earlier slots), not selected by the class and request CEL selectors, on
another node (per-device node selection), over their consumable capacity, tainted without a
toleration, over the pool's shared counters, or breaking a ``matchAttribute`` /
``distinctAttribute`` constraint; on a dead end, undo the last choice and go on with the next
device (backtracking).  ``All`` requests take every matching device found up front;
``firstAvailable`` tries its subrequests in order, and a subrequest that would make the claim
exceed 32 results is skipped without trying other combinations (upstream's
``errAllocationResultMaxSizeExceeded``).  A device with ``allowMultipleAllocations`` (with
DRAConsumableCapacity) is shared: each allocation takes a share of its capacity and a new
share ID.

``allocate`` returns the results (one per claim, as ``AllocationResult``), or None when this
node cannot satisfy the claims; it raises :class:`AllocationError` with upstream's text for a
broken request or a CEL runtime error, :class:`FailedOnNode` when only invalid pools stood in
the way.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api._dra import (
    AllocationResult,
    Device,
    DeviceClass,
    DeviceRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.api._objects import Node
from kubesched.api._resources import parse_quantity
from kubesched.config._versions import Version
from kubesched.dra import _memo
from kubesched.dra._capacity import UndefinedCapacity, consumed_from_request, request_fits
from kubesched.dra._cel import CelFeatures
from kubesched.dra._constraints import Constraint, taint_prevents_allocation
from kubesched.dra._pools import Pool, gather_pools, node_matches, slice_key
from kubesched.dra._results import AllocationError, DeviceID, Request, Result
from kubesched.dra._selection import Selection

ALLOCATION_RESULTS_MAX_SIZE = 32  # resourceapi.AllocationResultsMaxSize
_TOKENS: dict[tuple[object, ...], int] = {}  # the slices' versions -> a number naming them
_TOKEN_NUMBERS = itertools.count()


def _token(versions: tuple[object, ...]) -> int:
    """A number naming these slice versions, never reused (pools and outcomes are kept under
    it)."""
    number = _TOKENS.get(versions)
    if number is None:
        if len(_TOKENS) >= 10_000:
            _TOKENS.clear()
        number = _TOKENS[versions] = next(_TOKEN_NUMBERS)
    return number


_START = (0, 0, 0)
# id(tuple of slices) -> (the tuple, slices by node, slices for all nodes, token)
_SLICE_SETS: dict[int, tuple[Any, dict[str, list[ResourceSlice]], list[ResourceSlice], int | None]] = {}


class _MaxSizeExceeded(Exception):
    """``errAllocationResultMaxSizeExceeded``."""


class FailedOnNode(AllocationError):
    """``ErrFailedAllocationOnNode``: this node failed for a reason of its own (invalid pools)."""


class Aborted(AllocationError):
    """The caller's ``stop`` said to stop (upstream: the context's deadline, ``filterTimeout``)."""


@dataclass(frozen=True)
class AllocatorFeatures:
    """The DRA gates the allocator reads (``internal.Features``)."""

    admin_access: bool = False
    prioritized_list: bool = False
    partitionable_devices: bool = False
    device_taints: bool = False
    binding_conditions: bool = False  # DRADeviceBindingConditions + DRAResourceClaimDeviceStatus
    consumable_capacity: bool = False
    list_type_attributes: bool = False

    @property
    def variant(self) -> str:
        """allocator.go ``availableAllocators``: the first whose features cover these."""
        if not (self.binding_conditions or self.consumable_capacity or self.list_type_attributes):
            return "stable"
        if not self.list_type_attributes:
            return "incubating"
        return "experimental"


@dataclass
class AllocatedState:
    """Devices in use (``schedulerapi.AllocatedState``): dedicated ones, shares of shared
    ones, and the capacity the shares consume, from allocated and in-flight claims."""

    devices: AbstractSet[DeviceID] = field(default_factory=set)
    shared: set[tuple[DeviceID, str]] = field(default_factory=set)
    capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)
    pool_use: _memo.PoolUse | None = field(default=None, compare=False)
    """What of each pool is in use, as :class:`_memo.PoolUse` says it, when the caller keeps
    it up to date itself (else the allocator works it out from the sets above)."""

    def is_allocated(self, did: DeviceID) -> bool:
        """``IsDeviceAllocated``."""
        return did in self.devices or did in self.capacity or any(s[0] == did for s in self.shared)


def claim_ref(claim: ResourceClaim) -> str:
    """``klog.KObj(claim)``."""
    meta = claim.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


class Allocator:
    """One allocator per scheduling cycle: the slices, classes and devices in use are fixed;
    :meth:`allocate` runs per node.  Per-device CEL inputs and selector verdicts are kept
    across cycles, keyed by the slice's version."""

    def __init__(
        self,
        features: AllocatorFeatures,
        allocated: AllocatedState | set[DeviceID] | frozenset[DeviceID],
        classes: Mapping[str, DeviceClass],
        slices: Sequence[ResourceSlice],
        *,
        version: Version = Version(1, 36),
        rng: random.Random | None = None,
        variant: str | None = None,
        share_id: Callable[[], str] | None = None,
    ) -> None:
        self.features = features
        self.variant = variant or features.variant
        self.state = (
            allocated if isinstance(allocated, AllocatedState) else AllocatedState(set(allocated))
        )
        self.classes = classes
        self.slices = list(slices)
        self.rng = rng
        self.share_id = share_id or (lambda: str(uuid.uuid4()))
        self.selection = Selection(
            CelFeatures(
                version=version,
                consumable_capacity=features.consumable_capacity,
                list_type_attributes=features.list_type_attributes,
            )
        )
        seen = _SLICE_SETS.get(id(slices))
        if seen is not None and seen[0] is slices:
            # the same tuple of slices as an earlier allocator (a caller that keeps it while no
            # slice changes): its partition by node and its token are known
            self.on_node, self.shared, token = seen[1], seen[2], seen[3]
        else:
            self.on_node = {}
            self.shared = []
            for s in self.slices:
                if s.spec.node_name:
                    self.on_node.setdefault(s.spec.node_name, []).append(s)
                else:
                    self.shared.append(s)
            stored = all(s.metadata.uid and s.metadata.resource_version for s in self.slices)
            token = _token(tuple(slice_key(s) for s in self.slices)) if stored else None
            if isinstance(slices, tuple):
                if len(_SLICE_SETS) > 64:
                    _SLICE_SETS.clear()
                _SLICE_SETS[id(slices)] = (slices, self.on_node, self.shared, token)
        self.available_counters: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}
        # per claim (by identity, checked): its validated requests; per device and request:
        # whether the class and request select it (``deviceMatchesRequest``, kept across nodes)
        self.requests: dict[tuple[int, int], tuple[ResourceClaim, list[list[Request]]]] = {}
        self.matches: dict[tuple[object, ...], bool] = {}
        self.token = token
        self.memo_base = _memo.base_id(
            (self.token, features, self.variant, version, _memo.classes_signature(classes.values()))
        )
        self.claim_signatures = _memo.ClaimSignatures()
        pools_key = (token, features.partitionable_devices, self.variant)
        if len(_memo.POOLS_KEYS) > 10_000:
            _memo.POOLS_KEYS.clear()
        self.pools_key = _memo.POOLS_KEYS.setdefault(pools_key, pools_key)
        self.pool_use = self.state.pool_use or _memo.PoolUse(
            self.state.devices, self.state.shared, self.state.capacity
        )

    def allocate(
        self,
        node: Node,
        claims: Sequence[ResourceClaim],
        stop: Callable[[], str | None] | None = None,
    ) -> list[AllocationResult] | None:
        """Allocate ``claims`` on ``node`` (upstream's ``Allocate``).  ``stop`` is asked every
        1024 steps of the search; a reason it returns (e.g. "context deadline exceeded") ends
        the search with :class:`Aborted` ("filter operation aborted: <reason>", as upstream's
        ``allocateOne`` reports a cancelled context)."""
        found = self.allocate_lazily(node, claims, stop)
        return None if found is None else found()

    def allocate_lazily(
        self,
        node: Node,
        claims: Sequence[ResourceClaim],
        stop: Callable[[], str | None] | None = None,
    ) -> Callable[[], list[AllocationResult]] | None:
        """:meth:`allocate`, with the ``AllocationResult``s built only when the returned
        function is called (a scheduler filters many nodes and reserves on one)."""
        claims = list(claims)
        (found,) = self.allocate_nodes((node,), claims, None if stop is None else lambda: stop)
        if isinstance(found, AllocationError):
            raise found
        if found is None:
            return None
        return _memo.Build(claims, found, node.metadata.name, self.features.binding_conditions)

    def results(
        self, node_name: str, claims: Sequence[ResourceClaim], found: _memo.Found
    ) -> list[AllocationResult]:
        """The ``AllocationResult``s (one per claim) of what :meth:`allocate_nodes` found on
        node ``node_name`` for ``claims``."""
        return _memo.Build(list(claims), found, node_name, self.features.binding_conditions)()

    def allocate_nodes(
        self,
        nodes: Sequence[Node],
        claims: Sequence[ResourceClaim],
        new_stop: Callable[[], Callable[[], str | None] | None] | None = None,
    ) -> list[_memo.Found | AllocationError | None]:
        """:meth:`allocate` for each of ``nodes`` in order: per node what it found (for
        :meth:`results`), None (no allocation), or the :class:`AllocationError` it raised.
        What does not depend on the node (the claims' signatures, the fixed inputs) is worked
        out once; ``new_stop`` gives the ``stop`` of each search that runs."""
        claims = list(claims)
        out: list[_memo.Found | AllocationError | None] = []
        if self.token is None:
            for node in nodes:
                run = _Run(self, node, claims)
                run.stop = new_stop() if new_stop is not None else None
                try:
                    run.gather()
                    out.append(run.search())
                except AllocationError as e:
                    out.append(e)
            return out
        prefix = _memo.base_id((self.memo_base, *(self.claim_signatures.of(c) for c in claims)))
        use_of, none = self.pool_use.get, self.pool_use.none
        unused = itertools.repeat(none)
        kept = _memo.NODE_ENTRIES.get if self.variant != "stable" else _memo.NO_ENTRY.get
        pools_key = self.pools_key
        for node in nodes:
            entry = kept(id(node))
            if entry is None or entry.node is not node or entry.pools_key is not pools_key:
                entry = self._pools_for(node)
            # the use of the node's pools: of its one pool (the usual case), or a tuple
            ids = entry.pool_ids
            uses = use_of(ids[0], none) if len(ids) == 1 else tuple(map(use_of, ids, unused))
            if entry.prefix == prefix and (entry.uses is uses or entry.uses == uses):
                # what this node decided last time, for the same claims and use of its pools
                outcome = entry.outcome
            else:
                key = (prefix, entry.node_key, uses)
                known, outcome = _memo.lookup(key)
                if not known:
                    run = _Run(self, node, claims)
                    run.pools = entry.pools
                    run.stop = new_stop() if new_stop is not None else None
                    try:
                        outcome = run.search()
                    except AllocationError as e:
                        out.append(e)
                        continue
                    _memo.remember(key, outcome)
                entry.prefix, entry.uses, entry.outcome = prefix, uses, outcome
            out.append(outcome)
        return out

    def _pools_for(self, node: Node) -> _memo.NodeEntry:
        """The node's pools (``GatherPools``), in the variant's order; kept per Node object
        while the slices are the same, except in the stable variant, whose order is drawn
        from the random source at every call."""
        incubating = self.variant != "stable"
        if incubating:
            hit = _memo.NODE_ENTRIES.get(id(node))
            if hit is not None and hit.node is node and hit.pools_key is self.pools_key:
                return hit
        slices = self.on_node.get(node.metadata.name, []) + self.shared
        pools = gather_pools(
            slices,
            node,
            self.slices,
            partitionable=self.features.partitionable_devices,
            incubating=incubating,
            rng=self.rng,
            token=self.token,
        )
        entry = _memo.NodeEntry(node, self.pools_key, pools)
        if incubating and self.token is not None:
            if len(_memo.NODE_ENTRIES) > 100_000:
                _memo.NODE_ENTRIES.clear()
            _memo.NODE_ENTRIES[id(node)] = entry
        return entry

    def counters_of(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        """The pool's shared counters less what allocated devices consume (per allocator, as
        upstream's ``availableCounters``)."""
        have = self.available_counters.get(pool.id)
        if have is None:
            have = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            for s in (*pool.slices, *pool.other_slices):
                for d in s.spec.devices:
                    if not self.state.is_allocated((s.spec.driver, s.spec.pool.name, d.name)):
                        continue
                    for use in d.consumes_counters:
                        cs = have.get(use.counter_set)
                        if cs is None:
                            continue
                        for name, c in use.counters.items():
                            if name in cs:
                                cs[name] -= parse_quantity(c.value)
            self.available_counters[pool.id] = have
        return have


def _requests_of(run: _Run, ci: int, claim: ResourceClaim) -> list[list[Request]]:
    """Per request, its alternatives (one, or the subrequests), validated
    (``validateDeviceRequest``); raises the claim's errors."""
    f = run.f
    out: list[list[Request]] = []
    for request in claim.spec.devices.requests:
        if request.first_available:
            if not f.prioritized_list:
                raise AllocationError(
                    f"claim {claim_ref(claim)}, request {request.name}: has subrequests, but the "
                    "DRAPrioritizedList feature is disabled"
                )
            if not f.consumable_capacity:
                for sub in request.first_available:
                    if sub.capacity is not None:
                        raise AllocationError(
                            f"claim {claim_ref(claim)}, subrequest {sub.name}: has capacity requests, "
                            "but the DRAConsumableCapacity feature is disabled"
                        )
            alts: list[Request] = []
            for sub in request.first_available:
                req = Request(
                    sub.name,
                    request.name,
                    sub.device_class_name,
                    sub.allocation_mode or "ExactCount",
                    sub.count,
                    False,
                    sub.selectors,
                    sub.tolerations,
                    capacity=sub.capacity,
                )
                alts.append(run.validate(ci, req, None, (ci, len(out), len(alts))))
            out.append(alts)
            continue
        ex = _exactly(claim, request)
        if ex.capacity is not None and not f.consumable_capacity:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {request.name}: has capacity requests, but the "
                "DRAConsumableCapacity feature is disabled"
            )
        req = Request(
            request.name,
            "",
            ex.device_class_name,
            ex.allocation_mode or "ExactCount",
            ex.count,
            bool(ex.admin_access),
            ex.selectors,
            ex.tolerations,
            capacity=ex.capacity,
        )
        out.append([run.validate(ci, req, ex.admin_access, (ci, len(out), 0))])
    return out


def _exactly(claim: ResourceClaim, request: DeviceRequest) -> ExactDeviceRequest:
    if request.exactly is None:
        raise AllocationError(
            f"claim {claim_ref(claim)}, request {request.name}: missing device class name "
            "(unsupported request type?)"
        )
    return request.exactly


def _constraints_of(claim: ResourceClaim, lists: bool) -> list[Constraint]:
    out = []
    for i, c in enumerate(claim.spec.devices.constraints):
        if c.match_attribute is not None:
            out.append(Constraint(c.requests, c.match_attribute, False, lists))
        elif c.distinct_attribute is not None:
            out.append(Constraint(c.requests, c.distinct_attribute, True, lists))
        else:
            raise AllocationError(
                f"claim {claim_ref(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
            )
    return out


class _Run:
    """One ``Allocate`` call: the search state for one node."""

    def __init__(self, a: Allocator, node: Node, claims: list[ResourceClaim]) -> None:
        self.a = a
        self.f = a.features
        self.node = node
        self.claims = claims
        self.requests: list[list[list[Request]]] = []  # claim -> request -> alternatives
        self.constraints: list[list[Constraint]] = []
        self.results: list[list[Result]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.consumed: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}
        self.matches = a.matches
        self.chosen_sub: dict[tuple[int, int], int] = {}
        self.invocations = 0
        self.stop: Callable[[], str | None] | None = None
        self.pools: list[Pool] = []

    def gather(self) -> None:
        """The node's pools (``GatherPools``)."""
        self.pools = self.a._pools_for(self.node).pools

    def search(self) -> _memo.Outcome:
        """Validate the claims and search; per claim, the (sub)requests taken and the
        devices, or None when the node cannot satisfy them."""
        for ci, claim in enumerate(self.claims):
            per_claim = self._requests(ci, claim)
            min_devices = sum(min(r.num_devices for r in alts) for alts in per_claim)
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim_ref(claim)}: number of requested devices {min_devices} exceeds the "
                    f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            self.requests.append(per_claim)
            self.constraints.append(_constraints_of(claim, self.f.list_type_attributes))
        if not self._one(0, 0, 0, 0, False, _START):
            if any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        return [
            (
                [
                    alts[self.chosen_sub.get((ci, ri), 0)]
                    for ri, alts in enumerate(self.requests[ci])
                ],
                list(self.results[ci]),
            )
            for ci in range(len(self.claims))
        ]

    # ---- requests ---------------------------------------------------------------------
    def _requests(self, ci: int, claim: ResourceClaim) -> list[list[Request]]:
        """The claim's requests, validated; kept for the allocator's next node when no request
        depends on the node's devices (``All``)."""
        key = (id(claim), ci)
        hit = self.a.requests.get(key)
        if hit is not None and hit[0] is claim:
            return hit[1]
        per_claim = _requests_of(self, ci, claim)
        if all(r.mode != "All" for alts in per_claim for r in alts):
            self.a.requests[key] = (claim, per_claim)
        return per_claim

    def validate(
        self, ci: int, req: Request, admin_access: bool | None, key: tuple[int, int, int]
    ) -> Request:
        """``validateDeviceRequest``: class, mode, count; for ``All``, the devices."""
        claim = self.claims[ci]
        for i, sel in enumerate(req.selectors):
            if sel.cel is None:
                raise AllocationError(
                    f"claim {claim_ref(claim)}, request {req.name}, selector #{i}: CEL expression empty "
                    "(unsupported selector type?)"
                )
        if not self.f.admin_access and admin_access is not None:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {req.name}: admin access is requested, but the "
                "feature is disabled"
            )
        if not req.class_name:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {req.name}: missing device class name "
                "(unsupported request type?)"
            )
        cls = self.a.classes.get(req.class_name)
        if cls is None:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {req.name}: could not retrieve device class "
                f'{req.class_name}: deviceclass.resource.k8s.io "{req.class_name}" not found'
            )
        req.cls = cls
        req.key = key
        if req.mode == "ExactCount":
            req.num_devices = req.count
        elif req.mode == "All":
            for pool in self.pools:
                state = "being updated" if pool.incomplete else "invalid" if pool.invalid else ""
                if state:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {req.name}: asks for all devices, but "
                        f"resource pool {pool.name()} is currently {state}"
                    )
                for s in pool.slices:
                    for d in s.spec.devices:
                        if self.selectable(ci, req, s, d) and self._capacity_fits(req, pool, d):
                            req.all_devices.append((d, s, pool))
            req.num_devices = len(req.all_devices)
        else:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {req.name}: unsupported count mode {req.mode}"
            )
        return req

    def selectable(self, ci: int, req: Request, s: ResourceSlice, d: Device) -> bool:
        """``isSelectable``: binding conditions allowed, selectors, per-device node."""
        if not self.f.binding_conditions and d.binding_conditions:
            return False
        did = (s.spec.driver, s.spec.pool.name, d.name)
        mkey = (
            did,
            req.class_name,
            req.selector_key,
            ci,
            self.node.metadata.name if s.spec.per_device_node_selection else "",
        )
        hit = self.matches.get(mkey)
        if hit is not None:
            return hit
        sel = self.a.selection
        ok = req.cls is None or sel.matches(
            f"class {req.cls.metadata.name}", s, d, req.cls.spec.selectors
        )
        ok = ok and sel.matches(f"claim {claim_ref(self.claims[ci])}", s, d, req.selectors)
        if ok and s.spec.per_device_node_selection:
            ok = node_matches(self.node, d.node_name or "", bool(d.all_nodes), d.node_selector)
        self.matches[mkey] = ok
        return ok

    def _capacity_fits(self, req: Request, pool: Pool, d: Device) -> bool:
        """``CmpRequestOverCapacity`` (with DRAConsumableCapacity); an undefined capacity
        only skips the device."""
        if not self.f.consumable_capacity:
            return True
        did = (pool.id[0], pool.id[1], d.name)
        try:
            return request_fits(
                self.a.state.capacity.get(did, {}),
                req.capacity,
                d.capacity,
                self.allocating_capacity.get(did, {}),
            )
        except UndefinedCapacity:
            return False

    # ---- search -----------------------------------------------------------------------
    def _one(
        self, ci: int, ri: int, si: int, n: int, allocate_sub: bool, start: tuple[int, int, int]
    ) -> bool:
        """``allocateOne`` for device ``n`` of (sub)request ``si`` of request ``ri`` of claim
        ``ci``; raises :class:`_MaxSizeExceeded` as upstream returns
        ``errAllocationResultMaxSizeExceeded``, which makes the caller try its next subrequest
        instead of every other combination of devices."""
        self.invocations += 1
        if self.stop is not None and not self.invocations & 1023:
            reason = self.stop()
            if reason:
                raise Aborted(f"filter operation aborted: {reason}")
        if ci >= len(self.claims):
            return True
        if ri >= len(self.requests[ci]):
            try:
                return self._one(ci + 1, 0, 0, 0, False, _START)
            except _MaxSizeExceeded:
                return False
        alts = self.requests[ci][ri]
        if not allocate_sub and alts[0].parent:
            return self._first_available(ci, ri, n, alts)
        req = alts[si]
        if req.mode == "All" and not req.all_devices:
            return False
        if n >= req.num_devices:
            return self._one(ci, ri + 1, 0, 0, False, _START)
        if len(self.results[ci]) + req.num_devices - n > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if req.mode == "All":
            d, s, pool = req.all_devices[n]
            return self._try(ci, ri, si, n, allocate_sub, req, d, s, pool, True, _START)
        p0, s0, d0 = start
        for pi in range(p0, len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            for sli in range(s0 if pi == p0 else 0, len(pool.slices)):
                s = pool.slices[sli]
                devices = s.spec.devices
                for di in range(d0 if (pi == p0 and sli == s0) else 0, len(devices)):
                    d = devices[di]
                    did = (pool.id[0], pool.id[1], d.name)
                    if req.admin_access:
                        if ci in self.allocating.get(did, ()):
                            continue
                    elif self._in_use(did):
                        continue
                    if not self.selectable(ci, req, s, d) or not self._capacity_fits(req, pool, d):
                        continue
                    if self._try(
                        ci, ri, si, n, allocate_sub, req, d, s, pool, False, (pi, sli, di + 1)
                    ):
                        return True
        return False

    def _first_available(self, ci: int, ri: int, n: int, alts: list[Request]) -> bool:
        all_exceeded = True
        for sub in range(len(alts)):
            try:
                done = self._one(ci, ri, sub, n, True, _START)
            except _MaxSizeExceeded:
                continue
            all_exceeded = False
            if done:
                self.chosen_sub[(ci, ri)] = sub
                return True
        if all_exceeded:
            raise _MaxSizeExceeded
        return False

    def _try(
        self,
        ci: int,
        ri: int,
        si: int,
        n: int,
        allocate_sub: bool,
        req: Request,
        d: Device,
        s: ResourceSlice,
        pool: Pool,
        must: bool,
        next_start: tuple[int, int, int],
    ) -> bool:
        """Take the device and go on with the next slot; undo on a dead end."""
        undo = self._take(ci, req, d, s, pool, must)
        if undo is None:
            return False
        try:
            done = self._one(ci, ri, si, n + 1, allocate_sub, next_start)
        except BaseException:
            undo()
            raise
        if not done:
            undo()
        return done

    def _in_use(self, did: DeviceID) -> bool:
        """``deviceInUse``."""
        return did in self.a.state.devices or bool(self.allocating.get(did))

    def _take(
        self, ci: int, req: Request, d: Device, s: ResourceSlice, pool: Pool, must: bool
    ) -> Callable[[], None] | None:
        """``allocateDevice``: the undo function, or None when the device cannot be taken."""
        did = (pool.id[0], pool.id[1], d.name)
        multi = self.f.consumable_capacity and bool(d.allow_multiple_allocations)
        if not multi and req.admin_access and ci in self.allocating.get(did, ()):
            return None
        if not req.admin_access and self._in_use(did):
            return None
        if not self.f.partitionable_devices and d.consumes_counters:
            return None
        skip_counters = multi and (did in self.a.state.capacity or did in self.allocating_capacity)
        counted = bool(d.consumes_counters) and not skip_counters
        if counted and not self._counters_fit(pool, d):
            return None
        if self.f.device_taints and taint_prevents_allocation(d, req.tolerations):
            # upstream leaves the counters counted here; the run's counters for this pool then
            # only grow, which can only refuse more (kept as upstream does)
            return None
        if not self._capacity_fits(req, pool, d):
            # upstream checks this after adding the constraints and returns without removing
            # them; checked first here, with the same verdict and no residue
            return None
        base, sub = (req.parent, req.name) if req.parent else (req.name, "")
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, d, did[0]):
                if must:
                    raise AllocationError(
                        f"claim {claim_ref(self.claims[ci])}, request {req.name}: cannot add device "
                        f"{did[0]}/{did[1]}/{did[2]} because a claim constraint would not be satisfied"
                    )
                for e in range(i):
                    cons[e].remove(base, sub)
                return None
        holders = self.allocating.setdefault(did, set())
        if not multi:
            holders.add(ci)
        consumed: dict[str, tuple[Fraction, str]] = {}
        share: str | None = None
        if multi:
            consumed = consumed_from_request(req.capacity, d.capacity)
            share = self.a.share_id()
            have = self.allocating_capacity.setdefault(did, {})
            for name, (value, _) in consumed.items():
                have[name] = have.get(name, Fraction(0)) + value
        self.results[ci].append(
            Result(
                req,
                did,
                d,
                s,
                share_id=share,
                consumed={k: text for k, (_, text) in consumed.items()},
            )
        )

        def undo() -> None:
            for c in cons:
                c.remove(base, sub)
            holders.discard(ci)
            if multi:
                have = self.allocating_capacity[did]
                for name, (value, _) in consumed.items():
                    have[name] -= value
                if all(v == 0 for v in have.values()):
                    del self.allocating_capacity[did]
            elif self.f.partitionable_devices and d.consumes_counters:
                self._release_counters(pool, d)
            self.results[ci].pop()

        return undo

    # ---- shared counters (partitionable devices) ----------------------------------------
    def _counters_fit(self, pool: Pool, d: Device) -> bool:
        """``checkAvailableCounters``: count the device's consumption; refuse (and uncount) it
        when a counter of the pool would go below zero."""
        available = self.a.counters_of(pool)
        consumed = self.consumed.setdefault(pool.id, {})
        for use in d.consumes_counters:
            cs = consumed.setdefault(use.counter_set, {})
            for name, c in use.counters.items():
                cs[name] = cs.get(name, Fraction(0)) + parse_quantity(c.value)
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for name, value in counters.items():
                if value < used.get(name, Fraction(0)):
                    self._release_counters(pool, d)
                    return False
        return True

    def _release_counters(self, pool: Pool, d: Device) -> None:
        consumed = self.consumed[pool.id]
        for use in d.consumes_counters:
            cs = consumed[use.counter_set]
            for name, c in use.counters.items():
                cs[name] -= parse_quantity(c.value)


def allocator_features(gates: Mapping[str, bool]) -> AllocatorFeatures:
    """The allocator's features from the feature gates in force (k8s v1.36
    pkg/scheduler/framework/plugins/dynamicresources: binding conditions need both
    DRADeviceBindingConditions and DRAResourceClaimDeviceStatus)."""
    return AllocatorFeatures(
        admin_access=gates.get("DRAAdminAccess", False),
        prioritized_list=gates.get("DRAPrioritizedList", False),
        partitionable_devices=gates.get("DRAPartitionableDevices", False),
        device_taints=gates.get("DRADeviceTaints", False),
        binding_conditions=gates.get("DRADeviceBindingConditions", False)
        and gates.get("DRAResourceClaimDeviceStatus", False),
        consumable_capacity=gates.get("DRAConsumableCapacity", False),
        list_type_attributes=gates.get("DRAListTypeAttributes", False),
    )
