"""Recorded plugin results (``simulate --explain``): kube-scheduler-simulator's annotations.

The recorded verdicts are checked against the plugins' own statuses and scores, computed here
by calling each plugin on its own (the oracle), on upstream-shaped scenarios:

- TaintToleration's Filter (``tainttoleration_test.go`` › TestTaintTolerationFilter, "a pod
  having no tolerations can't be scheduled onto a node with nonempty taints") and
  NodeResourcesFit's (``fit_test.go`` › TestEnoughRequests, "too many resources fails");
- the final scores: each plugin's normalized score × the profile's weight, adding up to the
  total the node was chosen by;
- preemption (``default_preemption_test.go`` › TestPreempt, one victim): PostFilter's nominated
  node and victims, then the second attempt, in ``result-history``;
- Permit's wait and timeout; recording off changes nothing; the scheduler's own annotation
  patch does not requeue a pending pod.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import numpy as np
import pytest

from kubesched import hookimpl
from kubesched.api._objects import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from kubesched.runtime._framework import CycleState
from kubesched.runtime._nodeinfo import NodeBatch
from kubesched.runtime._status import Code, Status
from kubesched.scheduler._results import (
    BIND_RESULT,
    FILTER_RESULT,
    FINALSCORE_RESULT,
    HISTORY_LIMIT,
    PERMIT_RESULT,
    PERMIT_TIMEOUT,
    POSTFILTER_RESULT,
    POSTFILTER_VICTIMS,
    PREBIND_RESULT,
    PREFILTER_RESULT,
    PREFILTER_STATUS,
    PRESCORE_RESULT,
    RESERVE_RESULT,
    RESULT_HISTORY,
    SCORE_RESULT,
    SELECTED_NODE,
    ResultRecorder,
    append_history,
    go_json,
)
from kubesched.testing import SimCluster, make_node, make_pod, scheduler_for

pytestmark = pytest.mark.anyio

SIMULATOR_KEYS = {
    PREFILTER_RESULT, PREFILTER_STATUS, FILTER_RESULT, POSTFILTER_RESULT, PRESCORE_RESULT,
    SCORE_RESULT, FINALSCORE_RESULT, RESERVE_RESULT, PERMIT_RESULT, PERMIT_TIMEOUT,
    PREBIND_RESULT, BIND_RESULT, SELECTED_NODE,
}


@asynccontextmanager
async def recording(objects: list[Any], *, patch: bool = False, **kw: Any) -> AsyncIterator[SimCluster]:
    async with scheduler_for(objects, **kw) as sim:
        sim.scheduler.recorder = ResultRecorder(patch=patch)
        yield sim


def results(sim: SimCluster, name: str) -> dict[str, str]:
    pod = sim.pod(name)
    assert pod is not None
    assert sim.scheduler.recorder is not None
    return sim.scheduler.recorder.latest[pod.metadata.uid]


def decoded(annotations: dict[str, str], key: str) -> Any:
    return json.loads(annotations[key])


def oracle_filter(sim: SimCluster, pod: Any) -> tuple[CycleState, dict[str, dict[str, str]]]:
    """Each Filter plugin called on its own, node by node, in profile order, until one rejects
    the node: what kube-scheduler-simulator's wrapped plugins would record."""
    sched = sim.scheduler
    fw = sched.profiles["default-scheduler"]
    sched.snapshot.update(sched.cache)
    infos = list(sched.snapshot.node_infos)
    state = CycleState()
    _, st, _ = fw.run_pre_filter_plugins(state, pod, infos)
    assert st is None
    want: dict[str, dict[str, str]] = {}
    for ni in infos:
        verdicts: dict[str, str] = {}
        for name in fw.filter_plugin_names(state):
            out = fw.plugin(name).kubesched_filter(state, pod, NodeBatch.of([ni])) or {}
            failed = out.get(0)
            if failed is None or failed.is_success():
                verdicts[name] = "passed"
            else:
                verdicts[name] = failed.message
                break
        want[ni.name] = verdicts
    return state, want


def oracle_scores(
    sim: SimCluster, state: CycleState, pod: Any, names: list[str]
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """Each Score plugin's raw scores, and normalized × weight, over the feasible nodes."""
    sched = sim.scheduler
    fw = sched.profiles["default-scheduler"]
    batch = NodeBatch.of([sched.snapshot.node_infos[sched.snapshot.index[n]] for n in names])
    assert fw.run_pre_score_plugins(state, pod, batch) is None
    raw: dict[str, dict[str, str]] = {n: {} for n in names}
    final: dict[str, dict[str, str]] = {n: {} for n in names}
    for name, weight in fw.list_plugins()["score"]:
        if name in state.skip_score_plugins:
            continue
        plugin = fw.plugin(name)
        scores = np.array(plugin.kubesched_score(state, pod, batch), dtype=np.int64)
        normalized = scores.copy()
        if hasattr(plugin, "kubesched_normalize_score"):
            plugin.kubesched_normalize_score(state, pod, normalized)
        for i, n in enumerate(names):
            raw[n][name] = str(int(scores[i]))
            final[n][name] = str(int(normalized[i]) * weight)
    return raw, final


# --- Filter and Score, against the plugins' own results ---------------------------------------------


async def test_filter_and_score_verdicts_match_the_plugins() -> None:
    """TestTaintTolerationFilter › "A pod having no tolerations can't be scheduled onto a node
    with nonempty taints"; TestEnoughRequests › "too many resources fails"; the feasible nodes'
    scores (a PreferNoSchedule taint and different free CPU make them differ)."""
    nodes = [
        make_node("n-taint").capacity(cpu="4", memory="8Gi", pods="10").taint("dedicated", "gpu").obj(),
        make_node("n-small").capacity(cpu="1", memory="8Gi", pods="10").obj(),
        make_node("n-a").capacity(cpu="4", memory="8Gi", pods="10").taint("foo", "bar", "PreferNoSchedule").obj(),
        make_node("n-b").capacity(cpu="8", memory="16Gi", pods="10").obj(),
        make_node("n-c").capacity(cpu="4", memory="8Gi", pods="10").obj(),
    ]
    pod = make_pod("p").req(cpu="2", memory="1Gi").obj()
    async with recording(nodes, emulated_version="1.33") as sim:  # the taint named: v1.33.3's text
        state, want_filter = oracle_filter(sim, pod)
        raw, final = oracle_scores(sim, state, pod, ["n-a", "n-b", "n-c"])
        sim.create(pod)
        await sim.settle()
        got = results(sim, "p")
        placed = sim.node_of("p")

    assert got.keys() >= SIMULATOR_KEYS
    filters = decoded(got, FILTER_RESULT)
    assert filters == want_filter
    # the plugins' exact messages (upstream's ErrReasonNotMatch and Insufficient cpu)
    assert filters["n-taint"]["TaintToleration"] == "node(s) had untolerated taint {dedicated: gpu}"
    assert filters["n-small"]["NodeResourcesFit"] == "Insufficient cpu"
    assert all(v == "passed" for n in ("n-a", "n-b", "n-c") for v in filters[n].values())

    assert decoded(got, SCORE_RESULT) == raw
    finals = decoded(got, FINALSCORE_RESULT)
    assert finals == final
    totals = {n: sum(int(v) for v in s.values()) for n, s in finals.items()}
    assert got[SELECTED_NODE] == placed
    assert totals[placed] == max(totals.values())
    # TaintToleration (weight 3): the PreferNoSchedule-tainted node gets 0, the others 3 × 100
    assert {n: s["TaintToleration"] for n, s in finals.items()} == {"n-a": "0", "n-b": "300", "n-c": "300"}

    assert set(decoded(got, PREFILTER_STATUS).values()) <= {"success", ""}
    assert decoded(got, PREFILTER_RESULT) == {}
    assert decoded(got, POSTFILTER_RESULT) == {}
    assert decoded(got, BIND_RESULT) == {"DefaultBinder": "success"}
    assert "success" in decoded(got, PRESCORE_RESULT).values()
    history = decoded(got, RESULT_HISTORY)
    assert history == [{k: got[k] for k in SIMULATOR_KEYS}]


async def test_prefilter_result_node_names() -> None:
    """NodeAffinity's PreFilter narrows the nodes for a metadata.name matchFields term
    (node_affinity_test.go › TestNodeAffinityPreFilter); the other nodes are not filtered."""
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="10").obj() for i in range(3)]
    pod = make_pod("p").req(cpu="1").obj()
    term = NodeSelectorTerm(match_fields=[NodeSelectorRequirement(key="metadata.name", operator="In", values=["n1"])])
    pod.spec.affinity = Affinity(
        node_affinity=NodeAffinity(required_during_scheduling_ignored_during_execution=NodeSelector(node_selector_terms=[term]))
    )
    async with recording(nodes) as sim:
        sim.create(pod)
        await sim.settle()
        got = results(sim, "p")
    assert decoded(got, PREFILTER_RESULT) == {"NodeAffinity": ["n1"]}
    assert decoded(got, PREFILTER_STATUS)["NodeAffinity"] == "success"
    assert list(decoded(got, FILTER_RESULT)) == ["n1"]
    assert got[SELECTED_NODE] == "n1"


# --- PostFilter and the history ---------------------------------------------------------------------


async def test_preemption_attempts_in_history() -> None:
    """TestPreempt-shaped: one node full of a low-priority pod; the high-priority pod's first
    attempt nominates the node with the low pod as victim, its second binds it."""
    node = make_node("n1").capacity(cpu="1", memory="8Gi", pods="10").obj()
    low = make_pod("low").priority(0).req(cpu="1").obj()
    high = make_pod("high").priority(100).req(cpu="1").obj()
    async with recording([node], default_grace_seconds=0) as sim:
        sim.create(low)
        await sim.settle()
        sim.create(high)
        await sim.settle()
        got = results(sim, "high")
        assert sim.node_of("high") == "n1"

    history = decoded(got, RESULT_HISTORY)
    assert len(history) == 2
    first, second = history
    assert json.loads(first[FILTER_RESULT])["n1"]["NodeResourcesFit"] == "Insufficient cpu"
    assert json.loads(first[POSTFILTER_RESULT]) == {"n1": {"DefaultPreemption": "preemption victim"}}
    assert json.loads(first[POSTFILTER_VICTIMS]) == {
        "DefaultPreemption": {"nominatedNodeName": "n1", "victims": ["default/low"]}
    }
    assert first[SELECTED_NODE] == ""
    assert json.loads(first[BIND_RESULT]) == {}
    assert second[SELECTED_NODE] == "n1"
    assert json.loads(second[BIND_RESULT]) == {"DefaultBinder": "success"}
    # the pod's keys are the latest attempt's
    assert {k: got[k] for k in second} == second


# --- Permit ----------------------------------------------------------------------------------------


class Waiter:
    """Permit: wait 10 s (nobody allows it, so the wait times out)."""

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def kubesched_permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status, float]:
        return Status(Code.WAIT), 10.0


async def test_permit_wait_and_timeout() -> None:
    # 1.34: from 1.35 NominatedNodeNameForExpectation writes the node before the wait and the
    # failure handler clears it; that status update requeues a pod whose rejector (Waiter) has
    # no queueing hints, so the pod would wait again every 10 s and never settle
    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").obj()
    async with recording([node], plugins={"Waiter": Waiter}, enable=["Waiter"], emulated_version="1.34") as sim:
        sim.create(make_pod("p").obj())
        await sim.settle()
        got = results(sim, "p")
    first = decoded(got, RESULT_HISTORY)[0]
    assert json.loads(first[PERMIT_RESULT]) == {"Waiter": "wait"}
    assert json.loads(first[PERMIT_TIMEOUT]) == {"Waiter": "10s"}
    assert first[SELECTED_NODE] == "n1"
    assert json.loads(first[BIND_RESULT]) == {}  # rejected at the end of the wait: never bound


# --- off, and the scheduler's own patch ------------------------------------------------------------


async def test_off_records_nothing() -> None:
    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").obj()
    async with scheduler_for([node]) as sim:
        assert sim.scheduler.recorder is None
        sim.create(make_pod("p").annotation("a", "b").obj())
        await sim.settle()
        pod = sim.pod("p")
        assert pod is not None and pod.metadata.annotations == {"a": "b"}


@pytest.mark.parametrize(
    "hints",
    [
        pytest.param(True, id="queueing hints (UnscheduledPod/UpdatePodOther: no plugin's hint queues it)"),
        pytest.param(False, id="no queueing hints (isPodUpdated would see the annotations)"),
    ],
)
async def test_patched_results_do_not_requeue_a_pending_pod(hints: bool) -> None:
    """With ``patch``, the results go onto the pod; that update is the scheduler's own and must
    not move the pending pod back to the queue (else every attempt would cause the next)."""
    node = make_node("n1").capacity(cpu="1", memory="8Gi", pods="10").obj()
    gates = {"SchedulerQueueingHints": hints}
    async with recording([node], patch=True, feature_gates=gates) as sim:
        sim.create(make_pod("big").req(cpu="2").obj(), make_pod("ok").req(cpu="1").obj())
        await sim.settle()
        await anyio.sleep(60)  # many backoffs' worth, less than the 5 min unschedulable flush
        await sim.settle()
        big, ok = sim.pod("big"), sim.pod("ok")
        assert big is not None and ok is not None
        assert sim.scheduler.metrics.attempts == 2
        assert sim.scheduler.recorder is not None
        assert list(sim.scheduler.recorder._history) == [big.metadata.uid]  # bound: nothing kept
    assert json.loads(ok.metadata.annotations[BIND_RESULT]) == {"DefaultBinder": "success"}
    assert json.loads(big.metadata.annotations[FILTER_RESULT])["n1"]["NodeResourcesFit"] == "Insufficient cpu"
    assert len(json.loads(big.metadata.annotations[RESULT_HISTORY])) == 1


# --- the encoding -----------------------------------------------------------------------------------


def test_go_json_escapes_like_go() -> None:
    """encoding/json: keys sorted, compact, <, > and & escaped, non-ASCII kept."""
    assert go_json({"b": "x<y>", "a": "&é", "c": {"z": "1", "y": "2"}}) == (
        '{"a":"\\u0026é","b":"x\\u003cy\\u003e","c":{"y":"2","z":"1"}}'
    )


def test_history_trimmed_oldest_first() -> None:
    """storereflector.updateResultHistory: drop the oldest entries until it fits in 256 KiB."""
    big = {"k": "x" * (HISTORY_LIMIT // 3)}
    h = None
    for i in range(4):
        h = append_history(h, {**big, "i": str(i)})
    assert h is not None and len(h.encode()) <= HISTORY_LIMIT
    assert [e["i"] for e in json.loads(h)] == ["2", "3"]
    assert append_history(None, {"k": "x" * HISTORY_LIMIT}) is None
