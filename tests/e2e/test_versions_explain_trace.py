"""``--emulated-version`` on ``explain`` and ``trace`` (issue 34 item 1): the commands that run no
scheduler take the flag too, check it as the others do, and say the version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.cli import main

ROOT = Path(__file__).resolve().parents[2]
RANGE_ERROR = ('kubesched: error: --emulated-version: Invalid value: "{}": must be a Kubernetes minor version '
               "MAJOR.MINOR from 1.30 to 1.36\n")


@pytest.fixture
def report_132(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    scenario = ROOT / "examples" / "scenarios" / "explain.yaml"
    assert main(["simulate", str(scenario), "--explain", "--emulated-version", "1.32"]) == 0
    path = tmp_path / "result.json"
    path.write_text(capsys.readouterr().out)
    return path


def _filter_header(view: str) -> list[str]:
    (line,) = [ln for ln in view.splitlines() if ln.strip().startswith("NODE ") and "Fit" in ln and "TOTAL" not in ln]
    return line.split()[1:]


def test_explain_states_the_version_and_orders_ties_as_its_profile_runs(
    report_132: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", str(report_132), "web"]) == 0
    plain = capsys.readouterr().out
    assert main(["explain", str(report_132), "web", "--emulated-version", "1.32"]) == 0
    versioned = capsys.readouterr().out
    assert versioned.startswith("Emulated Kubernetes version: 1.32\nPod default/web — attempt 1 of 1\n")
    # without the flag the view is unchanged: ties by name
    assert not plain.startswith("Emulated")
    assert _filter_header(plain) == ["NodeName", "NodeUnschedulable", "TaintToleration", "NodeResourcesFit"]
    # with it, NodeUnschedulable before NodeName, as v1.31.8 default_plugins.go runs them
    assert _filter_header(versioned) == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeResourcesFit"]
    # the 1.32 taint text is in the result, whatever explain is told
    assert "node(s) had untolerated taint {dedicated: gpu}" in versioned


def test_explain_refuses_a_result_of_another_version(report_132: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(report_132), "web", "--emulated-version", "1.36"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f'kubesched: error: {report_132}, summary.emulatedVersion: Invalid value: "1.32": the result was '
                   "made for Kubernetes 1.32, not 1.36 (--emulated-version): simulate again with --emulated-version "
                   "1.36, or explain it without the flag\n")


def test_explain_of_a_pod_read_from_a_cluster_takes_the_version_it_is_told(
    report_132: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pod as kubectl get -o json prints it has no summary: the flag says which version ran."""
    web = next(p for p in json.loads(report_132.read_text())["pods"] if p["name"] == "web")
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"name": "web", "namespace": "default", "annotations": web["annotations"]}}))
    assert main(["explain", str(pod), "web", "--emulated-version", "1.30"]) == 0
    assert capsys.readouterr().out.startswith("Emulated Kubernetes version: 1.30\n")


@pytest.mark.parametrize("version", ["1.29", "2.0", "abc"])
def test_explain_and_trace_refuse_unsupported_versions(
    report_132: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    assert main(["explain", str(report_132), "web", "--emulated-version", version]) == 2
    assert capsys.readouterr() == ("", RANGE_ERROR.format(version))
    nodes, pods = tmp_path / "n.csv", tmp_path / "p.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,1,V100\n")
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time,scheduled_time\n"
                    "p0,100,128,1,1000,,0,10,0\n")
    assert main(["trace", "openb", str(nodes), str(pods), "--emulated-version", version]) == 2
    assert capsys.readouterr() == ("", RANGE_ERROR.format(version))


def test_trace_names_the_version_for_simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes, pods = tmp_path / "n.csv", tmp_path / "p.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,1,V100\n")
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time,scheduled_time\n"
                    "p0,100,128,1,1000,,0,10,0\n")
    assert main(["trace", "openb", str(nodes), str(pods)]) == 0
    plain = capsys.readouterr().out
    assert main(["trace", "openb", str(nodes), str(pods), "--emulated-version", "1.32"]) == 0
    versioned = capsys.readouterr().out
    head, _, body = versioned.partition("\n")
    assert head == ("# kubesched trace openb (replay, shared GPUs whole) from n.csv and p.csv: ordinary manifests "
                    "for kubesched simulate --emulated-version 1.32")
    assert plain.partition("\n")[2] == body  # the objects are the same for every minor
    assert plain.partition("\n")[0].endswith("ordinary manifests for kubesched simulate")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(versioned)
    assert main(["simulate", str(scenario), "--emulated-version", "1.32"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["emulatedVersion"] == "1.32"
