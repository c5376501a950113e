"""``kubesched.simulation`` as a library: the steps ``kubesched simulate`` is made of, called by a
service (load, build, run, result), give the command's output byte for byte."""

from __future__ import annotations

import pytest

from kubesched import ConfigError, cli
from kubesched.scenario import DEMO_CONFIG, DEMO_MANIFESTS, load_manifests, simulation_config
from kubesched.simulation import Simulation, simulate

DEMO = {"<demo>/cluster.yaml": DEMO_MANIFESTS, "<demo>/config.yaml": DEMO_CONFIG}


def _cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli.main(["simulate", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_load_build_run_result_is_the_command(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    sim = Simulation.load(["<demo>/cluster.yaml"], config="<demo>/config.yaml", texts=DEMO, seed=3)
    assert sim.result is None
    result = sim.run_in_virtual_time(backend)
    assert sim.result is result
    assert result.to_json() == _cli_json(capsys, "--seed", "3", "--backend", backend)
    assert result.to_text().startswith("POD ")


@pytest.fixture
def until_30s(capsys: pytest.CaptureFixture[str]) -> str:
    """``kubesched simulate --until 30s`` (the demo): what the library must give."""
    return _cli_json(capsys, "--until", "30s")


@pytest.mark.anyio
async def test_simulate_on_a_loop_of_ones_own_is_the_same_run(until_30s: str) -> None:
    """``await simulate(...)`` inside the caller's loop; the virtual clock is what the test
    plugin gives every async test (kubesched.pytest_plugin)."""
    manifests = load_manifests(["<demo>/cluster.yaml"], DEMO)
    cfg = simulation_config("<demo>/config.yaml", "", DEMO_CONFIG)
    result = await simulate(manifests, cfg, until=30.0)
    assert result.summary["cutShort"]["reason"] == "until"
    assert result.to_json() == until_30s


def test_a_bad_drain_is_refused_when_the_simulation_is_built() -> None:
    node = (
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  annotations: {kubesched.io/drain: soon}\n"
        "status: {allocatable: {cpu: '1'}}\n"
    )
    manifests = load_manifests(["n.yaml"], {"n.yaml": node})
    with pytest.raises(ConfigError, match=r"n\.yaml: document 1 \(Node n1\), metadata\.annotations\[kubesched\.io/drain\]"):
        Simulation(manifests)


def test_config_warnings_go_to_the_callers_warn_once(capsys: pytest.CaptureFixture[str]) -> None:
    """The library prints nothing: a configuration's warnings reach ``warn`` (the command
    prints them as ``kubesched: warning: FILE, ...``) and stay in ``SchedulerConfig.warnings``."""
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled: [{name: DynamicResources}]\n"
    )
    seen: list[str] = []
    cfg = simulation_config("c.yaml", "", text, warn=seen.append)
    assert cfg.warnings and seen == [f"c.yaml, {w}" for w in cfg.warnings]
    assert capsys.readouterr() == ("", "")


def test_a_simulation_runs_once() -> None:
    sim = Simulation.load(["<demo>/cluster.yaml"], texts=DEMO, until=1.0)
    sim.run_in_virtual_time()
    with pytest.raises(RuntimeError, match="runs once"):
        sim.run_in_virtual_time()
