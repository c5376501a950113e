"""The resource.k8s.io kinds through the fake API server: discovery (``resource.k8s.io/v1``,
DeviceTaintRule in ``v1beta2``), create/get/list/update/delete in JSON with the API server's
defaults and validation (422 with upstream's field error), the status subresource, the
resourceclaim controller's claims read back, and the same objects sent as Kubernetes protobuf
(what a kube-scheduler's DynamicResources PreBind PUTs: a claim with its finalizer, then its
status with the allocation and ``reservedFor``) stored as their JSON form would be.

The protobuf bodies are built from the decoder's own tables by a small gogo-protobuf-like
encoder (``_encode``), as in ``test_apiserver_protobuf_storage``, extended with message maps and
RawExtensions."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from kubesched.transports.apiserver import APIServer
from kubesched.transports.apiserver import _protobuf as protobuf
from kubesched.transports.apiserver._protomessages import MICRO_TIME, TIME, Table
from kubesched.transports.fake import FakeCluster

R = "/apis/resource.k8s.io/v1"
CLAIMS = f"{R}/namespaces/default/resourceclaims"
PROTOBUF = {"content-type": "application/vnd.kubernetes.protobuf"}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


pytestmark = pytest.mark.anyio

# --- a gogo-protobuf-like encoder, from the decoder's tables -------------------------------------


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _f(number: int, value: int | str | bytes) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


_ZEROS: dict[str, int | str | bytes] = {"string": "", "int": 0, "bool": 0, TIME: b""}


def _value(v: Any, kind: Any) -> int | str | bytes:
    if isinstance(kind, dict):
        return _encode(v, kind)
    base = kind.rstrip("?")
    if base in (TIME, MICRO_TIME):
        t = datetime.fromisoformat(v)
        return _f(1, int(t.timestamp())) + _f(2, t.microsecond * 1000)
    if base == "quantity":
        return _f(1, str(v))
    if base == "rawext":
        return _f(1, json.dumps(v).encode())
    if base == "bool":
        return int(v)
    return v  # type: ignore[no-any-return]


def _encode(obj: dict[str, Any], table: Table) -> bytes:
    out = bytearray()
    for number, (name, kind) in sorted(table.items()):
        if not name:
            out += _f(number, _encode(obj, kind))
        elif name not in obj:
            if isinstance(kind, str) and kind in _ZEROS:
                out += _f(number, _ZEROS[kind])
        elif isinstance(kind, list):
            out += b"".join(_f(number, _value(item, kind[0])) for item in obj[name])
        elif isinstance(kind, tuple):
            for key, v in sorted(obj[name].items()):
                out += _f(number, _f(1, key) + _f(2, _encode(v, kind[1])))
        elif kind in ("map", "quantitymap"):
            for key, v in sorted(obj[name].items()):
                out += _f(number, _f(1, key) + _f(2, _f(1, str(v)) if kind == "quantitymap" else v))
        else:
            out += _f(number, _value(obj[name], kind))
    return bytes(out)


def _body(obj: dict[str, Any]) -> bytes:
    table = protobuf.KINDS[(obj["apiVersion"], obj["kind"])]
    type_meta = _f(1, obj["apiVersion"]) + _f(2, obj["kind"])
    return b"k8s\x00" + _f(1, type_meta) + _f(2, _encode(obj, table)) + _f(3, "") + _f(4, "")


# --- the objects ---------------------------------------------------------------------------------

CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
                  "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"mode": "x"}}}]}}
SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0",
                               "attributes": {"model": {"string": "A100"}, "index": {"int": 0}, "mig": {"bool": False},
                                              "driverVersion": {"version": "1.2.3"}},
                               "capacity": {"memory": {"value": "80Gi"}},
                               "taints": [{"key": "example.com/hot", "effect": "NoSchedule", "timeAdded": "2026-01-01T00:00:00Z"}]},
                              {"name": "gpu-1", "allowMultipleAllocations": True,
                               "capacity": {"memory": {"value": "80Gi", "requestPolicy": {
                                   "default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}}}}]}}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]}}}}
CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared", "namespace": "default"},
         "spec": {"devices": {
             "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1,
                                                      "selectors": [{"cel": {"expression": "true"}}],
                                                      "tolerations": [{"key": "example.com/hot", "operator": "Exists", "effect": "NoSchedule"}],
                                                      "capacity": {"requests": {"memory": "10Gi"}}}},
                          {"name": "any", "firstAvailable": [{"name": "a", "deviceClassName": "gpu.example.com", "allocationMode": "All"}]}],
             "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/model"}],
             "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]}}}
RULE = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "hot"},
        "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "n1"},
                 "taint": {"key": "example.com/hot", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}}}
PATHS = {"DeviceClass": f"{R}/deviceclasses", "ResourceSlice": f"{R}/resourceslices",
         "ResourceClaimTemplate": f"{R}/namespaces/default/resourceclaimtemplates", "ResourceClaim": CLAIMS,
         "DeviceTaintRule": "/apis/resource.k8s.io/v1beta2/devicetaintrules"}
OBJECTS = [CLASS, SLICE, TEMPLATE, CLAIM, RULE]
_SERVER_META = ("uid", "resourceVersion", "creationTimestamp", "generation")


@asynccontextmanager
async def _client() -> AsyncIterator[tuple[FakeCluster, httpx.AsyncClient]]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with (
        FakeCluster(epoch=epoch) as cluster,
        APIServer(cluster) as server,
        httpx.AsyncClient(base_url=server.url, timeout=10) as c,
    ):
        yield cluster, c


def _plain(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in _SERVER_META}
    return obj


async def test_discovery() -> None:
    async with _client() as (_, c):
        v1 = (await c.get(R)).json()
        assert sorted(r["name"] for r in v1["resources"]) == [
            "deviceclasses", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates", "resourceslices"]
        beta = (await c.get("/apis/resource.k8s.io/v1beta2")).json()
        assert sorted(r["name"] for r in beta["resources"]) == ["devicetaintrules", "devicetaintrules/status"]
        alpha = (await c.get("/apis/resource.k8s.io/v1alpha3")).json()
        assert sorted(r["name"] for r in alpha["resources"]) == ["devicetaintrules", "devicetaintrules/status"]


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
async def test_device_taint_rules_in_v1alpha3_and_v1beta2(encoding: str) -> None:
    """1.33-1.35 serve DeviceTaintRules in resource.k8s.io/v1alpha3 (the 1.35 scheduler's
    informer: scheduler.go ``V1alpha3().DeviceTaintRules()``), 1.36 in v1beta2 too (its tracker's
    informer); the fields are the same from 1.35.  One object, seen in either version."""
    alpha_path = "/apis/resource.k8s.io/v1alpha3/devicetaintrules"
    rule = {**RULE, "apiVersion": "resource.k8s.io/v1alpha3"}
    async with _client() as (cluster, c):
        if encoding == "json":
            r = await c.post(alpha_path, json=rule)
        else:
            r = await c.post(alpha_path, headers=PROTOBUF, content=_body(rule))
        assert r.status_code == 201, r.text
        assert r.json()["apiVersion"] == "resource.k8s.io/v1alpha3"
        [stored] = cluster.list("DeviceTaintRule")
        assert stored.api_version == "resource.k8s.io/v1beta2"
        beta = (await c.get(f"{PATHS['DeviceTaintRule']}/hot")).json()
        alpha = (await c.get(f"{alpha_path}/hot")).json()
        assert beta["apiVersion"] == "resource.k8s.io/v1beta2" and alpha["apiVersion"] == "resource.k8s.io/v1alpha3"
        assert {k: v for k, v in _plain(alpha).items() if k not in ("apiVersion", "status")} == {
            k: v for k, v in rule.items() if k != "apiVersion"}
        listed = (await c.get(alpha_path)).json()
        assert [(i["metadata"]["name"], i.get("apiVersion", listed["apiVersion"])) for i in listed["items"]] == [
            ("hot", "resource.k8s.io/v1alpha3")]
        assert (await c.delete(f"{alpha_path}/hot")).status_code == 200
        assert cluster.list("DeviceTaintRule") == []


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
async def test_create_get_list_delete(encoding: str) -> None:
    async with _client() as (cluster, c):
        for obj in OBJECTS:
            path = PATHS[obj["kind"]]
            if encoding == "json":
                r = await c.post(path, json=obj)
            else:
                r = await c.post(path, headers=PROTOBUF, content=_body(obj))
            assert r.status_code == 201, r.text
            name = obj["metadata"]["name"]
            got = (await c.get(f"{path}/{name}")).json()
            assert _plain(got) == _plain(r.json())
            assert [i["metadata"]["name"] for i in (await c.get(path)).json()["items"]] == [name]
            assert {k: v for k, v in _plain(got).items() if k != "status"} == obj, obj["kind"]
        assert len(cluster.list("ResourceSlice")) == 1 and len(cluster.list("DeviceTaintRule")) == 1
        for obj in OBJECTS:
            r = await c.delete(f"{PATHS[obj['kind']]}/{obj['metadata']['name']}")
            assert r.status_code == 200, r.text
            assert (await c.get(PATHS[obj["kind"]])).json()["items"] == []


async def test_kube_scheduler_prebind_in_protobuf() -> None:
    """The claim's finalizer (an update), then its allocation and reservation (the status
    subresource), in protobuf, as the DynamicResources PreBind writes them."""
    async with _client() as (cluster, c):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}], "containers": [{"name": "c", "image": "x"}]}}
        r = await c.post("/api/v1/namespaces/default/pods", json=pod)
        assert r.status_code == 201, r.text
        pod_uid = r.json()["metadata"]["uid"]
        r = await c.post(CLAIMS, json=CLAIM)
        assert r.status_code == 201, r.text
        claim = r.json()
        claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        r = await c.put(f"{CLAIMS}/shared", headers=PROTOBUF, content=_body(claim))
        assert r.status_code == 200, r.text
        claim = r.json()
        claim["status"] = {
            "allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0",
                                                    "consumedCapacity": {"memory": "10Gi"}}]},
                           "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
            "reservedFor": [{"resource": "pods", "name": "p", "uid": pod_uid}],
        }
        r = await c.put(f"{CLAIMS}/shared/status", headers=PROTOBUF, content=_body(claim))
        assert r.status_code == 200, r.text
        assert r.json()["status"] == claim["status"]
        stored = cluster.get("ResourceClaim", "default", "shared")
        assert stored.metadata.finalizers == ["resource.kubernetes.io/delete-protection"]
        assert stored.status.allocation.devices.results[0].consumed_capacity == {"memory": "10Gi"}
        table = (await c.get(CLAIMS, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})).json()
        assert [col["name"] for col in table["columnDefinitions"]] == ["Name", "State", "Age"]
        assert [row["cells"][:2] for row in table["rows"]] == [["shared", "allocated,reserved"]]


async def test_invalid_is_422_with_the_field_error() -> None:
    async with _client() as (_, c):
        bad = copy.deepcopy(SLICE)
        bad["spec"]["devices"][1]["name"] = "gpu-0"
        r = await c.post(PATHS["ResourceSlice"], json=bad)
        assert r.status_code == 422
        assert r.json()["message"] == (
            'ResourceSlice.resource.k8s.io "n1-gpu" is invalid: spec.devices[1]: Duplicate value: "gpu-0"')


async def test_a_claim_naming_a_class_that_does_not_exist_is_created() -> None:
    """As upstream's API server: validation.go (v1.35.4) looks no DeviceClass up (only
    ``kubesched simulate``'s input check refuses a scenario file naming one it lacks)."""
    async with _client() as (_, c):
        r = await c.post(CLAIMS, json=CLAIM)
        assert r.status_code == 201, r.text
        assert (await c.get(PATHS["DeviceClass"])).json()["items"] == []


async def test_the_controller_makes_the_claim_of_a_template() -> None:
    async with _client() as (_, c):
        assert (await c.post(PATHS["ResourceClaimTemplate"], json=TEMPLATE)).status_code == 201
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train"},
               "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                        "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]}}
        assert (await c.post("/api/v1/namespaces/default/pods", json=pod)).status_code == 201
        [claim] = (await c.get(CLAIMS)).json()["items"]
        assert claim["metadata"]["generateName"] == "train-gpu-"
        assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
        # controller.go handlePodClaim (v1.35.4): the pod owns it as controller, blocking its deletion
        [ref] = claim["metadata"]["ownerReferences"]
        pod_uid = (await c.get("/api/v1/namespaces/default/pods/train")).json()["metadata"]["uid"]
        assert ref == {"apiVersion": "v1", "kind": "Pod", "name": "train", "uid": pod_uid,
                       "controller": True, "blockOwnerDeletion": True}
        got = (await c.get("/api/v1/namespaces/default/pods/train")).json()
        assert got["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]


# --- the transports' ResourceClaim verbs (what the DynamicResources plugin writes) ----------------


def _claim_struct(cluster: FakeCluster) -> Any:
    return cluster.get("ResourceClaim", "default", "shared")


async def test_fake_cluster_claim_verbs() -> None:
    """PreBind's writes on the fake cluster: the finalizer (update, status kept), then the
    allocation and reservation (status), stale versions refused; a delete of a claim with the
    finalizer only marks it until the finalizer goes."""
    from msgspec.structs import replace

    from kubesched import ConflictError, NotFoundError
    from kubesched.api import (
        AllocationResult,
        DeviceAllocationResult,
        DeviceRequestAllocationResult,
        ResourceClaimConsumerReference,
        ResourceClaimStatus,
        convert,
    )
    from kubesched.api import ResourceClaim as Claim

    async with FakeCluster() as cluster:
        cluster.create(convert({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                                "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}],
                                         "containers": [{"name": "c"}]}}, __import__("kubesched").Pod))
        pod_uid = cluster.get_pod("default", "p").metadata.uid  # type: ignore[union-attr]
        cluster.create(convert(CLAIM, Claim))
        claim = _claim_struct(cluster)
        with_finalizer = replace(claim, metadata=replace(claim.metadata, finalizers=["resource.kubernetes.io/delete-protection"]))
        stored = await cluster.update_resource_claim(with_finalizer)
        assert stored.metadata.finalizers == ["resource.kubernetes.io/delete-protection"]
        with pytest.raises(ConflictError):
            await cluster.update_resource_claim(with_finalizer)  # stale resourceVersion
        status = ResourceClaimStatus(
            allocation=AllocationResult(devices=DeviceAllocationResult(results=[
                DeviceRequestAllocationResult(request="gpu", driver="gpu.example.com", pool="n1", device="gpu-0")])),
            reserved_for=[ResourceClaimConsumerReference(resource="pods", name="p", uid=pod_uid)])
        stored = await cluster.update_resource_claim_status(replace(stored, status=status))
        assert stored.status == status and stored.metadata.generation == claim.metadata.generation
        with pytest.raises(ConflictError):
            await cluster.update_resource_claim_status(replace(with_finalizer, status=status))
        await cluster.delete_resource_claim("default", "shared", uid=stored.metadata.uid)
        marked = _claim_struct(cluster)
        assert marked.metadata.deletion_timestamp is not None  # reserved: the finalizer holds it
        await cluster.delete_pod("default", "p")  # the consumer goes: the controller frees it
        assert _claim_struct(cluster) is None
        with pytest.raises(NotFoundError):
            await cluster.delete_resource_claim("default", "shared")


async def test_kube_transport_claim_verbs() -> None:
    """The same writes over HTTP: the DRA kinds come in the listing (before the pods), and the
    claim is PUT (finalizer), PUT to its status subresource, and deleted with a UID
    precondition."""
    import anyio
    from msgspec.structs import replace

    from kubesched import ConflictError
    from kubesched.api import (
        AllocationResult,
        DeviceAllocationResult,
        DeviceRequestAllocationResult,
        ResourceClaimStatus,
    )
    from kubesched.transports.kube import KubeTransport

    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with (
        FakeCluster(epoch=epoch) as cluster,
        APIServer(cluster) as server,
        KubeTransport(server.url) as transport,
    ):
        for obj in OBJECTS:
            await transport.api.request("POST", PATHS[obj["kind"]], body=obj)
        watch = transport.watch()
        kinds: list[str] = []
        with anyio.fail_after(10):
            async for ev in watch:
                if ev.type == "SYNCED":
                    break
                kinds.append(type(ev.obj).__name__)
        assert kinds == ["DeviceClass", "ResourceSlice", "DeviceTaintRule", "ResourceClaim"]
        claim = next(r for r in transport.reflectors if r.resource.kind == "ResourceClaim").store[("default", "shared")]
        stored = await transport.update_resource_claim(
            replace(claim, metadata=replace(claim.metadata, finalizers=["resource.kubernetes.io/delete-protection"])))
        assert stored.metadata.finalizers == ["resource.kubernetes.io/delete-protection"]
        allocation = AllocationResult(devices=DeviceAllocationResult(results=[
            DeviceRequestAllocationResult(request="gpu", driver="gpu.example.com", pool="n1", device="gpu-0")]))
        stored = await transport.update_resource_claim_status(replace(stored, status=ResourceClaimStatus(allocation=allocation)))
        assert stored.status.allocation == allocation
        assert _claim_struct(cluster).status.allocation == allocation
        with pytest.raises(ConflictError):
            await transport.update_resource_claim(claim)  # stale
        with pytest.raises(ConflictError):
            await transport.delete_resource_claim("default", "shared", uid="not-its-uid")
        await transport.delete_resource_claim("default", "shared", uid=stored.metadata.uid)
        # allocated, reserved for no one: the controller drops the allocation and the finalizer
        # of the claim being deleted, and it is gone ("structured-deleted")
        assert _claim_struct(cluster) is None


async def test_kube_transport_falls_back_to_v1alpha3_device_taint_rules() -> None:
    """A server without the first version of DeviceTaintRule (a 1.35 cluster has no v1beta2)
    is watched in its fallback (v1alpha3): the rule comes in the listing all the same."""
    import dataclasses

    import anyio

    from kubesched.transports.kube import RESOURCES, KubeTransport

    missing = "/apis/resource.k8s.io/v1beta9/devicetaintrules"  # a version nobody serves: 404
    resources = tuple(
        dataclasses.replace(r, path=missing) if r.kind == "DeviceTaintRule" else r for r in RESOURCES
    )
    assert any(r.kind == "DeviceTaintRule" and r.fallback.endswith("/v1alpha3/devicetaintrules") for r in resources)
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with (
        FakeCluster(epoch=epoch) as cluster,
        APIServer(cluster) as server,
        KubeTransport(server.url, resources=resources) as transport,
    ):
        assert (await transport.api.request("POST", PATHS["DeviceTaintRule"], body=RULE)) is not None
        rules: list[str] = []
        with anyio.fail_after(10):
            async for ev in transport.watch():
                if ev.type == "SYNCED":
                    break
                if type(ev.obj).__name__ == "DeviceTaintRule":
                    rules.append(ev.obj.metadata.name)
        assert rules == ["hot"]
        [reflector] = [r for r in transport.reflectors if r.resource.kind == "DeviceTaintRule"]
        assert reflector.resource.path.endswith("/v1alpha3/devicetaintrules")


async def test_kube_transport_extended_resource_claim_writes() -> None:
    """DRAExtendedResource's writes over HTTP: the claim POSTed with a generateName (named by the
    server), the pod's status.extendedResourceClaimStatus strategic-merged."""
    from kubesched.api import (
        ContainerExtendedResourceRequest,
        ObjectMeta,
        OwnerReference,
        PodExtendedResourceClaimStatus,
        ResourceClaim,
    )
    from kubesched.testing import make_pod
    from kubesched.transports.kube import KubeTransport

    async with FakeCluster() as cluster, APIServer(cluster) as server, KubeTransport(server.url) as transport:
        pod = cluster.create(make_pod("trainer").req(cpu="1").obj())
        ref = OwnerReference(api_version="v1", kind="Pod", name="trainer", uid=pod.metadata.uid, controller=True)
        claim = ResourceClaim(metadata=ObjectMeta(namespace="default", generate_name="trainer-extended-resources-",
                                                  owner_references=[ref]))  # fmt: skip
        created = await transport.create_resource_claim(claim)
        assert created.metadata.name.startswith("trainer-extended-resources-")
        assert len(created.metadata.name) == len("trainer-extended-resources-") + 5
        assert cluster.get("ResourceClaim", "default", created.metadata.name) is not None
        status = PodExtendedResourceClaimStatus(
            request_mappings=[ContainerExtendedResourceRequest(container_name="c0", resource_name="example.com/gpu",
                                                               request_name="container-0-request-0")],
            resource_claim_name=created.metadata.name,
        )  # fmt: skip
        await transport.patch_pod_extended_resource_claim_status("default", "trainer", status)
        stored = cluster.get("Pod", "default", "trainer")
        assert stored.status.extended_resource_claim_status == status
