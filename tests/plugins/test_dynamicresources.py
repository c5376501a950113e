"""DynamicResources for pods without claims, per version (pods with claims:
test_dynamicresources_plugin.py) (k/k ``plugins/dynamicresources``:
PreFilter and PostFilter at v1.30.6, v1.31.8, v1.33.3, v1.34.7, v1.35.4)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched import CycleState
from kubesched.api._objects import PodResourceClaim
from kubesched.plugins import dynamicresources as dra
from kubesched.runtime._status import Code
from kubesched.testing import framework_for, make_node, make_pod

DRA_ON = {"DynamicResourceAllocation": True}


async def post_filter(pl: Any, *args: Any) -> Any:
    """PostFilter's answer: plain, or awaited when it writes (as the runtime does)."""
    import inspect

    out = pl.kubesched_post_filter(*args)
    return await out if inspect.isawaitable(out) else out


def plugin(version: str, gates: dict[str, bool] | None = None) -> dra.DynamicResources:
    fw = framework_for({"preFilter": [dra.NAME], "postFilter": [dra.NAME]}, [make_node("n1").obj()],
                       feature_gates=DRA_ON if gates is None else gates, emulated_version=version)  # fmt: skip
    pl: dra.DynamicResources = fw.plugin(dra.NAME)
    return pl


@pytest.mark.parametrize(
    ("version", "reasons"),
    [
        # v1.30.6 / v1.31.8 dynamicresources.go PostFilter: len(state.claims) == 0
        pytest.param("1.30", (dra.MSG_NO_NEW_CLAIMS,), id="1.30 (v1.30.6)"),
        pytest.param("1.31", (dra.MSG_NO_NEW_CLAIMS,), id="1.31 (v1.31.8)"),
        pytest.param("1.32", (dra.MSG_NO_NEW_CLAIMS,), id="1.32 (before kubernetes#129823)"),
        # v1.33.3: len(pod.Spec.ResourceClaims) == 0 → NewStatus(Unschedulable), no reason
        pytest.param("1.33", (), id="1.33 (v1.33.3, kubernetes#129823)"),
        # 1.34-1.36: kubernetes#129823 as issue 34 states it (no reason from 1.33 on)
        pytest.param("1.34", (), id="1.34 (issue 34)"),
        pytest.param("1.35", (), id="1.35 (issue 34)"),
        pytest.param("1.36", (), id="1.36 (issue 34)"),
        # v1.34.7 / v1.35.4 sources: state.claims.empty() → "no new claims to deallocate", with
        # KubeschedSourceExact (docs/versions.md)
        pytest.param("1.34+source", (dra.MSG_NO_NEW_CLAIMS,), id="1.34 KubeschedSourceExact (v1.34.7)"),
        pytest.param("1.35+source", (dra.MSG_NO_NEW_CLAIMS,), id="1.35 KubeschedSourceExact (v1.35.4)"),
        pytest.param("1.36+source", (dra.MSG_NO_NEW_CLAIMS,), id="1.36 KubeschedSourceExact (as 1.35)"),
    ],
)
@pytest.mark.anyio
async def test_pod_without_claims(version: str, reasons: tuple[str, ...]) -> None:
    version, source_exact = version.removesuffix("+source"), version.endswith("+source")
    pl = plugin(version, {**DRA_ON, "KubeschedSourceExact": True} if source_exact else None)
    pod = make_pod("p").obj()
    state = CycleState()
    assert pl.kubesched_pre_filter(state, pod, []).code == Code.SKIP
    result, status = await post_filter(pl, state, pod, {})
    assert result is None
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE, reasons)


@pytest.mark.anyio
async def test_disabled_plugin_in_a_profile() -> None:
    """Enabled by a configuration while the gate is off: every tag's ``!pl.enabled`` answers."""
    pl = plugin("1.32", {"DynamicResourceAllocation": False})
    pod = make_pod("p").obj()
    pod.spec.resource_claims = [PodResourceClaim(name="gpu", resource_claim_name="c")]
    assert pl.kubesched_pre_filter(CycleState(), pod, []).code == Code.SKIP
    _, status = await post_filter(pl, CycleState(), pod, {})
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE, ("plugin disabled",))
