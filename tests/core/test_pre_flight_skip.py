"""RunPreBindPreFlights' shared Skip (kubesched.scheduler._expectation): the in-tree pre-flights
answer "Skip, my PreBind may run in parallel" with one shared tuple that they name as their
``pre_bind_pre_flight_skip``; the runner takes that object by identity, without its checks, and
leaves the cycle as the checks would."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from kubesched.config._config import default_profile
from kubesched.plugins import IN_TREE
from kubesched.plugins._helper import PRE_FLIGHT_SKIP
from kubesched.runtime._binding_runners import BindingRunners
from kubesched.runtime._cyclestate import (
    PRE_BIND_PRE_FLIGHT_KEY,
    CycleState,
    PreBindPreFlightResult,
)
from kubesched.runtime._framework import build_framework
from kubesched.runtime._plugins import PluginCalls
from kubesched.runtime._status import SKIP, Code, Status
from kubesched.scheduler._expectation import run_pre_bind_pre_flights

# what a pre-flight may answer: the shared tuple, an equal tuple of its own, the other shapes
ANSWERS: dict[str, Any] = {
    "shared skip": PRE_FLIGHT_SKIP,
    "own skip tuple": (PreBindPreFlightResult(allow_parallel=True), SKIP),
    "skip, not parallel": (PreBindPreFlightResult(allow_parallel=False), SKIP),
    "bare skip": SKIP,
    "success": None,
    "parallel success": (PreBindPreFlightResult(allow_parallel=True), None),
    "error": (PreBindPreFlightResult(allow_parallel=True), Status(Code.ERROR, "boom")),
    "rejection": Status(Code.UNSCHEDULABLE, "no"),
}


class _Plugin:
    def __init__(self, name: str, answer: Any) -> None:
        self.name, self.answer = name, answer

    async def kubesched_pre_bind(self, state: CycleState, pod: Any, node_name: str) -> None:
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Any, node_name: str) -> Any:
        return self.answer


class _Entry:
    def __init__(self, plugin: _Plugin) -> None:
        self.name, self.plugin = plugin.name, plugin


class _Framework:
    def __init__(self, runners: BindingRunners) -> None:
        self.binding = runners


def _runners(*answers: Any, shared: bool) -> BindingRunners:
    plugins = [_Entry(_Plugin(f"P{i}", a)) for i, a in enumerate(answers)]
    runners = BindingRunners({"preBind": plugins}, PluginCalls())  # type: ignore[dict-item]
    if shared:
        runners.pre_flight_skip = PRE_FLIGHT_SKIP  # as for an in-tree plugin
    return runners


def _outcome(st: Status | None, state: CycleState) -> tuple[Any, ...]:
    return (
        None if st is None else (st is SKIP, st.code, st.message, st.plugin),
        state.read(PRE_BIND_PRE_FLIGHT_KEY) if PRE_BIND_PRE_FLIGHT_KEY in state._data else None,
    )


def test_the_in_tree_pre_flights_share_one_skip() -> None:
    fw = build_framework(default_profile(), IN_TREE)
    names = {e.name for e, _ in fw.binding.pre_flights}
    assert names == {"VolumeBinding", "DynamicResources"}
    for e, _ in fw.binding.pre_flights:
        assert e.plugin.pre_bind_pre_flight_skip is PRE_FLIGHT_SKIP, e.name
    assert fw.binding.pre_flight_skip is PRE_FLIGHT_SKIP
    flight, st = PRE_FLIGHT_SKIP
    assert st is SKIP and flight == PreBindPreFlightResult(allow_parallel=True)


def test_a_plain_pod_gets_the_shared_skip_from_each() -> None:
    """What the default profile's pre-flights answer for a pod without volumes or claims."""
    from kubesched.runtime._infos import PodInfo
    from kubesched.testing import make_node, make_node_info, make_pod

    fw = build_framework(default_profile(), IN_TREE)
    pod = make_pod("p").req(cpu="1").obj()
    state = CycleState()
    state.pod_info = PodInfo(pod)
    nodes = [make_node_info(make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj())]
    fw.filters.run_pre_filter_plugins(state, pod, nodes)
    assert fw.binding.run_reserve_plugins_reserve(state, pod, "n1") is None
    for _, pre_flight in fw.binding.pre_flights:
        assert pre_flight(state, pod, "n1") is PRE_FLIGHT_SKIP


def test_a_third_party_plugin_is_not_taken_by_identity() -> None:
    class _Named(_Plugin):
        pre_bind_pre_flight_skip = PRE_FLIGHT_SKIP

    runners = BindingRunners({"preBind": [_Entry(_Named("X", PRE_FLIGHT_SKIP))]}, PluginCalls())  # type: ignore[list-item]
    assert runners.pre_flight_skip is not PRE_FLIGHT_SKIP


@pytest.mark.parametrize("parallel", [False, True], ids=["1.35", "1.36"])
@pytest.mark.parametrize("timed", [False, True], ids=["untimed", "sampled"])
def test_the_shared_skip_leaves_the_cycle_as_the_checks(parallel: bool, timed: bool) -> None:
    for answers in itertools.product(ANSWERS.values(), repeat=2):
        a, b = CycleState(), CycleState()
        a.record_plugin_metrics = b.record_plugin_metrics = timed
        got = run_pre_bind_pre_flights(_Framework(_runners(*answers, shared=True)), a, None, "n1", parallel=parallel)  # type: ignore[arg-type]
        want = run_pre_bind_pre_flights(_Framework(_runners(*answers, shared=False)), b, None, "n1", parallel=parallel)  # type: ignore[arg-type]
        assert _outcome(got, a) == _outcome(want, b), answers


def _cycle(fw: Any, pod: Any) -> CycleState:
    """PreFilter and Reserve of ``pod`` on n1, as its scheduling cycle leaves them."""
    from kubesched.runtime._infos import PodInfo
    from kubesched.testing import make_node, make_node_info

    state = CycleState()
    state.pod_info = PodInfo(pod)
    nodes = [make_node_info(make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj())]
    fw.filters.run_pre_filter_plugins(state, pod, nodes)
    assert fw.binding.run_reserve_plugins_reserve(state, pod, "n1") is None
    return state


def test_the_default_profile_skips_its_pre_flights_for_a_pod_both_pre_filters_skipped() -> None:
    fw = build_framework(default_profile(), IN_TREE)
    assert fw.binding.plain_pre_flights == ("VolumeBinding", "DynamicResources")


@pytest.mark.parametrize("parallel", [False, True], ids=["1.35", "1.36"])
def test_the_plain_path_leaves_the_cycle_as_the_calls(parallel: bool) -> None:
    import copy
    import random

    from kubesched.testing import make_pod

    fw = build_framework(default_profile(), IN_TREE)
    full = copy.copy(fw.binding)
    full.plain_pre_flights = ()  # every pre-flight called
    rng = random.Random(7)
    for i in range(30):
        b = make_pod(f"p{i}").req(cpu=f"{rng.randrange(1, 2000)}m")
        if rng.random() < 0.3:
            b = b.label("app", rng.choice(["a", "b"]))
        if rng.random() < 0.3:
            b = b.toleration("k", "v", "NoSchedule")
        if rng.random() < 0.3:
            b = b.req(memory=f"{rng.randrange(1, 512)}Mi")
        pod = b.obj()
        a, c = _cycle(fw, pod), _cycle(fw, pod)
        assert a.skip_filter_plugins >= {"VolumeBinding", "DynamicResources"}
        got = run_pre_bind_pre_flights(fw, a, pod, "n1", parallel=parallel)
        want = run_pre_bind_pre_flights(_Framework(full), c, pod, "n1", parallel=parallel)  # type: ignore[arg-type]
        assert got is want is SKIP
        assert _outcome(got, a) == _outcome(want, c)
