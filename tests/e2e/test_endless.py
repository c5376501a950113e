"""A scenario that cannot end by itself (a controller replacing finishing pods for ever) and has
no ``--until`` is one line and exit 2 naming the workload and ``--until``, before any simulation
work, in ``simulate``, ``compare`` and ``sweep``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched import ConfigError
from kubesched.cli import main
from kubesched.experiments import load_sweep
from kubesched.scenario import load_manifests
from kubesched.simulation import Simulation

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def workload(kind: str, *, replicas: int = 2, duration: bool = True, deletion: str = "") -> str:
    annotations = "{kubesched.io/duration: 30s}" if duration else "{}"
    deleted = f", annotations: {{kubesched.io/deletion: {deletion}}}" if deletion else ""
    extra = "\n  serviceName: web" if kind == "StatefulSet" else ""
    return f"""---
apiVersion: apps/v1
kind: {kind}
metadata: {{name: web{deleted}}}
spec:{extra}
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}, annotations: {annotations}}}
    spec: {{containers: [{{name: c, image: x}}]}}
"""


LINE = (
    "kubesched: error: {path}: document 2 ({kind} web): its pods finish (kubesched.io/duration on "
    "spec.template) and it replaces them for ever, so the run cannot end by itself: give --until\n"
)


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet"])
def test_an_endless_workload_without_until_is_one_line(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "endless.yaml"
    path.write_text(NODE + workload(kind))
    assert main(["simulate", str(path)]) == 2
    assert capsys.readouterr() == ("", LINE.format(path=path, kind=kind))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(workload("Deployment", deletion="10m"), id="deleted later"),
        pytest.param(workload("Deployment", replicas=0), id="no replicas"),
        pytest.param(workload("Deployment", duration=False), id="pods that never finish"),
    ],
)
def test_workloads_that_end_or_never_finish_a_pod_are_taken(text: str) -> None:
    Simulation(load_manifests(["s.yaml"], {"s.yaml": NODE + text}), until=None)


def test_until_makes_it_a_bounded_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "endless.yaml"
    path.write_text(NODE + workload("Deployment"))
    assert main(["simulate", str(path), "--until", "2m", "--output", "json"]) == 0
    assert "stopped at --until (120s of virtual time)" in capsys.readouterr().err


def test_compare_refuses_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "endless.yaml"
    path.write_text(NODE + workload("Deployment"))
    assert main(["compare", str(path), "--emulated-version", "1.32", "--emulated-version", "1.36"]) == 2
    assert capsys.readouterr() == ("", LINE.format(path=path, kind="Deployment"))


def test_sweep_refuses_when_loaded(tmp_path: Path) -> None:
    (tmp_path / "endless.yaml").write_text(NODE + workload("Deployment"))
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("scenarios: [endless.yaml]\nseeds: [1]\n")
    with pytest.raises(ConfigError) as info:
        load_sweep(str(sweep))
    assert str(info.value).startswith(f"{sweep}, scenarios[0]: endless.yaml: document 2 (Deployment web): ")
    assert str(info.value).endswith("give --until; or give the sweep an until")
    sweep.write_text("scenarios: [endless.yaml]\nseeds: [1]\nuntil: 1h\n")
    assert load_sweep(str(sweep)).until == "1h"
