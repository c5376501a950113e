"""The served kinds, as a table: one ``ResourceSpec`` row per (group, version, resource).

The server routes a request by (group, version, resource) to its row and hands it to the
generic handlers (``_handlers``); discovery and OpenAPI (``_discovery``) are generated from the
same rows.  A row says what the kind is (names, scope, verbs, categories), how ``kubectl get``
prints it (``printer``), where its objects live and how they are decoded (``backend``: the
FakeCluster's Structs, or the server's generic object store of plain dicts), and names hooks
only where the kind truly differs (``_kinds``).  A kind with no simulation behaviour is a row
with none of them, e.g.::

    ResourceSpec("apps", "v1", "deployments", "Deployment", namespaced=True,
                 short_names=("deploy",), categories=("all",), subresources=STATUS)

The row type and its subresources are ``_resource``'s (re-exported here).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from . import _defaults as defaults
from . import _events as events
from . import _kinds
from . import _table as printers
from ._resource import STATUS, VERBS, ResourceSpec, Subresource, SubresourceView, View
from ._store import CLUSTER

__all__ = [
    "CRD_GROUP_PRIORITY",
    "DEFAULT",
    "GROUPS",
    "GROUP_PRIORITY",
    "RESOURCES",
    "SCALE",
    "STATUS",
    "VERBS",
    "Registry",
    "ResourceSpec",
    "Subresource",
    "SubresourceView",
    "View",
    "find_resource",
    "group_exists",
    "reindex",
    "resources_of",
]

SCALE: Mapping[str, Subresource] = {
    "scale": Subresource(
        ("get", "patch", "update"),
        kind="Scale",
        group="autoscaling",
        version="v1",
        view=SubresourceView(_kinds.scale_of, _kinds.write_scale, printers.SCALE),
    )
}
"""The ``scale`` subresource of the kinds with replicas (Deployments, ReplicaSets, StatefulSets,
ReplicationControllers): an autoscaling/v1 Scale of the object's ``spec.replicas``,
``status.replicas`` and selector.  Jobs have none (upstream dropped it)."""


_BY_PATH: dict[tuple[str, str, str], ResourceSpec] = {}


def find_resource(group: str, version: str, plural: str) -> ResourceSpec | None:
    return _BY_PATH.get((group, version, plural))


# --- the table ---------------------------------------------------------------------------------

_CORE_EVENTS = View(("events.k8s.io", "v1", "events"), events.event_to_core, events.event_from_core)
_BIND = _kinds.binder(find_resource)


def _as_version(api_version: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def convert(d: dict[str, Any]) -> dict[str, Any]:
        return {**d, "apiVersion": api_version} if "apiVersion" in d or "kind" in d else d

    return convert


# DeviceTaintRule in resource.k8s.io/v1alpha3 (1.33-1.35; the scheduler's informer up to 1.35)
# and v1beta2 (1.36's): the same fields from 1.35, one object served in both versions
_DEVICE_TAINT_RULES_V1ALPHA3 = View(
    ("resource.k8s.io", "v1beta2", "devicetaintrules"),
    _as_version("resource.k8s.io/v1alpha3"),
    _as_version("resource.k8s.io/v1beta2"),
)
_POD_SUBRESOURCES = {
    "binding": Subresource(("create",), kind="Binding", post=_BIND),
    "eviction": Subresource(("create",), kind="Eviction", group="policy", version="v1", post=_kinds.evictor(find_resource)),
    **STATUS,
}

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(
        "",
        "v1",
        "namespaces",
        "Namespace",
        namespaced=False,
        short_names=("ns",),
        subresources=STATUS,
        printer=printers.NAMESPACE,
        prepare_create=_kinds.create_namespace,
        prepare_update=_kinds.label_namespace,
        delete=_kinds.delete_namespace,
    ),
    ResourceSpec(
        "",
        "v1",
        "nodes",
        "Node",
        namespaced=False,
        short_names=("no",),
        subresources=STATUS,
        printer=printers.NODE,
        backend=CLUSTER,
        defaults=defaults.node,
        prepare_create=_kinds.kubelet_ready,
    ),
    ResourceSpec(
        "",
        "v1",
        "pods",
        "Pod",
        namespaced=True,
        short_names=("po",),
        categories=("all",),
        subresources=_POD_SUBRESOURCES,
        printer=printers.POD,
        backend=CLUSTER,
        defaults=defaults.pod,
        validate_update=_kinds.check_pod_update,
        delete=_kinds.delete_pod,
    ),
    ResourceSpec(
        "",
        "v1",
        "bindings",
        "Binding",
        namespaced=True,
        verbs=("create",),
        backend=None,
        create=_BIND,
    ),
    ResourceSpec(
        "",
        "v1",
        "events",
        "Event",
        namespaced=True,
        short_names=("ev",),
        printer=printers.EVENT,
        view=_CORE_EVENTS,
    ),
    ResourceSpec(
        "coordination.k8s.io",
        "v1",
        "leases",
        "Lease",
        namespaced=True,
        printer=printers.LEASE,
    ),
    ResourceSpec(
        "events.k8s.io",
        "v1",
        "events",
        "Event",
        namespaced=True,
        short_names=("ev",),
        printer=printers.EVENT,
        print_as=events.event_to_core,
        on_create=_kinds.record_event,
        defaults=defaults.event,
    ),
    ResourceSpec(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        namespaced=True,
        short_names=("pdb",),
        subresources=STATUS,
        printer=printers.POD_DISRUPTION_BUDGET,
        backend=CLUSTER,
    ),
    ResourceSpec(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        namespaced=False,
        short_names=("pc",),
        printer=printers.PRIORITY_CLASS,
        backend=CLUSTER,
        defaults=defaults.priority_class,
    ),
    ResourceSpec(
        "scheduling.x-k8s.io",
        "v1alpha1",
        "podgroups",
        "PodGroup",
        namespaced=True,
        short_names=("pg", "pgs"),
        subresources=STATUS,
        backend=CLUSTER,
        crd=True,
    ),
    # --- the workload controllers' kinds: in the fake cluster, which runs the Job, ReplicaSet and
    # Deployment controllers (transports/fake/_controllers.py) -----------------------------------
    ResourceSpec(
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        namespaced=True,
        short_names=("rs",),
        categories=("all",),
        subresources={**SCALE, **STATUS},
        printer=printers.columns(
            ("Desired", "spec.replicas"),
            ("Current", "status.replicas"),
            ("Ready", "status.readyReplicas"),
        ),
        backend=CLUSTER,
        defaults=defaults.pod_template_owner,
    ),
    ResourceSpec(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        namespaced=True,
        short_names=("deploy",),
        categories=("all",),
        subresources={**SCALE, **STATUS},
        printer=printers.ready_of_desired(
            ("Up-to-date", "status.updatedReplicas"), ("Available", "status.availableReplicas")
        ),
        backend=CLUSTER,
        defaults=defaults.deployment,
    ),
    ResourceSpec(
        "batch",
        "v1",
        "jobs",
        "Job",
        namespaced=True,
        categories=("all",),
        subresources=STATUS,
        printer=printers.columns(("Completions", "spec.completions"), ("Succeeded", "status.succeeded")),
        backend=CLUSTER,
        defaults=defaults.job,
    ),
    # --- the storage kinds (and StatefulSets, below): in the fake cluster, whose PV and
    # StatefulSet controllers act on them and whose scheduler's volume plugins read them ---------
    ResourceSpec(
        "",
        "v1",
        "persistentvolumes",
        "PersistentVolume",
        namespaced=False,
        short_names=("pv",),
        subresources=STATUS,
        printer=printers.columns(
            ("Capacity", "spec.capacity.storage"),
            ("Access Modes", "spec.accessModes"),
            ("Reclaim Policy", "spec.persistentVolumeReclaimPolicy"),
            ("Status", "status.phase"),
            ("Claim", "spec.claimRef.name"),
            ("StorageClass", "spec.storageClassName"),
        ),
        backend=CLUSTER,
        defaults=defaults.persistent_volume,
        returns_deleted=True,
    ),
    ResourceSpec(
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        namespaced=True,
        short_names=("pvc",),
        subresources=STATUS,
        printer=printers.columns(
            ("Status", "status.phase"),
            ("Volume", "spec.volumeName"),
            ("Capacity", "status.capacity.storage"),
            ("Access Modes", "status.accessModes"),
            ("StorageClass", "spec.storageClassName"),
        ),
        backend=CLUSTER,
        defaults=defaults.persistent_volume_claim,
        returns_deleted=True,
    ),
    # --- stored, not simulated ------------------------------------------------------------------
    ResourceSpec(
        "",
        "v1",
        "services",
        "Service",
        namespaced=True,
        short_names=("svc",),
        categories=("all",),
        subresources=STATUS,
        printer=printers.columns(
            ("Type", "spec.type"), ("Cluster-IP", "spec.clusterIP"), ("Selector", "spec.selector")
        ),
        defaults=defaults.service,
    ),
    ResourceSpec(
        "",
        "v1",
        "replicationcontrollers",
        "ReplicationController",
        namespaced=True,
        short_names=("rc",),
        categories=("all",),
        subresources={**SCALE, **STATUS},
        printer=printers.columns(
            ("Desired", "spec.replicas"),
            ("Current", "status.replicas"),
            ("Ready", "status.readyReplicas"),
        ),
        defaults=defaults.replication_controller,
    ),
    # --- in the fake cluster again: StatefulSets (its StatefulSet controller) and the storage
    # classes, CSI drivers and capacities its volume plugins read ---------------------------------
    ResourceSpec(
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        namespaced=True,
        short_names=("sts",),
        categories=("all",),
        subresources={**SCALE, **STATUS},
        printer=printers.ready_of_desired(),
        backend=CLUSTER,
        defaults=defaults.stateful_set,
    ),
    ResourceSpec(
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "StorageClass",
        namespaced=False,
        short_names=("sc",),
        printer=printers.columns(
            ("Provisioner", "provisioner"),
            ("ReclaimPolicy", "reclaimPolicy"),
            ("VolumeBindingMode", "volumeBindingMode"),
            ("AllowVolumeExpansion", "allowVolumeExpansion"),
        ),
        backend=CLUSTER,
        defaults=defaults.storage_class,
        returns_deleted=True,
    ),
    ResourceSpec(
        "storage.k8s.io",
        "v1",
        "csinodes",
        "CSINode",
        namespaced=False,
        printer=printers.columns(("Drivers", "spec.drivers")),
        backend=CLUSTER,
        returns_deleted=True,
    ),
    ResourceSpec(
        "storage.k8s.io",
        "v1",
        "csidrivers",
        "CSIDriver",
        namespaced=False,
        printer=printers.columns(
            ("AttachRequired", "spec.attachRequired"),
            ("PodInfoOnMount", "spec.podInfoOnMount"),
            ("StorageCapacity", "spec.storageCapacity"),
            ("Modes", "spec.volumeLifecycleModes"),
        ),
        backend=CLUSTER,
        defaults=defaults.csi_driver,
        returns_deleted=True,
    ),
    ResourceSpec(
        "storage.k8s.io",
        "v1",
        "csistoragecapacities",
        "CSIStorageCapacity",
        namespaced=True,
        printer=printers.columns(("StorageClass", "storageClassName"), ("Capacity", "capacity")),
        backend=CLUSTER,
    ),
    # VolumeAttachments: stored only (no attach/detach controller). kube-scheduler's
    # NodeVolumeLimits lists and watches them (pkg/scheduler/framework/plugins/nodevolumelimits/
    # csi.go: in v1.33.3 and v1.35.4, not in v1.31.8) and the scheduler waits for every informer
    # before it schedules anything: without this row a real v1.35 kube-scheduler placed no pod.
    ResourceSpec(
        "storage.k8s.io",
        "v1",
        "volumeattachments",
        "VolumeAttachment",
        namespaced=False,
        subresources=STATUS,
        printer=printers.columns(
            ("Attacher", "spec.attacher"),
            ("PV", "spec.source.persistentVolumeName"),
            ("Node", "spec.nodeName"),
            ("Attached", "status.attached"),
        ),
    ),
    # --- in the fake cluster: the resource.k8s.io kinds (DRA; its resourceclaim controller) ------
    ResourceSpec(
        "resource.k8s.io",
        "v1",
        "deviceclasses",
        "DeviceClass",
        namespaced=False,
        backend=CLUSTER,
        returns_deleted=True,
    ),
    ResourceSpec(
        "resource.k8s.io",
        "v1",
        "resourceclaims",
        "ResourceClaim",
        namespaced=True,
        subresources=STATUS,
        printer=printers.RESOURCE_CLAIM,
        backend=CLUSTER,
        returns_deleted=True,
    ),
    ResourceSpec(
        "resource.k8s.io",
        "v1",
        "resourceclaimtemplates",
        "ResourceClaimTemplate",
        namespaced=True,
        backend=CLUSTER,
        returns_deleted=True,
    ),
    ResourceSpec(
        "resource.k8s.io",
        "v1",
        "resourceslices",
        "ResourceSlice",
        namespaced=False,
        printer=printers.columns(("Node", "spec.nodeName"), ("Driver", "spec.driver"), ("Pool", "spec.pool.name")),
        backend=CLUSTER,
        returns_deleted=True,
    ),
    ResourceSpec(
        "resource.k8s.io",
        "v1beta2",
        "devicetaintrules",
        "DeviceTaintRule",
        namespaced=False,
        subresources=STATUS,
        backend=CLUSTER,
        returns_deleted=True,
    ),
    ResourceSpec(
        "resource.k8s.io",
        "v1alpha3",
        "devicetaintrules",
        "DeviceTaintRule",
        namespaced=False,
        subresources=STATUS,
        backend=CLUSTER,
        returns_deleted=True,
        view=_DEVICE_TAINT_RULES_V1ALPHA3,
    ),
]

# --- discovery order ------------------------------------------------------------------------------

GROUP_PRIORITY: Mapping[str, int] = {
    "apps": 17800,
    "events.k8s.io": 17750,
    "autoscaling": 17500,
    "batch": 17400,
    "policy": 17100,
    "storage.k8s.io": 16800,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "resource.k8s.io": 15900,
}
"""``GroupPriorityMinimum`` of the built-in groups served here (kube-apiserver's APIService
priorities: ``pkg/controlplane/apiserver/aggregator.go`` and the kube-apiserver's own table).
The aggregator lists groups by it, highest first, then by name; kubectl's RESTMapper prefers a
resource of an earlier group when two groups have it (``kubectl get podgroups`` with both
``scheduling.k8s.io`` and ``scheduling.x-k8s.io`` served names the built-in one)."""
CRD_GROUP_PRIORITY = 1000
"""The priority of a custom resource's group (the CRD registration controller's APIService):
after every built-in group."""

_VERSION = re.compile(r"v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?")


def _version_order(version: str) -> tuple[int, int, int, int, str]:
    """Kube-aware version order (``version.CompareKubeAwareVersionStrings``), best first: GA
    before beta before alpha, a higher major and then a higher pre-release number first, any
    other string last by name."""
    m = _VERSION.fullmatch(version)
    if m is None:
        return (1, 0, 0, 0, version)
    stage = {None: 0, "beta": 1, "alpha": 2}[m[2]]
    return (0, stage, -int(m[1]), -int(m[3] or 0), "")


class Registry:
    """The rows one server serves, indexed: each API group (not the core one) with its versions in
    discovery order (:data:`GROUP_PRIORITY`, then kube-aware version order), and each row by
    (group, version, resource)."""

    def __init__(self, rows: list[ResourceSpec]) -> None:
        self.rows = rows
        self.groups: dict[str, list[str]] = {}
        self.by_path: dict[tuple[str, str, str], ResourceSpec] = {}
        crd = {r.group for r in rows if r.crd}
        versions: dict[str, set[str]] = {}
        for r in rows:
            if r.group:
                versions.setdefault(r.group, set()).add(r.version)
            self.by_path[(r.group, r.version, r.plural)] = r

        def priority(group: str) -> tuple[int, str]:
            default = CRD_GROUP_PRIORITY if group in crd else CRD_GROUP_PRIORITY + 1
            return (-GROUP_PRIORITY.get(group, default), group)

        for g in sorted(versions, key=priority):
            self.groups[g] = sorted(versions[g], key=_version_order)

    def find(self, group: str, version: str, plural: str) -> ResourceSpec | None:
        return self.by_path.get((group, version, plural))

    def resources_of(self, group: str, version: str) -> list[ResourceSpec]:
        return [r for r in self.rows if r.group == group and r.version == version]

    def group_exists(self, group: str, version: str | None = None) -> bool:
        if group == "":
            return version in (None, "v1")
        return group in self.groups and (version is None or version in self.groups[group])


DEFAULT = Registry(RESOURCES)
"""The rows every server serves (``RESOURCES``), without the gated ones (``_workloadapi``)."""
GROUPS: dict[str, list[str]] = DEFAULT.groups
"""Each API group (not the core one) → its versions, in discovery order."""


def reindex() -> None:
    """Index the table again, after rows were added to (or removed from) ``RESOURCES``."""
    fresh = Registry(RESOURCES)
    DEFAULT.rows, DEFAULT.by_path = fresh.rows, fresh.by_path
    GROUPS.clear()
    GROUPS.update(fresh.groups)
    _BY_PATH.clear()
    _BY_PATH.update(fresh.by_path)


reindex()


def resources_of(group: str, version: str) -> list[ResourceSpec]:
    return DEFAULT.resources_of(group, version)


def group_exists(group: str, version: str | None = None) -> bool:
    return DEFAULT.group_exists(group, version)
