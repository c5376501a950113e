"""The scheduler: informer, scheduling loop, binding cycles, failure handling.

``Scheduler.run()`` owns one task group: the informer (the transport's watch, applied to the
cluster state, the cache and the queue), the queue's periodic flushes, the scheduling loop, and
every binding cycle and background task (async preemption, status writes).  Leaving it cancels
everything.  The scheduling cycle (``schedule_one``) is CPU work on a snapshot; the binding cycle
does the I/O in its own task, so a slow bind never stalls scheduling.

Before each cycle the loop drains the watch events already delivered, so cluster changes made at
one virtual instant are always seen by the cycles that run at that instant: the same input gives
the same decisions on either backend.
"""

from __future__ import annotations

import collections
import logging
import math
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import anyio
import anyio.lowlevel
import msgspec
import numpy as np

from . import _events as ev
from ._cache import Cache, Snapshot
from ._config import SchedulerConfig
from ._errors import NotFoundError, TransportError
from ._extender import (
    EXTENDER_NAME,
    MAX_EXTENDER_PRIORITY,
    build_extenders,
    ignored_extended_resources,
    with_ignored_resources,
)
from ._framework import (
    MAX_NODE_SCORE,
    PODS_TO_ACTIVATE_KEY,
    CycleState,
    Framework,
    build_framework,
)
from ._nodeinfo import NodeBatch, NodeInfo, PodInfo
from ._objects import (
    Event,
    Node,
    ObjectMeta,
    ObjectReference,
    Pod,
    PodCondition,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
)
from ._queue import QueuedPodInfo, SchedulingQueue
from ._status import Code, Diagnosis, FitError, Status
from ._transport import Transport, WatchEvent

log = logging.getLogger("kubesched")

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DEFAULT_PERCENTAGE_BASE = 50
NOTE_LENGTH_LIMIT = 1024
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


def num_feasible_nodes_to_find(percentage: int | None, global_percentage: int, num_all_nodes: int) -> int:
    """``numFeasibleNodesToFind`` (cases B1–B6)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = global_percentage if percentage is None else percentage
    if pct <= 0:
        pct = DEFAULT_PERCENTAGE_BASE - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all_nodes * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def select_host(names: list[str], scores: np.ndarray, rng: random.Random) -> str:
    """``selectHost``: the top score; ties broken by reservoir sampling (cases C1–C4)."""
    if len(names) == 0:
        raise ValueError("empty priorityList")
    ties = np.flatnonzero(scores == scores.max())
    # reservoir sampling over the tied nodes picks each with probability 1/len(ties):
    # one draw gives the same distribution
    selected = int(ties[0]) if len(ties) == 1 else int(ties[rng.randrange(len(ties))])
    return names[selected]


def truncate_message(msg: str) -> str:
    if len(msg) <= NOTE_LENGTH_LIMIT:
        return msg
    suffix = " ..."
    return msg[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


class PodsToActivate(dict[str, Pod]):
    """``framework.PodsToActivate``: pods a plugin wants activated after this cycle (uid → pod)."""

    def clone(self) -> PodsToActivate:
        return self


_T = TypeVar("_T")
_MISSING: Any = object()


class PodStore(dict[str, Pod]):
    """The informer's pods by uid, with indexes by label value for the label keys asked for.

    ``with_label(namespace, key, value)`` lists the pods carrying ``key=value`` in the order a
    scan of the store would find them (the order of their uid's first insertion).  Every
    mutating dict method keeps the indexes current; a Pod must not be changed in place while
    stored (a new version is put instead, as the informers do).
    """

    def __init__(self) -> None:
        super().__init__()
        self._seq: dict[str, int] = {}  # uid -> its insertion number, the store's order
        self._next = 0
        # label key -> (namespace, value) -> {uid: pod}; and label key -> uid -> its bucket
        self._index: dict[str, dict[tuple[str, str], dict[str, Pod]]] = {}
        self._where: dict[str, dict[str, tuple[str, str]]] = {}
        self._unsorted: set[tuple[str, str, str]] = set()  # buckets out of store order

    # --- the index ------------------------------------------------------------------------
    def index_label(self, key: str) -> None:
        """Index the pods by the value of label ``key`` (idempotent)."""
        if key in self._index:
            return
        self._index[key] = {}
        self._where[key] = {}
        for uid, pod in self.items():
            self._index_put(key, uid, pod)

    def with_label(self, namespace: str, key: str, value: str) -> list[Pod]:
        """The pods in ``namespace`` with label ``key`` equal to ``value``, in store order."""
        self.index_label(key)
        bucket = self._index[key].get((namespace, value))
        if not bucket:
            return []
        if (key, namespace, value) in self._unsorted:
            self._unsorted.discard((key, namespace, value))
            seq = self._seq
            ordered = sorted(bucket.items(), key=lambda kv: seq[kv[0]])
            bucket.clear()
            bucket.update(ordered)
        return list(bucket.values())

    def _index_put(self, key: str, uid: str, pod: Pod) -> None:
        value = pod.metadata.labels.get(key)
        where = self._where[key]
        at = (pod.metadata.namespace, value) if value is not None else None
        prev = where.get(uid)
        index = self._index[key]
        if prev == at:
            if at is not None:
                index[at][uid] = pod  # same bucket: the position is kept
            return
        if prev is not None:
            self._index_drop(key, uid, prev)
        if at is None:
            return
        where[uid] = at
        bucket = index.setdefault(at, {})
        if bucket and self._seq[next(reversed(bucket))] > self._seq[uid]:
            self._unsorted.add((key, *at))
        bucket[uid] = pod

    def _index_drop(self, key: str, uid: str, at: tuple[str, str]) -> None:
        del self._where[key][uid]
        index = self._index[key]
        bucket = index[at]
        del bucket[uid]
        if not bucket:
            del index[at]
            self._unsorted.discard((key, *at))

    def _forget(self, uid: str) -> None:
        del self._seq[uid]
        for key, where in self._where.items():
            at = where.get(uid)
            if at is not None:
                self._index_drop(key, uid, at)

    # --- dict -----------------------------------------------------------------------------
    def __setitem__(self, uid: str, pod: Pod) -> None:
        if uid not in self._seq:
            self._seq[uid] = self._next
            self._next += 1
        super().__setitem__(uid, pod)
        for key in self._index:
            self._index_put(key, uid, pod)

    def __delitem__(self, uid: str) -> None:
        super().__delitem__(uid)
        self._forget(uid)

    @overload
    def pop(self, uid: str, /) -> Pod: ...
    @overload
    def pop(self, uid: str, default: Pod, /) -> Pod: ...
    @overload
    def pop(self, uid: str, default: _T, /) -> Pod | _T: ...
    def pop(self, uid: str, default: Any = _MISSING, /) -> Any:
        if uid in self:
            pod = super().pop(uid)
            self._forget(uid)
            return pod
        if default is _MISSING:
            raise KeyError(uid)
        return default

    def popitem(self) -> tuple[str, Pod]:
        uid, pod = super().popitem()
        self._forget(uid)
        return uid, pod

    def clear(self) -> None:
        super().clear()
        self._seq.clear()
        self._unsorted.clear()
        for key in self._index:
            self._index[key] = {}
            self._where[key] = {}

    def setdefault(self, uid: str, default: Pod) -> Pod:  # type: ignore[override]
        if uid not in self:
            self[uid] = default
        return self[uid]

    def update(self, *args: Any, **kwargs: Pod) -> None:  # type: ignore[override]
        for uid, pod in dict(*args, **kwargs).items():
            self[uid] = pod

    def __ior__(self, other: Any) -> PodStore:  # type: ignore[override,misc]
        self.update(other)
        return self


class ClusterState:
    """What the informers hold: every object the transport reported, by identity."""

    def __init__(self) -> None:
        self.pods: PodStore = PodStore()
        self.pod_keys: dict[tuple[str, str], str] = {}
        self.nodes: dict[str, Node] = {}
        self.pdbs: dict[tuple[str, str], PodDisruptionBudget] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.pod_groups: dict[tuple[str, str], PodGroup] = {}

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        uid = self.pod_keys.get((namespace, name))
        return self.pods.get(uid) if uid else None

    def pod_by_uid(self, uid: str) -> Pod | None:
        return self.pods.get(uid)

    def list_pods(self, namespace: str | None = None) -> list[Pod]:
        if namespace is None:
            return list(self.pods.values())
        return [p for p in self.pods.values() if p.metadata.namespace == namespace]

    def index_label(self, key: str) -> None:
        """Keep an index of the pods by label ``key`` for :meth:`pods_with_label`."""
        self.pods.index_label(key)

    def pods_with_label(self, namespace: str, key: str, value: str) -> list[Pod]:
        """The pods in ``namespace`` labelled ``key=value``, in :attr:`pods` order (indexed:
        the first call for a key not yet indexed builds its index)."""
        return self.pods.with_label(namespace, key, value)

    def list_pdbs(self) -> list[PodDisruptionBudget]:
        return list(self.pdbs.values())

    def get_pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self.pod_groups.get((namespace, name))


@dataclass
class ScheduleResult:
    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0


# Nominating info: None is Noop (keep the pod's nomination); a string is Override ("" clears).
CLEAR_NOMINATION = ""


class Metrics:
    """Counters the scheduler keeps (exported under upstream's names by kubesched.metrics)."""

    def __init__(self) -> None:
        self.schedule_attempts: dict[str, int] = {"scheduled": 0, "unschedulable": 0, "error": 0}
        self.attempt_durations: list[float] = []
        self.preemption_attempts = 0
        self.preemptions = 0  # preemptions that chose a node and evicted its victims
        self.preemption_victims: list[int] = []

    @property
    def attempts(self) -> int:
        return sum(self.schedule_attempts.values())


class Scheduler:
    """A kube-scheduler: profiles (Frameworks), a queue, a cache, over a transport."""

    def __init__(
        self,
        transport: Transport,
        config: SchedulerConfig | None = None,
        *,
        registry: Mapping[str, Callable[[Any, Framework], Any]] | None = None,
        seed: int = 0,
        record_timings: bool = False,
        assumed_pod_ttl: float = 0.0,
        deterministic: bool = False,
    ) -> None:
        """``deterministic`` (simulations): before each scheduling cycle, let every binding cycle
        and background task that can make progress at this instant finish (or park at Permit),
        so that the same input gives the same decisions on any event loop.  A live scheduler
        leaves it off: a slow bind must never stall the scheduling loop."""
        from ._entrypoints import all_plugins

        self.transport = transport
        self.config = config or SchedulerConfig()
        self.registry = all_plugins()  # entry points < in-tree < the caller's registry
        if registry:
            self.registry.update(registry)
        self.rng = random.Random(seed)
        self.cluster = ClusterState()
        self.cache = Cache(ttl=assumed_pod_ttl)
        self.snapshot = Snapshot()
        self.metrics = Metrics()
        self.record_timings = record_timings
        self.profiles: dict[str, Framework] = {}
        # ``buildExtenders``: HTTP extenders, in config order (``extenders: list[Any]`` so tests may
        # put fakes with the same methods); ignoredByScheduler resources go to NodeResourcesFit
        self.extenders: list[Any] = list(build_extenders(self.config.extenders))
        ignored = ignored_extended_resources([e.config for e in self.extenders])
        for prof in self.config.profiles:
            fw = build_framework(with_ignored_resources(prof, ignored), self.registry)
            # before the queue asks the profiles for their events (EventsToRegister may
            # depend on a gate, e.g. DefaultPreemption's SchedulerAsyncPreemption)
            fw.feature_gates = dict(self.config.feature_gates)
            fw.deterministic = deterministic
            self.profiles[prof.scheduler_name] = fw
        self.queue = SchedulingQueue(
            self.profiles,
            pod_initial_backoff=self.config.pod_initial_backoff_seconds,
            pod_max_backoff=self.config.pod_max_backoff_seconds,
            pod_exists=self._pod_exists,
            queueing_hints=self.config.feature_gates.get("SchedulerQueueingHints", True),
            pop_from_backoff_q=self.config.feature_gates.get("SchedulerPopFromBackoffQ", False),
        )
        for fw in self.profiles.values():
            fw.snapshot = self.snapshot
            fw.nominator = self.queue.nominator
            fw.cluster = self.cluster
            fw.client = transport
            fw.scheduler = self
            fw.feature_gates = dict(self.config.feature_gates)
            wall_clock = getattr(transport, "wall_clock", None)
            if callable(wall_clock):
                fw.wall_clock = wall_clock
            fw.rng = self.rng
        self.next_start_node_index = 0
        self._tg: anyio.abc.TaskGroup | None = None
        self._watch: Any = None
        self._relist_seen: set[tuple[str, Any]] | None = None
        self._synced = anyio.Event()
        self._binding_tasks = 0
        self._reports: dict[str, collections.deque[tuple[Any, ...]]] = {}
        self.deterministic = deterministic
        self._active = 0  # binding cycles and background tasks not parked at Permit
        self._tickets = 0
        self._turns_done = 0
        self._turns_skipped: set[int] = set()
        self._turn_events: dict[int, anyio.Event] = {}
        self._settled: anyio.Event | None = None
        self.pre_cycle_hooks: list[Callable[[], object]] = []
        self._wake_sources: list[Callable[[], float | None]] = []
        self._kick: anyio.Event | None = None
        self._idle_waiter: anyio.Event | None = None
        self._background_tasks = 0
        self.scheduled_count = 0
        self.on_idle_check: Callable[[], None] | None = None
        self.last_activity = 0.0

    # --- lifecycle --------------------------------------------------------------------------
    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled.  ``task_status.started()`` fires once the cache is synced."""
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._informer)
                await self._synced.wait()
                if self.deterministic:
                    self.queue.start_ticks()
                else:
                    tg.start_soon(self.queue.run)
                if self.cache.ttl > 0:
                    tg.start_soon(self._cleanup_assumed_pods)
                tg.start_soon(self._deterministic_loop if self.deterministic else self._scheduling_loop)
                task_status.started()
        finally:
            if self.extenders:  # their HTTP clients
                with anyio.CancelScope(shield=True):
                    for ext in self.extenders:
                        aclose = getattr(ext, "aclose", None)
                        if aclose is not None:
                            await aclose()

    async def _cleanup_assumed_pods(self) -> None:
        """Every second, expire assumed pods whose binding finished long ago (upstream's TTL)."""
        while True:
            await anyio.sleep(1.0)
            for uid in self.cache.cleanup_expired(anyio.current_time()):
                log.warning("assumed pod %s expired without its Add", uid)
                pod = self.cluster.pods.get(uid)
                if pod is not None:
                    self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, pod, None)

    async def wait_synced(self) -> None:
        await self._synced.wait()

    def spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run ``fn(*args)`` as a background task of the scheduler's task group."""
        assert self._tg is not None, "the scheduler is not running"
        self._background_tasks += 1
        self._active += 1
        self._tg.start_soon(self._background, fn, args, self._ticket())

    async def _background(
        self, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...], ticket: int | None
    ) -> None:
        try:
            await self._take_turn(ticket)
            await fn(*args)
        except Exception:
            log.exception("background task %s failed", getattr(fn, "__name__", fn))
        finally:
            self._end_turn(ticket)
            self._background_tasks -= 1
            self._deactivate()
            self._touch()

    # Turns (deterministic mode): tasks that become runnable at one instant — new binding
    # cycles, binding cycles released from Permit, background tasks — run one after another
    # in the order they became runnable, not in the order the event loop happens to pick.
    def _ticket(self) -> int | None:
        if not self.deterministic:
            return None
        self._tickets += 1
        return self._tickets

    async def _take_turn(self, ticket: int | None) -> None:
        if ticket is None:
            return
        while self._turns_done + 1 < ticket and ticket not in self._turns_skipped:
            event = self._turn_events.setdefault(ticket, anyio.Event())
            await event.wait()
            self._turn_events.pop(ticket, None)
        self._drain()  # the turn sees every change made before it

    def _end_turn(self, ticket: int | None) -> None:
        if ticket is None:
            return
        self._turns_skipped.add(ticket)
        while self._turns_done + 1 in self._turns_skipped:
            self._turns_done += 1
            self._turns_skipped.discard(self._turns_done)
        event = self._turn_events.get(self._turns_done + 1)
        if event is not None:
            event.set()

    def _deactivate(self) -> None:
        self._active -= 1
        if self._active == 0 and self._settled is not None:
            self._settled.set()
            self._settled = None

    def _reactivate(self) -> None:
        self._active += 1

    async def _settle(self) -> None:
        """Wait until no binding cycle or background task can make progress (deterministic)."""
        while self._active > 0:
            if self._settled is None:
                self._settled = anyio.Event()
            await self._settled.wait()

    def _touch(self) -> None:
        self.last_activity = anyio.current_time()

    def is_idle(self) -> bool:
        """Nothing queued to run, in flight, binding, waiting on Permit, or in the background."""
        if self.queue.busy() or self._binding_tasks or self._background_tasks:
            return False
        if any(fw.waiting_pods for fw in self.profiles.values()):
            return False
        if self._relist_seen is not None:  # re-listing after a dropped watch
            return False
        pending = getattr(self._watch, "pending", None)
        return not (callable(pending) and pending())

    # --- informer ---------------------------------------------------------------------------
    async def _informer(self) -> None:
        """List then watch; on a dropped watch, re-list with backoff and reconcile."""
        backoff = 1.0
        while True:
            self._watch = self.transport.watch()
            try:
                async for event in self._watch:
                    self._handle(event)
                    self._drain()
                    if event.type == "SYNCED":
                        backoff = 1.0
                        if self.deterministic:
                            # from now on only the loop takes events, at fixed points; a
                            # delivery just wakes it
                            self._watch.on_push = self._kick_loop
                            return
                return
            except TransportError as e:
                log.warning("watch failed (%s); re-listing in %.0fs", e, backoff)
                self._relist_seen = set()  # not idle until the re-list is reconciled
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, 30.0)

    def _reconcile_relist(self) -> None:
        """After a re-list: objects the new listing did not show were deleted meanwhile."""
        seen = self._relist_seen
        self._relist_seen = None
        if seen is None:
            return
        for uid, pod in list(self.cluster.pods.items()):
            if ("Pod", uid) not in seen:
                self._on_pod("DELETED", pod)
        for name, node in list(self.cluster.nodes.items()):
            if ("Node", name) not in seen:
                self._on_node("DELETED", node)
        for table, kind in ((self.cluster.pdbs, "PodDisruptionBudget"), (self.cluster.pod_groups, "PodGroup")):
            for key in list(table):
                if (kind, key) not in seen:
                    del table[key]

    def _drain(self) -> None:
        get = getattr(self._watch, "get_nowait", None)
        if get is None:
            return
        while True:
            event = get()
            if event is None:
                return
            self._handle(event)

    def _handle(self, event: WatchEvent) -> None:
        self._touch()
        if event.type == "SYNCED":
            self._reconcile_relist()
            self._synced.set()
            return
        obj = event.obj
        kind = type(obj)
        if self._relist_seen is not None:
            md = obj.metadata
            if kind is Pod:
                self._relist_seen.add(("Pod", md.uid))
            elif kind is Node:
                self._relist_seen.add(("Node", md.name))
            else:
                self._relist_seen.add((kind.__name__, (md.namespace, md.name)))
        if kind is Pod:
            self._on_pod(event.type, obj)
        elif kind is Node:
            self._on_node(event.type, obj)
        elif kind is PodDisruptionBudget:
            key = (obj.metadata.namespace, obj.metadata.name)
            if event.type == "DELETED":
                self.cluster.pdbs.pop(key, None)
            else:
                self.cluster.pdbs[key] = obj
        elif kind is PriorityClass:
            if event.type == "DELETED":
                self.cluster.priority_classes.pop(obj.metadata.name, None)
            else:
                self.cluster.priority_classes[obj.metadata.name] = obj
        elif kind is PodGroup:
            key = (obj.metadata.namespace, obj.metadata.name)
            old = self.cluster.pod_groups.get(key)
            if event.type == "DELETED":
                self.cluster.pod_groups.pop(key, None)
                return
            self.cluster.pod_groups[key] = obj
            action = ev.ActionType.ADD if old is None else ev.ActionType.UPDATE_POD_OTHER
            self.queue.move_all_to_active_or_backoff(
                ev.ClusterEvent(ev.Resource.POD_GROUP, action, "PodGroupChange"), old, obj
            )

    def _responsible(self, pod: Pod) -> bool:
        return pod.spec.scheduler_name in self.profiles

    def _pod_exists(self, pod: Pod) -> bool:
        return pod.metadata.uid in self.cluster.pods

    def _on_node(self, type_: str, node: Node) -> None:
        name = node.metadata.name
        old = self.cluster.nodes.get(name)
        if type_ == "DELETED":
            self.cluster.nodes.pop(name, None)
            self.cache.remove_node(name)
            return
        self.cluster.nodes[name] = node
        if old is None:
            self.cache.add_node(node)
        else:
            self.cache.update_node(node)
        # preCheckForNode: only with queueing hints off (upstream skips it when they are on)
        pre_check = None
        if not self.queue.queueing_hints:
            pre_check = _pre_check_for_node(self.cache.node_infos[name])
        if old is None:
            self.queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, node, pre_check)
        else:
            for e in ev.node_update_events(old, node):
                self.queue.move_all_to_active_or_backoff(e, old, node, pre_check)

    def _on_pod(self, type_: str, pod: Pod) -> None:
        uid = pod.metadata.uid
        old = self.cluster.pods.get(uid)
        if type_ == "DELETED":
            self.cluster.pods.pop(uid, None)
            self.cluster.pod_keys.pop((pod.metadata.namespace, pod.metadata.name), None)
            if pod.spec.node_name or (old is not None and old.spec.node_name):
                self._reject_waiting(uid)
                self.cache.remove_pod(uid)
                self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, pod, None)
            else:
                rejected = self._reject_waiting(uid)
                self.queue.delete(pod)
                if rejected:
                    self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, pod, None)
                else:
                    self.queue.move_all_to_active_or_backoff(ev.UNSCHEDULED_POD_DELETE, pod, None)
            return
        self.cluster.pods[uid] = pod
        self.cluster.pod_keys[(pod.metadata.namespace, pod.metadata.name)] = uid
        if pod.spec.node_name:
            if old is not None and not old.spec.node_name:
                # it left the queue: scheduled (by us, confirmed) or bound by someone else
                self.queue.delete(old)
            if old is None or not old.spec.node_name:
                self.cache.add_pod(pod)
                self.queue.assigned_pod_added(pod)
            else:
                self.cache.update_pod(pod)
                events = ev.pod_update_events(old, pod, ev.Resource.ASSIGNED_POD)
                if pod.metadata.deletion_timestamp and not old.metadata.deletion_timestamp:
                    events = [ev.ClusterEvent(ev.Resource.ASSIGNED_POD, ev.ActionType.UPDATE_POD_SCALE_DOWN)]
                self.queue.assigned_pod_updated(old, pod, events)
            return
        if not self._responsible(pod):
            return
        if old is None:
            if pod.metadata.deletion_timestamp:
                return
            self.queue.add(pod)
        elif not self.cache.is_assumed(uid):
            self.queue.update(old, pod)

    def _reject_waiting(self, uid: str) -> bool:
        return any(fw.reject_waiting_pod(uid) for fw in self.profiles.values())

    # --- scheduling loop ----------------------------------------------------------------------
    # --- the deterministic loop (simulations) -----------------------------------------------
    def _kick_loop(self) -> None:
        if self._kick is not None:
            self._kick.set()
            self._kick = None

    def add_wake_source(self, next_due: Callable[[], float | None], run_due: Callable[[], object]) -> None:
        """A timed event source for the deterministic loop: when it is next due, and what to do
        then (e.g. the fake cluster's terminations, a simulation's arrivals)."""
        self._wake_sources.append(next_due)
        self.pre_cycle_hooks.append(run_due)

    def _next_wake(self, *, for_idle: bool = False) -> float | None:
        times = [t for src in self._wake_sources if (t := src()) is not None]
        times += [t for fw in self.profiles.values() if (t := fw.next_permit_deadline()) is not None]
        if not for_idle or self.queue.busy():
            tick = self.queue.next_tick()
            if tick is not None:
                times.append(tick)
        return min(times, default=None)

    async def wait_idle(self) -> None:
        """Wait until nothing more can happen (deterministic mode): no pod to schedule now or
        after a backoff, no binding or background task, no waiting pod, no timed event due."""
        self._idle_waiter = anyio.Event()
        await self._idle_waiter.wait()

    async def _deterministic_loop(self) -> None:
        """One scheduling loop that owns every timed event of a simulation.

        At each instant: let runnable tasks finish (in turn order), then run what is due in a
        fixed order — timed sources (terminations, arrivals), delivered watch events, the queue's
        flushes, Permit timeouts — and only then pop the next pod.  Nothing depends on the
        order in which the event loop runs ready tasks, so asyncio and trio agree exactly.
        """
        self.queue.on_change = self._kick_loop
        while True:
            await self._settle()
            now = self._run_due()
            if self._active > 0:
                continue
            qpi = self.queue.pop_nowait()
            if qpi is not None:
                await self.schedule_one(qpi)
                continue
            if self._idle_waiter is not None and self._next_wake(for_idle=True) is None and self.is_idle():
                self._idle_waiter.set()
                self._idle_waiter = None
            self._kick = kick = anyio.Event()
            wake = self._next_wake()
            with anyio.move_on_after(max(0.0, wake - now) if wake is not None else math.inf):
                await kick.wait()

    def _run_due(self) -> float:
        """Everything due at this instant, before the next pop, in a fixed order: timed sources,
        delivered watch events, the queue's periodic flushes, Permit timeouts."""
        for hook in self.pre_cycle_hooks:
            hook()
        self._drain()
        self.queue.run_due_flushes()
        now = anyio.current_time()
        for fw in self.profiles.values():
            fw.expire_waiting_pods(now)
        return now

    async def _scheduling_loop(self) -> None:
        while True:
            self._run_due()
            qpi = self.queue.pop_nowait()
            if qpi is None:
                await self.queue.wait_for_pods()
                continue
            await self.schedule_one(qpi)
            await anyio.lowlevel.checkpoint()

    async def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """``ScheduleOne`` for a popped pod."""
        pod = qpi.pod
        fw = self.profiles.get(pod.spec.scheduler_name)
        if fw is None:
            self.queue.done(qpi.uid)
            return
        if pod.metadata.deletion_timestamp or self.cache.is_assumed(qpi.uid):
            self.queue.done(qpi.uid)
            return
        self._touch()
        start = anyio.current_time()
        state = CycleState()
        state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
        result, assumed_pi, status, nominating = await self.scheduling_cycle(fw, state, qpi)
        if status is not None and not status.is_success():
            await self.handle_scheduling_failure(fw, qpi, status, nominating, start)
            return
        self._binding_tasks += 1
        self._active += 1
        assert self._tg is not None
        waiting = fw.get_waiting_pod(assumed_pi.uid) is not None
        ticket = None if waiting else self._ticket()
        self._tg.start_soon(self._binding_task, fw, state, qpi, assumed_pi, result, start, ticket)

    async def scheduling_cycle(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo
    ) -> tuple[ScheduleResult, PodInfo, Status | None, str | None]:
        """``schedulingCycle``: (result, assumed pod info, status, nominating info)."""
        pod = qpi.pod
        try:
            result = await self.schedule_pod(fw, state, qpi.pod_info)
        except FitError as fe:
            if not fw.has_post_filter_plugins():
                return ScheduleResult(), qpi.pod_info, self._fit_status(fe), None
            statuses = _FullStatusMap(fe.diagnosis, self.snapshot.names, self.snapshot.index)
            pf_result, pf_status = await fw.run_post_filter_plugins(state, pod, statuses)
            fe.diagnosis.post_filter_msg = pf_status.message
            nominating = pf_result.nominated_node_name if pf_result is not None else None
            return ScheduleResult(), qpi.pod_info, self._fit_status(fe), nominating
        except _CycleError as ce:
            return ScheduleResult(), qpi.pod_info, ce.status, CLEAR_NOMINATION
        host = result.suggested_host
        assumed = msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=host))
        assumed_pi = qpi.pod_info.with_pod(assumed)
        try:
            self.cache.assume_pod(assumed_pi, host)
        except Exception as e:
            return result, assumed_pi, Status.as_error(e), CLEAR_NOMINATION
        self.queue.nominator.delete(assumed_pi.uid)
        st = fw.run_reserve_plugins_reserve(state, assumed, host)
        if st is not None and not st.is_success():
            await fw.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed_pi.uid)
            return result, assumed_pi, self._single_node_status(st, host), CLEAR_NOMINATION
        st = fw.run_permit_plugins(state, assumed, host)
        if st is not None and not st.is_success() and not st.is_wait():
            await fw.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed_pi.uid)
            return result, assumed_pi, self._single_node_status(st, host), CLEAR_NOMINATION
        to_activate: PodsToActivate = state.read(PODS_TO_ACTIVATE_KEY)
        if to_activate:
            self.queue.activate(list(to_activate.values()))
            to_activate.clear()
        return result, assumed_pi, None, None

    @staticmethod
    def _fit_status(fe: FitError) -> Status:
        st = Status(Code.UNSCHEDULABLE, str(fe))
        st.error = fe
        return st

    @staticmethod
    def _single_node_status(st: Status, host: str) -> Status:
        """A Reserve / Permit rejection as a FitError over the one chosen node."""
        if not st.is_rejected():
            return st
        d = Diagnosis(node_to_status={host: st}, unschedulable_plugins={st.plugin} if st.plugin else set())
        fe = FitError("", 1, d)
        out = Status(st.code, str(fe), plugin=st.plugin)
        out.error = fe
        return out

    # --- finding nodes -----------------------------------------------------------------------
    async def schedule_pod(self, fw: Framework, state: CycleState, pi: PodInfo) -> ScheduleResult:
        """``schedulePod``: snapshot, filter, score, select.  Raises FitError / _CycleError."""
        self.snapshot.update(self.cache)
        n = len(self.snapshot)
        if n == 0:
            raise _CycleError(Status(Code.ERROR, ERR_NO_NODES_AVAILABLE))
        feasible, diagnosis = await self.find_nodes_that_fit_pod(fw, state, pi)
        if len(feasible) == 0:
            fe = FitError(pi.key, n, diagnosis)
            raise fe
        if len(feasible) == 1:
            return ScheduleResult(feasible.names[0], 1 + len(diagnosis.node_to_status), 1)
        total = await self.prioritize_nodes(fw, state, pi.pod, feasible)
        host = select_host(feasible.names, total, self.rng)
        return ScheduleResult(host, len(feasible) + len(diagnosis.node_to_status), len(feasible))

    async def prioritize_nodes(self, fw: Framework, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        """``prioritizeNodes``: PreScore, Score, then the extenders' weighted scores added."""
        extenders = self.extenders
        if not extenders and not fw.has_score_plugins():
            return np.ones(len(nodes), dtype=np.int64)
        st = fw.run_pre_score_plugins(state, pod, nodes)
        if st is not None and not st.is_success():
            raise _CycleError(st)
        total, _, st = fw.run_score_plugins(state, pod, nodes)
        if st is not None:
            raise _CycleError(st)
        if extenders and len(nodes):
            total = total + await self._prioritize_extenders(pod, nodes)
        return total

    async def _prioritize_extenders(self, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        """The interested extenders' Prioritize, concurrently; an extender's error is ignored
        (the other scores decide).  Each score counts ``score × weight × (100 / 10)``."""
        results: list[tuple[list[tuple[str, int]], int]] = []

        async def call(ext: Any) -> None:
            try:
                results.append(await ext.prioritize(pod, nodes))
            except Exception as e:
                log.debug("extender %s's Prioritize failed; no score given by it: %s", ext.name, e)

        async with anyio.create_task_group() as tg:
            for ext in self.extenders:
                if ext.is_interested(pod):
                    tg.start_soon(call, ext)
        extra = np.zeros(len(nodes), dtype=np.int64)
        position = {name: i for i, name in enumerate(nodes.names)}
        scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
        for host_scores, weight in results:
            for host, score in host_scores:
                i = position.get(host)
                if i is not None:
                    extra[i] += score * weight * scale
        return extra

    async def find_nodes_that_fit_pod(
        self, fw: Framework, state: CycleState, pi: PodInfo
    ) -> tuple[NodeBatch, Diagnosis]:
        """``findNodesThatFitPod``: PreFilter, the nominated node first, then sampled Filter."""
        pod = pi.pod
        snap = self.snapshot
        diagnosis = Diagnosis()
        pre_res, st, rejected = fw.run_pre_filter_plugins(state, pod, snap.node_infos)
        diagnosis.unschedulable_plugins = set(rejected)
        if st is not None and not st.is_success():
            if not st.is_rejected():
                raise _CycleError(st)
            diagnosis.absent_status = st
            diagnosis.pre_filter_msg = st.message
            if st.code == Code.PENDING:
                diagnosis.pending_plugins = set(rejected)
            return NodeBatch([]), diagnosis
        nnn = pod.status.nominated_node_name
        if nnn:
            idx = snap.index.get(nnn)
            if idx is not None:
                feasible = await self.find_nodes_that_pass_filters(
                    fw, state, pi, diagnosis, np.array([idx], dtype=np.int64), advance=False
                )
                if len(feasible):
                    return feasible, diagnosis
        if pre_res is not None and pre_res.node_names is not None:
            candidates = np.array(
                sorted(snap.index[n] for n in pre_res.node_names if n in snap.index), dtype=np.int64
            )
            diagnosis.absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(rejected))}]",
            )
        else:
            candidates = np.arange(len(snap), dtype=np.int64)
        feasible = await self.find_nodes_that_pass_filters(fw, state, pi, diagnosis, candidates, advance=True)
        return feasible, diagnosis

    async def find_nodes_that_pass_filters(
        self,
        fw: Framework,
        state: CycleState,
        pi: PodInfo,
        diagnosis: Diagnosis,
        candidates: np.ndarray,
        *,
        advance: bool,
    ) -> NodeBatch:
        """``findNodesThatPassFilters``: evaluate nodes from the round-robin start until enough
        feasible ones are found; exactly the nodes a sequential upstream would evaluate."""
        snap = self.snapshot
        n = len(candidates)
        if n == 0:
            return NodeBatch([])
        extenders = self.extenders
        to_find = num_feasible_nodes_to_find(
            fw.percentage_of_nodes_to_score, self.config.percentage_of_nodes_to_score, n
        )
        if not fw.has_score_plugins() and not any(e.is_filter() or e.is_prioritizer() for e in extenders):
            to_find = 1  # neither extender filters nor scoring: the first feasible node will do
        start = self.next_start_node_index % n if advance else 0
        order = candidates[(start + np.arange(n)) % n]
        if not fw.has_filter_plugins():
            chosen = order[:to_find]
            if advance:
                self.next_start_node_index = (self.next_start_node_index + len(chosen)) % n
            return await self._pass_extenders(pi, NodeBatch(snapshot=snap, indices=chosen), diagnosis, advance)
        nominated = self._nodes_with_nominated_pods(pi)
        feasible: list[int] = []  # positions in ``order``
        # the rejected positions in ``order`` and their statuses, in the order they were found;
        # plugins share one Status among the nodes rejected for one reason, so the checks below
        # look at each distinct status once
        failed_pos: list[np.ndarray] = []
        failed_sts: list[Status] = []
        pos = 0
        chunk = 0
        while pos < n and len(feasible) < to_find:
            chunk = max(to_find - len(feasible), chunk * 2, 1)
            seg = order[pos : pos + chunk]
            ok, seg_pos, seg_sts = self._filter_segment(fw, state, pi, seg, nominated)
            if seg_sts:
                distinct = dict(zip(map(id, seg_sts), seg_sts, strict=True)).values()
                if any(st.code == Code.ERROR for st in distinct):
                    raise _CycleError(next(st for st in seg_sts if st.code == Code.ERROR))
                failed_pos.append(seg_pos + pos)
                failed_sts.extend(seg_sts)
            feasible.extend((ok + pos).tolist())
            pos += len(seg)
        if len(feasible) > to_find:
            feasible = feasible[:to_find]
        processed = (feasible[-1] + 1) if len(feasible) == to_find else n
        if failed_sts:
            all_pos = np.concatenate(failed_pos) if len(failed_pos) > 1 else failed_pos[0]
            if processed < n:
                evaluated = all_pos < processed
                failed_sts = [st for st, e in zip(failed_sts, evaluated.tolist(), strict=True) if e]
                all_pos = all_pos[evaluated]
            names = snap.names
            diagnosis.node_to_status.update(
                zip([names[i] for i in order[all_pos].tolist()], failed_sts, strict=True)
            )
            for st in dict(zip(map(id, failed_sts), failed_sts, strict=True)).values():
                if st.plugin and st.is_rejected():
                    diagnosis.unschedulable_plugins.add(st.plugin)
                if st.code == Code.PENDING and st.plugin:
                    diagnosis.pending_plugins.add(st.plugin)
        if advance:
            self.next_start_node_index = (self.next_start_node_index + processed) % n
        chosen = order[np.array(feasible, dtype=np.int64)] if feasible else np.array([], dtype=np.int64)
        return await self._pass_extenders(pi, NodeBatch(snapshot=snap, indices=chosen), diagnosis, advance)

    async def _pass_extenders(
        self, pi: PodInfo, nodes: NodeBatch, diagnosis: Diagnosis, main_pass: bool
    ) -> NodeBatch:
        """``findNodesThatPassExtenders``: each interested extender filters what the previous
        kept; its failed nodes get Unschedulable / UnschedulableAndUnresolvable statuses."""
        if not self.extenders:
            return nodes
        before = len(nodes)
        for ext in self.extenders:
            if len(nodes) == 0:
                break
            if not ext.is_interested(pi.pod):
                continue
            try:
                kept, failed, unresolvable = await ext.filter(pi.pod, nodes)
            except Exception as e:
                if ext.is_ignorable():
                    log.info("skipping extender %s as it returned error and has ignorable flag set: %s", ext.name, e)
                    continue
                raise _CycleError(Status.as_error(e)) from e
            for name, msg in unresolvable.items():
                diagnosis.node_to_status[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
            for name, msg in failed.items():
                if name not in unresolvable:  # failedAndUnresolvableNodes takes precedence
                    diagnosis.node_to_status[name] = Status(Code.UNSCHEDULABLE, msg)
            nodes = kept
        if main_pass and len(nodes) != before:
            # extenders have no queueing hints: any cluster event may make the pod schedulable
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        return nodes

    def _nodes_with_nominated_pods(self, pi: PodInfo) -> set[str]:
        """The nodes with a nominated pod of priority >= the pod's, the pod itself excluded
        (the result may be the nominator's cached set: do not modify it)."""
        nom = self.queue.nominator
        if not nom.nominated_pods:
            return set()
        counts, nodes = nom.counts_at_or_above(pi.priority)
        own = nom.pod_to_node.get(pi.uid)
        # the only qualifying pod on its own node may be this one
        if (
            own is not None
            and counts.get(own) == 1
            and any(p.uid == pi.uid and p.priority >= pi.priority for p in nom.nominated_pods[own])
        ):
            return nodes - {own}
        return nodes

    def _filter_segment(
        self,
        fw: Framework,
        state: CycleState,
        pi: PodInfo,
        seg: np.ndarray,
        nominated: set[str],
    ) -> tuple[np.ndarray, np.ndarray, list[Status]]:
        """Filter one segment of snapshot indices: (passing positions, failed positions, their
        statuses), the nodes with nominated pods first, then the others in the plugins' order."""
        snap = self.snapshot
        if nominated:
            special = [i for i, idx in enumerate(seg.tolist()) if snap.names[idx] in nominated]
        else:
            special = []
        failed_pos: list[int] = []
        failed_sts: list[Status] = []
        plain: np.ndarray | None = None
        if special:
            mask = np.ones(len(seg), dtype=bool)
            mask[special] = False
            plain = np.flatnonzero(mask)
            infos = snap.node_infos
            sts = fw.run_filter_plugins_with_nominated_pods_batch(
                state, pi.pod, [infos[idx] for idx in seg[special].tolist()], pi.priority
            )
            for i, st in zip(special, sts, strict=True):
                if st is not None and not st.is_success():
                    failed_pos.append(i)
                    failed_sts.append(st)
        batch_idx = seg if plain is None else seg[plain]
        positions = np.array(failed_pos, dtype=np.int64)
        if len(batch_idx):
            out = fw.run_filter_plugins(state, pi.pod, NodeBatch(snapshot=snap, indices=batch_idx))
            if out:
                keys = np.fromiter(out.keys(), np.int64, len(out))
                positions = np.concatenate((positions, keys if plain is None else plain[keys]))
                failed_sts.extend(out.values())
        if not failed_sts:
            return np.arange(len(seg)), positions, failed_sts
        keep = np.ones(len(seg), dtype=bool)
        keep[positions] = False
        return np.flatnonzero(keep), positions, failed_sts

    # --- binding cycle ------------------------------------------------------------------------
    async def _binding_task(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed_pi: PodInfo,
        result: ScheduleResult,
        start: float,
        ticket: int | None = None,
    ) -> None:
        turn = [ticket]
        try:
            await self._take_turn(ticket)
            st = await self.binding_cycle(fw, state, qpi, assumed_pi, result, turn)
            if st is not None and not st.is_success():
                await self.handle_binding_cycle_error(fw, state, qpi, assumed_pi, result, st, start)
            else:
                self.metrics.schedule_attempts["scheduled"] += 1
                if self.record_timings:
                    self.metrics.attempt_durations.append(anyio.current_time() - start)
        finally:
            self._end_turn(turn[0])
            self._binding_tasks -= 1
            self._deactivate()
            self._touch()

    async def binding_cycle(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed_pi: PodInfo,
        result: ScheduleResult,
        turn: list[int | None] | None = None,
    ) -> Status | None:
        """``bindingCycle``: WaitOnPermit, PreBind, Bind, PostBind."""
        if turn is None:
            turn = [None]
        assumed = assumed_pi.pod
        host = result.suggested_host
        wp = fw.get_waiting_pod(assumed_pi.uid)
        if wp is not None:
            if wp.released:
                turn[0] = self._ticket()
            else:
                # parked at Permit: the loop need not wait for it until it is released

                def released() -> None:
                    turn[0] = self._ticket()
                    self._reactivate()

                wp.on_release = released
                self._deactivate()
        st = await fw.wait_on_permit(assumed)
        await self._take_turn(turn[0])
        if st is not None and not st.is_success():
            return self._single_node_status(st, host)
        self.queue.done(assumed_pi.uid)
        st = await fw.run_pre_bind_plugins(state, assumed, host)
        if st is not None and not st.is_success():
            return st
        st = await self.bind(fw, state, assumed, host)
        if st is not None and not st.is_success():
            return st
        self.scheduled_count += 1
        await self.record_event(
            assumed, "Normal", "Scheduled", "Binding",
            f"Successfully assigned {assumed.metadata.namespace}/{assumed.metadata.name} to {host}",
        )
        await fw.run_post_bind_plugins(state, assumed, host)
        to_activate: PodsToActivate = state.read(PODS_TO_ACTIVATE_KEY)
        if to_activate:
            self.queue.activate(list(to_activate.values()))
            to_activate.clear()
        return None

    async def bind(self, fw: Framework, state: CycleState, pod: Pod, host: str) -> Status | None:
        try:
            for ext in self.extenders:  # ``extendersBinding``: a binder extender goes first
                if not ext.is_binder() or not ext.is_interested(pod):
                    continue
                try:
                    await ext.bind(pod, host)
                except Exception as e:
                    if ext.is_ignorable():
                        log.info("skipping extender %s in bind as it returned error: %s", ext.name, e)
                        continue
                    return Status.as_error(e)
                return None
            st = await fw.run_bind_plugins(state, pod, host)
            if st is not None and st.is_skip():
                return Status(Code.ERROR, "no bind plugin bound the pod", plugin=st.plugin)
            return st
        finally:
            self.cache.finish_binding(pod.metadata.uid, anyio.current_time())

    async def handle_binding_cycle_error(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed_pi: PodInfo,
        result: ScheduleResult,
        status: Status,
        start: float,
    ) -> None:
        """``handleBindingCycleError``: Unreserve, forget, move others, then the failure handler."""
        assumed = assumed_pi.pod
        await fw.run_reserve_plugins_unreserve(state, assumed, result.suggested_host)
        forgot = False
        try:
            self.cache.forget_pod(assumed_pi.uid)
            forgot = True
        except Exception as e:
            log.error("scheduler cache ForgetPod failed: %s", e)
        if forgot and not status.is_rejected():
            self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, assumed, None)
        await self.handle_scheduling_failure(fw, qpi, status, CLEAR_NOMINATION, start)
        if forgot and status.is_rejected():
            uid = assumed_pi.uid
            self.queue.move_all_to_active_or_backoff(
                ev.ASSIGNED_POD_DELETE, assumed, None, lambda p: p.metadata.uid != uid
            )

    # --- failure ------------------------------------------------------------------------------
    async def handle_scheduling_failure(
        self,
        fw: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        nominating: str | None,
        start: float,
    ) -> None:
        """``handleSchedulingFailure``: requeue, nominate, FailedScheduling event, status patch."""
        reason = REASON_UNSCHEDULABLE if status.is_rejected() else REASON_SCHEDULER_ERROR
        self.metrics.schedule_attempts["unschedulable" if status.is_rejected() else "error"] += 1
        pod = qpi.pod
        err = status.error
        if isinstance(err, FitError):
            qpi.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(err.diagnosis.pending_plugins)
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        cached = self.cluster.pods.get(qpi.uid)
        if cached is None or cached.spec.node_name:
            self.queue.done(qpi.uid)
        else:
            qpi.pod_info = PodInfo(cached)
            try:
                self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)
            except ValueError as e:
                log.error("%s", e)
        self.queue.nominator.add(qpi.pod_info, nominating)
        msg = status.message
        pod = qpi.pod
        condition = PodCondition(type="PodScheduled", status="False", reason=reason, message=msg)
        nnn: str | None = None
        if nominating is not None and pod.status.nominated_node_name != nominating:
            nnn = nominating
        self._report(pod, (pod, truncate_message(msg), condition, nnn))

    def _report(self, pod: Pod, item: tuple[Any, ...]) -> None:
        """Queue a failure report (event + status patch); one writer per pod, in order."""
        uid = pod.metadata.uid
        pending = self._reports.get(uid)
        if pending is not None:
            pending.append(item)
            return
        self._reports[uid] = collections.deque([item])
        self.spawn(self._report_writer, uid)

    async def _report_writer(self, uid: str) -> None:
        pending = self._reports[uid]
        try:
            while pending:
                await self._report_failure(*pending.popleft())
        finally:
            del self._reports[uid]

    async def _report_failure(self, pod: Pod, note: str, condition: PodCondition, nnn: str | None) -> None:
        await self.record_event(pod, "Warning", "FailedScheduling", "Scheduling", note)
        cur = next((c for c in pod.status.conditions if c.type == "PodScheduled"), None)
        unchanged = (
            cur is not None
            and cur.status == condition.status
            and cur.reason == condition.reason
            and cur.message == condition.message
        )
        if unchanged and nnn is None:
            return
        try:
            await self.transport.patch_pod_status(
                pod.metadata.namespace, pod.metadata.name, condition=condition, nominated_node_name=nnn
            )
        except NotFoundError:
            pass
        except TransportError as e:
            log.warning("updating pod %s status failed: %s", pod.key, e)

    async def record_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
        event = Event(
            metadata=ObjectMeta(namespace=pod.metadata.namespace, name=f"{pod.metadata.name}.{reason.lower()}"),
            reporting_controller="default-scheduler",
            reporting_instance="kubesched",
            action=action,
            reason=reason,
            type=type_,
            note=note,
            regarding=ObjectReference(
                api_version="v1", kind="Pod", namespace=pod.metadata.namespace,
                name=pod.metadata.name, uid=pod.metadata.uid,
            ),
        )
        try:
            await self.transport.record_event(event)
        except TransportError as e:
            log.warning("recording event %s for %s failed: %s", reason, pod.key, e)

    # --- helpers for plugins --------------------------------------------------------------------
    def node_info(self, name: str) -> NodeInfo | None:
        return self.snapshot.get(name)


def _pre_check_for_node(ni: NodeInfo) -> Callable[[Pod], bool]:
    """``preCheckForNode`` (legacy queue, hints off): an unschedulable pod is moved on a node
    add / update only if it passes ``AdmissionCheck`` on the cache's NodeInfo (resources fit,
    required node affinity / nodeSelector, nodeName, host ports) and tolerates the node's
    NoSchedule / NoExecute taints.  Preemption is not considered (as upstream)."""
    from kubesched.plugins import nodename, nodeports
    from kubesched.plugins._helper import (
        RequiredNodeAffinity,
        do_not_schedule_taints_filter,
        find_matching_untolerated_taint,
    )
    from kubesched.plugins.noderesources import fit

    node = ni.node
    assert node is not None

    def check(pod: Pod) -> bool:
        if fit.fits(pod, ni):
            return False
        if not RequiredNodeAffinity(pod).match(node):
            return False
        if not nodename.fits(pod, node):
            return False
        if not nodeports.fits(pod, ni):
            return False
        taint = find_matching_untolerated_taint(
            node.spec.taints, pod.spec.tolerations, do_not_schedule_taints_filter
        )
        return taint is None

    return check


class _CycleError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


class _FullStatusMap(Mapping[str, Status]):
    """``NodeToStatus`` for PostFilter: explicit statuses plus the absent-node default."""

    def __init__(self, diagnosis: Diagnosis, names: list[str], index: Mapping[str, int]) -> None:
        self._d = diagnosis
        self._names = names
        self._index = index

    def _default(self) -> Status:
        return self._d.absent_status or Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def __getitem__(self, name: str) -> Status:
        st = self._d.node_to_status.get(name)
        if st is not None:
            return st
        if name in self._index:
            return self._default()
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        st = self._d.node_to_status.get(name)
        if st is not None:
            return st
        return self._default()

    def __iter__(self) -> Any:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


__all__ = ["ClusterState", "PodsToActivate", "Scheduler", "num_feasible_nodes_to_find", "select_host"]
