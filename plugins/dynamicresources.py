"""DynamicResources: allocate a pod's ResourceClaims (dynamic resource allocation, DRA).

Ported from kubernetes ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``
(v1.36: the plugin with ``filterTimeout``, ``bindingTimeout`` and the ``SignPlugin``), with
``k8s.io/dynamic-resource-allocation`` v0.36.2 ``resourceclaim`` (claim names, ownership) and
the structured allocator of :mod:`kubesched.dra`:

- PreEnqueue: every claim of the pod exists and is not being deleted; a claim from a template
  must be the pod's (``resourceclaim.IsForPod``).  Otherwise UnschedulableAndUnresolvable with
  the reason, and the pod waits for a claim or pod event (no attempt).
- PreFilter: the claims gathered (already allocated ones keep their allocation's node
  selector); a claim whose allocation is in flight for another pod, or a request naming a
  DeviceClass that does not exist, rejects the pod on every node.  One
  :class:`~kubesched.dra.Allocator` per cycle over the devices in use (allocated claims, the
  assumed ones, the in-flight ones).
- Filter: per node, an allocated claim whose node selector does not match →
  ``resourceclaim not available on the node``; the allocator: no result → ``cannot allocate all
  claims``, :class:`~kubesched.dra.Aborted` (``filterTimeout``) → ``timed out trying to allocate
  devices``, invalid pools → their error, a broken request or CEL runtime error → Error.
- PostFilter (before DefaultPreemption): deallocate one allocated claim that was unavailable
  and has no other consumer (``deallocation of ResourceClaim completed``), else ``still not
  schedulable``; a pod without claims: ``no new claims to deallocate`` (versions below).
- Reserve: the node's allocation becomes in flight (another pod sharing the claim waits for it,
  other pods' allocators see its devices as taken); Unreserve drops it and the pod's
  reservation.
- PreBind: the finalizer (an update), then the allocation and ``reservedFor`` (a status
  update), the claim assumed until the cluster's copy catches up; with binding conditions
  (DRADeviceBindingConditions + DRAResourceClaimDeviceStatus), the pod event
  ``BindingConditionsPending`` and a poll every 5 s up to ``bindingTimeout`` (600 s).

Rejections are UnschedulableAndUnresolvable (upstream's ``statusUnschedulable``), so
preemption finds DRA-rejected nodes "not helpful".  Pods without claims take the old path:
PreFilter Skip, no allocator, and PostFilter per version:

- v1.30.6 and v1.31.8 (``len(state.claims) == 0``), v1.34.7 and v1.35.4 and 1.36
  (``state.claims.empty()``): Unschedulable "no new claims to deallocate"; 1.32 as 1.31.
- v1.33.3 (``len(pod.Spec.ResourceClaims) == 0``, kubernetes#129823): Unschedulable without a
  reason.
- In a profile while the gate is off: PreFilter Skip, PostFilter "plugin disabled".

Where kubesched differs: ``filterTimeout`` is measured on the transport's clock
(:meth:`Handle.wall_clock`), which in a simulation is virtual time and does not move while one
Filter runs, so the timeout bites only on a live cluster or when a test's clock says so; the
allocator is asked every 1024 search steps.  Device taint rules are not applied to slices
(the allocator sees the slices' own taints).
"""

from __future__ import annotations

import contextlib
import re
import time as _time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from kubesched.dra import Aborted, AllocationError, FailedOnNode
from kubesched.framework import Code, ConfigError, Status, hookimpl

if TYPE_CHECKING:
    from kubesched.api._dra import AllocationResult, ResourceClaim
    from kubesched.api._objects import Node
    from kubesched.dra import AllocatedState, Allocator
    from kubesched.framework import CycleState, Handle, NodeBatch, NodeInfo, Pod, PostFilterResult
    from kubesched.runtime._events import ClusterEventWithHint, QueueingHint

NAME = "DynamicResources"
STATE_KEY = NAME
MSG_NO_NEW_CLAIMS = "no new claims to deallocate"
MSG_PLUGIN_DISABLED = "plugin disabled"
MSG_STILL_NOT_SCHEDULABLE = "still not schedulable"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_CANNOT_ALLOCATE = "cannot allocate all claims"
MSG_NOT_AVAILABLE = "resourceclaim not available on the node"
MSG_TIMED_OUT = "timed out trying to allocate devices"
MSG_BINDING_TIMEOUT = "device binding timeout"
FILTER_TIMEOUT_DEFAULT = 10.0  # DynamicResourcesArgs.filterTimeout (v1.34+ SetDefaults)
BINDING_TIMEOUT_DEFAULT = 600.0  # config.DynamicResourcesBindingTimeoutDefault
BINDING_POLL_INTERVAL = 5.0  # PreBind's wait.PollUntilContextTimeout interval


def _format_time(seconds: float) -> str:
    """A metav1.Time (RFC 3339, seconds) from Unix seconds."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ClaimError(Exception):
    """A reason the pod cannot use its claims now (``foreachPodResourceClaim``'s errors)."""


def _duration(value: Any, field_name: str) -> float:
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
class _State:
    """``stateData``: the pod's claims (None for a claim intentionally not created), what
    PreFilter learned, and Filter's allocations per node."""

    claims: list[ResourceClaim] = field(default_factory=list)
    selectors: list[Any] = field(default_factory=list)  # per claim: NodeSelectorMatcher | None
    allocator: Allocator | None = None
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, Callable[[], list[AllocationResult]]] = field(default_factory=dict)
    allocations: dict[int, AllocationResult] = field(default_factory=dict)  # set by Reserve

    def to_allocate(self) -> list[tuple[int, ResourceClaim]]:
        return [(i, c) for i, c in enumerate(self.claims) if c.status.allocation is None]


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
    pools: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # dedicated devices per pool
    frozen: dict[tuple[str, str], frozenset[Any]] = field(default_factory=dict)

    def reset(self, table: Any, epoch: int) -> None:
        self.table, self.epoch, self.pos = table, epoch, 0
        self.contrib, self.devices, self.shared, self.capacity = {}, {}, {}, {}
        self.pools, self.frozen = {}, {}


def _key(claim: ResourceClaim) -> tuple[str, str]:
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


def _controlled_by(claim: ResourceClaim, pod: Pod) -> bool:
    """``metav1.IsControlledBy``."""
    return any(ref.controller and ref.uid == pod.metadata.uid for ref in claim.metadata.owner_references)


class DynamicResources:
    """Every extension point of upstream's plugin (see the module)."""

    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        filter_timeout = FILTER_TIMEOUT_DEFAULT
        binding_timeout = BINDING_TIMEOUT_DEFAULT
        if args:
            allowed = {"apiVersion", "kind", "filterTimeout", "bindingTimeout"}
            for key in args:
                if key not in allowed:
                    raise ConfigError(f'strict decoding error: unknown field "{key}"')
            if args.get("filterTimeout") is not None:
                filter_timeout = _duration(args["filterTimeout"], "filterTimeout")
                if filter_timeout < 0:
                    raise ConfigError("filterTimeout: Invalid value: must be zero or positive")
            if args.get("bindingTimeout") is not None:
                binding_timeout = _duration(args["bindingTimeout"], "bindingTimeout")
                if binding_timeout <= 0:
                    raise ConfigError("bindingTimeout: Invalid value: must be positive")
        self.handle: Handle = handle
        gates = handle.feature_gates
        self.enabled = bool(gates.get("DynamicResourceAllocation", False))
        self.filter_timeout = filter_timeout
        self.binding_timeout = binding_timeout
        reasons: tuple[str, ...] = (MSG_NO_NEW_CLAIMS,)
        if not self.enabled:
            reasons = (MSG_PLUGIN_DISABLED,)
        elif handle.emulated_version == (1, 33):
            reasons = ()  # v1.33.3 dynamicresources.go PostFilter, a pod without claims (#129823)
        self._postfilter_reasons = reasons
        # DRASchedulerFilterTimeout: beta (on) from v1.34
        self.use_filter_timeout = bool(
            gates.get("DRASchedulerFilterTimeout", tuple(handle.emulated_version) >= (1, 34))
        )
        self.binding_conditions = bool(
            gates.get("DRADeviceBindingConditions", False) and gates.get("DRAResourceClaimDeviceStatus", False)
        )
        self.consumable_capacity = bool(gates.get("DRAConsumableCapacity", False))
        self.prioritized_list = bool(gates.get("DRAPrioritizedList", False))
        # SharedDRAManager's claim tracker: assumed claims (written by PreBind, newer than the
        # cluster's copy) and in-flight allocations (Reserve → PreBind), by uid
        self.assumed: dict[tuple[str, str], ResourceClaim] = {}
        self.in_flight: dict[str, ResourceClaim] = {}
        self._features: Any = None
        self._tracked = _Tracked()
        self._slices_mark: Any = None
        self._slices_cache: tuple[Any, ...] = ()

    # --- the claim tracker (dra_manager.go) ---------------------------------------------------
    def get_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The latest claim: the assumed one while the cluster's copy is not newer."""
        stored = self.handle.cluster.get_resource_claim(namespace, name)
        assumed = self.assumed.get((namespace, name))
        if assumed is None:
            return stored
        if stored is None or stored.metadata.uid != assumed.metadata.uid or _version(stored) >= _version(assumed):
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
        from kubesched.api._resources import parse_quantity

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
                t.frozen.pop(pid, None)
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
        if log is None or t.table is not table or t.epoch != getattr(table, "epoch", 0) or t.pos > len(log):
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
        from kubesched.dra._memo import PoolUse

        self._sync_tracked()
        t = self._tracked
        state = AllocatedState(
            set(t.devices), set(t.shared), {k: dict(v) for k, v in t.capacity.items()} if t.capacity else {}
        )
        use: dict[tuple[str, str], frozenset[Any]] = {}
        if not t.shared and not t.capacity:
            # the allocator's per-pool view of what is in use, kept here pool by pool
            for pid, names in t.pools.items():
                if pid not in t.frozen:
                    t.frozen[pid] = frozenset(names)
            use = {pid: f for pid, f in t.frozen.items() if f}
        extra: list[ResourceClaim] = list(self.in_flight.values())
        for key in list(self.assumed):
            claim = self.get_claim(*key)
            if claim is not None and claim is not self.handle.cluster.get_resource_claim(*key):
                extra.append(claim)
        for claim in extra:
            for did, share, caps in self._contribution(claim):
                if share is None:
                    state.devices.add(did)
                    if not t.shared and not t.capacity:
                        pid = (did[0], did[1])
                        use[pid] = use.get(pid, frozenset()) | {did[2]}
                else:
                    state.shared.add((did, share))
                    have = state.capacity.setdefault(did, {})
                    for name, q in caps:
                        have[name] = have.get(name, Fraction(0)) + q
        if not t.shared and not t.capacity and not state.shared:
            state.pool_use = PoolUse.of_pools(use)
        return state

    # --- claims of a pod (foreachPodResourceClaim) --------------------------------------------
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
                    raise ClaimError(f'pod "{ns}/{pod.metadata.name}": ResourceClaim not created yet')
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
            if must_check_owner and not _controlled_by(claim, pod):
                raise ClaimError(
                    f"ResourceClaim {ns}/{name} was not created for Pod {ns}/{pod.metadata.name} (Pod is not owner)"
                )
            out.append(claim)
        return out

    # --- EnqueueExtensions ----------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        from kubesched.plugins._helper import queueing_hints_enabled
        from kubesched.runtime._events import ActionType, ClusterEvent, ClusterEventWithHint
        from kubesched.runtime._events import Resource as R

        if not self.enabled:
            return []
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        if not queueing_hints_enabled(self.handle):
            node_actions |= ActionType.UPDATE_NODE_TAINT
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(R.NODE, node_actions)),
            ClusterEventWithHint(ClusterEvent(R.RESOURCE_CLAIM, add_update), self.is_schedulable_after_claim_change),
            # upstream: Pod/UpdatePodGeneratedResourceClaim; kubesched's pod updates that are
            # not labels, tolerations, scale-down or gates are UpdatePodOther
            ClusterEventWithHint(ClusterEvent(R.POD, ActionType.UPDATE_POD_OTHER), self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(R.DEVICE_CLASS, add_update)),
            ClusterEventWithHint(ClusterEvent(R.RESOURCE_SLICE, add_update)),
        ]

    def is_schedulable_after_claim_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """``isSchedulableAfterClaimChange``."""
        from kubesched.runtime._events import QueueingHint

        if getattr(new, "kind", None) != "ResourceClaim":
            return QueueingHint.QUEUE
        try:
            claims = self.pod_claims(pod)
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

    def is_schedulable_after_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """``isSchedulableAfterPodChange``: the pod itself got its generated claims."""
        from kubesched.runtime._events import QueueingHint

        if getattr(new, "kind", "Pod") != "Pod" or new is None:
            return QueueingHint.QUEUE
        if pod.metadata.uid != new.metadata.uid:
            return QueueingHint.QUEUE_SKIP
        try:
            self.pod_claims(new)
        except ClaimError:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    # --- PreEnqueue -----------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_enqueue(self, pod: Pod) -> Status | None:
        if not self.enabled or not pod.spec.resource_claims:
            return None
        try:
            self.pod_claims(pod)
        except ClaimError as e:
            return Status.unresolvable(str(e))
        return None

    # --- PreFilter ------------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if not self.enabled or not pod.spec.resource_claims:
            return Status.skip()
        s = _State()
        state.write(STATE_KEY, s)
        try:
            claims = self.pod_claims(pod)
        except ClaimError as e:
            return Status.unresolvable(str(e))
        if not claims:
            return Status.skip()
        from kubesched.api._helpers import NodeSelectorMatcher

        classes = self.handle.cluster
        to_allocate = 0
        s.selectors = [None] * len(claims)
        for i, claim in enumerate(claims):
            alloc = claim.status.allocation
            if alloc is not None:
                # CanBeReserved is always true in v0.36 (no limit on sharing here)
                if alloc.node_selector is not None:
                    try:
                        s.selectors[i] = NodeSelectorMatcher.parse(alloc.node_selector)
                    except ConfigError as e:
                        return Status.as_error(e)
                continue
            to_allocate += 1
            if claim.metadata.uid in self.in_flight:
                meta = claim.metadata
                return Status.unresolvable(
                    f"resource claim {meta.namespace}/{meta.name} is in the process of being allocated"
                )
            for request in claim.spec.devices.requests:
                if request.exactly is not None:
                    st = self._check_class(request.exactly.device_class_name, request.name, classes)
                    if st is not None:
                        return st
                elif request.first_available:
                    if not self.prioritized_list:
                        meta = claim.metadata
                        return Status.unresolvable(
                            f"resource claim {meta.namespace}/{meta.name}, request {request.name}: has "
                            "subrequests, but the DRAPrioritizedList feature is disabled"
                        )
                    for sub in request.first_available:
                        st = self._check_class(sub.device_class_name, f"{request.name}/{sub.name}", classes)
                        if st is not None:
                            return st
                else:
                    meta = claim.metadata
                    return Status.unresolvable(
                        f"resource claim {meta.namespace}/{meta.name}, request {request.name}: unknown request type"
                    )
        if to_allocate:
            from kubesched.dra import Allocator, allocator_features

            gates = self.handle.feature_gates
            if self._features is None:
                self._features = allocator_features(gates)
            cluster = self.handle.cluster
            s.allocator = Allocator(
                self._features,
                self.allocated_state(),
                {c.metadata.name: c for c in cluster.list_device_classes()},
                self._slices(),
                version=self.handle.emulated_version,
                rng=self.handle.rng,
            )
        s.claims = claims
        return None

    def _slices(self) -> Sequence[Any]:
        """The cluster's ResourceSlices as one tuple, the same object while none changed (the
        allocator then reuses what it worked out from them)."""
        table = self.handle.cluster.resource_slices
        log = getattr(table, "log", None)
        mark = (id(table), getattr(table, "epoch", 0), len(log)) if log is not None else None
        if mark is None or mark != self._slices_mark:
            self._slices_cache = tuple(self.handle.cluster.list_resource_slices())
            self._slices_mark = mark
        return self._slices_cache

    def _check_class(self, class_name: str, request: str, cluster: Any) -> Status | None:
        """``validateDeviceClass``."""
        if not class_name:
            return Status.as_error(f"request {request}: unsupported request type")
        if cluster.get_device_class(class_name) is None:
            return Status.unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    # --- Filter ---------------------------------------------------------------------------------
    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> dict[int, Status] | None:
        if not self.enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            err = Status.as_error(f'error reading "{STATE_KEY}" from cycleState: not found')
            return dict.fromkeys(range(len(nodes)), err)
        if not s.claims:
            return None
        out: dict[int, Status] = {}
        pending = [c for _, c in s.to_allocate()]
        for i, info in enumerate(nodes.infos):
            node = info.node
            assert node is not None
            st = self._filter_node(s, node, pending)
            if st is not None:
                out[i] = st
        return out or None

    def _filter_node(self, s: _State, node: Node, pending: list[ResourceClaim]) -> Status | None:
        unavailable: list[int] = []
        for index, claim in enumerate(s.claims):
            sel = s.selectors[index]
            if sel is not None and not sel.match(node):
                unavailable.append(index)
                continue
            if claim.status.allocation is None:
                continue
            if self.binding_conditions:
                try:
                    ready = self.is_claim_ready_for_binding(claim)
                except ClaimError:
                    unavailable.append(index)
                    continue
                if not ready and self.is_claim_timeout(claim):
                    unavailable.append(index)
        allocations: Callable[[], list[AllocationResult]] | None = None
        if s.allocator is not None:
            try:
                allocations = s.allocator.allocate_lazily(node, pending, stop=self._stop())
            except Aborted:
                return Status.unresolvable(MSG_TIMED_OUT)
            except FailedOnNode as e:
                return Status.unresolvable(str(e))
            except AllocationError as e:
                return Status.as_error(e)
            if allocations is None:  # all or nothing: a result per claim, or none
                return Status.unresolvable(MSG_CANNOT_ALLOCATE)
        if unavailable:
            s.unavailable.update(unavailable)
            return Status.unresolvable(MSG_NOT_AVAILABLE)
        if allocations is not None:
            s.node_allocations[node.metadata.name] = allocations
        return None

    def _stop(self) -> Callable[[], str | None] | None:
        """``context.WithTimeout(filterTimeout)`` on the transport's clock, started at the
        search's first check (after 1024 steps: most searches end before, and never read the
        clock)."""
        if not self.use_filter_timeout or self.filter_timeout <= 0:
            return None
        handle, timeout = self.handle, self.filter_timeout
        deadline: list[float] = []
        clock: list[Callable[[], float]] = []

        def stop() -> str | None:
            if not clock:
                clock.append(handle.wall_clock if handle.wall_clock() else _time.monotonic)
                deadline.append(clock[0]() + timeout)
                return None
            return "context deadline exceeded" if clock[0]() >= deadline[0] else None

        return stop

    # --- PostFilter -----------------------------------------------------------------------------
    @hookimpl
    async def kubesched_post_filter(
        self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        if not self.enabled:
            return None, Status(Code.UNSCHEDULABLE, *self._postfilter_reasons)
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            if pod.spec.resource_claims and self.handle.emulated_version == (1, 33):
                # v1.33.3 checks len(pod.Spec.ResourceClaims) only; then no unavailable claims
                return None, Status(Code.UNSCHEDULABLE, MSG_STILL_NOT_SCHEDULABLE)
            return None, Status(Code.UNSCHEDULABLE, *self._postfilter_reasons)
        # upstream iterates a set (random order): the lowest index here, deterministic
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            reserved = claim.status.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.metadata.uid):
                updated = replace(claim, status=replace(claim.status, reserved_for=[], allocation=None, devices=[]))
                try:
                    await self.handle.client.update_resource_claim_status(updated)
                except Exception as e:  # noqa: BLE001 - the API's error is the pod's Error status
                    return None, Status.as_error(e)
                return None, Status(Code.UNSCHEDULABLE, MSG_DEALLOCATED)
        return None, Status(Code.UNSCHEDULABLE, MSG_STILL_NOT_SCHEDULABLE)

    # --- Reserve / Unreserve --------------------------------------------------------------------
    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        from kubesched.api._dra import FINALIZER

        if not self.enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None
        pending = s.to_allocate()
        if not pending:
            return None
        if s.allocator is None:
            return Status.as_error("internal error: no allocator for claims to allocate")
        build = s.node_allocations.get(node_name)
        allocations = build() if build is not None else None
        if not allocations:
            return Status.as_error("claim allocation not found for node")
        if len(allocations) != len(pending):
            return Status.as_error(
                f"internal error, have {len(allocations)} allocations, {len(pending)} claims to allocate, "
                f"want {len(pending)} claims"
            )
        for (index, claim), allocation in zip(pending, allocations, strict=True):
            s.allocations[index] = allocation
            finalizers = list(claim.metadata.finalizers)
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
            self.in_flight[claim.metadata.uid] = replace(
                claim,
                metadata=replace(claim.metadata, finalizers=finalizers),
                status=replace(claim.status, allocation=allocation),
            )
        return None

    @hookimpl
    async def kubesched_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if not self.enabled:
            return
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return
        for claim in list(s.claims):
            if self.in_flight.pop(claim.metadata.uid, None) is not None:
                self.assumed.pop(_key(claim), None)
            if claim.status.allocation is not None and is_reserved_for_pod(pod, claim):
                # upstream: a strategic-merge patch deleting the pod's reservedFor entry
                latest = self.handle.cluster.get_resource_claim(*_key(claim)) or claim
                kept = [r for r in latest.status.reserved_for if r.uid != pod.metadata.uid]
                with contextlib.suppress(Exception):  # upstream logs it; the next attempt retries
                    await self.handle.client.update_resource_claim_status(
                        replace(latest, status=replace(latest.status, reserved_for=kept))
                    )
                self.assumed.pop(_key(claim), None)

    # --- PreBind --------------------------------------------------------------------------------
    @hookimpl
    async def kubesched_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None
        for index, claim in enumerate(s.claims):
            if is_reserved_for_pod(pod, claim):
                continue
            try:
                s.claims[index] = await self._bind_claim(s, index, pod)
            except Exception as e:  # noqa: BLE001 - an Error status: the pod is retried
                return Status.as_error(e)
        if not self.binding_conditions or not self._has_binding_conditions(s):
            return None
        await self.handle.record_event(
            pod, "Normal", "BindingConditionsPending", "Scheduling",
            f"waiting for binding conditions for device on node {node_name}",
        )  # fmt: skip
        deadline = self.handle.now() + self.binding_timeout
        while True:
            try:
                if self._pod_ready_for_binding(s):
                    return None
            except ClaimError as e:
                return Status.as_error(str(e))
            now = self.handle.now()
            if now >= deadline:
                return Status.as_error(MSG_BINDING_TIMEOUT)
            await self.handle.park_until(min(now + BINDING_POLL_INTERVAL, deadline))

    async def _bind_claim(self, s: _State, index: int, pod: Pod) -> ResourceClaim:
        """``bindClaim``: finalizer, allocation and reservation written; the result assumed."""
        from kubesched.api._dra import FINALIZER, ResourceClaimConsumerReference

        client = self.handle.client
        claim = s.claims[index]
        allocation = s.allocations.get(index)
        modified = False
        try:
            latest = self.handle.cluster.get_resource_claim(*_key(claim)) or claim
            if latest.metadata.deletion_timestamp is not None:
                raise ClaimError(f"claim {claim.metadata.namespace}/{claim.metadata.name} got deleted in the meantime")
            if allocation is not None:
                if latest.status.allocation is not None:
                    raise ClaimError(
                        f"claim {claim.metadata.namespace}/{claim.metadata.name} got allocated elsewhere in the meantime"
                    )
                if FINALIZER not in latest.metadata.finalizers:
                    latest = await client.update_resource_claim(
                        replace(latest, metadata=replace(latest.metadata, finalizers=[*latest.metadata.finalizers, FINALIZER]))
                    )
                latest = replace(latest, status=replace(latest.status, allocation=allocation))
            ref = ResourceClaimConsumerReference(resource="pods", name=pod.metadata.name, uid=pod.metadata.uid)
            status = replace(latest.status, reserved_for=[*latest.status.reserved_for, ref])
            if self.binding_conditions and status.allocation is not None and status.allocation.allocation_timestamp is None:
                stamp = _format_time(self.handle.wall_clock())
                status = replace(status, allocation=replace(status.allocation, allocation_timestamp=stamp))
            updated = await client.update_resource_claim_status(replace(latest, status=status))
            modified = True
            return updated
        finally:
            if allocation is not None:
                self.in_flight.pop(claim.metadata.uid, None)
            if modified:
                self.assumed[_key(updated)] = updated

    # --- binding conditions ---------------------------------------------------------------------
    def is_claim_ready_for_binding(self, claim: ResourceClaim) -> bool:
        """``isClaimReadyForBinding``: raises ClaimError when a failure condition is True."""
        alloc = claim.status.allocation
        if alloc is None:
            return False
        for r in alloc.devices.results:
            if not r.binding_conditions:
                continue
            dev = next(
                (d for d in claim.status.devices if (d.driver, d.pool, d.device) == (r.driver, r.pool, r.device)), None
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
        from kubesched.api._objects import parse_time_ns

        since = (parse_time_ns(alloc.allocation_timestamp) or 0) / 1e9
        if any(r.binding_conditions for r in alloc.devices.results):
            return bool(since + self.binding_timeout < self.handle.wall_clock())
        return False

    def _has_binding_conditions(self, s: _State) -> bool:
        for claim in s.claims:
            alloc = claim.status.allocation
            if alloc is not None and any(r.binding_conditions for r in alloc.devices.results):
                return True
        return False

    def _pod_ready_for_binding(self, s: _State) -> bool:
        for i, claim in enumerate(s.claims):
            latest = self.get_claim(*_key(claim))
            if latest is None:
                raise ClaimError(f'resourceclaim.resource.k8s.io "{claim.metadata.name}" not found')
            s.claims[i] = latest
            if not self.is_claim_ready_for_binding(latest):
                if self.is_claim_timeout(latest):
                    raise ClaimError(f"claim {latest.metadata.name} binding timeout")
                return False
        return True


def new(args: Mapping[str, Any] | None, handle: Handle) -> DynamicResources:
    return DynamicResources(args, handle)


__all__ = [
    "MSG_CANNOT_ALLOCATE",
    "MSG_DEALLOCATED",
    "MSG_NOT_AVAILABLE",
    "MSG_NO_NEW_CLAIMS",
    "MSG_PLUGIN_DISABLED",
    "MSG_STILL_NOT_SCHEDULABLE",
    "MSG_TIMED_OUT",
    "NAME",
    "DynamicResources",
    "new",
]
