"""The fake API server drops a pod's (and a pod template's) matchLabelKeys / mismatchLabelKeys on
create while MatchLabelKeysInPodAffinity is off (1.30 by default), as the pod strategy's
``dropDisabledMatchLabelKeysFieldInPodAffinity`` does (v1.30.6 ``pkg/api/pod/util.go``), and keeps
them while it is on (1.31+)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from kubesched.config._versions import Version, default_feature_gates
from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

TERM = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
        "matchLabelKeys": ["version"], "mismatchLabelKeys": ["tier"]}  # fmt: skip
AFFINITY = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [TERM],
                                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": TERM}]},
            "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": TERM}]}}  # fmt: skip
LABELS = {"app": "web", "version": "v2", "tier": "front"}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def _client(version: Version, gates: dict[str, bool] | None = None) -> AsyncIterator[tuple[FakeCluster, httpx.AsyncClient]]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    full = {**default_feature_gates(version), **(gates or {})}
    async with (
        FakeCluster(epoch=epoch) as cluster,
        APIServer(cluster, emulated_version=version, feature_gates=full) as server,
        httpx.AsyncClient(base_url=server.url, timeout=10) as c,
    ):
        yield cluster, c


def _terms(spec: dict[str, Any]) -> list[dict[str, Any]]:
    aff = spec["affinity"]
    anti = aff["podAntiAffinity"]
    return [*anti["requiredDuringSchedulingIgnoredDuringExecution"],
            *(w["podAffinityTerm"] for w in anti["preferredDuringSchedulingIgnoredDuringExecution"]),
            *(w["podAffinityTerm"] for w in aff["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"])]  # fmt: skip


@pytest.mark.parametrize(
    ("version", "gates", "kept"),
    [
        pytest.param(Version(1, 30), None, False, id="1.30 (alpha, off)"),
        pytest.param(Version(1, 30), {"MatchLabelKeysInPodAffinity": True}, True, id="1.30 turned on"),
        pytest.param(Version(1, 31), None, True, id="1.31 (beta, on)"),
        pytest.param(Version(1, 32), {"MatchLabelKeysInPodAffinity": False}, False, id="1.32 turned off"),
        pytest.param(Version(1, 36), None, True, id="1.36 (GA, locked)"),
    ],
)
async def test_a_pods_label_keys_per_gate(version: Version, gates: dict[str, bool] | None, kept: bool) -> None:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "labels": LABELS},
            "spec": {"containers": [{"name": "c", "image": "pause"}], "affinity": AFFINITY}}  # fmt: skip
    async with _client(version, gates) as (cluster, c):
        r = await c.post("/api/v1/namespaces/default/pods", json=body, params={"fieldValidation": "Strict"})
        assert r.status_code == 201, r.text
        for term in _terms(r.json()["spec"]):
            assert (term.get("matchLabelKeys"), term.get("mismatchLabelKeys")) == ((["version"], ["tier"]) if kept else (None, None))
        stored = cluster.get_pod("default", "p").spec.affinity
        assert stored is not None and stored.pod_anti_affinity is not None
        (term,) = stored.pod_anti_affinity.required_during_scheduling_ignored_during_execution
        assert (term.match_label_keys, term.mismatch_label_keys) == ((["version"], ["tier"]) if kept else ([], []))


@pytest.mark.parametrize("version", [Version(1, 30), Version(1, 36)], ids=str)
async def test_a_deployments_template_loses_them_with_the_gate_off(version: Version) -> None:
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": LABELS},
                                  "spec": {"containers": [{"name": "c", "image": "pause"}], "affinity": AFFINITY}}}}  # fmt: skip
    async with _client(version) as (_, c):
        r = await c.post("/apis/apps/v1/namespaces/default/deployments", json=body)
        assert r.status_code == 201, r.text
        kept = version >= (1, 31)
        for term in _terms(r.json()["spec"]["template"]["spec"]):
            assert ("matchLabelKeys" in term, "mismatchLabelKeys" in term) == (kept, kept)


async def test_an_invalid_label_key_is_refused_only_where_the_field_is_kept() -> None:
    """The strategy drops the fields before validation: 1.30 accepts what 1.36 refuses."""
    term = {**TERM, "matchLabelKeys": ["app"], "mismatchLabelKeys": []}  # "app" is in the selector too
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "labels": LABELS},
            "spec": {"containers": [{"name": "c", "image": "pause"}],
                     "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}}  # fmt: skip
    async with _client(Version(1, 30)) as (_, c):
        assert (await c.post("/api/v1/namespaces/default/pods", json=body)).status_code == 201
    async with _client(Version(1, 36)) as (_, c):
        r = await c.post("/api/v1/namespaces/default/pods", json=body)
        assert r.status_code == 422, r.text
        assert "exists in both matchLabelKeys and labelSelector" in r.json()["message"]


@pytest.mark.parametrize(
    ("gates", "kept"),
    [
        pytest.param(None, ("matchLabelKeys", "nodeAffinityPolicy", "nodeTaintsPolicy"), id="both on (every release)"),
        pytest.param({"MatchLabelKeysInPodTopologySpread": False}, ("nodeAffinityPolicy", "nodeTaintsPolicy"),
                     id="MatchLabelKeysInPodTopologySpread off"),
        pytest.param({"NodeInclusionPolicyInPodTopologySpread": False}, ("matchLabelKeys",),
                     id="NodeInclusionPolicyInPodTopologySpread off (1.32)"),
    ],
)  # fmt: skip
async def test_spread_constraint_fields_per_gate(gates: dict[str, bool] | None, kept: tuple[str, ...]) -> None:
    """``dropDisabledMatchLabelKeysFieldInTopologySpread``, ``dropDisabledNodeInclusionPolicyFields``."""
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                  "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["version"],
                  "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor"}  # fmt: skip
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "labels": LABELS},
            "spec": {"containers": [{"name": "c", "image": "pause"}], "topologySpreadConstraints": [constraint]}}  # fmt: skip
    # NodeInclusionPolicyInPodTopologySpread is locked on from 1.33
    version = Version(1, 32) if gates and "NodeInclusionPolicyInPodTopologySpread" in gates else Version(1, 36)
    async with _client(version, gates) as (_, c):
        r = await c.post("/api/v1/namespaces/default/pods", json=body)
        assert r.status_code == 201, r.text
        (got,) = r.json()["spec"]["topologySpreadConstraints"]
        assert tuple(f for f in ("matchLabelKeys", "nodeAffinityPolicy", "nodeTaintsPolicy") if f in got) == kept
