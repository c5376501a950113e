"""NodeResourcesFit: does the node have room for the pod's requests? (``noderesources/fit.go``)

Filter (``fitsRequest``), vectorized over the batch's columns, with the node's *real* requests:

- ``pods + 1 > allocatable pods`` → "Too many pods";
- a pod requesting nothing stops there;
- for cpu, memory, ephemeral-storage and each requested scalar (ignored extended resources
  skipped): ``req > allocatable - requested`` → "Insufficient <name>".

The status is Unschedulable (v1.30.6 … v1.33.3 fit.go), at every emulated version as issue 34
expects; with the KubeschedSourceExact gate (1.34+) it is UnschedulableAndUnresolvable when some
request exceeds the node's allocatable outright, as the v1.34.7 source has it (``fitsRequest``,
``InsufficientResource.Unresolvable``, kubernetes#131345; docs/versions.md).  Score uses the configured scoring
strategy (LeastAllocated by default) over the non-zero requests.

With DRAExtendedResource (alpha off 1.34–1.35, beta on in 1.36) a requested resource that a
DeviceClass maps (its ``extendedResourceName``, or ``deviceclass.resource.kubernetes.io/<class>``)
and that the node's allocatable does not have (0 or absent) is not checked here: DynamicResources
allocates it (``shouldDelegateResourceToDRA``, in ``fitsRequest``, ``isFit`` and
``haveAnyRequestedResourcesIncreased``), and a DeviceClass add or update that maps a resource the
pod requests queues it (``isSchedulableAfterDeviceClassEvent``); read from upstream's fit.go after
v1.36.0 (the same code as the v1.35 tree's).  The PreFilter state is unchanged.  Not modelled:
scoring such a resource when a scoring strategy lists it (upstream's ``draPreScoreState``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.dra import RESOURCE_DEVICE_CLASS_PREFIX, ClassTableResolver
from kubesched.framework import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    Handle,
    NodeInfo,
    QueueingHint,
    Rejections,
    RequestRules,
    ResourceAmounts,
    Status,
    hookimpl,
    is_extended_resource_name,
    pod_requests,
    request_rules,
)

from ._args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    FitArgs,
    parse_fit_args,
)
from ._resource_allocation import (
    NEWEST_RULES,
    RowFits,
    RowScores,
    Scorer,
    allocatable_requested,
    cpu_memory_columns,
    least_requested_fast,
    least_requested_one_of,
    least_requested_two_of,
    least_resource_scorer,
    most_resource_scorer,
    pod_resource_request_list,
    requested_to_capacity_ratio_scorer,
)
from .placement_score import FitPlacementScore

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kubesched.framework import CycleState, Node, NodeBatch, Pod

FIT_NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + FIT_NAME
PRE_SCORE_STATE_KEY = "PreScore" + FIT_NAME
REASON_TOO_MANY_PODS = "Too many pods"
_NATIVE = (PODS, CPU, MEMORY, EPHEMERAL_STORAGE)
_INSUFFICIENT_CPU = f"Insufficient {CPU}"
_INSUFFICIENT_MEMORY = f"Insufficient {MEMORY}"
_INSUFFICIENT_EPHEMERAL_STORAGE = f"Insufficient {EPHEMERAL_STORAGE}"


def insufficient_reason(resource: str) -> str:
    """``"Insufficient <resource>"``."""
    return f"Insufficient {resource}"


class InsufficientResource:
    """One resource a node lacks for the pod (``InsufficientResource``)."""

    __slots__ = ("resource_name", "reason", "requested", "used", "capacity", "unresolvable")

    def __init__(
        self, resource_name: str, reason: str, requested: int, used: int, capacity: int, unresolvable: bool = False
    ) -> None:
        self.resource_name = resource_name
        self.reason = reason
        self.requested = requested
        self.used = used
        self.capacity = capacity
        self.unresolvable = unresolvable

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InsufficientResource):
            return NotImplemented
        return all(getattr(self, s) == getattr(other, s) for s in self.__slots__)

    def __repr__(self) -> str:
        return (
            f"InsufficientResource({self.resource_name!r}, {self.reason!r}, requested={self.requested}, "
            f"used={self.used}, capacity={self.capacity}, unresolvable={self.unresolvable})"
        )


class _Ignored:
    """Extended resources left out of the fit check (``ignoredResources`` / ``ignoredResourceGroups``)."""

    __slots__ = ("names", "groups")

    def __init__(self, names: Sequence[str] = (), groups: Sequence[str] = ()) -> None:
        self.names = frozenset(names)
        self.groups = frozenset(groups)

    def has(self, name: str) -> bool:
        if not is_extended_resource_name(name):
            return False
        if name in self.names:
            return True
        return bool(self.groups) and name.split("/")[0] in self.groups


def _checked_resources(req: ResourceAmounts, ignored: _Ignored) -> list[tuple[str, int]]:
    """The (resource, request) pairs fitsRequest compares, in upstream's order."""
    out: list[tuple[str, int]] = []
    for name, value in ((CPU, req.milli_cpu), (MEMORY, req.memory), (EPHEMERAL_STORAGE, req.ephemeral_storage)):
        if value > 0:
            out.append((name, value))
    for name, value in req.scalar.items():
        if value == 0 or ignored.has(name):
            continue
        out.append((name, value))
    return out


def _requests_nothing(req: ResourceAmounts) -> bool:
    return req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalar


def _delegated(name: str, allocatable: int, classes: ClassTableResolver | None) -> bool:
    """``shouldDelegateResourceToDRA``: the gate on (``classes`` given), the node's allocatable
    without the resource, and a DeviceClass mapping it."""
    return classes is not None and allocatable <= 0 and classes.get_device_class(name) is not None


def fits_request(
    req: ResourceAmounts,
    node_info: NodeInfo,
    ignored: _Ignored | None = None,
    classes: ClassTableResolver | None = None,
) -> list[InsufficientResource]:
    """``fitsRequest`` for one node: every resource it lacks, in upstream's order (``classes``:
    the extended resources DRA serves, with DRAExtendedResource)."""
    ignored = ignored or _Ignored()
    out: list[InsufficientResource] = []
    allowed = node_info.allocatable.allowed_pod_number
    if len(node_info.pods) + 1 > allowed:
        out.append(InsufficientResource(PODS, REASON_TOO_MANY_PODS, 1, len(node_info.pods), allowed))
    if _requests_nothing(req):
        return out
    for name, value in _checked_resources(req, ignored):
        alloc = node_info.allocatable.get(name)
        used = node_info.requested.get(name)
        if name not in _NATIVE and _delegated(name, alloc, classes):
            continue
        if value > alloc - used:
            out.append(InsufficientResource(name, insufficient_reason(name), value, used, alloc, value > alloc))
    return out


def fits(
    pod: Pod, node_info: NodeInfo, *, rules: RequestRules = NEWEST_RULES, classes: ClassTableResolver | None = None
) -> list[InsufficientResource]:
    """``Fits``: :func:`fits_request` with the pod's requests (``rules``: the release's
    PodLevelResources and InPlacePodVerticalScaling rules) and nothing ignored."""
    return fits_request(pod_requests(pod, rules=rules), node_info, None, classes)


def is_fit(
    pod: Pod, node: Node | None, *, rules: RequestRules = NEWEST_RULES, classes: ClassTableResolver | None = None
) -> bool:
    """Would the pod fit on ``node`` if it were empty?"""
    if node is None:
        return False
    return not fits(pod, NodeInfo(node), rules=rules, classes=classes)


def have_any_requested_resources_increased(
    pod: Pod, old: Node, new: Node, *, rules: RequestRules = NEWEST_RULES, classes: ClassTableResolver | None = None
) -> bool:
    """Did the node's allocatable grow in the pod count or in any resource the pod requests?"""
    req = pod_requests(pod, rules=rules)
    a, b = NodeInfo(old).allocatable, NodeInfo(new).allocatable
    if b.allowed_pod_number > a.allowed_pod_number:
        return True
    if _requests_nothing(req):
        return False
    if (
        (req.milli_cpu > 0 and b.milli_cpu > a.milli_cpu)
        or (req.memory > 0 and b.memory > a.memory)
        or (req.ephemeral_storage > 0 and b.ephemeral_storage > a.ephemeral_storage)
    ):
        return True
    return any(
        q != 0 and (b.get(name) > a.get(name) or _delegated(name, b.get(name), classes)) for name, q in req.scalar.items()
    )


_Plan = tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray, list[str], RowFits]


class Fit(FitPlacementScore):
    """PreFilter, Filter, PreScore, Score and EnqueueExtensions of NodeResourcesFit, and from 1.36
    its PlacementScore (:mod:`.placement_score`)."""

    name = FIT_NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle
        # v1.33.3 fit.go: a request above the node's allocatable is Unschedulable, as issue 34 expects
        # up to 1.36; v1.34.7 fit.go makes it UnschedulableAndUnresolvable (kubernetes#131345), which
        # the KubeschedSourceExact gate gives (docs/versions.md)
        self.unresolvable_above_allocatable = bool(handle.feature_gates.get("KubeschedSourceExact", False))
        # PodLevelResources (alpha 1.32, beta on from 1.34) and InPlacePodVerticalScaling (beta on
        # from 1.33): computePodResourceRequest with SkipPodLevelResources: !enablePodLevelResources
        # (v1.32 fit.go, kubernetes#128407) and UseStatusResources: enableInPlacePodVerticalScaling
        self.rules = request_rules(handle.emulated_version, handle.feature_gates)
        self.args: FitArgs = parse_fit_args(args)
        self.ignored = _Ignored(self.args.ignored_resources, self.args.ignored_resource_groups)
        self._last_plan: tuple[ResourceAmounts, _Plan] | None = None
        # DRAExtendedResource: the DeviceClass mapping of extended resources (fit.go NewFit
        # keeps the SharedDRAManager's DeviceClassResolver)
        self.dra_extended = bool(handle.feature_gates.get("DRAExtendedResource", False))
        self._classes: ClassTableResolver | None = None
        # plans by request values (pods asking the same share one)
        self._plans: dict[tuple[Any, ...], _Plan] = {}
        ss = self.args.scoring_strategy
        self.strategy = ss.type
        self.resources = ss.resources
        self._resource_names = tuple(r.name for r in ss.resources)
        self._cpu_memory = self._resource_names == (CPU, MEMORY)  # (pod_resource_request_list)
        self._row_scores = RowScores(
            self._resource_names,
            False,
            lambda req, alloc: least_requested_fast(self.resources, req, alloc),
            least_requested_one_of(self.resources),
            compute_two=least_requested_two_of(self.resources),
        )
        if ss.type == LEAST_ALLOCATED:
            self.scorer: Scorer = least_resource_scorer(ss.resources)
        elif ss.type == MOST_ALLOCATED:
            self.scorer = most_resource_scorer(ss.resources)
        else:
            assert ss.shape is not None
            self.scorer = requested_to_capacity_ratio_scorer(ss.resources, ss.shape)

    @property
    def classes(self) -> ClassTableResolver | None:
        """The DeviceClass mapping of extended resources, with DRAExtendedResource (else None)."""
        if not self.dra_extended:
            return None
        table = self.handle.cluster.device_classes
        if self._classes is None or self._classes.table is not table:
            self._classes = ClassTableResolver(table)
        return self._classes

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
        if not self.handle.feature_gates.get("SchedulerQueueingHints", True):
            # upstream: without queueing hints the node events also include taint and label
            # updates (a Node/Add may be missed through preCheck, kubernetes#109437)
            node_actions |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
                self.is_schedulable_after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, node_actions),
                self.is_schedulable_after_node_change,
            ),
            *(
                [
                    ClusterEventWithHint(
                        ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
                        self.is_schedulable_after_device_class_event,
                    )
                ]
                if self.dra_extended
                else []
            ),
        ]

    def is_schedulable_after_device_class_event(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """``isSchedulableAfterDeviceClassEvent`` (DRAExtendedResource): a class that now maps
        a resource the pod requests (explicitly, or by its implicit name when added)."""
        reqs = pod_requests(pod, rules=self.rules)
        new_name = new.spec.extended_resource_name
        if old is not None:
            if (old.spec.extended_resource_name or "") == (new_name or ""):
                return QueueingHint.QUEUE_SKIP
        elif RESOURCE_DEVICE_CLASS_PREFIX + new.metadata.name in reqs.scalar:
            return QueueingHint.QUEUE
        if new_name is not None and new_name in reqs.scalar:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_event(self, pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        """A deleted pod frees room only if it was assigned (or nominated); a scale-down helps
        only the pod itself or when an assigned pod's request the target needs went down."""
        if new is None:
            if old is None or (not old.spec.node_name and not old.status.nominated_node_name):
                return QueueingHint.QUEUE_SKIP
            return QueueingHint.QUEUE
        if old is None:
            return QueueingHint.QUEUE_SKIP
        if new.metadata.uid == pod.metadata.uid:
            return QueueingHint.QUEUE
        if not new.spec.node_name:
            return QueueingHint.QUEUE_SKIP
        lvl = self.rules
        before, after = pod_requests(old, rules=lvl), pod_requests(new, rules=lvl)
        target = pod_requests(pod, rules=lvl)
        for name in target.names():
            if name == PODS or target.get(name) == 0:
                continue
            if before.get(name) > after.get(name):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node) -> QueueingHint:
        """Queue when the (empty) node fits the pod and it is new or grew where the pod needs."""
        classes = self.classes
        if not is_fit(pod, new, rules=self.rules, classes=classes):
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        if not have_any_requested_resources_increased(pod, old, new, rules=self.rules, classes=classes):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    # --- PreFilter / Filter ---------------------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_FILTER_STATE_KEY, pod_requests(pod, rules=self.rules, state=state))
        return None

    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Mapping[int, Status] | None:
        try:
            req: ResourceAmounts = state.read(PRE_FILTER_STATE_KEY)
        except KeyError as e:
            return dict.fromkeys(
                range(len(nodes)),
                Status.as_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: {e.args[0]}'),
            )
        n = len(nodes)
        if n == 0:
            return None
        if n == 1 and nodes.has_infos:
            st = self._filter_one(req, nodes[0])
            return None if st is None else {0: st}
        # every checked resource at once, one row each (pods first); a node's failure reasons
        # are the bits of its short rows, in upstream's order; bit 62 marks "unresolvable"
        names, need, need_unresolvable, weights, reasons, row_fits = self._plan(req)
        if not (self.dra_extended and req.scalar) and row_fits.all_fit(nodes):
            return None  # every node has room, known without the batch's columns
        alloc = nodes.columns("allocatable", names)
        short = need > alloc - nodes.columns("requested", names)
        if self.dra_extended and req.scalar:
            classes = self.classes
            assert classes is not None
            for row, name in enumerate(names):
                if name not in _NATIVE and classes.get_device_class(name) is not None:
                    short[row] &= alloc[row] > 0  # shouldDelegateResourceToDRA
        if not np.count_nonzero(short):
            return None
        keys = weights @ short
        failed = keys.nonzero()[0]
        if len(failed) == 0:
            return None
        keys = keys[failed]
        if self.unresolvable_above_allocatable:
            over = need_unresolvable > alloc  # a request above the node's allocatable cannot be fixed
            if over.any():
                keys |= (over & short).any(axis=0)[failed].astype(np.int64) << 62
        first = int(keys[0])
        if (keys == first).all():  # the usual case: one reason for every rejected node
            distinct, which = [first], np.zeros(len(keys), dtype=np.int64)
        else:
            unique = np.unique(keys)
            distinct, which = unique.tolist(), np.searchsorted(unique, keys).astype(np.int64, copy=False)
        statuses: list[Status] = []
        for key in distinct:
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if key >> 62 else Code.UNSCHEDULABLE
            statuses.append(Status(code, *[r for bit, r in enumerate(reasons) if key >> bit & 1]))
        return Rejections(failed, which, statuses)

    def _plan(self, req: ResourceAmounts) -> _Plan:
        """What the batch Filter compares for ``req`` (kept for the last request seen: the
        cycle's pod): the resources (pods first), the request per row as a column (1 pod), the
        same with the pods row never unresolvable, the bit of each row, the reasons, and the
        request's :class:`RowFits` (room per snapshot row)."""
        last = self._last_plan
        if last is not None and last[0] is req:
            return last[1]
        key = (req.milli_cpu, req.memory, req.ephemeral_storage, *req.scalar.items())
        plan = self._plans.get(key)
        if plan is not None:
            self._last_plan = (req, plan)
            return plan
        names = [PODS]
        values = [1]
        reasons = [REASON_TOO_MANY_PODS]
        if not _requests_nothing(req):
            for name, value in _checked_resources(req, self.ignored):
                names.append(name)
                values.append(value)
                reasons.append(insufficient_reason(name))
        need = np.array(values, dtype=np.int64)[:, None]
        need_unresolvable = need.copy()
        need_unresolvable[0] = -1  # never above an allocatable pod count
        weights = np.left_shift(1, np.arange(len(names), dtype=np.int64))
        plan = (tuple(names), need, need_unresolvable, weights, reasons, RowFits(tuple(names), values))
        self._last_plan = (req, plan)
        if len(self._plans) >= 256:
            self._plans.clear()
        self._plans[key] = plan
        return plan

    def _filter_one(self, req: ResourceAmounts, ni: NodeInfo) -> Status | None:
        """The batch Filter for a single node, in plain ints (the preemption dry run's case):
        the same checks, reasons and code as the columns give."""
        alloc, used = ni.allocatable, ni.requested
        reasons: list[str] = []
        unresolvable = False
        if len(ni.pods) + 1 > alloc.allowed_pod_number:
            reasons.append(REASON_TOO_MANY_PODS)
        v = req.milli_cpu
        if v > 0 and v > alloc.milli_cpu - used.milli_cpu:
            reasons.append(_INSUFFICIENT_CPU)
            unresolvable = v > alloc.milli_cpu
        v = req.memory
        if v > 0 and v > alloc.memory - used.memory:
            reasons.append(_INSUFFICIENT_MEMORY)
            unresolvable = unresolvable or v > alloc.memory
        v = req.ephemeral_storage
        if v > 0 and v > alloc.ephemeral_storage - used.ephemeral_storage:
            reasons.append(_INSUFFICIENT_EPHEMERAL_STORAGE)
            unresolvable = unresolvable or v > alloc.ephemeral_storage
        if req.scalar:
            classes = self.classes
            for name, value in req.scalar.items():
                if value == 0 or self.ignored.has(name):
                    continue
                a = alloc.get(name)
                if classes is not None and _delegated(name, a, classes):
                    continue
                if value > a - used.get(name):
                    reasons.append(insufficient_reason(name))
                    unresolvable = unresolvable or value > a
        if not reasons:
            return None
        unresolvable = unresolvable and self.unresolvable_above_allocatable
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return Status(code, *reasons)

    # --- Score ----------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        state.write(
            PRE_SCORE_STATE_KEY,
            pod_resource_request_list(pod, self.resources, False, self.rules, state, cpu_memory=self._cpu_memory),
        )
        return None

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        return self.score_view(state, pod, nodes, False)

    def score_view(self, state: CycleState, pod: Pod, nodes: NodeBatch, view: bool = True) -> np.ndarray:
        """Score, whose answer may be a view of the kept per-row scores when ``view`` (for the
        Score runner only: see :mod:`kubesched.runtime._score_runners`)."""
        pod_reqs = state.get(PRE_SCORE_STATE_KEY)
        if pod_reqs is None:  # PreScore disabled
            pod_reqs = pod_resource_request_list(pod, self.resources, False, self.rules)
        if self.strategy == LEAST_ALLOCATED:
            known = self._row_scores.scores(nodes, pod_reqs, view)
            if known is not None:
                return known
            fast = cpu_memory_columns(nodes, self._resource_names, pod_reqs, False)
            if fast is not None:
                return least_requested_fast(self.resources, *fast)
        requested, allocatable = allocatable_requested(nodes, self.resources, pod_reqs, False)
        return self.scorer(requested, allocatable)


def new_fit(args: dict[str, Any] | None, handle: Handle) -> Fit:
    return Fit(args, handle)


__all__ = [
    "FIT_NAME",
    "REASON_TOO_MANY_PODS",
    "Fit",
    "InsufficientResource",
    "fits",
    "fits_request",
    "have_any_requested_resources_increased",
    "insufficient_reason",
    "is_fit",
    "new_fit",
]
