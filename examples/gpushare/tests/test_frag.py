"""The fragmentation measure: the artifact's ``pkg/utils/frag_test.go`` cases (commit 8f3d641),
ported as behaviour, and the batch form agreeing with the per-node one."""

from __future__ import annotations

import random

import numpy as np
import pytest
from kubesched_gpushare._frag import (
    NA,
    Q2,
    Q3,
    Q4,
    XL,
    XR,
    FragTable,
    TypicalPod,
    gpu_frag_milli,
    node_frag,
    node_frag_amount,
    node_pod_quadrant,
    typical_pods,
)
from kubesched_gpushare._model import Shape


def tp(cpu: int, milli: int, num: int, models: str, pct: float) -> TypicalPod:
    return TypicalPod(Shape(cpu, milli, num, models), pct / 100)


# TestingGenerateGetTypicalPods
TYPICAL = [
    tp(6000, 465, 1, "", 9.33), tp(8000, 440, 1, "2080", 9.15), tp(8000, 475, 1, "T4", 8.76),
    tp(8000, 440, 1, "P100", 8.72), tp(2000, 465, 1, "", 8.68), tp(12000, 900, 1, "", 8.65),
    tp(4000, 900, 1, "", 8.43), tp(16000, 678, 1, "T4", 8.36), tp(8000, 500, 1, "", 8.29),
    tp(6000, 511, 1, "", 8.11), tp(14000, 1000, 2, "2080", 0.54), tp(4000, 1000, 1, "2080", 0.43),
    tp(32000, 1000, 2, "T4", 0.43), tp(16000, 1000, 1, "V100M16", 0.40), tp(64000, 1000, 2, "", 0.40),
    tp(10000, 1000, 2, "", 0.40), tp(11400, 1000, 1, "T4", 0.36), tp(16000, 1000, 1, "T4", 0.36),
    tp(4000, 1000, 2, "", 0.36), tp(14000, 1000, 2, "V100M16", 0.36), tp(8000, 1000, 4, "", 0.36),
    tp(16000, 1000, 2, "", 0.32), tp(2000, 1000, 1, "T4", 0.32), tp(6000, 1000, 1, "", 0.32),
    tp(4000, 1000, 1, "", 0.32), tp(5000, 1000, 1, "", 0.32), tp(32000, 1000, 4, "V100M16", 0.32),
    tp(32000, 1000, 2, "", 0.32), tp(24000, 1000, 8, "2080", 0.32), tp(40000, 1000, 4, "", 0.29),
    tp(32000, 1000, 8, "", 0.29), tp(32000, 1000, 1, "T4", 0.29), tp(16000, 1000, 1, "", 0.25),
    tp(7000, 1000, 1, "V100M16", 0.25), tp(24000, 1000, 1, "T4", 0.25),
]

# TestingGenerateGetTypicalPodsWithNonGpu
TYPICAL_NON_GPU = [
    tp(15700, 1000, 1, "", 28.69), tp(11900, 1000, 1, "", 18.93), tp(11400, 1000, 1, "", 12.27),
    tp(1000, 0, 0, "", 7.36), tp(18710, 1000, 1, "", 4.85), tp(8200, 1000, 1, "", 3.79),
    tp(16400, 1000, 1, "", 3.31), tp(9810, 1000, 1, "", 1.97), tp(15200, 1000, 1, "", 1.87),
    tp(11200, 1000, 1, "", 1.81), tp(14200, 1000, 1, "", 1.76), tp(12000, 0, 0, "", 1.65),
    tp(14900, 1000, 1, "", 1.39), tp(60200, 1000, 4, "", 1.23), tp(64200, 1000, 8, "", 1.07),
    tp(32200, 1000, 4, "", 1.01), tp(17400, 1000, 2, "", 0.91), tp(30200, 1000, 2, "", 0.69),
    tp(16000, 1000, 1, "", 0.64), tp(15000, 1000, 1, "", 0.59), tp(64000, 1000, 8, "", 0.53),
    tp(15000, 0, 0, "", 0.53), tp(11910, 1000, 1, "", 0.53), tp(120200, 1000, 8, "", 0.48),
    tp(11300, 1000, 1, "", 0.37), tp(30000, 1000, 2, "", 0.32), tp(9800, 1000, 1, "", 0.32),
    tp(8000, 1000, 1, "", 0.32), tp(2000, 1000, 1, "", 0.27), tp(2000, 80, 1, "", 0.27),
    tp(1000, 1000, 1, "", 0.27),
]


@pytest.mark.parametrize(("free", "cpu_left", "expected"), [
    pytest.param([200, 1000, 1000, 500], 1000, 2566.62, id="4x1080_used"),
    pytest.param([1000] * 4, 1000, 3802.40, id="4x1080_full"),
    pytest.param([1000] * 8, 1000, 7604.80, id="8x1080_full"),
])
def test_frag__TestNodeGpuShareFragAmountScore(free: list[int], cpu_left: int, expected: float) -> None:
    assert node_frag(free, cpu_left, "1080", TYPICAL) == pytest.approx(expected, abs=0.01)
    amount = node_frag_amount(free, cpu_left, "1080", TYPICAL)
    assert sum(amount) - amount[Q3] == pytest.approx(expected, abs=0.01)  # TestNodeGpuShareFragAmount


def test_frag__TestNodeGpuShareFragAmountScore_lack_cpu() -> None:
    one = [tp(6000, 465, 1, "", 9.33)]
    free = [200, 1000, 1000, 500]
    assert node_pod_quadrant(free, 1000, "1080", one[0].shape) == Q4
    assert sum(free) == 2700
    assert node_frag(free, 1000, "1080", one) == pytest.approx(251.91, abs=0.01)


@pytest.mark.parametrize(("name", "free", "cpu_left", "expected"), [
    ("8xP100_empty", [1000] * 8, 64000, 887.20),
    ("8xP100_halved", [1000] * 4 + [0] * 4, 32000, 554.4),
    ("8xP100_nocpu", [1000] * 4 + [0] * 4, 0, 4000),
])
def test_frag__TestNodeGpuShareFragAmountWithNonGpu(name: str, free: list[int], cpu_left: int,
                                                     expected: float) -> None:
    assert node_frag(free, cpu_left, "P100", TYPICAL_NON_GPU) == pytest.approx(expected, abs=0.01)


@pytest.mark.parametrize(("free", "shape", "expected"), [
    ([200, 1000, 1000, 500], Shape(100, 1000, 2, "1080"), 700),
    ([1000] * 4, Shape(100, 1000, 2, "1080"), 0),
    ([1000] * 8, Shape(100, 1000, 2, "1080"), 0),
    ([200, 1000, 1000, 500], Shape(100, 200, 2, "1080"), 0),
])
def test_frag__TestGetGpuFragMilliByNodeResAndPodRes(free: list[int], shape: Shape, expected: int) -> None:
    assert gpu_frag_milli(free, shape) == expected


def test_quadrants_of_cpu_tasks_and_models() -> None:
    assert node_pod_quadrant([1000], 500, "T4", Shape(400, 0, 0)) == XL
    assert node_pod_quadrant([1000], 300, "T4", Shape(400, 0, 0)) == XR
    assert node_pod_quadrant([1000], 500, "T4", Shape(400, 500, 1, "V100M16|P100")) == NA
    assert node_pod_quadrant([1000], 500, "P100", Shape(400, 500, 1, "V100M16|P100")) == Q3
    assert node_pod_quadrant([400], 500, "P100", Shape(400, 500, 1)) == Q2


def test_frag_table_agrees_with_node_frag() -> None:
    rng = random.Random(7)
    typical = TYPICAL + [tp(3000, 0, 0, "", 1.0)]
    table = FragTable(typical)
    models = ["1080", "T4", "P100", "V100M16", "2080", ""]
    states = []
    for _ in range(300):
        n = rng.choice([1, 2, 4, 8])
        free = [rng.choice([0, 70, 200, 465, 535, 1000]) for _ in range(n)] + [0] * (8 - n)
        states.append((free, rng.randrange(0, 64000), rng.choice(models)))
    got = table.frag(np.array([s[0] for s in states]), np.array([s[1] for s in states]),
                     np.array([table.code(s[2]) for s in states]))
    want = [node_frag(f, c, m, typical) for f, c, m in states]
    assert got == pytest.approx(want)


def test_typical_pods__GetTypicalPods() -> None:
    shapes = ([Shape(1000, 500, 1)] * 50 + [Shape(2000, 1000, 1)] * 30 + [Shape(4000, 0, 0)] * 16
              + [Shape(8000, 1000, 8)] * 3 + [Shape(3000, 1000, 2)] * 1)
    got = typical_pods(shapes)
    # 95 % of 100 tasks: the first three types (96) suffice; renormalised over them
    assert [t.shape for t in got] == [Shape(1000, 500, 1), Shape(2000, 1000, 1), Shape(4000, 0, 0)]
    assert [round(t.freq, 4) for t in got] == [round(50 / 96, 4), round(30 / 96, 4), round(16 / 96, 4)]
    # ties in count: PodResource.Less, descending
    tie = typical_pods([Shape(1000, 500, 1), Shape(2000, 500, 1)], popularity=100)
    assert [t.shape.cpu for t in tie] == [2000, 1000]
    assert typical_pods([Shape(1, 0, 0)] * 3, involve_cpu_pods=False) == []
