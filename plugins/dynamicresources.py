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
  schedulable``; a pod without claims: per version (below).
- Score (from v1.35, :class:`ScoringDynamicResources`; no PreScore, as upstream): the
  prioritized-list subrequests the node's allocation takes, 0 for every other pod.
- Reserve: the node's allocation becomes in flight (another pod sharing the claim waits for it,
  other pods' allocators see its devices as taken); Unreserve drops it and the pod's
  reservation.
- PreBind: the finalizer (an update), then the allocation and ``reservedFor`` (a status
  update), the claim assumed until the cluster's copy catches up; with binding conditions
  (DRADeviceBindingConditions + DRAResourceClaimDeviceStatus), the pod event
  ``BindingConditionsPending`` and a poll every 5 s up to ``bindingTimeout`` (600 s).

With DRAExtendedResource (alpha off 1.34-1.35, beta on in 1.36) a pod's extended resources
that a DeviceClass maps and a node does not advertise are allocated in a special claim the
plugin makes for the pod (:mod:`._dra_extended`): it goes last among the pod's claims.

Rejections are UnschedulableAndUnresolvable (upstream's ``statusUnschedulable``), so
preemption finds DRA-rejected nodes "not helpful".  Pods without claims take the old path:
PreFilter Skip, no allocator, and PostFilter per version:

- v1.30.6 and v1.31.8 (``len(state.claims) == 0``): Unschedulable "no new claims to
  deallocate"; 1.32 as 1.31.
- v1.33.3 (``len(pod.Spec.ResourceClaims) == 0``, kubernetes#129823): Unschedulable without a
  reason; 1.34-1.36 likewise, as issue 34 states #129823.  The v1.34.7 and v1.35.4 sources
  answer "no new claims to deallocate" again (``state.claims.empty()``): the KubeschedSourceExact
  gate gives that (docs/versions.md).
- In a profile while the gate is off: PreFilter Skip, PostFilter "plugin disabled".

Where kubesched differs: ``filterTimeout`` is measured on the transport's clock
(:meth:`Handle.wall_clock`), which in a simulation is virtual time and does not move while one
Filter runs, so the timeout bites only on a live cluster or when a test's clock says so; the
allocator is asked every 1024 search steps.  The slices the allocator sees have the
DeviceTaintRules applied (:mod:`kubesched.dra._taintrules`: DRADeviceTaintRules from 1.35,
DRADeviceTaints before), as upstream's ``ListWithDeviceTaintRules``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from msgspec.structs import replace

from kubesched.dra import Aborted, AllocationError, FailedOnNode
from kubesched.framework import (
    Code,
    ConfigError,
    PreBindPreFlightResult,
    Rejections,
    Status,
    hookimpl,
)

from ._dra_claims import (
    BindingConditions,
    ClaimError,
    ClaimTracker,
    check_class,
    compute_score,
    duration,
    filter_stop,
    is_reserved_for_pod,
    key_of,
    schedulable_after_claim_change,
    schedulable_after_pod_change,
)
from ._dra_extended import (
    SPECIAL_CLAIM_IN_MEM_NAME,
    ExtendedResources,
    ExtendedState,
    bind_extended,
    delete_extended,
    filter_extended,
    may_request,
    unreserve_extended,
    with_special_claim,
)
from ._helper import PRE_FLIGHT_SKIP, SKIP, default_normalize_score

if TYPE_CHECKING:
    from kubesched.api import AllocationResult, ResourceClaim
    from kubesched.dra import Allocator
    from kubesched.framework import (
        ClusterEventWithHint,
        CycleState,
        Handle,
        Node,
        NodeBatch,
        NodeInfo,
        Pod,
        PostFilterResult,
        QueueingHint,
    )

NAME = "DynamicResources"
STATE_KEY = NAME
PARALLEL = PreBindPreFlightResult(allow_parallel=True)  # v1.36 PreBindPreFlight (kubernetes#135393)
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


@dataclass
class _State:
    """``stateData``: the pod's claims (None for a claim intentionally not created), what
    PreFilter learned, and Filter's allocations per node."""

    claims: list[ResourceClaim] = field(default_factory=list)
    selectors: list[Any] = field(default_factory=list)  # per claim: NodeSelectorMatcher | None
    allocator: Allocator | None = None
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, Any] = field(default_factory=dict)  # what Filter found per node
    allocations: dict[int, AllocationResult] = field(default_factory=dict)  # set by Reserve
    extended: ExtendedState | None = None  # the special claim (DRAExtendedResource)

    def to_allocate(self) -> list[tuple[int, ResourceClaim]]:
        return [(i, c) for i, c in enumerate(self.claims) if c.status.allocation is None]

    def results_on(self, node_name: str) -> list[AllocationResult] | None:
        """The allocations Filter found on the node (built now), None if none."""
        found = self.node_allocations.get(node_name)
        if found is None or self.allocator is None:
            return None
        claims = [c for _, c in self.to_allocate()]
        ext = self.extended
        if ext is not None:  # the special claim: the node's copy was allocated there
            node_claim = ext.nodes.get(node_name, (None, []))[0]
            if node_claim is not None:
                special = self.claims[ext.index]
                claims = [node_claim if c is special else c for c in claims]
        return self.allocator.results(node_name, claims, found)


def _shared(statuses: dict[str, Status], reason: str) -> Status:
    st = statuses.get(reason)
    if st is None:
        st = statuses[reason] = Status.unresolvable(reason)
    return st


def _has_binding_conditions(claim: ResourceClaim) -> bool:
    alloc = claim.status.allocation
    return alloc is not None and any(r.binding_conditions for r in alloc.devices.results)


def _verdicts(
    s: _State, nodes: list[Node], found: list[Any] | None, masks: list[np.ndarray | None]
) -> Rejections | None:
    """Filter's statuses over a batch when no claim has binding conditions to look at: the
    allocator's verdict per node (``found``, None without claims to allocate; what it found
    kept for Reserve), then the allocated claims whose node selector (``masks``) leaves the
    node out.  As arrays, one Status per reason shared by the nodes it rejects."""
    claim_bad = [(index, ~m) for index, m in enumerate(masks) if m is not None]
    bad: np.ndarray | None = None
    for _, b in claim_bad:
        bad = b if bad is None else bad | b
    unavailable = Status.unresolvable(MSG_NOT_AVAILABLE)
    if found is None:
        if bad is None or not bad.any():
            return None
        s.unavailable.update(index for index, b in claim_bad if b.any())
        rejected = np.flatnonzero(bad)
        return Rejections(rejected, np.zeros(len(rejected), dtype=np.int64), [unavailable])
    bad_list = bad.tolist() if bad is not None else None
    positions: list[int] = []
    which: list[int] = []
    statuses: list[Status] = []
    index_of: dict[int, int] = {}
    shared: dict[str, Status] = {}
    reached: list[int] = []
    kept = s.node_allocations
    for i, allocations in enumerate(found):
        if allocations is None:  # all or nothing: a result per claim, or none
            st = _shared(shared, MSG_CANNOT_ALLOCATE)
        elif type(allocations) is list:
            if bad_list is None or not bad_list[i]:
                kept[nodes[i].metadata.name] = allocations
                continue
            reached.append(i)
            st = unavailable
        else:
            st = _allocation_error(shared, allocations)
        j = index_of.get(id(st))
        if j is None:
            j = index_of[id(st)] = len(statuses)
            statuses.append(st)
        positions.append(i)
        which.append(j)
    if reached:
        at = np.array(reached, dtype=np.int64)
        s.unavailable.update(index for index, b in claim_bad if b[at].any())
    if not positions:
        return None
    return Rejections(
        np.array(positions, dtype=np.int64), np.array(which, dtype=np.int64), statuses
    )


def _filter_each(
    s: _State,
    nodes: list[Node],
    matched: list[list[bool] | None],
    found: list[Any],
    binding: BindingConditions | None,
) -> dict[int, Status] | None:
    """Filter's statuses node by node (a claim with binding conditions to look at, or the
    special claim's copy per node)."""
    out: dict[int, Status] = {}
    shared: dict[str, Status] = {}  # one Status per reason, shared by the nodes it rejects
    for i, node in enumerate(nodes):
        unavailable = _unavailable(s, matched, i, binding)
        allocations = found[i]
        if s.allocator is not None:
            if isinstance(allocations, AllocationError):
                out[i] = _allocation_error(shared, allocations)
                continue
            if allocations is None:  # all or nothing: a result per claim, or none
                out[i] = _shared(shared, MSG_CANNOT_ALLOCATE)
                continue
        if unavailable:
            s.unavailable.update(unavailable)
            out[i] = _shared(shared, MSG_NOT_AVAILABLE)
            continue
        if allocations is not None:
            s.node_allocations[node.metadata.name] = allocations
    return out or None


def _allocation_error(shared: dict[str, Status], err: AllocationError) -> Status:
    if isinstance(err, Aborted):
        return _shared(shared, MSG_TIMED_OUT)
    if isinstance(err, FailedOnNode):
        return Status.unresolvable(str(err))
    return Status.as_error(err)


def _unavailable(
    s: _State, matched: list[list[bool] | None], i: int, binding: BindingConditions | None
) -> list[int]:
    """The claims unavailable on the ``i``-th node: an allocation's node selector that does
    not match it, binding conditions (``binding``, when enabled) failed or past their
    timeout."""
    unavailable: list[int] = []
    for index, claim in enumerate(s.claims):
        m = matched[index]
        if m is not None and not m[i]:
            unavailable.append(index)
            continue
        if claim.status.allocation is None:
            continue
        if binding is not None:
            try:
                ready = binding.is_claim_ready_for_binding(claim)
            except ClaimError:
                unavailable.append(index)
                continue
            if not ready and binding.is_claim_timeout(claim):
                unavailable.append(index)
    return unavailable


def _pre_bind_pre_flight(
    self: DynamicResources, state: CycleState, pod: Pod, node_name: str
) -> tuple[PreBindPreFlightResult, Status | None]:
    """``PreBindPreFlight`` (v1.34, kubernetes#132391): Skip without the gate or without claims
    to handle (PreFilter wrote no claims), else PreBind will write them; its PreBind may run in
    parallel with the other PreBind plugins (v1.36, kubernetes#135393)."""
    if not self.enabled:
        return PRE_FLIGHT_SKIP  # (PARALLEL, SKIP), the shared tuple
    s: _State | None = state.get(STATE_KEY)
    if s is None or not s.claims:
        return PRE_FLIGHT_SKIP
    return PARALLEL, None


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
                filter_timeout = duration(args["filterTimeout"], "filterTimeout")
                if filter_timeout < 0:
                    raise ConfigError("filterTimeout: Invalid value: must be zero or positive")
            if args.get("bindingTimeout") is not None:
                binding_timeout = duration(args["bindingTimeout"], "bindingTimeout")
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
        elif handle.emulated_version >= (1, 33) and not gates.get("KubeschedSourceExact", False):
            # v1.33.3 dynamicresources.go PostFilter, a pod without claims (#129823); from 1.34 as
            # issue 34 states it, where v1.34.7's state.claims.empty() answers again (the gate)
            reasons = ()
        self._postfilter_reasons = reasons
        # DRASchedulerFilterTimeout: beta (on) from v1.34
        self.use_filter_timeout = bool(
            gates.get("DRASchedulerFilterTimeout", tuple(handle.emulated_version) >= (1, 34))
        )
        self.binding_conditions = bool(
            gates.get("DRADeviceBindingConditions", False)
            and gates.get("DRAResourceClaimDeviceStatus", False)
        )
        self.consumable_capacity = bool(gates.get("DRAConsumableCapacity", False))
        self.prioritized_list = bool(gates.get("DRAPrioritizedList", False))
        # SharedDRAManager's claim tracker: assumed claims (written by PreBind, newer than the
        # cluster's copy), in-flight allocations (Reserve → PreBind), the devices in use
        self.tracker = ClaimTracker(handle, self.consumable_capacity)
        self.assumed = self.tracker.assumed
        self.in_flight = self.tracker.in_flight
        self.get_claim = self.tracker.get_claim
        self.allocated_state = self.tracker.allocated_state
        self.pod_claims = self.tracker.pod_claims
        self.binding = BindingConditions(
            handle, self.tracker, self.binding_conditions, self.binding_timeout
        )
        self.is_claim_ready_for_binding = self.binding.is_claim_ready_for_binding
        self.is_claim_timeout = self.binding.is_claim_timeout
        self._features: Any = None
        self.extended = ExtendedResources(handle) if gates.get("DRAExtendedResource", False) else None

    # --- EnqueueExtensions ----------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        from kubesched.framework import ActionType, ClusterEvent, ClusterEventWithHint
        from kubesched.framework import EventResource as R

        from ._helper import queueing_hints_enabled

        if not self.enabled:
            return []
        node_actions = (
            ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        )
        if not queueing_hints_enabled(self.handle):
            node_actions |= ActionType.UPDATE_NODE_TAINT
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(R.NODE, node_actions)),
            ClusterEventWithHint(
                ClusterEvent(R.RESOURCE_CLAIM, add_update), self.is_schedulable_after_claim_change
            ),
            # upstream: Pod/UpdatePodGeneratedResourceClaim; kubesched's pod updates that are
            # not labels, tolerations, scale-down or gates are UpdatePodOther
            ClusterEventWithHint(
                ClusterEvent(R.POD, ActionType.UPDATE_POD_OTHER),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(ClusterEvent(R.DEVICE_CLASS, add_update)),
            ClusterEventWithHint(ClusterEvent(R.RESOURCE_SLICE, add_update)),
        ]

    def is_schedulable_after_claim_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """``isSchedulableAfterClaimChange``."""
        return schedulable_after_claim_change(self.tracker, pod, old, new)

    def is_schedulable_after_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """``isSchedulableAfterPodChange``: the pod itself got its generated claims."""
        return schedulable_after_pod_change(self.tracker, pod, old, new)

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
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        if not self.enabled or (
            not pod.spec.resource_claims and (self.extended is None or not may_request(pod))
        ):
            return SKIP
        s = _State()
        state.write(STATE_KEY, s)
        try:
            claims = self.pod_claims(pod)
        except ClaimError as e:
            return Status.unresolvable(str(e))
        if self.extended is not None:
            claims = with_special_claim(self, s, pod, claims)
        if not claims:
            return SKIP
        from kubesched.framework import NodeSelectorMatcher

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
            if s.extended is not None and i == s.extended.index:
                continue  # the special claim: Filter validates it
            for request in claim.spec.devices.requests:
                if request.exactly is not None:
                    st = check_class(classes, request.exactly.device_class_name, request.name)
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
                        st = check_class(
                            classes, sub.device_class_name, f"{request.name}/{sub.name}"
                        )
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
                self.tracker.slices(),
                version=self.handle.emulated_version,
                rng=self.handle.rng,
            )
        s.claims = claims
        return None

    # --- Filter ---------------------------------------------------------------------------------
    @hookimpl
    def kubesched_filter(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> Mapping[int, Status] | None:
        if not self.enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            err = Status.as_error(f'error reading "{STATE_KEY}" from cycleState: not found')
            return dict.fromkeys(range(len(nodes)), err)
        if not s.claims:
            return None
        pending = [c for _, c in s.to_allocate()]
        ext = s.extended
        if ext is not None:  # the special claim (DRAExtendedResource): a copy per node
            out: dict[int, Status] = {}
            for i, info in enumerate(nodes.infos):
                st = filter_extended(self, s, ext, pod, info, pending)
                if st is not None:
                    out[i] = st
            return out or None
        infos = nodes.infos
        node_list: list[Node] = []
        for info in infos:
            assert info.node is not None
            node_list.append(info.node)
        binding = self.binding if self.binding_conditions else None
        if binding is not None and any(_has_binding_conditions(c) for c in s.claims):
            # a claim's binding conditions are looked at node by node, as upstream does
            matched: list[list[bool] | None] = [
                None if sel is None else sel.match_batch(nodes).tolist() for sel in s.selectors
            ]
            found: list[Any] = [None] * len(infos)
            if s.allocator is not None:
                found = s.allocator.allocate_nodes(node_list, pending, self._stop)
            return _filter_each(s, node_list, matched, found, binding)
        # per claim whose allocation has a node selector: the nodes it matches, one look
        masks = [None if sel is None else sel.match_batch(nodes) for sel in s.selectors]
        if s.allocator is None:
            return _verdicts(s, node_list, None, masks)
        return _verdicts(s, node_list, s.allocator.allocate_nodes(node_list, pending, self._stop), masks)

    def _filter_node(self, s: _State, node: Node, pending: list[ResourceClaim]) -> Status | None:
        """Filter of one node with its own claims to allocate (the special claim's copy for
        that node, :func:`filter_extended`): the node-by-node path over a batch of one."""
        matched: list[list[bool] | None] = [None if sel is None else [sel.match(node)] for sel in s.selectors]
        found: list[Any] = [None]
        if s.allocator is not None:
            found = s.allocator.allocate_nodes([node], pending, self._stop)
        out = _filter_each(s, [node], matched, found, self.binding if self.binding_conditions else None)
        return None if out is None else out[0]

    def _stop(self) -> Callable[[], str | None] | None:
        if not self.use_filter_timeout or self.filter_timeout <= 0:
            return None
        return filter_stop(self.handle, self.filter_timeout)

    # --- PostFilter -----------------------------------------------------------------------------
    @hookimpl
    def kubesched_post_filter(
        self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status] | Awaitable[tuple[PostFilterResult | None, Status]]:
        if not self.enabled:
            return None, Status(Code.UNSCHEDULABLE, *self._postfilter_reasons)
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            if pod.spec.resource_claims:  # a pod with claims its PreFilter did not get to
                if self.handle.emulated_version == (1, 33):
                    # v1.33.3 checks len(pod.Spec.ResourceClaims) only; then no unavailable claims
                    return None, Status(Code.UNSCHEDULABLE, MSG_STILL_NOT_SCHEDULABLE)
                return None, Status(Code.UNSCHEDULABLE, MSG_NO_NEW_CLAIMS)  # state.claims.empty()
            return None, Status(Code.UNSCHEDULABLE, *self._postfilter_reasons)
        ext = s.extended
        # upstream iterates a set (random order): the lowest index here, deterministic
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            if ext is not None and index == ext.index:
                if claim.metadata.name != SPECIAL_CLAIM_IN_MEM_NAME:
                    break  # deleted below
                continue
            reserved = claim.status.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.metadata.uid):
                updated = replace(
                    claim,
                    status=replace(claim.status, reserved_for=[], allocation=None, devices=[]),
                )
                return self._deallocate(updated)
        if ext is not None and s.claims[ext.index].metadata.name != SPECIAL_CLAIM_IN_MEM_NAME:
            return delete_extended(self, s.claims[ext.index])  # an earlier cycle's claim
        return None, Status(Code.UNSCHEDULABLE, MSG_STILL_NOT_SCHEDULABLE)

    async def _deallocate(self, claim: ResourceClaim) -> tuple[PostFilterResult | None, Status]:
        try:
            await self.handle.client.update_resource_claim_status(claim)
        except Exception as e:  # noqa: BLE001 - the API's error is the pod's Error status
            return None, Status.as_error(e)
        return None, Status(Code.UNSCHEDULABLE, MSG_DEALLOCATED)

    # --- Reserve / Unreserve --------------------------------------------------------------------
    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None
        from kubesched.api import FINALIZER

        pending = s.to_allocate()
        if not pending:
            return None
        if s.allocator is None:
            return Status.as_error("internal error: no allocator for claims to allocate")
        allocations = s.results_on(node_name)
        ext = s.extended
        if not allocations and ext is not None and all(i == ext.index for i, _ in pending):
            return None  # only the special claim, served by the device plugin on this node
        if not allocations:
            return Status.as_error("claim allocation not found for node")
        if len(allocations) != len(pending):
            return Status.as_error(
                f"internal error, have {len(allocations)} allocations, {len(pending)} claims to allocate, "
                f"want {len(pending)} claims"
            )
        for (index, claim), allocation in zip(pending, allocations, strict=True):
            s.allocations[index] = allocation
            if ext is not None and index == ext.index:
                claim = ext.nodes.get(node_name, (None, []))[0] or claim  # the node's copy
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
        users = s.claims if s.extended is None else s.claims[: s.extended.index]
        for claim in list(users):
            if self.in_flight.pop(claim.metadata.uid, None) is not None:
                self.assumed.pop(key_of(claim), None)
            if claim.status.allocation is not None and is_reserved_for_pod(pod, claim):
                # upstream: a strategic-merge patch deleting the pod's reservedFor entry
                latest = self.handle.cluster.get_resource_claim(*key_of(claim)) or claim
                kept = [r for r in latest.status.reserved_for if r.uid != pod.metadata.uid]
                with contextlib.suppress(Exception):  # upstream logs it; the next attempt retries
                    await self.handle.client.update_resource_claim_status(
                        replace(latest, status=replace(latest.status, reserved_for=kept))
                    )
                self.assumed.pop(key_of(claim), None)
        if s.extended is not None:
            await unreserve_extended(self, s, s.extended)

    # --- PreBind --------------------------------------------------------------------------------
    pre_bind_pre_flight = _pre_bind_pre_flight
    pre_bind_pre_flight_skip = PRE_FLIGHT_SKIP  # the runner takes this answer by identity
    pre_flight_skips_pre_filter_skipped = True  # its PreFilter's Skips leave no claim

    @hookimpl
    async def kubesched_pre_bind(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        if not self.enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None
        for index, claim in enumerate(s.claims):
            if is_reserved_for_pod(pod, claim):
                continue
            try:
                if s.extended is not None and index == s.extended.index:
                    s.claims[index] = await bind_extended(self, s, s.extended, pod, node_name)
                    continue
                s.claims[index] = await self.binding.bind_claim(
                    s.claims[index], s.allocations.get(index), pod
                )
            except Exception as e:  # noqa: BLE001 - an Error status: the pod is retried
                return Status.as_error(e)
        if not self.binding_conditions or not self.binding._has_binding_conditions(s.claims):
            return None
        await self.handle.record_event(
            pod, "Normal", "BindingConditionsPending", "Scheduling",
            f"waiting for binding conditions for device on node {node_name}",
        )  # fmt: skip
        deadline = self.handle.now() + self.binding_timeout
        while True:
            try:
                if self.binding._pod_ready_for_binding(s.claims):
                    return None
            except ClaimError as e:
                return Status.as_error(str(e))
            now = self.handle.now()
            if now >= deadline:
                return Status.as_error(MSG_BINDING_TIMEOUT)
            await self.handle.park_until(min(now + BINDING_POLL_INTERVAL, deadline))


class ScoringDynamicResources(DynamicResources):
    """The plugin from v1.35, a Score plugin too (kubernetes#134711): ``Score`` is
    ``computeScore`` of the prioritized-list subrequests the node's allocation takes, 0 on every
    node for a pod without claims or without a prioritized list; ``NormalizeScore`` is
    ``helper.DefaultNormalizeScore(MaxNodeScore)``.  Upstream (v1.35.4, as the 1.36 sources read)
    has no PreScore, so Score runs, and ``--explain`` shows it, for every pod that gets to
    scoring, claims or not; before v1.35 the plugin is no Score plugin at all
    (:class:`DynamicResources`)."""

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Any:
        s: _State | None = state.get(STATE_KEY)
        if not self.enabled or s is None or not s.claims:
            return np.zeros(len(nodes), dtype=np.int64)  # "no claims, no need to do anything"
        if not any(r.first_available for c in s.claims for r in c.spec.devices.requests):
            # computeScore adds nothing without a prioritized list; what it does then is only
            # its check that a node's results (one per claim to allocate) cover every claim,
            # done here without building the results
            results = len(s.to_allocate())
            if results < len(s.claims) and any(i.node is not None and i.node.metadata.name in s.node_allocations for i in nodes.infos):
                raise ClaimError(f"number of allocations {results} is smaller than number of claims")
            return np.zeros(len(nodes), dtype=np.int64)
        out = []
        for info in nodes.infos:
            assert info.node is not None
            built = s.results_on(info.node.metadata.name)
            out.append(compute_score(s.claims, built) if built is not None else 0)
        return out

    def uniform_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> int | None:
        """0 for a pod without claims (Score all 0, left so by NormalizeScore), else None (see
        :mod:`kubesched.runtime._score_runners`)."""
        s: _State | None = state.get(STATE_KEY)
        if not self.enabled or s is None or not s.claims:
            return 0
        return None

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: Pod, scores: Any) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if self.enabled and s is not None and s.claims:  # all 0 otherwise: nothing to normalize
            default_normalize_score(100, False, scores)  # helper.DefaultNormalizeScore(MaxNodeScore)
        return None


def new(args: Mapping[str, Any] | None, handle: Handle) -> DynamicResources:
    """The plugin of the emulated version: a Score plugin from v1.35."""
    if tuple(handle.emulated_version) >= (1, 35):
        return ScoringDynamicResources(args, handle)
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
    "ScoringDynamicResources",
    "new",
]
