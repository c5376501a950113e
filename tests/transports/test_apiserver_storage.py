"""The storage kinds and StatefulSets through the fake API server, served from the fake cluster
(the registry's ``backend=CLUSTER`` rows): what the official client or kubectl creates, reads,
lists, watches, updates and deletes is the object the fake cluster (its controllers, the
scheduler's informers) has; the API server's defaults and validation apply; the status
subresource changes only the status; ``kubectl get pv,pvc,sc,csinode,sts`` prints them.

The server runs on its own event loop in a background thread (one per backend), as in
``tests/e2e/test_official_client.py``; the clients are synchronous.  Real time, bounded timeouts.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio.from_thread
import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

from kubesched.transports.apiserver import APIServer, write_kubeconfig
from kubesched.transports.fake import FakeCluster

NS = "storage"
KUBECTL = shutil.which("kubectl")


@dataclass
class Served:
    server: APIServer
    cluster: FakeCluster
    portal: Any

    def in_cluster(self, kind: str, namespace: str, name: str) -> Any:
        """The fake cluster's own object (a kubesched struct), read on the server's loop."""
        return self.portal.call(lambda: self.cluster.get(kind, namespace, name))


@asynccontextmanager
async def _server() -> AsyncIterator[tuple[APIServer, FakeCluster]]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with FakeCluster(epoch=epoch) as cluster, APIServer(cluster) as server:
        yield server, cluster


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    with (
        anyio.from_thread.start_blocking_portal(request.param) as portal,
        portal.wrap_async_context_manager(_server()) as (server, cluster),
    ):
        yield Served(server, cluster, portal)


@pytest.fixture(scope="module")
def api(served: Served) -> Iterator[k8s.ApiClient]:
    with k8s.ApiClient(k8s.Configuration(host=served.server.url)) as c:
        k8s.CoreV1Api(c).create_namespace({"metadata": {"name": NS}})
        yield c


_TEMPLATE = {
    "metadata": {"labels": {"app": "db"}},
    "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]},
}

# (apiVersion, kind, namespaced, object, an update of it: a JSON merge patch laid over it)
KINDS: list[tuple[str, str, bool, dict[str, Any], dict[str, Any]]] = [
    ("storage.k8s.io/v1", "StorageClass", False,
     {"metadata": {"name": "fast"}, "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"},
     {"metadata": {"labels": {"tier": "gold"}}}),
    ("storage.k8s.io/v1", "CSIDriver", False,
     {"metadata": {"name": "csi.example.com"}, "spec": {"attachRequired": False}},
     {"metadata": {"labels": {"vendor": "example"}}}),
    ("storage.k8s.io/v1", "CSINode", False,
     {"metadata": {"name": "n1"},
      "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1", "allocatable": {"count": 2}}]}},
     {"spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1", "allocatable": {"count": 3}}]}}),
    ("storage.k8s.io/v1", "CSIStorageCapacity", True,
     {"metadata": {"name": "cap"}, "storageClassName": "fast", "capacity": "1Gi",
      "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}},
     {"capacity": "10Gi"}),
    ("v1", "PersistentVolume", False,
     {"metadata": {"name": "pv1"},
      "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "manual",
               "csi": {"driver": "csi.example.com", "volumeHandle": "vol-1"}}},
     {"metadata": {"labels": {"disk": "ssd"}}}),
    ("v1", "PersistentVolumeClaim", True,
     {"metadata": {"name": "data"},
      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
               "storageClassName": "unknown"}},
     {"metadata": {"annotations": {"note": "x"}}}),
    ("apps/v1", "StatefulSet", True,
     {"metadata": {"name": "db"},
      "spec": {"replicas": 0, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}}, "template": _TEMPLATE,
               "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                         "spec": {"accessModes": ["ReadWriteOnce"],
                                                  "resources": {"requests": {"storage": "1Gi"}}}}]}},
     {"metadata": {"labels": {"team": "db"}}}),
]  # fmt: skip


def _merge(obj: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for k, v in patch.items():
        out[k] = _merge(out.get(k) or {}, v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


@pytest.mark.parametrize(("gv", "kind", "namespaced", "obj", "change"), [pytest.param(*k, id=k[1]) for k in KINDS])
def test_crud_with_the_official_client_lands_in_the_fake_cluster(
    served: Served, api: k8s.ApiClient, gv: str, kind: str, namespaced: bool, obj: dict[str, Any], change: dict[str, Any]
) -> None:
    resource = DynamicClient(api).resources.get(api_version=gv, kind=kind)
    ns = NS if namespaced else None
    name = obj["metadata"]["name"]
    listed_rv = resource.get(namespace=ns).metadata.resourceVersion

    created = resource.create(body={"apiVersion": gv, "kind": kind, **obj}, namespace=ns).to_dict()
    assert created["metadata"]["uid"] and created["metadata"]["name"] == name
    held = served.in_cluster(kind, ns or "", name)
    assert held is not None and held.metadata.uid == created["metadata"]["uid"]

    got = resource.get(name=name, namespace=ns).to_dict()
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    names = [i["metadata"]["name"] for i in resource.get(namespace=ns).to_dict()["items"]]
    assert name in names

    current = resource.get(name=name, namespace=ns).to_dict()
    updated = resource.replace(body=_merge(current, change), namespace=ns).to_dict()
    assert _merge(updated, change) == updated  # the change is there
    assert int(updated["metadata"]["resourceVersion"]) > int(current["metadata"]["resourceVersion"])
    held = served.in_cluster(kind, ns or "", name)
    assert held.metadata.resource_version == updated["metadata"]["resourceVersion"]

    resource.delete(name=name, namespace=ns)
    with pytest.raises(ApiException) as e:
        resource.get(name=name, namespace=ns)
    assert e.value.status == 404
    assert served.in_cluster(kind, ns or "", name) is None

    seen = []
    for ev in resource.watch(namespace=ns, resource_version=listed_rv, timeout=10):
        if ev["raw_object"]["metadata"]["name"] == name:
            seen.append(ev["type"])
            if ev["type"] == "DELETED":
                break
    assert seen[0] == "ADDED" and seen[-1] == "DELETED" and "MODIFIED" in seen


def test_typed_clients_read_them_with_defaults(api: k8s.ApiClient) -> None:
    """The typed models decode what the server answers, with the API server's defaults."""
    storage, core = k8s.StorageV1Api(api), k8s.CoreV1Api(api)
    sc = storage.create_storage_class({"metadata": {"name": "standard"}, "provisioner": "csi.example.com"})
    assert (sc.reclaim_policy, sc.volume_binding_mode) == ("Delete", "Immediate")
    pv = core.create_persistent_volume(
        {"metadata": {"name": "pv-typed"},
         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOncePod"], "hostPath": {"path": "/d"}}}
    )  # fmt: skip
    assert (pv.spec.persistent_volume_reclaim_policy, pv.spec.volume_mode) == ("Retain", "Filesystem")
    pvc = core.create_namespaced_persistent_volume_claim(
        NS, {"metadata": {"name": "typed"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                      "storageClassName": "unknown"}}
    )  # fmt: skip
    assert pvc.spec.volume_mode == "Filesystem"
    driver = storage.create_csi_driver({"metadata": {"name": "typed.example.com"}, "spec": {}})
    assert (driver.spec.attach_required, driver.spec.volume_lifecycle_modes) == (True, ["Persistent"])
    for delete in (lambda: storage.delete_storage_class("standard"), lambda: core.delete_persistent_volume("pv-typed"),
                   lambda: core.delete_namespaced_persistent_volume_claim("typed", NS),
                   lambda: storage.delete_csi_driver("typed.example.com")):  # fmt: skip
        delete()


def test_the_status_subresource_changes_only_the_status(served: Served, api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    body = {"metadata": {"name": "st"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                     "storageClassName": "unknown"}}  # fmt: skip
    core.create_namespaced_persistent_volume_claim(NS, body)
    patch = {"spec": {"volumeName": "ignored"}, "status": {"phase": "Lost"}}
    got = core.patch_namespaced_persistent_volume_claim_status("st", NS, patch)
    assert (got.status.phase, got.spec.volume_name) == ("Lost", None)
    assert served.in_cluster("PersistentVolumeClaim", NS, "st").status.phase == "Lost"
    core.delete_namespaced_persistent_volume_claim("st", NS)


@pytest.mark.parametrize(
    ("create", "body", "message"),
    [
        pytest.param(
            "create_persistent_volume",
            {"metadata": {"name": "bad"}, "spec": {"accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/d"}}},
            "spec.capacity: Required value",
            id="PV without capacity",
        ),
        pytest.param(
            "create_storage_class",
            {"metadata": {"name": "bad"}, "provisioner": "p", "volumeBindingMode": "Later"},
            'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
            id="StorageClass binding mode",
        ),
    ],
)
def test_validation_refuses_with_422(api: k8s.ApiClient, create: str, body: dict[str, Any], message: str) -> None:
    target = k8s.CoreV1Api(api) if "volume" in create else k8s.StorageV1Api(api)
    with pytest.raises(ApiException) as e:
        getattr(target, create)(body)
    assert e.value.status == 422
    # (the fake API server names the kind without its group: `StorageClass "bad"`)
    assert json.loads(e.value.body)["message"].endswith(f'"bad" is invalid: {message}')


# --- kubectl ------------------------------------------------------------------------------------

MANIFEST = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: disk-1}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  hostPath: {path: /mnt/disk-1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: logs, namespace: kubectl}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
  storageClassName: unknown
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n9}
spec:
  drivers: [{name: csi.example.com, nodeID: n9}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: kubectl}
spec:
  replicas: 0
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_apply_get_delete(served: Served, api: k8s.ApiClient, tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", served.server.url)
    base = [str(KUBECTL), "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"),
            "--request-timeout", "10s"]  # fmt: skip

    def kubectl(*args: str) -> str:
        proc = subprocess.run([*base, *args], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    k8s.CoreV1Api(api).create_namespace({"metadata": {"name": "kubectl"}})
    (tmp_path / "storage.yaml").write_text(MANIFEST)
    assert kubectl("apply", "-f", str(tmp_path / "storage.yaml")).splitlines() == [
        "storageclass.storage.k8s.io/local created",
        "persistentvolume/disk-1 created",
        "persistentvolumeclaim/logs created",
        "csinode.storage.k8s.io/n9 created",
        "statefulset.apps/web created",
    ]
    out = kubectl("get", "pv,pvc,sc,csinode,sts", "-n", "kubectl", "-o", "name")
    assert set(out.split()) >= {
        "persistentvolume/disk-1", "persistentvolumeclaim/logs", "storageclass.storage.k8s.io/local",
        "csinode.storage.k8s.io/n9", "statefulset.apps/web",
    }  # fmt: skip
    table = kubectl("get", "pv", "disk-1")
    assert table.split()[:2] == ["NAME", "CAPACITY"] and "10Gi" in table
    assert "WaitForFirstConsumer" in kubectl("get", "sc", "local")
    assert served.in_cluster("StatefulSet", "kubectl", "web") is not None
    # apply again: unchanged; then delete what was applied
    assert kubectl("apply", "-f", str(tmp_path / "storage.yaml")).splitlines()[0] == (
        "storageclass.storage.k8s.io/local unchanged"
    )
    kubectl("delete", "-f", str(tmp_path / "storage.yaml"), "--wait=false")
    for kind, ns, name in (("StorageClass", "", "local"), ("PersistentVolume", "", "disk-1"),
                           ("PersistentVolumeClaim", "kubectl", "logs"), ("CSINode", "", "n9"),
                           ("StatefulSet", "kubectl", "web")):  # fmt: skip
        assert served.in_cluster(kind, ns, name) is None, kind


# --- the live transport against it ---------------------------------------------------------------


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Real time: a real HTTP server in the test's own loop."""
    return str(request.param)


@pytest.mark.anyio
async def test_the_kube_transport_lists_watches_and_updates_volumes() -> None:
    """``KubeTransport``: the storage kinds come in the initial listing (before the pods) and
    as watch events; ``update_persistent_volume`` / ``_claim`` PUT the object with its
    resourceVersion (stale: ConflictError; gone: NotFoundError) and keep what the struct does
    not declare (a CSI secret reference)."""
    import anyio

    from kubesched import ConflictError, NotFoundError
    from kubesched.api._objects import ObjectReference
    from kubesched.transports.kube import KubeTransport

    pv_body = {"metadata": {"name": "pv1"},
               "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "manual",
                        "csi": {"driver": "csi.example.com", "volumeHandle": "vol-1",
                                "nodeStageSecretRef": {"name": "s", "namespace": "kube-system"}}}}  # fmt: skip
    claim_body = {"metadata": {"name": "data", "namespace": "default"},
                  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                           "storageClassName": "other"}}  # fmt: skip
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with (
        FakeCluster(epoch=epoch) as cluster,
        APIServer(cluster) as server,
        KubeTransport(server.url) as transport,
    ):
        # through the API (the wire form keeps what the structs do not declare)
        await transport.api.request("POST", "/api/v1/persistentvolumes", body=pv_body)
        await transport.api.request("POST", "/api/v1/namespaces/default/persistentvolumeclaims", body=claim_body)
        watch = transport.watch()
        kinds: list[str] = []
        with anyio.fail_after(10):
            async for ev in watch:
                if ev.type == "SYNCED":
                    break
                kinds.append(type(ev.obj).__name__)
        assert kinds == ["PersistentVolume", "PersistentVolumeClaim"]
        cluster.create(StorageClassStruct(name="late"))
        with anyio.fail_after(10):
            async for ev in watch:
                assert (ev.type, type(ev.obj).__name__, ev.obj.metadata.name) == ("ADDED", "StorageClass", "late")
                break

        pv = next(p for p in transport.reflectors if p.resource.kind == "PersistentVolume").store[("", "pv1")]
        bound = copy.deepcopy(pv)
        bound.spec.claim_ref = ObjectReference(kind="PersistentVolumeClaim", namespace="default", name="data")
        stored = await transport.update_persistent_volume(bound)
        assert stored.spec.claim_ref is not None and stored.spec.claim_ref.name == "data"
        assert int(stored.metadata.resource_version) > int(pv.metadata.resource_version)
        raw = json.loads(
            (await transport.api.request("GET", "/api/v1/persistentvolumes/pv1")).decode()
        )
        assert raw["spec"]["csi"]["nodeStageSecretRef"] == {"name": "s", "namespace": "kube-system"}
        with pytest.raises(ConflictError):
            await transport.update_persistent_volume(bound)  # its resourceVersion is stale now
        gone = copy.deepcopy(bound)
        gone.metadata.name = "nope"
        with pytest.raises(NotFoundError):
            await transport.update_persistent_volume(gone)

        claim = cluster.get("PersistentVolumeClaim", "default", "data")
        selected = copy.deepcopy(claim)
        selected.metadata.annotations = {**claim.metadata.annotations, "volume.kubernetes.io/selected-node": "n1"}
        stored_claim = await transport.update_persistent_volume_claim(selected)
        assert stored_claim.metadata.annotations["volume.kubernetes.io/selected-node"] == "n1"
        held = cluster.get("PersistentVolumeClaim", "default", "data")
        assert held.metadata.annotations["volume.kubernetes.io/selected-node"] == "n1"


def StorageClassStruct(name: str) -> Any:  # noqa: N802 - a builder named for what it makes
    from kubesched.api._objects import ObjectMeta, StorageClass

    return StorageClass(metadata=ObjectMeta(name=name), provisioner="csi.example.com")
