"""The framework runtime: profile order, weights, status stamping, plugin errors, Permit."""

from __future__ import annotations

from typing import Any

import anyio
import numpy as np
import pytest

import kubesched
from kubesched import (
    Code,
    CycleState,
    Framework,
    NodeBatch,
    PluginError,
    Status,
    hookimpl,
    per_node_filter,
    per_node_score,
)
from kubesched.plugins import IN_TREE
from kubesched.runtime._framework import go_duration
from kubesched.testing import make_node, make_node_info, make_pod

CALLS: list[str] = []


def _plugin(name: str, *, reject: set[str] | None = None, score: int | None = None, raise_: bool = False) -> Any:
    class P:
        def __init__(self, args: Any, handle: Any) -> None:
            self.name = name

        @hookimpl
        @per_node_filter
        def kubesched_filter(self, state: CycleState, pod: kubesched.Pod, node_info: kubesched.NodeInfo) -> Status | None:
            CALLS.append(f"{name}:{node_info.name}")
            if raise_:
                raise ValueError("bad")
            if reject and node_info.name in reject:
                return Status.unschedulable(f"{name} says no")
            return None

        @hookimpl
        @per_node_score
        def kubesched_score(self, state: CycleState, pod: kubesched.Pod, node_info: kubesched.NodeInfo) -> int:
            return score if score is not None else int(node_info.name[-1]) * 10

    return P


def _fw(filters: list[tuple[str, Any]], scores: list[tuple[str, int]] | None = None) -> Framework:
    factories = {**IN_TREE, **dict(filters)}
    plugins: dict[str, list[tuple[str, int]]] = {
        "queueSort": [("PrioritySort", 0)],
        "bind": [("DefaultBinder", 0)],
        "filter": [(n, 0) for n, _ in filters],
    }
    if scores:
        plugins["score"] = scores
    return Framework("default-scheduler", plugins, factories)


def _batch(*names: str) -> NodeBatch:
    return NodeBatch.of([make_node_info(make_node(n).obj()) for n in names])


def test_filters_run_in_profile_order_and_skip_rejected_nodes() -> None:
    CALLS.clear()
    fw = _fw([("A", _plugin("A", reject={"n1"})), ("B", _plugin("B", reject={"n2"}))])
    failed = fw.run_filter_plugins(CycleState(), make_pod("p").obj(), _batch("n1", "n2", "n3"))
    assert CALLS == ["A:n1", "A:n2", "A:n3", "B:n2", "B:n3"]
    assert {i: (s.plugin, s.reasons) for i, s in failed.items()} == {
        0: ("A", ("A says no",)),
        1: ("B", ("B says no",)),
    }


def test_a_raising_filter_is_an_error_status_with_the_plugin_name() -> None:
    fw = _fw([("Buggy", _plugin("Buggy", raise_=True))])
    failed = fw.run_filter_plugins(CycleState(), make_pod("p").obj(), _batch("n1"))
    assert failed[0].code == Code.ERROR
    assert failed[0].plugin == "Buggy"
    assert failed[0].message == 'running "Buggy" filter plugin: bad'


def test_scores_are_weighted_and_summed() -> None:
    fw = Framework(
        "default-scheduler",
        {"queueSort": [("PrioritySort", 0)], "bind": [("DefaultBinder", 0)], "score": [("A", 2), ("B", 3)]},
        {**IN_TREE, "A": _plugin("A"), "B": _plugin("B", score=5)},
    )
    total, per_plugin, st = fw.run_score_plugins(CycleState(), make_pod("p").obj(), _batch("n1", "n2"))
    assert st is None
    assert per_plugin["A"].tolist() == [20, 40]
    assert per_plugin["B"].tolist() == [15, 15]
    assert total.tolist() == [35, 55]


def test_a_score_out_of_range_is_an_error() -> None:
    fw = Framework(
        "default-scheduler",
        {"queueSort": [("PrioritySort", 0)], "bind": [("DefaultBinder", 0)], "score": [("Big", 1)]},
        {**IN_TREE, "Big": _plugin("Big", score=101)},
    )
    _, _, st = fw.run_score_plugins(CycleState(), make_pod("p").obj(), _batch("n1"))
    assert st is not None and st.code == Code.ERROR
    assert st.message == 'plugin "Big" returns an invalid score 101, it should in the range of [0, 100] after normalizing'


def test_a_profile_needs_exactly_one_queue_sort_and_known_plugins() -> None:
    with pytest.raises(PluginError, match="only one queue sort plugin required"):
        Framework("p", {"bind": [("DefaultBinder", 0)]}, IN_TREE)
    with pytest.raises(PluginError, match='"Nope" does not exist'):
        Framework("p", {"queueSort": [("PrioritySort", 0)], "bind": [("DefaultBinder", 0)], "filter": [("Nope", 0)]}, IN_TREE)
    with pytest.raises(PluginError, match="does not extend FilterPlugin"):
        Framework("p", {"queueSort": [("PrioritySort", 0)], "bind": [("DefaultBinder", 0)], "filter": [("DefaultBinder", 0)]}, IN_TREE)


class _Permit:
    def __init__(self, name: str, outcome: Any) -> None:
        self.name = name
        self.outcome = outcome

    @hookimpl
    def kubesched_permit(self, state: CycleState, pod: kubesched.Pod, node_name: str) -> Any:
        return self.outcome


def _permit_fw(*plugins: _Permit) -> Framework:
    factories: dict[str, Any] = {**IN_TREE}
    for p in plugins:
        factories[p.name] = lambda args, handle, p=p: p
    return Framework(
        "default-scheduler",
        {"queueSort": [("PrioritySort", 0)], "bind": [("DefaultBinder", 0)], "permit": [(p.name, 0) for p in plugins]},
        factories,
    )


@pytest.mark.anyio
async def test_permit_wait_is_released_when_every_waiting_plugin_allows() -> None:
    fw = _permit_fw(_Permit("W1", (Status.wait(), 60)), _Permit("W2", (Status.wait(), 60)))
    pod = make_pod("p").obj()
    st = fw.run_permit_plugins(CycleState(), pod, "n1")
    assert st is not None and st.code == Code.WAIT
    wp = fw.get_waiting_pod(pod.metadata.uid)
    assert wp is not None and sorted(wp.get_pending_plugins()) == ["W1", "W2"]
    result: list[Status | None] = []

    async def waiter() -> None:
        result.append(await fw.wait_on_permit(pod))

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.sleep(1)
        wp.allow("W1")
        await anyio.sleep(1)
        assert not result
        wp.allow("W2")
    assert result == [None]
    assert fw.get_waiting_pod(pod.metadata.uid) is None


@pytest.mark.anyio
async def test_permit_reject_and_timeout() -> None:
    fw = _permit_fw(_Permit("W", (Status.wait(), 30)))
    pod = make_pod("p").obj()
    fw.run_permit_plugins(CycleState(), pod, "n1")
    start = anyio.current_time()
    st = await fw.wait_on_permit(pod)
    assert st is not None and st.code == Code.UNSCHEDULABLE and st.plugin == "W"
    assert st.message == "rejected due to timeout after waiting 30s at plugin W"
    assert anyio.current_time() - start == pytest.approx(30)

    other = make_pod("q").obj()
    fw.run_permit_plugins(CycleState(), other, "n1")
    fw.get_waiting_pod(other.metadata.uid).reject("W", "go away")  # type: ignore[union-attr]
    st = await fw.wait_on_permit(other)
    assert st is not None and st.message == "go away"


def test_permit_timeout_is_capped_at_15_minutes() -> None:
    fw = _permit_fw(_Permit("W", (Status.wait(), 3600)))
    pod = make_pod("p").obj()

    async def check() -> None:
        fw.run_permit_plugins(CycleState(), pod, "n1")
        wp = fw.get_waiting_pod(pod.metadata.uid)
        assert wp is not None and wp.timeouts == {"W": 900.0}

    anyio.run(check)


def test_permit_rejection_stops_at_the_first() -> None:
    fw = _permit_fw(_Permit("No", Status.unschedulable("nope")), _Permit("W", (Status.wait(), 30)))
    st = fw.run_permit_plugins(CycleState(), make_pod("p").obj(), "n1")
    assert st is not None and st.code == Code.UNSCHEDULABLE and st.plugin == "No"
    assert not fw.waiting_pods


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (10, "10s"), (60, "1m0s"), (90, "1m30s"), (1.5, "1.5s"), (3600, "1h0m0s"), (900, "15m0s")],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_per_node_adapters_give_batch_results() -> None:
    batch = _batch("n1", "n2")
    p = _plugin("X", reject={"n2"})(None, None)
    assert p.kubesched_filter(CycleState(), make_pod("p").obj(), batch) == {1: Status.unschedulable("X says no")}
    assert np.array_equal(p.kubesched_score(CycleState(), make_pod("p").obj(), batch), [10, 20])


class _BrokenSort:
    name = "BrokenSort"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def kubesched_queue_sort_less(self, a: Any, b: Any) -> bool:
        raise RuntimeError("bug")


def test_a_raising_queue_sort_falls_back_to_priority_order() -> None:
    from kubesched.queue._scheduling_queue import QueuedPodInfo

    fw = Framework(
        "default-scheduler",
        {"queueSort": [("BrokenSort", 0)], "bind": [("DefaultBinder", 0)]},
        {**IN_TREE, "BrokenSort": _BrokenSort},
    )
    hi = QueuedPodInfo(kubesched.PodInfo(make_pod("hi").priority(10).obj()), timestamp=5)
    lo = QueuedPodInfo(kubesched.PodInfo(make_pod("lo").priority(1).obj()), timestamp=1)
    assert fw.queue_sort_less(hi, lo) and not fw.queue_sort_less(lo, hi)


def test_the_shared_skip_keeps_no_plugin_name() -> None:
    """``Status.skip()`` is one shared object (the most frequent status of a cycle): a plugin
    name the runtime stamps on it is not kept, so no plugin's name leaks into another's Skip;
    a subclass's skip is its own object."""
    from kubesched.runtime._status import SKIP

    st = Status.skip()
    assert st is SKIP and Status.skip() is st
    st.plugin = "A"
    assert st.plugin == "" and st.with_plugin("B").plugin == ""
    assert (st.code, st.reasons, st.message, st.is_skip()) == (Code.SKIP, (), "", True)

    class Mine(Status):
        __slots__ = ()

    own = Mine.skip()
    assert own is not SKIP and type(own) is Mine
    own.plugin = "C"
    assert own.plugin == "C" and own.is_skip()


@pytest.mark.parametrize("seed", range(6))
def test_a_uniform_score_gives_the_totals_of_scoring(seed: int) -> None:
    """The Score runner takes an in-tree plugin's uniform_score (TaintToleration, ImageLocality,
    DynamicResources) in a cycle that records nothing per plugin: the same totals and weighted
    scores as Score and NormalizeScore give (a cycle sampled for plugin metrics calls them)."""
    import random

    from kubesched.testing import framework_for

    rnd = random.Random(seed)
    effects = ["PreferNoSchedule", "NoSchedule", "NoExecute"]
    nodes = []
    for i in range(12):
        b = make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110")
        for _ in range(rnd.randrange(3) if seed % 2 else 0):
            b.taint(f"k{rnd.randrange(3)}", "v", rnd.choice(effects))
        if seed % 3 == 0 and rnd.random() < 0.5:
            b.images({"img:1": 300 * 1024 * 1024})
        nodes.append(b.obj())
    plugins = ["TaintToleration", "NodeResourcesFit", "ImageLocality", "DynamicResources"]
    fw = framework_for({"preFilter": plugins[1:2] + plugins[3:], "preScore": plugins[:2], "score": plugins}, nodes,
                       emulated_version="1.35")  # fmt: skip
    for j in range(8):
        p = make_pod(f"p{j}").container("img:1" if j % 2 else "other:2", cpu="100m")
        if j % 4 == 3:
            p.toleration(f"k{rnd.randrange(3)}", "v", "PreferNoSchedule")
        pod = p.obj()
        got = []
        for sampled in (False, True):  # uniform scores taken, then every Score called
            state = CycleState(record_plugin_metrics=sampled)
            assert fw.run_pre_filter_plugins(state, pod, fw.snapshot.node_infos)[1] is None
            batch = kubesched.NodeBatch(snapshot=fw.snapshot, indices=np.arange(len(nodes), dtype=np.int64))
            assert fw.run_pre_score_plugins(state, pod, batch) is None
            total, per_plugin, st = fw.run_score_plugins(state, pod, batch)
            assert st is None
            got.append((total.tolist(), {k: v.tolist() for k, v in per_plugin.items()}))
        assert got[0] == got[1]
