"""VolumeBinding's binder and scorer: finding and assuming volumes (k/k
``plugins/volumebinding/binder_test.go``: TestFindPodVolumesWithoutProvisioning,
TestFindPodVolumesWithProvisioning, TestFindPodVolumesWithCSIMigration, TestAssumePodVolumes,
TestRevertAssumedPodVolumes, TestFindAssumeVolumes, TestCapacity; ``scorer_test.go``: TestScore).
The API updates and the wait are in ``test_volumebinding_bind.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from volumebinding_fixtures import (
    PROVISIONER,
    WAIT_CLASS,
    WAIT_CLASS_WITH_PROVISIONER,
    binder_pod,
    binding,
    bound_migration_pvc,
    bound_pvc,
    capacity,
    conflicting_generic_pvc,
    correct_generic_pvc,
    csi_driver,
    csi_node1_migrated,
    csi_node1_not_migrated,
    find_pod_volumes,
    immediate_bound_pvc,
    immediate_unbound_pvc,
    make_pod,
    migration_pv_bound,
    network_attached_capacity,
    new_env,
    no_provisioner_pvc,
    node1,
    node1_capacity,
    node1_zone1,
    node1_zone2,
    node2,
    node2_capacity,
    prebound_pvc,
    provisioned_pvc,
    provisioned_pvc2,
    provisioned_pvc_higher_version,
    pv_bound,
    pv_bound_generic,
    pv_bound_immediate,
    pv_bound_immediate_node2,
    pv_node1a,
    pv_node1a_bound,
    pv_node1b,
    pv_node1b_bound,
    pv_node1c,
    pv_node2,
    pvc_set_selected_node,
    selected_node_pvc,
    topo_mismatch_pvc,
    unbound_pvc,
    unbound_pvc2,
)

from kubesched.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    BindingInfo,
    DynamicProvision,
    PodVolumes,
    StorageResource,
)
from kubesched.plugins.volumebinding.helpers import VolumeError
from kubesched.plugins.volumebinding.scorer import build_scorer_function

DRIVERS = {
    "no CSIDriver": None,
    "CSIDriver with capacity tracking": csi_driver(PROVISIONER, True),
    "CSIDriver without capacity tracking": csi_driver(PROVISIONER, False),
}


@dataclass
class Find:
    pvcs: list[Any] = field(default_factory=list)
    pvs: list[Any] = field(default_factory=list)
    cache_pvcs: list[Any] | None = None
    pod: Any = None
    bindings: list[BindingInfo] | None = None
    provisions: list[DynamicProvision] | None = None
    reasons: list[str] = field(default_factory=list)
    fail: bool = False
    needs_capacity: bool = False


WITHOUT_PROVISIONING = {
    "no-volumes": Find(pod=binder_pod()),
    "no-pvcs": Find(
        pod=make_pod("test-pod").namespace("testns").node_name("node1").empty_dir().obj()
    ),
    "pvc-not-found": Find(cache_pvcs=[], pvcs=[bound_pvc], fail=True),
    "bound-pvc": Find(pvcs=[bound_pvc], pvs=[pv_bound]),
    "bound-pvc,pv-not-exists": Find(pvcs=[bound_pvc], reasons=[ERR_REASON_PV_NOT_EXIST]),
    "prebound-pvc": Find(pvcs=[prebound_pvc], pvs=[pv_node1a_bound], fail=True),
    "unbound-pvc,pv-same-node": Find(
        pvcs=[unbound_pvc],
        pvs=[pv_node2, pv_node1a, pv_node1b],
        bindings=[binding(unbound_pvc, pv_node1a)],
    ),
    "unbound-pvc,pv-different-node": Find(
        pvcs=[unbound_pvc], pvs=[pv_node2], reasons=[ERR_REASON_BIND_CONFLICT]
    ),
    "two-unbound-pvcs": Find(
        pvcs=[unbound_pvc, unbound_pvc2],
        pvs=[pv_node1a, pv_node1b],
        bindings=[binding(unbound_pvc, pv_node1a), binding(unbound_pvc2, pv_node1b)],
    ),
    "two-unbound-pvcs,order-by-size": Find(
        pvcs=[unbound_pvc2, unbound_pvc],
        pvs=[pv_node1a, pv_node1b],
        bindings=[binding(unbound_pvc, pv_node1a), binding(unbound_pvc2, pv_node1b)],
    ),
    "two-unbound-pvcs,partial-match": Find(
        pvcs=[unbound_pvc, unbound_pvc2],
        pvs=[pv_node1a],
        bindings=[binding(unbound_pvc, pv_node1a)],
        reasons=[ERR_REASON_BIND_CONFLICT],
    ),
    "one-bound,one-unbound": Find(
        pvcs=[unbound_pvc, bound_pvc],
        pvs=[pv_bound, pv_node1a],
        bindings=[binding(unbound_pvc, pv_node1a)],
    ),
    "one-bound,one-unbound,no-match": Find(
        pvcs=[unbound_pvc, bound_pvc], pvs=[pv_bound, pv_node2], reasons=[ERR_REASON_BIND_CONFLICT]
    ),
    "one-prebound,one-unbound": Find(
        pvcs=[unbound_pvc, prebound_pvc], pvs=[pv_node1a, pv_node1b], fail=True
    ),
    "immediate-bound-pvc": Find(pvcs=[immediate_bound_pvc], pvs=[pv_bound_immediate]),
    "immediate-bound-pvc-wrong-node": Find(
        pvcs=[immediate_bound_pvc],
        pvs=[pv_bound_immediate_node2],
        reasons=[ERR_REASON_NODE_CONFLICT],
    ),
    "immediate-unbound-pvc": Find(pvcs=[immediate_unbound_pvc], fail=True),
    "immediate-unbound-pvc,delayed-mode-bound": Find(
        pvcs=[immediate_unbound_pvc, bound_pvc], pvs=[pv_bound], fail=True
    ),
    "immediate-unbound-pvc,delayed-mode-unbound": Find(
        pvcs=[immediate_unbound_pvc, unbound_pvc], fail=True
    ),
    "generic-ephemeral,no-pvc": Find(
        pod=make_pod("test-pod")
        .namespace("testns")
        .node_name("node1")
        .ephemeral("no-such-pvc")
        .obj(),
        fail=True,
    ),
    "generic-ephemeral,with-pvc": Find(
        pod=make_pod("test-pod")
        .namespace("testns")
        .node_name("node1")
        .ephemeral("test-volume")
        .obj(),
        cache_pvcs=[correct_generic_pvc],
        pvs=[pv_bound_generic],
    ),
    "generic-ephemeral,wrong-pvc": Find(
        pod=make_pod("test-pod")
        .namespace("testns")
        .node_name("node1")
        .ephemeral("test-volume")
        .obj(),
        cache_pvcs=[conflicting_generic_pvc],
        pvs=[pv_bound_generic],
        fail=True,
    ),
}

WITH_PROVISIONING = {
    "one-provisioned": Find(
        pvcs=[provisioned_pvc], provisions=[DynamicProvision(provisioned_pvc)], needs_capacity=True
    ),
    "two-unbound-pvcs,one-matched,one-provisioned": Find(
        pvcs=[unbound_pvc, provisioned_pvc],
        pvs=[pv_node1a],
        bindings=[binding(unbound_pvc, pv_node1a)],
        provisions=[DynamicProvision(provisioned_pvc)],
        needs_capacity=True,
    ),
    "one-bound,one-provisioned": Find(
        pvcs=[bound_pvc, provisioned_pvc],
        pvs=[pv_bound],
        provisions=[DynamicProvision(provisioned_pvc)],
        needs_capacity=True,
    ),
    "one-binding,one-selected-node": Find(
        pvcs=[bound_pvc, selected_node_pvc],
        pvs=[pv_bound],
        provisions=[DynamicProvision(selected_node_pvc)],
        needs_capacity=True,
    ),
    "immediate-unbound-pvc": Find(pvcs=[immediate_unbound_pvc], fail=True),
    "one-immediate-bound,one-provisioned": Find(
        pvcs=[immediate_bound_pvc, provisioned_pvc],
        pvs=[pv_bound_immediate],
        provisions=[DynamicProvision(provisioned_pvc)],
        needs_capacity=True,
    ),
    "invalid-provisioner": Find(pvcs=[no_provisioner_pvc], reasons=[ERR_REASON_BIND_CONFLICT]),
    "volume-topology-unsatisfied": Find(
        pvcs=[topo_mismatch_pvc], reasons=[ERR_REASON_BIND_CONFLICT]
    ),
}


def _run_find(scenario: Find, driver: Any, with_provisioning: bool) -> None:
    cache_pvcs = scenario.pvcs if scenario.cache_pvcs is None else scenario.cache_pvcs
    binder, _ = new_env(scenario.pvs, cache_pvcs, driver=driver)
    pod = scenario.pod if scenario.pod is not None else binder_pod(scenario.pvcs)
    try:
        pod_volumes, reasons = find_pod_volumes(binder, pod, node1)
    except VolumeError:
        assert scenario.fail, "returned an error but expected success"
        return
    assert not scenario.fail, "returned success but expected an error"
    want_reasons = list(scenario.reasons)
    want_provisions = scenario.provisions
    if (
        with_provisioning
        and scenario.needs_capacity
        and driver is not None
        and driver.spec.storage_capacity
    ):
        # without CSIStorageCapacity objects, provisioning is blocked
        want_reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        want_provisions = None
    assert sorted(reasons) == sorted(want_reasons)
    assert pod_volumes.static_bindings == scenario.bindings
    assert pod_volumes.dynamic_provisions == want_provisions


@pytest.mark.parametrize("driver", DRIVERS.values(), ids=DRIVERS.keys())
@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(s, id=f"TestFindPodVolumesWithoutProvisioning/{n}")
        for n, s in WITHOUT_PROVISIONING.items()
    ],
)
def test_find_pod_volumes_without_provisioning(scenario: Find, driver: Any) -> None:
    _run_find(scenario, driver, False)


@pytest.mark.parametrize("driver", DRIVERS.values(), ids=DRIVERS.keys())
@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(s, id=f"TestFindPodVolumesWithProvisioning/{n}")
        for n, s in WITH_PROVISIONING.items()
    ],
)
def test_find_pod_volumes_with_provisioning(scenario: Find, driver: Any) -> None:
    _run_find(scenario, driver, True)


@pytest.mark.parametrize(
    ("pvcs", "pvs", "node_", "csi_nodes", "reasons"),
    [
        pytest.param(
            [bound_migration_pvc], [migration_pv_bound], node1_zone1, [csi_node1_migrated], [],
            id="TestFindPodVolumesWithCSIMigration/pvc-bound",
        ),
        pytest.param(
            [bound_migration_pvc], [migration_pv_bound], node1_zone1, [csi_node1_not_migrated], [],
            id="TestFindPodVolumesWithCSIMigration/pvc-bound,csinode-not-migrated",
        ),
        pytest.param(
            [bound_migration_pvc], [migration_pv_bound], node1_zone1, [], [],
            id="TestFindPodVolumesWithCSIMigration/pvc-bound,missing-csinode",
        ),
        pytest.param(
            [bound_migration_pvc], [migration_pv_bound], node1_zone2, [csi_node1_migrated], [ERR_REASON_NODE_CONFLICT],
            id="TestFindPodVolumesWithCSIMigration/pvc-bound,node-different-zone",
        ),
    ],
)  # fmt: skip
def test_find_pod_volumes_with_csi_migration(
    pvcs: list[Any], pvs: list[Any], node_: Any, csi_nodes: list[Any], reasons: list[str]
) -> None:
    binder, _ = new_env(pvs, pvcs, nodes=[node_], csi_nodes=csi_nodes)
    _, got = find_pod_volumes(binder, binder_pod(pvcs), node_)
    assert got == reasons


# --- Assume / Revert ------------------------------------------------------------------------------


@dataclass
class Assume:
    pvcs: list[Any]
    pvs: list[Any]
    bindings: list[BindingInfo] | None = None
    provisions: list[DynamicProvision] | None = None
    fail: bool = False
    all_bound: bool = False
    want_bindings: list[BindingInfo] | None = None
    want_provisions: list[DynamicProvision] | None = None


ASSUME = {
    "all-bound": Assume([bound_pvc], [pv_bound], all_bound=True),
    "one-binding": Assume(
        [unbound_pvc],
        [pv_node1a],
        bindings=[binding(unbound_pvc, pv_node1a)],
        want_bindings=[binding(unbound_pvc, pv_node1a_bound)],
        want_provisions=[],
    ),
    "two-bindings": Assume(
        [unbound_pvc, unbound_pvc2],
        [pv_node1a, pv_node1b],
        bindings=[binding(unbound_pvc, pv_node1a), binding(unbound_pvc2, pv_node1b)],
        want_bindings=[
            binding(unbound_pvc, pv_node1a_bound),
            binding(unbound_pvc2, pv_node1b_bound),
        ],
        want_provisions=[],
    ),
    "pv-already-bound": Assume(
        [unbound_pvc],
        [pv_node1a_bound],
        bindings=[binding(unbound_pvc, pv_node1a_bound)],
        want_bindings=[binding(unbound_pvc, pv_node1a_bound)],
        want_provisions=[],
    ),
    "tmpupdate-failed": Assume(
        [unbound_pvc],
        [pv_node1a],
        bindings=[binding(unbound_pvc, pv_node1a), binding(unbound_pvc2, pv_node1b)],
        fail=True,
    ),
    "one-binding, one-pvc-provisioned": Assume(
        [unbound_pvc, provisioned_pvc],
        [pv_node1a],
        bindings=[binding(unbound_pvc, pv_node1a)],
        provisions=[DynamicProvision(provisioned_pvc)],
        want_bindings=[binding(unbound_pvc, pv_node1a_bound)],
        want_provisions=[DynamicProvision(selected_node_pvc)],
    ),
    "one-binding, one-provision-tmpupdate-failed": Assume(
        [unbound_pvc, provisioned_pvc_higher_version],
        [pv_node1a],
        bindings=[binding(unbound_pvc, pv_node1a)],
        provisions=[DynamicProvision(provisioned_pvc2)],
        fail=True,
    ),
}


@pytest.mark.parametrize(
    "s", [pytest.param(s, id=f"TestAssumePodVolumes/{n}") for n, s in ASSUME.items()]
)
def test_assume_pod_volumes(s: Assume) -> None:
    binder, _ = new_env(s.pvs, s.pvcs)
    pod = binder_pod(s.pvcs)
    pod_volumes = PodVolumes(list(s.bindings) if s.bindings else s.bindings, s.provisions)
    if s.fail:
        with pytest.raises(VolumeError):
            binder.assume_pod_volumes(pod, "node1", pod_volumes)
        # validateCacheRestored: nothing assumed is left behind
        assert len(binder.pv_cache) == 0 and len(binder.pvc_cache) == 0
        return
    assert binder.assume_pod_volumes(pod, "node1", pod_volumes) is s.all_bound
    want_bindings = s.bindings if s.want_bindings is None else s.want_bindings
    want_provisions = s.provisions if s.want_provisions is None else s.want_provisions
    # validateAssume: the caches hold the bound PVs and the annotated claims
    for b in want_bindings or []:
        ref = binder.pv_cache.get(b.pv.metadata.name).spec.claim_ref
        assert ref is not None and (ref.name, ref.namespace) == (
            b.pvc.metadata.name,
            b.pvc.metadata.namespace,
        )
    for p in want_provisions or []:
        cached = binder.pvc_cache.get((p.pvc.metadata.namespace, p.pvc.metadata.name))
        assert cached.metadata.annotations["volume.kubernetes.io/selected-node"] == "node1"
    assert pod_volumes.static_bindings == want_bindings
    assert pod_volumes.dynamic_provisions == want_provisions


def test_revert_assumed_pod_volumes() -> None:
    """TestRevertAssumedPodVolumes."""
    pvcs = [unbound_pvc, provisioned_pvc]
    binder, _ = new_env([pv_node1a], pvcs)
    pod_volumes = PodVolumes([binding(unbound_pvc, pv_node1a)], [DynamicProvision(provisioned_pvc)])
    assert binder.assume_pod_volumes(binder_pod(pvcs), "node1", pod_volumes) is False
    assert binder.pv_cache.get("pv-node1a") == pv_node1a_bound
    assert binder.pvc_cache.get(("testns", "provisioned-pvc")) == selected_node_pvc
    binder.revert_assumed_pod_volumes(pod_volumes)
    assert binder.pv_cache.get("pv-node1a") is binder.pv_cache.get_api_obj("pv-node1a")
    assert binder.pvc_cache.get(("testns", "provisioned-pvc")).metadata.annotations == {}


def test_find_assume_volumes() -> None:
    """TestFindAssumeVolumes: after Assume, finding again returns the chosen PV every time."""
    pvs = [pv_node2, pv_node1a, pv_node1c]
    binder, _ = new_env(pvs, [unbound_pvc])
    pod = binder_pod([unbound_pvc])
    pod_volumes, reasons = find_pod_volumes(binder, pod, node1)
    assert reasons == []
    assert binder.assume_pod_volumes(pod, "node1", pod_volumes) is False
    expected = pod_volumes.static_bindings
    assert expected is not None and expected[0].pv.spec.claim_ref is not None
    for _ in range(50):
        again, reasons = find_pod_volumes(binder, pod, node1)
        assert reasons == []
        assert again.static_bindings == expected


# --- TestCapacity -----------------------------------------------------------------------------------------

CAPACITY = {
    "network-attached": ([network_attached_capacity], network_attached_capacity, []),
    "local-storage": ([node1_capacity], node1_capacity, []),
    "multiple": ([network_attached_capacity, node2_capacity, node1_capacity], node1_capacity, []),
    "no-storage": ([], None, [ERR_REASON_NOT_ENOUGH_SPACE]),
    "wrong-node": (
        [capacity("net", WAIT_CLASS_WITH_PROVISIONER, node2, "1Gi")],
        None,
        [ERR_REASON_NOT_ENOUGH_SPACE],
    ),
    "wrong-storage-class": (
        [capacity("net", WAIT_CLASS, node1, "1Gi")],
        None,
        [ERR_REASON_NOT_ENOUGH_SPACE],
    ),
    "insufficient-storage": (
        [capacity("net", WAIT_CLASS_WITH_PROVISIONER, node1, "1Mi")],
        None,
        [ERR_REASON_NOT_ENOUGH_SPACE],
    ),
    "insufficient-volume-size": (
        [capacity("net", WAIT_CLASS_WITH_PROVISIONER, node1, "1Gi", "1Mi")],
        None,
        [ERR_REASON_NOT_ENOUGH_SPACE],
    ),
    "zero-storage": (
        [capacity("net", WAIT_CLASS_WITH_PROVISIONER, node1, "0Mi")],
        None,
        [ERR_REASON_NOT_ENOUGH_SPACE],
    ),
    "zero-volume-size": (
        [capacity("net", WAIT_CLASS_WITH_PROVISIONER, node1, "", "0Mi")],
        None,
        [ERR_REASON_NOT_ENOUGH_SPACE],
    ),
    "nil-storage": (
        [capacity("net", WAIT_CLASS_WITH_PROVISIONER, node1)],
        None,
        [ERR_REASON_NOT_ENOUGH_SPACE],
    ),
}


@pytest.mark.parametrize(
    "opt_in",
    [True, False],
    ids=["CSIDriver.StorageCapacity=true", "CSIDriver.StorageCapacity=false"],
)
@pytest.mark.parametrize(
    ("capacities", "node_capacity", "reasons"),
    [pytest.param(*v, id=f"TestCapacity/{k}") for k, v in CAPACITY.items()],
)
def test_capacity(
    capacities: list[Any], node_capacity: Any, reasons: list[str], opt_in: bool
) -> None:
    binder, _ = new_env(
        [], [provisioned_pvc], driver=csi_driver(PROVISIONER, opt_in), capacities=capacities
    )
    pod_volumes, got = find_pod_volumes(binder, binder_pod([provisioned_pvc]), node1)
    if not opt_in:  # the driver does not track capacity: nothing is checked
        assert got == []
        assert pod_volumes.dynamic_provisions == [DynamicProvision(provisioned_pvc)]
        return
    assert got == reasons
    if not reasons:
        assert pod_volumes.dynamic_provisions == [DynamicProvision(provisioned_pvc, node_capacity)]


# --- scorer_test.go ---------------------------------------------------------------------------------------

# the shape scorer_test.go scales (VolumeCapacityPriority's old default, {0, 0} {100, 10}) and its
# custom one, as buildScorerFunction receives them (scores already scaled to MaxNodeScore)
DEFAULT_SHAPE_SCALED = [(0, 0), (100, 100)]
CUSTOM_SHAPE = [(50, 0), (80, 30), (100, 50)]


def _res(*pairs: tuple[int, int]) -> dict[str, StorageResource]:
    return {
        name: StorageResource(r, c) for name, (r, c) in zip(("hdd", "ssd"), pairs, strict=False)
    }


@pytest.mark.parametrize(
    ("shape", "resources", "score"),
    [
        pytest.param(DEFAULT_SHAPE_SCALED, _res((0, 100)), 0, id="TestScore/default shape, single class/0"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((30, 100)), 30, id="TestScore/default shape, single class/30"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((50, 100)), 50, id="TestScore/default shape, single class/50"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((100, 100)), 100, id="TestScore/default shape, single class/100"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((0, 100), (0, 100)), 0, id="TestScore/default shape, multiple classes/0"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((0, 100), (30, 100)), 15, id="TestScore/default shape, multiple classes/15"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((30, 100), (30, 100)), 30, id="TestScore/default shape, multiple classes/30"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((30, 100), (60, 100)), 45, id="TestScore/default shape, multiple classes/45"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((50, 100), (50, 100)), 50, id="TestScore/default shape, multiple classes/50"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((50, 100), (100, 100)), 75, id="TestScore/default shape, multiple classes/75"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((100, 100), (100, 100)), 100, id="TestScore/default shape, multiple classes/100"),
        pytest.param(CUSTOM_SHAPE, _res((0, 100), (0, 100)), 0, id="TestScore/custom shape, multiple classes/0"),
        pytest.param(CUSTOM_SHAPE, _res((0, 100), (30, 100)), 0, id="TestScore/custom shape, multiple classes/0b"),
        pytest.param(CUSTOM_SHAPE, _res((30, 100), (30, 100)), 0, id="TestScore/custom shape, multiple classes/0c"),
        pytest.param(CUSTOM_SHAPE, _res((30, 100), (60, 100)), 5, id="TestScore/custom shape, multiple classes/5"),
        pytest.param(CUSTOM_SHAPE, _res((50, 100), (100, 100)), 25, id="TestScore/custom shape, multiple classes/25"),
        pytest.param(CUSTOM_SHAPE, _res((90, 100), (90, 100)), 40, id="TestScore/custom shape, multiple classes/40"),
        pytest.param(CUSTOM_SHAPE, _res((100, 100), (100, 100)), 50, id="TestScore/custom shape, multiple classes/50"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((5, 0)), 100, id="zero capacity counts as full"),
        pytest.param(DEFAULT_SHAPE_SCALED, _res((200, 100)), 100, id="requested above capacity counts as full"),
        pytest.param(DEFAULT_SHAPE_SCALED, {}, 0, id="no class"),
    ],
)  # fmt: skip
def test_score(
    shape: list[tuple[int, int]], resources: dict[str, StorageResource], score: int
) -> None:
    assert build_scorer_function(shape)(resources) == score


def test_selected_node_elsewhere_is_a_bind_conflict() -> None:
    """FindPodVolumes' fast path: a claim whose provisioning started for another node."""
    pvc = pvc_set_selected_node(provisioned_pvc, "node2")
    binder, _ = new_env([pv_node1a], [unbound_pvc, pvc])
    pod_volumes, reasons = find_pod_volumes(binder, binder_pod([unbound_pvc, pvc]), node1)
    assert reasons == [ERR_REASON_BIND_CONFLICT]
    assert pod_volumes == PodVolumes(None, None)
