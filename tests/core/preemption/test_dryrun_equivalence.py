"""The dry run on columns gives what the node-by-node dry run gives (issues 16, 27).

``Evaluator.dry_run_preemption_columns`` (``_preemption/dryrun_columns.py``: batch Filter over
snapshot rows with column overlays, the reprieve loop in lockstep, the nominated pods from the
nominator's arrays) against ``dry_run_preemption_per_node`` (``_preemption/dryrun.py``:
upstream's ``SelectVictimsOnNode`` on copies of each node) on random clusters: priorities, start
times, PDBs, host ports, nominated pods, per-node Filter failures and errors, offsets and
candidate counts, the default victim order and a custom one.  Same candidates in the same order
with the same victims in the same order, same node statuses (in the same order), errors and the
same chosen node; the column path may filter a few nodes past the stopping node (as upstream's
parallel dry run does), never fewer.  A custom eligibility (``is_eligible_pod`` or an overridden
``is_preemption_allowed``) is served by the node-by-node dry run.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched import CycleState, NodeInfo, Pod, Status, hookimpl, per_node_filter
from kubesched.plugins import IN_TREE
from kubesched.preemption import Candidate, Evaluator, pick_one_node_for_preemption
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, framework_for, make_node, make_pdb, make_pod

PRIOS = [-10, 0, 5, 10, 100]


class CountingFilter:
    """Counts Filter calls; per-node return codes (upstream's FakeFilterPlugin)."""

    name = "FakeFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.calls = 0
        self.codes: dict[str, Code] = dict((args or {}).get("codes", {}))

    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        code = self.codes.get(node_info.name, Code.SUCCESS)
        return None if code == Code.SUCCESS else Status(code, f"fake {code.label}")


REGISTRY = {**IN_TREE, "FakeFilter": CountingFilter}


def t(n: int) -> str:
    return f"1970-01-01T00:00:00.{n:09d}Z"


def _cluster(seed: int, max_nodes: int = 12) -> dict[str, Any]:
    r = random.Random(seed)
    nodes = []
    pods = []
    codes: dict[str, Code] = {}
    for i in range(r.randint(1, max_nodes)):
        name = f"n{i}"
        nodes.append(
            make_node(name)
            .capacity_list(
                {"cpu": f"{r.choice([1000, 2000, 3000, 4000])}m", "memory": "4Gi",
                 "pods": str(r.choice([3, 4, 110]))}
            )
            .obj()
        )
        roll = r.random()
        if roll < 0.1:
            codes[name] = Code.UNSCHEDULABLE
        elif roll < 0.15:
            codes[name] = Code.ERROR
        for j in range(r.randint(0, 6)):
            b = (
                make_pod(f"{name}-p{j}")
                .priority(r.choice(PRIOS))
                .req(cpu=f"{r.choice([100, 250, 500, 1000, 1500])}m")
                .node(name)
                .labels({"app": r.choice(["a", "b", "c"])})
            )
            if r.random() < 0.8:
                b.start_time(t(r.randint(0, 5)))
            if r.random() < 0.15:
                b.host_port(8080)
            pods.append(b.obj())
    pdbs = [
        make_pdb(f"pdb{k}", match_labels={"app": r.choice(["a", "b"])},
                 disruptions_allowed=r.randint(0, 2))
        for k in range(r.randint(0, 2))
    ]
    preemptor = make_pod("preemptor").priority(r.choice([5, 50, 1000])).req(
        cpu=f"{r.choice([500, 1000, 2000, 3500])}m"
    )
    if r.random() < 0.2:
        preemptor.host_port(8080)
    nominated = []
    for k in range(r.randint(0, 3)):
        p = make_pod(f"nom{k}").priority(r.choice(PRIOS + [1000])).req(cpu=f"{r.choice([100, 1000])}m").obj()
        nominated.append((p, r.choice(nodes).metadata.name))
    earlier = [
        make_pod(f"earlier{k}").priority(r.choice([5, 50, 1000])).req(cpu=f"{r.choice([500, 2000])}m").obj()
        for k in range(r.randint(0, 2))
    ]
    return dict(earlier=earlier, nodes=nodes, pods=pods, pdbs=pdbs, codes=codes, preemptor=preemptor.obj(),
                nominated=nominated, offset=r.randrange(len(nodes)), num=r.randint(1, len(nodes)))


def _by_name(a: Pod, b: Pod) -> bool:
    """A custom ``MoreImportantPod``: by name (a total order other than the default one)."""
    return a.metadata.name < b.metadata.name


def _framework(case: dict[str, Any]) -> Any:
    fw = framework_for(
        {
            "preFilter": ["NodeResourcesFit", "NodePorts"],
            "filter": ["FakeFilter", "NodePorts", "NodeResourcesFit"],
            "postFilter": ["DefaultPreemption"],
        },
        case["nodes"], case["pods"], registry=REGISTRY,
        plugin_args={"FakeFilter": {"codes": case["codes"]}}, pdbs=list(case["pdbs"]),
    )
    for p, node in case["nominated"]:
        fw.nominator.add(PodInfo(p), node)
    return fw


def _run(case: dict[str, Any], mode: str, order: Any = None) -> tuple[Any, ...]:
    fw = _framework(case)
    ev = fw.plugin("DefaultPreemption").evaluator
    if order is not None:
        ev.more_important_pod = order
    p = case["preemptor"]
    state = CycleState()
    _, st_, _ = fw.run_pre_filter_plugins(state, p, fw.snapshot.node_infos)
    assert st_ is None or st_.is_success()
    assert ev._can_use_columns(state)
    all_rows = np.arange(len(case["nodes"]), dtype=np.int64)

    def run(state: CycleState, pod: Pod, infos: Any, pdbs: Any, offset: int, num: int) -> Any:
        if mode == "columns":
            assert list(infos) == fw.snapshot.node_infos
            return ev.dry_run_preemption_columns(state, pod, all_rows, pdbs, offset, num)
        return ev.dry_run_preemption_per_node(state, pod, infos, pdbs, offset, num)

    counter = fw.plugin("FakeFilter")
    if mode != "per-node":
        # an earlier preemptor's dry run (same or other priority) fills the stripped-node cache
        for earlier in case["earlier"]:
            state0 = CycleState()
            fw.run_pre_filter_plugins(state0, earlier, fw.snapshot.node_infos)
            run(state0, earlier, fw.snapshot.node_infos, fw.handle.cluster.list_pdbs(), 0, len(case["nodes"]))
    calls0 = counter.calls
    cands, statuses, errs = run(
        state, p, fw.snapshot.node_infos, fw.handle.cluster.list_pdbs(), case["offset"], case["num"]
    )
    best = ev.select_candidate(cands)
    return (
        [(c.name, [v.metadata.name for v in c.victims], c.num_pdb_violations) for c in cands],
        {n: (s.code, s.reasons, s.plugin) for n, s in statuses.items()},
        list(statuses),
        errs,
        counter.calls - calls0,
        best.name if best else None,
    )


@settings(max_examples=300, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_column_dry_run_equals_per_node_dry_run(seed: int) -> None:
    case = _cluster(seed)
    per_node = _run(case, "per-node")
    columns = _run(case, "columns")
    assert columns[:4] + columns[5:] == per_node[:4] + per_node[5:]
    assert columns[4] >= per_node[4]  # Filter calls


@settings(max_examples=100, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_column_dry_run_with_a_custom_victim_order(seed: int) -> None:
    """A plugin's ``MoreImportantPod`` keeps the column path (no default-rule scores then)."""
    case = _cluster(seed)
    per_node = _run(case, "per-node", _by_name)
    columns = _run(case, "columns", _by_name)
    assert columns[:4] + columns[5:] == per_node[:4] + per_node[5:]
    assert columns[4] >= per_node[4]


class _OwnEligibility(Evaluator):
    """A custom preemption plugin's Evaluator that overrides ``isPreemptionAllowed``."""

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        return super().is_preemption_allowed(node_info, victim, preemptor) and victim.pod.metadata.name[-1] != "0"


@pytest.mark.parametrize("how", ["is_eligible_pod", "subclass"])
@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_custom_eligibility_goes_node_by_node(how: str, seed: int) -> None:
    """Eligibility not by priority alone: ``find_candidates`` runs the node-by-node dry run
    (the column form strips by priority), with the candidates it gives."""
    case = _cluster(seed)
    fw = _framework(case)
    ev = fw.plugin("DefaultPreemption").evaluator
    if how == "subclass":
        ev = _OwnEligibility("DefaultPreemption", fw.handle)
    else:
        ev.is_eligible_pod = lambda ni, victim, preemptor: victim.pod.metadata.name[-1] != "0"
    p = case["preemptor"]
    state = CycleState()
    fw.run_pre_filter_plugins(state, p, fw.snapshot.node_infos)
    assert not ev._can_use_columns(state)
    ev.offset_source = lambda n: case["offset"] % n
    ran: list[str] = []

    def columns(*args: Any) -> Any:
        raise AssertionError("the column dry run strips by priority alone")

    per_node = ev.dry_run_preemption_per_node

    def node_by_node(*args: Any) -> Any:
        ran.append("per-node")
        return per_node(*args)

    ev.dry_run_preemption_columns = columns  # type: ignore[method-assign]
    ev.dry_run_preemption_per_node = node_by_node  # type: ignore[method-assign]
    infos = fw.snapshot.node_infos
    statuses = {ni.name: Status(Code.UNSCHEDULABLE) for ni in infos}
    got, _, _ = ev.find_candidates(state, infos, p, statuses)
    assert ran == ["per-node"]
    pdbs = fw.handle.cluster.list_pdbs()
    offset, num = ev.get_offset_and_num_candidates(len(infos))
    want, _, _ = per_node(state, p, infos, pdbs, offset, num)
    assert [(c.name, [v.metadata.name for v in c.victims]) for c in got] == [
        (c.name, [v.metadata.name for v in c.victims]) for c in want
    ]
    # no lower-priority pod named "…0" is ever a victim
    assert not any(v.metadata.name.endswith("0") for c in got for v in c.victims)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_column_dry_run_on_larger_clusters(seed: int) -> None:
    """Up to 80 nodes: the column path's growing chunks and several rounds of reprieves."""
    case = _cluster(seed, max_nodes=80)
    per_node = _run(case, "per-node")
    columns = _run(case, "columns")
    assert columns[:4] + columns[5:] == per_node[:4] + per_node[5:]
    assert columns[4] >= per_node[4]


def test_the_random_clusters_exercise_the_interesting_paths() -> None:
    """Candidates with several victims, PDB violations, nominated pods and errors all occur."""
    seen = {"several victims": 0, "pdb": 0, "error": 0, "no victims": 0, "filter fail": 0}
    for seed in range(300):
        cands, statuses, _, errs, _, _ = _run(_cluster(seed), "columns")
        seen["several victims"] += any(len(v) > 1 for _, v, _ in cands)
        seen["pdb"] += any(n > 0 for _, _, n in cands)
        seen["error"] += bool(errs)
        seen["no victims"] += any(c == Code.UNSCHEDULABLE_AND_UNRESOLVABLE for c, _, _ in statuses.values())
        seen["filter fail"] += any(c == Code.UNSCHEDULABLE for c, _, _ in statuses.values())
    assert all(v >= 10 for v in seen.values()), seen


@settings(max_examples=200, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_select_candidate_default_rules_equal_pick_one_node(seed: int) -> None:
    """``select_candidate``'s shortcut for the default rules picks what
    ``pick_one_node_for_preemption`` picks (ties on every rule included)."""
    r = random.Random(seed)
    cands = []
    for i in range(r.randint(2, 12)):
        victims = [
            make_pod(f"v{i}-{j}").priority(r.choice([0, 1, 5])).start_time(t(r.randint(0, 3))).obj()
            for j in range(r.randint(1, 3))
        ]
        victims.sort(key=lambda p: -(p.spec.priority or 0))
        cands.append(Candidate(f"n{i}", victims, r.choice([0, 0, 1])))
    ev = Evaluator("DefaultPreemption", FakeHandle())
    best = ev.select_candidate(cands)
    assert best is not None
    assert best.name == pick_one_node_for_preemption({c.name: c for c in cands})
