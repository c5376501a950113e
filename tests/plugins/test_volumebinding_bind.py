"""VolumeBinding's binder: the API updates and the wait for the PV controller (k/k
``plugins/volumebinding/binder_test.go``: TestBindAPIUpdate, TestCheckBindings,
TestCheckBindingsWithCSIMigration, TestBindPodVolumes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from volumebinding_fixtures import (
    TEST_POD,
    WAIT_CLASS,
    FakeHandle,
    add,
    add_provision_ann,
    assume_volumes,
    binding,
    bound_pvc_node1a,
    csi_node1_migrated,
    csi_node1_not_migrated,
    make_test_pv,
    migration_pv_bound,
    migration_pv_bound_to_unbound,
    new_env,
    node1,
    node1_no_labels,
    node1_zone1,
    node1_zone2,
    node2,
    nonmigration_pv_bound_to_unbound,
    prebound_pvc_node1a,
    prov_migration_pvc_bound,
    provisioned_pvc,
    provisioned_pvc2,
    provisioned_pvc_bound,
    provisioned_pvc_higher_version,
    pv_bound,
    pv_node1a,
    pv_node1a_bound,
    pv_node1b,
    pv_node1b_bound,
    pv_node1b_bound_higher_version,
    pv_node2,
    pv_remove_claim_uid,
    pvc_set_empty_annotations,
    pvc_set_selected_node,
    replace,
    selected_node_pvc,
    unbound_pvc,
    unbound_pvc2,
    without_rv,
)

from kubesched.plugins.volumebinding.binder import (
    BindingInfo,
    DynamicProvision,
    PodVolumes,
)
from kubesched.plugins.volumebinding.helpers import VolumeError

# --- bindAPIUpdate ----------------------------------------------------------------------------------


@dataclass
class APIUpdate:
    bindings: list[BindingInfo] | None = None
    cached_pvs: list[Any] = field(default_factory=list)
    api_pvs: list[Any] | None = None
    provisioned: list[Any] | None = None
    cached_pvcs: list[Any] = field(default_factory=list)
    api_pvcs: list[Any] | None = None
    fail: bool = False
    pvs: list[Any] = field(default_factory=list)
    want_api_pvs: list[Any] | None = None
    pvcs: list[Any] = field(default_factory=list)
    want_api_pvcs: list[Any] | None = None


API_UPDATE = {
    "nothing-to-bind-nil": APIUpdate(fail=True),
    "nothing-to-bind-bindings-nil": APIUpdate(provisioned=[], fail=True),
    "nothing-to-bind-provisionings-nil": APIUpdate(bindings=[], fail=True),
    "nothing-to-bind-empty": APIUpdate(bindings=[], provisioned=[]),
    "one-binding": APIUpdate(
        bindings=[binding(unbound_pvc, pv_node1a_bound)],
        cached_pvs=[pv_node1a],
        pvs=[pv_node1a_bound],
        provisioned=[],
    ),
    "two-bindings": APIUpdate(
        bindings=[binding(unbound_pvc, pv_node1a_bound), binding(unbound_pvc2, pv_node1b_bound)],
        cached_pvs=[pv_node1a, pv_node1b],
        pvs=[pv_node1a_bound, pv_node1b_bound],
        provisioned=[],
    ),
    "api-already-updated": APIUpdate(
        bindings=[binding(unbound_pvc, pv_node1a_bound)],
        cached_pvs=[pv_node1a_bound],
        pvs=[pv_node1a_bound],
        provisioned=[],
    ),
    "api-update-failed": APIUpdate(
        bindings=[binding(unbound_pvc, pv_node1a_bound), binding(unbound_pvc2, pv_node1b_bound)],
        cached_pvs=[pv_node1a, pv_node1b],
        api_pvs=[pv_node1a, pv_node1b_bound_higher_version],
        pvs=[pv_node1a_bound, pv_node1b],
        want_api_pvs=[pv_node1a_bound, pv_node1b_bound_higher_version],
        provisioned=[],
        fail=True,
    ),
    "one-provisioned-pvc": APIUpdate(
        bindings=[],
        provisioned=[add_provision_ann(provisioned_pvc)],
        cached_pvcs=[provisioned_pvc],
        pvcs=[add_provision_ann(provisioned_pvc)],
    ),
    "provision-api-update-failed": APIUpdate(
        bindings=[],
        provisioned=[add_provision_ann(provisioned_pvc), add_provision_ann(provisioned_pvc2)],
        cached_pvcs=[provisioned_pvc, provisioned_pvc2],
        api_pvcs=[provisioned_pvc, provisioned_pvc_higher_version],
        pvcs=[add_provision_ann(provisioned_pvc), provisioned_pvc2],
        want_api_pvcs=[add_provision_ann(provisioned_pvc), provisioned_pvc_higher_version],
        fail=True,
    ),
    "binding-succeed, provision-api-update-failed": APIUpdate(
        bindings=[binding(unbound_pvc, pv_node1a_bound)],
        cached_pvs=[pv_node1a],
        pvs=[pv_node1a_bound],
        provisioned=[add_provision_ann(provisioned_pvc), add_provision_ann(provisioned_pvc2)],
        cached_pvcs=[provisioned_pvc, provisioned_pvc2],
        api_pvcs=[provisioned_pvc, provisioned_pvc_higher_version],
        pvcs=[add_provision_ann(provisioned_pvc), provisioned_pvc2],
        want_api_pvcs=[add_provision_ann(provisioned_pvc), provisioned_pvc_higher_version],
        fail=True,
    ),
}


@pytest.mark.anyio
@pytest.mark.parametrize(
    "s", [pytest.param(s, id=f"TestBindAPIUpdate/{n}") for n, s in API_UPDATE.items()]
)
async def test_bind_api_update(s: APIUpdate) -> None:
    binder, handle = new_env(s.cached_pvs, s.cached_pvcs, api_pvs=s.api_pvs, api_pvcs=s.api_pvcs)
    bindings = None if s.bindings is None else [BindingInfo(b.pvc, b.pv) for b in s.bindings]
    claims = None if s.provisioned is None else list(s.provisioned)
    assume_volumes(binder, bindings, claims)
    if s.fail:
        with pytest.raises(VolumeError):
            await binder.bind_api_update(TEST_POD, bindings, claims)
    else:
        await binder.bind_api_update(TEST_POD, bindings, claims)
    # validateBind / validateProvision, resource versions aside
    for pv in s.pvs:
        assert without_rv(binder.pv_cache.get(pv.metadata.name)) == without_rv(pv)
    for pv in s.pvs if s.want_api_pvs is None else s.want_api_pvs:
        assert without_rv(handle.client.pvs[pv.metadata.name]) == without_rv(pv)
    for pvc in s.pvcs:
        assert without_rv(binder.pvc_cache.get(("testns", pvc.metadata.name))) == without_rv(pvc)
    for pvc in s.pvcs if s.want_api_pvcs is None else s.want_api_pvcs:
        assert without_rv(handle.client.pvcs[("testns", pvc.metadata.name)]) == without_rv(pvc)


# --- checkBindings ------------------------------------------------------------------------------------


@dataclass
class Check:
    init_pvs: list[Any] = field(default_factory=list)
    init_pvcs: list[Any] = field(default_factory=list)
    bindings: list[BindingInfo] | None = None
    provisioned: list[Any] | None = None
    api_pvs: list[Any] = field(default_factory=list)
    api_pvcs: list[Any] = field(default_factory=list)
    delete_pvs: bool = False
    delete_pvcs: bool = False
    fail: bool = False
    bound: bool = False
    nodes: list[Any] = field(default_factory=lambda: [node1])
    csi_nodes: list[Any] = field(default_factory=list)


B1 = [binding(unbound_pvc, pv_node1a_bound)]
CHECK = {
    "nothing-to-bind-nil": Check(fail=True),
    "nothing-to-bind-bindings-nil": Check(provisioned=[], fail=True),
    "nothing-to-bind-provisionings-nil": Check(bindings=[], fail=True),
    "nothing-to-bind": Check(bindings=[], provisioned=[], bound=True),
    "binding-bound": Check(
        bindings=B1,
        provisioned=[],
        init_pvs=[pv_node1a_bound],
        init_pvcs=[bound_pvc_node1a],
        bound=True,
    ),
    "binding-prebound": Check(
        bindings=B1, provisioned=[], init_pvs=[pv_node1a_bound], init_pvcs=[prebound_pvc_node1a]
    ),
    "binding-unbound": Check(
        bindings=B1, provisioned=[], init_pvs=[pv_node1a_bound], init_pvcs=[unbound_pvc]
    ),
    "binding-pvc-not-exists": Check(
        bindings=B1, provisioned=[], init_pvs=[pv_node1a_bound], fail=True
    ),
    "binding-pv-not-exists": Check(
        bindings=B1,
        provisioned=[],
        init_pvs=[pv_node1a_bound],
        init_pvcs=[bound_pvc_node1a],
        delete_pvs=True,
        fail=True,
    ),
    "binding-claimref-nil": Check(
        bindings=B1,
        provisioned=[],
        init_pvs=[pv_node1a],
        init_pvcs=[bound_pvc_node1a],
        api_pvs=[pv_node1a],
        api_pvcs=[bound_pvc_node1a],
        fail=True,
    ),
    "binding-claimref-uid-empty": Check(
        bindings=B1,
        provisioned=[],
        init_pvs=[pv_node1a_bound],
        init_pvcs=[bound_pvc_node1a],
        api_pvs=[pv_remove_claim_uid(pv_node1a_bound)],
        api_pvcs=[bound_pvc_node1a],
        fail=True,
    ),
    "binding-one-bound,one-unbound": Check(
        bindings=[binding(unbound_pvc, pv_node1a_bound), binding(unbound_pvc2, pv_node1b_bound)],
        provisioned=[],
        init_pvs=[pv_node1a_bound, pv_node1b_bound],
        init_pvcs=[bound_pvc_node1a, unbound_pvc2],
    ),
    "provisioning-pvc-bound": Check(
        bindings=[],
        provisioned=[add_provision_ann(provisioned_pvc)],
        init_pvs=[pv_bound],
        init_pvcs=[provisioned_pvc_bound],
        api_pvcs=[add_provision_ann(provisioned_pvc_bound)],
        bound=True,
    ),
    "provisioning-pvc-unbound": Check(
        bindings=[],
        provisioned=[add_provision_ann(provisioned_pvc)],
        init_pvcs=[add_provision_ann(provisioned_pvc)],
    ),
    "provisioning-pvc-not-exists": Check(
        bindings=[],
        provisioned=[add_provision_ann(provisioned_pvc)],
        init_pvcs=[provisioned_pvc],
        delete_pvcs=True,
        fail=True,
    ),
    "provisioning-pvc-annotations-nil": Check(
        bindings=[],
        provisioned=[add_provision_ann(provisioned_pvc)],
        init_pvcs=[provisioned_pvc],
        api_pvcs=[provisioned_pvc],
        fail=True,
    ),
    "provisioning-pvc-selected-node-dropped": Check(
        bindings=[],
        provisioned=[add_provision_ann(provisioned_pvc)],
        init_pvcs=[provisioned_pvc],
        api_pvcs=[pvc_set_empty_annotations(provisioned_pvc)],
        fail=True,
    ),
    "provisioning-pvc-selected-node-wrong-node": Check(
        init_pvcs=[provisioned_pvc],
        bindings=[],
        provisioned=[add_provision_ann(provisioned_pvc)],
        api_pvcs=[pvc_set_selected_node(provisioned_pvc, "wrong-node")],
        fail=True,
    ),
    "binding-bound-provisioning-unbound": Check(
        bindings=B1,
        provisioned=[add_provision_ann(provisioned_pvc)],
        init_pvs=[pv_node1a_bound],
        init_pvcs=[bound_pvc_node1a, add_provision_ann(provisioned_pvc)],
    ),
    "tolerate-provisioning-pvc-bound-pv-not-found": Check(
        init_pvs=[pv_node1a],
        init_pvcs=[provisioned_pvc],
        bindings=[],
        provisioned=[add_provision_ann(provisioned_pvc)],
        api_pvcs=[add_provision_ann(provisioned_pvc_bound)],
        delete_pvs=True,
    ),
}

CHECK_MIGRATION = {
    "provisioning-pvc-bound": Check(
        bindings=[],
        provisioned=[add_provision_ann(prov_migration_pvc_bound)],
        init_pvs=[migration_pv_bound],
        init_pvcs=[prov_migration_pvc_bound],
        nodes=[node1_zone1],
        csi_nodes=[csi_node1_migrated],
        api_pvcs=[add_provision_ann(prov_migration_pvc_bound)],
        bound=True,
    ),
    "binding-node-pv-same-zone": Check(
        bindings=[binding(unbound_pvc, migration_pv_bound_to_unbound)],
        provisioned=[],
        init_pvs=[migration_pv_bound_to_unbound],
        init_pvcs=[unbound_pvc],
        nodes=[node1_zone1],
        csi_nodes=[csi_node1_migrated],
    ),
    "binding-without-csinode": Check(
        bindings=[binding(unbound_pvc, migration_pv_bound_to_unbound)],
        provisioned=[],
        init_pvs=[migration_pv_bound_to_unbound],
        init_pvcs=[unbound_pvc],
        nodes=[node1_zone1],
    ),
    "binding-non-migrated-plugin": Check(
        bindings=[binding(unbound_pvc, migration_pv_bound_to_unbound)],
        provisioned=[],
        init_pvs=[migration_pv_bound_to_unbound],
        init_pvcs=[unbound_pvc],
        nodes=[node1_zone1],
        csi_nodes=[csi_node1_not_migrated],
    ),
    "binding-node-pv-in-different-zones": Check(
        bindings=[binding(unbound_pvc, migration_pv_bound_to_unbound)],
        provisioned=[],
        init_pvs=[migration_pv_bound_to_unbound],
        init_pvcs=[unbound_pvc],
        nodes=[node1_zone2],
        csi_nodes=[csi_node1_migrated],
        fail=True,
    ),
    "binding-node-pv-different-zones-migration-off": Check(
        bindings=[binding(unbound_pvc, nonmigration_pv_bound_to_unbound)],
        provisioned=[],
        init_pvs=[nonmigration_pv_bound_to_unbound],
        init_pvcs=[unbound_pvc],
        nodes=[node1_zone2],
        csi_nodes=[csi_node1_migrated],
    ),
}


async def _run_check(s: Check) -> None:
    binder, handle = new_env(
        s.init_pvs, s.init_pvcs, nodes=s.nodes, csi_nodes=s.csi_nodes, pod=TEST_POD
    )
    assume_volumes(binder, s.bindings, s.provisioned)
    if s.delete_pvs:
        for pv in s.init_pvs:
            handle.cluster.pvs.pop(pv.metadata.name, None)
    for pv in s.api_pvs:
        await handle.client.update_persistent_volume(pv)
    if s.delete_pvcs:
        for pvc in s.init_pvcs:
            handle.cluster.pvcs.pop((pvc.metadata.namespace, pvc.metadata.name), None)
    for pvc in s.api_pvcs:
        await handle.client.update_persistent_volume_claim(pvc)
    if s.fail:
        with pytest.raises(VolumeError):
            binder.check_bindings(TEST_POD, s.bindings, s.provisioned)
    else:
        assert binder.check_bindings(TEST_POD, s.bindings, s.provisioned) is s.bound


@pytest.mark.anyio
@pytest.mark.parametrize(
    "s", [pytest.param(s, id=f"TestCheckBindings/{n}") for n, s in CHECK.items()]
)
async def test_check_bindings(s: Check) -> None:
    await _run_check(s)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "s",
    [
        pytest.param(s, id=f"TestCheckBindingsWithCSIMigration/{n}")
        for n, s in CHECK_MIGRATION.items()
    ],
)
async def test_check_bindings_with_csi_migration(s: Check) -> None:
    await _run_check(s)


def test_check_bindings_messages() -> None:
    """checkBindings' errors, whole."""
    binder, handle = new_env(
        [pv_node1a_bound], [bound_pvc_node1a], nodes=[node1_no_labels], pod=TEST_POD
    )
    with pytest.raises(VolumeError) as e:
        binder.check_bindings(TEST_POD, B1, [])
    assert str(e.value) == (
        'pv "pv-node1a" node affinity doesn\'t match node "node1": no matching NodeSelectorTerms'
    )
    with pytest.raises(VolumeError) as e:
        binder.check_bindings(TEST_POD, None, [])
    assert str(e.value) == 'failed to get cached bindings for pod "testns/test-pod"'
    handle.cluster.nodes.clear()
    with pytest.raises(VolumeError) as e:
        binder.check_bindings(TEST_POD, [], [])
    assert str(e.value) == 'failed to get node "node1": node "node1" not found'
    binder, handle = new_env([pv_node1a_bound], [], nodes=[node1], pod=TEST_POD)
    with pytest.raises(VolumeError) as e:
        binder.check_bindings(TEST_POD, B1, [])
    assert (
        str(e.value)
        == 'failed to check binding: could not find v1.PersistentVolumeClaim "testns/unbound-pvc"'
    )
    handle.delete(TEST_POD)
    with pytest.raises(VolumeError) as e:
        binder.check_bindings(TEST_POD, [], [])
    assert str(e.value) == 'pod does not exist any more: pod "test-pod" not found'


# --- BindPodVolumes ---------------------------------------------------------------------------------


@dataclass
class Bind:
    bindings_nil: bool = False
    nodes: list[Any] = field(default_factory=lambda: [node1])
    init_pvs: list[Any] = field(default_factory=list)
    init_pvcs: list[Any] = field(default_factory=list)
    binding: BindingInfo | None = None
    claim_to_provision: Any = None
    api_pv: Any = None
    api_pvc: Any = None
    delay: str = ""  # what runs 5 s after BindPodVolumes starts
    fail: bool = False


BIND = {
    "nothing-to-bind-nil": Bind(bindings_nil=True, fail=True),
    "nothing-to-bind-empty": Bind(),
    "already-bound": Bind(
        binding=binding(unbound_pvc, pv_node1a_bound),
        init_pvs=[pv_node1a_bound],
        init_pvcs=[bound_pvc_node1a],
    ),
    "binding-static-pv-succeeds-after-time": Bind(
        init_pvs=[pv_node1a],
        init_pvcs=[unbound_pvc],
        binding=binding(unbound_pvc, pv_node1a_bound),
        delay="bind-static",
    ),
    "binding-dynamic-pv-succeeds-after-time": Bind(
        claim_to_provision=pvc_set_selected_node(provisioned_pvc, "node1"),
        init_pvcs=[provisioned_pvc],
        delay="bind-dynamic",
    ),
    "bound-by-pv-controller-before-bind": Bind(
        init_pvs=[pv_node1a],
        init_pvcs=[unbound_pvc],
        binding=binding(unbound_pvc, pv_node1a_bound),
        api_pv=pv_node1a_bound,
        api_pvc=bound_pvc_node1a,
        fail=True,
    ),
    "pod-deleted-after-time": Bind(
        binding=binding(unbound_pvc, pv_node1a_bound),
        init_pvs=[pv_node1a],
        init_pvcs=[unbound_pvc],
        delay="delete-pod",
        fail=True,
    ),
    "binding-times-out": Bind(
        binding=binding(unbound_pvc, pv_node1a_bound),
        init_pvs=[pv_node1a],
        init_pvcs=[unbound_pvc],
        fail=True,
    ),
    "binding-fails": Bind(
        binding=binding(unbound_pvc2, pv_node1b_bound),
        init_pvs=[pv_node1b],
        init_pvcs=[unbound_pvc2],
        fail=True,
    ),
    "check-fails": Bind(
        binding=binding(unbound_pvc, pv_node1a_bound),
        init_pvs=[pv_node1a],
        init_pvcs=[unbound_pvc],
        delay="delete-pvc",
        fail=True,
    ),
    "node-affinity-fails": Bind(
        binding=binding(unbound_pvc, pv_node1a_bound),
        init_pvs=[pv_node1a_bound],
        init_pvcs=[bound_pvc_node1a],
        nodes=[node1_no_labels],
        fail=True,
    ),
    "node-affinity-fails-dynamic-provisioning": Bind(
        init_pvs=[pv_node1a, pv_node2],
        init_pvcs=[selected_node_pvc],
        claim_to_provision=selected_node_pvc,
        nodes=[node1, node2],
        delay="bind-node2",
        fail=True,
    ),
}


async def _delayed(s: Bind, handle: FakeHandle) -> None:
    await anyio.sleep(5)
    client = handle.client
    if s.delay in ("bind-static", "bind-node2"):
        pvc = s.init_pvcs[0]
        pv_name = (
            s.init_pvs[0].metadata.name if s.delay == "bind-static" else pv_node2.metadata.name
        )
        new = replace(
            pvc,
            metadata=replace(
                pvc.metadata,
                annotations={**pvc.metadata.annotations, "pv.kubernetes.io/bind-completed": "yes"},
            ),
            spec=replace(pvc.spec, volume_name=pv_name),
        )
        await client.update_persistent_volume_claim(new)
    elif s.delay == "bind-dynamic":
        pvc = client.pvcs[("testns", "provisioned-pvc")]
        client.create_pv(make_test_pv("dynamic-pv", "node1", "1G", "1", pvc, WAIT_CLASS))
        new = replace(
            pvc,
            metadata=replace(
                pvc.metadata,
                annotations={**pvc.metadata.annotations, "pv.kubernetes.io/bind-completed": "yes"},
            ),
            spec=replace(pvc.spec, volume_name="dynamic-pv"),
        )
        await client.update_persistent_volume_claim(new)
    elif s.delay == "delete-pod":
        handle.delete(TEST_POD)
    elif s.delay == "delete-pvc":
        pvc = s.init_pvcs[0]
        client.delete_pvc(pvc.metadata.namespace, pvc.metadata.name)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "s", [pytest.param(s, id=f"TestBindPodVolumes/{n}") for n, s in BIND.items()]
)
async def test_bind_pod_volumes(s: Bind) -> None:
    binder, handle = new_env(pod=TEST_POD)
    bindings: list[BindingInfo] = []
    claims: list[Any] = []
    if not s.bindings_nil:
        if s.binding is not None:
            bindings = [BindingInfo(s.binding.pvc, s.binding.pv)]
        if s.claim_to_provision is not None:
            claims = [s.claim_to_provision]
        add(handle, *s.nodes)
        for pv in s.init_pvs:
            handle.client.add_pv(pv)
        for pvc in s.init_pvcs:
            handle.client.add_pvc(pvc)
        assume_volumes(binder, bindings, claims)
    if s.api_pv is not None:
        await handle.client.update_persistent_volume(s.api_pv)
    if s.api_pvc is not None:
        await handle.client.update_persistent_volume_claim(s.api_pvc)
    pod_volumes = PodVolumes(bindings, [DynamicProvision(c) for c in claims])
    error: VolumeError | None = None
    async with anyio.create_task_group() as tg:
        if s.delay:
            tg.start_soon(_delayed, s, handle)
        try:
            await binder.bind_pod_volumes(TEST_POD, pod_volumes)
        except VolumeError as e:
            error = e
    assert (error is not None) == s.fail, error


@pytest.mark.anyio
async def test_bind_pod_volumes_messages() -> None:
    """The timeout and a failed check, as PreBind reports them; the wait's first check comes
    one second after the API updates, then one per second."""
    binder, handle = new_env([pv_node1a], [unbound_pvc], nodes=[node1], pod=TEST_POD)
    bindings = [binding(unbound_pvc, pv_node1a_bound)]
    assume_volumes(binder, bindings, [])
    start = anyio.current_time()
    with pytest.raises(VolumeError) as e:
        await binder.bind_pod_volumes(TEST_POD, PodVolumes(bindings, []))
    assert str(e.value) == "binding volumes: context deadline exceeded"
    assert anyio.current_time() - start == pytest.approx(10)
    handle.delete(TEST_POD)
    start = anyio.current_time()
    with pytest.raises(VolumeError) as e:
        await binder.bind_pod_volumes(TEST_POD, PodVolumes([], []))
    assert str(e.value) == 'binding volumes: pod does not exist any more: pod "test-pod" not found'
    assert anyio.current_time() - start == pytest.approx(1)
