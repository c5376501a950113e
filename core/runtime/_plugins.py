"""What a :class:`~kubesched.runtime._framework.Framework` is built from: the plugin entries, the
profile's construction (upstream ``NewFramework`` and ``expandMultiPointPlugins``), the checks of
the hooks a plugin implements, and the wrappers every plugin call goes through.
"""

from __future__ import annotations

import inspect
import logging
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pluggy

from kubesched import hookspecs
from kubesched._errors import ConfigError, KubeschedError
from kubesched._logs import ErrorLog, PluginFailure
from kubesched.metrics._metrics import batch_code, status_code
from kubesched.runtime._events import ClusterEvent, ClusterEventWithHint, unroll_wildcard_resource
from kubesched.runtime._status import Code, Status

if TYPE_CHECKING:
    from kubesched.metrics._metrics import MetricsRecorder
    from kubesched.runtime._handle import Handle

log = logging.getLogger("kubesched")

# the extension point of each ``_call`` site, as ``plugin_execution_duration_seconds`` names it
_POINT_OF = {
    "pre_enqueue": "PreEnqueue", "prefilter": "PreFilter", "AddPod": "PreFilterExtensionAddPod",
    "RemovePod": "PreFilterExtensionRemovePod", "postfilter": "PostFilter", "prescore": "PreScore",
    "reserve": "Reserve", "unreserve": "Unreserve", "permit": "Permit", "prebind": "PreBind",
    "prebindpreflight": "PreBindPreFlight", "bind": "Bind", "postbind": "PostBind",
}


class PluginError(KubeschedError):
    """A profile that cannot be built (unknown plugin, bad args, no QueueSort...).

    ``field`` is the path below the profile it concerns (``plugins.queueSort``), if known.
    """

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class PluginRegistry(dict[str, Callable[[Any, "Handle"], Any]]):
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
    "kubesched_placement_generate": "PlacementGenerate",
    "kubesched_placement_score": "PlacementScore",
    "kubesched_normalize_placement_score": "PlacementScoreExtensions.NormalizePlacementScore",
}
"""Each hook's extension point, as messages name it."""

_ASYNC_POINTS = ", ".join(_HOOK_POINTS[h] for h in _HOOK_POINTS if h in hookspecs.MAY_BE_ASYNC)

_STATUS_OR_NONE = "a Status or None"
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


_IMPL_MARK = hookspecs.PROJECT + "_impl"


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, answering its question about each attribute of a plugin faster.

    ``register`` asks :meth:`parse_hookimpl_opts` about every name in ``dir(plugin)``, and pluggy
    answers each with ``inspect.getattr_static`` (about 40 µs a name; 35 ms a profile, most of
    building a Framework).  For the usual plugin, an instance with a ``__dict__``, the answer is
    read here the way pluggy reads it: the instance's own value first (a function or a method
    is left to pluggy, anything else is no hook), else the first class along the MRO that
    defines the name, whose function, staticmethod, classmethod or method carries the
    ``@hookimpl`` options or does not.  Classes, modules, slots and names no class defines go
    to pluggy itself, so what is registered does not change.
    """

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        found = _class_level_opts(plugin, name)
        if found is _PLUGGY:
            return super().parse_hookimpl_opts(plugin, name)
        return found


def _class_level_opts(plugin: Any, name: str) -> Any:
    """``name``'s ``@hookimpl`` options on ``plugin`` (None: no hook), or ``_PLUGGY`` where
    pluggy is to judge."""
    if isinstance(plugin, (type, types.ModuleType)):
        return _PLUGGY
    own = getattr(plugin, "__dict__", None)
    if own is None:
        return _PLUGGY
    if name in own:
        return _PLUGGY if isinstance(own[name], (types.FunctionType, types.MethodType)) else None
    for klass in type(plugin).__mro__:
        value = klass.__dict__.get(name, _ABSENT)
        if value is _ABSENT:
            continue
        if isinstance(value, types.MethodType):
            return _marker_opts(value.__func__)
        if isinstance(value, (types.FunctionType, staticmethod, classmethod)):
            return _marker_opts(value)
        if isinstance(value, types.MemberDescriptorType):  # a slot: its value is the instance's
            return _PLUGGY
        return None  # a property, a constant, a nested class...: never a hook
    return _PLUGGY


def _marker_opts(holder: Any) -> dict[str, Any] | None:
    """The ``@hookimpl`` options on ``holder``, or on its ``__func__`` (pluggy's reading)."""
    opts = getattr(holder, _IMPL_MARK, None)
    if opts is None:
        opts = getattr(getattr(holder, "__func__", None), _IMPL_MARK, None)
    return opts if isinstance(opts, dict) else None


_PLUGGY = object()
_ABSENT = object()


def _plugin_manager() -> pluggy.PluginManager:
    pm = _PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def build_plugins(
    handle: Handle,
    pm: pluggy.PluginManager,
    built: dict[str, Any],
    points: dict[str, list[PluginEntry]],
    profile_name: str,
    plugins: Mapping[str, Sequence[tuple[str, int]]],
    factories: Mapping[str, Callable[[Any, Handle], Any]],
    plugin_args: Mapping[str, Any] | None,
    *,
    multi_point: Sequence[tuple[str, int]],
    disabled: Mapping[str, set[str]] | None,
    arg_paths: Mapping[str, str] | None,
    version: tuple[int, int] | None = None,
) -> None:
    """``NewFramework``: build the profile's plugins (each factory gets ``handle``) into
    ``built`` and register them with ``pm``; fill ``points`` with each extension point's
    plugins in order, the multiPoint set expanded (``expandMultiPointPlugins``); an extension
    point that ``version`` (the emulated minor) does not have yet is left empty
    (:data:`kubesched.hookspecs.POINTS_SINCE`)."""
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
            plugin = factory(plugin_args.get(name), handle)
        except ConfigError as e:
            raise e.at(field=arg_paths.get(name, f"pluginConfig[{name}].args")) from None
        except Exception as e:
            raise PluginError(f"initializing plugin {name!r}: {e}") from e
        _check_sync_hooks(name, plugin)
        built[name] = plugin
        try:
            pm.register(plugin, name=name)
        except (pluggy.PluginValidationError, ValueError) as e:  # a hookimpl's signature
            raise PluginError(" ".join(str(e).split())) from e
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as e:
        raise PluginError(str(e)) from e
    for point, hook in hookspecs.EXTENSION_POINTS.items():
        since = hookspecs.POINTS_SINCE.get(point)
        if since is not None and version is not None and version < since:
            continue
        specific = list(plugins.get(point, ()))
        specific_names = {n for n, _ in specific}
        off = disabled.get(point, set())
        override: list[str] = []
        mp_only: list[tuple[str, int]] = []
        for name, weight in multi_point:
            if not hookspecs.implements(built[name], hook):
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
            plugin = built[name]
            if not hookspecs.implements(plugin, hook):
                kind = point[0].upper() + point[1:] + "Plugin"
                raise PluginError(f'plugin "{name}" does not extend {kind} plugin', field=f"plugins.{point}")
            out.append(PluginEntry(name, plugin, weight or 1))
        if out:
            points[point] = out
    if len(points.get("queueSort", [])) != 1:
        raise PluginError(
            f'only one queue sort plugin required for profile with scheduler name "{profile_name}", '
            f"but got {len(points.get('queueSort', []))}",
            field="plugins.queueSort",
        )
    if not points.get("bind"):
        raise PluginError(
            f'at least one bind plugin is needed for profile with scheduler name "{profile_name}"',
            field="plugins.bind",
        )


def registered_cluster_events(points: Mapping[str, list[PluginEntry]]) -> list[tuple[str, ClusterEvent, Any]]:
    """Every (plugin, event, hint) registered by a plugin that can reject pods."""
    out: list[tuple[str, ClusterEvent, Any]] = []
    rejecting = ("preEnqueue", "preFilter", "filter", "reserve", "permit")
    seen: set[str] = set()
    for point in rejecting:
        for e in points.get(point, []):
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


def _raised(name: str, what: str, err: Exception) -> Status:
    """The Error status of plugin ``name`` that raised ``err`` in its ``what`` hook."""
    failure = PluginFailure(name, _POINT_OF[what], err)
    return Status(Code.ERROR, f'running "{name}" {what} plugin: {err}', plugin=name, error=failure)


class PluginCalls:
    """The wrappers every plugin call of a profile goes through: the plugin's name on its status,
    an exception as an Error status for this pod (a plugin bug never takes the scheduler down),
    and, in a cycle sampled for plugin metrics (``CycleState.record_plugin_metrics``), the call
    timed into ``plugin_execution_duration_seconds``.  The exception travels in the status as a
    :class:`~kubesched._logs.PluginFailure` (plugin, extension point, traceback), which
    :attr:`errors` logs where the failure is handled.

    The Framework holds one and hands it to its runners; ``recorder`` is the MetricsRecorder the
    Framework was given (None: nothing is timed).  A runner picks :meth:`call` or :meth:`timed`
    once per run, never per plugin.
    """

    __slots__ = ("errors", "recorder")

    def __init__(self) -> None:
        self.recorder: MetricsRecorder | None = None
        self.errors = ErrorLog()
        """The profile's rate-limited error log (:class:`kubesched._logs.ErrorLog`)."""

    @staticmethod
    def call(e: PluginEntry, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            st = fn(*args)
        except Exception as err:  # a plugin bug is an Error for this pod, not a dead scheduler
            return _raised(e.name, what, err)
        if isinstance(st, Status):
            st.plugin = e.name
        return st

    @staticmethod
    async def call_async(e: PluginEntry, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            st = fn(*args)
            if inspect.isawaitable(st):
                st = await st
        except Exception as err:
            return _raised(e.name, what, err)
        if isinstance(st, Status):
            st.plugin = e.name
        return st

    def timed(self, e: PluginEntry, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        """:meth:`call`, timed (``upstream runXPlugin`` when ``ShouldRecordPluginMetrics``)."""
        rec = self.recorder
        if rec is None:
            return self.call(e, what, fn, *args)
        t0 = rec.now()
        out = self.call(e, what, fn, *args)
        rec.plugin(e.name, _POINT_OF[what], out, rec.now() - t0)
        return out

    async def timed_async(self, e: PluginEntry, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        """:meth:`call_async`, timed."""
        rec = self.recorder
        if rec is None:
            return await self.call_async(e, what, fn, *args)
        t0 = rec.now()
        out = await self.call_async(e, what, fn, *args)
        rec.plugin(e.name, _POINT_OF[what], out, rec.now() - t0)
        return out

    def timed_batch(self, name: str, point: str, fn: Callable[..., Any], *args: Any) -> Any:
        """A Filter / Score / NormalizeScore call (made by its runner without :meth:`call`),
        timed: its status is the batch's first rejection (or Error if it raised)."""
        rec = self.recorder
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
