"""The framework runtime: one profile's plugins, run extension point by extension point.

``Framework`` is upstream's ``frameworkImpl``: it builds the profile's plugins from factories
(:mod:`kubesched.runtime._plugins`), handing each the profile's handle
(:mod:`kubesched.runtime._handle`: the scheduler's parts, the waiting pods, the Filter runners
preemption uses), knows which extension points each implements, and runs them in profile order
with their weights.  Its parts are objects it holds, each with the plugin lists it runs::

    Framework ── calls            PluginCalls: the wrapper of every plugin call (and its timing)
              ├─ filters          FilterRunners: PreFilter (AddPod, RemovePod), Filter
              ├─ nominated_filter NominatedFilter: Filter of snapshot rows, nominated pods added
              ├─ scores           ScoreRunners: PreScore, Score (NormalizeScore, weights)
              ├─ binding          BindingRunners: Reserve, Unreserve, Permit, PreBind, Bind, PostBind
              └─ waiting          WaitingPods: the pods waiting at Permit

The Framework runs QueueSort, PreEnqueue and PostFilter itself, and offers every runner under
upstream's name (``run_filter_plugins``...), as plugins and the scheduler call them.  Every status
a plugin returns gets the plugin's name; an exception in a plugin, or a result of the wrong type,
becomes an Error status for that pod naming the plugin and the extension point.  Filter and Score
are batch calls over a :class:`NodeBatch`; their results are checked once per call, never per
node.  A hook that must be a plain function but is declared ``async def`` is refused when the
profile is built.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.config._versions import DEFAULT_VERSION, Version
from kubesched.metrics._metrics import (
    BIND,
    PERMIT,
    POST_BIND,
    POST_FILTER,
    PRE_BIND,
    PRE_ENQUEUE,
    PRE_FILTER,
    PRE_SCORE,
    RESERVE,
    SCORE,
    UNRESERVE,
)
from kubesched.runtime._binding_runners import MAX_PERMIT_TIMEOUT as MAX_PERMIT_TIMEOUT
from kubesched.runtime._binding_runners import BindingRunners, PreBindGroupRunner
from kubesched.runtime._cyclestate import CycleState as CycleState
from kubesched.runtime._cyclestate import PostFilterResult as PostFilterResult
from kubesched.runtime._cyclestate import PreBindPreFlightResult as PreBindPreFlightResult
from kubesched.runtime._cyclestate import PreFilterResult as PreFilterResult
from kubesched.runtime._events import ClusterEvent
from kubesched.runtime._filter_runners import FilterRunners
from kubesched.runtime._handle import FrameworkHandle, Handle, HandleParts
from kubesched.runtime._nodeinfo import NodeBatch, NodeInfo, PodInfo, RowOverlay
from kubesched.runtime._nominated_filter import NominatedFilter
from kubesched.runtime._plugins import (
    PluginCalls,
    _as_status,
    _is_async,
    _plugin_manager,
    _raised,
    _wrong,
    build_plugins,
    registered_cluster_events,
)
from kubesched.runtime._plugins import PluginEntry as PluginEntry
from kubesched.runtime._plugins import PluginError as PluginError
from kubesched.runtime._plugins import PluginRegistry as PluginRegistry
from kubesched.runtime._score_runners import MAX_NODE_SCORE as MAX_NODE_SCORE
from kubesched.runtime._score_runners import MIN_NODE_SCORE as MIN_NODE_SCORE
from kubesched.runtime._score_runners import ScoreRunners
from kubesched.runtime._status import Code, Status
from kubesched.runtime._waiting_pods import WaitingPod as WaitingPod
from kubesched.runtime._waiting_pods import WaitingPods
from kubesched.runtime._waiting_pods import go_duration as go_duration

if TYPE_CHECKING:
    from kubesched.api._objects import Pod
    from kubesched.cache._cache import Snapshot
    from kubesched.metrics._metrics import MetricsRecorder
    from kubesched.queue._nominator import Nominator
    from kubesched.queue._scheduling_queue import QueuedPodInfo

log = logging.getLogger("kubesched")

PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"
POD_GROUP_CYCLE_KEY = "kubesched.io/pod-group-scheduling-cycle"
"""Set in the cycle state of a pod tried inside a PodGroup scheduling cycle (upstream's
``CycleState.SetPodGroupSchedulingCycle``): the group's name, ``namespace/name``."""



PerNodeFilter = Callable[[Any, "CycleState", "Pod", NodeInfo], "Status | None"]


def per_node_filter(fn: Callable[..., Status | None]) -> Callable[..., Mapping[int, Status] | None]:
    """Adapt ``(self, state, pod, node_info) -> Status | None`` into a batch Filter hook.

    Use it under ``@kubesched.hookimpl`` on a method named ``kubesched_filter``.  ``fn`` must
    be a plain function (Filter runs in the scheduling cycle): ``async def`` is a TypeError.
    """
    if _is_async(fn):
        raise TypeError(f"per_node_filter: {fn.__qualname__} is async def; a Filter must be a plain function")

    def batch(self: Any, state: CycleState, pod: Pod, nodes: NodeBatch) -> dict[int, Status] | None:
        out: dict[int, Status] = {}
        for i, ni in enumerate(nodes):
            st = fn(self, state, pod, ni)
            if st is not None and not st.is_success():
                out[i] = st
        return out or None

    batch.__name__ = fn.__name__
    batch.__doc__ = fn.__doc__
    return batch


def per_node_score(fn: Callable[..., int]) -> Callable[..., np.ndarray]:
    """Adapt ``(self, state, pod, node_info) -> int`` into a batch Score hook (``fn`` must be a
    plain function, as :func:`per_node_filter`'s)."""
    if _is_async(fn):
        raise TypeError(f"per_node_score: {fn.__qualname__} is async def; a Score must be a plain function")

    def batch(self: Any, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        return np.fromiter((fn(self, state, pod, ni) for ni in nodes), np.int64, len(nodes))

    batch.__name__ = fn.__name__
    batch.__doc__ = fn.__doc__
    return batch


class Framework:
    """One profile: its plugins by extension point, and the runtime that calls them.

    Its plugins' factories receive :attr:`handle` (a :class:`FrameworkHandle` over the
    scheduler's parts, built here, before them).
    """

    def __init__(
        self,
        profile_name: str,
        plugins: Mapping[str, Sequence[tuple[str, int]]],
        factories: Mapping[str, Callable[[Any, Handle], Any]],
        plugin_args: Mapping[str, Any] | None = None,
        *,
        multi_point: Sequence[tuple[str, int]] = (),
        disabled: Mapping[str, set[str]] | None = None,
        percentage_of_nodes_to_score: int | None = None,
        arg_paths: Mapping[str, str] | None = None,
        feature_gates: Mapping[str, bool] | None = None,
        emulated_version: Version = DEFAULT_VERSION,
        parts: HandleParts | None = None,
    ) -> None:
        """Build the profile's plugins.

        ``plugins`` holds the plugins enabled per extension point (``(name, weight)``);
        ``multi_point`` the profile's multiPoint set, expanded onto every extension point each
        plugin implements unless ``disabled`` there (upstream ``expandMultiPointPlugins``).

        ``parts``: what the scheduler lends the profile's :attr:`handle` (its snapshot, listers,
        nominator, client...); without them (a Framework built alone) the handle's parts are
        :meth:`HandleParts.detached`, with ``feature_gates``.
        """
        self.profile_name = profile_name
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.pm = _plugin_manager()
        self.plugins: dict[str, Any] = {}
        self.points: dict[str, list[PluginEntry]] = {}
        self.waiting = WaitingPods()  # the pods waiting at Permit
        self.waiting_pods = self.waiting.pods
        if parts is None:
            parts = HandleParts.detached(feature_gates, emulated_version=emulated_version)
        # what the plugins' factories get: the scheduler's parts, the waiting pods, the runners
        self.handle = FrameworkHandle(parts, self.waiting, self)
        self.snapshot: Snapshot = parts.snapshot
        self.nominator: Nominator = parts.nominator
        self.deterministic = parts.deterministic
        # the wrappers of every plugin call, and the MetricsRecorder they time into
        self.calls = PluginCalls()
        build_plugins(
            self.handle, self.pm, self.plugins, self.points, profile_name, plugins, factories, plugin_args,
            multi_point=multi_point, disabled=disabled, arg_paths=arg_paths, version=parts.emulated_version,
        )
        self.filters = FilterRunners(self.points, self.calls)
        self.scores = ScoreRunners(self.points, self.calls)
        self.binding = BindingRunners(self.points, self.calls)
        self.nominated_filter = NominatedFilter(self)
        self._less = self.points["queueSort"][0].plugin.kubesched_queue_sort_less
        self._less_failed = False

    @property
    def metrics_recorder(self) -> MetricsRecorder | None:
        """The scheduler's MetricsRecorder while one is attached (:mod:`kubesched.metrics._metrics`)."""
        return self.calls.recorder

    @metrics_recorder.setter
    def metrics_recorder(self, recorder: MetricsRecorder | None) -> None:
        self.calls.recorder = recorder

    # --- introspection --------------------------------------------------------------------
    def plugin_evaluations(self) -> dict[tuple[str, str], int]:
        """``plugin_evaluation_total`` of this profile by (plugin, extension point): what its
        runners counted (PreFilter, Filter, PreScore, Score; upstream's instrumented plugins,
        v1.30-v1.36 ``framework/runtime/instrumented_plugins.go``)."""
        out: dict[tuple[str, str], int] = {}
        f, s = self.filters, self.scores
        for point, names, counts in (
            ("PreFilter", [e.name for e in f.pre_filter], f.pre_filter_evaluations),
            ("Filter", [name for name, _ in f.filter], f.filter_evaluations),
            ("PreScore", [e.name for e in s.pre_score], s.pre_score_evaluations),
            ("Score", [e.name for e in s.score], s.score_evaluations),
        ):
            for name, n in zip(names, counts, strict=True):
                out[(name, point)] = n  # from the profile's start, 0 included (WithLabelValues)
        return out

    def plugin(self, name: str) -> Any:
        return self.plugins.get(name)

    def has_filter_plugins(self) -> bool:
        return bool(self.filters.filter)

    def filter_plugin_names(self, state: CycleState) -> list[str]:
        """The Filter plugins that run in this cycle, in order (PreFilter's Skips left out)."""
        skip = state.skip_filter_plugins
        return [name for name, _ in self.filters.filter if name not in skip]

    def has_score_plugins(self) -> bool:
        return bool(self.points.get("score"))

    def has_post_filter_plugins(self) -> bool:
        return bool(self.points.get("postFilter"))

    def list_plugins(self) -> dict[str, list[tuple[str, int]]]:
        return {p: [(e.name, e.weight) for e in es] for p, es in self.points.items() if es}

    def cluster_events(self) -> list[tuple[str, ClusterEvent, Any]]:
        """Every (plugin, event, hint) registered by a plugin that can reject pods."""
        return registered_cluster_events(self.points)

    # --- queue ----------------------------------------------------------------------------
    @property
    def queue_sort_key(self) -> Callable[[QueuedPodInfo], Any] | None:
        """The QueueSort plugin's ``queue_sort_key`` (a key function ordering exactly as its
        ``kubesched_queue_sort_less``), when it has one."""
        key: Callable[[QueuedPodInfo], Any] | None = getattr(self.points["queueSort"][0].plugin, "queue_sort_key", None)
        return key

    def queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """The profile's QueueSort.  A plugin that raises or returns no bool must not take the
        queue down: the pair is then ordered as PrioritySort would order it, and the error is
        logged once."""
        try:
            less = self._less(a, b)
        except Exception as err:
            return self._queue_sort_failed(a, b, err)
        if less is True or less is False:
            return less
        if isinstance(less, np.bool_):
            return bool(less)
        return self._queue_sort_failed(a, b, _wrong(less, "bool"))

    def _queue_sort_failed(self, a: QueuedPodInfo, b: QueuedPodInfo, err: object) -> bool:
        if not self._less_failed:
            self._less_failed = True
            log.error('running "%s" queue sort plugin: %s', self.points["queueSort"][0].name, err)
        if a.priority != b.priority:
            return a.priority > b.priority
        return a.timestamp < b.timestamp

    # --- extension points ------------------------------------------------------------------
    # Each runner observes its extension point into the recorder, when one is attached
    # (``framework_extension_point_duration_seconds``, as upstream's deferred Observe): one
    # test of ``calls.recorder`` when none is.
    def run_pre_enqueue_plugins(self, pod: Pod, first: str = "") -> Status | None:
        """``RunPreEnqueuePlugins`` (``first``: the plugin that gated the pod last runs first);
        its plugins are timed in a sampled run, each run sampled on its own."""
        rec = self.calls.recorder
        if rec is None:
            return self._run_pre_enqueue_plugins(pod, first, None)
        t0 = rec.now()
        st = self._run_pre_enqueue_plugins(pod, first, self.calls.timed if rec.sample() else None)
        rec.extension_point_since(PRE_ENQUEUE, st, self.profile_name, t0)
        return st

    def _run_pre_enqueue_plugins(self, pod: Pod, first: str, timed: Callable[..., Any] | None) -> Status | None:
        """``timed``: the timing call wrapper, None for the plain (usual) one."""
        entries = self.points.get("preEnqueue", [])
        if first:
            entries = sorted(entries, key=lambda e: e.name != first)
        for e in entries:
            if timed is not None:
                out = timed(e, "pre_enqueue", e.plugin.kubesched_pre_enqueue, pod)
            else:  # PluginCalls.call, inlined: a raise is this plugin's Error, its name on the status
                try:
                    out = e.plugin.kubesched_pre_enqueue(pod)
                except Exception as err:
                    out = _raised(e.name, "pre_enqueue", err)
                else:
                    if out is None:  # the usual answer
                        continue
                    if isinstance(out, Status):
                        out.plugin = e.name
            st = _as_status(out, e.name)
            if st is not None and not st.is_success():
                if st.code == Code.ERROR:  # the pod stays gated by the plugin, as upstream's
                    if not st.message.startswith("running "):
                        msg = f'running PreEnqueue plugin "{e.name}": {st.message}'
                        st = Status(Code.ERROR, msg, plugin=e.name, error=st.error)
                    self.calls.errors.failed(pod, st, "Unexpected error running PreEnqueue plugin")
                return st
        return None

    # --- PreFilter and Filter (the profile's FilterRunners) ------------------------------
    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """``RunPreFilterPlugins``: (merged result, first failure, plugins that rejected)."""
        rec = self.calls.recorder
        if rec is None:
            return self.filters.run_pre_filter_plugins(state, pod, nodes)
        t0 = rec.now()
        out = self.filters.run_pre_filter_plugins(state, pod, nodes)
        rec.extension_point_since(PRE_FILTER, out[1], self.profile_name, t0)
        return out

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        """Whether an AddPod or RemovePod extension would run for this cycle (not skipped)."""
        return self.filters.has_pre_filter_extensions(state)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self.filters.run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self.filters.run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node_info)

    def run_filter_plugins(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Mapping[int, Status]:
        """``RunFilterPlugins`` over a batch: {position in batch: first failing status}
        (:meth:`FilterRunners.run_filter_plugins`)."""
        return self.filters.run_filter_plugins(state, pod, nodes)

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pod_priority: int | None = None
    ) -> Status | None:
        """``RunFilterPluginsWithNominatedPods``: the two-pass filter for one node
        (:meth:`NominatedFilter.run_node`)."""
        return self.nominated_filter.run_node(state, pod, node_info, pod_priority)

    def run_filter_plugins_with_nominated_pods_rows(
        self,
        state: CycleState,
        pod: Pod,
        rows: np.ndarray,
        pod_priority: int | None = None,
        *,
        base: RowOverlay | None = None,
    ) -> Mapping[int, Status]:
        """The two-pass Filter of the snapshot's nodes ``rows`` (:meth:`NominatedFilter.run_rows`)."""
        return self.nominated_filter.run_rows(state, pod, rows, pod_priority, base=base)

    # --- PostFilter -----------------------------------------------------------------------
    async def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """``RunPostFilterPlugins``: the first Success, Error or UnschedulableAndUnresolvable ends
        the run; otherwise the merged reasons."""
        rec = self.calls.recorder
        if rec is None:
            return await self._run_post_filter_plugins(state, pod, node_statuses)
        t0 = rec.now()
        out = await self._run_post_filter_plugins(state, pod, node_statuses)
        rec.extension_point_since(POST_FILTER, out[1], self.profile_name, t0)
        return out

    async def _run_post_filter_plugins(
        self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        reasons: list[str] = []
        rejector = ""
        result: PostFilterResult | None = None
        call = self.calls.timed_async if state.record_plugin_metrics else self.calls.call_async
        for e in self.points.get("postFilter", []):
            out = await call(e, "postfilter", e.plugin.kubesched_post_filter, state, pod, node_statuses)
            r: PostFilterResult | None = None
            st: Status | None
            if out is None or isinstance(out, Status):
                st = out
            elif (
                isinstance(out, tuple)
                and len(out) == 2
                and (out[0] is None or isinstance(out[0], PostFilterResult))
                and (out[1] is None or isinstance(out[1], Status))
            ):
                r, st = out
            else:
                why = _wrong(out, "(PostFilterResult, Status), a Status or None")
                st = Status(Code.ERROR, f'running PostFilter plugin "{e.name}": {why}', plugin=e.name)
            if state.recording is not None:
                ok = st is None or st.is_success()
                node = (r.nominated_node_name or "") if r is not None and ok else ""
                victims = [f"{v.metadata.namespace}/{v.metadata.name}" for v in r.victims] if node and r else []
                state.recording.postfilter[e.name] = (node, victims)
            if st is None or st.is_success():
                return r, Status(Code.SUCCESS, plugin=e.name)
            st.plugin = e.name
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, st  # the later plugins cannot help (kubernetes#114699, v1.27.0 framework.go)
            if not st.is_rejected():
                return None, st
            if r is not None:
                result = r
            reasons.extend(st.reasons)
            rejector = rejector or e.name
        return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

    # --- Score (the profile's ScoreRunners) ------------------------------------------------
    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        """``RunPreScorePlugins``: a Skip leaves the plugin's Score out of this cycle."""
        rec = self.calls.recorder
        if rec is None:
            return self.scores.run_pre_score_plugins(state, pod, nodes)
        t0 = rec.now()
        st = self.scores.run_pre_score_plugins(state, pod, nodes)
        rec.extension_point_since(PRE_SCORE, st, self.profile_name, t0)
        return st

    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: NodeBatch, *, each: bool = True
    ) -> tuple[np.ndarray, dict[str, np.ndarray], Status | None]:
        """``RunScorePlugins``: (total per node, weighted score per plugin, error); ``each``
        False: the total only, the per-plugin map empty (:meth:`ScoreRunners.run_score_plugins`)."""
        rec = self.calls.recorder
        if rec is None:
            return self.scores.run_score_plugins(state, pod, nodes, each=each)
        t0 = rec.now()
        out = self.scores.run_score_plugins(state, pod, nodes, each=each)
        rec.extension_point_since(SCORE, out[2], self.profile_name, t0)
        return out

    # --- Reserve, Permit and the binding cycle (the profile's BindingRunners) -----------------
    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``RunReservePluginsReserve``: the first rejection or error, else None."""
        rec = self.calls.recorder
        if rec is None:
            return self.binding.run_reserve_plugins_reserve(state, pod, node_name)
        t0 = rec.now()
        st = self.binding.run_reserve_plugins_reserve(state, pod, node_name)
        rec.extension_point_since(RESERVE, st, self.profile_name, t0)
        return st

    async def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """``RunReservePluginsUnreserve``: every Reserve plugin's Unreserve, in reverse order."""
        rec = self.calls.recorder
        if rec is None:
            return await self.binding.run_reserve_plugins_unreserve(state, pod, node_name)
        t0 = rec.now()
        await self.binding.run_reserve_plugins_unreserve(state, pod, node_name)
        rec.extension_point_since(UNRESERVE, None, self.profile_name, t0)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``RunPermitPlugins``: a Wait from any plugin makes the pod a waiting pod."""
        rec = self.calls.recorder
        if rec is None:
            return self._run_permit_plugins(state, pod, node_name)
        t0 = rec.now()
        st = self._run_permit_plugins(state, pod, node_name)
        rec.extension_point_since(PERMIT, st, self.profile_name, t0)
        return st

    def _run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        st, timeouts = self.binding.run_permit_plugins(state, pod, node_name)
        if st is None and timeouts:
            self.waiting.add(pod, timeouts, timed=not self.deterministic)
            return Status(Code.WAIT, f'one or more plugins asked to wait and no plugin rejected pod "{pod.metadata.name}"')
        return st

    async def wait_on_permit(self, pod: Pod) -> Status | None:
        """``WaitOnPermit``: None once allowed (or never waiting), else the rejection; a
        waiting pod's wait is observed (``permit_wait_duration_seconds``)."""
        rec = self.calls.recorder
        if rec is None or self.waiting.get(pod.metadata.uid) is None:
            return await self.waiting.wait(pod)
        t0 = rec.now()
        st = await self.waiting.wait(pod)
        rec.permit_waited(st, t0)
        return st

    def next_permit_deadline(self) -> float | None:
        return self.waiting.next_deadline()

    def expire_waiting_pods(self, now: float) -> None:
        self.waiting.expire(now)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting.get(uid)

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]:
        return self.waiting.iterate()

    def reject_waiting_pod(self, uid: str) -> bool:
        return self.waiting.reject(uid)

    # the binding cycle's runners give their coroutine itself (awaited by the caller) unless
    # the run is timed: one coroutine less a pod for each
    def run_pre_bind_plugins(
        self, state: CycleState, pod: Pod, node_name: str, run_group: PreBindGroupRunner | None = None
    ) -> Awaitable[Status | None]:
        """``RunPreBindPlugins``: the first rejection or error, else None (``run_group``: how a
        1.36 parallel group runs, :meth:`BindingRunners.run_pre_bind_plugins`)."""
        run = self.binding.run_pre_bind_plugins(state, pod, node_name, run_group)
        return run if (rec := self.calls.recorder) is None else _timed(rec, PRE_BIND, self.profile_name, run)

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Awaitable[Status | None]:
        """``RunBindPlugins``: the first Bind plugin that does not Skip decides (a Skip if all do)."""
        run = self.binding.run_bind_plugins(state, pod, node_name)
        return run if (rec := self.calls.recorder) is None else _timed(rec, BIND, self.profile_name, run)

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Awaitable[None]:
        """``RunPostBindPlugins``: informational, every one of them."""
        run = self.binding.run_post_bind_plugins(state, pod, node_name)
        return run if (rec := self.calls.recorder) is None else _timed(rec, POST_BIND, self.profile_name, run)


async def _timed(rec: MetricsRecorder, point: str, profile: str, run: Awaitable[Any]) -> Any:
    """``run`` (a binding-cycle runner's coroutine, not yet started) observed as ``point``
    (PostBind's status is not observed: None)."""
    t0 = rec.now()
    st = await run
    rec.extension_point_since(point, None if point == POST_BIND else st, profile, t0)
    return st


def build_framework(
    profile: Any,
    registry: Mapping[str, Callable[[Any, Handle], Any]],
    feature_gates: Mapping[str, bool] | None = None,
    emulated_version: Version = DEFAULT_VERSION,
    parts: HandleParts | None = None,
) -> Framework:
    """A Framework for a :class:`kubesched.config._config.ProfileConfig`, its handle over the
    scheduler's ``parts`` (without them, detached: ``feature_gates`` are what its plugins see)."""
    return Framework(
        profile.scheduler_name,
        profile.enabled,
        registry,
        profile.plugin_args,
        multi_point=profile.multi_point,
        disabled=profile.disabled,
        percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
        arg_paths=profile.arg_paths,
        feature_gates=feature_gates,
        emulated_version=emulated_version,
        parts=parts,
    )
