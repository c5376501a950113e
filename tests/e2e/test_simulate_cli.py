"""``kubesched simulate``: its input and output contract (README, docs/results.md), end to end through the command line.

Bad input: exit code 2 and one line on stderr naming the file, the document and the field.
Good input: the JSON report's fields and types, the same bytes on asyncio and trio, ``--until``,
``--report``, ``--output text``, and what the manifests mean (nodeName pods, uids, priorities,
arrivals, PDB status).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubesched import cli
from kubesched._errors import ConfigError
from kubesched.api._durations import parse_duration
from kubesched.api._objects import PodDisruptionBudget
from kubesched.config._config import SchedulerConfig
from kubesched.scenario import load_manifests
from kubesched.simulation import simulate
from kubesched.transports.fake import FakeCluster, virtual_time

# --- manifests, small builders --------------------------------------------------------------


def node(name: str, cpu: str = "4", *, arrival: str = "", taint: str = "", pods: str = "110") -> str:
    ann = f", annotations: {{kubesched.io/arrival: {arrival}}}" if arrival else ""
    spec = f"\nspec:\n  taints: [{{key: {taint}, value: x, effect: NoSchedule}}]" if taint else ""
    return (
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}{ann}}}"
        f'{spec}\nstatus: {{allocatable: {{cpu: "{cpu}", memory: 32Gi, pods: "{pods}"}}}}'
    )


def pod(name: str, cpu: str = "1", *, arrival: str = "", extra_meta: str = "", spec: str = "", status: str = "") -> str:
    meta = f"name: {name}"
    if arrival:
        meta += f", annotations: {{kubesched.io/arrival: {arrival}}}"
    if extra_meta:
        meta += f", {extra_meta}"
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{{meta}}}\nspec:\n"
    if spec:
        text += "".join(f"  {line}\n" for line in spec.strip().splitlines())
    text += f'  containers: [{{name: c, image: pause, resources: {{requests: {{cpu: "{cpu}"}}}}}}]'
    if status:
        text += f"\nstatus: {status}"
    return text


def priority_class(name: str, value: int, *, global_default: bool = False) -> str:
    gd = "\nglobalDefault: true" if global_default else ""
    return f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}{gd}"


def docs(*items: str) -> str:
    return "\n---\n".join(items) + "\n"


def scenario() -> str:
    """4 nodes (one tainted) at t=0, a 16-cpu node at 60s; 29 pods, some arriving later."""
    items = [priority_class("standard", 100, global_default=True)]
    items += [node(f"n{i}", taint="dedicated" if i == 4 else "") for i in range(1, 5)]
    items.append(node("n5", "16", arrival="60s"))
    items.append(pod("pinned", "2", extra_meta="uid: 11111111-2222-3333-4444-555555555555", spec="nodeName: n1",
                     status='{phase: Running, startTime: "2024-05-01T10:00:00Z"}'))  # fmt: skip
    items += [pod(f"web-{i:02d}", ["500m", "1", "1500m", "250m"][i % 4]) for i in range(20)]
    items += [pod(f"late-{i}", "1", arrival=t) for i, t in enumerate(["10s", "30s", "90s", "2m"])]
    items += [pod(f"big-{i}", "6") for i in range(2)]
    items.append(pod("tolerant", "1", spec="tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]"))
    items.append(pod("huge", "100"))
    return docs(*items)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in a temporary directory so that error lines name files as the user typed them."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def simulate_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["simulate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def report(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = simulate_cli(capsys, *args)
    assert (code, err) == (0, ""), err
    result: dict[str, Any] = json.loads(out)
    return result


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in result["pods"]}


# --- bad input: exit 2, one line -------------------------------------------------------------

GOOD_POD = pod("ok")
BAD_CONFIG_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

BAD_INPUT_CASES = [
    pytest.param(
        {"in.yaml": docs(node("n1"), "apiVersion: v1\nkind: Pod\nmetadata: {name: p\n")}, [],
        "in.yaml: document 2: malformed YAML at line 10 column 1: expected ',' or '}', but got '<stream end>'",
        id="malformed YAML",
    ),
    pytest.param(
        {"in.json": '{"apiVersion": "v1", "kind": "Node",'}, [],
        "in.json: invalid JSON at line 1 column 37: Expecting property name enclosed in double quotes",
        id="malformed JSON",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD, "apiVersion: v1\nkind: Service\nmetadata: {name: s}")}, [],
        'in.yaml: document 2, kind: unknown kind "v1/Service" (supported: apps/v1/Deployment, apps/v1/ReplicaSet, '
        "apps/v1/StatefulSet, batch/v1/Job, policy/v1/PodDisruptionBudget, resource.k8s.io/v1/DeviceClass, "
        "resource.k8s.io/v1/ResourceClaim, resource.k8s.io/v1/ResourceClaimTemplate, resource.k8s.io/v1/ResourceSlice, "
        "resource.k8s.io/v1alpha3/DeviceTaintRule, resource.k8s.io/v1beta2/DeviceTaintRule, scheduling.k8s.io/v1/PriorityClass, "
        "scheduling.k8s.io/v1alpha1/Workload, scheduling.k8s.io/v1alpha2/PodGroup, scheduling.k8s.io/v1alpha2/Workload, "
        "scheduling.x-k8s.io/v1alpha1/PodGroup, storage.k8s.io/v1/CSIDriver, storage.k8s.io/v1/CSINode, "
        "storage.k8s.io/v1/CSIStorageCapacity, storage.k8s.io/v1/StorageClass, v1/Node, v1/PersistentVolume, "
        "v1/PersistentVolumeClaim, v1/Pod)",
        id="unknown kind",
    ),
    pytest.param(
        {"in.yaml": docs("apiVersion: v1\nkind: [Pod]\nmetadata: {name: s}")}, [],
        "in.yaml: document 1, kind: Invalid value: ['Pod']: must be a string",
        id="kind not a string",
    ),
    pytest.param(
        {"in.yaml": docs(pod("p", "abc"))}, [],
        "in.yaml: document 1 (Pod p), spec.containers[0].resources.requests.cpu: quantities must match the regular "
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': 'abc'",
        id="bad quantity",
    ),
    pytest.param(
        {"in.yaml": docs(node("n1"), pod("p", spec="priorityClassName: gold"))}, [],
        "in.yaml: document 2 (Pod p), spec.priorityClassName: no PriorityClass with name gold was found",
        id="unknown priorityClassName",
    ),
    pytest.param(
        {"in.yaml": docs(pod("p", spec="priorityClassName: gold"),
                         "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                         "metadata: {name: gold, annotations: {kubesched.io/arrival: 1m}}\nvalue: 5")}, [],
        "in.yaml: document 1 (Pod p), spec.priorityClassName: no PriorityClass with name gold was found "
        "(it arrives later, at 60s)",
        id="PriorityClass arriving after its pod",
    ),
    pytest.param(
        {"in.yaml": docs(priority_class("a", 1, global_default=True), priority_class("b", 2, global_default=True))},
        [],
        "in.yaml: document 2 (PriorityClass b), globalDefault: Forbidden: PriorityClass a is already marked as "
        "default. Only one default can exist",
        id="two globalDefault PriorityClasses",
    ),
    pytest.param(
        {"in.yaml": docs(pod("p", arrival="soon"))}, [],
        'in.yaml: document 1 (Pod p), metadata.annotations[kubesched.io/arrival]: time: invalid duration "soon"',
        id="bad arrival",
    ),
    pytest.param(
        {"in.yaml": docs(pod("p", arrival="90"))}, [],
        "in.yaml: document 1 (Pod p), metadata.annotations[kubesched.io/arrival]: Expected `str`, got `int`",
        id="arrival not a string",
    ),
    pytest.param(
        {"in.yaml": docs(pod("p", spec="priority: high"))}, [],
        "in.yaml: document 1 (Pod p), spec.priority: json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type int32",
        id="msgspec type error",
    ),
    pytest.param(
        {"in.yaml": docs(pod("p", extra_meta="labels: {app: web, tier: 3}"))}, [],
        "in.yaml: document 1 (Pod p), metadata.labels[tier]: Expected `str`, got `int`",
        id="label value not a string",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD, "- a\n- b")}, [],
        "in.yaml: document 2: a document must be a mapping (a Kubernetes object)",
        id="non-mapping document",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD, GOOD_POD)}, [],
        "in.yaml: document 2 (Pod ok), metadata.name: already defined in in.yaml: document 1 (Pod ok) "
        "(a later document replaces it only with a later kubesched.io/arrival)",
        id="duplicate object",
    ),
    pytest.param(
        {"in.yaml": docs("apiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\nspec: {}")}, [],
        "in.yaml: document 1 (Pod), metadata.name: Required value: name or generateName is required",
        id="no name",
    ),
    pytest.param(
        {"in.yaml": docs(pod("p", arrival="-5s"))}, [],
        'in.yaml: document 1 (Pod p), metadata.annotations[kubesched.io/arrival]: Invalid value: "-5s": '
        "must not be negative",
        id="negative arrival",
    ),
    pytest.param(
        {"in.yaml": docs(pod("p", "-1"))}, [],
        'in.yaml: document 1 (Pod p), spec.containers[0].resources.requests.cpu: Invalid value: "-1": '
        "must be greater than or equal to 0",
        id="negative quantity",
    ),
    pytest.param(
        {"in.yaml": docs(node("n1").replace("kind: Node", "kind: Node\nspec:\n  taints: [{key: a, effect: Often}]"))},
        [],
        'in.yaml: document 1 (Node n1), spec.taints[0].effect: Unsupported value: "Often": supported values: '
        '"NoExecute", "NoSchedule", "PreferNoSchedule"',
        id="bad taint effect",
    ),
    pytest.param(
        {"in.yaml": docs(pod("p", spec="tolerations: [{key: a, operator: Maybe}]"))}, [],
        'in.yaml: document 1 (Pod p), spec.tolerations[0].operator: Unsupported value: "Maybe": supported values: '
        '"Equal", "Exists"',
        id="bad toleration operator",
    ),
    pytest.param(
        {"in.yaml": docs(pod("p", spec="affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                                       "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Is, values: [x]}]}]}}}"))},
        [],
        "in.yaml: document 1 (Pod p), spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Is": supported values: '
        '"DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"',
        id="bad node affinity operator",
    ),
    pytest.param(
        {"in.yaml": docs("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n"
                         "spec: {minAvailable: 1, selector: {matchExpressions: [{key: a, operator: In}]}}")}, [],
        "in.yaml: document 1 (PodDisruptionBudget b), spec.selector.matchExpressions[0].values: Required value: "
        "must be specified when `operator` is 'In' or 'NotIn'",
        id="PDB selector without values",
    ),
    pytest.param({}, [], "missing.yaml: cannot read: No such file or directory", id="missing file"),
    pytest.param(
        {"in.yaml": docs(GOOD_POD)}, ["--config", "nope.yaml"], "nope.yaml: cannot read: No such file or directory",
        id="missing config file",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD), "cfg.yaml": BAD_CONFIG_HEAD + "parallelism: 0\n"}, ["--config", "cfg.yaml"],
        "cfg.yaml, parallelism: Invalid value: 0: should be an integer value greater than zero",
        id="invalid config file",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD),
         "cfg.yaml": BAD_CONFIG_HEAD + "profiles:\n- plugins:\n    filter:\n      enabled: [{name: Nope}]\n"},
        ["--config", "cfg.yaml"],
        'cfg.yaml, profiles[0].plugins.filter.enabled[0].name: Invalid value: "Nope": plugin "Nope" does not exist',
        id="config with an unknown plugin",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD),
         "cfg.yaml": BAD_CONFIG_HEAD + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                                       "      scoringStrategy:\n        type: MostAllocated\n        resources: [{name: cpu, weight: 200}]\n"},
        ["--config", "cfg.yaml"],
        "cfg.yaml, profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 200: "
        "resource weight of cpu not in valid range (0, 100]",
        id="config with bad plugin args",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD),
         "cfg.yaml": BAD_CONFIG_HEAD + "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: '*'}]\n"},
        ["--config", "cfg.yaml"],
        'cfg.yaml, profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0',
        id="config without a queueSort plugin",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD),
         "cfg.yaml": BAD_CONFIG_HEAD + "extenders:\n- {urlPrefix: 'http://127.0.0.1:9', filterVerb: filter, weight: 1}\n"},
        ["--config", "cfg.yaml"],
        "cfg.yaml, extenders: HTTP extenders need real time and are not supported by simulate (use kubesched run)",
        id="config with extenders (real time only)",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD), "cfg.yaml": BAD_CONFIG_HEAD.replace("/v1", "/v1beta3")}, ["--config", "cfg.yaml"],
        'cfg.yaml, apiVersion: no kind "KubeSchedulerConfiguration" is registered for version '
        '"kubescheduler.config.k8s.io/v1beta3"',
        id="config of another apiVersion",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD)}, ["--until", "forever"], '--until: time: invalid duration "forever"',
        id="bad --until",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD)}, ["--until=-1m"], '--until: Invalid value: "-1m": must not be negative',
        id="negative --until",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD)}, ["--feature-gates", "SchedulerAsyncPreemption=maybe"],
        '--feature-gates: invalid value of SchedulerAsyncPreemption=maybe, err: strconv.ParseBool: parsing "maybe": '
        "invalid syntax",
        id="bad --feature-gates",
    ),
    pytest.param(
        {"in.yaml": docs(GOOD_POD)}, ["--report", "no/such/dir/r.json"],
        "no/such/dir/r.json: cannot write the report: No such file or directory",
        id="unwritable --report",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("files", "extra", "line"), BAD_INPUT_CASES)
def test_bad_input_is_one_line_and_exit_2(
    workdir: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], extra: list[str], line: str
) -> None:
    for name, text in files.items():
        (workdir / name).write_text(text)
    inputs = [n for n in files if n.startswith("in.")] or ["missing.yaml"]
    code, out, err = simulate_cli(capsys, *inputs, *extra)
    assert (code, out) == (2, "")
    assert err == f"kubesched: error: {line}\n"


def test_non_utf8_file(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_bytes(b"apiVersion: v1\nkind: Pod\nmetadata: {name: \xff}\n")
    code, _, err = simulate_cli(capsys, "in.yaml")
    assert (code, err) == (2, "kubesched: error: in.yaml: cannot read: not UTF-8 text (byte 42)\n")


def test_bad_input_from_a_real_process_has_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "in.yaml").write_text(docs(node("n1"), pod("p", "abc")))
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched.cli", "simulate", "in.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("kubesched: error: in.yaml: document 2 (Pod p), spec.containers[0].resources.requests.cpu:")


# --- the JSON contract ----------------------------------------------------------------------------


def test_json_output_contract(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(docs(node("n1", "2"), pod("p1", "1", spec="priority: 100"), pod("p2", "5")))
    result = report(capsys, "in.yaml")
    assert list(result) == ["pods", "events", "summary", "nodes", "timeline", "workloads"]
    for p in result["pods"]:
        assert list(p) == ["namespace", "name", "uid", "priority", "nodeName", "phase", "deleted",
                           "nominatedNodeName", "conditions", "createdAt", "scheduledAt", "finishedAt",
                           "deletedAt", "owner", "attempts", "waitingOnPermit", "schedulerName", "noProfile"]  # fmt: skip
        assert isinstance(p["namespace"], str) and isinstance(p["name"], str) and isinstance(p["uid"], str)
        assert p["uid"]
        assert type(p["priority"]) is int
        assert p["nodeName"] is None or isinstance(p["nodeName"], str)
        assert p["phase"] in ("Pending", "Running")
        assert type(p["deleted"]) is bool
        assert p["nominatedNodeName"] is None or isinstance(p["nominatedNodeName"], str)
        assert type(p["attempts"]) is int and p["attempts"] >= 1  # every pod here was attempted
        assert p["waitingOnPermit"] is None
        assert (p["schedulerName"], p["noProfile"]) == ("default-scheduler", False)
        for c in p["conditions"]:
            assert list(c) == ["type", "status", "reason", "message"]
            assert all(isinstance(v, str) for v in c.values())
    assert p["deletedAt"] is None
    for e in result["events"]:
        assert list(e) in (["time", "type", "reason", "object", "message"],
                           ["time", "type", "reason", "object", "message", "series"])  # fmt: skip
        if "series" in e:  # isomorphic events folded: every occurrence counted, the last one's time
            assert list(e["series"]) == ["count", "lastObservedTime"]
            assert type(e["series"]["count"]) is int and e["series"]["count"] >= 2
            assert type(e["series"]["lastObservedTime"]) is float and e["series"]["lastObservedTime"] > e["time"]
        assert type(e["time"]) is float
        assert e["type"] in ("Normal", "Warning")
    assert list(result["summary"]) == ["pods", "scheduled", "pending", "deleted", "preemptions", "attempts",
                                       "virtualSeconds", "succeeded", "cutShort", "noProfile", "emulatedVersion"]  # fmt: skip
    assert all(type(v) is int for k, v in result["summary"].items() if k not in ("virtualSeconds", "cutShort", "emulatedVersion"))
    assert result["summary"]["emulatedVersion"] == "1.36"
    assert result["summary"]["cutShort"] is None  # the run ended by itself
    assert type(result["summary"]["virtualSeconds"]) is float
    # nodes: in input order, capacity (allocatable) and what the bound pods request at the end
    assert result["nodes"] == [
        {"name": "n1", "capacity": {"cpu": 2000, "memory": 32 * 2**30, "pods": 110},
         "allocated": {"cpu": 1000, "memory": 0, "pods": 1}},
    ]

    p1, p2 = result["pods"]
    assert (p1["namespace"], p1["name"], p1["priority"], p1["nodeName"], p1["phase"], p1["deleted"]) == (
        "default", "p1", 100, "n1", "Running", False
    )  # fmt: skip
    assert p1["conditions"] == [{"type": "PodScheduled", "status": "True", "reason": "", "message": ""}]
    assert (p2["nodeName"], p2["phase"], p2["nominatedNodeName"]) == (None, "Pending", None)
    [cond] = p2["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("PodScheduled", "False", "Unschedulable")
    assert cond["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
        "available: 1 No preemption victims found for incoming pod."
    )
    assert result["events"][0] == {"time": 0.0, "type": "Normal", "reason": "Scheduled", "object": "default/p1",
                                   "message": "Successfully assigned default/p1 to n1"}  # fmt: skip
    failed = [e for e in result["events"] if e["reason"] == "FailedScheduling"]
    assert failed and all(e["object"] == "default/p2" and e["message"] == cond["message"] for e in failed)
    assert result["summary"] == {"pods": 2, "scheduled": 1, "pending": 1, "deleted": 0, "preemptions": 0,
                                 "attempts": result["summary"]["attempts"], "virtualSeconds": 0.0, "succeeded": 0,
                                 "cutShort": None, "noProfile": 0, "emulatedVersion": "1.36"}  # fmt: skip
    assert result["summary"]["attempts"] >= 2


def test_nodes_section_counts_bound_pods_and_extended_resources(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gpu_node = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: g1}\n"
        'status: {allocatable: {cpu: "8", memory: 16Gi, pods: "10", nvidia.com/gpu: "4"}}'
    )
    gpu_pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n"
        '  containers: [{name: c, image: x, resources: {requests: {cpu: 1500m, memory: 1Gi}, limits: {nvidia.com/gpu: "2"}}}]'
    )
    (workdir / "in.yaml").write_text(docs(node("n2", "2", arrival="5s"), gpu_node, gpu_pod, pod("p1", "500m"),
                                          pod("big", "64")))
    result = report(capsys, "in.yaml")
    assert [n["name"] for n in result["nodes"]] == ["n2", "g1"]  # input order, not arrival order
    n2, g1 = result["nodes"]
    assert g1["capacity"] == {"cpu": 8000, "memory": 16 * 2**30, "pods": 10, "nvidia.com/gpu": 4}
    assert g1["allocated"]["nvidia.com/gpu"] == 2 and g1["allocated"]["pods"] >= 1
    assert list(n2["capacity"]) == list(n2["allocated"]) == ["cpu", "memory", "pods"]  # no gpu there
    total = sum(n["allocated"]["cpu"] for n in result["nodes"])
    assert total == 2000  # train and p1; big fits nowhere and counts nowhere
    assert sum(n["allocated"]["pods"] for n in result["nodes"]) == 2


def test_json_input_and_list_kind(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1", "pods": "10"}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}},
    ]
    (workdir / "in.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    assert by_name(report(capsys, "in.json"))["p"]["nodeName"] == "n1"


# --- determinism, arrivals, --until ----------------------------------------------------------------


def test_same_output_on_asyncio_and_trio(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(scenario())
    outs = {}
    for backend in ("asyncio", "trio"):
        code, out, err = simulate_cli(capsys, "in.yaml", "--backend", backend, "--seed", "7")
        assert (code, err) == (0, "")
        outs[backend] = out
    assert outs["asyncio"] == outs["trio"]
    result = json.loads(outs["trio"])
    pods = by_name(result)
    assert len(pods) == 29
    # the late node takes pods only from its arrival on
    scheduled_at = {e["object"]: e["time"] for e in result["events"] if e["reason"] == "Scheduled"}
    on_n5 = [n for n, p in pods.items() if p["nodeName"] == "n5"]
    assert on_n5 and all(scheduled_at[f"default/{n}"] >= 60.0 for n in on_n5)
    assert pods["big-0"]["nodeName"] == "n5" or pods["big-1"]["nodeName"] == "n5"
    assert pods["tolerant"]["nodeName"] is not None
    assert pods["huge"]["nodeName"] is None
    # later arrivals are scheduled no earlier than they arrive
    assert scheduled_at.get("default/late-2", 90.0) >= 90.0
    assert not any(e["object"] == "default/late-3" and e["time"] < 120.0 for e in result["events"])
    # no node holds more cpu than it has (the pinned pod counts on n1 from t=0)
    cpu = {"pinned": 2.0, "huge": 100.0, "tolerant": 1.0}
    cpu |= {f"web-{i:02d}": [0.5, 1.0, 1.5, 0.25][i % 4] for i in range(20)}
    cpu |= {f"late-{i}": 1.0 for i in range(4)} | {"big-0": 6.0, "big-1": 6.0}
    load: dict[str, float] = {}
    for n, p in pods.items():
        if p["nodeName"]:
            load[p["nodeName"]] = load.get(p["nodeName"], 0.0) + cpu[n]
    assert all(v <= (16 if n == "n5" else 4) for n, v in load.items()), load
    assert result["summary"]["virtualSeconds"] == 120.0
    assert [e["time"] for e in result["events"]] == sorted(e["time"] for e in result["events"])


def test_until_stops_early(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(
        docs(node("n1"), node("n2", "8", arrival="10m"), pod("now"), pod("later", arrival="10m"), pod("big", "6"))
    )
    full = report(capsys, "in.yaml")
    assert by_name(full)["later"]["nodeName"] is not None
    assert by_name(full)["big"]["nodeName"] == "n2"
    assert full["summary"]["virtualSeconds"] == 600.0

    assert full["summary"]["cutShort"] is None
    code, out, err = simulate_cli(capsys, "in.yaml", "--until", "5m")
    # a run cut with arrivals still to come says so, on stderr and in the summary
    assert (code, err) == (
        0, "kubesched: warning: stopped at --until (300s of virtual time) with 2 arrival(s) still to come\n"
    )
    early = json.loads(out)
    assert early["summary"]["cutShort"] == {
        "reason": "until", "at": 300.0, "arrivals": 2, "deletions": 0, "terminations": 0,
        "completions": 0, "scheduling": 0, "waitingOnPermit": 0,
    }
    assert [p["name"] for p in early["pods"]] == ["now", "big"]  # "later" never arrived
    assert by_name(early)["big"]["nodeName"] is None
    assert early["summary"]["virtualSeconds"] <= 300.0
    assert all(e["time"] <= 300.0 for e in early["events"])


def test_report_file(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(docs(node("n1"), pod("p")))
    code, out, _ = simulate_cli(capsys, "in.yaml", "--report", "r.json")
    assert code == 0
    assert (workdir / "r.json").read_text() == out
    code, text, _ = simulate_cli(capsys, "in.yaml", "--report", "r2.json", "--output", "text")
    assert code == 0
    assert (workdir / "r2.json").read_text() == out  # the report is always JSON
    assert text != out


def test_text_output(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(docs(node("n1", "2"), pod("fits", "1"), pod("too-big", "3")))
    result = report(capsys, "in.yaml")
    code, text, err = simulate_cli(capsys, "in.yaml", "--output", "text")
    assert (code, err) == (0, "")
    lines = text.splitlines()
    assert lines[0].split() == ["POD", "PRIORITY", "PLACEMENT"]
    assert lines[1].split() == ["default/fits", "0", "→", "n1"]
    assert lines[2].split() == ["default/too-big", "0", "Pending"]
    why = lines.index("Why pending:")
    failed = next(e for e in result["events"] if e["reason"] == "FailedScheduling")
    assert lines[why + 1] == f"  default/too-big: {failed['message']}"
    # too-big asks for more cpu (3) than n1 has at all (2): Unschedulable (v1.33.3 fit.go, as
    # issue 34 expects at 1.36), and no pod of lower priority to evict.  FitError.Error() (upstream
    # pkg/scheduler/framework/types.go, v1.28+) appends DefaultPreemption's message, a FitError
    # text ending in ".", with " %v": one period.
    assert failed["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
        "available: 1 No preemption victims found for incoming pod."
    )
    assert lines[-1].startswith("2 pods: 1 scheduled, 1 pending, 0 deleted;")


# --- what the manifests mean ------------------------------------------------------------------------


def test_node_name_pod_runs_from_creation(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(
        docs(node("n1", "2"), node("n2", "2"),
             pod("pinned", "2", spec="nodeName: n1", status='{startTime: "2024-05-01T10:00:00Z"}'),
             pod("free", "2"))
    )  # fmt: skip
    result = report(capsys, "in.yaml")
    pods = by_name(result)
    assert (pods["pinned"]["nodeName"], pods["pinned"]["phase"]) == ("n1", "Running")
    assert pods["pinned"]["conditions"][0]["type"] == "PodScheduled"
    assert pods["free"]["nodeName"] == "n2"  # n1 is full with the pinned pod
    assert all(e["object"] != "default/pinned" for e in result["events"])  # never scheduled
    assert result["summary"]["attempts"] == 1

    @functools.partial(virtual_time.run, backend="trio")
    async def sim() -> Any:
        return await simulate(load_manifests(["in.yaml"]), SchedulerConfig())

    [pinned, free] = [r.pod for r in sim.pods]
    assert pinned.status.start_time == "2024-05-01T10:00:00Z"
    assert free.status.start_time is not None and free.status.start_time != pinned.status.start_time


def test_uids(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(docs(node("n1"), pod("mine", extra_meta="uid: my-uid"), pod("derived")))
    first = by_name(report(capsys, "in.yaml", "--backend", "trio"))
    again = by_name(report(capsys, "in.yaml", "--backend", "asyncio", "--seed", "3"))
    assert first["mine"]["uid"] == "my-uid"
    assert first["derived"]["uid"] and first["derived"]["uid"] == again["derived"]["uid"]
    assert first["derived"]["uid"] != first["mine"]["uid"]


def test_priorities(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(
        docs(priority_class("standard", 50, global_default=True), priority_class("gold", 1000), node("n1", "8"),
             pod("defaulted"), pod("classed", spec="priorityClassName: gold"), pod("explicit", spec="priority: 7"),
             pod("system", spec="priorityClassName: system-node-critical"))
    )  # fmt: skip
    pods = by_name(report(capsys, "in.yaml"))
    assert {n: p["priority"] for n, p in pods.items()} == {
        "defaulted": 50, "classed": 1000, "explicit": 7, "system": 2000001000
    }  # fmt: skip


def test_no_global_default_means_priority_zero(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(docs(priority_class("gold", 1000), node("n1"), pod("p")))
    assert by_name(report(capsys, "in.yaml"))["p"]["priority"] == 0


PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}"""


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_pdb_status_from_the_manifest_is_kept(workdir: Path, backend: str) -> None:
    (workdir / "in.yaml").write_text(
        docs(node("n1"),
             pod("w1", spec="nodeName: n1", extra_meta="labels: {app: web}", status="{phase: Running}"),
             pod("w2", spec="nodeName: n1", extra_meta="labels: {app: web}", status="{phase: Running}"),
             PDB.replace("web}", "given}") + "\nstatus: {disruptionsAllowed: 0, currentHealthy: 9, desiredHealthy: 9, "
             "expectedPods: 9}",
             PDB.replace("{name: web}", "{name: computed}"))
    )  # fmt: skip
    manifests = load_manifests(["in.yaml"])

    async def run() -> tuple[Any, Any]:
        async with FakeCluster() as cluster:
            for m in manifests:
                cluster.create(m.obj)
            return cluster.get(PodDisruptionBudget, "default", "given"), cluster.get(
                PodDisruptionBudget, "default", "computed"
            )

    given, computed = virtual_time.run(run, backend=backend)
    s = given.status
    assert (s.disruptions_allowed, s.current_healthy, s.desired_healthy, s.expected_pods) == (0, 9, 9, 9)
    c = computed.status
    assert (c.disruptions_allowed, c.current_healthy, c.desired_healthy, c.expected_pods) == (1, 2, 1, 2)


def test_arrival_order_then_file_order() -> None:
    text = docs(pod("c", arrival="1m"), pod("a"), pod("d", arrival="60s"), pod("b", arrival="0s"), node("n", arrival="1.5s"))
    ms = load_manifests(["x.yaml"], {"x.yaml": text})
    assert [(m.obj.metadata.name, m.arrival) for m in ms] == [("a", 0.0), ("b", 0.0), ("n", 1.5), ("c", 60.0), ("d", 60.0)]
    assert ms[0].label == "x.yaml: document 2 (Pod a)"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90.0), ("5m", 300.0), ("1h30m", 5400.0), ("500ms", 0.5), ("1.5s", 1.5), ("2h0m0s", 7200.0),
     ("-1m", -60.0), ("+10s", 10.0), ("0", 0.0), ("45", 45.0), ("250us", 0.00025)],
)  # fmt: skip
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "5 m", "1d", "m5", "inf", "nan", "1h-5m", "--1s"])
def test_parse_duration_errors(text: str) -> None:
    with pytest.raises(ValueError, match="time: invalid duration"):
        parse_duration(text)


def test_bad_input_found_inside_the_run_is_one_line_too(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    from kubesched.simulation import Simulation

    async def failing(*args: Any, **kwargs: Any) -> None:
        async def fail() -> None:
            raise ConfigError("late trouble", source="in.yaml: document 1 (Pod ok)", field="spec")

        async with anyio.create_task_group() as tg:
            tg.start_soon(fail)

    monkeypatch.setattr(Simulation, "run", failing)
    (workdir / "in.yaml").write_text(docs(GOOD_POD))
    code, out, err = simulate_cli(capsys, "in.yaml")
    assert (code, out, err) == (2, "", "kubesched: error: in.yaml: document 1 (Pod ok), spec: late trouble\n")
