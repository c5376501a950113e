"""The framework runtime: one profile's plugins, run extension point by extension point.

Why one file: one small runner per extension point, in cycle order, over one runtime state
(plugins by point, weights, waiting pods, the handle), as upstream's ``framework.go``.

``Framework`` is upstream's ``frameworkImpl`` and its ``Handle``: it builds the profile's plugins
from factories, knows which extension points each implements, and runs them in profile order
with their weights.  Every status a plugin returns gets the plugin's name; an exception in a
plugin, or a result of the wrong type, becomes an Error status for that pod naming the plugin and
the extension point.  Filter and Score are batch calls over a :class:`NodeBatch`; their results
are checked once per call, never per node.  A hook that must be a plain function but is declared
``async def`` is refused when the profile is built.
"""

from __future__ import annotations

import inspect
import logging
import math
import numbers
import random
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import numpy as np
import pluggy

from . import hookspecs
from ._cyclestate import CycleState as CycleState
from ._cyclestate import PostFilterResult as PostFilterResult
from ._cyclestate import PreFilterResult as PreFilterResult
from ._errors import ConfigError
from ._events import ClusterEvent, ClusterEventWithHint, unroll_wildcard_resource
from ._metrics import batch_code, status_code
from ._nodeinfo import NodeBatch, NodeInfo, PodInfo, RowOverlay
from ._results import WAIT
from ._results import verdict as _verdict
from ._status import Code, Rejections, Status, merge_rejections

if TYPE_CHECKING:
    from ._metrics import MetricsRecorder
    from ._objects import Pod
    from ._queue import NominatedView, QueuedPodInfo

log = logging.getLogger("kubesched")

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_PERMIT_TIMEOUT = 15 * 60.0
PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"
# the extension point of each ``_call`` site, as ``plugin_execution_duration_seconds`` names it
_POINT_OF = {
    "pre_enqueue": "PreEnqueue", "prefilter": "PreFilter", "AddPod": "PreFilterExtensionAddPod",
    "RemovePod": "PreFilterExtensionRemovePod", "postfilter": "PostFilter", "prescore": "PreScore",
    "reserve": "Reserve", "unreserve": "Unreserve", "permit": "Permit", "prebind": "PreBind",
    "bind": "Bind", "postbind": "PostBind",
}


class PluginError(Exception):
    """A profile that cannot be built (unknown plugin, bad args, no QueueSort...).

    ``field`` is the path below the profile it concerns (``plugins.queueSort``), if known.
    """

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class PluginRegistry(dict[str, Callable[[Any, "Framework"], Any]]):
    """Plugin name → factory ``(args, handle) -> plugin``, and the plugins that could not be
    offered: ``unavailable`` maps a name to why (an entry point that failed to load), so that a
    profile naming one is told more than "does not exist"."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unavailable: dict[str, str] = {}


@dataclass
class PluginEntry:
    name: str
    plugin: Any
    weight: int = 1


class WaitingPod:
    """A pod held at Permit: one result, the plugins that still have to allow it."""

    def __init__(self, pod: Pod, timeouts: Mapping[str, float], now: float) -> None:
        self.pod = pod
        self.pending: dict[str, float] = {p: now + t for p, t in timeouts.items()}
        self.timeouts = dict(timeouts)
        self._result: Status | None = None
        self._done = anyio.Event()
        # called once when the pod is released (allowed or rejected), synchronously
        self.on_release: Callable[[], None] | None = None
        # expires every waiting pod of the framework whose wait is over (set by the framework)
        self.expire_all: Callable[[float], None] | None = None
        self.timed = True

    @property
    def uid(self) -> str:
        return self.pod.metadata.uid

    def get_pending_plugins(self) -> list[str]:
        return list(self.pending)

    def allow(self, plugin: str) -> None:
        """Remove ``plugin`` from the pending set; the last one releases the pod with Success."""
        self.pending.pop(plugin, None)
        if not self.pending and not self._done.is_set():
            self._result = Status(Code.SUCCESS)
            self._release()

    def reject(self, plugin: str, msg: str) -> None:
        """Release the pod at once as Unschedulable(msg); the first result wins."""
        if self._done.is_set():
            return
        self.pending.clear()
        self._result = Status(Code.UNSCHEDULABLE, msg, plugin=plugin)
        self._release()

    def _release(self) -> None:
        self._done.set()
        if self.on_release is not None:
            self.on_release()

    @property
    def released(self) -> bool:
        return self._done.is_set()

    def expire(self, now: float) -> None:
        """Reject the pod now if a plugin's wait is over (the timer does the same, later)."""
        for plugin, deadline in sorted(self.pending.items(), key=lambda kv: kv[1]):
            if deadline <= now + 1e-9:
                self.reject(plugin, self._timeout_message(plugin))
                return

    def _timeout_message(self, plugin: str) -> str:
        return (
            f"rejected due to timeout after waiting {go_duration(self.timeouts[plugin])} "
            f"at plugin {plugin}"
        )

    async def wait(self) -> Status:
        if not self.timed:
            # a deterministic driver expires waits itself (``Framework.expire_waiting_pods``)
            await self._done.wait()
        while not self._done.is_set():
            if not self.pending:
                break
            plugin, deadline = min(self.pending.items(), key=lambda kv: kv[1])
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                await self._done.wait()
            if not self._done.is_set() and plugin in self.pending:
                if self.expire_all is not None:
                    # every wait that is over at this instant ends now, in a fixed order,
                    # whichever waiting pod's timer the event loop ran first
                    self.expire_all(anyio.current_time())
                else:
                    self.reject(plugin, self._timeout_message(plugin))
        assert self._result is not None
        return self._result


_HOOK_POINTS: dict[str, str] = {
    "kubesched_events_to_register": "EnqueueExtensions",
    "kubesched_pre_enqueue": "PreEnqueue",
    "kubesched_queue_sort_less": "QueueSort",
    "kubesched_pre_filter": "PreFilter",
    "kubesched_pre_filter_add_pod": "PreFilterExtensions.AddPod",
    "kubesched_pre_filter_remove_pod": "PreFilterExtensions.RemovePod",
    "kubesched_filter": "Filter",
    "kubesched_post_filter": "PostFilter",
    "kubesched_pre_score": "PreScore",
    "kubesched_score": "Score",
    "kubesched_normalize_score": "ScoreExtensions.NormalizeScore",
    "kubesched_reserve": "Reserve",
    "kubesched_unreserve": "Unreserve",
    "kubesched_permit": "Permit",
    "kubesched_pre_bind": "PreBind",
    "kubesched_bind": "Bind",
    "kubesched_post_bind": "PostBind",
}
"""Each hook's extension point, as messages name it."""

_ASYNC_POINTS = ", ".join(_HOOK_POINTS[h] for h in _HOOK_POINTS if h in hookspecs.MAY_BE_ASYNC)

_STATUS_OR_NONE = "a Status or None"
_FILTER_RESULT = "a mapping {index in batch: Status} or None"
_SCORE_RESULT = "one integer score per node (an integer array or a sequence of int)"


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)


def _check_sync_hooks(name: str, plugin: Any) -> None:
    """ConfigError if ``plugin`` declares ``async def`` a hook the runtime calls synchronously."""
    for hook, point in _HOOK_POINTS.items():
        if hook in hookspecs.MAY_BE_ASYNC or not hookspecs.implements(plugin, hook):
            continue
        if _is_async(getattr(plugin, hook)):
            raise ConfigError(
                f'plugin "{name}": {hook} ({point}) is declared async def, but it runs in the '
                f"scheduling cycle and must be a plain function (only {_ASYNC_POINTS} may be async)"
            )


def _wrong(value: Any, expected: str) -> str:
    """Why a hook's result is refused: its type, and what the hook must return."""
    if inspect.iscoroutine(value):
        value.close()  # never to be awaited: close it now, without a "never awaited" warning
        return f"returned a coroutine, expected {expected} (the hook must be a plain function, not async def)"
    return f"returned {type(value).__name__}, expected {expected}"


def _as_status(value: Any, plugin: str) -> Status | None:
    """A Status-or-None hook's result; anything else is an Error naming what came back."""
    if value is None or isinstance(value, Status):
        return value
    return Status(Code.ERROR, _wrong(value, _STATUS_OR_NONE), plugin=plugin)


def _is_timeout(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isnan(value)


def _filter_result_error(out: Any, n: int) -> str:
    """What is wrong with a Filter result (only on the error path: it looks at every entry)."""
    if not isinstance(out, Mapping):
        return _wrong(out, _FILTER_RESULT)
    for k, st in out.items():
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            return f"returned the key {k!r} ({type(k).__name__}), expected {_FILTER_RESULT}"
        if not -n <= int(k) < n:
            return f"returned node index {k} for a batch of {n} node(s)"
        if st is not None and not isinstance(st, Status):
            return f"returned {type(st).__name__} for node index {k}, expected a Status"
    return f"returned a {type(out).__name__} whose keys are not indices in a batch of {n} node(s)"


def _registered_events(value: Any) -> list[Any]:
    """EventsToRegister's result as a list (None: no event); TypeError for anything but
    ClusterEvents and ClusterEventWithHints."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(_wrong(value, "a sequence of ClusterEvent / ClusterEventWithHint"))
    items = list(value)
    for item in items:
        if not isinstance(item, (ClusterEvent, ClusterEventWithHint)):
            raise TypeError(f"returned {type(item).__name__} among the events, expected ClusterEvent or ClusterEventWithHint")
    return items


def _all_rejected(distinct: Sequence[Any]) -> bool | None:
    """Whether each of a Filter result's distinct statuses rejects its nodes (None: one of them is
    not a Status at all)."""
    out = True
    for st in distinct:
        if not isinstance(st, Status):
            if st is not None:
                return None
            out = False
        elif st.code == Code.SUCCESS or not st.is_rejected():
            out = False
    return out


def _all_nodes(n: int, st: Status) -> Rejections:
    """``st`` for every node of a batch of ``n``."""
    return Rejections(np.arange(n), np.zeros(n, dtype=np.int64), [st])


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


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for whole / fractional seconds ("1m0s", "10s", "1.5s")."""
    if seconds == 0:
        return "0s"
    total = round(seconds, 9)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    s_txt = f"{s:.9f}".rstrip("0").rstrip(".")
    if h:
        return f"{int(h)}h{int(m)}m{s_txt}s"
    if m:
        return f"{int(m)}m{s_txt}s"
    return f"{s_txt}s"


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


def _plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm




class Framework:
    """One profile: its plugins by extension point, and the runtime that calls them.

    It is also the handle plugins receive: snapshot, nominator, waiting pods, the cluster's
    listers, the transport, and the nominated-pods filter for preemption.
    """

    def __init__(
        self,
        profile_name: str,
        plugins: Mapping[str, Sequence[tuple[str, int]]],
        factories: Mapping[str, Callable[[Any, Framework], Any]],
        plugin_args: Mapping[str, Any] | None = None,
        *,
        multi_point: Sequence[tuple[str, int]] = (),
        disabled: Mapping[str, set[str]] | None = None,
        percentage_of_nodes_to_score: int | None = None,
        arg_paths: Mapping[str, str] | None = None,
        feature_gates: Mapping[str, bool] | None = None,
    ) -> None:
        """Build the profile's plugins.

        ``plugins`` holds the plugins enabled per extension point (``(name, weight)``);
        ``multi_point`` the profile's multiPoint set, expanded onto every extension point each
        plugin implements unless ``disabled`` there (upstream ``expandMultiPointPlugins``).
        """
        self.profile_name = profile_name
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.pm = _plugin_manager()
        self.plugins: dict[str, Any] = {}
        self.points: dict[str, list[PluginEntry]] = {}
        self.waiting_pods: dict[str, WaitingPod] = {}
        # injected by the scheduler (Handle)
        self.snapshot: Any = None
        self.nominator: Any = None
        self.cluster: Any = None  # ClusterState: listers of pods, nodes, PDBs, pod groups
        self.client: Any = None  # Transport
        self.scheduler: Any = None
        self.now: Callable[[], float] = anyio.current_time
        self.wall_clock: Callable[[], float] = lambda: 0.0
        self.feature_gates: dict[str, bool] = dict(feature_gates or {})  # plugins see them when built
        self.rng: random.Random = random.Random(0)
        self.deterministic = False
        # the scheduler's MetricsRecorder while one is attached (:mod:`kubesched._metrics`)
        self.metrics_recorder: MetricsRecorder | None = None
        # node name -> (NodeInfo, nominated PodInfos, the copy with them added); see _with_nominated
        self._nominated_copies: dict[int, tuple[NodeInfo, list[PodInfo], NodeInfo]] = {}
        # the last nominator view asked for, by (nominator generation, snapshot, node-set
        # generation, priority, pod uid)
        self._last_view: tuple[tuple[Any, ...], NominatedView | None] | None = None
        plugin_args = plugin_args or {}
        arg_paths = arg_paths or {}
        disabled = disabled or {}
        names: list[str] = [n for n, _ in multi_point]
        for entries in plugins.values():
            for name, _ in entries:
                if name not in names:
                    names.append(name)
        for name in names:
            factory = factories.get(name)
            if factory is None:
                why = factories.unavailable.get(name) if isinstance(factories, PluginRegistry) else None
                raise PluginError(f'"{name}" does not exist' + (f": {why}" if why else ""))
            try:
                plugin = factory(plugin_args.get(name), self)
            except ConfigError as e:
                raise e.at(field=arg_paths.get(name, f"pluginConfig[{name}].args")) from None
            except Exception as e:
                raise PluginError(f"initializing plugin {name!r}: {e}") from e
            _check_sync_hooks(name, plugin)
            self.plugins[name] = plugin
            try:
                self.pm.register(plugin, name=name)
            except (pluggy.PluginValidationError, ValueError) as e:  # a hookimpl's signature
                raise PluginError(" ".join(str(e).split())) from e
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as e:
            raise PluginError(str(e)) from e
        for point, hook in hookspecs.EXTENSION_POINTS.items():
            specific = list(plugins.get(point, ()))
            specific_names = {n for n, _ in specific}
            off = disabled.get(point, set())
            override: list[str] = []
            mp_only: list[tuple[str, int]] = []
            for name, weight in multi_point:
                if not hookspecs.implements(self.plugins[name], hook):
                    continue
                if "*" in off or name in off:
                    continue
                if name in specific_names:
                    override.append(name)
                    continue
                if all(n != name for n, _ in mp_only):
                    mp_only.append((name, weight))
            # the specific point's weight wins, even 0 (→ 1): upstream getScoreWeights
            ordered: list[tuple[str, int]] = [(n, w) for n, w in specific if n in override]
            ordered += mp_only
            ordered += [(n, w) for n, w in specific if n not in override]
            out: list[PluginEntry] = []
            for name, weight in ordered:
                plugin = self.plugins[name]
                if not hookspecs.implements(plugin, hook):
                    kind = point[0].upper() + point[1:] + "Plugin"
                    raise PluginError(f'plugin "{name}" does not extend {kind} plugin', field=f"plugins.{point}")
                out.append(PluginEntry(name, plugin, weight or 1))
            if out:
                self.points[point] = out
        if len(self.points.get("queueSort", [])) != 1:
            raise PluginError(
                f'only one queue sort plugin required for profile with scheduler name "{profile_name}", '
                f"but got {len(self.points.get('queueSort', []))}",
                field="plugins.queueSort",
            )
        if not self.points.get("bind"):
            raise PluginError(
                f'at least one bind plugin is needed for profile with scheduler name "{profile_name}"',
                field="plugins.bind",
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
        out: list[tuple[str, ClusterEvent, Any]] = []
        rejecting = ("preEnqueue", "preFilter", "filter", "reserve", "permit")
        seen: set[str] = set()
        for point in rejecting:
            for e in self.points.get(point, []):
                if e.name in seen:
                    continue
                seen.add(e.name)
                registered = None
                if hookspecs.implements(e.plugin, "kubesched_events_to_register"):
                    try:
                        registered = _registered_events(e.plugin.kubesched_events_to_register())
                    except Exception as err:  # then it is interested in everything, as without
                        log.error('running "%s" EventsToRegister: %s', e.name, err)
                if registered is None:
                    out.extend((e.name, event, None) for event in unroll_wildcard_resource())
                    continue
                for item in registered:
                    if isinstance(item, ClusterEventWithHint):
                        out.append((e.name, item.event, item.hint))
                    else:
                        out.append((e.name, item, None))
        return out

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

    # --- calling --------------------------------------------------------------------------
    def _call(self, e: PluginEntry, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            st = fn(*args)
        except Exception as err:  # a plugin bug is an Error for this pod, not a dead scheduler
            return Status(Code.ERROR, f'running "{e.name}" {what} plugin: {err}', plugin=e.name, error=err)
        if isinstance(st, Status):
            st.plugin = e.name
        return st

    async def _call_async(self, e: PluginEntry, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            st = fn(*args)
            if inspect.isawaitable(st):
                st = await st
        except Exception as err:
            return Status(Code.ERROR, f'running "{e.name}" {what} plugin: {err}', plugin=e.name, error=err)
        if isinstance(st, Status):
            st.plugin = e.name
        return st

    # In a sampled cycle (``CycleState.record_plugin_metrics``) each plugin call is timed into
    # ``plugin_execution_duration_seconds``; the runners pick the timed caller once per run.
    def _call_timed(self, e: PluginEntry, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        rec = self.metrics_recorder
        if rec is None:
            return self._call(e, what, fn, *args)
        t0 = rec.now()
        out = self._call(e, what, fn, *args)
        rec.plugin(e.name, _POINT_OF[what], out, rec.now() - t0)
        return out

    async def _call_async_timed(self, e: PluginEntry, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        rec = self.metrics_recorder
        if rec is None:
            return await self._call_async(e, what, fn, *args)
        t0 = rec.now()
        out = await self._call_async(e, what, fn, *args)
        rec.plugin(e.name, _POINT_OF[what], out, rec.now() - t0)
        return out

    def _call_plain_timed(self, name: str, point: str, fn: Callable[..., Any], *args: Any) -> Any:
        """A Filter / Score / NormalizeScore call (made without ``_call``), timed: its status
        is the batch's first rejection (or Error if it raised)."""
        rec = self.metrics_recorder
        if rec is None:
            return fn(*args)
        t0 = rec.now()
        try:
            out = fn(*args)
        except Exception:
            rec.plugin_code(name, point, "Error", rec.now() - t0)
            raise
        code = batch_code(out) if point == "Filter" else status_code(out)
        rec.plugin_code(name, point, code, rec.now() - t0)
        return out

    # --- PreFilter ------------------------------------------------------------------------
    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """``RunPreFilterPlugins``: (merged result, first failure, plugins that rejected)."""
        result: PreFilterResult | None = None
        rejected: set[str] = set()
        returned_names: list[str] = []
        rec = state.recording
        call = self._call_timed if state.record_plugin_metrics else self._call
        for e in self.points.get("preFilter", []):
            out = call(e, "prefilter", e.plugin.kubesched_pre_filter, state, pod, nodes)
            st: Status | None = None
            r: PreFilterResult | None = None
            if out is None:
                pass
            elif isinstance(out, Status):
                st = out
            elif isinstance(out, PreFilterResult):
                r = out
            elif (
                isinstance(out, tuple)
                and len(out) == 2
                and (out[0] is None or isinstance(out[0], PreFilterResult))
                and (out[1] is None or isinstance(out[1], Status))
            ):
                r, st = out
                if st is not None:
                    st.plugin = e.name
            else:
                expected = "a PreFilterResult, a Status, (PreFilterResult, Status) or None"
                st = Status(Code.ERROR, _wrong(out, expected), plugin=e.name)
            if r is not None:
                result = r if result is None else result.merge(r)
                if r.node_names is not None:
                    returned_names.append(e.name)
            if rec is not None:
                rec.prefilter_status[e.name] = _verdict(st)
                if r is not None and r.node_names is not None:
                    rec.prefilter_result[e.name] = sorted(r.node_names)
            if st is not None and st.is_skip():
                state.skip_filter_plugins.add(e.name)
                continue
            if st is not None and not st.is_success():
                if st.is_rejected():
                    rejected.add(e.name)
                    return None, st, rejected
                msg = st.message
                if not msg.startswith("running "):
                    st = Status(Code.ERROR, f'running PreFilter plugin "{e.name}": {msg}', plugin=e.name, error=st.error)
                return None, st, rejected
            if result is not None and result.node_names is not None and not result.node_names:
                names = " ".join(returned_names)
                st = Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"node(s) didn't satisfy plugin(s) [{names}] simultaneously"
                    if len(returned_names) > 1
                    else f"node(s) didn't satisfy plugin {returned_names[0]}",
                    plugin=e.name,
                )
                rejected.update(returned_names)
                return result, st, rejected
        return result, None, set(returned_names)

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        """Whether an AddPod or RemovePod extension would run for this cycle (not skipped)."""
        skip = state.skip_filter_plugins
        return any(name not in skip for name, _ in (*self._add_pod, *self._remove_pod))

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        call = self._call_timed if state.record_plugin_metrics else self._call
        for name, fn in self._add_pod:
            if name in state.skip_filter_plugins:
                continue
            e = PluginEntry(name, self.plugins[name])
            st = _as_status(call(e, "AddPod", fn, state, pod, pod_to_add, node_info), name)
            if st is not None and not st.is_success():
                return Status(Code.ERROR, f'running AddPod on PreFilter plugin "{name}": {st.message}', plugin=name)
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        call = self._call_timed if state.record_plugin_metrics else self._call
        for name, fn in self._remove_pod:
            if name in state.skip_filter_plugins:
                continue
            e = PluginEntry(name, self.plugins[name])
            st = _as_status(call(e, "RemovePod", fn, state, pod, pod_to_remove, node_info), name)
            if st is not None and not st.is_success():
                return Status(Code.ERROR, f'running RemovePod on PreFilter plugin "{name}": {st.message}', plugin=name)
        return None

    # --- Filter ---------------------------------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Mapping[int, Status]:
        """``RunFilterPlugins`` over a batch: {position in batch: first failing status}.

        Plugins run in profile order; a node rejected by one plugin is not shown to the next.
        The result is a :class:`Rejections` (arrays) for a batch of several nodes.
        """
        if len(nodes) == 1:
            return self._run_filter_plugins_one(state, pod, nodes)
        parts: list[tuple[np.ndarray | None, Mapping[int, Status]]] = []
        alive = nodes
        positions: np.ndarray | None = None  # positions of ``alive`` within ``nodes``
        skip = state.skip_filter_plugins
        timed = state.record_plugin_metrics
        for name, fn in self._filter:
            if name in skip:
                continue
            n = len(alive)
            if n == 0:
                break
            try:
                out = self._call_plain_timed(name, "Filter", fn, state, pod, alive) if timed else fn(state, pod, alive)
            except Exception as err:
                st = Status(Code.ERROR, f'running "{name}" filter plugin: {err}', plugin=name, error=err)
                parts.append((positions, _all_nodes(n, st)))
                break
            if out is None:
                continue
            # one look at the result per call (its type, its distinct statuses), none per node
            if type(out) is not dict and not isinstance(out, Mapping):
                parts.append((positions, _all_nodes(n, self._bad_filter_result(name, out, n))))
                break
            if not out:
                continue
            # Plugins share one Status among the nodes they reject for the same reason: look at
            # each distinct status once and record the rejected positions in bulk.
            if isinstance(out, Rejections):
                rej = out
                distinct: Sequence[Status | None] = out.statuses
            else:
                sts = list(out.values())
                distinct = list(dict(zip(map(id, sts), sts, strict=True)).values())
                rej = None
            all_rejected = _all_rejected(distinct)
            if all_rejected is None:  # a value that is not a Status
                parts.append((positions, _all_nodes(n, self._bad_filter_result(name, out, n))))
                break
            keep = np.ones(n, dtype=bool)
            try:
                if all_rejected:
                    for rejected in distinct:
                        assert rejected is not None
                        rejected.plugin = name
                    if rej is None:
                        rej = Rejections.of(out)
                    keep[rej.positions] = False
                    result: Mapping[int, Status] = rej
                else:
                    bad: dict[int, Status] = {}
                    for i, st in out.items():
                        if st is None or st.code == Code.SUCCESS:
                            continue
                        st.plugin = name
                        if not st.is_rejected():
                            msg = f'running "{name}" filter plugin: {st.message}'
                            st = Status(Code.ERROR, msg, plugin=name, error=st.error)
                        bad[int(i)] = st
                    if not bad:
                        continue
                    keep[np.fromiter(bad.keys(), np.int64, len(bad))] = False
                    result = bad
            except (TypeError, ValueError, IndexError, OverflowError):  # keys that are no index in the batch
                parts.append((positions, _all_nodes(n, self._bad_filter_result(name, out, n))))
                break
            parts.append((positions, result))
            idx = keep.nonzero()[0]
            positions = idx if positions is None else positions[idx]
            alive = alive.subset(idx)
        if not parts:
            return {}
        return merge_rejections(parts)

    def _run_filter_plugins_one(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> dict[int, Status]:
        """:meth:`run_filter_plugins` for a batch of one node, without the position bookkeeping."""
        failed: dict[int, Status] = {}
        skip = state.skip_filter_plugins
        timed = state.record_plugin_metrics
        for name, fn in self._filter:
            if name in skip:
                continue
            try:
                out = self._call_plain_timed(name, "Filter", fn, state, pod, nodes) if timed else fn(state, pod, nodes)
            except Exception as err:
                msg = f'running "{name}" filter plugin: {err}'
                return {0: Status(Code.ERROR, msg, plugin=name, error=err)}
            if out is None:
                continue
            if type(out) is not dict and not isinstance(out, Mapping):
                return {0: self._bad_filter_result(name, out, 1)}
            if not out:
                continue
            for i, st in out.items():
                # the batch's index rules: 0 or -1 (as numpy indexing), and a Status or None
                if type(i) is not bool and i in (0, -1) and (st is None or isinstance(st, Status)):
                    if st is None or st.code == Code.SUCCESS:
                        continue
                    st.plugin = name
                    if not st.is_rejected():
                        st = Status(Code.ERROR, f'running "{name}" filter plugin: {st.message}', plugin=name, error=st.error)
                    failed[0] = st
                    continue
                return {0: self._bad_filter_result(name, out, 1)}
            if failed:
                break
        return failed

    @staticmethod
    def _bad_filter_result(name: str, out: Any, n: int) -> Status:
        """The Error for every node of a batch whose Filter result is not ``{index: Status}``."""
        return Status(Code.ERROR, f'running "{name}" filter plugin: {_filter_result_error(out, n)}', plugin=name)

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pod_priority: int | None = None
    ) -> Status | None:
        """``RunFilterPluginsWithNominatedPods``: the two-pass filter for one node."""
        prio = pod.spec.priority or 0 if pod_priority is None else pod_priority
        nominator = self.nominator
        nominated = nominator.for_node(node_info.name) if nominator else None
        if nominated:
            uid = pod.metadata.uid
            nominated = [p for p in nominated if p.priority >= prio and p.uid != uid]
        if nominated:
            # pass 1: with the nominated pods of equal or higher priority added
            state_to_use = state.clone()
            info_to_use = node_info.clone()
            for p in nominated:
                info_to_use.add_pod(p)
                err = self.run_pre_filter_extension_add_pod(state_to_use, pod, p, info_to_use)
                if err is not None:
                    return err
            st = self._run_filter_plugins_one(state_to_use, pod, NodeBatch([info_to_use])).get(0)
            if st is not None:
                return st
        # pass 2 (the only one without nominated pods): the node as it is
        return self._run_filter_plugins_one(state, pod, NodeBatch([node_info])).get(0)

    def run_filter_plugins_with_nominated_pods_rows(
        self,
        state: CycleState,
        pod: Pod,
        rows: np.ndarray,
        pod_priority: int | None = None,
        *,
        base: RowOverlay | None = None,
    ) -> Mapping[int, Status]:
        """:meth:`run_filter_plugins_with_nominated_pods` for the snapshot's nodes ``rows``, each
        changed by ``base`` when given (a :class:`RowOverlay` over ``rows``): {position in
        ``rows``: failing status}.

        One batch Filter call shows every node as its first pass sees it: the nodes with
        nominated pods of priority >= the pod's with them added (their requests are column
        deltas from the nominator's arrays), the others as they are (their only pass).  A second
        call runs the second pass of the nodes with nominated pods that passed the first.  No
        node is copied unless a plugin reads the NodeInfos.  With an AddPod extension to run, the
        nodes with nominated pods go one by one through the per-node two-pass Filter instead.
        """
        snap = self.snapshot
        prio = pod.spec.priority or 0 if pod_priority is None else pod_priority
        nominator = self.nominator
        view: NominatedView | None = None
        if nominator is not None and nominator.nominated_pods:
            key = (nominator.generation, snap, snap.tree_generation, prio, pod.metadata.uid)
            last = self._last_view
            if last is not None and last[0] == key:
                view = last[1]
            else:
                view = nominator.view(snap, prio, pod.metadata.uid)
                self._last_view = (key, view)
        has = view.counts[rows] > 0 if view is not None else None
        if has is None or not has.any():
            return self._filter_rows(state, pod, rows, base)
        assert view is not None
        first = has.nonzero()[0]
        skip = state.skip_filter_plugins
        if any(name not in skip for name, _ in self._add_pod):
            failed: dict[int, Status] = {}
            for i in first.tolist():
                ni = base.info_at(i) if base is not None else snap.node_infos[int(rows[i])]
                st = self.run_filter_plugins_with_nominated_pods(state, pod, ni, prio)
                if st is not None and not st.is_success():
                    failed[i] = st
            rest = (~has).nonzero()[0]
            if len(rest):
                out = self._filter_rows(state, pod, rows[rest], None if base is None else base.subset(rest))
                if out:
                    keys = np.fromiter(out.keys(), np.int64, len(out))
                    failed.update(zip(rest[keys].tolist(), out.values(), strict=True))
            return failed
        # pass 1 of the nodes with nominated pods, and the only pass of the others
        ov = self._nominated_overlay(view, rows, has, base)
        first_pass = Rejections.of(self.run_filter_plugins(state, pod, NodeBatch(snapshot=snap, rows=rows, overlay=ov)))
        if first_pass:
            again = has.copy()
            again[first_pass.positions] = False
            second = again.nonzero()[0]
        else:
            second = first
        if not len(second):
            return first_pass
        # pass 2: the nodes with nominated pods that passed, as they are
        out = self._filter_rows(state, pod, rows[second], None if base is None else base.subset(second))
        return merge_rejections([(None, first_pass), (second, out)]) if out else first_pass

    def _filter_rows(
        self, state: CycleState, pod: Pod, rows: np.ndarray, base: RowOverlay | None
    ) -> Mapping[int, Status]:
        """One Filter pass over the snapshot's ``rows`` (changed by ``base`` when given)."""
        if base is None:
            return self.run_filter_plugins(state, pod, NodeBatch(snapshot=self.snapshot, indices=rows))
        return self.run_filter_plugins(state, pod, NodeBatch(snapshot=self.snapshot, rows=rows, overlay=base))

    def _nominated_overlay(
        self, view: NominatedView, rows: np.ndarray, has: np.ndarray, base: RowOverlay | None
    ) -> RowOverlay:
        """``rows`` (each changed by ``base``) with the view's nominated pods added where ``has``."""
        snap = self.snapshot

        def column(kind: str, resource: str) -> np.ndarray:
            # the view's delta is 0 on the rows without its pods: no need to mask with ``has``
            col: np.ndarray = snap.column(kind, resource)[rows] if base is None else base.column(kind, resource)
            out: np.ndarray = col + view.delta(kind, resource)[rows]
            return out

        def columns(kind: str, resources: tuple[str, ...]) -> np.ndarray:
            cols: np.ndarray = snap.columns(kind, resources).take(rows, axis=1) if base is None else base.columns(kind, resources)
            out: np.ndarray = cols + view.deltas(kind, resources).take(rows, axis=1)
            return out

        def make(i: int) -> NodeInfo:
            row = int(rows[i])
            if not has[i]:
                return base.info_at(i) if base is not None else snap.node_infos[row]
            nominated = view.pods(row)
            if base is None:
                return self._with_nominated(snap.node_infos[row], nominated)
            info = base.info_at(i).clone()
            for p in nominated:
                info.add_pod(p)
            return info

        return RowOverlay(column, make, columns=columns)

    def _with_nominated(self, ni: NodeInfo, nominated: list[PodInfo]) -> NodeInfo:
        """A copy of ``ni`` with ``nominated`` added.

        For a NodeInfo of the current snapshot (never changed in place: the snapshot replaces a
        changed node's NodeInfo) the copy is reused while the node and the nominated PodInfos
        are the same objects: Filter plugins do not change the NodeInfos they are shown, and
        the pods nominated to a node stay the same over many scheduling attempts.
        """
        snapshot = self.snapshot
        if snapshot is None or snapshot.get(ni.name) is not ni:
            info: NodeInfo = ni.clone()
            for p in nominated:
                info.add_pod(p)
            return info
        cache = self._nominated_copies
        key = id(ni)  # the entry holds ni: the id cannot be reused while it is there
        hit = cache.get(key)
        if hit is not None and hit[0] is ni and len(hit[1]) == len(nominated) and all(
            a is b for a, b in zip(hit[1], nominated, strict=True)
        ):
            return hit[2]
        info = ni.clone()
        for p in nominated:
            info.add_pod(p)
        if len(cache) > 4 * max(len(snapshot or ()), 1024):
            cache.clear()
        cache[key] = (ni, nominated, info)
        return info

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
            wp = WaitingPod(pod, timeouts, anyio.current_time())
            wp.expire_all = self.expire_waiting_pods
            wp.timed = not self.deterministic
            self.waiting_pods[wp.uid] = wp
            return Status(Code.WAIT, f'one or more plugins asked to wait and no plugin rejected pod "{pod.metadata.name}"')
        return None

    async def wait_on_permit(self, pod: Pod) -> Status | None:
        wp = self.waiting_pods.get(pod.metadata.uid)
        if wp is None:
            return None
        try:
            st = await wp.wait()
        finally:
            self.waiting_pods.pop(pod.metadata.uid, None)
        if st.is_success():
            return None
        return st

    def next_permit_deadline(self) -> float | None:
        """The earliest instant a waiting pod's wait ends."""
        deadlines = [d for wp in self.waiting_pods.values() if not wp.released for d in wp.pending.values()]
        return min(deadlines, default=None)

    def expire_waiting_pods(self, now: float) -> None:
        """Reject every waiting pod whose wait is over, in the order they started waiting."""
        for wp in list(self.waiting_pods.values()):
            wp.expire(now)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]:
        return iter(list(self.waiting_pods.values()))

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

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

    # --- handle conveniences ----------------------------------------------------------------
    def activate(self, pods: Sequence[Pod]) -> None:
        if self.scheduler is not None:
            self.scheduler.queue.activate(pods)

    def spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Start a background task in the scheduler's task group."""
        assert self.scheduler is not None, "the framework is not attached to a running scheduler"
        self.scheduler.spawn(fn, *args)


def build_framework(
    profile: Any,
    registry: Mapping[str, Callable[[Any, Framework], Any]],
    feature_gates: Mapping[str, bool] | None = None,
) -> Framework:
    """A Framework for a :class:`kubesched._config.ProfileConfig` (``feature_gates``: what its
    plugins see when they are built)."""
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
    )
