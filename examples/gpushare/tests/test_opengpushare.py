"""Open-Gpu-Share in a scheduler: Filter per card, Reserve's card choice, the annotation written.

The artifact's ``open_gpu_share.go`` has no test of its own; these pin its behaviour (commit
8f3d641): ``AllocateGpuId`` for Filter, ``allocateGpuIdBasedOn{BestFit,WorstFit,RandomFit}`` and
``AllocateExclusiveGpuId`` for Reserve, ``IsNodeAccessibleToPodByType`` for the card model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from kubesched_gpushare import GPU_COUNT, GPU_INDEX, GPU_MILLI, GPU_MODEL

from kubesched.testing import make_node, make_pod, scheduler_for

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
pytestmark = pytest.mark.anyio


def config(policy: str, **share_args: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((CONFIGS / f"{policy}.yaml").read_text())
    for pc in doc["profiles"][0]["pluginConfig"]:
        if pc["name"] == "Open-Gpu-Share":
            pc["args"].update(share_args)
    return doc


def gpu_node(name: str, cards: int, model: str = "T4", cpu: str = "32") -> Any:
    return (make_node(name).capacity_list({"cpu": cpu, "memory": "64Gi", "pods": "110",
                                           GPU_COUNT: str(cards), GPU_MILLI: str(cards * 1000)})
            .label(GPU_MODEL, model).obj())


def task(name: str, milli: int, num: int = 1, cpu: str = "1", models: str = "", node: str = "",
         index: str = "") -> Any:
    b = make_pod(name).req(cpu=cpu, memory="1Gi").annotation(GPU_MILLI, str(milli)).annotation(GPU_COUNT, str(num))
    if models:
        b = b.annotation(GPU_MODEL, models)
    if index:
        b = b.annotation(GPU_INDEX, index)
    if node:
        b = b.node(node)
    return b.obj()


def annotations(sim: Any, name: str) -> dict[str, str]:
    pod = sim.cluster.get_pod("default", name)
    return dict(pod.metadata.annotations or {})


async def test_a_share_does_not_split_across_cards() -> None:
    """The issue's case: 500 free on each of two cards is no room for a 600 share."""
    objs = [gpu_node("n1", 2), task("a", 500, node="n1", index="0"), task("b", 500, node="n1", index="1"),
            task("big", 600)]
    async with scheduler_for(objs, config=config("bestfit")) as sim:
        await sim.settle()
        assert sim.placements()["big"] is None
        pod = sim.cluster.get_pod("default", "big")
        cond = next(c for c in pod.status.conditions if c.type == "PodScheduled")
        assert cond.message.startswith(
            "0/1 nodes are available: 1 node(s) didn't have enough free GPU on its cards. ")


async def test_reserve_best_fit_picks_the_fullest_card_that_fits() -> None:
    objs = [gpu_node("n1", 2)]
    async with scheduler_for(objs, config=config("bestfit")) as sim:
        for name, milli in (("p1", 300), ("p2", 500), ("p3", 800), ("p4", 200)):
            sim.create(task(name, milli))
            await sim.settle()
        got = {n: annotations(sim, n).get(GPU_INDEX) for n in ("p1", "p2", "p3", "p4")}
        # p1 on card 0 (both free: the first); p2 where 700 is left; p3 needs card 1;
        # p4 (200) where 200 is left: card 0
        assert got == {"p1": "0", "p2": "0", "p3": "1", "p4": "0"}


async def test_reserve_worst_fit_spreads() -> None:
    objs = [gpu_node("n1", 2)]
    async with scheduler_for(objs, config=config("bestfit", gpuSelMethod="worst")) as sim:
        for name in ("p1", "p2"):
            sim.create(task(name, 300))
            await sim.settle()
        assert [annotations(sim, n).get(GPU_INDEX) for n in ("p1", "p2")] == ["0", "1"]


async def test_whole_cards_take_the_first_free_ones() -> None:
    objs = [gpu_node("n1", 4), task("s", 100, node="n1", index="0")]
    async with scheduler_for(objs, config=config("gpupacking")) as sim:
        sim.create(task("two", 1000, num=2))
        await sim.settle()
        assert annotations(sim, "two")[GPU_INDEX] == "1-2"
        sim.create(task("three", 1000, num=3))
        await sim.settle()
        assert sim.placements()["three"] is None


async def test_card_model_is_an_affinity() -> None:
    objs = [gpu_node("t4", 1, "T4"), gpu_node("v100", 1, "V100M16")]
    async with scheduler_for(objs, config=config("fgd")) as sim:
        sim.create(task("p", 500, models="V100M16|V100M32"))
        sim.create(task("q", 500, models="A100"))
        await sim.settle()
        assert sim.placements()["p"] == "v100"
        assert sim.placements()["q"] is None


async def test_cpu_task_ignores_cards() -> None:
    objs = [make_node("cpu").capacity(cpu="4", memory="8Gi").obj()]
    async with scheduler_for(objs, config=config("fgd")) as sim:
        sim.create(make_pod("c").req(cpu="1").obj(), task("g", 100))
        await sim.settle()
        assert sim.placements() == {"c": "cpu", "g": None}


async def test_bad_args_name_the_field() -> None:
    from kubesched.framework import ConfigError

    with pytest.raises(ConfigError, match="dimExtMethod"):
        async with scheduler_for([], config=config("bestfit", dimExtMethod="sideways")):
            pass


@pytest.mark.parametrize("policy", ["gpupacking", "gpuclustering", "bestfit", "fgd", "dotprod"])
async def test_ties_go_to_the_smallest_node_name(policy: str) -> None:
    """The artifact's scheduler picks the smallest name among the top-scored nodes (its
    selectHost), where kube-scheduler picks at random: identical empty nodes fill in name order."""
    objs = [gpu_node(n, 2) for n in ("n3", "n1", "n4", "n2")]
    async with scheduler_for(objs, config=config(policy), seed=11) as sim:
        sim.create(task("p", 1000, num=2, cpu="2"))
        await sim.settle()
        assert sim.placements()["p"] == "n1"


def test_tie_break_lifts_or_lowers_by_one() -> None:
    import numpy as np
    from kubesched_gpushare._scoring import TieBreak
    from kubesched_gpushare._state import cards_for

    from kubesched.framework import CycleState, NodeBatch
    from kubesched.testing import FakeHandle

    handle = FakeHandle([gpu_node(n, 1) for n in ("c", "a", "b")])
    cards = cards_for(handle)
    snap = handle.snapshot
    explicit = NodeBatch.of([snap.node_infos[snap.index[n]] for n in ("c", "a", "b")])
    rows = NodeBatch(snapshot=snap, indices=np.array([snap.index[n] for n in ("c", "a", "b")]))
    for batch in (explicit, rows):
        state = CycleState()
        tie = TieBreak("name", "X", cards)
        tie.remember(state, batch)
        scores = np.array([50, 50, 40], dtype=np.int64)
        tie.apply(state, scores)
        assert scores.tolist() == [50, 51, 40]
        top = np.array([100, 100, 100], dtype=np.int64)
        tie.apply(state, top)
        assert top.tolist() == [99, 100, 99]
    state = CycleState()
    tie = TieBreak("random", "Y", cards)
    tie.remember(state, rows)
    untouched = np.array([50, 50, 40], dtype=np.int64)
    tie.apply(state, untouched)
    assert untouched.tolist() == [50, 50, 40]
