"""Gang: label-based gang scheduling, the lightweight coscheduling design (scheduler-plugins
``kep/2-lightweight-coscheduling``, superseded upstream by Coscheduling), specified below.

A pod joins a gang with two labels (keys set in the plugin's args)::

    gang.kubesched.io/name: train               # the gang's name
    gang.kubesched.io/available-count: "3"      # how many members must be placed together

A pod with only one of the two is "not gang-pod" for PreFilter and Permit (QueueSort and
Unreserve read the name alone, as the design does).  A gang is its name, in every namespace: the
design lists the gang's pods by label and keys its state by the name alone.  Hook by hook::

    QueueSort   by time alone: a gang pod has its gang's time (the creationTimestamp of the first
                member the queue compared), another pod its own; gangs at the same time by name
    PreFilter   a rejected gang: UnschedulableAndUnresolvable "gang <name> has been rejected";
                pending + running members (by phase, from the informer) fewer than the count:
                Unschedulable "not enough available pod for gang <name>" (preemption still runs
                and reports); a count that is not an integer: Error (strconv.Atoi's text)
    Reserve     nothing (being a Reserve plugin is what makes Unreserve run)
    Permit      a rejected gang: as in PreFilter; waiting + permitted-not-running + running + 1
                fewer than the count: Wait (permitWaitingTimeSeconds); otherwise allow every
                waiting member and remember them and this pod as permitted
    Unreserve   reject every waiting member ("gang's pod <pod> is unreserved") and mark the
                gang rejected
    CleanUp     every second: a gang whose first member reached Permit more than
                gangExpirationSeconds ago is forgotten (its time, its permitted pods, its
                rejection mark): a new gang with the same name starts fresh

``gangExpirationSeconds`` (the design's ``GangExpirationTime``, whose value the design does not give)
defaults to 300 s: longer than the Permit wait (60 s), so a gang rejected by a timeout stays
rejected (its members are turned away at PreFilter, holding nothing) instead of re-forming at
once, and equal to the queue's podMaxInUnschedulablePodsDuration (5 min), so by the time its
members come back from the unschedulable pods on the periodic flush, the gang starts fresh.

The design's CleanUp is a goroutine ticking every second from the plugin's start; here each hook
first drops what the ticks up to now would have dropped, which gives the same answers at every
instant without a timer of its own (nothing reacts to a clean-up but the next hook).

The design implements no EnqueueExtensions: a pod the plugin rejected is moved back by any Pod or
Node event (upstream's ``UnrollWildCardResource``).

Departures from the design, off by default (args): ``prioritySort`` orders by priority first (the
design's order within equal priority); ``shortGangUnresolvable`` turns away a gang short of members
as UnschedulableAndUnresolvable, so that preemption is not tried on its behalf;
``gangPreemption`` adds a PostFilter that preempts for the whole gang at once (below).

Gang preemption (``gangPreemption: true``, kubesched's own: neither this design nor upstream's
Coscheduling has it).  Upstream's DefaultPreemption frees room for one pod at a time, so a gang of
high-priority pods on a full cluster evicts a victim for its first member, waits at Permit for
members that find no room, times out and starts over, evicting again (scheduler-plugins #428,
#431, #581; volcano #3291).  With the argument on, a member that fits nowhere makes one decision
for the whole gang over the whole cluster (:mod:`kubesched.plugins._gangpreemption`): the victims
that every unplaced member needs are preempted together and each member is nominated to its
node, or, when the gang cannot reach its available-count even with every lower-priority pod gone,
nothing is evicted.  PostFilter, for a member (a pod that is "not gang-pod" is left to the next
PostFilter plugin: Unschedulable, no reason)::

    a rejected gang, or one short of members        UnschedulableAndUnresolvable, its PreFilter text
    no node failed with Unschedulable               UnschedulableAndUnresolvable (nothing to preempt)
    the gang preemption decided                     Success, the pod nominated
    otherwise                                       UnschedulableAndUnresolvable "preemption: ..."

UnschedulableAndUnresolvable ends the PostFilter plugins, so list Gang before DefaultPreemption in
``postFilter`` (``enabled: [{name: Gang}, {name: DefaultPreemption}]``, ``disabled: [{name:
DefaultPreemption}]``): after it, DefaultPreemption would already have preempted for the member
alone.

Every hook is a plain function: the framework runs them one at a time on the event loop, so the
design's mutex is not needed.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kubesched.framework import (
    Code,
    ConfigError,
    Handle,
    PostFilterResult,
    Status,
    go_value,
    hookimpl,
    parse_time,
    qualified_name_errors,
)
from kubesched.plugins._gangpreemption import GangPreemption

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeInfo, Pod, QueuedPodInfo

NAME = "Gang"

DEFAULT_GROUP_NAME_LABEL = "gang.kubesched.io/name"
DEFAULT_AVAILABLE_COUNT_LABEL = "gang.kubesched.io/available-count"
DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60
DEFAULT_GANG_EXPIRATION_SECONDS = 300
CLEANUP_PERIOD = 1.0
"""The design's CleanUp sleeps a second between two passes."""

GO_ZERO_TIME = -62135596800.0
"""``time.Time{}`` in Unix seconds: the creation time of a pod that has none."""

MEMBERS_STATE_KEY = "Gang/members"
"""CycleState key: (gang name, (running, pending) pods) as PreFilter listed them."""


# --- args ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GangArgs:
    """The plugin's args (pluginConfig, camelCase on the wire), defaulted."""

    group_name_label: str = DEFAULT_GROUP_NAME_LABEL
    available_count_label: str = DEFAULT_AVAILABLE_COUNT_LABEL
    permit_waiting_time_seconds: float = DEFAULT_PERMIT_WAITING_TIME_SECONDS
    gang_expiration_seconds: float = DEFAULT_GANG_EXPIRATION_SECONDS
    priority_sort: bool = False
    short_gang_unresolvable: bool = False
    gang_preemption: bool = False


_ARG_FIELDS = {
    "groupNameLabel": "group_name_label",
    "availableCountLabel": "available_count_label",
    "permitWaitingTimeSeconds": "permit_waiting_time_seconds",
    "gangExpirationSeconds": "gang_expiration_seconds",
    "prioritySort": "priority_sort",
    "shortGangUnresolvable": "short_gang_unresolvable",
    "gangPreemption": "gang_preemption",
}
_IGNORED_ARG_FIELDS = ("apiVersion", "kind")  # typed args may carry their type
MAX_WAIT_SECONDS = (2**63 - 1) // 10**9  # the longest time.Duration, in whole seconds


def _seconds(values: dict[str, Any], key: str, default: float) -> None:
    """Check a positive number of seconds a Go time.Duration can hold."""
    wait = values.get(_ARG_FIELDS[key], default)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)):
        raise ConfigError(
            f"Invalid value: {go_value(str(wait))}: must be a number of seconds", field=key
        )
    if not wait > 0:  # also catches NaN
        raise ConfigError(f"Invalid value: {wait}: must be greater than 0", field=key)
    if not wait <= MAX_WAIT_SECONDS:  # infinity, or past what a Go time.Duration holds
        raise ConfigError(
            f"Invalid value: {wait}: must be at most {MAX_WAIT_SECONDS} seconds", field=key
        )


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
    _seconds(values, "permitWaitingTimeSeconds", DEFAULT_PERMIT_WAITING_TIME_SECONDS)
    _seconds(values, "gangExpirationSeconds", DEFAULT_GANG_EXPIRATION_SECONDS)
    for key in ("prioritySort", "shortGangUnresolvable", "gangPreemption"):
        flag = values.get(_ARG_FIELDS[key], False)
        if not isinstance(flag, bool):
            raise ConfigError(f"Invalid value: {go_value(str(flag))}: must be a boolean", field=key)
    args = GangArgs(**values)
    if args.group_name_label == args.available_count_label:
        raise ConfigError(
            f"Invalid value: {go_value(args.available_count_label)}: must differ from groupNameLabel",
            field="availableCountLabel",
        )
    return args


# --- Go's strconv.Atoi -----------------------------------------------------------------------

_INT_MAX = 2**63 - 1


def atoi(s: str) -> int | str:
    """``strconv.Atoi`` on a 64-bit machine: the value, or the error's text."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not all("0" <= c <= "9" for c in body):
        return f"strconv.Atoi: parsing {go_value(s)}: invalid syntax"
    n = int(body)
    if s[:1] == "-":
        n = -n
    if not -_INT_MAX - 1 <= n <= _INT_MAX:
        return f"strconv.Atoi: parsing {go_value(s)}: value out of range"
    return n


@lru_cache(maxsize=4096)
def creation_second(ts: str | None) -> float:
    """A creationTimestamp in whole seconds (the API server keeps no more; the design relies on
    it), Go's zero time when there is none."""
    t = parse_time(ts)
    return GO_ZERO_TIME if t is None else float(math.floor(t))


def _pod_key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


# --- the plugin ------------------------------------------------------------------------------


class Gang:
    """All-or-nothing placement of the pods that share a gang label."""

    name = NAME

    def __init__(self, args: GangArgs, handle: Handle) -> None:
        self.args = args
        self.handle: Handle = handle
        self.name_label = args.group_name_label
        self.count_label = args.available_count_label
        self.timeout = float(args.permit_waiting_time_seconds)
        self.expiration = float(args.gang_expiration_seconds)
        # the design's four maps, by gang name
        self.created_at: dict[str, float] = {}  # firstGangPodCreatedAt
        self.permitted_at: dict[str, float] = {}  # firstGangPodPermittedAt
        self.permitted: dict[str, set[str]] = {}  # permittedGangPods ("namespace/name")
        self.rejected: set[str] = set()  # rejectedGangs
        self._expiries: list[tuple[float, str]] = []  # (permitted at + expiration, gang)
        self._started: float | None = None
        self._due = math.inf  # no CleanUp pass can drop anything before this instant
        try:
            self._started = float(handle.now())
        except Exception:  # no event loop yet: the first hook starts the clean-up clock
            self._started = None

    # --- CleanUp -----------------------------------------------------------------------------
    def clean_up(self) -> None:
        """Forget every gang the design's CleanUp would have forgotten by now: the passes run
        at the plugin's start + 1 s, + 2 s, ...; a pass drops a gang whose first Permit time
        plus the expiration is before it."""
        if not self._expiries and self._started is not None:
            return
        now = float(self.handle.now())
        if self._started is None:
            self._started = now
        if now < self._due:
            return
        passes = math.floor((now - self._started) / CLEANUP_PERIOD + 1e-9)
        last_pass = self._started + passes * CLEANUP_PERIOD
        heap = self._expiries
        while heap and heap[0][0] < last_pass:
            expiry, gang = heapq.heappop(heap)
            if self.permitted_at.get(gang) != expiry - self.expiration:
                continue  # a later session of the same name has its own entry
            del self.permitted_at[gang]
            self.created_at.pop(gang, None)
            self.permitted.pop(gang, None)
            self.rejected.discard(gang)
        self._due = self._pass_after(heap[0][0]) if heap else math.inf

    def _pass_after(self, expiry: float) -> float:
        """About when the first CleanUp pass after ``expiry`` runs (never later: a hook at or
        after it runs the pass's test exactly)."""
        assert self._started is not None
        k = max(1, math.floor((expiry - self._started) / CLEANUP_PERIOD) + 1)
        return self._started + k * CLEANUP_PERIOD - 1e-6

    def _first_permit(self, gang: str) -> None:
        if gang not in self.permitted_at:
            now = float(self.handle.now())
            if self._started is None:
                self._started = now
            self.permitted_at[gang] = now
            heapq.heappush(self._expiries, (now + self.expiration, gang))
            self._due = min(self._due, self._pass_after(now + self.expiration))

    # --- membership ---------------------------------------------------------------------------
    def gang_name(self, pod: Pod) -> str:
        """The pod's gang name ("" for a pod outside any gang)."""
        return pod.metadata.labels.get(self.name_label, "")

    def member(self, pod: Pod) -> tuple[str, str] | None:
        """(gang name, available-count label) of a pod with both labels; None for a pod the
        design calls "not gang-pod"."""
        labels = pod.metadata.labels
        gang = labels.get(self.name_label, "")
        count = labels.get(self.count_label, "")
        return (gang, count) if gang and count else None

    def rejected_status(self, gang: str) -> Status | None:
        """After the clean-up due by now: the status of a member of a rejected gang."""
        self.clean_up()
        if gang in self.rejected:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"gang {gang} has been rejected")
        return None

    def running_and_pending(self, gang: str, state: CycleState | None = None) -> tuple[list[Pod], list[Pod]]:
        """The gang's Running and Pending pods in the informer (every namespace).

        PreFilter keeps them in the cycle state for Permit: nothing can change in between
        (the scheduling cycle does not yield)."""
        if state is not None:
            cached = state.get(MEMBERS_STATE_KEY)
            if cached is not None and cached[0] == gang:
                members: tuple[list[Pod], list[Pod]] = cached[1]
                return members
        running: list[Pod] = []
        pending: list[Pod] = []
        for p in self.handle.cluster.pods_with_label(None, self.name_label, gang):
            phase = p.status.phase
            if phase == "Running":
                running.append(p)
            elif phase in ("Pending", ""):
                pending.append(p)
        if state is not None:
            state.write(MEMBERS_STATE_KEY, (gang, (running, pending)))
        return running, pending

    def waiting_pods(self, gang: str) -> list[Any]:
        """The framework's waiting pods of ``gang`` (``getWaitingPodsInGang``)."""
        label = self.name_label
        return [
            wp
            for wp in self.handle.iterate_over_waiting_pods()
            if wp.pod.metadata.labels.get(label) == gang
        ]

    # --- QueueSort ---------------------------------------------------------------------------
    @hookimpl
    def kubesched_queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """The design's ``Less``: earlier time first, the gang's time for a gang pod (fixed by
        the first member compared); two gangs at the same time by name.  Equal otherwise
        (the queue then keeps first in, first out).  With ``prioritySort``, priority first."""
        if self.args.priority_sort and a.priority != b.priority:
            return a.priority > b.priority
        if self._expiries:
            self.clean_up()
        pod1, pod2 = a.pod, b.pod
        label = self.name_label
        gang1 = pod1.metadata.labels.get(label, "")
        gang2 = pod2.metadata.labels.get(label, "")
        time1 = creation_second(pod1.metadata.creation_timestamp)
        time2 = creation_second(pod2.metadata.creation_timestamp)
        created = self.created_at
        if gang1:
            time1 = created.setdefault(gang1, time1)
        if gang2:
            time2 = created.setdefault(gang2, time2)
        if time1 == time2 and gang1 and gang2:
            return gang1 < gang2
        return time1 < time2

    # --- PreFilter ---------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Turn a member away while its gang is rejected or short of members."""
        member = self.member(pod)
        if member is None:
            return None  # not gang-pod
        gang, count = member
        rejected = self.rejected_status(gang)
        if rejected is not None:
            return rejected
        running, pending = self.running_and_pending(gang, state)
        n = atoi(count)
        if isinstance(n, str):
            return Status(Code.ERROR, n)
        if len(running) + len(pending) < n:
            code = (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                if self.args.short_gang_unresolvable
                else Code.UNSCHEDULABLE
            )
            return Status(code, f"not enough available pod for gang {gang}")
        return None

    # --- Reserve -----------------------------------------------------------------------------
    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Nothing: the design is a Reserve plugin for its Unreserve."""
        return None

    @hookimpl
    def kubesched_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member failed after Reserve: reject every waiting member, mark the gang rejected."""
        gang = self.gang_name(pod)
        if not gang:
            return
        self.clean_up()
        msg = f"gang's pod {pod.metadata.name} is unreserved"
        for wp in self.waiting_pods(gang):
            wp.reject(NAME, msg)
        self.rejected.add(gang)

    # --- Permit ------------------------------------------------------------------------------
    @hookimpl
    def kubesched_permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status, float] | Status | None:
        """Wait until enough members are placed, then let the whole gang through."""
        member = self.member(pod)
        if member is None:
            return None  # not gang-pod
        gang, count = member
        rejected = self.rejected_status(gang)
        if rejected is not None:
            return rejected
        self._first_permit(gang)
        running, _ = self.running_and_pending(gang, state)
        n = atoi(count)
        if isinstance(n, str):
            return Status(Code.ERROR, n)
        waiting = self.waiting_pods(gang)
        permitted = self.permitted.get(gang)
        permitted_not_running = 0
        if permitted:
            running_keys = {_pod_key(p) for p in running}
            permitted_not_running = sum(1 for k in permitted if k not in running_keys)
        if len(waiting) + permitted_not_running + len(running) + 1 < n:
            return Status(
                Code.WAIT,
                f"waiting for pod count to reach availableCnt {n}: "
                f"{len(waiting)} waiting, {len(running)} running",
            ), self.timeout
        permitted = self.permitted.setdefault(gang, set())
        for wp in waiting:
            wp.allow(NAME)
            permitted.add(_pod_key(wp.pod))
        permitted.add(_pod_key(pod))
        return None


class GangWithPreemption(Gang):
    """Gang with ``gangPreemption``: a PostFilter that preempts for the whole gang (see the
    module).  A class of its own, so that the plugin without the argument has no PostFilter."""

    def __init__(self, args: GangArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        self.preemption = GangPreemption(NAME, handle)

    @hookimpl
    async def kubesched_post_filter(
        self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """One preemption for the whole gang, or none."""
        member = self.member(pod)
        if member is None:
            return None, Status(Code.UNSCHEDULABLE)  # not gang-pod: the next plugin's
        gang, count = member
        rejected = self.rejected_status(gang)
        if rejected is not None:
            return None, rejected
        n = atoi(count)
        if isinstance(n, str):
            return None, Status(Code.ERROR, n)
        running, pending = self.running_and_pending(gang, state)
        if len(running) + len(pending) < n:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"not enough available pod for gang {gang}")
        if not any(st.code == Code.UNSCHEDULABLE for st in node_statuses.values()):
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        result, st = await self.preemption.preempt(pod, [*running, *pending], n, gang)
        if st.is_success():
            return result, st
        if st.code == Code.ERROR:
            return None, st
        return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "preemption: " + st.message)


def new(args: Mapping[str, Any] | None, handle: Handle) -> Gang:
    parsed = parse_args(args)
    if parsed.gang_preemption:
        return GangWithPreemption(parsed, handle)
    return Gang(parsed, handle)


__all__ = [
    "DEFAULT_AVAILABLE_COUNT_LABEL",
    "DEFAULT_GANG_EXPIRATION_SECONDS",
    "DEFAULT_GROUP_NAME_LABEL",
    "DEFAULT_PERMIT_WAITING_TIME_SECONDS",
    "NAME",
    "Gang",
    "GangArgs",
    "GangWithPreemption",
    "atoi",
    "new",
    "parse_args",
]
