"""DynamicResources at PreScore and Score per emulated version, as the scheduler runs it.

v1.34.7's plugin is no Score plugin; v1.35.4's is (kubernetes#134711) and has no PreScore, so
its Score runs for every pod that reaches scoring: 0 on every node without a prioritized list
(with or without claims), recorded as such (``--explain``), never as a Skip.  1.36 as 1.35.
"""

from __future__ import annotations

import json

import pytest

from kubesched.scheduler._results import PRESCORE_RESULT, SCORE_RESULT, ResultRecorder
from kubesched.testing import make_node, make_pod, scheduler_for
from kubesched.testing_dra import make_claim, make_device_class, make_slice

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


DRIVER = "gpu.example.com"


def _objects() -> list[object]:
    nodes = [make_node(n).capacity(cpu="4", memory="8Gi", pods="10").obj() for n in ("n1", "n2")]
    slices = [make_slice(n, DRIVER).devices("gpu-0").obj() for n in ("n1", "n2")]
    return [*nodes, make_device_class(DRIVER), *slices]


@pytest.mark.parametrize(
    ("version", "scored"),
    [("1.34", False), ("1.35", True), ("1.36", True)],
)
async def test_score_runs_for_every_pod_from_1_35(version: str, scored: bool) -> None:
    async with scheduler_for(_objects(), emulated_version=version) as sim:
        sim.scheduler.recorder = ResultRecorder()
        sim.create(make_pod("plain").obj())
        sim.create(make_claim("c").request(DRIVER, name="gpu").obj())
        sim.create(make_pod("claimer").resource_claim("gpu", claim="c").obj())
        await sim.settle()
        for name in ("plain", "claimer"):
            pod = sim.pod(name)
            assert pod is not None and pod.spec.node_name, name
            got = sim.scheduler.recorder.latest[pod.metadata.uid]
            assert "DynamicResources" not in json.loads(got[PRESCORE_RESULT]), (version, name)
            scores = json.loads(got[SCORE_RESULT])
            assert set(scores) == {"n1", "n2"}
            if scored:
                assert {n: s["DynamicResources"] for n, s in scores.items()} == {"n1": "0", "n2": "0"}
            else:
                assert all("DynamicResources" not in s for s in scores.values())


async def test_score_with_a_prioritized_list_at_1_35() -> None:
    """The node whose allocation takes the better-ranked subrequest scores higher (8 - index,
    normalized to 100): TestPlugin "claim-with-prioritized-list" through the scheduler."""
    objs = _objects()
    big = make_device_class("big", f'device.attributes["{DRIVER}"].big')
    objs.append(big)
    objs[3] = make_slice("n1", DRIVER).device("gpu-0", {"big": False}).obj()
    objs[4] = make_slice("n2", DRIVER).device("gpu-0", {"big": True}).obj()
    async with scheduler_for(objs, emulated_version="1.35") as sim:
        sim.scheduler.recorder = ResultRecorder()
        sim.create(make_claim("c").first_available("gpu", ("big", "big"), ("any", DRIVER)).obj())
        sim.create(make_pod("p").resource_claim("gpu", claim="c").obj())
        await sim.settle()
        pod = sim.pod("p")
        assert pod is not None and pod.spec.node_name == "n2"
        scores = json.loads(sim.scheduler.recorder.latest[pod.metadata.uid][SCORE_RESULT])
        assert {n: s["DynamicResources"] for n, s in scores.items()} == {"n1": "7", "n2": "8"}
