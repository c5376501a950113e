"""The recorded plugin results end to end: ``simulate --explain`` and ``kubesched explain`` through
the command line, and ``run --record-plugin-results`` against the fake API server, read back with
the official Kubernetes Python client (what ``kubectl get pod -o yaml`` shows).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from kubesched.cli import main
from kubesched.reporting import explain
from kubesched.scenario import load_config_file, load_manifests
from kubesched.service import RunOptions, run_scheduler
from kubesched.transports.apiserver import APIServer, write_kubeconfig
from kubesched.transports.fake import FakeCluster

FILTER = "kube-scheduler-simulator.sigs.k8s.io/filter-result"
SELECTED = "kube-scheduler-simulator.sigs.k8s.io/selected-node"
HISTORY = "kube-scheduler-simulator.sigs.k8s.io/result-history"
FINAL = "kube-scheduler-simulator.sigs.k8s.io/finalscore-result"

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {kubernetes.io/hostname: gpu-1}}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: small-1, labels: {kubernetes.io/hostname: small-1}}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: worker-1, labels: {kubernetes.io/hostname: worker-1}}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: worker-2, labels: {kubernetes.io/hostname: worker-2}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  schedulerName: SCHEDULER
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "2", memory: 1Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: default}
spec:
  schedulerName: SCHEDULER
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "9", memory: 1Gi}}}]
"""

TAINT_MSG = "node(s) had untolerated taint {dedicated: gpu}"


def _files(tmp_path: Path, scheduler: str = "default-scheduler") -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER.replace("SCHEDULER", scheduler))
    return path


def _simulate(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["simulate", *args]) == 0
    return capsys.readouterr().out


# --- simulate --explain and explain -------------------------------------------------------------


def test_simulate_explain_json_and_explain_views(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path)
    plain = json.loads(_simulate(capsys, str(files)))
    out = _simulate(capsys, str(files), "--explain")
    report = json.loads(out)
    pods = {p["name"]: p for p in report["pods"]}
    assert all("annotations" not in p for p in plain["pods"])
    # the same decisions with and without recording
    assert [(p["name"], p["nodeName"]) for p in plain["pods"]] == [
        (p["name"], p["nodeName"]) for p in report["pods"]
    ]
    web, huge = pods["web"]["annotations"], pods["huge"]["annotations"]
    assert web[SELECTED] == pods["web"]["nodeName"] == "worker-2"
    assert json.loads(web[FILTER])["gpu-1"]["TaintToleration"] == TAINT_MSG
    assert huge[SELECTED] == ""
    assert json.loads(huge[FILTER])["worker-2"]["NodeResourcesFit"] == "Insufficient cpu"

    report_path = tmp_path / "result.json"
    report_path.write_text(out)
    assert main(["explain", str(report_path), "huge"]) == 0
    pending = capsys.readouterr().out
    assert "Outcome: unschedulable: no node fits (4 nodes evaluated)" in pending
    assert "Rejected nodes by reason:" in pending
    assert "NodeResourcesFit: Insufficient cpu — 3 nodes: small-1, worker-1, worker-2" in pending
    assert f"TaintToleration: {TAINT_MSG} — 1 node: gpu-1" in pending
    assert main(["explain", str(report_path), "default/web"]) == 0
    placed = capsys.readouterr().out
    assert "Outcome: bound to worker-2" in placed
    assert "Score: top 2 of 2 nodes by final score" in placed
    # the score table's total is the sum of the plugins' weighted parts
    finals = json.loads(web[FINAL])
    score_rows = [line.split() for line in placed.splitlines() if line.strip().startswith(("* worker", "worker"))]
    score_rows = [r for r in score_rows if r[0] == "*" or r[1].isdigit()]
    for row in score_rows:
        node, total = (row[1], row[2]) if row[0] == "*" else (row[0], row[1])
        assert int(total) == sum(int(v) for v in finals[node].values())
    # --output text appends the same views, pod by pod
    text = _simulate(capsys, str(files), "--explain", "--output", "text")
    assert pending in text and placed in text


def test_simulate_explain_same_bytes_on_both_backends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path)
    a = _simulate(capsys, str(files), "--explain", "--backend", "asyncio")
    b = _simulate(capsys, str(files), "--explain", "--backend", "trio")
    assert a == b


@pytest.mark.parametrize(
    ("pod", "content", "message"),
    [
        pytest.param("nope", None, 'POD: pod "nope" not found', id="unknown pod"),
        pytest.param("web", '{"pods": [{"name": "web", "namespace": "default"}], "summary": {}}',
                     'pod "default/web" has no recorded plugin results', id="report without --explain"),
        pytest.param("web", "{not json", "not JSON", id="not JSON"),
    ],
)
def test_explain_bad_input_is_one_line(
    tmp_path: Path, pod: str, content: str | None, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "result.json"
    path.write_text(content if content is not None else '{"pods": [], "events": [], "summary": {}}')
    assert main(["explain", str(path), pod]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"kubesched: error: {path}") and message in lines[0]


# --- run --record-plugin-results, read with the official client ------------------------------------


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.anyio
async def test_run_writes_annotations_the_official_client_reads(tmp_path: Path) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n  - schedulerName: kubesched\n"
    )
    cfg = load_config_file(str(config))
    async with FakeCluster(epoch="2024-01-01T00:00:00Z") as cluster:
        for m in load_manifests([str(_files(tmp_path, "kubesched"))]):
            cluster.create(m.obj)
        async with APIServer(cluster) as server, anyio.create_task_group() as tg:
            options = RunOptions(server=server.url, record_plugin_results=True)
            await tg.start(
                lambda task_status: run_scheduler(options, cfg, handle_signals=False, task_status=task_status)
            )

            def recorded() -> bool:
                return all(
                    HISTORY in (p.metadata.annotations or {}) for p in cluster.pods()
                )

            with anyio.fail_after(30):
                while not recorded():
                    await anyio.sleep(0.05)
            kubeconfig = str(write_kubeconfig(tmp_path / "kubeconfig", server.url))

            def read() -> tuple[dict[str, dict[str, str]], dict[str, Any]]:
                api_client = kubernetes.config.new_client_from_config(config_file=kubeconfig)
                with api_client:
                    v1 = kubernetes.client.CoreV1Api(api_client)
                    pods = v1.list_namespaced_pod("default").items
                    as_json = api_client.sanitize_for_serialization(v1.read_namespaced_pod("huge", "default"))
                    return {p.metadata.name: p.metadata.annotations for p in pods}, as_json

            annotations, huge_json = await anyio.to_thread.run_sync(read)
            web_pod = cluster.get_pod("default", "web")
            tg.cancel_scope.cancel()

    web, huge = annotations["web"], annotations["huge"]
    assert web_pod is not None and web[SELECTED] == web_pod.spec.node_name == "worker-2"
    assert json.loads(web["kube-scheduler-simulator.sigs.k8s.io/bind-result"]) == {"DefaultBinder": "success"}
    assert json.loads(web[FILTER])["gpu-1"]["TaintToleration"] == TAINT_MSG
    assert huge[SELECTED] == ""
    assert json.loads(huge[FILTER])["small-1"]["NodeResourcesFit"] == "Insufficient cpu"
    assert len(json.loads(huge[HISTORY])) == 1
    # what kubectl get pod huge -o json prints is what explain reads
    view = explain("pod.json", "huge", text=json.dumps(huge_json))
    assert f"TaintToleration: {TAINT_MSG} — 1 node: gpu-1" in view


# --- the docs show real output ---------------------------------------------------------------------


def test_docs_show_real_explain_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/explain.md's views of a placed and a pending pod are what explain prints for
    examples/scenarios/explain.yaml."""
    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "explain.md").read_text()
    report = tmp_path / "result.json"
    report.write_text(_simulate(capsys, str(root / "examples" / "scenarios" / "explain.yaml"), "--explain"))
    for pod in ("web", "huge"):
        assert main(["explain", str(report), pod]) == 0
        view = capsys.readouterr().out
        assert f"$ .venv/bin/kubesched explain result.json {pod}\n{view}```" in doc
    web = json.loads(report.read_text())["pods"][0]
    assert f"```json\n{web['annotations'][FILTER]}\n```" in doc
