"""Through the official Python client: an informer (list, then watch) sees the scheduler's
status writes change nothing outside ``status`` and ``metadata`` (trust on real inputs),
for pods loaded from files, made by a controller, and POSTed in JSON and in protobuf.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx
import pytest
from kubernetes import client as k8s
from kubernetes import watch as k8s_watch

from kubesched.scenario import load_manifests
from kubesched.service import serve_manifests
from kubesched.transports.apiserver import APIServer

# --- an informer through the scheduler's writes (trust on real inputs) -------------------------
# A kube-scheduler's informer takes a pod's update for a change only when the pod differs outside
# its status, resourceVersion and managedFields (isPodUpdated).  The pods: loaded from a file by
# `kubesched fake-apiserver FILE`, made by the fake cluster's ReplicaSet controller from a file's
# ReplicaSet, created by POST in JSON, and in protobuf as client-go sends it.

_FILE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: from-file, namespace: informed, labels: {app: web}}
spec:
  containers:
  - name: app
    image: registry.k8s.io/app:1.0
    ports: [{containerPort: 8080}]
    resources: {limits: {cpu: 500m}}
  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: from-controller, namespace: informed}
spec:
  replicas: 1
  selector: {matchLabels: {app: replicated}}
  template:
    metadata: {labels: {app: replicated}}
    spec:
      containers:
      - name: app
        image: registry.k8s.io/app:1.0
        ports: [{containerPort: 8080}]
        resources: {limits: {cpu: 500m}}
      tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]
"""
INFORMED = "informed"


def _f(number: int, value: int | str | bytes) -> bytes:
    """One protobuf field: a varint, or a length-delimited string/bytes/message."""

    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)

    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def _protobuf(api_version: str, kind: str, raw: bytes) -> bytes:
    """A runtime.Unknown (typeMeta 1: apiVersion 1, kind 2; raw 2) after the magic."""
    return b"k8s\x00" + _f(1, _f(1, api_version) + _f(2, kind)) + _f(2, raw) + _f(3, "")


def _protobuf_pod(name: str) -> bytes:
    """core/v1 Pod (metadata 1: name 1, namespace 3, labels 11; spec 2: containers 2 (name 1,
    image 2, ports 6 (containerPort 3), resources 8 (limits 1: cpu → Quantity{string 1})),
    tolerations 22 (key 1, operator 2, value 3, effect 4); status 3), with the zero-valued
    non-pointer fields gogo-protobuf writes."""
    meta = _f(1, name) + _f(2, "") + _f(3, INFORMED) + _f(8, b"") + _f(11, _f(1, "app") + _f(2, "web"))
    container = (
        _f(1, "app") + _f(2, "registry.k8s.io/app:1.0") + _f(5, "")
        + _f(6, _f(1, "") + _f(2, 0) + _f(3, 8080) + _f(4, ""))
        + _f(8, _f(1, _f(1, "cpu") + _f(2, _f(1, "500m"))))
        + _f(13, "") + _f(14, "") + _f(16, 0)
    )  # fmt: skip
    toleration = _f(1, "dedicated") + _f(2, "Equal") + _f(3, "gpu") + _f(4, "NoSchedule")
    spec = _f(2, container) + _f(3, "") + _f(6, "") + _f(10, "") + _f(11, 0) + _f(22, toleration)
    return _protobuf("v1", "Pod", _f(1, meta) + _f(2, spec) + _f(3, _f(1, "")))


@contextmanager
def _serving_files(backend: str, path: str) -> Iterator[APIServer]:
    """``kubesched fake-apiserver FILE``'s server (serve_manifests) on its own event loop."""
    ready: list[APIServer] = []
    started = threading.Event()

    def on_ready(server: APIServer) -> None:
        ready.append(server)
        started.set()

    with anyio.from_thread.start_blocking_portal(backend) as portal:
        manifests = load_manifests([path])
        future = portal.start_task_soon(
            functools.partial(serve_manifests, manifests, ready=on_ready)
        )
        try:
            assert started.wait(10), "the server did not start"
            yield ready[0]
        finally:
            future.cancel()


def _outside_status(obj: dict[str, Any]) -> dict[str, Any]:
    """What an informer compares: not the status, resourceVersion or managedFields; nor the
    apiVersion and kind, which client-go's decoder clears (a list's items have none)."""
    out = {k: v for k, v in obj.items() if k not in ("status", "apiVersion", "kind")}
    out["metadata"] = {
        k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "managedFields")
    }
    return out


def _inform(
    v1: k8s.CoreV1Api, write: Callable[[str], None], names: list[str]
) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """List (raw JSON), ``write`` each pod, then watch from the list's resourceVersion: each
    pod's (listed, watched) objects."""
    resp = v1.list_namespaced_pod(INFORMED, _preload_content=False)
    listing = json.loads(resp.data)
    listed = {i["metadata"]["name"]: i for i in listing["items"]}
    assert set(listed) == set(names)
    for item in listing["items"]:
        assert "apiVersion" not in item and "kind" not in item  # as upstream lists them
    for name in names:
        write(name)
    watched: dict[str, dict[str, Any]] = {}
    w = k8s_watch.Watch()
    for ev in w.stream(
        v1.list_namespaced_pod,
        INFORMED,
        resource_version=listing["metadata"]["resourceVersion"],
        timeout_seconds=5,
    ):
        assert ev["type"] == "MODIFIED", ev["type"]
        watched[ev["raw_object"]["metadata"]["name"]] = ev["raw_object"]
        if len(watched) == len(names):
            w.stop()
    assert set(watched) == set(names)
    return {n: (listed[n], watched[n]) for n in names}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_an_informer_sees_status_writes_change_only_the_status(
    backend: str, tmp_path: Path
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(_FILE)
    with (
        _serving_files(backend, str(path)) as server,
        k8s.ApiClient(k8s.Configuration(host=server.url)) as api,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        v1 = k8s.CoreV1Api(api)
        v1.create_namespaced_pod(
            INFORMED,
            {
                "metadata": {"name": "json", "labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "registry.k8s.io/app:1.0",
                         "ports": [{"containerPort": 8080}],
                         "resources": {"limits": {"cpu": "500m"}}}
                    ],
                    "tolerations": [
                        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
                    ],
                },
            },
        )  # fmt: skip
        pods = f"/api/v1/namespaces/{INFORMED}/pods"
        r = http.post(
            pods,
            content=_protobuf_pod("protobuf"),
            headers={"content-type": "application/vnd.kubernetes.protobuf"},
        )
        assert r.status_code == 201, r.text
        [replicated] = [
            p.metadata.name
            for p in v1.list_namespaced_pod(INFORMED).items
            if p.metadata.name.startswith("from-controller-")
        ]
        names = ["from-file", replicated, "json", "protobuf"]
        # the four are the same pod: a file's and a controller's get the defaults a POSTed one
        # gets, and are read as any other (apiVersion and kind included)
        read = [
            json.loads(v1.read_namespaced_pod(n, INFORMED, _preload_content=False).data)
            for n in names
        ]
        assert all((p["apiVersion"], p["kind"]) == ("v1", "Pod") for p in read)
        assert read[0]["spec"] == read[1]["spec"] == read[2]["spec"] == read[3]["spec"]
        assert read[0]["spec"]["tolerations"][1]["key"] == "node.kubernetes.io/not-ready"
        assert read[0]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m"}

        def unschedulable(name: str) -> None:
            # the scheduler's status patch (util.PatchPodStatus): strategic merge, uid as a
            # precondition
            uid = v1.read_namespaced_pod(name, INFORMED).metadata.uid
            patch = {
                "metadata": {"uid": uid},
                "status": {
                    "$setElementOrder/conditions": [{"type": "PodScheduled"}],
                    "conditions": [
                        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                         "message": "0/1 nodes are available: 1 Insufficient cpu.",
                         "lastProbeTime": None, "lastTransitionTime": "2024-01-01T00:00:00Z"}
                    ],
                },
            }  # fmt: skip
            r = http.patch(
                f"{pods}/{name}/status",
                content=json.dumps(patch),
                headers={"content-type": "application/strategic-merge-patch+json"},
            )
            assert r.status_code == 200, r.text

        for name, (old, new) in _inform(v1, unschedulable, names).items():
            assert _outside_status(new) == _outside_status(old), name
            assert new["status"]["conditions"][0]["reason"] == "Unschedulable", name
            assert new["metadata"]["generation"] == old["metadata"]["generation"], name

        def status_put(name: str) -> None:
            # a status PUT with a changed spec: the spec is ignored
            pod = v1.read_namespaced_pod(name, INFORMED)
            pod.spec.node_name = "elsewhere"
            pod.status.nominated_node_name = "n1"
            v1.replace_namespaced_pod_status(name, INFORMED, pod)

        for name, (old, new) in _inform(v1, status_put, names).items():
            assert _outside_status(new) == _outside_status(old), name
            assert new["status"]["nominatedNodeName"] == "n1", name

        def bind(name: str) -> None:
            # the binding subresource: JSON, or protobuf (core/v1 Binding: metadata 1, target 2)
            # for the pod created in protobuf
            url = f"{pods}/{name}/binding"
            if name == "protobuf":
                raw = _f(1, _f(1, name) + _f(3, INFORMED)) + _f(2, _f(1, "Node") + _f(3, "n1"))
                r = http.post(
                    url,
                    content=_protobuf("v1", "Binding", raw),
                    headers={"content-type": "application/vnd.kubernetes.protobuf"},
                )
            else:
                target = {"kind": "Node", "name": "n1"}
                r = http.post(url, json={"metadata": {"name": name}, "target": target})
            assert r.status_code == 201, r.text

        for name, (old, new) in _inform(v1, bind, names).items():
            # the binding's own change: spec.nodeName (and the status: PodScheduled, Running)
            assert _outside_status(new) == _outside_status(old) | {
                "spec": old["spec"] | {"nodeName": "n1"}
            }, name
            assert new["status"]["phase"] == "Running", name
