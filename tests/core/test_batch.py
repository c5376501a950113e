"""OpportunisticBatching (KEP-5598, beta on from 1.35): the batch cache ported from v1.35
``pkg/scheduler/framework/runtime/batch.go`` (its ``batch_test.go`` cases), the profile's
signers (``computeBatchablePlugins``), and differential runs with the gate on and off."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kubesched.cli import main
from kubesched.config._config import ProfileConfig, SchedulerConfig
from kubesched.config._versions import Version, default_feature_gates
from kubesched.scheduler import _batch
from kubesched.scheduler._batch import (
    ATTEMPT_NO_HINT,
    FLUSH_EMPTY_LIST,
    FLUSH_EXPIRED,
    FLUSH_NODE_NOT_FULL,
    FLUSH_POD_NOT_BATCHABLE,
    OpportunisticBatch,
    SortedNodes,
    profile_signers,
    sign_pod,
)
from kubesched.scheduler._scheduler import Scheduler
from kubesched.testing import make_pod
from kubesched.transports.fake import FakeCluster


def _nodes(names: list[str] | None) -> SortedNodes | None:
    """``newTestNodes``: a list popped in the given order."""
    if names is None:
        return None
    return SortedNodes(names, np.arange(len(names), 0, -1, dtype=np.int64), random.Random(0))


def _blocking(pod_id: str) -> bool:
    return pod_id.startswith("b")


# (first pod, first sig, first scheduled, first chosen, first others, skip a cycle,
#  second pod, second sig, second chosen, want hint, want state left: (sig, nodes) or None)
_BASIC = [
    pytest.param("b-1", "sig", True, "n3", ["n1"], False, "b-2", "sig", "n1", "n1", None,
                 id="a second pod with the same signature gets a hint"),
    pytest.param("a-1", "sig", True, "n3", ["n1"], False, "a-2", "sig2", "n1", "", None,
                 id="a second pod with a different signature doesn't get a hint"),
    pytest.param("a-1", "sig", True, "n3", ["n1"], False, "a-2", "sig", "n1", "", None,
                 id="a second pod doesn't get a hint if it's not 1-pod-per-node"),
    pytest.param("b-1", "sig", False, "n3", ["n1"], False, "b-2", "sig", "n1", "", None,
                 id="pod doesn't get hint if previous pod didn't scheduled"),
    pytest.param("b-1", "sig", True, "n3", [], False, "b-2", "sig", "n4", "", None, id="empty list"),
    pytest.param("b-1", "sig", True, "n3", None, False, "b-2", "sig", "n4", "", None, id="nil list"),
    pytest.param("b-1", "sig", True, "n3", ["n1"], True, "b-2", "sig", "n1", "", None,
                 id="pod doesn't get hint because the previous pod is to a different profile"),
    pytest.param("b-1", "sig", True, "n3", ["n1", "n2"], False, "b-2", "sig", "n1", "n1", ("sig", ["n2"]),
                 id="pod uses batch from preceding pod and leaves remaining batch to next pod"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("first_id", "first_sig", "first_ok", "first_chosen", "first_others", "skip", "second_id", "second_sig",
     "second_chosen", "want_hint", "want_state"),
    _BASIC,
)  # fmt: skip
def test_batch__TestBatchBasic(
    first_id: str, first_sig: str, first_ok: bool, first_chosen: str, first_others: list[str] | None, skip: bool,
    second_id: str, second_sig: str, second_chosen: str, want_hint: str, want_state: tuple[str, list[str]] | None,
) -> None:  # fmt: skip
    batch = OpportunisticBatch("default-scheduler")
    # the test plugin: a node holds one pod whose id begins with "b"; the last chosen node holds the first pod
    placed = {first_chosen: first_id}

    def rejected_by(node: str) -> bool | None:
        if node not in placed:
            return None
        return _blocking(second_id) and _blocking(placed[node])

    hint = batch.get_node_hint(first_sig.encode(), 1, 0.0, lambda _: None)
    assert hint == ""
    if first_ok:
        batch.store_schedule_results(first_sig.encode(), hint, first_chosen, _nodes(first_others), 1, 0.0)
    cycle = 3 if skip else 2
    hint = batch.get_node_hint(second_sig.encode(), cycle, 0.1, rejected_by)
    assert hint == want_hint
    batch.store_schedule_results(second_sig.encode(), hint, second_chosen, None, cycle, 0.1)
    if want_state is None:
        assert batch.state_empty()
    else:
        assert batch.state is not None
        assert batch.state.signature == want_state[0].encode()
        assert [batch.state.sorted_nodes.pop() for _ in range(len(batch.state.sorted_nodes))] == want_state[1]


def test_batch_expires_after_500ms_and_counts_its_flushes() -> None:
    # batch.go maxBatchAge: a list older than 500 ms is thrown away ("expired")
    batch = OpportunisticBatch("p")
    batch.store_schedule_results(b"s", "", "n1", _nodes(["n2", "n3"]), 1, 10.0)
    assert batch.get_node_hint(b"s", 2, 10.6, lambda _: True) == ""
    assert batch.flushes == {FLUSH_EXPIRED: 1}
    batch.store_schedule_results(b"s", "", "n1", _nodes(["n2", "n3"]), 2, 11.0)
    assert batch.get_node_hint(b"s", 3, 11.5, lambda _: False) == ""  # the used node still fits the pod
    assert batch.flushes == {FLUSH_EXPIRED: 1, FLUSH_NODE_NOT_FULL: 1}
    assert batch.get_node_hint(b"s", 3, 11.5, lambda _: True) == "n2"


def test_sorted_nodes_pop_highest_first_ties_at_random() -> None:
    seen = set()
    for seed in range(20):
        nodes = SortedNodes(["a", "b", "c", "d"], np.array([5, 9, 9, 1]), random.Random(seed))
        order = [nodes.pop() for _ in range(4)]
        assert set(order[:2]) == {"b", "c"} and order[2:] == ["a", "d"]
        seen.add(order[0])
    assert seen == {"b", "c"}


# --- the profile's signers ---------------------------------------------------------------


def _scheduler(version: str, plugin_args: dict[str, Any] | None = None, **gates: bool) -> Scheduler:
    v = Version(*map(int, version.split(".")))
    cfg = SchedulerConfig(
        profiles=[ProfileConfig(multi_point=_default_multi_point(v), plugin_args=plugin_args or {})],
        feature_gates={**default_feature_gates(v), **gates},
        emulated_version=v,
    )
    return Scheduler(FakeCluster(), cfg)


def _default_multi_point(v: Version) -> list[tuple[str, int]]:
    from kubesched.config._config import default_multi_point

    return default_multi_point(None, v)


LIST_DEFAULTING = {"PodTopologySpread": {"defaultingType": "List"}}


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["1.35", "1.36"])
async def test_the_default_profile_signs_no_pod(version: str) -> None:
    # PodTopologySpread's SignPod refuses every pod while it has default constraints, and
    # defaultingType System (the default) gives it the system's
    batching = _scheduler(version).scheduling.batching
    assert batching is not None
    assert batching.signers == {"default-scheduler": None}


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["1.30", "1.34"])
async def test_no_batch_before_1_35(version: str) -> None:
    assert _scheduler(version).scheduling.batching is None


@pytest.mark.anyio
async def test_gate_off_no_batch() -> None:
    assert _scheduler("1.36", LIST_DEFAULTING, OpportunisticBatching=False).scheduling.batching is None


@pytest.mark.anyio
async def test_signatures_of_a_profile_without_default_spreading() -> None:
    # DRAExtendedResource (on from 1.36) makes NodeResourcesFit refuse every pod: off here
    batching = _scheduler("1.36", LIST_DEFAULTING, DRAExtendedResource=False).scheduling.batching
    assert batching is not None
    signers = batching.signers["default-scheduler"]
    assert signers is not None
    plain = make_pod("a").req(cpu="1").obj()
    assert sign_pod(plain, signers) == sign_pod(make_pod("b").req(cpu="1").obj(), signers)
    assert sign_pod(plain, signers) != sign_pod(make_pod("c").req(cpu="2").obj(), signers)
    affinity = make_pod("d").req(cpu="1").pod_affinity("app", ["w"], "kubernetes.io/hostname").obj()
    assert sign_pod(affinity, signers) is None  # "Pods cannot use inter pod affinity/anti-affinity"
    spread = make_pod("e").req(cpu="1").obj()
    spread.spec.topology_spread_constraints = [object()]  # type: ignore[list-item]
    assert sign_pod(spread, signers) is None  # "pods with topology constraints are not signable"


@pytest.mark.anyio
async def test_extenders_or_unsigned_plugins_turn_signatures_off() -> None:
    sched = _scheduler("1.36", LIST_DEFAULTING, DRAExtendedResource=False)
    fw = sched.profiles["default-scheduler"]
    gates = sched.config.feature_gates
    assert profile_signers(fw.points, fw.plugins, False, gates) is not None
    assert profile_signers(fw.points, fw.plugins, True, gates) is None
    assert profile_signers(fw.points, fw.plugins, False, {**gates, "DRAExtendedResource": True}) is None
    unsigned = {**fw.points, "filter": [*fw.points["filter"], type("E", (), {"name": "Custom"})()]}
    assert profile_signers(unsigned, fw.plugins, False, gates) is None


@pytest.mark.anyio
async def test_dra_extended_resource_on_by_default_in_1_36_signs_no_pod() -> None:
    # v1.36: DRAExtendedResource beta on; Fit.SignPod "signature disabled when dra extended
    # resources enabled", so even a profile without default spreading batches no pod
    for sched in (_scheduler("1.36", LIST_DEFAULTING), _scheduler("1.35", LIST_DEFAULTING, DRAExtendedResource=True)):
        batching = sched.scheduling.batching
        assert batching is not None
        assert batching.signers == {"default-scheduler": None}
    assert _scheduler("1.35", LIST_DEFAULTING).scheduling.batching.signers["default-scheduler"] is not None  # type: ignore[union-attr]


# --- differential: the gate on and off ------------------------------------------------------


def _simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *flags: str) -> dict[str, Any]:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert main(["simulate", str(path), "--output", "json", *flags]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def _placements(out: dict[str, Any]) -> dict[str, Any]:
    """Each pod's node and its PodScheduled condition's reason and message."""
    return {
        p["name"]: (p["nodeName"], *next(((c["reason"], c["message"]) for c in p["conditions"]
                                          if c["type"] == "PodScheduled"), ("", "")))
        for p in out["pods"]
    }  # fmt: skip


def _random_scenario(seed: int) -> str:
    """Nodes of a few shapes and many pods of a few shapes, arriving in bursts (back to back,
    as batching wants them), some with the constraints that make a pod unsignable."""
    r = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(r.randint(3, 12)):
        node: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                     "topology.kubernetes.io/zone": r.choice("abc")}},
            "status": {"allocatable": {"cpu": str(r.choice([1, 2, 4])), "memory": "8Gi", "pods": "110"}},
        }  # fmt: skip
        if r.random() < 0.2:
            node["spec"] = {"taints": [{"key": "d", "value": "g", "effect": "NoSchedule"}]}
        docs.append(node)
    for i in range(r.randint(5, 25)):
        spec: dict[str, Any] = {
            "containers": [{"name": "c", "image": "web",
                            "resources": {"requests": {"cpu": r.choice(["500m", "1", "1", "2"])}}}]
        }  # fmt: skip
        if r.random() < 0.2:
            spec["tolerations"] = [{"key": "d", "operator": "Equal", "value": "g", "effect": "NoSchedule"}]
        elif r.random() < 0.1:
            spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": {"matchLabels": {"app": "w"}}}
            ]  # fmt: skip
        meta = {"name": f"p{i:02d}", "labels": {"app": "w"},
                "annotations": {"kubesched.io/arrival": r.choice(["0s", "0s", "100ms", "1s", "5s"])}}  # fmt: skip
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
    return "\n---\n".join(json.dumps(d) for d in docs)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_differential_default_profile_gate_on_and_off_place_alike(
    seed: int, version: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], batches: list[OpportunisticBatch]
) -> None:
    # the default profile signs no pod (system-defaulted PodTopologySpread): upstream's batch never
    # hints, so placements and messages are those of full cycles, byte for byte
    text = _random_scenario(seed)
    on = _simulate(tmp_path, capsys, text, "--seed", str(seed), "--emulated-version", version)
    (batch,) = batches
    assert batch.attempts.get(ATTEMPT_NO_HINT, 0) > 0  # asked every cycle that passed PreFilter
    assert set(batch.attempts) == {ATTEMPT_NO_HINT} and batch.batched_pods == 0
    assert set(batch.flushes) <= {FLUSH_POD_NOT_BATCHABLE, FLUSH_EMPTY_LIST}
    off = _simulate(tmp_path, capsys, text, "--seed", str(seed), "--emulated-version", version,
                    "--feature-gates", "OpportunisticBatching=false")  # fmt: skip
    assert _placements(on) == _placements(off)
    assert on["pods"] == off["pods"] and on["events"] == off["events"]


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> list[OpportunisticBatch]:
    made: list[OpportunisticBatch] = []
    init = OpportunisticBatch.__init__

    def spy(self: OpportunisticBatch, profile_name: str) -> None:
        init(self, profile_name)
        made.append(self)

    monkeypatch.setattr(_batch.OpportunisticBatch, "__init__", spy)
    return made


LIST_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - {name: PodTopologySpread, args: {defaultingType: List}}
"""

ONE_PER_NODE = "\n---\n".join(
    [
        *(f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{kubernetes.io/hostname: n{i}}}}}\n"
          "status: {allocatable: {cpu: '1', memory: 4Gi, pods: '110'}}" for i in range(6)),
        *(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\n"
          "spec: {containers: [{name: c, image: web, resources: {requests: {cpu: '1'}}}]}" for i in range(6)),
    ]
)  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_differential_one_pod_per_node_batches_and_places_alike(
    seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], batches: list[OpportunisticBatch]
) -> None:
    # equal pods that fill the node they take: the design's case.  Each later pod takes the next
    # node of the first one's list (hint_used), and every node gets one pod, as with full cycles
    cfg = tmp_path / "c.yaml"
    cfg.write_text(LIST_CONFIG)
    # DRAExtendedResource (on from 1.36) turns signatures off: off here, as 1.35 has it
    on = _simulate(tmp_path, capsys, ONE_PER_NODE, "--config", str(cfg), "--seed", str(seed),
                   "--feature-gates", "DRAExtendedResource=false")  # fmt: skip
    assert sum(b.batched_pods for b in batches) == 5
    off = _simulate(tmp_path, capsys, ONE_PER_NODE, "--config", str(cfg), "--seed", str(seed),
                    "--feature-gates", "OpportunisticBatching=false,DRAExtendedResource=false")  # fmt: skip
    nodes_on = sorted(n for n, *_ in _placements(on).values())
    nodes_off = sorted(n for n, *_ in _placements(off).values())
    assert nodes_on == nodes_off == [f"n{i}" for i in range(6)]


SCORE_SHIFT = "\n---\n".join(
    [
        # n0 is preferred (pod's preferred node affinity); n1 and n2 differ in free cpu
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0, labels: {kubernetes.io/hostname: n0, tier: gold}}\n"
        "status: {allocatable: {cpu: '1', memory: 4Gi, pods: '110'}}",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {kubernetes.io/hostname: n1, tier: silver}}\n"
        "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '110'}}",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n2, labels: {kubernetes.io/hostname: n2}}\n"
        "status: {allocatable: {cpu: '4', memory: 4Gi, pods: '110'}}",
        *(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\n"
          "spec:\n  containers: [{name: c, image: web, resources: {requests: {cpu: '1'}}}]\n"
          "  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: ["
          "{weight: 100, preference: {matchExpressions: [{key: tier, operator: In, values: [gold]}]}}, "
          "{weight: 10, preference: {matchExpressions: [{key: tier, operator: In, values: [silver]}]}}]}}"
          for i in range(2)),
    ]
)  # fmt: skip


def test_where_batching_differs_normalized_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], batches: list[OpportunisticBatch]
) -> None:
    # docs/versions.md: a hint is the next node of the previous pod's scores, so a score
    # normalized over the feasible nodes (NodeAffinity's, TaintToleration's) is not recomputed
    # without the node that left.  p0 takes n0 (gold); with full cycles p1 re-normalizes over
    # n1 and n2 (silver 10 -> 100) and takes n1; the batch kept p0's order, which ranks n2 above n1
    # (n2's LeastAllocated 75 against n1's 50 + 2 x 10), and p1 takes n2
    cfg = tmp_path / "c.yaml"
    cfg.write_text(LIST_CONFIG)
    # at 1.35: 1.36's BalancedAllocation (kubernetes#135573) scores the change the pod makes,
    # which ranks n1 first for both
    on = _placements(_simulate(tmp_path, capsys, SCORE_SHIFT, "--config", str(cfg), "--emulated-version", "1.35"))
    off = _placements(_simulate(tmp_path, capsys, SCORE_SHIFT, "--config", str(cfg), "--emulated-version", "1.35",
                                "--feature-gates", "OpportunisticBatching=false"))  # fmt: skip
    assert on["p0"][0] == off["p0"][0] == "n0"
    assert sum(b.batched_pods for b in batches) == 1
    assert (on["p1"][0], off["p1"][0]) == ("n2", "n1")
