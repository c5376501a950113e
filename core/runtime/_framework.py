"""The framework runtime: one profile's plugins, run extension point by extension point.

Its parts, each in its own module: the construction of the profile and the plugin call wrappers
(:mod:`kubesched.runtime._plugins`), the PreFilter and Filter runners
(:mod:`kubesched.runtime._filter_runners`, a base class), the Filter of snapshot rows with nominated
pods (:mod:`kubesched.runtime._nominated_filter`) and the pods waiting at Permit
(:mod:`kubesched.runtime._waiting_pods`), both objects the Framework holds, and the handle its
plugins receive (:mod:`kubesched.runtime._handle`: the scheduler's parts, the waiting pods, the
Filter runners preemption uses).

``Framework`` is upstream's ``frameworkImpl``: it builds the profile's plugins
from factories, knows which extension points each implements, and runs them in profile order
with their weights.  Every status a plugin returns gets the plugin's name; an exception in a
plugin, or a result of the wrong type, becomes an Error status for that pod naming the plugin and
the extension point.  Filter and Score are batch calls over a :class:`NodeBatch`; their results
are checked once per call, never per node.  A hook that must be a plain function but is declared
``async def`` is refused when the profile is built.
"""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched import hookspecs
from kubesched.config._versions import DEFAULT_VERSION, Version
from kubesched.runtime._cyclestate import CycleState as CycleState
from kubesched.runtime._cyclestate import PostFilterResult as PostFilterResult
from kubesched.runtime._cyclestate import PreFilterResult as PreFilterResult
from kubesched.runtime._events import ClusterEvent
from kubesched.runtime._filter_runners import FilterRunners
from kubesched.runtime._handle import FrameworkHandle, Handle, HandleParts
from kubesched.runtime._nodeinfo import NodeBatch, NodeInfo, RowOverlay
from kubesched.runtime._nominated_filter import NominatedFilter
from kubesched.runtime._plugins import (
    _SCORE_RESULT,
    _as_status,
    _is_async,
    _plugin_manager,
    _wrong,
    build_plugins,
    registered_cluster_events,
)
from kubesched.runtime._plugins import PluginEntry as PluginEntry
from kubesched.runtime._plugins import PluginError as PluginError
from kubesched.runtime._plugins import PluginRegistry as PluginRegistry
from kubesched.runtime._status import Code, Status
from kubesched.runtime._waiting_pods import WaitingPod as WaitingPod
from kubesched.runtime._waiting_pods import WaitingPods
from kubesched.runtime._waiting_pods import go_duration as go_duration
from kubesched.scheduler._results import WAIT
from kubesched.scheduler._results import verdict as _verdict

if TYPE_CHECKING:
    from kubesched.api._objects import Pod
    from kubesched.cache._cache import Snapshot
    from kubesched.metrics._metrics import MetricsRecorder
    from kubesched.queue._nominator import Nominator
    from kubesched.queue._scheduling_queue import QueuedPodInfo

log = logging.getLogger("kubesched")

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_PERMIT_TIMEOUT = 15 * 60.0
PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"



def _is_timeout(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isnan(value)


def _score_array(raw: Any) -> np.ndarray | str:
    """A Score hook's result as a fresh int64 array, or why it is not one scores per node."""
    if isinstance(raw, np.ndarray):
        arr = raw
    elif isinstance(raw, Sequence) and not isinstance(raw, (str, bytes)):
        try:
            arr = np.asarray(raw)
        except (TypeError, ValueError):
            return _wrong(raw, _SCORE_RESULT)
    else:
        return _wrong(raw, _SCORE_RESULT)
    if arr.ndim != 1:
        return f"returned {type(raw).__name__} of shape {arr.shape}, expected {_SCORE_RESULT}"
    if arr.dtype.kind not in "iu" and arr.size:
        return f"returned {type(raw).__name__} of {arr.dtype}, expected {_SCORE_RESULT}"
    return np.array(arr, dtype=np.int64, copy=True)


def _invalid_score(scores: np.ndarray) -> int | None:
    """A score of the int64 ``scores`` out of [MIN_NODE_SCORE, MAX_NODE_SCORE] (the greatest
    above, else the least below), or None.  One argmax over them as unsigned, where a negative
    score is above every valid one: cheaper than max() and min()."""
    if not len(scores):
        return None
    unsigned = scores.view(np.uint64)
    if unsigned[unsigned.argmax()] <= MAX_NODE_SCORE:
        return None
    return int(scores.max() if scores.max() > MAX_NODE_SCORE else scores.min())


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


class Framework(FilterRunners):
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
        # the scheduler's MetricsRecorder while one is attached (:mod:`kubesched.metrics._metrics`)
        self.metrics_recorder: MetricsRecorder | None = None
        self.nominated_filter = NominatedFilter(self)
        build_plugins(
            self.handle, self.pm, self.plugins, self.points, profile_name, plugins, factories, plugin_args,
            multi_point=multi_point, disabled=disabled, arg_paths=arg_paths,
        )
        self._less = self.points["queueSort"][0].plugin.kubesched_queue_sort_less
        self._less_failed = False
        self._filter = [
            (e.name, e.plugin.kubesched_filter) for e in self.points.get("filter", [])
        ]
        self._normalize: dict[str, Any] = {}
        for entry in self.points.get("score", []):
            if hookspecs.implements(entry.plugin, "kubesched_normalize_score"):
                self._normalize[entry.name] = entry.plugin.kubesched_normalize_score
        self._add_pod = [
            (e.name, e.plugin.kubesched_pre_filter_add_pod)
            for e in self.points.get("preFilter", [])
            if hookspecs.implements(e.plugin, "kubesched_pre_filter_add_pod")
        ]
        self._remove_pod = [
            (e.name, e.plugin.kubesched_pre_filter_remove_pod)
            for e in self.points.get("preFilter", [])
            if hookspecs.implements(e.plugin, "kubesched_pre_filter_remove_pod")
        ]

    # --- introspection --------------------------------------------------------------------
    def plugin(self, name: str) -> Any:
        return self.plugins.get(name)

    def has_filter_plugins(self) -> bool:
        return bool(self._filter)

    def filter_plugin_names(self, state: CycleState) -> list[str]:
        """The Filter plugins that run in this cycle, in order (PreFilter's Skips left out)."""
        skip = state.skip_filter_plugins
        return [name for name, _ in self._filter if name not in skip]

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

    def run_pre_enqueue_plugins(self, pod: Pod, first: str = "") -> Status | None:
        entries = self.points.get("preEnqueue", [])
        if first:
            entries = sorted(entries, key=lambda e: e.name != first)
        rec = self.metrics_recorder
        call = self._call_timed if rec is not None and rec.sample() else self._call
        for e in entries:
            st = _as_status(call(e, "pre_enqueue", e.plugin.kubesched_pre_enqueue, pod), e.name)
            if st is not None and not st.is_success():
                if st.code == Code.ERROR:  # the pod stays gated by the plugin, as upstream's
                    if not st.message.startswith("running "):
                        msg = f'running PreEnqueue plugin "{e.name}": {st.message}'
                        st = Status(Code.ERROR, msg, plugin=e.name, error=st.error)
                    log.error("%s (pod %s)", st.message, pod.key)
                return st
        return None

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
        """``RunPostFilterPlugins``: the first Success wins; otherwise the merged reasons."""
        reasons: list[str] = []
        rejector = ""
        result: PostFilterResult | None = None
        call = self._call_async_timed if state.record_plugin_metrics else self._call_async
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
            if not st.is_rejected():
                return None, st
            if r is not None:
                result = r
            reasons.extend(st.reasons)
            rejector = rejector or e.name
        return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

    # --- Score ----------------------------------------------------------------------------
    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        rec = state.recording
        call = self._call_timed if state.record_plugin_metrics else self._call
        for e in self.points.get("preScore", []):
            st = _as_status(call(e, "prescore", e.plugin.kubesched_pre_score, state, pod, nodes), e.name)
            if rec is not None:
                rec.prescore[e.name] = _verdict(st)
            if st is None or st.is_success():
                continue
            if st.is_skip():
                state.skip_score_plugins.add(e.name)
                continue
            return Status(Code.ERROR, f'running PreScore plugin "{e.name}": {st.message}', plugin=e.name)
        return None

    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> tuple[np.ndarray, dict[str, np.ndarray], Status | None]:
        """``RunScorePlugins``: (total per node, weighted score per plugin, error)."""
        total = np.zeros(len(nodes), dtype=np.int64)
        per_plugin: dict[str, np.ndarray] = {}
        rec = state.recording
        raws: dict[str, np.ndarray] = {}
        timed = state.record_plugin_metrics
        for e in self.points.get("score", []):
            if e.name in state.skip_score_plugins:
                continue
            try:
                if timed:
                    scores = _score_array(self._call_plain_timed(e.name, "Score", e.plugin.kubesched_score, state, pod, nodes))
                else:
                    scores = _score_array(e.plugin.kubesched_score(state, pod, nodes))
                if isinstance(scores, str):  # the wrong type: as if the plugin had raised
                    msg = f'running Score plugins: running "{e.name}" score plugin: {scores}'
                    return total, per_plugin, Status(Code.ERROR, msg, plugin=e.name)
                if rec is not None:
                    raws[e.name] = scores.copy()
                norm = self._normalize.get(e.name)
                if norm is not None:
                    if timed:
                        out = self._call_plain_timed(e.name, "ScoreExtensionNormalize", norm, state, pod, scores)
                    else:
                        out = norm(state, pod, scores)
                    st = _as_status(out, e.name)
                    if st is not None and not st.is_success():
                        return total, per_plugin, Status(
                            Code.ERROR, f'running Normalize on Score plugin "{e.name}": {st.message}', plugin=e.name
                        )
            except Exception as err:
                return total, per_plugin, Status(Code.ERROR, f'running Score plugins: running "{e.name}" score plugin: {err}', plugin=e.name, error=err)
            if len(scores) != len(nodes):
                return total, per_plugin, Status(Code.ERROR, f'plugin "{e.name}" returned {len(scores)} scores for {len(nodes)} nodes', plugin=e.name)
            bad = _invalid_score(scores)
            if bad is not None:
                return total, per_plugin, Status(Code.ERROR, f'plugin "{e.name}" returns an invalid score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing', plugin=e.name)
            weighted = scores * e.weight if e.weight != 1 else scores  # scores is a fresh copy
            per_plugin[e.name] = weighted
            total += weighted
        if rec is not None:
            rec.scored(nodes.names, raws, per_plugin)
        return total, per_plugin, None

    # --- Reserve / Permit -----------------------------------------------------------------
    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        rec = state.recording
        call = self._call_timed if state.record_plugin_metrics else self._call
        for e in self.points.get("reserve", []):
            st = _as_status(call(e, "reserve", e.plugin.kubesched_reserve, state, pod, node_name), e.name)
            if rec is not None:
                rec.reserve[e.name] = _verdict(st)
            if st is not None and not st.is_success():
                if st.is_rejected():
                    return st
                return Status(Code.ERROR, f'running Reserve plugin "{e.name}": {st.message}', plugin=e.name)
        return None

    async def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        call = self._call_async_timed if state.record_plugin_metrics else self._call_async
        for e in reversed(self.points.get("reserve", [])):
            if hookspecs.implements(e.plugin, "kubesched_unreserve"):
                await call(e, "unreserve", e.plugin.kubesched_unreserve, state, pod, node_name)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``RunPermitPlugins``: a Wait from any plugin makes the pod a waiting pod."""
        timeouts: dict[str, float] = {}
        rec = state.recording
        call = self._call_timed if state.record_plugin_metrics else self._call
        for e in self.points.get("permit", []):
            out = call(e, "permit", e.plugin.kubesched_permit, state, pod, node_name)
            timeout = 0.0
            st: Status | None
            if out is None or isinstance(out, Status):
                st = out
            elif (
                isinstance(out, tuple)
                and len(out) == 2
                and (out[0] is None or isinstance(out[0], Status))
                and _is_timeout(out[1])
            ):
                st, timeout = out
                if st is not None:
                    st.plugin = e.name
            else:
                expected = "a Status, (Status, timeout in seconds) or None"
                st = Status(Code.ERROR, _wrong(out, expected), plugin=e.name)
            if rec is not None:
                rec.permit[e.name] = WAIT if st is not None and st.is_wait() else _verdict(st)
                rec.permit_timeout[e.name] = go_duration(float(timeout or 0.0))
            if st is None or st.is_success():
                continue
            if st.is_rejected():
                return st
            if st.is_wait():
                timeouts[e.name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
                continue
            return Status(Code.ERROR, f'running Permit plugin "{e.name}": {st.message}', plugin=e.name)
        if timeouts:
            self.waiting.add(pod, timeouts, timed=not self.deterministic)
            return Status(Code.WAIT, f'one or more plugins asked to wait and no plugin rejected pod "{pod.metadata.name}"')
        return None

    async def wait_on_permit(self, pod: Pod) -> Status | None:
        """``WaitOnPermit``: None once allowed (or never waiting), else the rejection."""
        return await self.waiting.wait(pod)

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

    # --- binding --------------------------------------------------------------------------
    async def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        rec = state.recording
        call = self._call_async_timed if state.record_plugin_metrics else self._call_async
        for e in self.points.get("preBind", []):
            st = _as_status(await call(e, "prebind", e.plugin.kubesched_pre_bind, state, pod, node_name), e.name)
            if rec is not None:
                rec.prebind[e.name] = _verdict(st)
            if st is None or st.is_success() or st.is_skip():
                continue
            if st.is_rejected():
                return st
            return Status(Code.ERROR, f'running PreBind plugin "{e.name}": {st.message}', plugin=e.name)
        return None

    async def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        last: Status | None = Status(Code.SKIP)
        rec = state.recording
        call = self._call_async_timed if state.record_plugin_metrics else self._call_async
        for e in self.points.get("bind", []):
            st = _as_status(await call(e, "bind", e.plugin.kubesched_bind, state, pod, node_name), e.name)
            if rec is not None:
                rec.bind[e.name] = _verdict(st)
            if st is not None and st.is_skip():
                last = st
                continue
            if st is None or st.is_success():
                return None
            if st.is_rejected():
                return st
            return Status(Code.ERROR, f'running Bind plugin "{e.name}": {st.message}', plugin=e.name)
        return last

    async def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        call = self._call_async_timed if state.record_plugin_metrics else self._call_async
        for e in self.points.get("postBind", []):
            await call(e, "postbind", e.plugin.kubesched_post_bind, state, pod, node_name)


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
