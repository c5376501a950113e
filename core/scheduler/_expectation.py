"""NominatedNodeNameForExpectation (alpha 1.34, beta on from 1.35): at the start of a binding
cycle the scheduler writes the pod's ``status.nominatedNodeName`` when the cycle will do work
before the bind (so that other components, the cluster autoscaler say, see where the pod is
going while it waits).

Upstream ``schedule_one.go`` ``bindingCycle`` (v1.35, kubernetes#132443 and its follow-ups):
``RunPreBindPreFlights``; an Error (or a rejection, which PreBindPreFlight does not support) ends
the binding cycle; when a PreBind plugin will do something (PreBindPreFlight Success) or the pod
waits at Permit (``WillWaitOnPermit``), ``updatePod`` with the suggested host as the nominated
node (ModeOverride; nothing is written when it is already the pod's), a failure being logged
and the cycle going on.  Without the gate the binding cycle starts at WaitOnPermit, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.runtime._cyclestate import PRE_BIND_PRE_FLIGHT_KEY, PreBindPreFlightResult
from kubesched.runtime._plugins import _raised
from kubesched.runtime._status import SKIP, Code, Status

_NO_ANSWER = object()  # no plugin's answer is this

PRE_BIND_PRE_FLIGHT = "PreBindPreFlight"  # the extension point, as framework_extension_point_duration_seconds names it

if TYPE_CHECKING:
    from kubesched.api._objects import Pod
    from kubesched.runtime._cyclestate import CycleState
    from kubesched.runtime._framework import Framework


def run_pre_bind_pre_flights(
    fw: Framework, state: CycleState, pod: Pod, node_name: str, *, parallel: bool = False
) -> Status | None:
    """``RunPreBindPreFlights``: Success (None) when a PreBind plugin's ``pre_bind_pre_flight``
    says it will act, Skip when none will (or none has a pre-flight), the first Error as
    ``running PreBindPreFlight "X": ...``; a rejection is an Error (not supported there).

    It records for PreBind the plugins that said Skip (``SetSkipPreBindPlugins``, v1.34: they do
    not run) and, with ``parallel`` (1.36, kubernetes#135393), those whose
    :class:`~kubesched.framework.PreBindPreFlightResult` allows parallel PreBind, whatever their
    status (``SetParallelPreBindPlugins``).  A pre-flight returns ``Status | None`` or
    ``(PreBindPreFlightResult | None, Status | None)``.  With a metrics recorder the run is
    observed as the ``PreBindPreFlight`` extension point, and each call of a sampled cycle as
    that plugin's ``PreBindPreFlight`` (v1.35 ``framework.go``)."""
    rec = getattr(fw.binding.calls, "recorder", None)
    if rec is None:
        return run_untimed_pre_bind_pre_flights(fw, state, pod, node_name, parallel)
    t0 = rec.now()
    st = run_untimed_pre_bind_pre_flights(fw, state, pod, node_name, parallel)
    rec.extension_point_since(PRE_BIND_PRE_FLIGHT, st, fw.profile_name, t0)
    return st


def run_untimed_pre_bind_pre_flights(fw: Framework, state: CycleState, pod: Pod, node_name: str, parallel: bool) -> Status | None:
    """:func:`run_pre_bind_pre_flights` without its observation of the extension point (a
    sampled cycle's calls are still timed): what the binding cycle calls when the Framework has
    no metrics recorder."""
    result: Status | None = SKIP  # (Status.skip(), without its call)
    binding = fw.binding
    timed = binding.calls.timed if state.record_plugin_metrics else None
    plain = getattr(binding, "plain_pre_flights", ())
    if plain and timed is None and state.recording is None and state.skip_filter_plugins.issuperset(plain):
        # each pre-flight plugin's PreFilter skipped the pod: each would answer the shared Skip
        # (``BindingRunners.plain_pre_flights``), which the loop below makes into these
        state.write(PRE_BIND_PRE_FLIGHT_KEY, (set(plain), set(plain) if parallel else set()))
        return result
    # the in-tree pre-flights' usual answer, one shared ``(PreBindPreFlightResult(allow_parallel=
    # True), SKIP)`` (``BindingRunners.pre_flight_skip``), taken by identity: what the checks
    # below make of that tuple, without them
    skip_parallel = getattr(binding, "pre_flight_skip", _NO_ANSWER)
    skipped: set[str] = set()
    allow_parallel: set[str] = set()
    for e, pre_flight in binding.pre_flights:
        if timed is None:  # PluginCalls.call, inlined: a raise is this plugin's Error, its name on the status
            try:
                out = pre_flight(state, pod, node_name)
            except Exception as err:
                out = _raised(e.name, "prebindpreflight", err)
            else:
                if out is skip_parallel:
                    skipped.add(e.name)
                    if parallel:
                        allow_parallel.add(e.name)
                    continue
                if isinstance(out, Status):
                    out.plugin = e.name
        else:
            out = timed(e, "prebindpreflight", pre_flight, state, pod, node_name)
        if isinstance(out, tuple) and len(out) == 2 and (out[0] is None or isinstance(out[0], PreBindPreFlightResult)):
            flight, out = out
            if parallel and flight is not None and flight.allow_parallel:
                allow_parallel.add(e.name)
        if out is None:
            result = None
            continue
        st = out if isinstance(out, Status) else Status(Code.ERROR, f"unexpected PreBindPreFlight result {out!r}")
        code = st.code  # the predicates, inline: a pre-flight runs for every pod bound
        if code == Code.SUCCESS:
            result = None
        elif code == Code.SKIP:
            skipped.add(e.name)
        elif st.is_rejected():
            return Status(Code.ERROR, f'PreBindPreFlight {e.name} returned "{st.code.name}", which is unsupported. '
                          "It is supposed to return Success, Skip, or Error status", plugin=e.name)  # fmt: skip
        else:
            return Status(Code.ERROR, f'running PreBindPreFlight "{e.name}": {st.message}', plugin=e.name, error=st.error)
    state.write(PRE_BIND_PRE_FLIGHT_KEY, (skipped, allow_parallel))
    return result


__all__ = ["run_pre_bind_pre_flights", "run_untimed_pre_bind_pre_flights"]
