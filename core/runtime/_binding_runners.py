"""The runners from the chosen node to the bind, of a :class:`~kubesched.runtime._framework.Framework`
(upstream ``RunReservePluginsReserve`` / ``Unreserve``, ``RunPermitPlugins``,
``RunPreBindPlugins``, ``RunBindPlugins``, ``RunPostBindPlugins``): an object holding the
profile's Reserve, Permit, PreBind, Bind and PostBind plugins, which the Framework holds.  The
pods that wait at Permit are the Framework's (:mod:`kubesched.runtime._waiting_pods`): Permit here only
says which plugins asked to wait, and for how long.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from types import CoroutineType
from typing import Any

import anyio

from kubesched import hookspecs
from kubesched._logs import PluginFailure
from kubesched.api._objects import Pod
from kubesched.runtime._cyclestate import (
    PRE_BIND_PRE_FLIGHT_KEY,
    CycleState,
    PreBindPreFlightResult,
)
from kubesched.runtime._plugins import PluginCalls, PluginEntry, _as_status, _raised, _wrong
from kubesched.runtime._status import SKIP, Code, Status
from kubesched.runtime._waiting_pods import go_duration
from kubesched.scheduler._results import WAIT
from kubesched.scheduler._results import verdict as _verdict

MAX_PERMIT_TIMEOUT = 15 * 60.0
MSG_OTHER_PRE_BIND_FAILED = "some other PreBind operation failed"  # v1.36 RunPreBindPlugins' cancel cause
_NOT_AN_ANSWER = object()  # ``pre_flight_skip`` when no in-tree plugin names one: no answer is this

PreBindGroupMember = Callable[[Callable[[], None]], Coroutine[Any, Any, None]]
"""One plugin of a parallel PreBind group: run with the function that cancels the group."""
PreBindGroupRunner = Callable[[list[PreBindGroupMember]], Awaitable[None]]
"""Runs a parallel PreBind group's members at the same time and returns when all have ended
(the binding cycle's gives each its turn in a simulation: :mod:`kubesched.scheduler._parallel_prebind`)."""


async def run_concurrently(members: list[PreBindGroupMember]) -> None:
    """The plain :data:`PreBindGroupRunner`: one task group, its scope the group's cancel."""
    async with anyio.create_task_group() as tg:

        def cancel() -> None:
            tg.cancel_scope.cancel()

        for m in members:
            tg.start_soon(m, cancel)


def pre_bind_groups(plugins: list[PluginEntry], skipped: set[str], parallel: set[str]) -> list[list[PluginEntry]]:
    """``getPreBindPluginGroups`` (v1.36): consecutive plugins that allow parallel PreBind form
    one group, any other plugin a group of its own; skipped plugins are left out, but a skipped
    plugin that does not allow it still ends the group before it."""
    groups: list[list[PluginEntry]] = []
    group: list[PluginEntry] = []
    for e in plugins:
        if e.name in parallel:
            if e.name not in skipped:
                group.append(e)
            continue
        if group:
            groups.append(group)
            group = []
        if e.name not in skipped:
            groups.append([e])
    if group:
        groups.append(group)
    return groups


def _is_timeout(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isnan(value)


class BindingRunners:
    """A profile's Reserve, Permit, PreBind, Bind and PostBind plugins, in profile order, and
    the runners that call them (the Framework holds one)."""

    def __init__(self, points: Mapping[str, list[PluginEntry]], calls: PluginCalls) -> None:
        self.calls = calls
        self.reserve: list[PluginEntry] = points.get("reserve", [])
        # Unreserve: the Reserve plugins that implement it, in reverse order
        self.unreserve: list[PluginEntry] = [
            e for e in reversed(self.reserve) if hookspecs.implements(e.plugin, "kubesched_unreserve")
        ]
        self.permit: list[PluginEntry] = points.get("permit", [])
        self.pre_bind: list[PluginEntry] = points.get("preBind", [])
        # the PreBind plugins with a ``pre_bind_pre_flight`` (NominatedNodeNameForExpectation),
        # each with it, in profile order
        self.pre_flights: list[tuple[PluginEntry, Callable[..., Any]]] = [
            (e, fn) for e in self.pre_bind if (fn := getattr(e.plugin, "pre_bind_pre_flight", None)) is not None
        ]
        # an in-tree pre-flight's usual answer, "Skip, and my PreBind may run in parallel", is one
        # shared tuple it names as ``pre_bind_pre_flight_skip`` (plugins/_helper.py); RunPreBindPreFlights
        # takes that object by identity (what its checks make of it: Skip, parallel allowed)
        self.pre_flight_skip: object = _NOT_AN_ANSWER
        for e, _ in self.pre_flights:
            out = getattr(e.plugin, "pre_bind_pre_flight_skip", None)
            if (
                type(e.plugin).__module__.startswith("kubesched.plugins.")
                and type(out) is tuple and len(out) == 2 and out[1] is SKIP
                and type(out[0]) is PreBindPreFlightResult and out[0].allow_parallel is True
            ):
                self.pre_flight_skip = out
        # A pod that a pre-flight plugin's own PreFilter skipped in this cycle gets that shared
        # Skip from its pre-flight, when the plugin says so with a true
        # ``pre_flight_skips_pre_filter_skipped`` (in-tree only: VolumeBinding, whose Reserve then
        # finds no claim to bind, so it must be a Reserve plugin here too; DynamicResources, which
        # then holds no claim; their tests check it).  When every pre-flight plugin says so,
        # a cycle that records and times nothing and skipped each at PreFilter gets from
        # RunPreBindPreFlights what their answers would make, without a call.
        reserves = {e.name for e in self.reserve}
        plain = [
            e.name
            for e, _ in self.pre_flights
            if type(e.plugin).__module__.startswith("kubesched.plugins.")
            and getattr(e.plugin, "pre_flight_skips_pre_filter_skipped", False) is True
            and getattr(e.plugin, "pre_bind_pre_flight_skip", None) is self.pre_flight_skip
            and (e.name in reserves or not hookspecs.implements(e.plugin, "kubesched_reserve"))
        ]
        self.plain_pre_flights: tuple[str, ...] = tuple(plain) if len(plain) == len(self.pre_flights) else ()
        self._pre_bind_names = frozenset(e.name for e in self.pre_bind)
        # every PreBind plugin has a pre-flight: when each says Skip, none runs
        self.all_pre_flighted = len(self.pre_flights) == len(self.pre_bind)
        self.bind: list[PluginEntry] = points.get("bind", [])
        self.post_bind: list[PluginEntry] = points.get("postBind", [])

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        rec = state.recording
        timed = self.calls.timed if state.record_plugin_metrics else None
        for e in self.reserve:
            if timed is not None:
                out = timed(e, "reserve", e.plugin.kubesched_reserve, state, pod, node_name)
            else:  # PluginCalls.call, inlined: a raise is this plugin's Error, its name on the status
                try:
                    out = e.plugin.kubesched_reserve(state, pod, node_name)
                except Exception as err:
                    out = _raised(e.name, "reserve", err)
                else:
                    if out is None and rec is None:  # the usual answer
                        continue
                    if isinstance(out, Status):
                        out.plugin = e.name
            st = _as_status(out, e.name)
            if rec is not None:
                rec.reserve[e.name] = _verdict(st)
            if st is not None and not st.is_success():
                if st.is_rejected():
                    return st
                return Status(Code.ERROR, f'running Reserve plugin "{e.name}": {st.message}', plugin=e.name, error=st.error)
        return None

    async def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        call = self.calls.timed_async if state.record_plugin_metrics else self.calls.call_async
        for e in self.unreserve:
            out = await call(e, "unreserve", e.plugin.kubesched_unreserve, state, pod, node_name)
            if out is not None:  # it raised (its result is otherwise ignored)
                self._dropped_error(pod, out)

    def run_permit_plugins(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status | None, dict[str, float]]:
        """``RunPermitPlugins`` but for the waiting: (the first rejection or error, None if
        there is none; then each plugin that asked to wait, with its timeout)."""
        timeouts: dict[str, float] = {}
        rec = state.recording
        call = self.calls.timed if state.record_plugin_metrics else self.calls.call
        for e in self.permit:
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
                return st, {}
            if st.is_wait():
                timeouts[e.name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
                continue
            return Status(Code.ERROR, f'running Permit plugin "{e.name}": {st.message}', plugin=e.name, error=st.error), {}
        return None, timeouts

    async def run_pre_bind_plugins(
        self, state: CycleState, pod: Pod, node_name: str, run_group: PreBindGroupRunner | None = None
    ) -> Status | None:
        """``RunPreBindPlugins``: the first rejection or error, else None.  Without
        PreBindPreFlight (the binding cycle runs it with NominatedNodeNameForExpectation) every
        plugin runs, one after another; with it, the plugins it skipped do not run (v1.34) and,
        from 1.36, consecutive plugins that allow it run at the same time (``run_group``)."""
        pre_flight = state.get(PRE_BIND_PRE_FLIGHT_KEY)
        if pre_flight is None:
            return await self._run_pre_bind_sequence(self.pre_bind, state, pod, node_name)
        skipped, parallel = pre_flight
        if skipped and skipped.issuperset(self._pre_bind_names):
            return None  # every one skipped (the usual pod: no volume, no claim): no group, none runs
        if not parallel:
            plugins = [e for e in self.pre_bind if e.name not in skipped] if skipped else self.pre_bind
            return await self._run_pre_bind_sequence(plugins, state, pod, node_name)
        # v1.36 framework.go RunPreBindPlugins / getPreBindPluginGroups (kubernetes#135393): a
        # group of one runs in the binding cycle's own task, a larger one concurrently, and the
        # first of its plugins to fail gives the status (the others are cancelled: "some other
        # PreBind operation failed"); the groups run one after another
        for group in pre_bind_groups(self.pre_bind, skipped, parallel):
            if len(group) == 1:
                st = await self._run_pre_bind_sequence(group, state, pod, node_name)
            else:
                st = await self._run_pre_bind_group(group, state, pod, node_name, run_group or run_concurrently)
            if st is not None:
                return st
        return None

    async def _run_pre_bind_sequence(
        self, plugins: list[PluginEntry], state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        for e in plugins:
            st = await self._run_pre_bind_plugin(e, state, pod, node_name)
            if st is not None:
                return st
        return None

    async def _run_pre_bind_plugin(self, e: PluginEntry, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """One plugin's PreBind: None when it succeeded (or skipped), else its rejection or
        its error as ``running PreBind plugin "X": ...``."""
        call = self.calls.timed_async if state.record_plugin_metrics else self.calls.call_async
        st = _as_status(await call(e, "prebind", e.plugin.kubesched_pre_bind, state, pod, node_name), e.name)
        rec = state.recording
        if rec is not None:
            rec.prebind[e.name] = _verdict(st)
        if st is None or st.is_success() or st.is_skip():
            return None
        if st.is_rejected():
            return st
        return Status(Code.ERROR, f'running PreBind plugin "{e.name}": {st.message}', plugin=e.name, error=st.error)

    async def _run_pre_bind_group(
        self, group: list[PluginEntry], state: CycleState, pod: Pod, node_name: str, run_group: PreBindGroupRunner
    ) -> Status | None:
        first: list[Status] = []

        def member(e: PluginEntry) -> PreBindGroupMember:
            async def run(cancel: Callable[[], None]) -> None:
                try:
                    st = await self._run_pre_bind_plugin(e, state, pod, node_name)
                except anyio.get_cancelled_exc_class():
                    if first and state.recording is not None:  # cancelled by a failing neighbour
                        state.recording.prebind[e.name] = MSG_OTHER_PRE_BIND_FAILED
                    raise
                if st is not None and not first:
                    first.append(st)  # ``SendWithCancel``: the first status is kept
                    cancel()

            return run

        await run_group([member(e) for e in group])
        return first[0] if first else None

    async def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        last: Status | None = SKIP  # (a Skip with no plugin name, as Status(Code.SKIP), not made)
        rec = state.recording
        timed = self.calls.timed_async if state.record_plugin_metrics else None
        for e in self.bind:
            if timed is not None:
                out = await timed(e, "bind", e.plugin.kubesched_bind, state, pod, node_name)
            else:  # PluginCalls.call_async, inlined (one coroutine less a pod): the same answer
                try:
                    out = e.plugin.kubesched_bind(state, pod, node_name)
                    if type(out) is CoroutineType or inspect.isawaitable(out):
                        out = await out
                except Exception as err:
                    out = _raised(e.name, "bind", err)
                else:
                    if out is None and rec is None:  # the usual answer: this plugin bound the pod
                        return None
                    if isinstance(out, Status):
                        out.plugin = e.name
            st = _as_status(out, e.name)
            if rec is not None:
                rec.bind[e.name] = _verdict(st)
            if st is not None and st.is_skip():
                last = st
                continue
            if st is None or st.is_success():
                return None
            if st.is_rejected():
                return st
            return Status(Code.ERROR, f'running Bind plugin "{e.name}": {st.message}', plugin=e.name, error=st.error)
        return last

    async def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        call = self.calls.timed_async if state.record_plugin_metrics else self.calls.call_async
        for e in self.post_bind:
            out = await call(e, "postbind", e.plugin.kubesched_post_bind, state, pod, node_name)
            if out is not None:  # it raised (its result is otherwise ignored)
                self._dropped_error(pod, out)

    def _dropped_error(self, pod: Pod, out: object) -> None:
        """An Unreserve or PostBind plugin that raised: logged, as nothing else reports it
        (kube-scheduler's ``Plugin failed``)."""
        if isinstance(out, Status) and out.code == Code.ERROR and isinstance(out.error, PluginFailure):
            self.calls.errors.failed(pod, out, "Plugin failed")
