"""Plugins that misbehave are named and contained.

- At load time: a hook that must be a plain function but is declared ``async def`` is a
  ConfigError naming the plugin and the hook.
- At run time: a result of the wrong type, at any extension point, is an Error status naming
  the plugin and the extension point in upstream's form (runtime/framework.go), as a raise is.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import numpy as np
import pytest

import kubesched
from kubesched import (
    Code,
    ConfigError,
    CycleState,
    Framework,
    NodeBatch,
    PluginError,
    PostFilterResult,
    Status,
    hookimpl,
    per_node_filter,
    per_node_score,
)
from kubesched.plugins import IN_TREE
from kubesched.queue._scheduling_queue import QueuedPodInfo
from kubesched.runtime._status import Rejections
from kubesched.testing import make_node, make_node_info, make_pod

pytestmark = pytest.mark.anyio

POD = make_pod("p").obj()


def _batch(*names: str) -> NodeBatch:
    return NodeBatch.of([make_node_info(make_node(n).obj()) for n in names])


def _fw(name: str, cls: Any, *points: str, args: Any = None) -> Framework:
    """A profile with ``cls`` (as ``name``) enabled at ``points``, beside PrioritySort and
    DefaultBinder."""
    plugins: dict[str, list[tuple[str, int]]] = {
        "queueSort": [("PrioritySort", 0)],
        "bind": [("DefaultBinder", 0)],
    }
    for point in points:
        plugins[point] = [(name, 1), *plugins.get(point, [])]
    return Framework("default-scheduler", plugins, {**IN_TREE, name: cls}, {name: args})


# --- load time: async def where a plain function is required ------------------------------------


class AsyncFilter:
    """What a plugin author writes when they think every hook is awaited."""

    name = "AsyncFilter"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    async def kubesched_filter(self, state: CycleState, pod: kubesched.Pod, nodes: NodeBatch) -> None:
        return None


def _async_plugin(hook: str) -> type:
    async def impl(self: Any, *args: Any) -> None:
        return None

    impl.__name__ = hook
    return type("AsyncHook", (), {"name": "AsyncHook", "__init__": lambda self, a, h: None, hook: hookimpl(impl)})


ASYNC_ONLY = "(only PostFilter, Unreserve, PreBind, Bind, PostBind may be async)"


def test_an_async_filter_is_a_config_error_naming_plugin_and_hook() -> None:
    with pytest.raises(ConfigError) as exc:
        _fw("AsyncFilter", AsyncFilter, "filter")
    assert str(exc.value) == (
        'plugin "AsyncFilter": kubesched_filter (Filter) is declared async def, but it runs in the '
        f"scheduling cycle and must be a plain function {ASYNC_ONLY}"
    )


@pytest.mark.parametrize(
    ("hook", "point", "label"),
    [
        pytest.param("kubesched_pre_enqueue", "preEnqueue", "PreEnqueue", id="PreEnqueue"),
        pytest.param("kubesched_pre_filter", "preFilter", "PreFilter", id="PreFilter"),
        pytest.param("kubesched_pre_filter_add_pod", "score", "PreFilterExtensions.AddPod", id="AddPod"),
        pytest.param("kubesched_pre_score", "preScore", "PreScore", id="PreScore"),
        pytest.param("kubesched_score", "score", "Score", id="Score"),
        pytest.param("kubesched_normalize_score", "score", "ScoreExtensions.NormalizeScore", id="NormalizeScore"),
        pytest.param("kubesched_reserve", "reserve", "Reserve", id="Reserve"),
        pytest.param("kubesched_permit", "permit", "Permit", id="Permit"),
        pytest.param("kubesched_events_to_register", "score", "EnqueueExtensions", id="EventsToRegister"),
    ],
)
def test_every_cycle_hook_declared_async_is_a_config_error(hook: str, point: str, label: str) -> None:
    cls = _async_plugin(hook)
    if point == "score" and hook != "kubesched_score":  # an extension of another point's plugin
        cls.kubesched_score = hookimpl(lambda self, state, pod, nodes: np.zeros(len(nodes), np.int64))  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=rf'^plugin "AsyncHook": {hook} \({label}\) is declared async def'):
        _fw("AsyncHook", cls, point)


@pytest.mark.parametrize(
    ("hook", "point"),
    [
        ("kubesched_post_filter", "postFilter"),
        ("kubesched_pre_bind", "preBind"),
        ("kubesched_bind", "bind"),
        ("kubesched_post_bind", "postBind"),
    ],
)
def test_binding_cycle_hooks_may_be_async(hook: str, point: str) -> None:
    fw = _fw("AsyncHook", _async_plugin(hook), point)
    assert fw.list_plugins()[point][0] == ("AsyncHook", 1)


def test_per_node_adapters_refuse_async_functions() -> None:
    with pytest.raises(TypeError, match="per_node_filter: .*check is async def; a Filter must be a plain function"):

        @per_node_filter
        async def check(self: Any, state: CycleState, pod: kubesched.Pod, node_info: kubesched.NodeInfo) -> None:
            return None

    with pytest.raises(TypeError, match="per_node_score: .*rate is async def; a Score must be a plain function"):

        @per_node_score
        async def rate(self: Any, state: CycleState, pod: kubesched.Pod, node_info: kubesched.NodeInfo) -> int:
            return 0


class TypoArgs:
    name = "TypoArgs"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: kubesched.Pod, node_batch: NodeBatch) -> None:
        return None


def test_a_hook_signature_pluggy_refuses_is_a_one_line_plugin_error() -> None:
    with pytest.raises(PluginError) as exc:
        _fw("TypoArgs", TypoArgs, "filter")
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith("Plugin 'TypoArgs' for hook 'kubesched_filter'")
    assert "{'node_batch'}" in msg


# --- run time: results of the wrong type ----------------------------------------------------------


class Wrong:
    """Returns ``args["value"]`` from the hook named ``args["hook"]``; plain results elsewhere."""

    name = "Wrong"

    def __init__(self, args: Any, handle: Any) -> None:
        self.hook = args["hook"]
        self.value = args["value"]

    def _out(self, hook: str, default: Any = None) -> Any:
        return self.value if hook == self.hook else default

    @hookimpl
    def kubesched_pre_enqueue(self, pod: kubesched.Pod) -> Any:
        return self._out("pre_enqueue")

    @hookimpl
    def kubesched_pre_filter(self, state: CycleState, pod: kubesched.Pod, nodes: Any) -> Any:
        return self._out("pre_filter")

    @hookimpl
    def kubesched_pre_filter_add_pod(self, state: CycleState, pod: kubesched.Pod, pod_to_add: Any, node_info: Any) -> Any:
        return self._out("add_pod")

    @hookimpl
    def kubesched_pre_filter_remove_pod(self, state: CycleState, pod: kubesched.Pod, pod_to_remove: Any, node_info: Any) -> Any:
        return self._out("remove_pod")

    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: kubesched.Pod, nodes: NodeBatch) -> Any:
        return self._out("filter")

    @hookimpl
    async def kubesched_post_filter(self, state: CycleState, pod: kubesched.Pod, node_statuses: Any) -> Any:
        return self._out("post_filter")

    @hookimpl
    def kubesched_pre_score(self, state: CycleState, pod: kubesched.Pod, nodes: NodeBatch) -> Any:
        return self._out("pre_score")

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: kubesched.Pod, nodes: NodeBatch) -> Any:
        return self._out("score", np.zeros(len(nodes), dtype=np.int64))

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: kubesched.Pod, scores: np.ndarray) -> Any:
        return self._out("normalize_score")

    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: kubesched.Pod, node_name: str) -> Any:
        return self._out("reserve")

    @hookimpl
    def kubesched_permit(self, state: CycleState, pod: kubesched.Pod, node_name: str) -> Any:
        return self._out("permit")

    @hookimpl
    async def kubesched_pre_bind(self, state: CycleState, pod: kubesched.Pod, node_name: str) -> Any:
        return self._out("pre_bind")

    @hookimpl
    async def kubesched_bind(self, state: CycleState, pod: kubesched.Pod, node_name: str) -> Any:
        return self._out("bind")


ALL_POINTS = ("preEnqueue", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit", "preBind", "bind")


def _wrong_fw(hook: str, value: Any) -> Framework:
    return _fw("Wrong", Wrong, *ALL_POINTS, args={"hook": hook, "value": value})


async def _run(fw: Framework, hook: str) -> Status | None:
    """The status the runtime makes of the extension point ``hook`` for POD on n1..n3."""
    state = CycleState()
    nodes = _batch("n1", "n2", "n3")
    if hook == "pre_enqueue":
        return fw.run_pre_enqueue_plugins(POD)
    if hook == "pre_filter":
        return fw.run_pre_filter_plugins(state, POD, list(nodes))[1]
    if hook in ("add_pod", "remove_pod"):
        run = fw.run_pre_filter_extension_add_pod if hook == "add_pod" else fw.run_pre_filter_extension_remove_pod
        return run(state, POD, kubesched.PodInfo(make_pod("other").obj()), nodes[0])
    if hook == "filter":
        failed = fw.run_filter_plugins(state, POD, nodes)
        assert set(failed) == {0, 1, 2}  # an Error for every node of the batch
        assert len({id(st) for st in failed.values()}) == 1
        return failed[0]
    if hook == "post_filter":
        return (await fw.run_post_filter_plugins(state, POD, {"n1": Status.unschedulable("no")}))[1]
    if hook == "pre_score":
        return fw.run_pre_score_plugins(state, POD, nodes)
    if hook in ("score", "normalize_score"):
        return fw.run_score_plugins(state, POD, nodes)[2]
    if hook == "reserve":
        return fw.run_reserve_plugins_reserve(state, POD, "n1")
    if hook == "permit":
        return fw.run_permit_plugins(state, POD, "n1")
    if hook == "pre_bind":
        return await fw.run_pre_bind_plugins(state, POD, "n1")
    assert hook == "bind"
    return await fw.run_bind_plugins(state, POD, "n1")


STATUS = "expected a Status or None"
FILTER = "expected a mapping {index in batch: Status} or None"
SCORE = "expected one integer score per node (an integer array or a sequence of int)"

# Each point's Error, in upstream's wording where upstream wraps a plugin's error status
# (runtime/framework.go: "running PreFilter plugin %q: %w", "running %q filter plugin: %w",
# "running PreScore plugin %q: %w", "running Reserve plugin %q: %w", ...).  Score returns no
# status: a wrong type there reads as a raise does ('running Score plugins: running "X" score
# plugin: ...').  Upstream's PostFilter adds no wrap: kubesched names the plugin the same way.
WRONG = [
    pytest.param("pre_enqueue", [1], f'running PreEnqueue plugin "Wrong": returned list, {STATUS}', id="PreEnqueue list"),
    pytest.param(
        "pre_filter", ["n1"],
        'running PreFilter plugin "Wrong": returned list, expected a PreFilterResult, a Status, '
        "(PreFilterResult, Status) or None",
        id="PreFilter list",
    ),
    pytest.param(
        "pre_filter", (None, Status(), "extra"),
        'running PreFilter plugin "Wrong": returned tuple, expected a PreFilterResult, a Status, '
        "(PreFilterResult, Status) or None",
        id="PreFilter tuple of three",
    ),
    pytest.param("add_pod", "ok", f'running AddPod on PreFilter plugin "Wrong": returned str, {STATUS}', id="AddPod str"),
    pytest.param("remove_pod", 0, f'running RemovePod on PreFilter plugin "Wrong": returned int, {STATUS}', id="RemovePod int"),
    pytest.param("filter", [Status.unschedulable("no")], f'running "Wrong" filter plugin: returned list, {FILTER}', id="Filter list"),
    pytest.param("filter", True, f'running "Wrong" filter plugin: returned bool, {FILTER}', id="Filter bool"),
    pytest.param(
        "filter", {"n1": Status.unschedulable("no")},
        f"running \"Wrong\" filter plugin: returned the key 'n1' (str), {FILTER}",
        id="Filter keyed by node name",
    ),
    pytest.param(
        "filter", {5: Status.unschedulable("no")},
        'running "Wrong" filter plugin: returned node index 5 for a batch of 3 node(s)',
        id="Filter index out of the batch",
    ),
    pytest.param(
        "filter", {0: Status.unschedulable("no"), 1: "no"},
        'running "Wrong" filter plugin: returned str for node index 1, expected a Status',
        id="Filter value not a Status",
    ),
    pytest.param(
        "filter", Rejections(np.array([5]), np.array([0]), [Status.unschedulable("no")]),
        'running "Wrong" filter plugin: returned node index 5 for a batch of 3 node(s)',
        id="Filter Rejections out of the batch",
    ),
    pytest.param(
        "post_filter", [None, None],
        'running PostFilter plugin "Wrong": returned list, expected (PostFilterResult, Status), a Status or None',
        id="PostFilter list",
    ),
    pytest.param(
        "post_filter", ("n1", Status()),
        'running PostFilter plugin "Wrong": returned tuple, expected (PostFilterResult, Status), a Status or None',
        id="PostFilter node name for a result",
    ),
    pytest.param("pre_score", {}, f'running PreScore plugin "Wrong": returned dict, {STATUS}', id="PreScore dict"),
    pytest.param(
        "score", {"n1": 10}, f'running Score plugins: running "Wrong" score plugin: returned dict, {SCORE}', id="Score dict"
    ),
    pytest.param(
        "score", [0.5, 0.7, 0.9],
        f'running Score plugins: running "Wrong" score plugin: returned list of float64, {SCORE}',
        id="Score floats (no silent truncation)",
    ),
    pytest.param(
        "score", np.zeros((3, 1), dtype=np.int64),
        f'running Score plugins: running "Wrong" score plugin: returned ndarray of shape (3, 1), {SCORE}',
        id="Score 2-D array",
    ),
    pytest.param(
        "score", 7, f'running Score plugins: running "Wrong" score plugin: returned int, {SCORE}', id="Score one int"
    ),
    pytest.param(
        "normalize_score", [1, 2, 3],
        f'running Normalize on Score plugin "Wrong": returned list, {STATUS}',
        id="NormalizeScore list",
    ),
    pytest.param("reserve", [], f'running Reserve plugin "Wrong": returned list, {STATUS}', id="Reserve empty list"),
    pytest.param(
        "permit", [Status.wait(), 10],
        'running Permit plugin "Wrong": returned list, expected a Status, (Status, timeout in seconds) or None',
        id="Permit list",
    ),
    pytest.param(
        "permit", (Status.wait(), "10s"),
        'running Permit plugin "Wrong": returned tuple, expected a Status, (Status, timeout in seconds) or None',
        id="Permit timeout as text",
    ),
    pytest.param("pre_bind", "done", f'running PreBind plugin "Wrong": returned str, {STATUS}', id="PreBind str"),
    pytest.param("bind", 1, f'running Bind plugin "Wrong": returned int, {STATUS}', id="Bind int"),
]


@pytest.mark.parametrize(("hook", "value", "message"), WRONG)
async def test_a_wrong_result_is_an_error_naming_plugin_and_point(hook: str, value: Any, message: str) -> None:
    st = await _run(_wrong_fw(hook, value), hook)
    assert st is not None
    assert (st.code, st.plugin, st.message) == (Code.ERROR, "Wrong", message)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param([Status.unschedulable("no")], f'running "Wrong" filter plugin: returned list, {FILTER}', id="list"),
        pytest.param({1: Status.unschedulable("no")}, 'running "Wrong" filter plugin: returned node index 1 for a batch of 1 node(s)', id="index out of the batch"),
        pytest.param({0: "no"}, 'running "Wrong" filter plugin: returned str for node index 0, expected a Status', id="value not a Status"),
    ],
)
def test_a_wrong_filter_result_on_one_node_is_an_error(value: Any, message: str) -> None:
    """The one-node path (nominated pods, preemption's dry runs) checks as the batch path does."""
    fw = _wrong_fw("filter", value)
    failed = fw.run_filter_plugins(CycleState(), POD, _batch("n1"))
    assert {k: (st.code, st.plugin, st.message) for k, st in failed.items()} == {0: (Code.ERROR, "Wrong", message)}
    st = fw.run_filter_plugins_with_nominated_pods(CycleState(), POD, make_node_info(make_node("n1").obj()))
    assert st is not None and st.message == message


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(None, id="None"),
        pytest.param({}, id="empty dict"),
        pytest.param({0: Status()}, id="a Success value"),
        pytest.param({0: None}, id="a None value"),
    ],
)
def test_filter_results_meaning_every_node_passes(value: Any) -> None:
    fw = _wrong_fw("filter", value)
    assert not fw.run_filter_plugins(CycleState(), POD, _batch("n1", "n2", "n3"))
    assert not fw.run_filter_plugins(CycleState(), POD, _batch("n1"))


@pytest.mark.parametrize(
    "value",
    [
        pytest.param([10, 20, 30], id="list of int"),
        pytest.param((10, 20, 30), id="tuple of int"),
        pytest.param(np.array([10, 20, 30], dtype=np.int32), id="int32 array"),
        pytest.param(np.array([10, 20, 30], dtype=np.uint8), id="uint8 array"),
    ],
)
def test_score_results_of_every_integer_kind_are_accepted(value: Any) -> None:
    fw = _wrong_fw("score", value)
    _, per_plugin, st = fw.run_score_plugins(CycleState(), POD, _batch("n1", "n2", "n3"))
    assert st is None
    assert per_plugin["Wrong"].tolist() == [10, 20, 30]


async def test_other_results_of_the_right_shape_still_work() -> None:
    fw = _wrong_fw("post_filter", (PostFilterResult("n2"), Status()))
    result, st = await fw.run_post_filter_plugins(CycleState(), POD, {"n1": Status.unschedulable("no")})
    assert (result, st.code, st.plugin) == (PostFilterResult("n2"), Code.SUCCESS, "Wrong")
    fw = _wrong_fw("permit", (Status.wait(), np.float64(30)))
    st = fw.run_permit_plugins(CycleState(), POD, "n1")
    assert st is not None and st.code == Code.WAIT
    assert fw.waiting_pods[POD.metadata.uid].timeouts == {"Wrong": 30.0}


class ForgotAwait:
    """A plain ``def`` hook that hands back a coroutine (an async helper called, not awaited)."""

    name = "ForgotAwait"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    async def _check(self) -> Status | None:
        return None

    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: kubesched.Pod, node_name: str) -> Any:
        return self._check()

    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: kubesched.Pod, nodes: NodeBatch) -> Any:
        return self._check()


def test_a_coroutine_result_is_an_error_and_is_closed() -> None:
    """pytest runs with warnings as errors: an unclosed coroutine would fail the test."""
    fw = _fw("ForgotAwait", ForgotAwait, "reserve", "filter")
    hint = "(the hook must be a plain function, not async def)"
    st = fw.run_reserve_plugins_reserve(CycleState(), POD, "n1")
    assert st is not None and st.message == f'running Reserve plugin "ForgotAwait": returned a coroutine, {STATUS} {hint}'
    failed = fw.run_filter_plugins(CycleState(), POD, _batch("n1", "n2"))
    assert failed[0].message == f'running "ForgotAwait" filter plugin: returned a coroutine, {FILTER} {hint}'


class NotABoolSort:
    name = "NotABoolSort"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def kubesched_queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> Any:
        return None


def test_a_queue_sort_returning_no_bool_falls_back_to_priority_order(caplog: pytest.LogCaptureFixture) -> None:
    fw = Framework(
        "default-scheduler",
        {"queueSort": [("NotABoolSort", 0)], "bind": [("DefaultBinder", 0)]},
        {**IN_TREE, "NotABoolSort": NotABoolSort},
    )
    hi = QueuedPodInfo(kubesched.PodInfo(make_pod("hi").priority(10).obj()), timestamp=5)
    lo = QueuedPodInfo(kubesched.PodInfo(make_pod("lo").priority(1).obj()), timestamp=1)
    with caplog.at_level(logging.ERROR, logger="kubesched"):
        assert fw.queue_sort_less(hi, lo) and not fw.queue_sort_less(lo, hi)
    assert caplog.messages == ['running "NotABoolSort" queue sort plugin: returned NoneType, expected bool']


class StringEvents:
    name = "StringEvents"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def kubesched_events_to_register(self) -> Any:
        return ["Node/Add"]

    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: kubesched.Pod, nodes: NodeBatch) -> None:
        return None


def test_events_of_the_wrong_type_mean_every_event(caplog: pytest.LogCaptureFixture) -> None:
    fw = _fw("StringEvents", StringEvents, "filter")
    with caplog.at_level(logging.ERROR, logger="kubesched"):
        events = [(p, e) for p, e, _ in fw.cluster_events() if p == "StringEvents"]
    assert events == [("StringEvents", e) for e in kubesched.runtime._events.unroll_wildcard_resource()]
    assert caplog.messages == [
        'running "StringEvents" EventsToRegister: returned str among the events, expected ClusterEvent or '
        "ClusterEventWithHint"
    ]


async def test_a_wrong_result_does_not_stop_the_scheduler() -> None:
    """End to end in a live scheduler: the pod whose Filter result is wrong gets the Error as its
    condition and is retried after a backoff; the other pod is placed."""
    from kubesched.testing import scheduler_for

    class ListForBoom:
        name = "ListForBoom"

        def __init__(self, args: Any, handle: Any) -> None:
            self.calls = 0

        @hookimpl
        def kubesched_filter(self, state: CycleState, pod: kubesched.Pod, nodes: NodeBatch) -> Any:
            if pod.metadata.labels.get("boom"):
                self.calls += 1
                return [Status.unschedulable("no")] * len(nodes)
            return None

    nodes = [make_node(n).capacity(cpu="4").obj() for n in ("n1", "n2")]
    async with scheduler_for(nodes, plugins={"ListForBoom": ListForBoom}, enable=["ListForBoom"]) as sim:
        sim.create(make_pod("boom").label("boom", "yes").req(cpu="1").obj(), make_pod("fine").req(cpu="1").obj())
        await anyio.sleep(30)  # virtual seconds: retries after backoffs of 1 s, 2 s, 4 s, 8 s ...
        assert sim.scheduler.profiles["default-scheduler"].plugin("ListForBoom").calls >= 4
        assert sim.node_of("fine") is not None
        assert sim.node_of("boom") is None
        cond = sim.condition("boom")
        assert cond is not None
        assert (cond.reason, cond.message) == (
            "SchedulerError",
            f'running "ListForBoom" filter plugin: returned list, {FILTER}',
        )
