"""``kubesched trace openb``: the Alibaba GPU cluster trace v2023 as scenarios.

Small CSVs in the trace's own format, written here (no trace data ships in the repository): the
exact objects of a 2-node, 4-task trace, both shared-GPU modes, the fill experiment's rule and its
determinism by seed, both gang rules under both gang APIs, bad input as one line naming file, row
and column, and the scenarios run end to end through ``simulate``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched import cli
from kubesched import traces as trace
from kubesched.api._durations import parse_duration
from kubesched.api._resources import quantity_value

NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"
POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
              "deletion_time,scheduled_time")
NODES = [
    "openb-node-0000,32000,131072,2,V100M16",
    "openb-node-0001,16000,65536,0,",
]
PODS = [
    "openb-pod-0000,4000,8192,1,1000,,LS,Succeeded,0,100,5",
    "openb-pod-0001,2000,4096,1,460,V100M16|V100M32|V100M32,BE,Running,10,500,10",
    "openb-pod-0002,1000,1024,0,0,,LS,Failed,20,80,20",
    "openb-pod-0003,8000,16384,2,1000,,Burstable,Pending,30,60,",
]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in a temporary directory so that error lines name files as the user typed them."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def csvs(nodes: list[str] = NODES, pods: list[str] = PODS) -> tuple[str, str]:
    Path("nodes.csv").write_text("\n".join([NODE_HEADER, *nodes]) + "\n")
    Path("pods.csv").write_text("\n".join([POD_HEADER, *pods]) + "\n")
    return "nodes.csv", "pods.csv"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["trace", "openb", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def objects(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    code, out, err = run(capsys, "nodes.csv", "pods.csv", *argv)
    assert (code, err) == (0, "")
    return [d for d in yaml.safe_load_all(out) if d is not None]


def kinds(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


# --- builders of the expected objects ---------------------------------------------------------


def node(name: str, cpu: str, memory: str, *, gpu: dict[str, str] | None = None, model: str = "") -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": memory, "pods": "110", **(gpu or {})}
    labels = {"kubernetes.io/hostname": name, **({trace.MODEL_LABEL: model} if model else {})}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": dict(alloc), "allocatable": dict(alloc)}}


def pod(name: str, cpu: str, memory: str, *, times: dict[str, str], labels: dict[str, str],
        gpu: tuple[str, str, str, int] | None = None, models: tuple[str, ...] = ()) -> dict[str, Any]:
    """``gpu``: (resource, amount, the trace's gpu_milli, num_gpu)."""
    requests = {"cpu": cpu, "memory": memory}
    resources: dict[str, Any] = {"requests": requests}
    annotations = {f"kubesched.io/{k}": v for k, v in times.items()}
    spec: dict[str, Any] = {"restartPolicy": "Never"}
    if gpu:
        requests[gpu[0]] = gpu[1]
        resources["limits"] = {gpu[0]: gpu[1]}
        annotations.update({"alibabacloud.com/gpu-milli": gpu[2], "alibabacloud.com/gpu-count": str(gpu[3])})
    if models:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": trace.MODEL_LABEL, "operator": "In", "values": list(models)}]}]}}}
    spec["containers"] = [{"name": "main", "image": "registry.k8s.io/pause:3.9", "resources": resources}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels, "annotations": annotations},
            "spec": spec}


def trace_labels(qos: str, phase: str) -> dict[str, str]:
    return {"kubesched.io/trace-qos": qos, "kubesched.io/trace-phase": phase}


# --- the objects ------------------------------------------------------------------------------


def test_replay_objects(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nodes with nvidia.com/gpu and the model label; pods with requests, GPU limits, gpu_spec as
    required affinity (duplicates dropped), arrival at creation_time, the trace's run
    (deletion - scheduled) as duration, a never-scheduled task deleted at deletion_time."""
    csvs()
    gpu = "nvidia.com/gpu"
    assert objects(capsys) == [
        node("openb-node-0000", "32000m", "131072Mi", gpu={gpu: "2"}, model="V100M16"),
        node("openb-node-0001", "16000m", "65536Mi"),
        pod("openb-pod-0000", "4000m", "8192Mi", times={"arrival": "0s", "duration": "95s"},
            labels=trace_labels("LS", "Succeeded"), gpu=(gpu, "1", "1000", 1)),
        pod("openb-pod-0001", "2000m", "4096Mi", times={"arrival": "10s", "duration": "490s"},
            labels=trace_labels("BE", "Running"), gpu=(gpu, "1", "460", 1), models=("V100M16", "V100M32")),
        pod("openb-pod-0002", "1000m", "1024Mi", times={"arrival": "20s", "duration": "60s"},
            labels=trace_labels("LS", "Failed")),
        pod("openb-pod-0003", "8000m", "16384Mi", times={"arrival": "30s", "deletion": "60s"},
            labels=trace_labels("Burstable", "Pending"), gpu=(gpu, "2", "1000", 2)),
    ]


def test_edge_rows_of_the_trace(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A never-scheduled task deleted in the second it arrived goes a second later (simulate
    needs a deletion after the arrival); empty deletion: no end; ``nan`` gpu_spec and model
    (pandas' empty cell) mean none; a CPU task's gpu_spec is ignored, as the artifact does."""
    csvs(nodes=["n0,1000,1024,1,nan"], pods=["a,10,10,1,1000,nan,LS,Pending,7,7,", "b,10,10,0,0,T4,LS,Running,8,,8",
                                              "c,10,10,1,1000,,LS,Pending,9,9.5,"])
    objs = objects(capsys)
    assert kinds(objs, "Node")[0]["metadata"]["labels"] == {"kubernetes.io/hostname": "n0"}
    pods = kinds(objs, "Pod")
    assert [p["metadata"]["annotations"] for p in pods] == [
        {"kubesched.io/arrival": "7s", "kubesched.io/deletion": "8s",
         "alibabacloud.com/gpu-milli": "1000", "alibabacloud.com/gpu-count": "1"},
        {"kubesched.io/arrival": "8s"},
        {"kubesched.io/arrival": "9s", "kubesched.io/deletion": "9.5s",
         "alibabacloud.com/gpu-milli": "1000", "alibabacloud.com/gpu-count": "1"},
    ]
    assert not any("affinity" in p["spec"] for p in pods)


def test_shared_gpus_as_milli_units(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--shared-gpu milli``: nodes have 1000 alibabacloud.com/gpu-milli per GPU, a task asks
    for num_gpu x gpu_milli; ``whole`` (the default) asks for num_gpu devices, a share as one."""
    csvs()
    objs = objects(capsys, "--shared-gpu", "milli")
    assert [n["status"]["allocatable"] for n in kinds(objs, "Node")] == [
        {"cpu": "32000m", "memory": "131072Mi", "pods": "110", "alibabacloud.com/gpu-milli": "2000"},
        {"cpu": "16000m", "memory": "65536Mi", "pods": "110"},
    ]
    resources = [p["spec"]["containers"][0]["resources"] for p in kinds(objs, "Pod")]
    assert [r.get("limits") for r in resources] == [
        {"alibabacloud.com/gpu-milli": "1000"}, {"alibabacloud.com/gpu-milli": "460"}, None,
        {"alibabacloud.com/gpu-milli": "2000"},
    ]
    assert all(r["requests"].get("alibabacloud.com/gpu-milli") == (r.get("limits") or {}).get(
        "alibabacloud.com/gpu-milli") for r in resources)
    whole = objects(capsys)
    assert [p["spec"]["containers"][0]["resources"].get("limits") for p in kinds(whole, "Pod")] == [
        {"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"}, None, {"nvidia.com/gpu": "2"},
    ]


def test_the_written_yaml_is_pyyamls(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The hand-written block YAML (PyYAML's representer is too slow for 10,000 pods) is the
    text PyYAML writes for the same objects, byte for byte, and reads back as them."""
    nodes, pods = csvs()
    for argv in ([], ["--gangs", "split"], ["--mode", "fill", "--seed", "3"]):
        code, out, _ = run(capsys, nodes, pods, *argv)
        head, body = out.split("\n", 1)
        assert code == 0 and head.startswith("# kubesched trace openb (")
        objs = list(yaml.safe_load_all(body))
        assert body == yaml.safe_dump_all(objs, sort_keys=False, default_flow_style=False, width=1000)


# --- the fill experiment ----------------------------------------------------------------------


def many_tasks(n: int) -> list[str]:
    """``n`` tasks of 0, 1 (shared or whole), 2 or 4 GPUs."""
    shapes = [(0, 0), (1, 1000), (1, 250), (2, 1000), (1, 600), (4, 1000)]
    rows = []
    for i in range(n):
        gpus, milli = shapes[i % len(shapes)]
        rows.append(f"task-{i:03d},{1000 + i},{2048 + i},{gpus},{milli},,LS,Running,{i},{i + 100},{i}")
    return rows


def gpu_milli(pod: dict[str, Any]) -> int:
    a = pod["metadata"]["annotations"]
    return int(a.get("alibabacloud.com/gpu-count", 0)) * int(a.get("alibabacloud.com/gpu-milli", 0))


@pytest.mark.parametrize("factor", ["0.5", "1.3", "3"])
def test_fill_reaches_the_factor_of_the_cluster_gpus(
    factor: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every task in a shuffled order, then copies drawn with replacement (``-tuned-<i>``) until the
    next would pass factor x GPUs — or, below the trace's own total, tasks removed at random —
    one arrival a second from 0, no duration or deletion (never finishing)."""
    tasks = many_tasks(30)  # 30 tasks: 45 GPUs requested in all
    csvs(nodes=[f"node-{i},64000,262144,8,G2" for i in range(4)], pods=tasks)  # 32 GPUs
    pods = kinds(objects(capsys, "--mode", "fill", "--fill-factor", factor, "--seed", "9"), "Pod")
    target = float(factor) * 32 * 1000
    total = sum(gpu_milli(p) for p in pods)
    assert total <= target
    names = [p["metadata"]["name"] for p in pods]
    originals = [n for n in names if "-tuned-" not in n]
    if factor == "0.5":
        assert not len(originals) == len(names) == 30 and len(set(names)) == len(names)
    else:  # every task once, then copies, until the next (at most 4 GPUs) would pass the target
        assert sorted(originals) == sorted(t.split(",")[0] for t in tasks) != originals  # shuffled
        assert names[:30] == originals and target - total < 4000 + 1
        copies = names[30:]
        assert copies == [f"{n.rsplit('-tuned-', 1)[0]}-tuned-{i}" for i, n in enumerate(copies)]
    assert [p["metadata"]["annotations"]["kubesched.io/arrival"] for p in pods] == [f"{i}s" for i in range(len(pods))]
    assert not any({"kubesched.io/duration", "kubesched.io/deletion"} & set(p["metadata"]["annotations"]) for p in pods)


def test_fill_is_deterministic_by_seed(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csvs(nodes=["node-0,64000,262144,8,G2"], pods=many_tasks(20))
    argv = ("nodes.csv", "pods.csv", "--mode", "fill")
    a, b, c = (run(capsys, *argv, "--seed", s)[1] for s in ("1", "1", "2"))
    assert a == b != c
    assert run(capsys, *argv)[1] == run(capsys, *argv, "--seed", "0")[1]


# --- gangs ------------------------------------------------------------------------------------

SAME_SECOND = [
    "job-a-0,4000,8192,1,1000,,LS,Running,5,50,5",
    "job-a-1,4000,8192,1,1000,,LS,Running,5,60,6",
    "job-a-2,4000,8192,1,1000,,LS,Running,5,70,6",
    "other,4000,8192,1,1000,,BE,Running,5,50,5",     # another QoS: not of the gang
    "later,4000,8192,1,1000,,BE,Running,6,50,6",
]


def test_gangs_of_the_same_second_as_podgroups(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--gangs same-second``: consecutive tasks of one creation second with identical requests
    and QoS are one gang, named after its first task: a PodGroup (minMember, arriving with it)
    and the pod-group label; a task alone stays a plain pod."""
    csvs(nodes=["node-0,64000,262144,8,G2"], pods=SAME_SECOND)
    objs = objects(capsys, "--gangs", "same-second")
    assert kinds(objs, "PodGroup") == [{
        "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
        "metadata": {"name": "job-a-0", "namespace": "default", "annotations": {"kubesched.io/arrival": "5s"}},
        "spec": {"minMember": 3},
    }]
    assert [o["kind"] for o in objs] == ["Node", "PodGroup", "Pod", "Pod", "Pod", "Pod", "Pod"]
    group = {p["metadata"]["name"]: p["metadata"]["labels"].get("scheduling.x-k8s.io/pod-group") for p in kinds(objs, "Pod")}
    assert group == {"job-a-0": "job-a-0", "job-a-1": "job-a-0", "job-a-2": "job-a-0", "other": None, "later": None}


def test_split_gangs_with_the_gang_labels(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--gangs split --gang-api labels``: a task of k > 1 GPUs is k one-GPU members sharing its
    cpu and memory (the remainder one unit each to the first), with the Gang plugin's labels."""
    csvs(nodes=["node-0,64000,262144,8,G2"], pods=["big,9001,100,3,1000,,LS,Running,0,10,0",
                                                   "small,1000,100,1,500,,LS,Running,0,10,0"])
    pods = kinds(objects(capsys, "--gangs", "split", "--gang-api", "labels"), "Pod")
    summary = [(p["metadata"]["name"], p["metadata"]["labels"].get("gang.kubesched.io/name"),
                p["metadata"]["labels"].get("gang.kubesched.io/available-count"),
                p["spec"]["containers"][0]["resources"]["requests"]) for p in pods]
    assert summary == [
        ("big-0", "big", "3", {"cpu": "3001m", "memory": "34Mi", "nvidia.com/gpu": "1"}),
        ("big-1", "big", "3", {"cpu": "3000m", "memory": "33Mi", "nvidia.com/gpu": "1"}),
        ("big-2", "big", "3", {"cpu": "3000m", "memory": "33Mi", "nvidia.com/gpu": "1"}),
        ("small", None, None, {"cpu": "1000m", "memory": "100Mi", "nvidia.com/gpu": "1"}),
    ]


# --- bad input --------------------------------------------------------------------------------

BAD = [
    pytest.param("nodes.csv", "sn,cpu_milli,memory_mib,model\nn0,1000,1024,G2\n", [],
                 "nodes.csv, row 1, column gpu: Required value: the header has no such column "
                 "(it has sn, cpu_milli, memory_mib, model)", id="missing column"),
    pytest.param("pods.csv", POD_HEADER + "\n" + PODS[0] + "\np1,abc,1024,0,0,,LS,Running,0,1,0\n", [],
                 'pods.csv, row 3, column cpu_milli: Invalid value: "abc": must be a number', id="not a number"),
    pytest.param("pods.csv", POD_HEADER + "\np1,1000,-5,0,0,,LS,Running,0,1,0\n", [],
                 'pods.csv, row 2, column memory_mib: Invalid value: "-5": must be greater than or equal to 0',
                 id="negative"),
    pytest.param("nodes.csv", NODE_HEADER + "\nn0,1000,1024,1.5,G2\n", [],
                 'nodes.csv, row 2, column gpu: Invalid value: "1.5": must be an integer', id="fractional GPUs"),
    pytest.param("pods.csv", POD_HEADER + "\np1,1000,10,1,1200,,LS,Running,0,1,0\n", [],
                 'pods.csv, row 2, column gpu_milli: Invalid value: "1200": must be no greater than 1000',
                 id="share above one GPU"),
    pytest.param("pods.csv", POD_HEADER + "\np1,1000,10,1,,,LS,Running,0,1,0\n", [],
                 "pods.csv, row 2, column gpu_milli: Required value: must be a number", id="no share"),
    pytest.param("pods.csv", POD_HEADER + "\nP_1,1000,10,0,0,,LS,Running,0,1,0\n", [],
                 'pods.csv, row 2, column name: Invalid value: "P_1": a lowercase RFC 1123 subdomain must consist',
                 id="bad name"),
    pytest.param("nodes.csv", NODE_HEADER + "\nn0,1000,1024,1,G2\n\nn0,1000,1024,1,G2\n", [],
                 'nodes.csv, row 4, column sn: Duplicate value: "n0"', id="duplicate node"),
    pytest.param("pods.csv", POD_HEADER + "\np1,1000,10,0,0,,LS\n", [],
                 "pods.csv, row 2: Invalid value: 7 fields: the header has 11", id="short row"),
    pytest.param("pods.csv", POD_HEADER + "\np1,1000,10,0,0,,LS,Running,50,60,40\n", [],
                 'pods.csv, row 2, column scheduled_time: Invalid value: "40": must not be before creation_time (50)',
                 id="scheduled before created"),
    pytest.param("pods.csv", POD_HEADER + "\np1,1000,10,0,0,,LS,Running,0,1,0\np1,1000,10,0,0,,LS,Running,0,1,0\n",
                 [], 'pods.csv, row 3, column name: Invalid value: "p1": a pod of that name comes earlier',
                 id="duplicate pod"),
    pytest.param("pods.csv", "", [], "pods.csv, row 1: Required value: a header row (name, cpu_milli, memory_mib, "
                 "num_gpu, gpu_milli, creation_time, deletion_time, scheduled_time)", id="empty file"),
    pytest.param("pods.csv", POD_HEADER + "\np1,1000,10,0,0,,LS,Running,0,1,0\n", ["--mode", "fill"],
                 "pods.csv, column num_gpu: Invalid value: no task asks for a GPU, so no number of them fills "
                 "the GPUs (--mode fill)", id="fill without GPU tasks"),
    pytest.param("nodes.csv", NODE_HEADER + "\nn0,1000,1024,0,\n", ["--mode", "fill"],
                 "nodes.csv, column gpu: Invalid value: 0: the nodes have no GPU to fill (--mode fill)",
                 id="fill without GPUs"),
    pytest.param("", "", ["--fill-factor", "2"], "--fill-factor: Forbidden: only with --mode fill",
                 id="fill factor in replay"),
    pytest.param("", "", ["--mode", "fill", "--fill-factor", "0"],
                 "--fill-factor: Invalid value: 0: must be greater than 0", id="zero factor"),
    pytest.param("", "", ["--mode", "bogus"], "argument --mode: invalid choice: 'bogus' (choose from 'replay', "
                 "'fill') (see kubesched trace --help)", id="unknown mode"),
]


@pytest.mark.parametrize(("name", "text", "argv", "line"), BAD)
def test_bad_input_is_one_line_naming_file_row_and_column(
    name: str, text: str, argv: list[str], line: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, pods = csvs()
    if name:
        Path(name).write_text(text)
    with pytest.raises(SystemExit) if "invalid choice" in line else _nothing():
        code, out, err = run(capsys, nodes, pods, *argv)
        assert (code, out) == (2, "")
        assert err.startswith(f"kubesched: error: {line}") and err.count("\n") == 1, err
    if "invalid choice" in line:
        assert capsys.readouterr().err == f"kubesched: error: {line}\n"


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_missing_file_and_unwritable_output(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csvs()
    assert run(capsys, "nope.csv", "pods.csv") == (2, "", "kubesched: error: nope.csv: cannot read: No such file or directory\n")
    assert run(capsys, "nodes.csv", "pods.csv", "-o", "no/such/dir.yaml") == (
        2, "", "kubesched: error: no/such/dir.yaml: cannot write: No such file or directory\n")
    Path("pods.csv").write_text(POD_HEADER + "\np1,x,10,0,0,,LS,Running,0,1,0\n")
    assert run(capsys, "nodes.csv", "pods.csv", "-o", "out.yaml")[0] == 2
    assert sorted(p.name for p in workdir.iterdir()) == ["nodes.csv", "pods.csv"]  # nothing half-written


# --- end to end through simulate --------------------------------------------------------------


def simulate(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert cli.main(["simulate", *argv]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    result: dict[str, Any] = json.loads(out)
    return result


def test_replay_runs_in_simulate(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The small trace replayed: the V100 task on the V100 node, each task running as long as in
    the trace; the 2-GPU task finds both GPUs taken and is deleted, pending, at 60 s."""
    nodes, pods = csvs()
    assert run(capsys, nodes, pods, "-o", "replay.yaml")[0] == 0
    result = simulate(capsys, "replay.yaml")
    got = {p["name"]: (p["nodeName"], p["phase"], p["deleted"], p["finishedAt"]) for p in result["pods"]}
    assert got == {
        "openb-pod-0000": ("openb-node-0000", "Succeeded", False, 95.0),
        "openb-pod-0001": ("openb-node-0000", "Succeeded", False, 500.0),
        "openb-pod-0002": (got["openb-pod-0002"][0], "Succeeded", False, 80.0),
        "openb-pod-0003": (None, "Pending", True, None),
    }
    peak = max(t["allocated"].get("nvidia.com/gpu", 0) for t in result["timeline"])
    assert peak == 2


@pytest.mark.parametrize(("api", "factor", "shared"), [("labels", "1.3", "whole"), ("podgroup", "1", "milli")])
def test_fill_with_split_gangs_runs_in_simulate(
    api: str, factor: str, shared: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fill experiment with split gangs under Gang (labels) or Coscheduling (PodGroups): every
    gang all or nothing, and the GPUs filled no further than they can be."""
    csvs(nodes=[f"node-{i},64000,262144,4,G2" for i in range(3)], pods=many_tasks(12))
    assert run(capsys, "nodes.csv", "pods.csv", "--mode", "fill", "--fill-factor", factor, "--gangs", "split",
               "--gang-api", api, "--shared-gpu", shared, "-o", "fill.yaml")[0] == 0
    plugin = "Gang" if api == "labels" else "Coscheduling"
    Path("config.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n"
        f"    multiPoint: {{enabled: [{{name: {plugin}}}]}}\n"
        f"    queueSort: {{enabled: [{{name: {plugin}}}], disabled: [{{name: PrioritySort}}]}}\n"
    )
    # --until: at 1.36 (BalancedAllocation, kubernetes#135573) a PodGroup of the milli fill finds no
    # room and retries for as long as the run lasts (Coscheduling's loop, in backoff steps)
    result = simulate(capsys, "fill.yaml", "--config", "config.yaml", "--until", "120s")
    objs = kinds(list(yaml.safe_load_all(Path("fill.yaml").read_text())), "Pod")
    key = "gang.kubesched.io/name" if api == "labels" else "scheduling.x-k8s.io/pod-group"
    gang_of = {p["metadata"]["name"]: p["metadata"].get("labels", {}).get(key) for p in objs}
    placed: dict[str, list[bool]] = {}
    for p in result["pods"]:
        if gang_of[p["name"]]:
            placed.setdefault(gang_of[p["name"]], []).append(p["nodeName"] is not None)
    assert placed and all(all(v) or not any(v) for v in placed.values())
    assert any(all(v) for v in placed.values())
    resource, capacity = ("nvidia.com/gpu", 12) if shared == "whole" else ("alibabacloud.com/gpu-milli", 12000)
    final = sum(n["allocated"].get(resource, 0) for n in result["nodes"])
    assert 0 < final <= capacity
    if shared == "milli":  # a pod left pending is a member of a gang that does not fit the room left
        free = [n["capacity"][resource] - n["allocated"].get(resource, 0) for n in result["nodes"]]
        milli = {p["metadata"]["name"]: quantity_value(resource, p["spec"]["containers"][0]["resources"]["requests"].get(resource, "0"))
                 for p in objs}
        for gang, v in placed.items():
            if not any(v):
                members = [milli[n] for n, g in gang_of.items() if g == gang]
                assert sum(f // members[0] for f in free) < len(members)  # members all alike
        assert all(p["nodeName"] or gang_of[p["name"]] for p in result["pods"])
    assert all(parse_duration(p["metadata"]["annotations"]["kubesched.io/arrival"]) >= 0 for p in objs)


def test_an_endless_file_is_refused(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``trace openb /dev/zero``: one line, as ``simulate /dev/zero`` (issue 38 item 12)."""
    code, out, err = run(capsys, "/dev/zero", "/dev/zero", "-o", "out.yaml")
    assert (code, out) == (2, "")
    assert err == "kubesched: error: /dev/zero: cannot read: a line longer than 1 MiB, the most a CSV line may hold\n"
    assert not (workdir / "out.yaml").exists()
