"""The fake API server serves the Workload API as the emulated release does with GenericWorkload
on (1.35: scheduling.k8s.io/v1alpha1 Workloads; 1.36: v1alpha2 Workloads and PodGroups with their
status), and nothing of it otherwise; the pod fields that point into it round-trip where the
release has them.  Discovery lists groups in kube-apiserver's priority order (built-in groups
before custom resources)."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec
import pytest
from test_apiserver_dra import _body  # the tests' protobuf encoder, from the decoder's tables

from kubesched.config._versions import Version
from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
PROTOBUF = {"content-type": "application/vnd.kubernetes.protobuf"}
V1A1 = "/apis/scheduling.k8s.io/v1alpha1"
V1A2 = "/apis/scheduling.k8s.io/v1alpha2"
ON = {"GenericWorkload": True, "GangScheduling": True}

WORKLOAD_V1A1 = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                 "metadata": {"name": "train", "namespace": "default"},
                 "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
                          "podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 4}}},
                                        {"name": "driver", "policy": {"basic": {}}}]}}  # fmt: skip
WORKLOAD_V1A2 = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
                 "metadata": {"name": "train", "namespace": "default"},
                 "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
                                                 "priorityClassName": "training", "disruptionMode": "PodGroup"}]}}  # fmt: skip
POD_GROUP = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
             "metadata": {"name": "train-0", "namespace": "default"},
             "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}},
                      "schedulingPolicy": {"gang": {"minCount": 4}}, "priority": 1000, "disruptionMode": "PodGroup"}}  # fmt: skip
_SERVER_META = ("uid", "resourceVersion", "creationTimestamp", "generation")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def _client(
    version: Version = Version(1, 36), gates: dict[str, bool] | None = None
) -> AsyncIterator[tuple[FakeCluster, httpx.AsyncClient]]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with (
        FakeCluster(epoch=epoch) as cluster,
        APIServer(cluster, emulated_version=version, feature_gates=gates) as server,
        httpx.AsyncClient(base_url=server.url, timeout=10) as c,
    ):
        yield cluster, c


def _plain(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in _SERVER_META}
    return obj


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "trainer"}], **spec}}  # fmt: skip


async def _scheduling_versions(c: httpx.AsyncClient) -> list[str]:
    return [v["version"] for v in (await c.get("/apis/scheduling.k8s.io")).json()["versions"]]


@pytest.mark.parametrize(
    ("version", "gates", "versions", "served"),
    [
        pytest.param(Version(1, 36), ON, ["v1", "v1alpha2"], {"v1alpha2": ["workloads", "podgroups", "podgroups/status"]}, id="1.36 on"),
        pytest.param(Version(1, 35), ON, ["v1", "v1alpha1"], {"v1alpha1": ["workloads"]}, id="1.35 on"),
        pytest.param(Version(1, 36), None, ["v1"], {}, id="1.36 default (GenericWorkload off)"),
        pytest.param(Version(1, 35), {"GenericWorkload": False}, ["v1"], {}, id="1.35 off"),
        pytest.param(Version(1, 34), {}, ["v1"], {}, id="1.34 (no Workload API)"),
    ],
)
async def test_served_per_version_and_gate(
    version: Version, gates: dict[str, bool] | None, versions: list[str], served: dict[str, list[str]]
) -> None:
    async with _client(version, gates) as (_, c):
        assert await _scheduling_versions(c) == versions
        assert (await c.get("/apis/scheduling.k8s.io")).json()["preferredVersion"]["version"] == "v1"
        agg = (await c.get("/apis", headers={"accept": AGGREGATED})).json()
        item = next(i for i in agg["items"] if i["metadata"]["name"] == "scheduling.k8s.io")
        assert [v["version"] for v in item["versions"]] == versions
        for v in ("v1alpha1", "v1alpha2"):
            r = await c.get(f"/apis/scheduling.k8s.io/{v}")
            if v in served:
                assert [x["name"] for x in r.json()["resources"]] == served[v]
                assert (await c.get(f"/apis/scheduling.k8s.io/{v}/workloads")).status_code == 200
            else:
                assert r.status_code == 404
                assert (await c.get(f"/apis/scheduling.k8s.io/{v}/workloads")).status_code == 404
                assert (await c.get(f"/apis/scheduling.k8s.io/{v}/namespaces/default/podgroups")).status_code == 404
        openapi = (await c.get("/openapi/v3")).json()["paths"]
        assert {k for k in openapi if k.startswith("apis/scheduling.k8s.io/")} == {
            f"apis/scheduling.k8s.io/{v}" for v in versions
        }


async def test_groups_in_kube_apiservers_priority_order() -> None:
    """Built-in groups by GroupPriorityMinimum (apps 17800 … resource.k8s.io 15900), then the
    custom resources' (1000): kubectl's RESTMapper takes ``podgroups`` from the first group."""
    async with _client(gates=ON) as (_, c):
        order = [g["name"] for g in (await c.get("/apis")).json()["groups"]]
        assert order == ["apps", "events.k8s.io", "batch", "policy", "storage.k8s.io", "scheduling.k8s.io",
                         "coordination.k8s.io", "resource.k8s.io", "scheduling.x-k8s.io"]  # fmt: skip
        agg = (await c.get("/apis", headers={"accept": AGGREGATED})).json()
        assert [i["metadata"]["name"] for i in agg["items"]] == order
        builtin = (await c.get(V1A2)).json()["resources"]
        crd = (await c.get("/apis/scheduling.x-k8s.io/v1alpha1")).json()["resources"]
        assert "shortNames" not in next(r for r in builtin if r["name"] == "podgroups")
        assert next(r for r in crd if r["name"] == "podgroups")["shortNames"] == ["pg", "pgs"]


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
@pytest.mark.parametrize(
    ("version", "objects"),
    [
        pytest.param(Version(1, 35), [(f"{V1A1}/namespaces/default/workloads", WORKLOAD_V1A1)], id="1.35"),
        pytest.param(Version(1, 36), [(f"{V1A2}/namespaces/default/workloads", WORKLOAD_V1A2),
                                      (f"{V1A2}/namespaces/default/podgroups", POD_GROUP)], id="1.36"),  # fmt: skip
    ],
)
async def test_create_get_list_delete(version: Version, objects: list[tuple[str, dict[str, Any]]], encoding: str) -> None:
    # the 1.36 objects carry WorkloadAwarePreemption's fields, which round-trip with the gate on
    gates = {**ON, "WorkloadAwarePreemption": True} if version == (1, 36) else ON
    async with _client(version, gates) as (cluster, c):
        for path, obj in objects:
            if encoding == "json":
                r = await c.post(path, json=obj)
            else:
                r = await c.post(path, headers=PROTOBUF, content=_body(obj))
            assert r.status_code == 201, r.text
            got = (await c.get(f"{path}/{obj['metadata']['name']}")).json()
            assert _plain(got) == _plain(r.json()) == obj
            listed = (await c.get(path)).json()
            assert listed["kind"] == f"{obj['kind']}List" and [i["metadata"]["name"] for i in listed["items"]] == [obj["metadata"]["name"]]
            assert "apiVersion" not in listed["items"][0]  # a built-in kind's list items
        workload = cluster.get("Workload", "default", "train")
        assert workload.api_version == objects[0][1]["apiVersion"]
        policy = workload.pod_group_policy("workers")
        assert policy is not None and policy.gang is not None and policy.gang.min_count == 4
        if version == (1, 36):
            pg = cluster.get("SchedulingPodGroup", "default", "train-0")
            assert pg.min_count() == 4 and pg.spec.priority == 1000 and pg.spec.disruption_mode == "PodGroup"
            assert cluster.list("PodGroup") == []  # scheduler-plugins' kind is another one
        for path, obj in objects:
            assert (await c.delete(f"{path}/{obj['metadata']['name']}")).status_code == 200
            assert (await c.get(path)).json()["items"] == []


async def test_validation_and_immutability_are_upstreams() -> None:
    async with _client(Version(1, 36), ON) as (_, c):
        pgs = f"{V1A2}/namespaces/default/podgroups"
        bad = copy.deepcopy(POD_GROUP)
        bad["spec"]["schedulingPolicy"] = {"gang": {"minCount": -1}}
        r = await c.post(pgs, json=bad)
        assert r.status_code == 422 and r.json()["details"]["causes"][0]["field"] == "spec.schedulingPolicy.gang.minCount"
        many = copy.deepcopy(WORKLOAD_V1A2)
        many["spec"]["podGroupTemplates"] = [{"name": f"g{i}", "schedulingPolicy": {"basic": {}}} for i in range(9)]
        r = await c.post(f"{V1A2}/namespaces/default/workloads", json=many)
        assert r.status_code == 422 and r.json()["details"]["causes"][0]["field"] == "spec.podGroupTemplates"
        r = await c.post(pgs, json=POD_GROUP)
        assert r.status_code == 201, r.text
        changed = r.json()
        changed["spec"]["schedulingPolicy"]["gang"]["minCount"] = 2
        r = await c.put(f"{pgs}/train-0", json=changed)
        assert r.status_code == 422
        assert r.json()["message"] == 'PodGroup.scheduling.k8s.io "train-0" is invalid: spec.schedulingPolicy: Invalid value: field is immutable'
        r = await c.patch(f"{pgs}/train-0", json={"metadata": {"labels": {"team": "a"}}},
                          headers={"content-type": "application/merge-patch+json"})  # fmt: skip
        assert r.status_code == 200 and r.json()["metadata"]["labels"] == {"team": "a"}


async def test_pod_group_status_subresource_and_watch() -> None:
    """The scheduler's PodGroupScheduled condition goes through ``podgroups/status`` (a strategic
    merge patch, as the live transport writes it); a write of the resource keeps the status,
    and a watch sees both changes."""
    async with _client(Version(1, 36), {**ON, "WorkloadAwarePreemption": True}) as (cluster, c):
        pgs = f"{V1A2}/namespaces/default/podgroups"
        created = (await c.post(pgs, json=POD_GROUP)).json()
        rv = created["metadata"]["resourceVersion"]
        cond = {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled", "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}  # fmt: skip
        r = await c.patch(f"{pgs}/train-0/status", content=msgspec.json.encode({"status": {"conditions": [cond]}}),
                          headers={"content-type": "application/strategic-merge-patch+json"})  # fmt: skip
        assert r.status_code == 200, r.text
        assert r.json()["status"]["conditions"] == [cond]
        assert r.json()["spec"] == POD_GROUP["spec"]
        stored = cluster.get("SchedulingPodGroup", "default", "train-0")
        assert [(x.type, x.status, x.reason) for x in stored.status.conditions] == [("PodGroupScheduled", "True", "Scheduled")]
        again = r.json()
        again["status"] = {}
        again["metadata"]["labels"] = {"a": "b"}
        r = await c.put(f"{pgs}/train-0", json=again)
        assert r.status_code == 200 and r.json()["status"]["conditions"] == [cond]  # PUT of the resource keeps it
        async with c.stream("GET", pgs, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "1"}) as w:
            events = [msgspec.json.decode(line) async for line in w.aiter_lines() if line]
        assert [(e["type"], bool(e["object"].get("status"))) for e in events] == [("MODIFIED", True), ("MODIFIED", True)]
        assert events[0]["object"]["kind"] == "PodGroup" and events[0]["object"]["apiVersion"] == "scheduling.k8s.io/v1alpha2"


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
@pytest.mark.parametrize(
    ("version", "field", "value"),
    [
        pytest.param(Version(1, 35), "workloadRef", {"name": "train", "podGroup": "workers", "podGroupReplicaKey": "0"}, id="1.35 workloadRef"),
        pytest.param(Version(1, 36), "schedulingGroup", {"podGroupName": "train-0"}, id="1.36 schedulingGroup"),
    ],
)
async def test_pod_fields_round_trip(version: Version, field: str, value: dict[str, Any], encoding: str) -> None:
    pod = _pod("w-0", **{field: value})
    async with _client(version, ON) as (cluster, c):
        if encoding == "json":
            r = await c.post("/api/v1/namespaces/default/pods", json=pod, params={"fieldValidation": "Strict"})
        else:
            r = await c.post("/api/v1/namespaces/default/pods", headers=PROTOBUF, content=_body(pod))
        assert r.status_code == 201, r.text
        assert r.json()["spec"][field] == value
        assert (await c.get("/api/v1/namespaces/default/pods/w-0")).json()["spec"][field] == value
        spec = cluster.get_pod("default", "w-0").spec
        ref = spec.workload_ref if field == "workloadRef" else spec.scheduling_group
        assert msgspec.to_builtins(ref) == value


@pytest.mark.parametrize(
    ("version", "gates", "field"),
    [
        pytest.param(Version(1, 35), {}, "workloadRef", id="1.35 GenericWorkload off"),
        pytest.param(Version(1, 36), None, "schedulingGroup", id="1.36 GenericWorkload off"),
    ],
)
async def test_pod_field_of_a_disabled_gate_is_dropped(version: Version, gates: dict[str, bool] | None, field: str) -> None:
    """``dropDisabledPodFields``: the release has the field, the gate is off; the pod is created
    without it and scheduled as any other."""
    value = {"name": "train", "podGroup": "workers"} if field == "workloadRef" else {"podGroupName": "train-0"}
    async with _client(version, gates) as (cluster, c):
        r = await c.post("/api/v1/namespaces/default/pods", json=_pod("w-0", **{field: value}), params={"fieldValidation": "Strict"})
        assert r.status_code == 201, r.text
        assert field not in r.json()["spec"] and "warning" not in r.headers
        spec = cluster.get_pod("default", "w-0").spec
        assert spec.workload_ref is None and spec.scheduling_group is None


@pytest.mark.parametrize(
    ("version", "field"),
    [
        pytest.param(Version(1, 36), "workloadRef", id="1.36 workloadRef (gone)"),
        pytest.param(Version(1, 35), "schedulingGroup", id="1.35 schedulingGroup (not yet)"),
        pytest.param(Version(1, 34), "workloadRef", id="1.34 workloadRef (not yet)"),
    ],
)
async def test_pod_field_of_another_release_is_unknown(version: Version, field: str) -> None:
    pod = _pod("w-0", **{field: {"podGroupName": "g"} if field == "schedulingGroup" else {"name": "w", "podGroup": "g"}})
    async with _client(version, ON if version >= (1, 35) else {}) as (cluster, c):
        r = await c.post("/api/v1/namespaces/default/pods", json=pod, params={"fieldValidation": "Strict"})
        assert r.status_code == 400
        assert r.json()["message"] == f'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.{field}"'
        r = await c.post("/api/v1/namespaces/default/pods", json=pod)  # Warn, the default
        assert r.status_code == 201 and r.headers["warning"] == f'299 - "unknown field \\"spec.{field}\\""'
        assert field not in r.json()["spec"]
        spec = cluster.get_pod("default", "w-0").spec
        assert spec.workload_ref is None and spec.scheduling_group is None


@pytest.mark.parametrize("topology", [False, True])
async def test_a_pod_group_is_created_without_status_and_gated_fields(topology: bool) -> None:
    """The PodGroup strategy's PrepareForCreate: the client's status is dropped, and
    schedulingConstraints unless TopologyAwareWorkloadScheduling is on."""
    gates = {**ON, "TopologyAwareWorkloadScheduling": topology}
    body = copy.deepcopy(POD_GROUP)
    body["spec"]["schedulingConstraints"] = {"topology": [{"key": "rack"}]}
    body["status"] = {"conditions": [{"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled",
                                      "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}  # fmt: skip
    async with _client(Version(1, 36), gates) as (cluster, c):
        r = await c.post(f"{V1A2}/namespaces/default/podgroups", json=body)
        assert r.status_code == 201, r.text
        assert "status" not in r.json() or not r.json()["status"].get("conditions")
        assert ("schedulingConstraints" in r.json()["spec"]) == topology
        pg = cluster.get("SchedulingPodGroup", "default", "train-0")
        assert pg.status.conditions == [] and (pg.spec.scheduling_constraints is not None) == topology


@pytest.mark.parametrize("preemption", [False, True])
async def test_workload_aware_preemption_fields_are_dropped_with_the_gate_off(preemption: bool) -> None:
    """pkg/registry/scheduling/{podgroup,workload}/strategy.go (v1alpha2 era): PrepareForCreate and
    PrepareForUpdate drop a PodGroup's and each template's disruptionMode, priorityClassName and
    priority unless WorkloadAwarePreemption is on (or the old object has them), before the
    declarative ``+k8s:ifDisabled("WorkloadAwarePreemption")=+k8s:forbidden`` runs: no error."""
    gates = {**ON, "WorkloadAwarePreemption": preemption}
    fields = {"disruptionMode": "PodGroup", "priorityClassName": "training", "priority": 1000}
    async with _client(Version(1, 36), gates) as (cluster, c):
        workload = copy.deepcopy(WORKLOAD_V1A2)
        workload["spec"]["podGroupTemplates"] = [
            {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}}, **fields},
            {"name": "driver", "schedulingPolicy": {"basic": {}}, "disruptionMode": "Pod"},
        ]
        pod_group = copy.deepcopy(POD_GROUP)
        pod_group["spec"].update(fields)
        for resource, body in (("workloads", workload), ("podgroups", pod_group)):
            r = await c.post(f"{V1A2}/namespaces/default/{resource}", json=body)
            assert r.status_code == 201, r.text
        got = (await c.get(f"{V1A2}/namespaces/default/workloads/train")).json()["spec"]["podGroupTemplates"]
        assert [{f: t.get(f) for f in fields} for t in got] == (
            [fields, {"disruptionMode": "Pod", "priorityClassName": None, "priority": None}]
            if preemption
            else [dict.fromkeys(fields)] * 2
        )
        got_pg = (await c.get(f"{V1A2}/namespaces/default/podgroups/train-0")).json()["spec"]
        assert {f: got_pg.get(f) for f in fields} == (fields if preemption else dict.fromkeys(fields))
        pg = cluster.get("SchedulingPodGroup", "default", "train-0")
        assert (pg.spec.disruption_mode, pg.spec.priority_class_name, pg.spec.priority) == (
            ("PodGroup", "training", 1000) if preemption else (None, "", None)
        )
        w = cluster.get("Workload", "default", "train")
        assert [t.disruption_mode for t in w.spec.pod_group_templates] == (["PodGroup", "Pod"] if preemption else [None, None])

        # an update that sets them: dropped with the gate off (no immutable error), refused with it on
        changed = (await c.get(f"{V1A2}/namespaces/default/podgroups/train-0")).json()
        changed["spec"]["disruptionMode"] = "Pod"
        r = await c.put(f"{V1A2}/namespaces/default/podgroups/train-0", json=changed)
        if preemption:
            assert r.status_code == 422
            assert r.json()["message"] == 'PodGroup.scheduling.k8s.io "train-0" is invalid: spec.disruptionMode: Invalid value: field is immutable'
        else:
            assert r.status_code == 200, r.text
            assert "disruptionMode" not in r.json()["spec"]
        changed = (await c.get(f"{V1A2}/namespaces/default/workloads/train")).json()
        changed["spec"]["podGroupTemplates"][1]["priority"] = 5
        r = await c.put(f"{V1A2}/namespaces/default/workloads/train", json=changed)
        if preemption:
            assert r.status_code == 422
            assert r.json()["message"] == 'Workload.scheduling.k8s.io "train" is invalid: spec.podGroupTemplates: Invalid value: field is immutable'
        else:
            assert r.status_code == 200, r.text
            assert "priority" not in r.json()["spec"]["podGroupTemplates"][1]


async def test_tables_are_upstreams_name_and_age() -> None:
    """pkg/printers/internalversion/printers.go (the v1alpha2 copy): workloadColumnDefinitions and
    podGroupColumnDefinitions are Name (format name) and Age; printWorkload / printPodGroup's
    cells the name and translateTimestampSince(creationTimestamp)."""
    async with _client(Version(1, 36), ON) as (_, c):
        for resource, body in (("workloads", WORKLOAD_V1A2), ("podgroups", POD_GROUP)):
            path = f"{V1A2}/namespaces/default/{resource}"
            assert (await c.post(path, json=body)).status_code == 201
            table = (await c.get(path, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})).json()
            cols = table["columnDefinitions"]
            assert [(col["name"], col["type"], col["format"], col["priority"]) for col in cols] == [
                ("Name", "string", "name", 0),
                ("Age", "string", "", 0),
            ]
            ((name, age),) = [row["cells"] for row in table["rows"]]
            assert name == body["metadata"]["name"] and age.endswith("s")
