"""kubectl with the resource.k8s.io kinds on the fake API server: apply, get (upstream's
printer columns: a claim's State, a slice's Node, Driver and Pool), describe-free reads by
jsonpath, watch, delete; the resourceclaim controller's generated claim shows up as kubectl
sees it.  Real time, bounded timeouts; one server per backend."""

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

DRA = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0, attributes: {model: {string: A100}}}]
---
apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata: {name: maintenance}
spec:
  deviceSelector: {driver: gpu.example.com}
  taint: {key: example.com/maintenance, effect: NoSchedule}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: train}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: c, image: trainer, resources: {claims: [{name: gpu}]}}]
"""


@asynccontextmanager
async def _serving() -> AsyncIterator[APIServer]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with FakeCluster(epoch=epoch) as cluster, APIServer(cluster) as server:
        yield server


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def served(request: pytest.FixtureRequest) -> Iterator[APIServer]:
    with (
        anyio.from_thread.start_blocking_portal(request.param) as portal,
        portal.wrap_async_context_manager(_serving()) as server,
    ):
        yield server


def _kubectl(kubeconfig: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [str(KUBECTL), "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache), "--request-timeout", "10s", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, f"kubectl {' '.join(args)} failed:\n{proc.stderr}"
    return proc


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines()]


def test_kubectl_apply_get_watch_delete_dra_kinds(served: APIServer, tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", served.url)

    def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
        return _kubectl(kubeconfig, tmp_path / "cache", *args)

    manifest = tmp_path / "dra.yaml"
    manifest.write_text(DRA)
    assert kubectl("apply", "-f", str(manifest)).stdout.splitlines() == [
        "deviceclass.resource.k8s.io/gpu.example.com created",
        "resourceslice.resource.k8s.io/n1-gpu created",
        "devicetaintrule.resource.k8s.io/maintenance created",
        "resourceclaimtemplate.resource.k8s.io/one-gpu created",
        "resourceclaim.resource.k8s.io/shared created",
        "pod/train created",
    ]
    slices = _rows(kubectl("get", "resourceslices").stdout)
    assert slices[0] == ["NAME", "NODE", "DRIVER", "POOL", "AGE"] and slices[1][:4] == ["n1-gpu", "n1", "gpu.example.com", "n1"]
    claims = _rows(kubectl("get", "resourceclaims").stdout)
    assert claims[0] == ["NAME", "STATE", "AGE"]
    generated = kubectl("get", "pod", "train", "-o", "jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}").stdout
    assert generated.startswith("train-gpu-")
    assert sorted((r[0], r[1]) for r in claims[1:]) == sorted([("shared", "pending"), (generated, "pending")])
    assert kubectl("get", "resourceclaim", generated, "-o", "jsonpath={.metadata.ownerReferences[0].name}").stdout == "train"
    assert kubectl("get", "deviceclasses", "-o", "name").stdout.split() == ["deviceclass.resource.k8s.io/gpu.example.com"]
    assert kubectl("get", "devicetaintrules", "-o", "jsonpath={.items[0].spec.taint.timeAdded}").stdout  # defaulted
    assert kubectl("get", "resourceclaimtemplates", "-o", "name").stdout.split() == ["resourceclaimtemplate.resource.k8s.io/one-gpu"]

    # watch: the claim made for a new pod arrives on a running `kubectl get -w`
    cmd = [str(KUBECTL), "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"),
           "get", "resourceclaims", "-w", "-o", "name"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    try:
        assert proc.stdout is not None
        seen = {proc.stdout.readline().strip(), proc.stdout.readline().strip()}
        assert seen == {"resourceclaim.resource.k8s.io/shared", f"resourceclaim.resource.k8s.io/{generated}"}
        (tmp_path / "pod2.yaml").write_text(DRA.split("---\n")[-1].replace("name: train", "name: tune"))
        kubectl("apply", "-f", str(tmp_path / "pod2.yaml"))
        assert proc.stdout.readline().strip().startswith("resourceclaim.resource.k8s.io/tune-gpu-")
    finally:
        proc.kill()
        proc.wait()
        watchdog.cancel()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()

    # the generated claims go with their pods
    kubectl("delete", "pod", "train", "tune")
    left = kubectl("get", "resourceclaims", "-o", "name").stdout.split()
    assert left == ["resourceclaim.resource.k8s.io/shared"]
    kubectl("delete", "-f", str(manifest), "--ignore-not-found")
    assert kubectl("get", "resourceslices,deviceclasses,devicetaintrules", "-o", "name").stdout == ""
