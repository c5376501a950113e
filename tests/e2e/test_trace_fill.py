"""``kubesched trace openb NODES PODS --fill F --config CFG``: the FGD paper's fill experiment, run.

A small trace written here: the ``cards`` objects (the artifact's node capacity and pod
annotations), the per-percent series as the artifact's ``merge_alloc_discrete.py`` computes it,
the fragmentation measure on the artifact's ``frag_test.go`` cases (commit 8f3d641), and bad
flags as one line.  The GPU-sharing policies themselves run in examples/gpushare's tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubesched import cli
from kubesched.traces._fill import _discrete, _Shape, node_frag, typical_types
from kubesched.traces._openb import Task

NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"
POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
              "deletion_time,scheduled_time")
DEFAULT = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("nodes.csv").write_text("\n".join([NODE_HEADER, "n0,8000,32768,2,T4", "n1,4000,16384,1,P100"]) + "\n")
    pods = [f"t{i},2000,1024,1,500,{'P100' if i % 3 == 0 else ''},LS,Running,{i},,{i}" for i in range(6)]
    Path("pods.csv").write_text("\n".join([POD_HEADER, *pods]) + "\n")
    Path("default.yaml").write_text(DEFAULT)
    return tmp_path


def test_cards_objects(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["trace", "openb", "nodes.csv", "pods.csv", "--shared-gpu", "cards"]) == 0
    docs = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    node = docs[0]
    assert node["status"]["allocatable"] == {"cpu": "8000m", "memory": "32768Mi", "pods": "110",
                                             "alibabacloud.com/gpu-count": "2",
                                             "alibabacloud.com/gpu-milli": "2000"}
    pod = next(d for d in docs if d["metadata"]["name"] == "t0")
    assert pod["metadata"]["annotations"] == {"kubesched.io/arrival": "0s", "alibabacloud.com/gpu-milli": "500",
                                              "alibabacloud.com/gpu-count": "1",
                                              "alibabacloud.com/gpu-card-model": "P100"}
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "2000m", "memory": "1024Mi"}}
    assert "affinity" not in pod["spec"]


def test_fill_run_reports_per_percent(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["trace", "openb", "nodes.csv", "pods.csv", "--fill", "1.3", "--seed", "5",
                     "--config", "default.yaml", "--output", "json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    fill = json.loads(out)["fill"]
    assert (fill["gpus"], fill["nodes"], fill["seed"], fill["factor"]) == (3, 2, 5, 1.3)
    assert len(fill["allocation"]) == len(fill["fragAmount"]) == len(fill["fragRatio"]) == 131
    # 3 GPUs: 1.3 x 3000 milli is 7 tasks of 500 (3500 <= 3900 < 4000); 12 cpu fit 6 of them
    assert (fill["pods"], fill["placed"], fill["failed"]) == (7, 6, 1)
    assert fill["gpuMilliPlaced"] == 3000
    assert fill["allocation"][0] == 0.0
    # with no GPU plugin in the profile, nothing holds the GPU: allocation follows arrival
    assert fill["allocation"][100] == 100.0
    again = cli.main(["trace", "openb", "nodes.csv", "pods.csv", "--fill", "1.3", "--seed", "5",
                      "--config", "default.yaml", "--output", "json"])
    assert again == 0 and json.loads(capsys.readouterr().out)["fill"] == fill


def test_fill_text_report(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["trace", "openb", "nodes.csv", "pods.csv", "--fill", "1.3", "--config", "default.yaml"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fill 1.3 seed 0: 6 of 7 tasks placed (1 failed), GPU allocation ")
    assert "  130% arrived: allocation " in out


@pytest.mark.parametrize(("argv", "line"), [
    (["--config", "default.yaml"], "--config: Forbidden: only with --fill (or --mode fill)"),
    (["--fill", "1.3", "--fill-factor", "1.2", "--config", "default.yaml"],
     "--fill: Forbidden: give --fill or --fill-factor, not both"),
    (["--fill", "0", "--config", "default.yaml"], "--fill-factor: Invalid value: 0: must be greater than 0"),
])
def test_bad_flags_are_one_line(workdir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], line: str) -> None:
    code = cli.main(["trace", "openb", "nodes.csv", "pods.csv", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and line in err


def test_discrete_as_merge_alloc_discrete() -> None:
    """Rows (arrived, used, frag, ratio) on 10 GPUs: percent arrived rounded half to even, the
    mean of the rows at it, or of those within one percent when none is."""
    rows = [(0, 0, 0.0, 0.0), (50, 50, 10.0, 1.0), (150, 150, 20.0, 2.0), (250, 200, 30.0, 3.0),
            (450, 400, 40.0, 4.0)]
    alloc, amount, ratio = _discrete(rows, 10, 5)
    # arrived %: 0, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 4.5 -> 4
    assert alloc == [0.25, 1.0, 1.75, 2.5, 4.0, 4.0]
    assert amount == [0.05, 0.15, 0.25, 0.3, 0.4, 0.4]
    assert ratio == [0.5, 1.5, 2.5, 3.0, 4.0, 4.0]
    assert _discrete([(0, 0, 0.0, 0.0)], 10, 3)[0] == [0.0, 0.0, None, None]


def test_frag__TestNodeGpuShareFragAmountScore_kubesched_copy() -> None:
    """The report's copy of the measure on the artifact's case (frag_test.go, 4x1080_used)."""
    typical = [(_Shape(6000, 465, 1, ""), 0.0933), (_Shape(8000, 440, 1, "2080"), 0.0915),
               (_Shape(12000, 900, 1, ""), 0.0865), (_Shape(2000, 0, 0, ""), 0.1)]
    free = [200, 1000, 1000, 500]
    # by hand: the 2080 type cannot use a 1080 node (all 2700 idle), the cpu type counts all idle;
    # the others lack cpu (1000 left): all idle
    assert node_frag(free, 1000, "1080", typical) == pytest.approx(2700 * (0.0933 + 0.0915 + 0.0865 + 0.1))
    one = [(_Shape(6000, 465, 1, ""), 0.0933)]
    assert node_frag(free, 1000, "1080", one) == pytest.approx(251.91, abs=0.01)
    assert node_frag(free, 8000, "1080", one) == pytest.approx(0.0933 * 200)


def test_typical_types_cover_95_percent() -> None:
    def t(i: int, cpu: int, milli: int, num: int) -> Task:
        return Task(row=i, name=f"t{i}", cpu_milli=cpu, memory_mib=1, num_gpu=num, gpu_milli=milli, gpu_spec=())

    tasks = [t(i, 1000, 500, 1) for i in range(60)] + [t(i, 2000, 0, 0) for i in range(36)] + [
        t(i, 3000, 1000, 2) for i in range(4)]
    got = typical_types(tasks)
    assert [(s.cpu, round(f, 4)) for s, f in got] == [(1000, round(60 / 96, 4)), (2000, round(36 / 96, 4))]


def test_a_pod_list_without_gpu_spec(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The artifact's multigpu* lists have only name, cpu_milli, memory_mib, num_gpu, gpu_milli."""
    Path("multi.csv").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nm0,4000,1024,2,1000\nm1,1000,512,0,0\n")
    assert cli.main(["trace", "openb", "nodes.csv", "multi.csv", "--fill", "1.3", "--config", "default.yaml",
                     "--output", "json"]) == 0
    fill = json.loads(capsys.readouterr().out)["fill"]
    assert fill["placed"] == fill["pods"] > 0


def test_nodes_are_named_as_the_artifacts_simulator_names_them() -> None:
    """``NNNN-<name>``: a permutation drawn by the seed over the nodes in name order
    (``syncClusterResourceList``), so a name tie-break prefers a fixed random node per seed."""
    from kubesched.traces._fill import node_names
    from kubesched.traces._openb import TraceNode

    nodes = [TraceNode(f"n{i}", 1000, 1024, 1, "T4") for i in (3, 1, 2, 0)]
    a = node_names(nodes, 42)
    assert sorted(a) == ["n0", "n1", "n2", "n3"]
    assert sorted(v[:4] for v in a.values()) == ["0000", "0001", "0002", "0003"]
    assert all(v.endswith("-" + k) for k, v in a.items())
    assert node_names(nodes, 42) == a
    assert any(node_names(nodes, s) != a for s in range(43, 50))


def test_output_needs_config(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["trace", "openb", "nodes.csv", "pods.csv", "--fill", "1.3", "--output", "json"]) == 2
    assert "--output: Forbidden: only with --config (the fill run's report)" in capsys.readouterr().err
