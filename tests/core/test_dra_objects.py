"""The ``resource.k8s.io/v1`` objects (k8s.io/api resource/v1/types.go at v0.36.0): every field
upstream declares round-trips, defaults are upstream's (pkg/apis/resource/v1/defaults.go at
v1.36.0), and strict decoding knows exactly the v1.36 field names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kubesched import api
from kubesched.api import KINDS, convert, to_builtins, unknown_fields

ROOT = Path(__file__).resolve().parents[2]

SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "node-1-gpu"},
    "spec": {
        "driver": "gpu.example.com",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-1",
        "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}],
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {
                    "model": {"string": "A100"},
                    "index": {"int": 0},
                    "mig": {"bool": True},
                    "driverVersion": {"version": "1.2.3"},
                    "gpu.example.com/ids": {"ints": [1, 2]},
                },
                "capacity": {
                    "memory": {
                        "value": "80Gi",
                        "requestPolicy": {
                            "default": "1Gi",
                            "validRange": {"min": "1Gi", "max": "80Gi", "step": "1Gi"},
                        },
                    },
                    "cores": {"value": 108, "requestPolicy": {"validValues": [1, 2]}},
                },
                "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}],
                "taints": [{"key": "example.com/unhealthy", "value": "x", "effect": "NoSchedule",
                            "timeAdded": "2026-01-01T00:00:00Z"}],
                "bindsToNode": True,
                "bindingConditions": ["attached"],
                "bindingFailureConditions": ["failed"],
                "allowMultipleAllocations": True,
                "nodeAllocatableResourceMappings": {"memory": {"capacityKey": "memory", "allocationMultiplier": "1"}},
            }
        ],
    },
}

CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "default"},
    "spec": {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "exactly": {
                        "deviceClassName": "gpu.example.com",
                        "selectors": [{"cel": {"expression": "device.attributes['gpu.example.com'].model == 'A100'"}}],
                        "allocationMode": "ExactCount",
                        "count": 2,
                        "adminAccess": False,
                        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule",
                                         "tolerationSeconds": 5}],
                        "capacity": {"requests": {"memory": "10Gi"}},
                    },
                },
                {
                    "name": "nic",
                    "firstAvailable": [
                        {"name": "fast", "deviceClassName": "nic", "allocationMode": "All"},
                        {"name": "slow", "deviceClassName": "nic", "allocationMode": "ExactCount", "count": 2,
                         "selectors": [{"cel": {"expression": "true"}}],
                         "tolerations": [{"key": "k", "operator": "Equal", "value": "v"}],
                         "capacity": {"requests": {"bw": "1G"}}},
                    ],
                },
            ],
            "constraints": [
                {"requests": ["gpu"], "matchAttribute": "gpu.example.com/model"},
                {"distinctAttribute": "gpu.example.com/index"},
            ],
            "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": [1]}}}],
        }
    },
    "status": {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                     "adminAccess": True, "tolerations": [{"key": "k", "operator": "Exists"}],
                     "bindingConditions": ["attached"], "bindingFailureConditions": ["failed"],
                     "shareID": "1234", "consumedCapacity": {"memory": "10Gi"}},
                    {"request": "nic/slow", "driver": "nic", "pool": "p", "device": "d"},
                ],
                "config": [{"source": "FromClass", "requests": ["gpu"], "opaque": {"driver": "d", "parameters": 1}}],
            },
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
            "allocationTimestamp": "2026-01-01T00:00:00Z",
        },
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}],
        "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0", "shareID": "1234",
                     "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1,
                                     "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "R", "message": "m"}],
                     "data": {"x": 1},
                     "networkData": {"interfaceName": "eth0", "ips": ["10.0.0.1/24"], "hardwareAddress": "aa"}}],
    },
}

CLASS: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {
        "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
        "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"k": "v"}}}],
        "extendedResourceName": "example.com/gpu",
    },
}

TEMPLATE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "t", "namespace": "default"},
    "spec": {"metadata": {"labels": {"a": "b"}}, "spec": CLAIM["spec"]},
}

RULE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1beta2",
    "kind": "DeviceTaintRule",
    "metadata": {"name": "r"},
    "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
             "taint": {"key": "k", "value": "v", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}},
    "status": {"conditions": [{"type": "EvictionInProgress", "status": "False", "reason": "r",
                               "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
}

FULL = [SLICE, CLAIM, CLASS, TEMPLATE, RULE]


@pytest.mark.parametrize("doc", FULL, ids=lambda d: d["kind"])
def test_every_v1_36_field_round_trips(doc: dict[str, Any]) -> None:
    obj = convert(doc, KINDS[(doc["apiVersion"], doc["kind"])])
    out = to_builtins(obj)
    out.setdefault("apiVersion", doc["apiVersion"])
    out.setdefault("kind", doc["kind"])
    if doc["kind"] in ("ResourceSlice", "DeviceClass", "ResourceClaimTemplate"):
        out.pop("status", None)
    assert json.loads(json.dumps(out)) == json.loads(json.dumps(doc))


@pytest.mark.parametrize("doc", FULL, ids=lambda d: d["kind"])
def test_strict_decoding_knows_every_field(doc: dict[str, Any]) -> None:
    assert unknown_fields(doc, doc["apiVersion"], doc["kind"]) == []


@pytest.mark.parametrize(
    ("doc", "path", "want"),
    [
        (CLAIM, ["spec", "devices", "requests", 0, "exactly"], "spec.devices.requests[0].exactly.selector"),
        (SLICE, ["spec", "devices", 0, "attributes", "model"], "spec.devices[0].attributes[model].selector"),
        (SLICE, ["spec", "pool"], "spec.pool.selector"),
        (RULE, ["spec", "deviceSelector"], "spec.deviceSelector.selector"),
        (TEMPLATE, ["spec", "spec", "devices"], "spec.spec.devices.selector"),
        (CLASS, ["spec"], "spec.selector"),
    ],
)
def test_strict_decoding_refuses_unknown_fields(doc: dict[str, Any], path: list[Any], want: str) -> None:
    doc = json.loads(json.dumps(doc))
    at: Any = doc
    for p in path:
        at = at[p]
    at["selector"] = 1
    assert unknown_fields(doc, doc["apiVersion"], doc["kind"]) == [want]


@pytest.mark.parametrize("field", ["derivedAttributes"])
def test_fields_after_v1_36_are_unknown(field: str) -> None:
    """The client's models are newer than v1.36.0: what v1.36 has not is refused, as its API
    server does (``nodeAllocatableResources`` vs v1.36's ``nodeAllocatableResourceMappings``)."""
    doc = json.loads(json.dumps(CLAIM))
    doc["spec"]["devices"]["requests"][0]["exactly"][field] = []
    doc["spec"]["devices"]["requests"][1]["firstAvailable"][0][field] = []
    sl = json.loads(json.dumps(SLICE))
    sl["spec"]["devices"][0]["nodeAllocatableResources"] = {}
    sl["spec"]["partitionTypeAttribute"] = "x"
    assert unknown_fields(doc, "resource.k8s.io/v1", "ResourceClaim") == [
        f"spec.devices.requests[0].exactly.{field}", f"spec.devices.requests[1].firstAvailable[0].{field}"]
    assert unknown_fields(sl, "resource.k8s.io/v1", "ResourceSlice") == [
        "spec.devices[0].nodeAllocatableResources", "spec.partitionTypeAttribute"]


def _struct_fields(t: Any, seen: set[Any], out: dict[str, set[str]]) -> None:
    """The wire names of every msgspec Struct reachable from ``t``."""
    info = msgspec.inspect.type_info(t)

    def walk(ti: Any) -> None:
        if isinstance(ti, msgspec.inspect.StructType):
            if ti.cls in seen:
                return
            seen.add(ti.cls)
            out[ti.cls.__name__] = {f.encode_name for f in ti.fields}
            for f in ti.fields:
                walk(f.type)
        elif isinstance(ti, msgspec.inspect.UnionType):
            for x in ti.types:
                walk(x)
        elif isinstance(ti, (msgspec.inspect.ListType, msgspec.inspect.DictType)):
            walk(ti.item_type if isinstance(ti, msgspec.inspect.ListType) else ti.value_type)

    walk(info)


V1ALPHA3_1_34 = {"V1beta2DeviceTaintSelector": {"deviceClassName", "selectors"}}
"""Fields the Struct keeps beyond v1beta2's: DeviceTaintRule's v1alpha3 selector of 1.33-1.34."""


@pytest.mark.parametrize("doc", FULL, ids=lambda d: d["kind"])
def test_structs_declare_the_schema_fields(doc: dict[str, Any]) -> None:
    """Every field strict decoding accepts is one the Struct keeps, so nothing a v1.36 API
    server would store is dropped on the way through the fake cluster."""
    schema = json.loads((ROOT / "core" / "api" / "_schema.json").read_text())
    kind = KINDS[(doc["apiVersion"], doc["kind"])]
    structs: dict[str, set[str]] = {}
    _struct_fields(kind, set(), structs)

    def check(struct: Any, type_name: str, path: str) -> None:
        fields = schema["types"][type_name]
        ti = msgspec.inspect.type_info(struct)
        assert isinstance(ti, msgspec.inspect.StructType)
        by_name = {f.encode_name: f for f in ti.fields}
        if type_name.startswith("V1ObjectMeta"):
            return  # metadata: only what the scheduler reads (as every kind)
        assert set(by_name) - V1ALPHA3_1_34.get(type_name, set()) == set(fields), path
        for name, sub in fields.items():
            inner = sub
            while inner.startswith(("List[", "Dict[")):
                inner = inner[5:-1] if inner.startswith("List[") else inner[inner.index(",") + 1 : -1].strip()
            if inner in schema["types"] and inner != "V1NodeSelector":
                t = by_name[name].type
                while not isinstance(t, msgspec.inspect.StructType):
                    if isinstance(t, msgspec.inspect.UnionType):
                        t = next(x for x in t.types if not isinstance(x, msgspec.inspect.NoneType))
                    elif isinstance(t, msgspec.inspect.ListType):
                        t = t.item_type
                    elif isinstance(t, msgspec.inspect.DictType):
                        t = t.value_type
                    else:
                        raise AssertionError(f"{path}.{name}: {t}")
                check(t.cls, inner, f"{path}.{name}")

    check(kind, schema["kinds"][f"{doc['apiVersion']}/{doc['kind']}"], doc["kind"])


def test_request_defaults_as_upstream() -> None:
    """SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest: ExactCount, count 1;
    All keeps count 0; a toleration's operator defaults to Equal."""
    c = convert({"spec": {"devices": {"requests": [
        {"name": "a", "exactly": {"deviceClassName": "x", "tolerations": [{"key": "k"}]}},
        {"name": "b", "exactly": {"deviceClassName": "x", "allocationMode": "All"}},
        {"name": "c", "firstAvailable": [{"name": "s", "deviceClassName": "x"}]},
    ]}}}, api.ResourceClaim)
    a, b, s = c.spec.devices.requests[0].exactly, c.spec.devices.requests[1].exactly, c.spec.devices.requests[2].first_available[0]
    assert (a.allocation_mode, a.count, a.tolerations[0].operator) == ("ExactCount", 1, "Equal")
    assert (b.allocation_mode, b.count) == ("All", 0)
    assert (s.allocation_mode, s.count) == ("ExactCount", 1)
    assert to_builtins(c)["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "x", "allocationMode": "ExactCount", "count": 1,
        "tolerations": [{"key": "k", "operator": "Equal"}]}


def test_pod_fields() -> None:
    pod = convert({"metadata": {"name": "p"}, "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}, {"name": "shared", "resourceClaimName": "c"}],
        "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu", "request": "r"}, {"name": "shared"}]}}]},
        "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-abcde"}, {"name": "x"}]}}, api.Pod)
    assert pod.spec.containers[0].resources.claims == [api.ContainerResourceClaim(name="gpu", request="r"),
                                                       api.ContainerResourceClaim(name="shared")]
    assert pod.status.resource_claim_statuses == [api.PodResourceClaimStatus(name="gpu", resource_claim_name="p-gpu-abcde"),
                                                  api.PodResourceClaimStatus(name="x")]
    assert to_builtins(pod)["status"]["resourceClaimStatuses"][1] == {"name": "x"}
    assert "claims" not in to_builtins(convert({"spec": {"containers": [{"name": "c"}]}}, api.Pod))["spec"]["containers"][0]["resources"]


def test_attribute_fields_are_named_as_the_wire() -> None:
    a = convert({"int": 1, "bool": False, "string": "s", "version": "1.0.0"}, api.DeviceAttribute)
    assert (a.int_value, a.bool_value, a.string_value, a.version_value) == (1, False, "s", "1.0.0")
    with pytest.raises(msgspec.ValidationError):
        convert({"int": 2**63}, api.DeviceAttribute)
