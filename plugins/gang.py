"""Gang: label-based gang scheduling (the seed design; sp's superseded lightweight coscheduling).

A pod joins a gang with two labels (keys set in the plugin's args)::

    gang.kubesched.io/name: train               # the gang, in the pod's namespace
    gang.kubesched.io/available-count: "3"      # how many members must be placed together

No member binds until ``available-count`` members have nodes at once; a gang that cannot get
there holds its reservations only for ``permitWaitingTimeSeconds``, then releases them all::

    QueueSort   priority, then the gang's time (its first member's), then "namespace/name":
                a gang's pods leave the queue back to back
    PreFilter   the gang is being rejected, or its pending + running members are fewer than the
                count: UnschedulableAndUnresolvable (no preemption on its behalf)
    Reserve     remember the member as holding a reservation
    Permit      waiting + permitted-but-not-running + running + this pod < count: Wait
                (and activate the siblings); otherwise Allow every waiting member
    Unreserve   a member failed after Reserve (timeout, rejection, bind error): reject every
                waiting member and mark the gang rejected until all its reservations are gone
    PostBind    the member no longer holds a reservation (it is bound)

Gang state (the sort time, the reservations, the rejection mark) lives as long as some member
lives; a gang whose members are all gone (deleted or finished) expires, so that a new gang with
the same name starts fresh.  Every hook is a plain function: the framework runs them one at a
time on the event loop, so each hook's view of the gang is consistent without locks, and
concurrent binding cycles only interleave *between* hooks.

Upstream: sp ``kep/2-lightweight-coscheduling`` and its first ``pkg/coscheduling`` (labels
``pod-group.scheduling.sigs.k8s.io/name`` / ``min-available``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.framework import (
    PODS_TO_ACTIVATE_KEY,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    ConfigError,
    EventResource,
    QueueingHint,
    Status,
    go_duration,
    go_value,
    hookimpl,
    qualified_name_errors,
)

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeInfo, Pod, QueuedPodInfo

NAME = "Gang"

DEFAULT_GROUP_NAME_LABEL = "gang.kubesched.io/name"
DEFAULT_AVAILABLE_COUNT_LABEL = "gang.kubesched.io/available-count"
DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60

_TERMINAL_PHASES = ("Succeeded", "Failed")
MEMBERS_STATE_KEY = "Gang/members"
"""CycleState key: ((namespace, gang name), the gang's live pods) as PreFilter saw them."""


# --- args ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GangArgs:
    """The plugin's args (pluginConfig, camelCase on the wire), defaulted."""

    group_name_label: str = DEFAULT_GROUP_NAME_LABEL
    available_count_label: str = DEFAULT_AVAILABLE_COUNT_LABEL
    permit_waiting_time_seconds: float = DEFAULT_PERMIT_WAITING_TIME_SECONDS


_ARG_FIELDS = {
    "groupNameLabel": "group_name_label",
    "availableCountLabel": "available_count_label",
    "permitWaitingTimeSeconds": "permit_waiting_time_seconds",
}
_IGNORED_ARG_FIELDS = ("apiVersion", "kind")
MAX_WAIT_SECONDS = (2**63 - 1) // 10**9  # the longest time.Duration, in whole seconds  # typed args may carry their type


def parse_args(raw: Mapping[str, Any] | None) -> GangArgs:
    """Decode, default and validate the args; raise ConfigError naming the field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"Invalid value: {go_value(str(raw))}: must be a mapping")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _IGNORED_ARG_FIELDS:
            continue
        attr = _ARG_FIELDS.get(key)
        if attr is None:
            raise ConfigError(f'strict decoding error: unknown field "{key}"')
        if value is None:
            continue
        values[attr] = value
    for key in ("groupNameLabel", "availableCountLabel"):
        attr = _ARG_FIELDS[key]
        if attr not in values:
            continue
        label = values[attr]
        if not isinstance(label, str):
            raise ConfigError(f"Invalid value: {go_value(str(label))}: must be a string", field=key)
        errs = qualified_name_errors(label)
        if errs:
            raise ConfigError(f"Invalid value: {go_value(label)}: {errs[0]}", field=key)
    wait = values.get("permit_waiting_time_seconds", DEFAULT_PERMIT_WAITING_TIME_SECONDS)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)):
        raise ConfigError(
            f"Invalid value: {go_value(str(wait))}: must be a number of seconds",
            field="permitWaitingTimeSeconds",
        )
    if not wait > 0:  # also catches NaN
        raise ConfigError(
            f"Invalid value: {wait}: must be greater than 0", field="permitWaitingTimeSeconds"
        )
    if not wait <= MAX_WAIT_SECONDS:  # infinity, or past what a Go time.Duration holds
        raise ConfigError(
            f"Invalid value: {wait}: must be at most {MAX_WAIT_SECONDS} seconds",
            field="permitWaitingTimeSeconds",
        )
    args = GangArgs(**values)
    if args.group_name_label == args.available_count_label:
        raise ConfigError(
            f"Invalid value: {go_value(args.available_count_label)}: must differ from groupNameLabel",
            field="availableCountLabel",
        )
    return args


# --- gang state ------------------------------------------------------------------------------


@dataclass(eq=False)
class GangState:
    """What the plugin remembers of one gang (``namespace/name``).

    ``members`` are the uids seen as members (to tell when the gang has expired);
    ``reserved`` the members between Reserve and Unreserve / PostBind; ``permitted`` the
    members Gang let through Permit (until Unreserve); ``rejected`` why the gang is marked
    rejected ("" when it is not).
    """

    key: str
    sort_time: float | None = None
    members: set[str] = field(default_factory=set)
    reserved: set[str] = field(default_factory=set)
    permitted: set[str] = field(default_factory=set)
    rejected: str = ""


def _live(pod: Pod | None) -> bool:
    """Exists, is not being deleted, and has not finished."""
    return (
        pod is not None
        and not pod.metadata.deletion_timestamp
        and pod.status.phase not in _TERMINAL_PHASES
    )


# --- the plugin ------------------------------------------------------------------------------


class Gang:
    """All-or-nothing placement of the pods that share a gang label."""

    name = NAME

    def __init__(self, args: GangArgs, handle: Any) -> None:
        self.args = args
        self.handle = handle
        self.name_label = args.group_name_label
        self.count_label = args.available_count_label
        self.timeout = float(args.permit_waiting_time_seconds)
        self.gangs: dict[str, GangState] = {}
        self._sweep_at = 64  # sweep expired gangs when the table has grown to this size

    # --- membership -------------------------------------------------------------------------
    def gang_name(self, pod: Pod) -> str:
        """The pod's gang name ("" for a pod outside any gang)."""
        return pod.metadata.labels.get(self.name_label, "")

    def gang_key(self, pod: Pod) -> str:
        """``namespace/name`` of the pod's gang ("" for a pod outside any gang)."""
        name = pod.metadata.labels.get(self.name_label, "")
        return f"{pod.metadata.namespace}/{name}" if name else ""

    def available_count(self, pod: Pod) -> int | str:
        """The pod's available-count, or why its label is unusable."""
        raw = pod.metadata.labels.get(self.count_label)
        if raw is None:
            return f'gang member must have the label "{self.count_label}"'
        try:
            n = int(raw.strip())
        except ValueError:
            n = 0
        if n < 1 or raw.strip() != str(n):
            return f'label "{self.count_label}" must be a positive integer, got "{raw}"'
        return n

    def _same_gang(self, pod: Pod, other: Pod | None) -> bool:
        if other is None:
            return False
        name = self.gang_name(pod)
        return (
            bool(name)
            and other.metadata.namespace == pod.metadata.namespace
            and self.gang_name(other) == name
        )

    def members(self, namespace: str, name: str, state: CycleState | None = None) -> list[Pod]:
        """The gang's live pods, from the informer (pending, assumed and bound ones).

        One look-up in the informer's label index per scheduling cycle: PreFilter keeps the
        list in the cycle state for Permit (nothing can change in between: the cycle does not yield).
        """
        if state is not None:
            cached = state.get(MEMBERS_STATE_KEY)
            if cached is not None and cached[0] == (namespace, name):
                return list(cached[1])
        pods = self.handle.cluster.pods_with_label(namespace, self.name_label, name)
        out = [p for p in pods if _live(p)]
        if state is not None:
            state.write(MEMBERS_STATE_KEY, ((namespace, name), out))
        return out

    def _pod(self, uid: str) -> Pod | None:
        return self.handle.cluster.pods.get(uid)

    def state(self, key: str, uid: str) -> GangState:
        """The gang's state, registering ``uid`` as a member; an expired gang starts fresh."""
        g = self.gangs.get(key)
        if g is not None and uid in g.members:
            return g
        if g is None or self._expired(g):
            if len(self.gangs) >= self._sweep_at:
                self.sweep()
            g = self.gangs[key] = GangState(key)
        g.members.add(uid)
        return g

    def _expired(self, g: GangState) -> bool:
        """No member is alive any more and none holds a reservation."""
        if g.reserved:
            self._prune(g)
            if g.reserved:
                return False
        return not any(_live(self._pod(u)) for u in g.members)

    def _prune(self, g: GangState) -> None:
        """Forget reservations of pods that are gone (Unreserve / PostBind may not come)."""
        g.reserved = {u for u in g.reserved if self._pod(u) is not None}

    def sweep(self) -> None:
        """Drop the state of every expired gang (amortized: when the table has doubled)."""
        for key in [k for k, g in self.gangs.items() if self._expired(g)]:
            del self.gangs[key]
        self._sweep_at = max(64, 2 * len(self.gangs))

    def rejection(self, g: GangState) -> str:
        """Why the gang is marked rejected, or ""; the mark clears once nothing is reserved."""
        if g.rejected:
            self._prune(g)
            if not g.reserved:
                g.rejected = ""
        return g.rejected

    # --- waiting pods -----------------------------------------------------------------------
    def _waiting(self, pod: Pod) -> Iterable[Any]:
        """The waiting pods of ``pod``'s gang (other than ``pod``)."""
        uid = pod.metadata.uid
        for wp in self.handle.iterate_over_waiting_pods():
            if wp.pod.metadata.uid != uid and self._same_gang(pod, wp.pod):
                yield wp

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        """A new member, a pod that joined by a label change, a member that released its node
        or its reservation (an assumed pod forgotten is an AssignedPod delete)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.ADD), self.is_schedulable_after_pod_added
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL),
                self.is_schedulable_after_pod_label_updated,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                self.is_schedulable_after_member_deleted,
            ),
        ]

    def is_schedulable_after_pod_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when the new pod is another member of ``pod``'s gang."""
        if new is not None and new.metadata.uid != pod.metadata.uid and self._same_gang(pod, new):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_label_updated(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when another pod has just joined ``pod``'s gang."""
        if (
            new is not None
            and new.metadata.uid != pod.metadata.uid
            and self._same_gang(pod, new)
            and not self._same_gang(pod, old)
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_member_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when a member of ``pod``'s gang left a node or gave up its reservation:
        the gang's rejection mark may be gone."""
        if old is not None and old.metadata.uid != pod.metadata.uid and self._same_gang(pod, old):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # --- QueueSort ---------------------------------------------------------------------------
    @hookimpl
    def kubesched_queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """``a`` before ``b`` by the key (-priority, time, gang "namespace/name", member name).

        A pod outside any gang has its own queue timestamp (as PrioritySort) and the gang key
        "", so it goes before a gang at the same priority and time.  A gang's time is fixed
        the first time the queue compares one of its members: that member's first entry in
        the active queue (``initial_attempt_timestamp``), or the earlier of the two when both
        pods compared belong to it; it stays until the gang expires.  Members of one gang go
        by name, so their order does not depend on which of their binding cycles requeued
        them first.  Every pod's key is thus fixed while it is queued, and comparing keys
        lexicographically is a strict weak order (plain pods with equal priority and time are
        equivalent: the queue keeps them first in, first out, as PrioritySort does).
        """
        ka = self.sort_key(a, b)
        kb = self.sort_key(b, a)
        return ka < kb

    def sort_key(
        self, qpi: QueuedPodInfo, other: QueuedPodInfo | None = None
    ) -> tuple[int, float, str, str]:
        pod = qpi.pod
        key = self.gang_key(pod)
        if not key:
            return (-qpi.priority, qpi.timestamp, "", "")
        g = self.state(key, qpi.uid)
        if g.sort_time is None:
            t = _first_time(qpi)
            if other is not None and self.gang_key(other.pod) == key:
                t = min(t, _first_time(other))
            g.sort_time = t
        return (-qpi.priority, g.sort_time, key, pod.metadata.name)

    # --- PreFilter ---------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Reject (unresolvable) a member whose gang is being rejected or lacks members."""
        key = self.gang_key(pod)
        if not key:
            return None
        count = self.available_count(pod)
        if isinstance(count, str):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"gang {key}: {count}")
        g = self.state(key, pod.metadata.uid)
        why = self.rejection(g)
        if why:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"gang {key} was rejected ({why}) and still holds {len(g.reserved)} reservation(s)",
            )
        pending = running = 0
        seen_self = False
        for p in self.members(pod.metadata.namespace, self.gang_name(pod), state):
            if p.metadata.uid == pod.metadata.uid:
                seen_self = True
            if p.spec.node_name:
                running += 1
            else:
                pending += 1
        if not seen_self:
            pending += 1
        if pending + running < count:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"gang {key} has {pending} pending and {running} running member(s), "
                f"fewer than its available-count {count}",
            )
        return None

    # --- Reserve -----------------------------------------------------------------------------
    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Record the member's reservation (being a Reserve plugin is also what runs Unreserve)."""
        key = self.gang_key(pod)
        if key:
            self.state(key, pod.metadata.uid).reserved.add(pod.metadata.uid)
        return None

    @hookimpl
    def kubesched_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member failed after Reserve: reject every waiting member and mark the gang
        rejected until the reservations are all released.  Idempotent."""
        key = self.gang_key(pod)
        if not key:
            return
        uid = pod.metadata.uid
        g = self.state(key, uid)
        g.reserved.discard(uid)
        g.permitted.discard(uid)
        msg = f"rejected in Unreserve: gang {key} lost member {pod.metadata.name}"
        now = self.handle.now()
        for wp in list(self._waiting(pod)):
            deadline = wp.pending.get(NAME)
            if deadline is not None and deadline <= now:
                # its own wait is over at this same instant: say so, whichever member's
                # timer the event loop happened to run first
                wp.reject(
                    NAME,
                    f"rejected due to timeout after waiting {go_duration(wp.timeouts[NAME])} at plugin {NAME}",
                )
            else:
                wp.reject(NAME, msg)
        if g.reserved and not g.rejected:
            g.rejected = f"member {pod.metadata.name} failed"

    # --- Permit ------------------------------------------------------------------------------
    @hookimpl
    def kubesched_permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status, float] | Status | None:
        """Wait until enough members are placed, then let the whole gang through."""
        key = self.gang_key(pod)
        if not key:
            return None
        count = self.available_count(pod)
        if isinstance(count, str):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"gang {key}: {count}")
        uid = pod.metadata.uid
        g = self.state(key, uid)
        waiting = [wp for wp in self._waiting(pod) if NAME in wp.get_pending_plugins()]
        members = self.members(pod.metadata.namespace, self.gang_name(pod), state)
        live = {p.metadata.uid for p in members}
        placed = {wp.pod.metadata.uid for wp in waiting}
        placed.update(u for u in g.permitted if u in live)  # permitted, not running yet
        placed.update(p.metadata.uid for p in members if p.spec.node_name)  # running
        placed.add(uid)
        if len(placed) >= count:
            g.permitted.add(uid)
            for wp in waiting:
                g.permitted.add(wp.pod.metadata.uid)
                wp.allow(NAME)
            return None
        to_activate = state.get(PODS_TO_ACTIVATE_KEY)
        if to_activate is not None:
            for p in members:
                u = p.metadata.uid
                if u not in placed and u not in g.reserved and not p.spec.node_name:
                    to_activate[u] = p
        return Status(
            Code.WAIT, f"gang {key}: {len(placed)} of {count} member(s) placed"
        ), self.timeout

    # --- PostBind ----------------------------------------------------------------------------
    @hookimpl
    def kubesched_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """The member is bound: it holds no reservation any more."""
        key = self.gang_key(pod)
        if key:
            g = self.gangs.get(key)
            if g is not None:
                g.reserved.discard(pod.metadata.uid)


def _first_time(qpi: QueuedPodInfo) -> float:
    t = qpi.initial_attempt_timestamp
    return qpi.timestamp if t is None else t


def new(args: Mapping[str, Any] | None, handle: Any) -> Gang:
    return Gang(parse_args(args), handle)


__all__ = [
    "DEFAULT_AVAILABLE_COUNT_LABEL",
    "DEFAULT_GROUP_NAME_LABEL",
    "DEFAULT_PERMIT_WAITING_TIME_SECONDS",
    "NAME",
    "Gang",
    "GangArgs",
    "GangState",
    "new",
    "parse_args",
]
