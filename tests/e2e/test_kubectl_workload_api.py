"""kubectl with the Workload API on the fake API server (1.36, GenericWorkload on): apply, get,
watch and delete Workloads and PodGroups, and the name clash with scheduler-plugins' PodGroup
CRD, served side by side as on a real cluster with both: ``kubectl get podgroups`` is the
built-in ``scheduling.k8s.io`` one (discovery lists built-in groups first), ``pg`` and
``podgroups.scheduling.x-k8s.io`` the CRD's.  With the gate off, kubectl finds no such
resource.  Real time, bounded timeouts; one server per backend."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import anyio
import anyio.from_thread
import pytest

from kubesched.transports.apiserver import APIServer, write_kubeconfig
from kubesched.transports.fake import FakeCluster

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

OBJECTS = """\
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: train}
spec:
  podGroupTemplates:
  - name: workers
    schedulingPolicy: {gang: {minCount: 4}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: train-0}
spec:
  podGroupTemplateRef: {workload: {workloadName: train, podGroupTemplateName: workers}}
  schedulingPolicy: {gang: {minCount: 4}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: legacy}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: train-0-w0}
spec:
  schedulingGroup: {podGroupName: train-0}
  containers: [{name: c, image: trainer}]
"""


@asynccontextmanager
async def _serving(gates: dict[str, bool]) -> AsyncIterator[APIServer]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with FakeCluster(epoch=epoch) as cluster, APIServer(cluster, feature_gates=gates) as server:
        yield server


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def served(backend: str) -> Iterator[APIServer]:
    with (
        anyio.from_thread.start_blocking_portal(backend) as portal,
        portal.wrap_async_context_manager(_serving({"GenericWorkload": True})) as server,
    ):
        yield server


def _kubectl(kubeconfig: Path, cache: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [str(KUBECTL), "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache), "--request-timeout", "10s", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if check:
        assert proc.returncode == 0, f"kubectl {' '.join(args)} failed:\n{proc.stderr}"
    return proc


def test_kubectl_workloads_and_both_podgroups(served: APIServer, tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", served.url)

    def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
        return _kubectl(kubeconfig, tmp_path / "cache", *args)

    manifest = tmp_path / "objects.yaml"
    manifest.write_text(OBJECTS)
    assert kubectl("apply", "-f", str(manifest)).stdout.splitlines() == [
        "workload.scheduling.k8s.io/train created",
        "podgroup.scheduling.k8s.io/train-0 created",
        "podgroup.scheduling.x-k8s.io/legacy created",
        "pod/train-0-w0 created",
    ]
    assert kubectl("get", "workloads", "-o", "name").stdout.split() == ["workload.scheduling.k8s.io/train"]
    # the server's Table: upstream's printers (pkg/printers/internalversion/printers.go, the v1alpha2
    # copy: workloadColumnDefinitions / podGroupColumnDefinitions, printWorkload / printPodGroup)
    # have Name and Age only, -o wide too
    for resource, name in (("workloads", "train"), ("podgroups", "train-0")):
        for wide in ((), ("-o", "wide")):
            header, row = kubectl("get", resource, *wide).stdout.splitlines()
            assert header.split() == ["NAME", "AGE"] and row.split()[0] == name and row.split()[1].endswith("s")
    # the clash: the plural names the built-in kind, the short name and the full name the CRD's
    assert kubectl("get", "podgroups", "-o", "name").stdout.split() == ["podgroup.scheduling.k8s.io/train-0"]
    assert kubectl("get", "pg", "-o", "name").stdout.split() == ["podgroup.scheduling.x-k8s.io/legacy"]
    assert kubectl("get", "podgroups.scheduling.x-k8s.io", "-o", "name").stdout.split() == [
        "podgroup.scheduling.x-k8s.io/legacy"
    ]
    assert kubectl("get", "podgroups.v1alpha2.scheduling.k8s.io", "-o", "jsonpath={.items[0].spec.schedulingPolicy.gang.minCount}").stdout == "4"
    assert kubectl("get", "pod", "train-0-w0", "-o", "jsonpath={.spec.schedulingGroup.podGroupName}").stdout == "train-0"
    pg = served.cluster.get("SchedulingPodGroup", "default", "train-0")
    assert pg is not None and pg.min_count() == 4

    # the scheduler's condition through the status subresource, as kubectl patches it
    kubectl("patch", "podgroups", "train-0", "--subresource", "status", "--type", "merge", "-p",
            '{"status":{"conditions":[{"type":"PodGroupScheduled","status":"False","reason":"Unschedulable",'
            '"message":"0/0 nodes are available","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}')  # fmt: skip
    assert kubectl("get", "podgroups", "train-0", "-o", "jsonpath={.status.conditions[0].reason}").stdout == "Unschedulable"
    immutable = _kubectl(kubeconfig, tmp_path / "cache", "patch", "podgroups", "train-0", "--type", "merge",
                         "-p", '{"spec":{"schedulingPolicy":{"gang":{"minCount":2}}}}', check=False)  # fmt: skip
    assert immutable.returncode == 1 and "field is immutable" in immutable.stderr

    # watch: a new PodGroup / Workload arrives on a running `kubectl get <resource> -w`
    docs = OBJECTS.split("---\n")
    for resource, doc, first, new_name in (
        ("podgroups", docs[1].replace("train-0", "train-1"), "podgroup.scheduling.k8s.io/train-0", "podgroup.scheduling.k8s.io/train-1"),
        ("workloads", docs[0].replace("name: train}", "name: tune}"), "workload.scheduling.k8s.io/train", "workload.scheduling.k8s.io/tune"),
    ):  # fmt: skip
        cmd = [str(KUBECTL), "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"),
               "get", resource, "-w", "-o", "name"]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watchdog = threading.Timer(30, proc.kill)
        watchdog.start()
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == first
            (tmp_path / "new.yaml").write_text(doc)
            kubectl("apply", "-f", str(tmp_path / "new.yaml"))
            assert proc.stdout.readline().strip() == new_name
        finally:
            proc.kill()
            proc.wait()
            watchdog.cancel()
            for stream in (proc.stdout, proc.stderr):
                if stream:
                    stream.close()

    kubectl("delete", "-f", str(manifest))
    kubectl("delete", "podgroups", "train-1")
    kubectl("delete", "workloads", "tune")
    assert kubectl("get", "workloads,podgroups,pg", "-o", "name").stdout == ""


def test_kubectl_without_the_gate_finds_no_workloads(backend: str, tmp_path: Path) -> None:
    with (
        anyio.from_thread.start_blocking_portal(backend) as portal,
        portal.wrap_async_context_manager(_serving({})) as server,
    ):
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        missing = _kubectl(kubeconfig, tmp_path / "cache", "get", "workloads", check=False)
        assert missing.returncode == 1
        assert 'the server doesn\'t have a resource type "workloads"' in missing.stderr
        # podgroups is then scheduler-plugins' CRD alone
        (tmp_path / "legacy.yaml").write_text(OBJECTS.split("---\n")[2])
        _kubectl(kubeconfig, tmp_path / "cache", "apply", "-f", str(tmp_path / "legacy.yaml"))
        names = _kubectl(kubeconfig, tmp_path / "cache", "get", "podgroups", "-o", "name").stdout.split()
        assert names == ["podgroup.scheduling.x-k8s.io/legacy"]


def test_fake_apiserver_command_serves_the_workload_api_with_its_gate(tmp_path: Path) -> None:
    """``kubesched fake-apiserver --feature-gates GenericWorkload=true`` serves the files' Workload
    API objects; without the gate they are refused as kubectl would be (one line, exit 2)."""
    import os
    import signal
    import sys

    manifest = tmp_path / "objects.yaml"
    manifest.write_text(OBJECTS)
    base = [sys.executable, "-m", "kubesched.cli", "fake-apiserver", str(manifest)]
    refused = subprocess.run(base, capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"kubesched: error: {manifest}: document 1 (Workload train), kind: no matches for kind "
        '"Workload" in version "scheduling.k8s.io/v1alpha2" (served by Kubernetes 1.36 with --feature-gates '
        "GenericWorkload=true; emulated: 1.36, GenericWorkload off)"
    ]
    kubeconfig = tmp_path / "kubeconfig"
    cmd = [*base, "--feature-gates", "GenericWorkload=true", "--kubeconfig", str(kubeconfig)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    try:
        assert proc.stdout is not None
        while not proc.stdout.readline().startswith("kubeconfig: "):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        out = _kubectl(kubeconfig, tmp_path / "cache", "get", "workloads,podgroups,podgroups.scheduling.x-k8s.io", "-o", "name")
        assert out.stdout.split() == ["workload.scheduling.k8s.io/train", "podgroup.scheduling.k8s.io/train-0",
                                      "podgroup.scheduling.x-k8s.io/legacy"]  # fmt: skip
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
