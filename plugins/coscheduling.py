"""Coscheduling: PodGroup gang scheduling, compatible with kubernetes-sigs/scheduler-plugins.

A pod joins a group with the label ``scheduling.x-k8s.io/pod-group: <name>``; the group is the
``PodGroup`` (scheduling.x-k8s.io/v1alpha1) of that name in the pod's namespace, with
``minMember``, optional ``minResources`` and ``scheduleTimeoutSeconds``.  The group's pods are
placed all together or not at all::

    QueueSort   priority, then the group's last failure / creation time, then "ns/name":
                a group's pods leave the queue back to back
    PreFilter   group backed off? enough members (bound ones count, gated ones don't)?
                minResources free in the cluster (the group's own pods excluded)?
                any failure: UnschedulableAndUnresolvable (no preemption)
    Permit      record the pod as assigned; fewer than minMember assigned: Wait (the first
                one activates its siblings); quorum: Allow every waiting member
    PostFilter  a member fit nowhere: unless the gap to quorum is within
                podGroupRejectPercentage, reject every waiting member, back the group off
    Unreserve   a member failed after Reserve (timeout, reject, bind error): reject every
                waiting member

Upstream: sp ``pkg/coscheduling/coscheduling.go`` and ``pkg/coscheduling/core/core.go``.

Gang preemption (``gangPreemption: true``, kubesched's own; off by default, and then the plugin is
upstream's).  scheduler-plugins' Coscheduling leaves preemption to DefaultPreemption, which frees
room for one member at a time: the first member evicts its victims, the others find no room,
the group times out at Permit and starts over, evicting again (scheduler-plugins #428, #431,
#581; volcano #3291).  With the argument on, PostFilter first makes one decision for the whole
group over the whole cluster (:mod:`kubesched.plugins._gangpreemption`): the victims every
unplaced member needs are preempted together and each member is nominated to its node, or, when
fewer than minMember would fit even with every lower-priority pod gone, nothing is evicted.  It
is tried for a member of a group below its quorum whose pod failed Filter as Unschedulable on
some node; success nominates the pod; otherwise the PostFilter above runs as ever, and its
status becomes UnschedulableAndUnresolvable with the preemption's reason first, which ends the
PostFilter plugins: list Coscheduling before DefaultPreemption in ``postFilter``, or
DefaultPreemption will have preempted for the member alone.  The PreFilter checks are unchanged:
a group whose ``minResources`` the cluster cannot cover now is turned away before preemption.

Known difference in text: the PreFilter message for ``minResources`` the cluster cannot cover is
``resource gap: map[cpu:2]`` here, quantities written as Kubernetes writes them.  Upstream
formats its ``corev1.ResourceList`` with ``%v``; ``resource.Quantity.String`` has a pointer
receiver, so the map's values print in Go's struct form (e.g. ``map[cpu:{{2 0} {<nil>}
DecimalSI}]``, the cached string emptied by ``Sub``), which exposes apimachinery's internal
value/scale representation after its arithmetic: not reproduced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.framework import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    PODS_TO_ACTIVATE_KEY,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    ConfigError,
    EventResource,
    Handle,
    PostFilterResult,
    Status,
    go_value,
    hookimpl,
    parse_time,
    quantity_value,
)
from kubesched.plugins._gangpreemption import GangPreemption

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeInfo, Pod, PodGroup, QueuedPodInfo

NAME = "Coscheduling"

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
"""The pod label naming the pod's PodGroup (in the pod's namespace)."""

PERMIT_STATE_KEY = "PermitCoscheduling"
DEFAULT_WAIT_TIME = 60.0
"""``util.DefaultWaitTime``: the Permit wait when neither the group nor the args set one."""
PERMITTED_PG_DEFAULT_TTL = 3.0
BACKED_OFF_PG_DEFAULT_TTL = 10.0
GO_ZERO_TIME = -62135596800.0
"""Go's zero ``time.Time`` (0001-01-01) in Unix seconds: a PodGroup without creationTimestamp."""

# Reasons, as upstream words them.
ERR_POD_GROUP_NOT_FOUND = "PodGroup not found"
ERR_NO_POD_GROUP = "can not find pod group"
MSG_POSTFILTER_REJECTION = "optimistic rejection in PostFilter"
MSG_UNRESERVE_REJECTION = "rejection in Unreserve"


# --- args ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CoschedulingArgs:
    """``CoschedulingArgs`` (sp ``apis/config/v1``), defaulted."""

    permit_waiting_time_seconds: int = 60
    pod_group_backoff_seconds: int = 0
    pod_group_reject_percentage: int = 10
    gang_preemption: bool = False
    """kubesched's own (``gangPreemption``): preempt for the whole group (see the module)."""


_ARG_FIELDS = {
    "permitWaitingTimeSeconds": "permit_waiting_time_seconds",
    "podGroupBackoffSeconds": "pod_group_backoff_seconds",
    "podGroupRejectPercentage": "pod_group_reject_percentage",
}
_BOOL_ARG_FIELDS = {"gangPreemption": "gang_preemption"}


def parse_args(raw: Mapping[str, Any] | None) -> CoschedulingArgs:
    """Decode, default (``SetDefaults_CoschedulingArgs``) and validate
    (``ValidateCoschedulingArgs``) the plugin's pluginConfig args."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"Invalid value: {go_value(str(raw))}: must be a mapping")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        flag = _BOOL_ARG_FIELDS.get(key)
        if flag is not None:
            if value is None:
                continue
            if not isinstance(value, bool):
                raise ConfigError(f"Invalid value: {go_value(str(value))}: must be a boolean", field=key)
            values[flag] = value
            continue
        attr = _ARG_FIELDS.get(key)
        if attr is None:
            raise ConfigError(f'strict decoding error: unknown field "{key}"')
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(
                f"Invalid value: {go_value(str(value))}: must be an integer", field=key
            )
        values[attr] = value
    args = CoschedulingArgs(**values)
    if args.permit_waiting_time_seconds < 0:
        raise ConfigError(
            f"Invalid value: {args.permit_waiting_time_seconds}: must be greater than 0",
            field="permitWaitingTimeSeconds",
        )
    if args.pod_group_backoff_seconds < 0:
        raise ConfigError(
            f"Invalid value: {args.pod_group_backoff_seconds}: must be greater than 0",
            field="podGroupBackoffSeconds",
        )
    if not 0 <= args.pod_group_reject_percentage <= 100:
        raise ConfigError(
            f"Invalid value: {args.pod_group_reject_percentage}: must be between 0 and 100",
            field="podGroupRejectPercentage",
        )
    return args


# --- helpers ---------------------------------------------------------------------------------


def pod_group_label(pod: Pod) -> str:
    """``util.GetPodGroupLabel``: the pod's group name, or ""."""
    return pod.metadata.labels.get(POD_GROUP_LABEL, "")


def pod_group_full_name(pod: Pod) -> str:
    """``util.GetPodGroupFullName``: "namespace/group", or "" for a pod in no group."""
    name = pod_group_label(pod)
    return f"{pod.metadata.namespace}/{name}" if name else ""


class _TTLCache:
    """The little of ``patrickmn/go-cache`` the manager uses: Add (only when absent), Get, Delete.

    A ttl of 0 means the cache's default expiration, as ``gocache.DefaultExpiration``.
    """

    def __init__(self, now: Callable[[], float], default_ttl: float) -> None:
        self._now = now
        self._default = default_ttl
        self._items: dict[str, float] = {}

    def get(self, key: str) -> bool:
        exp = self._items.get(key)
        if exp is None:
            return False
        if self._now() > exp:
            del self._items[key]
            return False
        return True

    def add(self, key: str, ttl: float) -> None:
        if self.get(key):
            return  # gocache.Add fails on a live item: the expiry is not extended
        self._items[key] = self._now() + (ttl if ttl > 0 else self._default)

    def delete(self, key: str) -> None:
        self._items.pop(key, None)


def node_left_resources(info: NodeInfo, pg_full_name: str) -> dict[str, int]:
    """``getNodeResource``: allocatable minus requested on the node, the group's own pods
    excluded (their usage counts as free for the group)."""
    alloc = info.allocatable
    requested = info.requested.clone()
    pods = len(info.pods)
    for pi in info.pods:
        if pod_group_full_name(pi.pod) == pg_full_name:
            requested.add(pi.requests, -1)
            pods -= 1
    left = {
        PODS: alloc.allowed_pod_number - pods,
        CPU: alloc.milli_cpu - requested.milli_cpu,
        MEMORY: alloc.memory - requested.memory,
        EPHEMERAL_STORAGE: alloc.ephemeral_storage - requested.ephemeral_storage,
    }
    for name, value in alloc.scalar.items():
        left[name] = value - requested.scalar.get(name, 0)
    return left


def _format_quantity(name: str, value: int) -> str:
    if name == CPU:
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    return str(value)


def check_cluster_resource(
    nodes: Sequence[NodeInfo], request: Mapping[str, int], pg_full_name: str
) -> str | None:
    """``CheckClusterResource``: can the nodes' free resources cover ``request`` (scheduler
    units: millicores for cpu, whole units otherwise)?  None when they can, else the error
    naming the gap ("resource gap: map[cpu:4]").  The request shrinks node by node; a resource
    is done once its remainder reaches zero."""
    remaining = dict(request)
    for info in nodes:
        if info is None or info.node is None:
            continue
        left = node_left_resources(info, pg_full_name)
        for name in list(remaining):
            q = remaining[name] - left.get(name, 0)
            if q <= 0:
                del remaining[name]
            else:
                remaining[name] = q
        if not remaining:
            return None
    gap = " ".join(f"{k}:{_format_quantity(k, v)}" for k, v in sorted(remaining.items()))
    return f"resource gap: map[{gap}]"


@dataclass
class PermitState:
    """CycleState entry asking ``activate_siblings`` to move the group's other pods to activeQ."""

    activate: bool = False

    def clone(self) -> PermitState:
        return PermitState(self.activate)


# --- the plugin ------------------------------------------------------------------------------


class Coscheduling:
    """QueueSort, PreFilter, PostFilter, Reserve/Unreserve and Permit for PodGroups.

    The manager state (upstream ``PodGroupManager``) lives here: ``permitted_pg`` (groups that
    passed the minResources check, for the permit waiting time), ``backed_off_pg`` (groups
    denied for ``podGroupBackoffSeconds``), ``assigned`` (pod names assumed or bound per group)
    and ``last_failure`` (per group, the wall time of its last failed attempt, which sends the
    group behind the others in the queue).
    """

    name = NAME

    def __init__(self, args: CoschedulingArgs, handle: Handle) -> None:
        self.args = args
        self.handle: Handle = handle
        self.schedule_timeout = float(args.permit_waiting_time_seconds)
        self.pg_backoff = float(args.pod_group_backoff_seconds)
        self.reject_percentage = args.pod_group_reject_percentage
        now = self._now
        self.permitted_pg = _TTLCache(now, PERMITTED_PG_DEFAULT_TTL)
        self.backed_off_pg = _TTLCache(now, BACKED_OFF_PG_DEFAULT_TTL)
        self.assigned: dict[str, set[str]] = {}
        self.last_failure: dict[str, float] = {}
        self._wall_offset: float | None = None

    # --- clocks -----------------------------------------------------------------------------
    def _now(self) -> float:
        return float(self.handle.now())

    def _offset(self) -> float:
        """Wall time minus loop time, fixed at first use so that queue order stays stable."""
        if self._wall_offset is None:
            self._wall_offset = float(self.handle.wall_clock()) - self._now()
        return self._wall_offset

    def _wall_now(self) -> float:
        return self._now() + self._offset()

    # --- the manager ------------------------------------------------------------------------
    def get_pod_group(self, pod: Pod) -> tuple[str, PodGroup | None]:
        """``GetPodGroup``: ("ns/name", the PodGroup or None); ("", None) for no label."""
        name = pod_group_label(pod)
        if not name:
            return "", None
        ns = pod.metadata.namespace
        return f"{ns}/{name}", self.handle.cluster.get_pod_group(ns, name)

    def group_pods(self, namespace: str, name: str) -> list[Pod]:
        """The pod lister's view: every pod labelled with the group, bound or not."""
        cluster = self.handle.cluster
        if not name:  # no label and an empty one alike
            return [p for p in cluster.list_pods(namespace) if pod_group_label(p) == name]
        return cluster.pods_with_label(namespace, POD_GROUP_LABEL, name)

    def assigned_pods(self, pg_full_name: str) -> set[str]:
        """``assignedPodsByPG[group]``: pods that passed Permit, plus bound members.

        Upstream fills the set from Permit and from the pod informer's add handler (a pod that
        arrives bound) and empties it in Unreserve and the delete handler; here the bound
        members come from the cluster state and names whose pod is gone are dropped.
        """
        ns, _, name = pg_full_name.partition("/")
        cluster = self.handle.cluster
        tracked = self.assigned.get(pg_full_name)
        if tracked:
            for pod_name in [n for n in tracked if cluster.get_pod(ns, n) is None]:
                tracked.discard(pod_name)
            if not tracked:
                del self.assigned[pg_full_name]
        out = set(self.assigned.get(pg_full_name, ()))
        out.update(p.metadata.name for p in self.group_pods(ns, name) if p.spec.node_name)
        return out

    def get_assigned_pod_count(self, pg_full_name: str) -> int:
        return len(self.assigned_pods(pg_full_name))

    def mark_failure(self, pg_full_name: str) -> None:
        """``MarkPodGroupScheduleFailure``: the group sorts by this time from now on."""
        self.last_failure[pg_full_name] = self._wall_now()

    def clear_failure(self, pg_full_name: str) -> None:
        self.last_failure.pop(pg_full_name, None)

    def backoff_pod_group(self, pg_full_name: str, backoff: float) -> None:
        if backoff == 0:
            return
        self.backed_off_pg.add(pg_full_name, backoff)

    def wait_time(self, pg: PodGroup | None) -> float:
        """``util.GetWaitTimeDuration``: the group's scheduleTimeoutSeconds, else
        permitWaitingTimeSeconds, else 60 s."""
        if pg is not None and pg.spec.schedule_timeout_seconds is not None:
            return float(pg.spec.schedule_timeout_seconds)
        if self.schedule_timeout:
            return self.schedule_timeout
        return DEFAULT_WAIT_TIME

    def creation_timestamp(self, qpi: QueuedPodInfo) -> float:
        """``GetCreationTimestamp`` (wall seconds): the group's last failure, else its
        creationTimestamp; the pod's InitialAttemptTimestamp for a pod in no (known) group."""
        pod = qpi.pod
        name = pod_group_label(pod)
        if name:
            ns = pod.metadata.namespace
            pg = self.handle.cluster.get_pod_group(ns, name)
            if pg is not None:
                failed = self.last_failure.get(f"{ns}/{name}")
                if failed is not None:
                    return failed
                created = parse_time(pg.metadata.creation_timestamp)
                return GO_ZERO_TIME if created is None else created
        ts = qpi.initial_attempt_timestamp
        if ts is None:
            ts = qpi.timestamp
        return ts + self._offset()

    def activate_siblings(self, pod: Pod, state: CycleState) -> None:
        """``ActivateSiblings``: when Permit asked for it, put the group's other pods into
        the cycle's PodsToActivate."""
        name = pod_group_label(pod)
        if not name:
            return
        ps = state.get(PERMIT_STATE_KEY)
        if not isinstance(ps, PermitState) or not ps.activate:
            return
        to_activate = state.get(PODS_TO_ACTIVATE_KEY)
        if to_activate is None:
            return
        uid = pod.metadata.uid
        for p in self.group_pods(pod.metadata.namespace, name):
            if p.metadata.uid != uid:
                to_activate[p.metadata.uid] = p

    def pre_filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> str | None:
        """``PodGroupManager.PreFilter``: None, or why the pod's group cannot be scheduled."""
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return None
        if self.backed_off_pg.get(full):
            return f"podGroup {full} failed recently"
        pods = self.group_pods(pod.metadata.namespace, pod_group_label(pod))
        min_member = pg.spec.min_member
        if len(pods) < min_member:
            return (
                f"pre-filter pod {pod.metadata.name} cannot find enough sibling pods, "
                f"current pods number: {len(pods)}, minMember of group: {min_member}"
            )
        gated = sum(1 for p in pods if p.spec.scheduling_gates)
        if len(pods) - gated < min_member:
            return (
                f"pre-filter pod {pod.metadata.name} cannot find enough sibling pods, "
                f"current pods number: {len(pods)}, gated pods number: {gated}, "
                f"minMember of group: {min_member}"
            )
        if pg.spec.min_resources is None:
            return None
        if self.permitted_pg.get(full):
            return None
        request = {k: quantity_value(k, v) for k, v in pg.spec.min_resources.items()}
        request[PODS] = min_member
        err = check_cluster_resource(nodes, request, full)
        if err is not None:
            return err
        self.permitted_pg.add(full, self.schedule_timeout)
        return None

    # --- hooks ------------------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD_GROUP, ActionType.ADD | ActionType.UPDATE)
            ),
        ]

    @hookimpl
    def kubesched_queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Priority, then the group's (or pod's) time, then "namespace/name"."""
        if a.priority != b.priority:
            return a.priority > b.priority
        t1 = self.creation_timestamp(a)
        t2 = self.creation_timestamp(b)
        if t1 == t2:
            return a.key < b.key
        return t1 < t2

    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """UnschedulableAndUnresolvable on any failure, so that no preemption is tried."""
        err = self.pre_filter(pod, nodes)
        if err is not None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, err)
        return None

    @hookimpl
    def kubesched_post_filter(
        self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult, Status]:
        """Reject the whole group when one member fits nowhere (it never nominates)."""
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE, ERR_NO_POD_GROUP)
        min_member = pg.spec.min_member
        assigned = self.get_assigned_pod_count(full)
        if assigned >= min_member:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        return self._reject_group(pod, pg, assigned)

    def _reject_group(self, pod: Pod, pg: PodGroup, assigned: int) -> tuple[PostFilterResult, Status]:
        """The PostFilter of a member of a group below its quorum."""
        full = f"{pod.metadata.namespace}/{pg.metadata.name}"
        min_member = pg.spec.min_member
        # A small gap to the quorum: let the later members try.
        if (min_member - assigned) * 100 <= self.reject_percentage * min_member:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        self._reject_waiting(pod.metadata.namespace, pg.metadata.name, MSG_POSTFILTER_REJECTION)
        if self.pg_backoff > 0:
            pods = self.group_pods(pod.metadata.namespace, pod_group_label(pod))
            if len(pods) >= min_member:
                self.backoff_pod_group(full, self.pg_backoff)
        self.permitted_pg.delete(full)
        self.mark_failure(full)
        return PostFilterResult(), Status(
            Code.UNSCHEDULABLE,
            f"PodGroup {full} gets rejected due to Pod {pod.metadata.name} "
            "is unschedulable even after PostFilter",
        )

    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """A no-op: being a Reserve plugin is what makes Unreserve run."""
        return None

    @hookimpl
    def kubesched_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member failed after Reserve: forget it, and reject every waiting member."""
        full = pod_group_full_name(pod)
        if not full:
            return
        tracked = self.assigned.get(full)
        if tracked is not None:
            tracked.discard(pod.metadata.name)
            if not tracked:
                del self.assigned[full]
        _, pg = self.get_pod_group(pod)
        if pg is None:
            return
        self._reject_waiting(pod.metadata.namespace, pg.metadata.name, MSG_UNRESERVE_REJECTION)
        self.permitted_pg.delete(full)
        self.mark_failure(full)

    @hookimpl
    def kubesched_permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status, float] | Status | None:
        """Wait for the quorum; the pod that completes it allows every waiting member."""
        full, pg = self.get_pod_group(pod)
        if not full:
            return None
        if pg is None:
            return Status(Code.UNSCHEDULABLE, ERR_POD_GROUP_NOT_FOUND)
        self.assigned.setdefault(full, set()).add(pod.metadata.name)
        assigned = self.assigned_pods(full)
        if len(assigned) >= pg.spec.min_member:
            self.clear_failure(full)
            for wp in self.handle.iterate_over_waiting_pods():
                if pod_group_full_name(wp.pod) == full:
                    wp.allow(NAME)
            return None
        if len(assigned) == 1:
            # The group's first member: its siblings may have been waiting for it (sp #682).
            state.write(PERMIT_STATE_KEY, PermitState(activate=True))
        self.activate_siblings(pod, state)
        wait = self.wait_time(pg)
        return Status(Code.WAIT), wait if wait != 0 else self.schedule_timeout

    def _reject_waiting(self, namespace: str, pg_name: str, msg: str) -> None:
        for wp in self.handle.iterate_over_waiting_pods():
            p = wp.pod
            if p.metadata.namespace == namespace and pod_group_label(p) == pg_name:
                wp.reject(NAME, msg)


class CoschedulingWithPreemption(Coscheduling):
    """Coscheduling with ``gangPreemption``: its PostFilter first preempts for the whole group
    (see the module).  A class of its own, so that the plugin without the argument is as ever."""

    def __init__(self, args: CoschedulingArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        self.preemption = GangPreemption(NAME, handle)

    @hookimpl
    async def kubesched_post_filter(  # type: ignore[override]
        self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult, Status]:
        """One preemption for the group, else the PostFilter as ever, made
        UnschedulableAndUnresolvable (so that DefaultPreemption does not preempt for one member)."""
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE, ERR_NO_POD_GROUP)
        min_member = pg.spec.min_member
        assigned = self.get_assigned_pod_count(full)
        if assigned >= min_member:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        reasons: list[str] = []
        if any(st.code == Code.UNSCHEDULABLE for st in node_statuses.values()):
            pods = self.group_pods(pod.metadata.namespace, pg.metadata.name)
            result, st = await self.preemption.preempt(pod, pods, min_member, full)
            if st.is_success() and result is not None:
                return result, st
            if st.code == Code.ERROR:
                return PostFilterResult(), st
            if st.message:
                reasons.append("preemption: " + st.message)
        _, st = self._reject_group(pod, pg, assigned)
        return PostFilterResult(), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons, *st.reasons)


def new(args: Mapping[str, Any] | None, handle: Handle) -> Coscheduling:
    parsed = parse_args(args)
    if parsed.gang_preemption:
        return CoschedulingWithPreemption(parsed, handle)
    return Coscheduling(parsed, handle)


__all__ = [
    "NAME",
    "POD_GROUP_LABEL",
    "Coscheduling",
    "CoschedulingArgs",
    "CoschedulingWithPreemption",
    "PermitState",
    "check_cluster_resource",
    "new",
    "parse_args",
    "pod_group_full_name",
    "pod_group_label",
]
