"""Simulated time: pods that finish, objects that change, the workload controllers,
the ``timeline`` and ``workloads`` of the JSON report, and their bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kubesched import cli

EXAMPLES = Path(__file__).parent.parent.parent / "examples" / "scenarios"


def docs(*items: str) -> str:
    return "\n---\n".join(items) + "\n"


def node(name: str, cpu: str = "4", *, annotations: str = "", spec: str = "") -> str:
    ann = f", annotations: {{{annotations}}}" if annotations else ""
    sp = f"\nspec: {{{spec}}}" if spec else ""
    return (
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}{ann}}}{sp}"
        f'\nstatus: {{allocatable: {{cpu: "{cpu}", memory: 32Gi, pods: "110"}}}}'
    )


def pod(name: str, cpu: str = "1", *, annotations: str = "", spec: str = "", image: str = "pause") -> str:
    ann = f", annotations: {{{annotations}}}" if annotations else ""
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}{ann}}}\nspec:\n{spec}"
        f'  containers: [{{name: c, image: {image}, resources: {{requests: {{cpu: "{cpu}"}}}}}}]'
    )


def job(name: str, cpu: str = "1", *, spec: str = "", annotations: str = "", duration: str = "10s") -> str:
    ann = f", annotations: {{{annotations}}}" if annotations else ""
    return (
        f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}{ann}}}\nspec:\n{spec}"
        f"  template:\n    metadata: {{annotations: {{kubesched.io/duration: {duration}}}}}\n"
        f"    spec:\n      restartPolicy: Never\n"
        f'      containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]'
    )


def deployment(name: str, replicas: int, cpu: str = "1", *, annotations: str = "") -> str:
    ann = f", annotations: {{{annotations}}}" if annotations else ""
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}{ann}}}\nspec:\n"
        f"  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n"
        f"  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n"
        f'      containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]'
    )


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["simulate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def report(capsys: pytest.CaptureFixture[str], text: str, *args: str, backend: str = "asyncio") -> dict[str, Any]:
    Path("in.yaml").write_text(text)
    code, out, err = run(capsys, "in.yaml", "--output", "json", "--backend", backend, *args)
    assert (code, err) == (0, ""), err
    result: dict[str, Any] = json.loads(out)
    return result


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in result["pods"]}


BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])


# --- pods that finish ------------------------------------------------------------------------


@BACKENDS
def test_a_finished_pod_frees_its_node_at_once(workdir: Path, capsys: pytest.CaptureFixture[str], backend: str) -> None:
    """NodeResourcesFit's hint on AssignedPodDelete: the waiting pod is scheduled at the instant
    the first one turns Succeeded (the informer sees a terminal pod leave), not at a flush."""
    text = docs(node("n1", "2"), pod("a", "2", annotations="kubesched.io/duration: 90s"), pod("b", "2"))
    result = report(capsys, text, backend=backend)
    a, b = by_name(result)["a"], by_name(result)["b"]
    assert (a["phase"], a["createdAt"], a["scheduledAt"], a["finishedAt"], a["owner"]) == ("Succeeded", 0.0, 0.0, 90.0, None)
    assert (b["phase"], b["nodeName"], b["scheduledAt"], b["finishedAt"]) == ("Running", "n1", 90.0, None)
    assert result["summary"]["succeeded"] == 1
    assert result["summary"]["scheduled"] == 2
    # the node counts only the running pod at the end
    assert result["nodes"][0]["allocated"] == {"cpu": 2000, "memory": 0, "pods": 1}
    assert result["timeline"] == [
        {"time": 0.0, "pending": 1, "running": 1, "allocated": {"cpu": 2000, "memory": 0, "pods": 1},
         "capacity": {"cpu": 2000, "memory": 32 * 2**30, "pods": 110}},
        {"time": 90.0, "pending": 0, "running": 1, "allocated": {"cpu": 2000, "memory": 0, "pods": 1},
         "capacity": {"cpu": 2000, "memory": 32 * 2**30, "pods": 110}},
    ]  # fmt: skip


def test_text_output_has_an_over_time_section(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("in.yaml").write_text(docs(node("n1", "2"), job("j", "2", spec="  parallelism: 2\n  completions: 2\n")))
    code, out, err = run(capsys, "in.yaml", "--output", "text")
    assert (code, err) == (0, "")
    section = out[out.index("Over time:") :]
    assert "peak pending: 1 (at 0s)" in section
    assert "mean allocation: cpu 100.0%" in section
    assert "Job default/j: completed at 20s (2 pods)" in section


# --- objects that change --------------------------------------------------------------------


@BACKENDS
def test_cordon_relabel_and_node_deletion(workdir: Path, capsys: pytest.CaptureFixture[str], backend: str) -> None:
    text = docs(
        node("n1"),
        node("n2", annotations="kubesched.io/deletion: 50s"),
        pod("early", "3"),
        pod("on-n2", "3", spec="  nodeName: n2\n"),
        node("n1", annotations="kubesched.io/arrival: 10s", spec="unschedulable: true"),
        pod("late", "2", annotations="kubesched.io/arrival: 20s"),
    )
    result = report(capsys, text, backend=backend)
    pods = by_name(result)
    assert pods["early"]["nodeName"] == "n1"
    # n1 is cordoned at 10s: the late pod waits, and at 50s n2 goes with its pod
    assert pods["late"]["nodeName"] is None
    late = [e["message"] for e in result["events"] if e["object"] == "default/late"]
    assert late[0] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )
    assert pods["late"]["conditions"][0]["message"] == (
        "0/1 nodes are available: 1 node(s) were unschedulable. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert pods["on-n2"]["deleted"] is True
    times = [t["time"] for t in result["timeline"]]
    assert times == [0.0, 10.0, 20.0, 50.0]
    caps = [t["capacity"]["cpu"] for t in result["timeline"]]
    assert caps == [8000, 4000, 4000, 0]
    # a cordoned node's pods count in neither allocated nor capacity
    assert [t["allocated"]["cpu"] for t in result["timeline"]] == [6000, 3000, 3000, 0]
    assert [t["running"] for t in result["timeline"]] == [2, 2, 2, 1]
    assert [t["pending"] for t in result["timeline"]] == [0, 0, 1, 1]
    assert [n["name"] for n in result["nodes"]] == ["n1"]


def test_a_pod_deleted_by_the_manifest_terminates_with_its_grace_period(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = docs(
        node("n1", "2"),
        pod("a", "2", annotations="kubesched.io/deletion: 60s", spec="  terminationGracePeriodSeconds: 15\n"),
        pod("b", "2"),
    )
    pods = by_name(report(capsys, text))
    assert pods["a"]["deleted"] is True
    assert pods["b"]["scheduledAt"] == 75.0  # 60s + the 15s grace period


# --- deletions: deletedAt, and what counts a pod only while it exists ---------------------------


@BACKENDS
def test_a_pod_deleted_at_10s_of_a_1000s_run_leaves_one_node_used(
    workdir: Path, capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    """Issue 38's example: two nodes with a pod each, one deleted at 10 s of a 1000 s run (the
    other runs for 1000 s).  Mean nodes used (2 · 10 + 1 · 990) / 1000 = 1.01, where counting the
    deleted pod to the end gave 2.00; the page and results.csv read the same metric."""
    from kubesched.reporting import compute

    text = docs(
        node("n1"),
        node("n2"),
        pod("a", spec="  nodeName: n1\n", annotations="kubesched.io/duration: 1000s"),
        pod("b", spec="  nodeName: n2\n", annotations="kubesched.io/deletion: 10s"),
    )
    result = report(capsys, text, backend=backend)
    a, b = by_name(result)["a"], by_name(result)["b"]
    assert (b["deleted"], b["deletedAt"]) == (True, 10.0)
    assert (a["deletedAt"], a["finishedAt"]) == (None, 1000.0)
    assert result["summary"]["virtualSeconds"] == 1000.0
    m = compute(result)
    assert 1.0 <= m.nodes_used_mean <= 1.05  # type: ignore[operator]
    assert m.nodes_used_mean == pytest.approx(1.01)
    assert (m.nodes_used_peak, m.nodes_used_series, m.open_ended) == (2, [2, 1, 0], 0)
    assert m.node_pods_mean == {"n1": 1.0, "n2": pytest.approx(0.01)}
    # allocation reads the timeline: b holds its cpu until it is gone (its 30 s grace period)
    assert [t["time"] for t in result["timeline"]] == [0.0, 40.0, 1000.0]
    assert m.allocation_mean["cpu"] == pytest.approx((2 * 40 + 1 * 960) / 1000 / 8)


@BACKENDS
def test_deleted_at_is_recorded_for_every_kind_of_deletion(
    workdir: Path, capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    """deletedAt is when the deletion began: a node's loss (the pod GC), a scale-down, a drain's
    eviction, a preemption (the victim's Preempted event) and kubesched.io/deletion."""
    drained = node("n3").replace("metadata: {name: n3,", "metadata: {name: n3, annotations: {kubesched.io/drain: 30s},")
    text = docs(
        node("n1", "2"),
        node("n2", annotations="kubesched.io/deletion: 20s"),
        drained,
        node("n4"),
        pod("lost", "4", spec="  nodeName: n2\n"),
        pod("drained", "4", spec="  nodeName: n3\n"),
        pod("victim", "2", spec="  nodeName: n1\n  priority: 0\n"),
        pod("preemptor", "2", spec="  nodeName: \"\"\n  priority: 100\n  nodeSelector: {kubernetes.io/hostname: n1}\n",
            annotations="kubesched.io/arrival: 40s"),
        deployment("web", 2),
        deployment("web", 1, annotations="kubesched.io/arrival: 50s"),
        pod("gone", annotations="kubesched.io/deletion: 60s"),
    )
    result = report(capsys, text, "--until", "5m", backend=backend)
    pods = by_name(result)
    assert pods["lost"]["deletedAt"] == 20.0
    assert pods["drained"]["deletedAt"] == 30.0
    preempted = [e for e in result["events"] if e["reason"] == "Preempted"]
    assert [e["object"] for e in preempted] == ["default/victim"]
    assert pods["victim"]["deletedAt"] == preempted[0]["time"] >= 40.0
    web = [p for p in result["pods"] if p["owner"]]
    assert [p["nodeName"] for p in web] == ["n4", "n4"]
    assert sorted(p["deletedAt"] or 0.0 for p in web) == [0.0, 50.0]
    assert pods["gone"]["deletedAt"] == 60.0
    assert pods["preemptor"]["deletedAt"] is None
    # every deleted pod has its deletedAt; the ones still there have none
    assert all((p["deletedAt"] is not None) >= p["deleted"] for p in result["pods"])


def test_a_pod_update_relabels_it_at_its_arrival(workdir: Path) -> None:
    from kubesched.scenario import load_manifests
    from kubesched.simulation import simulate
    from kubesched.transports.fake import virtual_time

    Path("in.yaml").write_text(docs(
        node("n1"),
        pod("a"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {tier: gold}, annotations: {kubesched.io/arrival: 30s}}\n"
        "spec:\n  containers: [{name: c, image: pause, resources: {requests: {cpu: \"1\"}}}]",
    ))  # fmt: skip

    async def main() -> Any:
        return await simulate(load_manifests(["in.yaml"]))

    result = virtual_time.run(main, backend="trio")
    [rec] = result.pods
    assert rec.pod.metadata.labels == {"tier": "gold"}
    assert rec.pod.spec.node_name == "n1" and rec.scheduled_at == 0.0  # the binding is kept
    assert [t["time"] for t in result.timeline] == [0.0]


# --- the controllers ------------------------------------------------------------------------


@BACKENDS
def test_indexed_job(workdir: Path, capsys: pytest.CaptureFixture[str], backend: str) -> None:
    text = docs(node("n1"), job("train", spec="  parallelism: 2\n  completions: 3\n  completionMode: Indexed\n"))
    result = report(capsys, text, backend=backend)
    names = [p["name"] for p in result["pods"]]
    assert [re.sub(r"-[a-z0-9]{5}$", "", n) for n in names] == ["train-0", "train-1", "train-2"]
    assert [p["finishedAt"] for p in result["pods"]] == [10.0, 10.0, 20.0]
    assert all(p["owner"] == "Job/default/train" and p["phase"] == "Succeeded" for p in result["pods"])
    assert result["workloads"] == [
        {"kind": "Job", "namespace": "default", "name": "train", "createdAt": 0.0, "completedAt": 20.0, "pods": 3}
    ]
    job_events = [(e["time"], e["reason"], e["message"]) for e in result["events"] if e["object"] == "default/train"]
    assert job_events == [
        (0.0, "SuccessfulCreate", f"Created pod: {names[0]}"),
        (0.0, "SuccessfulCreate", f"Created pod: {names[1]}"),
        (10.0, "SuccessfulCreate", f"Created pod: {names[2]}"),
        (20.0, "Completed", "Job completed"),
    ]


def test_indexed_job_pods_carry_index_and_hostname() -> None:
    import anyio

    from kubesched.api._objects import Job, convert
    from kubesched.transports.fake import FakeCluster

    async def main() -> list[Any]:
        async with FakeCluster(seed=3) as c:
            c.create(convert({"metadata": {"name": "j"}, "spec": {
                "parallelism": 2, "completions": 2, "completionMode": "Indexed",
                "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}, Job))  # fmt: skip
            return c.pods()

    pods = anyio.run(main)
    assert [p.metadata.annotations["batch.kubernetes.io/job-completion-index"] for p in pods] == ["0", "1"]
    assert [p.spec.hostname for p in pods] == ["j-0", "j-1"]
    assert all(p.metadata.labels["batch.kubernetes.io/job-name"] == "j" for p in pods)
    assert all(p.metadata.owner_references[0].controller for p in pods)


@BACKENDS
def test_a_preempted_job_pod_is_replaced(workdir: Path, capsys: pytest.CaptureFixture[str], backend: str) -> None:
    pcs = (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 1",
    )
    text = docs(
        *pcs,
        node("n1", "2"),
        job("batch", "2", duration="100s", spec="  backoffLimit: 3\n").replace(
            "restartPolicy: Never", "restartPolicy: Never\n      priorityClassName: low"
        ),
        pod("urgent", "2", annotations="kubesched.io/arrival: 10s, kubesched.io/duration: 50s",
            spec="  priorityClassName: high\n"),
    )  # fmt: skip
    result = report(capsys, text, backend=backend)
    job_pods = [p for p in result["pods"] if p["owner"] == "Job/default/batch"]
    assert len(job_pods) == 2
    first, second = job_pods
    assert first["deleted"] and first["finishedAt"] is None
    assert second["createdAt"] == 10.0  # replaced as soon as it was terminating
    # the victim's 30s grace period, then urgent's 50s
    assert second["scheduledAt"] == 90.0 and second["finishedAt"] == 190.0
    assert result["summary"]["preemptions"] == 1
    assert result["workloads"][0]["completedAt"] == 190.0


def test_backoff_limit_fails_the_job(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = docs(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000",
        node("n1", "2"),
        job("batch", "2", duration="100s", spec="  backoffLimit: 0\n"),
        pod("urgent", "2", annotations="kubesched.io/arrival: 10s", spec="  priorityClassName: high\n"),
    )
    result = report(capsys, text)
    assert len([p for p in result["pods"] if p["owner"]]) == 1
    failed = [e for e in result["events"] if e["reason"] == "BackoffLimitExceeded"]
    assert failed == [{"time": 10.0, "type": "Warning", "reason": "BackoffLimitExceeded", "object": "default/batch",
                       "message": "Job has reached the specified backoff limit"}]  # fmt: skip
    assert result["workloads"][0]["completedAt"] is None


@BACKENDS
def test_deployment_keeps_its_replicas(workdir: Path, capsys: pytest.CaptureFixture[str], backend: str) -> None:
    text = docs(
        node("n1", "2"),
        node("n2", "2", annotations="kubesched.io/deletion: 30s"),
        node("n3", "2", annotations="kubesched.io/arrival: 60s"),
        deployment("web", 3),
        deployment("web", 4, annotations="kubesched.io/arrival: 90s"),
    )
    result = report(capsys, text, backend=backend)
    rs = result["workloads"][1]["name"]
    assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{6,10}", rs)
    assert [(w["kind"], w["name"], w["pods"]) for w in result["workloads"]] == [
        ("Deployment", "web", 6), ("ReplicaSet", rs, 6)
    ]  # fmt: skip
    live = [p for p in result["pods"] if not p["deleted"]]
    assert len(live) == 4 and all(p["nodeName"] for p in live)
    assert all(re.fullmatch(rf"{rs}-[a-z0-9]{{5}}", p["name"]) and p["owner"] == f"ReplicaSet/default/{rs}"
               for p in result["pods"])  # fmt: skip
    scaling = [e["message"] for e in result["events"] if e["reason"] == "ScalingReplicaSet"]
    assert scaling == [f"Scaled up replica set {rs} to 3", f"Scaled up replica set {rs} to 4 from 3"]
    # n2's pods went with it at 30s and were replaced; they waited for n3
    replaced = [p["scheduledAt"] for p in result["pods"] if p["createdAt"] == 30.0]
    assert replaced == [30.0, 60.0]  # one fits on n1 at once, one waits for n3


def test_names_follow_the_seed(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = docs(node("n1"), deployment("web", 2))
    a = [p["name"] for p in report(capsys, text, "--seed", "1")["pods"]]
    b = [p["name"] for p in report(capsys, text, "--seed", "1", backend="trio")["pods"]]
    c = [p["name"] for p in report(capsys, text, "--seed", "2")["pods"]]
    assert a == b and a != c


def test_the_day_example_is_the_same_on_both_backends(capsys: pytest.CaptureFixture[str]) -> None:
    outs = []
    for backend in ("asyncio", "trio"):
        code, out, err = run(capsys, str(EXAMPLES / "day.yaml"), "--until", "24h", "--output", "json", "--backend", backend)
        assert (code, err) == (0, "")
        outs.append(out)
    assert outs[0] == outs[1]
    result = json.loads(outs[0])
    kinds = [(w["kind"], w["name"]) for w in result["workloads"]]
    assert ("Job", "etl") in kinds and ("Deployment", "web") in kinds
    assert result["summary"]["preemptions"] >= 1
    assert result["summary"]["succeeded"] > 0


# --- bad input ------------------------------------------------------------------------------

BAD = [
    pytest.param(
        docs(node("n1"), pod("p", annotations="kubesched.io/duration: soon")),
        'in.yaml: document 2 (Pod p), metadata.annotations[kubesched.io/duration]: time: invalid duration "soon"',
        id="bad duration",
    ),
    pytest.param(
        docs(node("n1"), job("j", duration="-5s")),
        "in.yaml: document 2 (Job j), spec.template, metadata.annotations[kubesched.io/duration]: "
        'Invalid value: "-5s": must not be negative',
        id="negative template duration",
    ),
    pytest.param(
        docs(node("n1"), pod("p", annotations="kubesched.io/arrival: 1m, kubesched.io/deletion: 30s")),
        "in.yaml: document 2 (Pod p), metadata.annotations[kubesched.io/deletion]: "
        'Invalid value: "30s": must be later than the arrival (60s)',
        id="deletion before arrival",
    ),
    pytest.param(
        docs(node("n1"), "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: 2}"),
        "in.yaml: document 2 (Job j), spec.template.spec.containers: Required value",
        id="job without template",
    ),
    pytest.param(
        docs(node("n1"), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
             "    spec: {containers: [{name: c, image: x}]}"),
        "in.yaml: document 2 (Deployment d), spec.selector: Required value",
        id="deployment without selector",
    ),
    pytest.param(
        docs(node("n1"), pod("p"), pod("p", image="other", annotations="kubesched.io/arrival: 1m")),
        "in.yaml: document 3 (Pod p), spec.containers: Forbidden: pod updates may not change fields "
        "other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
        "`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
        "(allow it to be set to 1 if it was previously negative)",
        id="immutable pod field",
    ),
    pytest.param(
        docs(node("n1"), job("j"), job("j", cpu="2", annotations="kubesched.io/arrival: 1m")),
        "in.yaml: document 3 (Job j), spec.template: Invalid value: field is immutable",
        id="immutable job template",
    ),
]


@pytest.mark.parametrize(("text", "line"), BAD)
def test_bad_input_is_one_line_and_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str], text: str, line: str) -> None:
    Path("in.yaml").write_text(text)
    code, out, err = run(capsys, "in.yaml")
    assert (code, out) == (2, "")
    assert err == f"kubesched: error: {line}\n"
