"""``kubesched snapshot``: the fake API server serving a scenario, read back into a scenario that
``simulate`` takes unchanged and places the pending pods of exactly as it places the original's.

The server runs on its own event loop in a background thread (one per backend), as in
``test_kubectl``; it records every request and refuses Secrets and ConfigMaps with 403, so a
snapshot that asked for them would fail.  Real time, bounded timeouts.
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import httpx
import pytest
import yaml

from kubesched import cli
from kubesched.api._objects import (
    Deployment,
    Job,
    JobCondition,
    ObjectMeta,
    OwnerReference,
    PriorityClass,
    ReplicaSet,
)
from kubesched.cli.progress import SnapshotProgress
from kubesched.scenario import load_manifests
from kubesched.snapshot import (
    SIMULATE_EPOCH,
    Options,
    Reducer,
    snapshot,
    summary,
)
from kubesched.testing import make_pod
from kubesched.transports.apiserver import APIServer, write_kubeconfig
from kubesched.transports.apiserver._http import HTTPError
from kubesched.transports.fake import FakeCluster

SCENARIO = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {topology.kubernetes.io/zone: b}}
spec: {taints: [{key: dedicated, value: x, effect: NoSchedule}]}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, labels: {app: db}}
spec:
  nodeName: n1
  priorityClassName: low
  containers: [{name: c, image: postgres, resources: {requests: {cpu: 2500m}}}]
status: {startTime: "2024-05-01T10:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: cache, labels: {app: cache}}
spec:
  nodeName: n2
  containers: [{name: c, image: redis, resources: {requests: {cpu: 2500m}}}]
status: {startTime: "2024-05-01T11:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  nodeName: n1
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "3"}}}]
status: {phase: Succeeded}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  parallelism: 2
  completions: 4
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: 250m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: zeta}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: alpha}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priorityClassName: high
  containers: [{name: c, image: pause, resources: {requests: {cpu: "3"}}}]
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang, namespace: team}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: helper, namespace: team, labels: {app: helper}}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: 250m}}}]
"""


class GuardedServer(APIServer):
    """The fake API server, recording every request and refusing Secrets and ConfigMaps (403),
    as a cluster whose RBAC withholds them would."""

    def __init__(self, cluster: FakeCluster) -> None:
        super().__init__(cluster)
        self.requests: list[tuple[str, str, dict[str, str]]] = []

    async def _route(self, req: Any) -> Any:
        self.requests.append((req.method, req.path, dict(req.query)))
        if {"secrets", "configmaps"} & set(req.path.split("/")):
            raise HTTPError(403, "Forbidden", "secrets and configmaps are forbidden to this test's clients")
        return await super()._route(req)


@asynccontextmanager
async def serving(scenario: Path) -> AsyncIterator[GuardedServer]:
    """``kubesched fake-apiserver SCENARIO``, with the guarded server."""
    manifests = load_manifests([str(scenario)])
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    async with FakeCluster(epoch=epoch) as cluster:
        for m in manifests:
            cluster.create(m.obj)
        async with GuardedServer(cluster) as server:
            yield server


@dataclass
class Served:
    server: GuardedServer
    backend: str
    scenario: Path


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    scenario = tmp_path_factory.mktemp("snapshot") / "scenario.yaml"
    scenario.write_text(SCENARIO)
    with (
        anyio.from_thread.start_blocking_portal(request.param) as portal,
        portal.wrap_async_context_manager(serving(scenario)) as server,
    ):
        yield Served(server, request.param, scenario)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def take(capsys: pytest.CaptureFixture[str], served: Served, path: Path, *flags: str) -> str:
    """A snapshot of the served cluster into ``path``; its closing line."""
    code, out, err = run_cli(capsys, "snapshot", "--server", served.server.url, "-o", str(path),
                             "--backend", served.backend, *flags)  # fmt: skip
    assert code == 0, err
    assert out == ""
    return err


def simulated(capsys: pytest.CaptureFixture[str], *files: Path, seed: int = 0) -> dict[str, Any]:
    code, out, err = run_cli(capsys, "simulate", *map(str, files), "--seed", str(seed))
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


def placements(result: dict[str, Any]) -> dict[str, tuple[str | None, bool]]:
    return {f"{p['namespace']}/{p['name']}": (p["nodeName"], p["deleted"]) for p in result["pods"]}


def unnamed(placed: dict[str, tuple[str | None, bool]]) -> list[tuple[str, str | None, bool]]:
    """The placements with the random suffix of generated names taken off."""
    return sorted((re.sub(r"-[bcdfghjklmnpqrstvwxz2456789]{5}$", "", k), *v) for k, v in placed.items())


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


# --- the acceptance test ------------------------------------------------------------------------


def test_a_snapshot_simulates_as_the_scenario_it_was_served_from(
    served: Served, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The round trip: the pending pods land where ``simulate`` of the original puts
    them, with the same seed (the preemption included), and no Secret or ConfigMap is asked for."""
    before = len(served.server.requests)
    snap = tmp_path / "cluster.yaml"
    closing = take(capsys, served, snap)
    assert closing.splitlines() == [
        "kubesched: snapshot: wrote 3 Nodes, 11 Pods (9 pending), 2 PriorityClasses, 1 ReplicaSet, "
        f"1 Deployment, 1 PodDisruptionBudget, 1 PodGroup to {snap}; left out 1 Job(s) with nothing left to start "
        "(written as their pods), 1 finished pod(s)"
    ]
    scheduling = ("Scheduled", "Preempted", "FailedScheduling")
    original, again = simulated(capsys, served.scenario), simulated(capsys, snap)
    want = {k: v for k, v in placements(original).items() if k != "default/done"}  # finished: left out
    assert placements(again) == want
    assert [e["object"] for e in original["events"] if e["reason"] == "Preempted"] == ["default/cache"]
    assert [e for e in again["events"] if e["reason"] in scheduling] == [
        e for e in original["events"] if e["reason"] in scheduling
    ]
    # another seed: the served cluster named its controllers' pods with seed 0, so they are
    # compared by their owner's prefix
    original, again = simulated(capsys, served.scenario, seed=7), simulated(capsys, snap, seed=7)
    assert unnamed(placements(again)) == unnamed({k: v for k, v in placements(original).items() if k != "default/done"})

    asked = served.server.requests[before:]
    assert asked, "the snapshot sent no request"
    assert not [p for _, p, _ in asked if {"secrets", "configmaps"} & set(p.split("/"))]
    assert all(m == "GET" for m, _, _ in asked)
    assert all(q.get("limit") == "500" for _, _, q in asked), asked
    # the guard does refuse them: a snapshot that asked would have failed
    r = httpx.get(f"{served.server.url}/api/v1/secrets", timeout=10)
    assert r.status_code == 403


def test_the_snapshot_is_reduced_to_what_simulate_reads(
    served: Served, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = tmp_path / "cluster.yaml"
    take(capsys, served, snap)
    docs = documents(snap)
    kinds = [d["kind"] for d in docs]
    # a stable order: classes, nodes, workloads, budgets, groups, then pods (bound, then pending)
    assert kinds == ["PriorityClass"] * 2 + ["Node"] * 3 + ["ReplicaSet", "Deployment", "PodDisruptionBudget",
                                                            "PodGroup"] + ["Pod"] * 11
    text = snap.read_text()
    for gone in ("managedFields", "resourceVersion", "generateName", "conditions", "nominatedNodeName", "phase"):
        assert gone not in text, gone
    pods = [d for d in docs if d["kind"] == "Pod"]
    bound = [d["metadata"]["name"] for d in pods if d["spec"].get("nodeName")]
    assert bound == ["cache", "db"]  # as listed (namespace, name); the finished one left out
    pending = [d["metadata"]["name"] for d in pods if not d["spec"].get("nodeName")]
    assert pending[:3] == [p for p in pending if p.startswith("web-")]  # oldest first: the file's order
    assert pending[3:5] == [p for p in pending if p.startswith("batch-")]
    assert pending[5:] == ["zeta", "alpha", "urgent", "helper"]
    db = next(d for d in pods if d["metadata"]["name"] == "db")
    assert db["status"] == {"startTime": db["status"]["startTime"]}
    # times are shifted so that the snapshot's moment is simulate's start, order kept
    cache = next(d for d in pods if d["metadata"]["name"] == "cache")
    assert db["status"]["startTime"] < cache["status"]["startTime"] < SIMULATE_EPOCH
    assert all(d["metadata"]["creationTimestamp"] <= SIMULATE_EPOCH for d in pods)
    web = [d for d in pods if d["metadata"]["name"].startswith("web-")]
    assert {r["kind"] for d in web for r in d["metadata"]["ownerReferences"]} == {"ReplicaSet"}
    rs = next(d for d in docs if d["kind"] == "ReplicaSet")
    assert web[0]["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
    node = next(d for d in docs if d["kind"] == "Node")
    assert set(node) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert set(node["status"]) == {"allocatable"}
    assert set(node["metadata"]) == {"name", "labels"}
    assert next(d for d in docs if d["kind"] == "PodDisruptionBudget").get("status") is None


def test_namespace_and_selector_narrow_it(served: Served, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = len(served.server.requests)
    team = tmp_path / "team.yaml"
    take(capsys, served, team, "--namespace", "team")
    kinds = [(d["kind"], d["metadata"].get("namespace", "")) for d in documents(team)]
    assert kinds == [("PriorityClass", "")] * 2 + [("Node", "")] * 3 + [("PodGroup", "team"), ("Pod", "team")]
    namespaced = [p for _, p, _ in served.server.requests[before:] if "/namespaces/" in p]
    assert namespaced and all("/namespaces/team/" in p for p in namespaced)

    web = tmp_path / "web.yaml"
    take(capsys, served, web, "-l", "app=web")
    docs = documents(web)
    names = [(d["kind"], d["metadata"]["name"]) for d in docs if d["kind"] not in ("PriorityClass", "Node")]
    assert [k for k, _ in names] == ["ReplicaSet", "Deployment", "PodDisruptionBudget", "PodGroup"] + ["Pod"] * 3
    assert all(n.startswith("web-") for k, n in names if k == "Pod")
    # what a narrowed snapshot leaves out holds nothing: the web pods fit
    result = simulated(capsys, web)
    assert result["summary"]["scheduled"] == 3


def test_a_kubeconfig_and_its_context(served: Served, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", served.server.url, name="fake")
    take_kc = ["snapshot", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "s.yaml"), "--backend", served.backend]
    code, _, err = run_cli(capsys, *take_kc, "--context", "fake")
    assert code == 0 and "wrote 3 Nodes" in err
    code, _, err = run_cli(capsys, *take_kc, "--context", "nope")
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith(f"kubesched: error: {kubeconfig}: "), err


def test_paging_gives_the_same_scenario(served: Served, tmp_path: Path) -> None:
    """limit/continue in pages of 2 writes what one page of 500 does (the same moment)."""
    outs = []
    for chunk in (2, 500):
        before = len(served.server.requests)
        buf = io.StringIO()
        opts = Options(server=served.server.url, chunk_size=chunk)
        anyio.run(functools.partial(snapshot, opts, buf, now=1.8e9), backend=served.backend)
        outs.append(buf.getvalue())
        conts = [q for _, p, q in served.server.requests[before:] if p == "/api/v1/pods" and "continue" in q]
        assert len(conts) == (5 if chunk == 2 else 0)  # 12 pods: 6 pages
    assert outs[0] == outs[1]


def test_an_expired_continue_token_lists_again_after_the_last_item_seen(tmp_path: Path) -> None:
    """410 Gone on a ``continue`` (the token outlived the server's compaction): the list starts
    again and skips what was already written, each pod once, in order."""
    calls: list[str] = []

    def pod_item(name: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "namespace": "default"}, "spec": {"nodeName": "n1", "containers": [{"name": "c"}]}}

    def handler(request: httpx.Request) -> httpx.Response:
        cont = request.url.params.get("continue", "")
        calls.append(f"{request.url.path}?{cont}")
        if request.url.path != "/api/v1/pods":
            return httpx.Response(200, json={"items": [], "metadata": {}})
        if cont == "t1":
            return httpx.Response(410, json={"kind": "Status", "code": 410, "message": "too old resource version"})
        if cont == "t2":
            return httpx.Response(200, json={"items": [pod_item("c")], "metadata": {}})
        first = len([c for c in calls if c == "/api/v1/pods?"]) == 1
        return httpx.Response(200, json={"items": [pod_item("a"), pod_item("b")], "metadata": {"continue": "t1" if first else "t2"}})

    buf = io.StringIO()
    opts = Options(server="http://cluster.invalid", chunk_size=2)
    anyio.run(functools.partial(snapshot, opts, buf, now=NOW, http_transport=httpx.MockTransport(handler)))
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(buf.getvalue()) if d and d["kind"] == "Pod"]
    assert names == ["a", "b", "c"]
    assert [c for c in calls if c.startswith("/api/v1/pods")] == ["/api/v1/pods?", "/api/v1/pods?t1", "/api/v1/pods?", "/api/v1/pods?t2"]
    assert not [c for c in calls if "secrets" in c or "configmaps" in c]


def test_the_progress_line() -> None:
    from rich.console import Console

    progress = SnapshotProgress(enabled=False)
    progress.kind, progress.read, progress.written = "Pod", 12345, 12000
    out = io.StringIO()
    Console(file=out, width=100).print(progress)
    assert out.getvalue().split() == ["snapshot", "Pod", "12,345", "objects", "read,", "12,000", "written"]


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        pytest.param(["--namespace", "Team_A"], '--namespace: Invalid value: "Team_A": a lowercase RFC 1123 label must consist of',
                     id="bad namespace"),
        pytest.param(["--chunk-size", "0"], "--chunk-size: Invalid value: 0: must be at least 1", id="chunk size 0"),
        pytest.param(["--selector", "app in (web"], "--selector: ", id="bad selector (the server's 400)"),
        pytest.param(["--kubeconfig", "no-such-kubeconfig"], "no-such-kubeconfig", id="missing kubeconfig"),
    ],
)
def test_bad_flags_are_one_line(
    served: Served, tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], line: str
) -> None:
    server = [] if "--kubeconfig" in flags else ["--server", served.server.url]
    code, out, err = run_cli(capsys, "snapshot", *server, "-o", str(tmp_path / "x.yaml"), *flags)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and err.startswith("kubesched: error: ") and line in err, err


def test_an_unreachable_server_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "snapshot", "--server", "http://127.0.0.1:9", "-o", str(tmp_path / "x.yaml"))
    assert code == 1
    assert not (tmp_path / "x.yaml").exists()  # no half snapshot left behind
    assert len(err.splitlines()) == 1 and err.startswith("kubesched: error: snapshot: GET /apis/scheduling.k8s.io/v1/priorityclasses")


def test_unknown_flag_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["snapshot", "--bogus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "unrecognized arguments: --bogus" in err


# --- the reduction, object by object ------------------------------------------------------------

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC).timestamp()


def test_the_epoch_is_simulates() -> None:
    assert inspect.signature(FakeCluster).parameters["epoch"].default == SIMULATE_EPOCH


def test_a_bound_pod_keeps_its_age_and_what_is_left_of_its_duration() -> None:
    red = Reducer(now=NOW)
    pod = (make_pod("p").node("n1").start_time("2025-03-01T11:50:00Z").creation_timestamp("2025-03-01T11:49:59.5Z")
           .annotation("kubesched.io/duration", "30m").annotation("kubesched.io/arrival", "5m")
           .annotation("kubectl.kubernetes.io/last-applied-configuration", "{}").phase("Running").obj())  # fmt: skip
    out = red.pod(pod)
    assert out is not None
    assert out.status.start_time == "2023-12-31T23:50:00Z"  # ten minutes before the start
    assert out.metadata.creation_timestamp == "2023-12-31T23:49:59Z"  # to the second, never later
    assert out.metadata.annotations == {"kubesched.io/duration": "20m0s"}
    assert out.status.phase == "" and out.status.conditions == []


def test_a_bound_pod_being_deleted_goes_when_its_grace_period_ends() -> None:
    red = Reducer(now=NOW)
    pod = make_pod("p").node("n1").terminating("2025-03-01T12:00:20Z").obj()
    pod.metadata.owner_references = [OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="rs", uid="u", controller=True)]
    out = red.pod(pod)
    assert out is not None
    assert out.metadata.annotations == {"kubesched.io/deletion": "20s"}
    assert out.metadata.owner_references == [] and out.spec.termination_grace_period_seconds == 0
    assert red.pod(make_pod("q").terminating("2025-03-01T12:00:20Z").obj()) is None


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_finished_pods_are_left_out(phase: str) -> None:
    red = Reducer(now=NOW)
    assert red.pod(make_pod("p").node("n1").phase(phase).obj()) is None
    assert red.left_out == {"finished pod(s)": 1}


def test_a_pod_whose_class_is_gone_keeps_its_priority() -> None:
    red = Reducer(now=NOW)
    assert red.priority_class(PriorityClass(metadata=ObjectMeta(name="system-node-critical"), value=2000001000)) is None
    gone = red.pod(make_pod("p").priority(5).obj())
    assert gone is not None
    pod = make_pod("p").priority(5).obj()
    pod.spec.priority_class_name = "deleted-class"
    out = red.pod(pod)
    assert out is not None and (out.spec.priority_class_name, out.spec.priority) == ("", 5)
    pod.spec.priority_class_name = "system-node-critical"
    out = red.pod(pod)
    assert out is not None and out.spec.priority_class_name == "system-node-critical"


def test_workloads_as_simulate_adopts_them() -> None:
    red = Reducer(now=NOW)
    owner = [OwnerReference(api_version="apps/v1", kind="Deployment", name="d", uid="d-uid", controller=True)]
    history = ReplicaSet(metadata=ObjectMeta(name="d-old", uid="r0", owner_references=owner))
    history.spec.replicas = 0
    assert red.replica_set(history) is None
    for i in (1, 2):  # two ReplicaSets with replicas: a rollout under way
        rs = ReplicaSet(metadata=ObjectMeta(name=f"d-{i}", uid=f"r{i}", owner_references=owner))
        rs.spec.replicas = 2
        assert red.replica_set(rs) is not None
    assert red.deployment(Deployment(metadata=ObjectMeta(name="d", uid="d-uid"))) is None
    assert red.deployment(Deployment(metadata=ObjectMeta(name="e", uid="e-uid"))) is not None

    job = Job(metadata=ObjectMeta(name="j", namespace="default", uid="j"))
    job.spec.parallelism, job.spec.completions = 3, 10
    job.status.active, job.status.succeeded = 2, 5
    out = red.job(job, b"{}")
    assert out is not None and (out.spec.parallelism, out.spec.completions) == (1, 3)
    assert out.status.active == 0
    assert red.job(job, b'{"spec": {"suspend": true}}') is None
    job.status.conditions = [JobCondition(type="Complete", status="True")]
    assert red.job(job, b"{}") is None
    assert summary(red, "out.yaml") == (
        "snapshot: wrote 0 Nodes, 0 Pods (0 pending) to out.yaml; left out 1 Deployment(s) in a rollout (written "
        "as their ReplicaSets), 1 ReplicaSet(s) scaled to 0, 2 finished or suspended Job(s)"
    )
    assert red.notes == [
        "Job default/j is written with the work left to start (parallelism 1, completions 3): the fake "
        "cluster's Job controller does not adopt its 2 active pod(s)"
    ]


class _Garbage:
    """An API server answering every GET with ``body``."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def request(self, method: str, path: str, **_: Any) -> bytes:
        return self.body


@pytest.mark.parametrize(
    ("body", "why"),
    [
        pytest.param(b"<html>502 Bad Gateway</html>", "JSON is malformed: invalid character (byte 0)", id="an HTML page"),
        pytest.param(b'{"items": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deep", id="JSON 100,000 deep"),
    ],
)
@pytest.mark.anyio
async def test_an_answer_that_is_not_a_list_is_one_line(body: bytes, why: str) -> None:
    """Issue 38 item 12: a transport error (the CLI's one line, exit 1), not a traceback."""
    from kubesched._errors import TransportError
    from kubesched.snapshot._snapshot import Counts, _pages

    with pytest.raises(TransportError) as info:
        async for _ in _pages(_Garbage(body), "/api/v1/nodes", {}, Counts()):
            pass
    assert str(info.value) == f"GET /api/v1/nodes: the answer is not a Kubernetes list: {why}"


def test_workload_api_objects_keep_their_spec_and_drop_the_schedulers_status() -> None:
    """A Workload API PodGroup's status (PodGroupScheduled) is the scheduler's to write again;
    a Workload has none.  Both are read where the cluster serves them (optional kinds)."""
    from kubesched.api import Condition, SchedulingPodGroup, Workload
    from kubesched.api._workload import (
        GangSchedulingPolicy,
        PodGroupPolicy,
        SchedulingPodGroupSpec,
        SchedulingPodGroupStatus,
    )
    from kubesched.snapshot._snapshot import KINDS

    red = Reducer(now=NOW)
    spec = SchedulingPodGroupSpec(scheduling_policy=PodGroupPolicy(gang=GangSchedulingPolicy(min_count=3)))
    pg = SchedulingPodGroup(
        metadata=ObjectMeta(name="pg", namespace="default", creation_timestamp="2025-03-01T11:00:00Z",
                            annotations={"kubectl.kubernetes.io/last-applied-configuration": "{}"}),
        spec=spec,
        status=SchedulingPodGroupStatus(conditions=[Condition(type="PodGroupScheduled", status="True", reason="Scheduled")]),
    )  # fmt: skip
    out = red.scheduling_pod_group(pg)
    assert out.spec == spec and out.status.conditions == [] and out.metadata.annotations == {}
    assert out.metadata.creation_timestamp == "2023-12-31T23:00:00Z"
    w = Workload(api_version="scheduling.k8s.io/v1alpha1", metadata=ObjectMeta(name="w", namespace="default"))
    assert red.workload(w).api_version == "scheduling.k8s.io/v1alpha1"
    optional = {(k.api_version, k.plural) for k in KINDS if k.optional}
    assert {("scheduling.k8s.io/v1alpha1", "workloads"), ("scheduling.k8s.io/v1alpha2", "workloads"),
            ("scheduling.k8s.io/v1alpha2", "podgroups")} <= optional  # fmt: skip
