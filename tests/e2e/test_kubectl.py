"""kubectl against the fake API server: the walkthrough a user copies from the README.

The server runs on its own event loop in a background thread (one per backend); kubectl runs
with its own kubeconfig and cache dir in a temporary directory.  Real time, bounded timeouts.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import httpx
import pytest

from kubesched.transports.apiserver import APIServer, write_kubeconfig
from kubesched.transports.fake import FakeCluster

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

CLUSTER = """\
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {zone: a}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: n2
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: 500m}}
---
apiVersion: v1
kind: Pod
metadata:
  name: batch
spec:
  containers:
  - name: c
    image: busybox
"""

SCHEDULING = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang, namespace: team-a}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: urgent, namespace: team-a}
spec:
  priorityClassName: high
  containers: [{name: c, image: nginx}]
"""


@asynccontextmanager
async def _serving() -> AsyncIterator[APIServer]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with FakeCluster(epoch=epoch) as cluster, APIServer(cluster) as server:
        yield server


class Kubectl:
    def __init__(self, kubeconfig: Path, cache: Path) -> None:
        self.base = [
            str(KUBECTL),
            "--kubeconfig",
            str(kubeconfig),
            "--cache-dir",
            str(cache),
            "--request-timeout",
            "10s",
        ]

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=30)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}"
            )
        return proc

    def rows(self, *args: str) -> list[dict[str, str]]:
        """A `kubectl get` table as dicts keyed by column header."""
        lines = self(*args).stdout.splitlines()
        header = lines[0]
        starts = [
            i
            for i, ch in enumerate(header)
            if ch != " " and (i == 0 or header[i - 1] == " " and header[i - 2 : i] == "  ")
        ]
        starts = [0] + [s for s in starts if s > 0]
        names = [header[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        return [
            {
                n: line[a:b].strip()
                for n, a, b in zip(names, starts, [*starts[1:], None], strict=True)
            }
            for line in lines[1:]
        ]


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def served(request: pytest.FixtureRequest) -> Iterator[APIServer]:
    with (
        anyio.from_thread.start_blocking_portal(request.param) as portal,
        portal.wrap_async_context_manager(_serving()) as server,
    ):
        yield server


@pytest.fixture
def kubectl(served: APIServer, tmp_path: Path) -> Kubectl:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", served.url)
    return Kubectl(kubeconfig, tmp_path / "cache")


def _bind(server: APIServer, namespace: str, pod: str, node: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod},
        "target": {"kind": "Node", "name": node},
    }
    r = httpx.post(
        f"{server.url}/api/v1/namespaces/{namespace}/pods/{pod}/binding", json=body, timeout=10
    )
    assert r.status_code == 201, r.text


def test_kubectl_walkthrough(kubectl: Kubectl, served: APIServer, tmp_path: Path) -> None:
    manifest = tmp_path / "cluster.yaml"
    manifest.write_text(CLUSTER)
    out = kubectl("apply", "-f", str(manifest)).stdout
    assert out.splitlines() == [
        "node/n1 created",
        "node/n2 created",
        "pod/web created",
        "pod/batch created",
    ]

    nodes = kubectl.rows("get", "nodes")
    assert [(n["NAME"], n["STATUS"], n["ROLES"]) for n in nodes] == [
        ("n1", "Ready", "<none>"),
        ("n2", "Ready", "<none>"),
    ]

    pods = kubectl.rows("get", "pods", "-o", "wide")
    assert [(p["NAME"], p["STATUS"], p["NODE"]) for p in pods] == [
        ("batch", "Pending", "<none>"),
        ("web", "Pending", "<none>"),
    ]

    _bind(served, "default", "web", "n2")  # what `kubesched run` does for it
    pods = kubectl.rows("get", "pods", "-o", "wide")
    assert [(p["NAME"], p["READY"], p["STATUS"], p["NODE"]) for p in pods] == [
        ("batch", "0/1", "Pending", "<none>"),
        ("web", "1/1", "Running", "n2"),
    ]

    # client-side apply of a changed manifest: GET, then a strategic merge PATCH
    manifest.write_text(CLUSTER.replace("zone: a", "zone: b"))
    out = kubectl("apply", "-f", str(manifest)).stdout
    assert out.splitlines() == [
        "node/n1 configured",
        "node/n2 unchanged",
        "pod/web unchanged",
        "pod/batch unchanged",
    ]
    assert kubectl("get", "node", "n1", "-o", "jsonpath={.metadata.labels.zone}").stdout == "b"

    # deleting an unbound pod is immediate; a running one terminates after its grace period
    assert kubectl("delete", "pod", "batch").stdout.strip() == 'pod "batch" deleted'
    assert kubectl("delete", "pod", "web", "--timeout=20s").stdout.strip() == 'pod "web" deleted'
    empty = kubectl("get", "pods")
    assert empty.stdout == "" and "No resources found in default namespace." in empty.stderr
    assert served.cluster.pods() == []


def test_kubectl_server_side_apply_and_other_kinds(
    kubectl: Kubectl, served: APIServer, tmp_path: Path
) -> None:
    manifest = tmp_path / "scheduling.yaml"
    manifest.write_text(SCHEDULING)
    for _ in range(2):  # creates, then applies again
        out = kubectl("apply", "--server-side", "-f", str(manifest)).stdout
        assert out.splitlines() == [
            "priorityclass.scheduling.k8s.io/high serverside-applied",
            "poddisruptionbudget.policy/web serverside-applied",
            "podgroup.scheduling.x-k8s.io/gang serverside-applied",
            "pod/urgent serverside-applied",
        ]
    pcs = kubectl.rows("get", "priorityclasses")
    assert [(p["NAME"], p["VALUE"], p["GLOBAL-DEFAULT"]) for p in pcs] == [
        ("high", "1000", "false")
    ]
    pdbs = kubectl.rows("get", "pdb")
    assert [(p["NAME"], p["MIN AVAILABLE"], p["ALLOWED DISRUPTIONS"]) for p in pdbs] == [
        ("web", "1", "0")
    ]
    assert [p["NAME"] for p in kubectl.rows("get", "podgroups", "-n", "team-a")] == ["gang"]
    everywhere = kubectl.rows("get", "pods", "-A")
    assert [(p["NAMESPACE"], p["NAME"]) for p in everywhere] == [("team-a", "urgent")]
    assert (
        kubectl("get", "pod", "urgent", "-n", "team-a", "-o", "jsonpath={.spec.priority}").stdout
        == "1000"
    )
    assert "team-a" in [n["NAME"] for n in kubectl.rows("get", "namespaces")]

    kubectl(
        "patch", "pg", "gang", "-n", "team-a", "--type", "merge", "-p", '{"spec":{"minMember":3}}'
    )
    assert (
        kubectl("get", "pg", "gang", "-n", "team-a", "-o", "jsonpath={.spec.minMember}").stdout
        == "3"
    )
    kubectl("label", "pod", "urgent", "-n", "team-a", "tier=gold")
    assert [p["NAME"] for p in kubectl.rows("get", "pods", "-A", "-l", "tier=gold")] == ["urgent"]
    kubectl("delete", "-f", str(manifest))
    assert served.cluster.list("PodGroup") == [] and served.cluster.pods() == []


def test_kubectl_shows_scheduler_events(kubectl: Kubectl, served: APIServer) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "lonely"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    created = httpx.post(
        f"{served.url}/api/v1/namespaces/default/pods", json=pod, timeout=10
    ).json()
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "lonely.1", "namespace": "default"},
        "eventTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "reportingController": "kubesched",
        "reportingInstance": "kubesched-0",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "type": "Warning",
        "regarding": {
            "kind": "Pod",
            "apiVersion": "v1",
            "namespace": "default",
            "name": "lonely",
            "uid": created["metadata"]["uid"],
        },
        "note": "0/2 nodes are available: 2 Insufficient cpu.",
    }
    r = httpx.post(
        f"{served.url}/apis/events.k8s.io/v1/namespaces/default/events", json=event, timeout=10
    )
    assert r.status_code == 201, r.text
    rows = kubectl.rows("get", "events")
    assert [(e["TYPE"], e["REASON"], e["OBJECT"], e["MESSAGE"]) for e in rows] == [
        (
            "Warning",
            "FailedScheduling",
            "pod/lonely",
            "0/2 nodes are available: 2 Insufficient cpu.",
        )
    ]
    described = kubectl("describe", "pod", "lonely").stdout
    assert (
        "FailedScheduling" in described
        and "0/2 nodes are available: 2 Insufficient cpu." in described
    )
    kubectl("delete", "pod", "lonely")


def test_fake_apiserver_command(tmp_path: Path) -> None:
    manifest = tmp_path / "cluster.yaml"
    manifest.write_text(CLUSTER)
    kubeconfig = tmp_path / "kubeconfig"
    cmd = [
        sys.executable,
        "-m",
        "kubesched.cli",
        "fake-apiserver",
        str(manifest),
        "--port",
        "0",
        "--kubeconfig",
        str(kubeconfig),
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    try:
        lines: list[Any] = []
        while not any(line.startswith("kubeconfig: ") for line in lines):
            line = proc.stdout.readline() if proc.stdout else ""
            assert line, f"fake-apiserver exited early: {proc.stderr.read() if proc.stderr else ''}"
            lines.append(line.strip())
        assert lines[0].startswith("serving the fake cluster on http://127.0.0.1:")
        assert lines[1] == f"kubeconfig: {kubeconfig}"
        kubectl = Kubectl(kubeconfig, tmp_path / "cache")
        assert [n["NAME"] for n in kubectl.rows("get", "nodes")] == ["n1", "n2"]
        assert [p["NAME"] for p in kubectl.rows("get", "pods")] == ["batch", "web"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def test_fake_apiserver_rejects_bad_manifests(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, resources: {requests: {cpu: lots}}}]\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched.cli", "fake-apiserver", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(
        f"kubesched: error: {bad}: document 1 (Pod p), spec.containers[0].resources.requests.cpu"
    )


def test_kubectl_create_deployment_and_job_make_pods(kubectl: Kubectl, served: APIServer) -> None:
    """The fake cluster's ReplicaSet, Deployment and Job controllers behind the API: what
    ``kubesched run`` then places."""
    out = kubectl("create", "deployment", "web", "--image=nginx", "--replicas=3", "-n", "apps").stdout
    assert out.strip() == "deployment.apps/web created"
    pods = [p for p in served.cluster.pods() if p.metadata.namespace == "apps"]
    assert len(pods) == 3
    [rs] = [r for r in served.cluster.list("ReplicaSet") if r.metadata.namespace == "apps"]
    assert rs.metadata.name.startswith("web-") and rs.metadata.owner_references[0].kind == "Deployment"
    assert all(p.metadata.name.startswith(rs.metadata.name + "-") for p in pods)
    assert all(p.metadata.owner_references[0].name == rs.metadata.name for p in pods)
    assert [r["NAME"] for r in kubectl.rows("get", "rs", "-n", "apps")] == [rs.metadata.name]
    assert len(kubectl.rows("get", "pods", "-n", "apps")) == 3

    out = kubectl("create", "job", "once", "--image=busybox", "-n", "apps").stdout
    assert out.strip() == "job.batch/once created"
    [job_pod] = [p for p in served.cluster.pods() if p.metadata.labels.get("job-name") == "once"]
    _bind(served, "apps", job_pod.metadata.name, "n1")
    assert kubectl("get", "job", "once", "-n", "apps", "-o", "jsonpath={.status.active}").stdout == "1"

    # deleting the Deployment takes its ReplicaSet and pods with it (the garbage collector)
    kubectl("delete", "deployment", "web", "-n", "apps")
    kubectl("delete", "job", "once", "-n", "apps")
    assert [p for p in served.cluster.pods() if p.metadata.namespace == "apps" and not p.metadata.deletion_timestamp] == []


REPLICA_SET = """\
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: api, namespace: scaling}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: c, image: pause}]
"""


def _active_pods(server: APIServer, namespace: str, prefix: str) -> list[str]:
    return sorted(
        p.metadata.name
        for p in server.cluster.pods()
        if p.metadata.namespace == namespace
        and p.metadata.name.startswith(prefix)
        and p.metadata.deletion_timestamp is None
    )


def test_kubectl_scale_deployment_and_replicaset(
    kubectl: Kubectl, served: APIServer, tmp_path: Path
) -> None:
    """``kubectl scale`` through the autoscaling/v1 ``scale`` subresource; the fake cluster's
    Deployment and ReplicaSet controllers make the pods."""
    kubectl("create", "namespace", "scaling")
    out = kubectl(
        "create", "deployment", "web", "--image=nginx", "--replicas=2", "--port=80",
        "-n", "scaling", "--", "sleep", "3600",
    ).stdout  # fmt: skip
    assert out.strip() == "deployment.apps/web created"
    assert len(_active_pods(served, "scaling", "web-")) == 2
    # a merge patch of deployments/web/scale
    out = kubectl("scale", "deployment/web", "--replicas=5", "-n", "scaling").stdout
    assert out.strip() == "deployment.apps/web scaled"
    pods = _active_pods(served, "scaling", "web-")
    assert len(pods) == 5
    assert (
        kubectl("get", "deploy", "web", "-n", "scaling", "-o", "jsonpath={.spec.replicas}").stdout
        == "5"
    )
    [rs] = [r for r in served.cluster.list("ReplicaSet") if r.metadata.namespace == "scaling"]
    assert rs.spec.replicas == 5
    # the new pods are the template kubectl sent (protobuf): its port and command
    pod = kubectl("get", "pod", pods[-1], "-n", "scaling", "-o", "jsonpath={.spec.containers[0]}")
    assert '"command":["sleep","3600"]' in pod.stdout
    assert '"ports":[{"containerPort":80,"protocol":"TCP"}]' in pod.stdout
    rows = kubectl.rows("get", "deployment", "web", "-n", "scaling", "--subresource=scale")
    assert [(r["NAME"], r["DESIRED"]) for r in rows] == [("web", "5")]

    manifest = tmp_path / "rs.yaml"
    manifest.write_text(REPLICA_SET)
    kubectl("apply", "-f", str(manifest))
    assert len(_active_pods(served, "scaling", "api-")) == 1
    out = kubectl("scale", "rs/api", "--replicas=3", "-n", "scaling").stdout
    assert out.strip() == "replicaset.apps/api scaled"
    assert len(_active_pods(served, "scaling", "api-")) == 3
    # with a precondition kubectl reads the Scale and PUTs it back
    kubectl("scale", "rs/api", "--current-replicas=3", "--replicas=2", "-n", "scaling")
    assert len(_active_pods(served, "scaling", "api-")) == 2
    failed = kubectl(
        "scale", "rs/api", "--current-replicas=9", "--replicas=1", "-n", "scaling", check=False
    )
    assert failed.returncode == 1 and "Expected replicas to be 9, was 2" in failed.stderr
    rows = kubectl.rows("get", "rs", "api", "-n", "scaling", "--subresource=scale")
    assert [(r["NAME"], r["DESIRED"], r["AVAILABLE"]) for r in rows] == [("api", "2", "2")]

    # a Job has no scale subresource (upstream removed it): kubectl gets a 404
    kubectl("create", "job", "once", "--image=busybox", "-n", "scaling")
    failed = kubectl("scale", "job/once", "--replicas=2", "-n", "scaling", check=False)
    assert failed.returncode == 1
    assert (
        "Error from server (NotFound): the server could not find the requested resource"
        in failed.stderr
    )


LEGACY_EVENT = {
    "apiVersion": "v1",
    "kind": "Event",
    "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": "timeline", "name": "p"},
    "source": {"component": "kubelet", "host": "n1"},
    "count": 1,
    "type": "Normal",
}


def test_kubectl_get_events_sorted_by_last_timestamp(kubectl: Kubectl, served: APIServer) -> None:
    """core/v1 Events as kubectl sorts them: the controllers' (first and last seen now), two a
    core/v1 recorder sent out of order, and the scheduler's events.k8s.io/v1 one (no
    lastTimestamp: upstream's conversion derives none, so it sorts first)."""
    kubectl("create", "namespace", "timeline")
    events = f"{served.url}/api/v1/namespaces/timeline/events"
    for name, reason, at in (
        ("p.2", "Pulled", "2024-01-01T00:00:03Z"),
        ("p.1", "Pulling", "2024-01-01T00:00:01Z"),
    ):
        body = LEGACY_EVENT | {"metadata": {"name": name}, "reason": reason,
                               "message": reason.lower(), "firstTimestamp": at, "lastTimestamp": at}  # fmt: skip
        assert httpx.post(events, json=body, timeout=10).status_code == 201
    scheduler_event = {
        "metadata": {"name": "p.0"},
        "eventTime": "2024-01-01T00:00:02.000000Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-n0",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "type": "Warning",
        "regarding": LEGACY_EVENT["involvedObject"],
        "note": "0/1 nodes are available: 1 Insufficient cpu.",
    }
    r = httpx.post(
        f"{served.url}/apis/events.k8s.io/v1/namespaces/timeline/events",
        json=scheduler_event,
        timeout=10,
    )
    assert r.status_code == 201, r.text
    kubectl("create", "deployment", "web", "--image=nginx", "--replicas=1", "-n", "timeline")

    rows = kubectl.rows("get", "events", "-n", "timeline", "--sort-by=.lastTimestamp")
    assert [(e["TYPE"], e["REASON"], e["OBJECT"]) for e in rows[:3]] == [
        ("Warning", "FailedScheduling", "pod/p"),
        ("Normal", "Pulling", "pod/p"),
        ("Normal", "Pulled", "pod/p"),
    ]
    later = {(e["REASON"], e["OBJECT"].split("/")[0]) for e in rows[3:]}
    assert later == {("ScalingReplicaSet", "deployment"), ("SuccessfulCreate", "replicaset")}
    columns = "LAST:.lastTimestamp,COUNT:.count,SOURCE:.source.component,REASON:.reason"
    rows = kubectl.rows(
        "get",
        "events",
        "-n",
        "timeline",
        "--sort-by=.lastTimestamp",
        "-o",
        f"custom-columns={columns}",
    )
    assert rows[0] == {
        "LAST": "<nil>",
        "COUNT": "<none>",
        "SOURCE": "<none>",
        "REASON": "FailedScheduling",
    }
    seen = [e["LAST"] for e in rows[1:]]
    assert seen[:2] == ["2024-01-01T00:00:01Z", "2024-01-01T00:00:03Z"] and seen == sorted(seen)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", t) for t in seen)
    wide = kubectl.rows("get", "events", "-n", "timeline", "-o", "wide")
    assert {
        ("Pulling", "kubelet, n1", "1"),
        ("FailedScheduling", "default-scheduler, default-scheduler-n0", "1"),
        ("ScalingReplicaSet", "deployment-controller", "1"),
    } <= {(e["REASON"], e["SOURCE"], e["COUNT"]) for e in wide}
    assert {(e["COUNT"], e["SOURCE"]) for e in rows[3:]} == {
        ("1", "deployment-controller"),
        ("1", "replicaset-controller"),
    }


def test_kubectl_create_sends_protobuf_of_the_kinds_served(kubectl: Kubectl) -> None:
    """``kubectl create`` of these kinds sends protobuf (its typed clients): each is decoded."""
    for args, out in (
        (("namespace", "made"), "namespace/made created"),
        (("priorityclass", "urgent", "--value=1000", "--description=x"),
         "priorityclass.scheduling.k8s.io/urgent created"),
        (("poddisruptionbudget", "web", "-n", "made", "--selector=app=web", "--min-available=1"),
         "poddisruptionbudget.policy/web created"),
        (("service", "clusterip", "web", "-n", "made", "--tcp=80:8080"), "service/web created"),
    ):  # fmt: skip
        assert kubectl("create", *args).stdout.strip() == out
    assert (
        kubectl("get", "ns", "made", "-o", "jsonpath={.spec.finalizers}").stdout == '["kubernetes"]'
    )
    assert (
        kubectl("get", "pc", "urgent", "-o", "jsonpath={.value} {.description}").stdout == "1000 x"
    )
    pdb = kubectl(
        "get", "pdb", "web", "-n", "made", "-o", "jsonpath={.spec.minAvailable} {.spec.selector}"
    )
    assert pdb.stdout == '1 {"matchLabels":{"app":"web"}}'
    svc = kubectl("get", "svc", "web", "-n", "made", "-o", "jsonpath={.spec.ports[0]}")
    assert svc.stdout == '{"name":"80-8080","port":80,"protocol":"TCP","targetPort":8080}'
