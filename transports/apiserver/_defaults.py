"""The API server's defaults: what it sets on an object (wire form) a client creates or replaces
before validating and storing it, so a client reads back every field it sent plus these.

Upstream's ``SetDefaults_*`` functions (``pkg/apis/core/v1/defaults.go``, ``apps/v1``,
``storage/v1``, ``scheduling/v1``), for the fields of the served kinds.  A row of the registry
names its function (``ResourceSpec.defaults``); each one changes its argument in place.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "csi_driver",
    "node",
    "persistent_volume",
    "persistent_volume_claim",
    "pod",
    "pod_template_owner",
    "priority_class",
    "replication_controller",
    "service",
    "stateful_set",
    "storage_class",
]

Obj = dict[str, Any]


def _dict(parent: Obj, key: str) -> Obj:
    v = parent.get(key)
    if not isinstance(v, dict):
        v = parent[key] = {}
    return v


def _items(parent: Obj, key: str) -> list[Obj]:
    v = parent.get(key)
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _image_pull_policy(image: str) -> str:
    """``Always`` for an image with the ``latest`` tag or none (and no digest), else
    ``IfNotPresent`` (SetDefaults_Container)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _container(c: Obj) -> None:
    c.setdefault("imagePullPolicy", _image_pull_policy(str(c.get("image") or "")))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    for p in _items(c, "ports"):
        p.setdefault("protocol", "TCP")
    # SetDefaults_Pod: a limit without a request requests the limit
    res = c.get("resources")
    if isinstance(res, dict) and isinstance(res.get("limits"), dict):
        requests = _dict(res, "requests")
        for name, q in res["limits"].items():
            requests.setdefault(name, q)


def pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec and its containers'."""
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    for group in ("initContainers", "containers"):
        for c in _items(spec, group):
            _container(c)


def pod(obj: Obj) -> None:
    pod_spec(_dict(obj, "spec"))


def _template(obj: Obj) -> None:
    spec = obj.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    if isinstance(template, dict):
        pod_spec(_dict(template, "spec"))


def pod_template_owner(obj: Obj) -> None:
    """apps/v1 ReplicaSet (SetDefaults_ReplicaSet): one replica; its pod template defaulted."""
    _dict(obj, "spec").setdefault("replicas", 1)
    _template(obj)


def job(obj: Obj) -> None:
    """batch/v1 Job (SetDefaults_Job): parallelism 1, completions as parallelism when neither
    is set, backoffLimit 6, completionMode NonIndexed; its pod template defaulted."""
    spec = _dict(obj, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    _template(obj)


def replication_controller(obj: Obj) -> None:
    """SetDefaults_ReplicationController: one replica, the selector and labels of the
    template's labels."""
    spec = _dict(obj, "spec")
    spec.setdefault("replicas", 1)
    template = spec.get("template")
    labels = (template.get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    if labels:
        spec.setdefault("selector", dict(labels))
        meta = _dict(obj, "metadata")
        meta.setdefault("labels", dict(labels))
    _template(obj)


def stateful_set(obj: Obj) -> None:
    """SetDefaults_StatefulSet."""
    spec = _dict(obj, "spec")
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = _dict(spec, "updateStrategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        _dict(strategy, "rollingUpdate").setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    retention = _dict(spec, "persistentVolumeClaimRetentionPolicy")
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")
    _template(obj)


def node(obj: Obj) -> None:
    """SetDefaults_NodeStatus: allocatable is the capacity when not given."""
    status = obj.get("status")
    if isinstance(status, dict) and status.get("capacity") and not status.get("allocatable"):
        status["allocatable"] = dict(status["capacity"])


def service(obj: Obj) -> None:
    """SetDefaults_Service."""
    spec = _dict(obj, "spec")
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for p in _items(spec, "ports"):
        p.setdefault("protocol", "TCP")
        if "port" in p:
            p.setdefault("targetPort", p["port"])


def persistent_volume(obj: Obj) -> None:
    """SetDefaults_PersistentVolume: Retain, Filesystem, phase Pending."""
    spec = _dict(obj, "spec")
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    _dict(obj, "status").setdefault("phase", "Pending")


def persistent_volume_claim(obj: Obj) -> None:
    """SetDefaults_PersistentVolumeClaim: Filesystem, phase Pending."""
    _dict(obj, "spec").setdefault("volumeMode", "Filesystem")
    _dict(obj, "status").setdefault("phase", "Pending")


def storage_class(obj: Obj) -> None:
    """SetDefaults_StorageClass: Delete, Immediate."""
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def csi_driver(obj: Obj) -> None:
    """SetDefaults_CSIDriver."""
    spec = _dict(obj, "spec")
    spec.setdefault("attachRequired", True)
    spec.setdefault("podInfoOnMount", False)
    spec.setdefault("storageCapacity", False)
    spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
    spec.setdefault("volumeLifecycleModes", ["Persistent"])
    spec.setdefault("requiresRepublish", False)


def priority_class(obj: Obj) -> None:
    """SetDefaults_PriorityClass."""
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
