"""A sweep's ``openb`` scenario (the FGD paper's fill of a trace): what the sweep file may say, and
one cell run as a worker runs it (the policies' own sweep runs in examples/gpushare's tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched._errors import ConfigError
from kubesched.experiments import load_sweep, run_cell

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,32768,2,T4\n"
PODS = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,2000,1024,1,500\np1,2000,1024,1,500\n"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "pods.csv").write_text(PODS)
    return tmp_path


def sweep_file(d: Path, scenario: str) -> str:
    (d / "sweep.yaml").write_text(f"scenarios:\n- {scenario}\nseeds: [3]\n")
    return str(d / "sweep.yaml")


def test_an_openb_cell_reports_the_fill(files: Path) -> None:
    sweep = load_sweep(sweep_file(files, "{openb: {nodes: nodes.csv, pods: pods.csv, fill: 1.3}}"))
    (cell,) = sweep.cells()
    assert cell.scenario.label == "pods" and cell.task()["openb"]["fill"] == 1.3
    out = run_cell(cell.task())
    assert out["status"] == "ok"
    m = out["metrics"]
    # 2 GPUs: tasks of 500 milli up to 1.3 x 2000 = 5 tasks, of which 8 cpu hold 4
    assert (m["placed"], m["failed"]) == (4, 1)
    assert m["allocation100"] == 100.0 and set(m) >= {"allocation30", "allocation130", "fragRatio130", "fragAmount130"}


@pytest.mark.parametrize(("scenario", "message"), [
    ("{openb: {nodes: nodes.csv}}", "scenarios[0].openb.pods: Required value: a CSV file"),
    ("{openb: {nodes: nodes.csv, pods: pods.csv, fill: 0}}", "scenarios[0].openb.fill: Invalid value: 0: must be greater than 0"),
    ("{openb: {nodes: nodes.csv, pods: pods.csv, seed: 1}}", 'scenarios[0].openb.seed: unknown field "seed"'),
    ("{openb: {nodes: missing.csv, pods: pods.csv}}", "scenarios[0].openb.nodes: cannot read"),
])
def test_bad_openb_scenarios_are_one_line(files: Path, scenario: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_sweep(sweep_file(files, scenario))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_bad_row_is_found_when_the_sweep_is_read(files: Path) -> None:
    (files / "pods.csv").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,x,1,0,0\n")
    with pytest.raises(ConfigError, match="pods.csv, row 2, column cpu_milli"):
        load_sweep(sweep_file(files, "{openb: {nodes: nodes.csv, pods: pods.csv}}"))
