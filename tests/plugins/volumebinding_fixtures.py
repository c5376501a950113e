"""Builders and a fake handle for the VolumeBinding tests (upstream ``volumebinding/test_utils.go``
and the fixtures of ``binder_test.go``).

- :class:`FakeClient` is the API server of upstream's ``pvtesting.VolumeReactor``: an update with
  a stale resourceVersion is a conflict, an update that changes nothing keeps the version, any
  other bumps it; every write reaches the informer (``handle.cluster``) at once, as the test
  informers do, unless ``propagate`` is off.
- :func:`fake_handle` is a ``kubesched.testing.FakeHandle`` with that client; :func:`add` puts
  objects into its cluster (and PVs and PVCs into the client's store).
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched._errors import ConflictError, NotFoundError
from kubesched.api._objects import (
    CSIDriver,
    CSIDriverSpec,
    CSINode,
    CSIStorageCapacity,
    EphemeralVolumeSource,
    GCEPersistentDiskVolumeSource,
    LabelSelector,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    ObjectReference,
    OwnerReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource,
    PersistentVolumeSpec,
    PersistentVolumeStatus,
    Pod,
    PodSpec,
    RBDVolumeSource,
    StorageClass,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
    Volume,
    VolumeNodeAffinity,
    VolumeResourceRequirements,
)
from kubesched.api._objects import CSIVolumeSource as CSIVolumeSourceObj
from kubesched.cache._clusterstate import ClusterState
from kubesched.plugins.volumebinding.binder import BindingInfo, PodVolumes, VolumeBinder
from kubesched.plugins.volumebinding.helpers import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    MIGRATED_PLUGINS_ANNOTATION,
    VolumeError,
)
from kubesched.testing import FakeHandle

replace = msgspec.structs.replace

# --- objects -------------------------------------------------------------------------------------


def node(name: str, **labels: str) -> Node:
    """``makeNode(name)``: labelled ``kubernetes.io/hostname: <name>``, then ``labels``."""
    return node_labels(name, labels)


def node_labels(name: str, labels: dict[str, str]) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels={"kubernetes.io/hostname": name, **labels}))


def storage_class(
    name: str,
    mode: str | None = "WaitForFirstConsumer",
    provisioner: str = "",
    topology: dict[str, list[str]] | None = None,
) -> StorageClass:
    sc = StorageClass(metadata=ObjectMeta(name=name), provisioner=provisioner)
    sc.volume_binding_mode = mode
    if topology:
        sc.allowed_topologies = [
            TopologySelectorTerm(
                match_label_expressions=[
                    TopologySelectorLabelRequirement(key=k, values=v) for k, v in topology.items()
                ]
            )
        ]
    return sc


def csi_driver(name: str, storage_capacity: bool | None) -> CSIDriver:
    return CSIDriver(
        metadata=ObjectMeta(name=name), spec=CSIDriverSpec(storage_capacity=storage_capacity)
    )


def csi_node(name: str, migrated: str | None = None) -> CSINode:
    ann = {} if migrated is None else {MIGRATED_PLUGINS_ANNOTATION: migrated}
    return CSINode(metadata=ObjectMeta(name=name, annotations=ann))


def capacity(
    name: str,
    class_name: str,
    on: Node | None,
    capacity_: str = "",
    max_size: str = "",
    key: str = "nodeKey",
) -> CSIStorageCapacity:
    """``makeCapacity``: a nodeTopology selecting ``on``'s ``key`` label (all nodes for None)."""
    topo = LabelSelector()
    if on is not None:
        topo = LabelSelector(match_labels={key: on.metadata.labels.get(key, "")})
    return CSIStorageCapacity(
        metadata=ObjectMeta(name=name),
        storage_class_name=class_name,
        node_topology=topo,
        capacity=capacity_ or None,
        maximum_volume_size=max_size or None,
    )


def _affinity(key_values: dict[str, list[str]]) -> VolumeNodeAffinity:
    exprs = [
        NodeSelectorRequirement(key=k, operator="In", values=list(v)) for k, v in key_values.items()
    ]
    return VolumeNodeAffinity(
        required=NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=exprs)])
    )


class PVBuilder:
    """``makePV(name, className)`` of test_utils.go."""

    def __init__(self, name: str, class_name: str) -> None:
        self.pv = PersistentVolume(
            metadata=ObjectMeta(name=name), spec=PersistentVolumeSpec(storage_class_name=class_name)
        )

    def phase(self, phase: str) -> PVBuilder:
        self.pv = replace(self.pv, status=PersistentVolumeStatus(phase=phase))
        return self

    def capacity(self, q: str) -> PVBuilder:
        self.pv = replace(self.pv, spec=replace(self.pv.spec, capacity={"storage": q}))
        return self

    def node_affinity(self, key_values: dict[str, list[str]]) -> PVBuilder:
        self.pv = replace(self.pv, spec=replace(self.pv.spec, node_affinity=_affinity(key_values)))
        return self

    def obj(self) -> PersistentVolume:
        return self.pv


def make_pv(name: str, class_name: str) -> PVBuilder:
    return PVBuilder(name, class_name)


class PVCBuilder:
    """``makePVC(name, storageClassName)`` of test_utils.go (namespace ``default``)."""

    def __init__(self, name: str, class_name: str) -> None:
        self.pvc = PersistentVolumeClaim(
            metadata=ObjectMeta(name=name, namespace="default"),
            spec=PersistentVolumeClaimSpec(storage_class_name=class_name),
        )

    def bound_pv(self, pv_name: str) -> PVCBuilder:
        meta = replace(
            self.pvc.metadata,
            annotations={**self.pvc.metadata.annotations, ANN_BIND_COMPLETED: "true"},
        )
        self.pvc = replace(
            self.pvc, metadata=meta, spec=replace(self.pvc.spec, volume_name=pv_name)
        )
        return self

    def uid(self, uid: str) -> PVCBuilder:
        self.pvc = replace(self.pvc, metadata=replace(self.pvc.metadata, uid=uid))
        return self

    def request(self, q: str) -> PVCBuilder:
        res = VolumeResourceRequirements(requests={"storage": q})
        self.pvc = replace(self.pvc, spec=replace(self.pvc.spec, resources=res))
        return self

    def phase(self, phase: str) -> PVCBuilder:
        self.pvc = replace(self.pvc, status=replace(self.pvc.status, phase=phase))
        return self

    def obj(self) -> PersistentVolumeClaim:
        return self.pvc


def make_pvc(name: str, class_name: str) -> PVCBuilder:
    return PVCBuilder(name, class_name)


class PodBuilder:
    """``makePod(name)`` of test_utils.go (namespace ``default``, no UID)."""

    def __init__(self, name: str) -> None:
        self.pod = Pod(metadata=ObjectMeta(name=name, namespace="default"), spec=PodSpec())

    def namespace(self, ns: str) -> PodBuilder:
        self.pod = replace(self.pod, metadata=replace(self.pod.metadata, namespace=ns))
        return self

    def uid(self, uid: str) -> PodBuilder:
        self.pod = replace(self.pod, metadata=replace(self.pod.metadata, uid=uid))
        return self

    def node_name(self, name: str) -> PodBuilder:
        self.pod = replace(self.pod, spec=replace(self.pod.spec, node_name=name))
        return self

    def _volume(self, vol: Volume) -> PodBuilder:
        self.pod = replace(
            self.pod, spec=replace(self.pod.spec, volumes=[*self.pod.spec.volumes, vol])
        )
        return self

    def pvc_volume(self, pvc_name: str, name: str = "") -> PodBuilder:
        return self._volume(
            Volume(
                name=name,
                persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=pvc_name),
            )
        )

    def pvcs(self, pvcs: list[PersistentVolumeClaim]) -> PodBuilder:
        for p in pvcs:
            self.pvc_volume(p.metadata.name)
        return self

    def ephemeral(self, name: str) -> PodBuilder:
        return self._volume(Volume(name=name, ephemeral=EphemeralVolumeSource()))

    def empty_dir(self) -> PodBuilder:
        return self._volume(Volume(name="empty", empty_dir={}))

    def csi(self, driver: str) -> PodBuilder:
        return self._volume(Volume(name="csi", csi=CSIVolumeSourceObj(driver=driver)))

    def obj(self) -> Pod:
        return self.pod


def make_pod(name: str) -> PodBuilder:
    return PodBuilder(name)


# --- binder_test.go's fixtures ---------------------------------------------------------------------

PROVISIONER = "test-provisioner"
NODE_LABEL_KEY = "nodeKey"
NODE_LABEL_VALUE = "node1"
WAIT_CLASS = "waitClass"
IMMEDIATE_CLASS = "immediateClass"
WAIT_CLASS_WITH_PROVISIONER = "waitClassWithProvisioner"
TOPO_MISMATCH_CLASS = "topoMismatchClass"
PVC_UNBOUND, PVC_PREBOUND, PVC_BOUND, PVC_SELECTED_NODE = range(4)


def binder_classes() -> list[StorageClass]:
    """The storage classes ``newTestBinder`` adds."""
    return [
        storage_class(
            WAIT_CLASS_WITH_PROVISIONER,
            provisioner=PROVISIONER,
            topology={NODE_LABEL_KEY: [NODE_LABEL_VALUE, "reference-value"]},
        ),
        storage_class(IMMEDIATE_CLASS, mode="Immediate"),
        storage_class(WAIT_CLASS, provisioner="kubernetes.io/no-provisioner"),
        storage_class(
            TOPO_MISMATCH_CLASS,
            provisioner=PROVISIONER,
            topology={NODE_LABEL_KEY: ["reference-value"]},
        ),
    ]


def make_test_pvc(
    name: str, size: str, node_: str, state: int, pv_name: str, rv: str, class_name: str | None
) -> PersistentVolumeClaim:
    """``makeTestPVC``."""
    ann: dict[str, str] = {}
    volume_name = ""
    if state == PVC_SELECTED_NODE:
        ann[ANN_SELECTED_NODE] = node_
    elif state in (PVC_BOUND, PVC_PREBOUND):
        if state == PVC_BOUND:
            ann[ANN_BIND_COMPLETED] = "yes"
        volume_name = pv_name
    return PersistentVolumeClaim(
        metadata=ObjectMeta(
            name=name, namespace="testns", uid="pvc-uid", resource_version=rv, annotations=ann
        ),
        spec=PersistentVolumeClaimSpec(
            resources=VolumeResourceRequirements(requests={"storage": size}),
            storage_class_name=class_name,
            volume_mode="Filesystem",
            volume_name=volume_name,
        ),
    )


def make_test_pv(
    name: str,
    node_: str,
    capacity_: str,
    version: str,
    bound_to: PersistentVolumeClaim | None,
    class_name: str,
) -> PersistentVolume:
    """``makeTestPV``."""
    spec = PersistentVolumeSpec(
        capacity={"storage": capacity_}, storage_class_name=class_name, volume_mode="Filesystem"
    )
    if node_:
        spec = replace(spec, node_affinity=_affinity({NODE_LABEL_KEY: [node_]}))
    ann: dict[str, str] = {}
    if bound_to is not None:
        m = bound_to.metadata
        spec = replace(
            spec,
            claim_ref=ObjectReference(
                kind="PersistentVolumeClaim",
                api_version="v1",
                resource_version=m.resource_version,
                name=m.name,
                namespace=m.namespace,
                uid=m.uid,
            ),
        )
        ann[ANN_BOUND_BY_CONTROLLER] = "yes"
    return PersistentVolume(
        metadata=ObjectMeta(name=name, resource_version=version, annotations=ann),
        spec=spec,
        status=PersistentVolumeStatus(phase="Available"),
    )


def make_generic_ephemeral_pvc(volume_name: str, owned: bool) -> PersistentVolumeClaim:
    """``makeGenericEphemeralPVC``: the claim of ``test-pod``'s ephemeral volume."""
    pvc = make_test_pvc(
        "test-pod-" + volume_name, "1G", "", PVC_BOUND, "pv-bound", "1", IMMEDIATE_CLASS
    )
    if owned:
        owner = OwnerReference(name="test-pod", uid="", controller=True)
        pvc = replace(pvc, metadata=replace(pvc.metadata, owner_references=[owner]))
    return pvc


def make_test_pv_for_csi_migration(
    labels: dict[str, str], pvc: PersistentVolumeClaim, migration_enabled: bool
) -> PersistentVolume:
    """``makeTestPVForCSIMigration``: a GCE PD PV (migrated) or an RBD one (not)."""
    pv = make_test_pv("pv-migration-bound", "node1", "1G", "1", pvc, WAIT_CLASS)
    spec = replace(pv.spec, node_affinity=None)
    if migration_enabled:
        spec = replace(
            spec,
            gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="test-disk", fs_type="ext4"),
        )
    else:
        spec = replace(spec, rbd=RBDVolumeSource(image="test-disk"))
    return replace(pv, metadata=replace(pv.metadata, labels=dict(labels)), spec=spec)


def with_annotations(obj: Any, **ann: str) -> Any:
    return replace(
        obj, metadata=replace(obj.metadata, annotations={**obj.metadata.annotations, **ann})
    )


def pvc_set_selected_node(pvc: PersistentVolumeClaim, node_: str) -> PersistentVolumeClaim:
    return with_annotations(pvc, **{ANN_SELECTED_NODE: node_})


def add_provision_ann(pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
    return pvc_set_selected_node(pvc, NODE_LABEL_VALUE)


def pvc_set_empty_annotations(pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
    return replace(pvc, metadata=replace(pvc.metadata, annotations={}))


def pv_remove_claim_uid(pv: PersistentVolume) -> PersistentVolume:
    assert pv.spec.claim_ref is not None
    return replace(pv, spec=replace(pv.spec, claim_ref=replace(pv.spec.claim_ref, uid="")))


def binder_pod(pvcs: list[PersistentVolumeClaim] = ()) -> Pod:  # type: ignore[assignment]
    """``makePod("test-pod").withNamespace("testns").withNodeName("node1").withPVCSVolume(...)``."""
    return make_pod("test-pod").namespace("testns").node_name("node1").pvcs(list(pvcs)).obj()


# --- the handle -----------------------------------------------------------------------------------


def _rv(obj: Any) -> int:
    return int(obj.metadata.resource_version or "0")


class FakeClient:
    """The PV/PVC verbs of a transport over an API store (``VolumeReactor``)."""

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self.pvs: dict[str, PersistentVolume] = {}
        self.pvcs: dict[tuple[str, str], PersistentVolumeClaim] = {}
        self.updated: list[tuple[str, str]] = []  # (kind, name) of every successful update
        self.propagate = True

    def add_pv(self, pv: PersistentVolume, *, cache: bool = True) -> None:
        self.pvs[pv.metadata.name] = pv
        if cache:
            self.cluster.pvs[pv.metadata.name] = pv

    def add_pvc(self, pvc: PersistentVolumeClaim, *, cache: bool = True) -> None:
        key = (pvc.metadata.namespace, pvc.metadata.name)
        self.pvcs[key] = pvc
        if cache:
            self.cluster.pvcs[key] = pvc

    def _update(self, store: dict[Any, Any], key: Any, obj: Any, kind: str) -> Any:
        stored = store.get(key)
        if stored is None:
            raise NotFoundError(f"cannot update {kind} {obj.metadata.name}: not found")
        if _rv(stored) != _rv(obj):
            raise ConflictError("Version conflict")
        if stored == obj:
            return obj
        new = replace(obj, metadata=replace(obj.metadata, resource_version=str(_rv(stored) + 1)))
        store[key] = new
        self.updated.append((kind, obj.metadata.name))
        return new

    async def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        new: PersistentVolume = self._update(self.pvs, pv.metadata.name, pv, "PersistentVolume")
        if self.propagate:
            self.cluster.pvs[pv.metadata.name] = new
        return new

    async def update_persistent_volume_claim(
        self, pvc: PersistentVolumeClaim
    ) -> PersistentVolumeClaim:
        key = (pvc.metadata.namespace, pvc.metadata.name)
        new: PersistentVolumeClaim = self._update(self.pvcs, key, pvc, "PersistentVolumeClaim")
        if self.propagate:
            self.cluster.pvcs[key] = new
        return new

    def create_pv(self, pv: PersistentVolume) -> PersistentVolume:
        self.add_pv(pv)
        return pv

    def delete_pvc(self, namespace: str, name: str) -> None:
        self.pvcs.pop((namespace, name), None)
        self.cluster.pvcs.pop((namespace, name), None)


def fake_handle(feature_gates: dict[str, bool] | None = None, **kw: Any) -> FakeHandle:
    """A :class:`kubesched.testing.FakeHandle` whose client is a :class:`FakeClient` over its
    cluster (``kw``: FakeHandle's, e.g. nodes and pods)."""
    cluster = ClusterState()
    return FakeHandle(cluster=cluster, client=FakeClient(cluster), feature_gates=feature_gates, **kw)


def add(handle: FakeHandle, *objs: Any) -> FakeHandle:
    """Put objects into the handle's cluster; PVs and PVCs also into its client's API store."""
    client: Any = handle.client
    for o in objs:
        if o.kind == "PersistentVolume":
            client.add_pv(o)
        elif o.kind == "PersistentVolumeClaim":
            client.add_pvc(o)
        else:
            handle.add(o)
    return handle


# --- binder_test.go's objects and testEnv ----------------------------------------------------------------------

unbound_pvc = make_test_pvc("unbound-pvc", "1G", "", PVC_UNBOUND, "", "1", WAIT_CLASS)
unbound_pvc2 = make_test_pvc("unbound-pvc2", "5G", "", PVC_UNBOUND, "", "1", WAIT_CLASS)
prebound_pvc = make_test_pvc("prebound-pvc", "1G", "", PVC_PREBOUND, "pv-node1a", "1", WAIT_CLASS)
prebound_pvc_node1a = make_test_pvc(
    "unbound-pvc", "1G", "", PVC_PREBOUND, "pv-node1a", "1", WAIT_CLASS
)
bound_pvc = make_test_pvc("bound-pvc", "1G", "", PVC_BOUND, "pv-bound", "1", WAIT_CLASS)
bound_pvc_node1a = make_test_pvc("unbound-pvc", "1G", "", PVC_BOUND, "pv-node1a", "1", WAIT_CLASS)
immediate_unbound_pvc = make_test_pvc(
    "immediate-unbound-pvc", "1G", "", PVC_UNBOUND, "", "1", IMMEDIATE_CLASS
)
immediate_bound_pvc = make_test_pvc(
    "immediate-bound-pvc", "1G", "", PVC_BOUND, "pv-bound-immediate", "1", IMMEDIATE_CLASS
)
provisioned_pvc = make_test_pvc(
    "provisioned-pvc", "1Gi", "", PVC_UNBOUND, "", "1", WAIT_CLASS_WITH_PROVISIONER
)
provisioned_pvc2 = make_test_pvc(
    "provisioned-pvc2", "1Gi", "", PVC_UNBOUND, "", "1", WAIT_CLASS_WITH_PROVISIONER
)
provisioned_pvc_higher_version = make_test_pvc(
    "provisioned-pvc2", "1Gi", "", PVC_UNBOUND, "", "2", WAIT_CLASS_WITH_PROVISIONER
)
provisioned_pvc_bound = make_test_pvc(
    "provisioned-pvc", "1Gi", "", PVC_BOUND, "pv-bound", "1", WAIT_CLASS_WITH_PROVISIONER
)
no_provisioner_pvc = make_test_pvc(
    "no-provisioner-pvc", "1Gi", "", PVC_UNBOUND, "", "1", WAIT_CLASS
)
topo_mismatch_pvc = make_test_pvc(
    "topo-mismatch-pvc", "1Gi", "", PVC_UNBOUND, "", "1", TOPO_MISMATCH_CLASS
)
selected_node_pvc = make_test_pvc(
    "provisioned-pvc", "1Gi", "node1", PVC_SELECTED_NODE, "", "1", WAIT_CLASS_WITH_PROVISIONER
)
bound_migration_pvc = make_test_pvc(
    "pvc-migration-bound", "1G", "", PVC_BOUND, "pv-migration-bound", "1", WAIT_CLASS
)
prov_migration_pvc_bound = make_test_pvc(
    "pvc-migration-provisioned",
    "1Gi",
    "",
    PVC_BOUND,
    "pv-migration-bound",
    "1",
    WAIT_CLASS_WITH_PROVISIONER,
)
conflicting_generic_pvc = make_generic_ephemeral_pvc("test-volume", False)
correct_generic_pvc = make_generic_ephemeral_pvc("test-volume", True)
pv_bound_generic = make_test_pv("pv-bound", "node1", "1G", "1", correct_generic_pvc, WAIT_CLASS)

pv_node1a = make_test_pv("pv-node1a", "node1", "5G", "1", None, WAIT_CLASS)
pv_node1b = make_test_pv("pv-node1b", "node1", "10G", "1", None, WAIT_CLASS)
pv_node1c = make_test_pv("pv-node1b", "node1", "5G", "1", None, WAIT_CLASS)
pv_node2 = make_test_pv("pv-node2", "node2", "1G", "1", None, WAIT_CLASS)
pv_bound = make_test_pv("pv-bound", "node1", "1G", "1", bound_pvc, WAIT_CLASS)
pv_node1a_bound = make_test_pv("pv-node1a", "node1", "5G", "1", unbound_pvc, WAIT_CLASS)
pv_node1b_bound = make_test_pv("pv-node1b", "node1", "10G", "1", unbound_pvc2, WAIT_CLASS)
pv_node1b_bound_higher_version = make_test_pv(
    "pv-node1b", "node1", "10G", "2", unbound_pvc2, WAIT_CLASS
)
pv_bound_immediate = make_test_pv(
    "pv-bound-immediate", "node1", "1G", "1", immediate_bound_pvc, IMMEDIATE_CLASS
)
pv_bound_immediate_node2 = make_test_pv(
    "pv-bound-immediate", "node2", "1G", "1", immediate_bound_pvc, IMMEDIATE_CLASS
)

ZONE1_LABELS = {
    "failure-domain.beta.kubernetes.io/zone": "us-east-1",
    "failure-domain.beta.kubernetes.io/region": "us-east-1a",
}
migration_pv_bound = make_test_pv_for_csi_migration(ZONE1_LABELS, bound_migration_pvc, True)
migration_pv_bound_to_unbound = make_test_pv_for_csi_migration(ZONE1_LABELS, unbound_pvc, True)
nonmigration_pv_bound_to_unbound = make_test_pv_for_csi_migration(ZONE1_LABELS, unbound_pvc, False)

node1 = node("node1", nodeKey="node1")
node2 = node("node2", nodeKey="node2")
node1_no_labels = node("node1")
node1_zone1 = node("node1", **{"topology.gke.io/zone": "us-east-1"})
node1_zone2 = node("node1", **{"topology.gke.io/zone": "us-east-2"})
csi_node1_migrated = csi_node("node1", "kubernetes.io/gce-pd")
csi_node1_not_migrated = csi_node("node1", "")

network_attached_capacity = capacity("net", WAIT_CLASS_WITH_PROVISIONER, None, "1Gi")
node1_capacity = capacity("net", WAIT_CLASS_WITH_PROVISIONER, node1, "1Gi")
node2_capacity = capacity("net", WAIT_CLASS_WITH_PROVISIONER, node2, "1Gi")

TEST_POD = binder_pod()


def binding(pvc: Any, pv: Any) -> BindingInfo:
    """``makeBinding``."""
    return BindingInfo(pvc=pvc, pv=pv)


def new_env(
    pvs: list[Any] | None = None,
    pvcs: list[Any] | None = None,
    *,
    api_pvs: list[Any] | None = None,
    api_pvcs: list[Any] | None = None,
    nodes: list[Any] = (),  # type: ignore[assignment]
    csi_nodes: list[Any] = (),  # type: ignore[assignment]
    driver: Any = None,
    capacities: list[Any] = (),  # type: ignore[assignment]
    pod: Any = None,
) -> tuple[VolumeBinder, FakeHandle]:
    """``newTestBinder`` with ``initVolumes(pvs, api_pvs)``, ``initClaims(pvcs, api_pvcs)``."""
    handle = fake_handle()
    add(handle, *binder_classes(), *nodes, *csi_nodes, *capacities)
    if driver is not None:
        add(handle, driver)
    for pv in pvs or []:
        handle.client.add_pv(pv, cache=True)
    if api_pvs is not None:
        handle.client.pvs = {pv.metadata.name: pv for pv in api_pvs}
    for pvc in pvcs or []:
        handle.client.add_pvc(pvc, cache=True)
    if api_pvcs is not None:
        handle.client.pvcs = {(p.metadata.namespace, p.metadata.name): p for p in api_pvcs}
    if pod is not None:
        add(handle, pod)
    return VolumeBinder(handle, 10.0), handle


def find_pod_volumes(binder: VolumeBinder, pod: Any, node_: Any) -> tuple[PodVolumes, list[str]]:
    """binder_test.go's ``findPodVolumes``."""
    claims = binder.get_pod_volume_claims(pod)
    if claims.unbound_claims_immediate:
        raise VolumeError("pod has unbound immediate PersistentVolumeClaims")
    return binder.find_pod_volumes(pod, claims, node_)


def assume_volumes(
    binder: VolumeBinder, bindings: list[BindingInfo] | None, claims: list[Any] | None
) -> None:
    """binder_test.go's ``assumeVolumes``."""
    for b in bindings or []:
        binder.pv_cache.assume(b.pv)
    for c in claims or []:
        binder.pvc_cache.assume(c)


def without_rv(obj: Any) -> Any:
    return replace(obj, metadata=replace(obj.metadata, resource_version=""))
