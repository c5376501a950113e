"""The six policies' scores: the artifact's plugin tests (``pkg/simulator/plugin/*_test.go``),
its ``pkg/utils/utils_test.go`` dot-product cases and ``pkg/type/resource_test.go``'s Sub, ported
as behaviour (commit 8f3d641), and each policy's rule on small nodes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kubesched_gpushare._frag import TypicalPod, node_frag
from kubesched_gpushare._model import Shape
from kubesched_gpushare._scoring import NodeRes
from kubesched_gpushare.policies import (
    best_fit,
    dot_product,
    fgd,
    gpu_clustering,
    gpu_packing,
    normalize_min_max,
    normalize_vector,
    resource_vec,
    sub,
    vector_dot_product,
)


def node(free: list[int], cpu_left: int = 1000, cap: int = 96000, model: str = "1080",
         affinity: list[int] | None = None) -> NodeRes:
    return NodeRes(free=free, cpu_left=cpu_left, cpu_capacity=cap, model=model,
                   affinity=affinity if affinity is not None else [0] * 9)


@pytest.mark.parametrize(("free", "shape", "expected"), [
    pytest.param([200, 1000, 1000, 500], Shape(100, 1000, 2, "1080"), 48, id="case-2"),
    pytest.param([1000] * 4, Shape(100, 1000, 2, "1080"), 29, id="case-3 4-GPU"),
    pytest.param([1000] * 8, Shape(100, 1000, 2, "1080"), 25, id="case-3 8-GPU"),
    pytest.param([200, 1000, 1000, 500], Shape(100, 200, 2, "1080"), 93, id="case-1 only use existing GPUs"),
])
def test_gpu_packing_score__TestGpuPackingScorePlugin_Score(free: list[int], shape: Shape, expected: int) -> None:
    n = node(list(free))
    assert gpu_packing(n, shape) == expected
    assert n.free == free  # the order of the cards does not change


def test_gpu_packing_score_no_room_is_the_artifacts_error() -> None:
    assert gpu_packing(node([200, 300]), Shape(100, 1000, 1)) is None


@pytest.mark.parametrize(("free", "cpu_left", "cap", "shape", "expected"), [
    # nodeCap (2000, 4000): node (0.5, 0.2875), pod (0.25, 0.125)
    ([200, 600, 350, 0], 1000, [2000, 4000], Shape(500, 500, 1), 0.1609375),
    ([1000, 150, 0, 0], 1000, [2000, 4000], Shape(500, 500, 1), 0.1609375),
    ([500, 75, 0, 0], 500, [2000, 4000], Shape(500, 500, 1), 0.08046875),
    ([1000, 1000], 0, [2000, 2000], Shape(1000, 10, 2), 0.01),
    ([1000], 8000, [8000, 1000], Shape(4000, 1000, 1), 1.5),
])
def test_utils__TestCalculateVectorDotProduct(free: list[int], cpu_left: int, cap: list[float],
                                              shape: Shape, expected: float) -> None:
    nv = normalize_vector(resource_vec(node(free, cpu_left)), cap)
    pv = normalize_vector([float(shape.cpu), float(shape.total_milli)], cap)
    assert vector_dot_product(nv, pv) == pytest.approx(expected, abs=1e-3)
    assert vector_dot_product([], pv) == -1


def test_resource__TestNodeResource_Sub() -> None:
    got, ok = sub(node([200, 1000, 1000, 500], 1000), Shape(100, 1000, 2, "1080"))
    assert ok and got.free == [200, 0, 0, 500] and got.cpu_left == 900
    short, ok = sub(node([200, 1000], 1000), Shape(100, 1000, 2))
    assert not ok and short.free == [200, 0] and short.cpu_left == 900  # as far as it got


def test_dot_product_merge_max() -> None:
    """DotProd as the paper runs it (merge, max): 1 − (cpu·cpu'/128000² + gpu·gpu'/8000²)/2."""
    n = node([1000, 500], cpu_left=64000)
    s, cards = dot_product(n, Shape(8000, 500, 1), "merge", "max")
    dot = (64000 / 128000 * 8000 / 128000 + 1500 / 8000 * 500 / 8000) / 2
    assert s == int(100 * (1 - dot))
    assert cards is None  # merge chooses no card: Open-Gpu-Share's "best" does
    assert dot_product(node([1000], cpu_left=100), Shape(8000, 500, 1), "merge", "max") == (0, None)


def test_dot_product_share_picks_a_card() -> None:
    n = node([1000, 300, 600], cpu_left=64000)
    s, cards = dot_product(n, Shape(8000, 250, 1), "share", "max")
    # candidates: card 1 (300), card 2 (600), the free card (1000): the least aligned wins
    assert cards == [1]
    assert s == int(100 * (1 - (0.5 * 8000 / 128000 + 300 / 8000 * 250 / 8000) / 2))


def test_gpu_clustering_bands() -> None:
    share = Shape(1000, 500, 1)
    # (75, 100]: only share tasks on the node
    assert gpu_clustering(node([500, 1000], affinity=[1] + [0] * 8), share) == 25 * (8000 - 1500) // 8000 + 75
    # (50, 75]: share tasks among others
    assert gpu_clustering(node([500, 0], affinity=[1, 1] + [0] * 7), share) == 25 * 7500 // 8000 + 50
    # (25, 50]: an idle node
    assert gpu_clustering(node([1000, 1000]), share) == 25 * 6000 // 8000 + 25
    # (0, 25]: other tasks only
    assert gpu_clustering(node([0, 1000], affinity=[0, 1] + [0] * 7), share) == 25 * 7000 // 8000
    assert gpu_clustering(node([1000]), Shape(1000, 0, 0)) == 0


def test_best_fit_and_its_normalisation() -> None:
    s = best_fit(node([1000, 500], cpu_left=64000), Shape(8000, 500, 1))
    assert s == int((1 - ((64000 - 8000) / 128000 * 0.5 + 1000 / 8000 * 0.5)) * 100)
    assert best_fit(node([100], cpu_left=64000), Shape(8000, 500, 1)) is None
    scores = np.array([40, 70, 55], dtype=np.int64)
    normalize_min_max(scores)
    assert scores.tolist() == [0, 100, 50]
    same = np.array([7, 7], dtype=np.int64)
    normalize_min_max(same)
    assert same.tolist() == [0, 0]


TYPICAL = [TypicalPod(Shape(4000, 500, 1), 0.5), TypicalPod(Shape(8000, 1000, 1), 0.3),
           TypicalPod(Shape(2000, 0, 0), 0.2)]


def test_fgd_share_tries_every_card() -> None:
    n = node([1000, 600, 500], cpu_left=32000, model="T4")
    s, cards = fgd(n, Shape(4000, 500, 1), TYPICAL)
    before = node_frag(n.free, n.cpu_left, "T4", TYPICAL)
    per_card = {}
    for i in range(3):
        free = list(n.free)
        free[i] -= 500
        after = node_frag(free, 28000, "T4", TYPICAL)
        per_card[i] = int(1 / (1 + math.exp(-(before - after) / 1000)) * 100)
    best = max(per_card.values())
    assert s == best and cards == [min(i for i, v in per_card.items() if v == best)]
    # filling card 2 exactly leaves no fragment: the gradient prefers it to breaking the free card
    assert per_card[2] >= per_card[0]


def test_fgd_whole_cards_and_cpu_tasks() -> None:
    n = node([1000, 1000, 300], cpu_left=32000, model="T4")
    s, cards = fgd(n, Shape(8000, 1000, 2), TYPICAL)
    assert cards == [0, 1]
    after = node_frag([0, 0, 300], 24000, "T4", TYPICAL)
    before = node_frag(n.free, 32000, "T4", TYPICAL)
    assert s == int(1 / (1 + math.exp(-(before - after) / 1000)) * 100)
    s_cpu, none = fgd(n, Shape(2000, 0, 0), TYPICAL)
    assert none == [] and 0 <= s_cpu <= 100


def test_fgd_plugin_scores_match_the_rule_node_by_node() -> None:
    """FGDScore scores a batch with numpy and caches per task shape; it must give what
    ``calculateGpuShareFragExtendScore`` gives each node, before and after a node changes."""
    import random

    from kubesched_gpushare import FGDScore, typical_pods
    from kubesched_gpushare._model import GPU_COUNT, GPU_INDEX, GPU_MILLI, GPU_MODEL, pod_shape
    from kubesched_gpushare._state import cards_for

    from kubesched.framework import CycleState, NodeBatch
    from kubesched.testing import FakeHandle, make_node, make_pod

    rng = random.Random(3)
    nodes, pods = [], []
    for i in range(12):
        k = rng.choice([1, 2, 4, 8])
        nodes.append(make_node(f"n{i}").capacity_list({
            "cpu": "64", "memory": "256Gi", "pods": "110", GPU_COUNT: str(k), GPU_MILLI: str(1000 * k)})
            .label(GPU_MODEL, rng.choice(["T4", "P100"])).obj())
        for j in range(rng.randrange(3)):
            milli = rng.choice([200, 500, 1000])
            pods.append(make_pod(f"p{i}-{j}").req(cpu=str(rng.choice([2, 4, 8])))
                        .annotation(GPU_MILLI, str(milli)).annotation(GPU_COUNT, "1")
                        .annotation(GPU_INDEX, str(rng.randrange(k))).node(f"n{i}").obj())
    pending = [make_pod(f"q{m}-{c}").req(cpu="4").annotation(GPU_MILLI, str(m)).annotation(GPU_COUNT, str(c))
               .obj() for m, c in ((300, 1), (1000, 1), (1000, 2))]
    handle = FakeHandle(nodes, pods + pending)
    plugin = FGDScore(None, handle)
    cards = cards_for(handle)
    typical = typical_pods(pod_shape(p) for p in pods + pending)
    snap = handle.snapshot
    by_rows = NodeBatch(snapshot=snap, indices=np.arange(len(snap)))
    explicit = NodeBatch.of(snap.node_infos)
    want: dict[str, list[int]] = {}
    for q in pending:
        want[q.metadata.name] = []
        for ni in snap.node_infos:
            free, _, model, aff = cards.node_state(ni)
            cpu_left = ni.allocatable.milli_cpu - ni.requested.milli_cpu
            want[q.metadata.name].append(fgd(NodeRes(free, cpu_left, 0, model, aff), pod_shape(q), typical)[0])
    for batch in (by_rows, explicit, by_rows):  # the second pass over the rows reads the cache
        for q in pending:
            got = plugin.kubesched_score(CycleState(), q, batch)
            assert got.tolist() == want[q.metadata.name]
