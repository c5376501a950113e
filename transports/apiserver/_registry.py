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
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from . import _defaults as defaults
from . import _kinds
from . import _table as printers
from ._store import CLUSTER, OBJECTS, Backend

if TYPE_CHECKING:
    from ._http import Reply
    from ._store import Store

__all__ = [
    "GROUPS",
    "RESOURCES",
    "SCALE",
    "STATUS",
    "VERBS",
    "ResourceSpec",
    "Subresource",
    "SubresourceView",
    "View",
    "find_resource",
    "group_exists",
    "reindex",
    "resources_of",
]

VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")

# (store, row, namespace, name, body) → the reply of a POST the row handles itself (binding)
PostHook = Callable[["Store", "ResourceSpec", str, str, dict[str, Any]], Awaitable["Reply"]]
# (store, row, namespace, name, the object, uid precondition, grace seconds) → the reply
DeleteHook = Callable[
    ["Store", "ResourceSpec", str, str, Any, "str | None", "int | None"], Awaitable["Reply"]
]


@dataclass(frozen=True)
class SubresourceView:
    """A subresource that is another form of its object (autoscaling/v1 Scale): ``read`` gives
    it from the object (wire form), ``write`` lays a new one sent by a client over the object
    (the row, the name, a private copy of the object, the body; raises the API errors of a bad
    one), and the object is then updated as by a PUT of the resource."""

    read: Callable[[ResourceSpec, dict[str, Any]], dict[str, Any]]
    write: Callable[[ResourceSpec, str, dict[str, Any], dict[str, Any]], dict[str, Any]]
    printer: printers.Printer = printers.DEFAULT


@dataclass(frozen=True)
class Subresource:
    """``<resource>/<name>/<subresource>``.  ``status`` needs nothing more: a PUT or PATCH of it
    changes only ``.status``, and one of the resource leaves ``.status`` alone."""

    verbs: tuple[str, ...]
    kind: str = ""
    """The kind it takes and answers with, when not the resource's own (Binding)."""
    group: str | None = None
    version: str = ""
    """The group and version of ``kind`` when not the resource's (autoscaling/v1 Scale)."""
    post: PostHook | None = None
    """Answers a POST of it (binding)."""
    view: SubresourceView | None = None
    """Answers its GET, PUT and PATCH as another form of the object (scale)."""


STATUS: Mapping[str, Subresource] = {"status": Subresource(("get", "patch", "update"))}
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


@dataclass(frozen=True)
class View:
    """The row serves the objects of another row (``of``: its group, version and resource) in
    another form: reads are converted with ``to_view``, writes with ``from_view`` and made on
    the other row."""

    of: tuple[str, str, str]
    to_view: Callable[[dict[str, Any]], dict[str, Any]]
    from_view: Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class ResourceSpec:
    """One served resource."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    singular: str = ""
    """Defaults to the kind in lower case."""
    verbs: tuple[str, ...] = VERBS
    categories: tuple[str, ...] = ()
    subresources: Mapping[str, Subresource] = field(default_factory=dict)
    printer: printers.Printer = printers.DEFAULT
    """The Table columns and cells of ``kubectl get``."""
    print_as: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """The form the printer reads, when not the wire form."""
    backend: Backend | None = OBJECTS
    """Where the objects live and how they are decoded; None for a create-only resource whose
    ``create`` hook does all (bindings)."""
    store: str = ""
    """The name the backend keeps them under (and watchers follow); defaults to the kind."""
    view: View | None = None
    crd: bool = False
    """A custom resource: no strategic merge patch."""
    defaults: Callable[[dict[str, Any]], None] | None = None
    """The API server's defaults for a created or replaced object, in place (``_defaults``);
    for a cluster kind, also for every object the cluster changes (idempotent)."""
    # hooks, only where the kind differs from a generic object (see _kinds)
    create: PostHook | None = None
    """Handles POST to the collection instead of the generic create."""
    prepare_create: Callable[[Store, dict[str, Any]], dict[str, Any]] | None = None
    """Completes a new object (wire form) in place of the backend's own step."""
    on_create: Callable[[Store, ResourceSpec, str, Any], Awaitable[None]] | None = None
    """Runs after the checks, before the object is stored (may refuse it)."""
    prepare_update: Callable[[dict[str, Any], str], None] | None = None
    """Adjusts an object about to replace the stored one (wire form)."""
    validate_update: Callable[[ResourceSpec, str, dict[str, Any], dict[str, Any]], None] | None = (
        None
    )
    """Checks an update of the resource (not of a subresource): the row, name, old and new
    object in wire form."""
    delete: DeleteHook | None = None
    """Deletes instead of the backend, after the preconditions; answers the request."""
    returns_deleted: bool = False
    """A DELETE answers with the deleted object (the registry's ``ReturnDeletedObject``, as
    upstream's for PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers), not a
    Status."""

    def __post_init__(self) -> None:
        if not self.singular:
            object.__setattr__(self, "singular", self.kind.lower())
        if not self.store:
            object.__setattr__(self, "store", self.kind)

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``pods`` or ``poddisruptionbudgets.policy``, as API error messages name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def wire(self, obj: Any) -> dict[str, Any]:
        """A stored object as the client sees it."""
        assert self.backend is not None
        d = self.backend.encode(obj)
        return self.view.to_view(d) if self.view is not None else d

    def encode(self, obj: Any) -> bytes:
        return msgspec.json.encode(self.wire(obj))

    def printable(self, obj: Any) -> dict[str, Any]:
        """A stored object in the form its printer reads."""
        d = self.wire(obj)
        return self.print_as(d) if self.print_as is not None else d


# --- the table ---------------------------------------------------------------------------------

_CORE_EVENTS = View(("events.k8s.io", "v1", "events"), _kinds.event_to_core, _kinds.event_from_core)
_POD_SUBRESOURCES = {
    "binding": Subresource(("create",), kind="Binding", post=_kinds.bind),
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
        create=_kinds.bind,
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
        print_as=_kinds.event_to_core,
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
        printer=printers.columns(("Ready", "status.readyReplicas"), ("Up-to-date", "status.updatedReplicas")),
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
        printer=printers.columns(("Replicas", "spec.replicas"), ("Ready", "status.readyReplicas")),
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
    # --- stored, not simulated: what a real kube-scheduler's informers list ---------------------
    ResourceSpec(
        "resource.k8s.io",
        "v1",
        "deviceclasses",
        "DeviceClass",
        namespaced=False,
    ),
    ResourceSpec(
        "resource.k8s.io",
        "v1",
        "resourceclaims",
        "ResourceClaim",
        namespaced=True,
        subresources=STATUS,
    ),
    ResourceSpec(
        "resource.k8s.io",
        "v1",
        "resourceclaimtemplates",
        "ResourceClaimTemplate",
        namespaced=True,
    ),
    ResourceSpec(
        "resource.k8s.io",
        "v1",
        "resourceslices",
        "ResourceSlice",
        namespaced=False,
        printer=printers.columns(("Node", "spec.nodeName"), ("Driver", "spec.driver")),
    ),
]

GROUPS: dict[str, list[str]] = {}
"""Each API group (not the core one) → its versions, in the order of the table."""
_BY_PATH: dict[tuple[str, str, str], ResourceSpec] = {}


def reindex() -> None:
    """Index the table again, after rows were added to (or removed from) ``RESOURCES``."""
    GROUPS.clear()
    _BY_PATH.clear()
    for r in RESOURCES:
        if r.group and r.version not in GROUPS.setdefault(r.group, []):
            GROUPS[r.group].append(r.version)
        _BY_PATH[(r.group, r.version, r.plural)] = r


reindex()


def find_resource(group: str, version: str, plural: str) -> ResourceSpec | None:
    return _BY_PATH.get((group, version, plural))


def resources_of(group: str, version: str) -> list[ResourceSpec]:
    return [r for r in RESOURCES if r.group == group and r.version == version]


def group_exists(group: str, version: str | None = None) -> bool:
    if group == "":
        return version in (None, "v1")
    return group in GROUPS and (version is None or version in GROUPS[group])
