"""The API server's defaults: what it sets on an object (wire form) a client creates or replaces
before validating and storing it, so a client reads back every field it sent plus these.

Upstream's ``SetDefaults_*`` functions (``pkg/apis/core/v1/defaults.go``, ``apps/v1``,
``batch/v1``, ``storage/v1``, ``scheduling/v1``), for the fields of the served kinds, and the
fields Go's JSON encoder always writes (a container's ``resources: {}``).  A row of the registry
names its function (``ResourceSpec.defaults``); each one changes its argument in place and is
idempotent, so the server applies it again to every object the cluster changes.  ``pod`` also
runs the DefaultTolerationSeconds admission plugin, which upstream applies to every pod created
or updated (not to pod templates).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "csi_driver",
    "deployment",
    "event",
    "job",
    "node",
    "persistent_volume",
    "persistent_volume_claim",
    "pod",
    "pod_spec",
    "pod_template_owner",
    "priority_class",
    "replication_controller",
    "service",
    "stateful_set",
    "storage_class",
]

Obj = dict[str, Any]

# DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds): its flags' defaults
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300


def _dict(parent: Obj, key: str) -> Obj:
    v = parent.get(key)
    if not isinstance(v, dict):
        v = parent[key] = {}
    return v


def _items(parent: Obj, key: str) -> list[Obj]:
    v = parent.get(key)
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _child(parent: Any, key: str) -> Obj | None:
    """``parent[key]`` when both are objects (a field the client set), else None."""
    v = parent.get(key) if isinstance(parent, dict) else None
    return v if isinstance(v, dict) else None


def _image_pull_policy(image: str) -> str:
    """``Always`` for an image with the ``latest`` tag or none (and no digest), else
    ``IfNotPresent`` (SetDefaults_Container)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _http_get(action: Obj | None) -> None:
    """SetDefaults_HTTPGetAction."""
    if action is not None:
        action.setdefault("path", "/")
        action.setdefault("scheme", "HTTP")


def _probe(probe: Obj | None) -> None:
    """SetDefaults_Probe."""
    if probe is None:
        return
    for key, value in (
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ):
        if not probe.get(key):
            probe[key] = value
    _http_get(_child(probe, "httpGet"))


def _field_refs(holder: Obj) -> None:
    """An env var's ``valueFrom`` or a downward API item: SetDefaults_ObjectFieldSelector
    (``apiVersion: v1``), and a resource field's ``divisor``, a Quantity Go always writes."""
    field_ref = _child(holder, "fieldRef")
    if field_ref is not None:
        field_ref.setdefault("apiVersion", "v1")
    resource_ref = _child(holder, "resourceFieldRef")
    if resource_ref is not None:
        resource_ref.setdefault("divisor", "0")


def _container(c: Obj) -> None:
    """SetDefaults_Container, its ports' protocol, probes and handlers."""
    c.setdefault("imagePullPolicy", _image_pull_policy(str(c.get("image") or "")))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for p in _items(c, "ports"):
        p.setdefault("protocol", "TCP")
    for env in _items(c, "env"):
        value_from = _child(env, "valueFrom")
        if value_from is not None:
            _field_refs(value_from)
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(_child(c, key))
    lifecycle = _child(c, "lifecycle")
    for key in ("postStart", "preStop"):
        _http_get(_child(_child(lifecycle, key), "httpGet"))


def _downward_api(source: Obj | None) -> None:
    for item in _items(source or {}, "items"):
        _field_refs(item)


def _volume(v: Obj) -> None:
    """SetDefaults_Volume (a volume with no source is an emptyDir) and its source's defaults."""
    if not any(k != "name" for k in v):
        v["emptyDir"] = {}
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        source = _child(v, key)
        if source is not None:
            source.setdefault("defaultMode", 0o644)  # 420
    _downward_api(_child(v, "downwardAPI"))
    host_path = _child(v, "hostPath")
    if host_path is not None:
        host_path.setdefault("type", "")  # HostPathUnset
    for projection in _items(_child(v, "projected") or {}, "sources"):
        _downward_api(_child(projection, "downwardAPI"))
        token = _child(projection, "serviceAccountToken")
        if token is not None:
            token.setdefault("expirationSeconds", 3600)
    claim = _child(_child(_child(v, "ephemeral"), "volumeClaimTemplate"), "spec")
    if claim is not None:
        claim.setdefault("volumeMode", "Filesystem")  # SetDefaults_PersistentVolumeClaimSpec


def pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec and its containers' and volumes': a pod's or a pod template's."""
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for c in _items(spec, group):
            _container(c)
    for v in _items(spec, "volumes"):
        _volume(v)


def _tolerates(tolerations: list[Obj], key: str) -> bool:
    return any(
        (t.get("key") or "") in (key, "") and (t.get("effect") or "") in ("NoExecute", "")
        for t in tolerations
    )


def default_toleration_seconds(spec: Obj) -> None:
    """The DefaultTolerationSeconds admission plugin: a pod that does not tolerate the
    not-ready or the unreachable NoExecute taint tolerates it for 300 s."""
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = []
    existing = [t for t in tolerations if isinstance(t, dict)]
    added = [
        {
            "key": key,
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
        }
        for key in (NOT_READY, UNREACHABLE)
        if not _tolerates(existing, key)
    ]
    if added:
        spec["tolerations"] = [*tolerations, *added]


def pod(obj: Obj) -> None:
    """A Pod: SetDefaults_Pod (requests from limits, enableServiceLinks, host ports under host
    networking: for pods, not pod templates), SetDefaults_PodSpec, DefaultTolerationSeconds."""
    spec = _dict(obj, "spec")
    for group in ("initContainers", "containers"):
        for c in _items(spec, group):
            res = c.get("resources")
            if isinstance(res, dict) and isinstance(res.get("limits"), dict):
                requests = _dict(res, "requests")
                for name, q in res["limits"].items():
                    requests.setdefault(name, q)
    spec.setdefault("enableServiceLinks", True)
    if spec.get("hostNetwork") is True:
        for group in ("initContainers", "containers"):
            for c in _items(spec, group):
                for p in _items(c, "ports"):
                    if not p.get("hostPort"):
                        p["hostPort"] = p.get("containerPort", 0)
    pod_spec(spec)
    default_toleration_seconds(spec)


def _template(obj: Obj) -> None:
    spec = obj.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    if isinstance(template, dict):
        pod_spec(_dict(template, "spec"))


def pod_template_owner(obj: Obj) -> None:
    """apps/v1 ReplicaSet (SetDefaults_ReplicaSet): one replica; its pod template defaulted."""
    _dict(obj, "spec").setdefault("replicas", 1)
    _template(obj)


def deployment(obj: Obj) -> None:
    """apps/v1 Deployment (SetDefaults_Deployment): one replica, the RollingUpdate strategy
    with 25% unavailable and 25% surge, 10 old ReplicaSets kept, a 600 s progress deadline;
    its pod template defaulted."""
    spec = _dict(obj, "spec")
    spec.setdefault("replicas", 1)
    strategy = _dict(spec, "strategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _dict(strategy, "rollingUpdate")
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(obj)


def job(obj: Obj) -> None:
    """batch/v1 Job (SetDefaults_Job): parallelism 1, completions as parallelism when neither
    is set, backoffLimit 6 (the int32 maximum with a per-index limit), the template's labels
    when the Job has none, completionMode NonIndexed, not suspended, podReplacementPolicy
    TerminatingOrFailed (Failed with a podFailurePolicy); its pod template defaulted."""
    spec = _dict(obj, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault(
        "backoffLimit", 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    )
    labels = (_child(_child(spec, "template"), "metadata") or {}).get("labels")
    meta = _dict(obj, "metadata")
    if isinstance(labels, dict) and labels and not meta.get("labels"):
        meta["labels"] = dict(labels)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault(
        "podReplacementPolicy",
        "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed",
    )
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
    for claim in _items(spec, "volumeClaimTemplates"):  # SetObjectDefaults_StatefulSet
        _dict(claim, "spec").setdefault("volumeMode", "Filesystem")
        _dict(claim, "status").setdefault("phase", "Pending")
    status = obj.get("status")
    if isinstance(status, dict):  # the status fields Go always writes (no omitempty)
        status.setdefault("replicas", 0)
        status.setdefault("availableReplicas", 0)


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
    spec.setdefault("seLinuxMount", False)  # the SELinuxMountReadWriteOncePod gate is on


def priority_class(obj: Obj) -> None:
    """SetDefaults_PriorityClass."""
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def event(obj: Obj) -> None:
    """events.k8s.io/v1 Event: the fields Go's JSON encoder writes even when unset (a zero
    ``metav1.Time`` as null, an empty struct as ``{}``), as upstream serves them."""
    obj.setdefault("eventTime", None)
    obj.setdefault("regarding", {})
    obj.setdefault("deprecatedSource", {})
    obj.setdefault("deprecatedFirstTimestamp", None)
    obj.setdefault("deprecatedLastTimestamp", None)
