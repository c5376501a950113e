"""The six policies through ``kubesched trace openb --fill 1.3 --config configs/<policy>.yaml``, on
a small generated trace of the openb shape (no trace data ships: the real one runs from
``OPENB_DIR`` with reproduce.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from kubesched import cli

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
POLICIES = ("random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd")
NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"
POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
              "deletion_time,scheduled_time")


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """60 nodes (2, 4 or 8 cards of three models) and 400 tasks: shares of a card (the trace's
    common 0.25-0.5 ones), whole cards, multi-card and cpu-only tasks, some asking for models."""
    rng = random.Random(37)
    d = tmp_path_factory.mktemp("openb")
    nodes = [NODE_HEADER]
    for i in range(60):
        cards = rng.choice([2, 4, 8, 8])
        nodes.append(f"openb-node-{i:04},{cards * 12000},{cards * 65536},{cards},{rng.choice(['T4', 'P100', 'V100M16'])}")
    pods = [POD_HEADER]
    for i in range(400):
        kind = rng.random()
        if kind < 0.6:
            num, milli = 1, rng.choice([250, 300, 460, 500, 500, 700])
        elif kind < 0.8:
            num, milli = 1, 1000
        elif kind < 0.88:
            num, milli = rng.choice([2, 4, 8]), 1000
        else:
            num, milli = 0, 0
        spec = rng.choice(["V100M16", "T4|P100"]) if num and rng.random() < 0.1 else ""
        pods.append(f"openb-pod-{i:04},{rng.choice([2000, 4000, 6000, 8000])},16384,{num},{milli},{spec},LS,Running,{i},,{i}")
    (d / "nodes.csv").write_text("\n".join(nodes) + "\n")
    (d / "pods.csv").write_text("\n".join(pods) + "\n")
    return str(d / "nodes.csv"), str(d / "pods.csv")


def fill(capsys: pytest.CaptureFixture[str], trace: tuple[str, str], policy: str, seed: int) -> dict[str, Any]:
    code = cli.main(["trace", "openb", *trace, "--fill", "1.3", "--seed", str(seed),
                     "--config", str(CONFIGS / f"{policy}.yaml"), "--output", "json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    result: dict[str, Any] = json.loads(out)["fill"]
    return result


@pytest.mark.parametrize("policy", POLICIES)
def test_fill_with_each_policy(capsys: pytest.CaptureFixture[str], trace: tuple[str, str], policy: str) -> None:
    f = fill(capsys, trace, policy, 42)
    alloc = f["allocation"]
    assert len(alloc) == 131 and alloc[0] < 1  # the mean of the tasks that round to 0 %
    assert all(a is not None and 0 <= a <= 100 for a in alloc)
    assert all(b >= a for a, b in zip(alloc, alloc[1:], strict=False))  # nothing finishes
    assert f["placed"] + f["failed"] + f["errors"] == f["pods"] and f["errors"] == 0
    # GPUs are held per card: never more than the cluster's, and the last tasks no longer fit
    assert f["gpuMilliPlaced"] <= f["gpus"] * 1000 and f["failed"] > 0
    assert all(0 <= r <= 100 for r in f["fragRatio"])
    # at half the capacity arrived, most arrivals fit (Random strands some 8-card tasks already)
    assert alloc[50] >= 45


def test_fgd_fragments_less_than_random(capsys: pytest.CaptureFixture[str], trace: tuple[str, str]) -> None:
    """The paper's claim on this trace, over three seeds: FGD allocates more GPU at 130 %."""
    fgd = [fill(capsys, trace, "fgd", s)["allocation"][130] for s in (1, 2, 3)]
    rnd = [fill(capsys, trace, "random", s)["allocation"][130] for s in (1, 2, 3)]
    assert sum(fgd) > sum(rnd)


def test_same_seed_same_curve(capsys: pytest.CaptureFixture[str], trace: tuple[str, str]) -> None:
    assert fill(capsys, trace, "random", 7) == fill(capsys, trace, "random", 7)
    assert fill(capsys, trace, "random", 7)["allocation"] != fill(capsys, trace, "random", 8)["allocation"]
