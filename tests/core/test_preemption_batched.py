"""The batched dry runs give what the per-node dry run gives (issue 16).

``Evaluator.dry_run_preemption_batched`` (one batch Filter per chunk of nodes, the reprieve loop
in lockstep, on node copies) and ``dry_run_preemption_columns`` (the same on snapshot rows with
column overlays, the nominated pods from the nominator's arrays) against
``dry_run_preemption_per_node`` (upstream's ``SelectVictimsOnNode`` on copies of each node) on
random clusters: priorities, start times, PDBs, host ports, nominated pods, per-node Filter
failures and errors, offsets and candidate counts.  Same candidates in the same order with the
same victims in the same order, same node statuses (in the same order), errors and the same
chosen node.  The batched path makes the same Filter calls; the column path may filter a few
nodes past the stopping node (as upstream's parallel dry run does), never fewer.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched import CycleState, NodeInfo, Pod, Status, hookimpl, per_node_filter
from kubesched._nodeinfo import PodInfo
from kubesched._status import Code
from kubesched.plugins import IN_TREE
from kubesched.testing import framework_for, make_node, make_pdb, make_pod

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


def _run(case: dict[str, Any], mode: str) -> tuple[Any, ...]:
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
    ev = fw.plugin("DefaultPreemption").evaluator
    p = case["preemptor"]
    state = CycleState()
    _, st_, _ = fw.run_pre_filter_plugins(state, p, fw.snapshot.node_infos)
    assert st_ is None or st_.is_success()
    assert ev._can_batch(state)
    assert ev._can_use_columns(state)
    all_rows = np.arange(len(case["nodes"]), dtype=np.int64)

    def run(state: CycleState, pod: Pod, infos: Any, pdbs: Any, offset: int, num: int) -> Any:
        if mode == "columns":
            assert list(infos) == fw.snapshot.node_infos
            return ev.dry_run_preemption_columns(state, pod, all_rows, pdbs, offset, num)
        if mode == "batched":
            return ev.dry_run_preemption_batched(state, pod, infos, pdbs, offset, num)
        return ev.dry_run_preemption_per_node(state, pod, infos, pdbs, offset, num)

    counter = fw.plugin("FakeFilter")
    if mode != "per-node":
        # an earlier preemptor's dry run (same or other priority) fills the stripped-node cache
        for earlier in case["earlier"]:
            state0 = CycleState()
            fw.run_pre_filter_plugins(state0, earlier, fw.snapshot.node_infos)
            run(state0, earlier, fw.snapshot.node_infos, fw.cluster.list_pdbs(), 0, len(case["nodes"]))
    calls0 = counter.calls
    cands, statuses, errs = run(
        state, p, fw.snapshot.node_infos, fw.cluster.list_pdbs(), case["offset"], case["num"]
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
def test_batched_dry_run_equals_per_node_dry_run(seed: int) -> None:
    case = _cluster(seed)
    per_node = _run(case, "per-node")
    assert _run(case, "batched") == per_node
    columns = _run(case, "columns")
    assert columns[:4] + columns[5:] == per_node[:4] + per_node[5:]
    assert columns[4] >= per_node[4]  # Filter calls


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
    from kubesched._preemption import Candidate, Evaluator, pick_one_node_for_preemption

    r = random.Random(seed)
    cands = []
    for i in range(r.randint(2, 12)):
        victims = [
            make_pod(f"v{i}-{j}").priority(r.choice([0, 1, 5])).start_time(t(r.randint(0, 3))).obj()
            for j in range(r.randint(1, 3))
        ]
        victims.sort(key=lambda p: -(p.spec.priority or 0))
        cands.append(Candidate(f"n{i}", victims, r.choice([0, 0, 1])))
    ev = Evaluator("DefaultPreemption", None)
    best = ev.select_candidate(cands)
    assert best is not None
    assert best.name == pick_one_node_for_preemption({c.name: c for c in cands})
