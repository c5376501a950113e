"""The runners from the chosen node to the bind, of a :class:`~kubesched.runtime._framework.Framework`
(upstream ``RunReservePluginsReserve`` / ``Unreserve``, ``RunPermitPlugins``,
``RunPreBindPlugins``, ``RunBindPlugins``, ``RunPostBindPlugins``): an object holding the
profile's Reserve, Permit, PreBind, Bind and PostBind plugins, which the Framework holds.  The
pods that wait at Permit are the Framework's (:mod:`kubesched.runtime._waiting_pods`): Permit here only
says which plugins asked to wait, and for how long.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from kubesched import hookspecs
from kubesched._logs import PluginFailure
from kubesched.api._objects import Pod
from kubesched.runtime._cyclestate import CycleState
from kubesched.runtime._plugins import PluginCalls, PluginEntry, _as_status, _wrong
from kubesched.runtime._status import Code, Status
from kubesched.runtime._waiting_pods import go_duration
from kubesched.scheduler._results import WAIT
from kubesched.scheduler._results import verdict as _verdict

MAX_PERMIT_TIMEOUT = 15 * 60.0


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
        self.bind: list[PluginEntry] = points.get("bind", [])
        self.post_bind: list[PluginEntry] = points.get("postBind", [])

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        rec = state.recording
        call = self.calls.timed if state.record_plugin_metrics else self.calls.call
        for e in self.reserve:
            st = _as_status(call(e, "reserve", e.plugin.kubesched_reserve, state, pod, node_name), e.name)
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

    async def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        rec = state.recording
        call = self.calls.timed_async if state.record_plugin_metrics else self.calls.call_async
        for e in self.pre_bind:
            st = _as_status(await call(e, "prebind", e.plugin.kubesched_pre_bind, state, pod, node_name), e.name)
            if rec is not None:
                rec.prebind[e.name] = _verdict(st)
            if st is None or st.is_success() or st.is_skip():
                continue
            if st.is_rejected():
                return st
            return Status(Code.ERROR, f'running PreBind plugin "{e.name}": {st.message}', plugin=e.name, error=st.error)
        return None

    async def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        last: Status | None = Status(Code.SKIP)
        rec = state.recording
        call = self.calls.timed_async if state.record_plugin_metrics else self.calls.call_async
        for e in self.bind:
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
